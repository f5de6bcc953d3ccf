"""Which indexes to read: the PyTorch base (for mirrors and air-gapped sites) and the default index.

Precedence, highest first: the command-line option, wheelfit's own variable,
then the pip/uv conventions users already set. The environment is passed in,
never read here, so the CLI and tests decide what counts.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import urlsplit

from ..errors import UsageError
from .local import local_index_url

__all__ = [
    "DEFAULT_INDEX_URL",
    "DEFAULT_PYTORCH_INDEX",
    "IndexConfig",
    "IndexConfigError",
    "offline_requested",
    "resolve_index_config",
]

DEFAULT_PYTORCH_INDEX = "https://download.pytorch.org/whl"
DEFAULT_INDEX_URL = "https://pypi.org/simple"
#: For the default index: ours first, then uv's current and legacy names, then pip's.
_INDEX_ENV = ("WHEELFIT_INDEX_URL", "UV_DEFAULT_INDEX", "UV_INDEX_URL", "PIP_INDEX_URL")


class IndexConfigError(UsageError, ValueError):
    """An index URL from an option or a variable is not an http(s) URL."""


@dataclass(frozen=True)
class IndexConfig:
    #: ``<base>/<variant>/<project>/`` (download.pytorch.org layout).
    pytorch_base: str
    #: A PEP 503 index root for everything that is not routed to the PyTorch index.
    default_index: str
    offline: bool = False

    def pytorch_variant_index(self, variant: str) -> str:
        return f"{self.pytorch_base}/{variant}"


def resolve_index_config(
    env: Mapping[str, str],
    *,
    pytorch_index: str | None = None,
    index_url: str | None = None,
    offline: bool = False,
) -> IndexConfig:
    pytorch, pytorch_from = pytorch_index, "--pytorch-index"
    if not pytorch and env.get("WHEELFIT_PYTORCH_INDEX"):
        pytorch, pytorch_from = env["WHEELFIT_PYTORCH_INDEX"], "WHEELFIT_PYTORCH_INDEX"
    default, default_from = index_url, "--index-url"
    for name in _INDEX_ENV:
        if default:
            break
        default, default_from = env.get(name), name
    offline = offline or offline_requested(env)
    return IndexConfig(
        pytorch_base=_check(pytorch or DEFAULT_PYTORCH_INDEX, pytorch_from),
        default_index=_check(default or DEFAULT_INDEX_URL, default_from),
        offline=offline,
    )


def offline_requested(env: Mapping[str, str]) -> bool:
    """``WHEELFIT_OFFLINE=1`` (or ``true``, ``yes``): read only the caches, as ``--offline`` does."""
    return env.get("WHEELFIT_OFFLINE", "").strip().lower() in ("1", "true", "yes")


def _check(url: str, source: str) -> str:
    url = url.strip()
    local = local_index_url(url, source, IndexConfigError)  # a directory or file:// URL (air-gapped): as file://
    if local is not None:
        return local
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise IndexConfigError(
            f"{source}={url!r} is not an http(s) URL or a directory; give e.g. https://mirror.example/whl"
        )
    return url.rstrip("/")
