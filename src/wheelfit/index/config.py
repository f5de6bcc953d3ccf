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
    #: A PyTorch variant index given as an index URL (``--index-url .../whl/cu128``, as PyTorch's install
    #: selector prints): that build is the user's choice, ``--torch-backend cu128``; where it came from.
    torch_backend: str | None = None
    torch_backend_from: str = ""
    #: What a plan should say about how the indexes were read from the options.
    notes: tuple[str, ...] = ()
    #: ``--extra-index-url`` values for what is not torch-family (a PyTorch variant index among them is read as
    #: the build's choice instead, as ``--index-url`` is).
    extra_index_urls: tuple[str, ...] = ()

    def pytorch_variant_index(self, variant: str) -> str:
        return f"{self.pytorch_base}/{variant}"


def resolve_index_config(
    env: Mapping[str, str],
    *,
    pytorch_index: str | None = None,
    index_url: str | None = None,
    offline: bool = False,
    extra_index_urls: tuple[str, ...] = (),
) -> IndexConfig:
    pytorch, pytorch_from = pytorch_index, "--pytorch-index"
    if not pytorch and env.get("WHEELFIT_PYTORCH_INDEX"):
        pytorch, pytorch_from = env["WHEELFIT_PYTORCH_INDEX"], "WHEELFIT_PYTORCH_INDEX"
    given = [("--index-url", index_url), *((name, env.get(name)) for name in _INDEX_ENV)]
    defaults = [(name, url) for name, url in given if url] + [("the default index", DEFAULT_INDEX_URL)]
    offline = offline or offline_requested(env)
    base = _check(pytorch or DEFAULT_PYTORCH_INDEX, pytorch_from)
    backend, backend_from, notes = None, "", []
    label, stripped = _variant_of(base)
    if label is not None:
        base, backend, backend_from = stripped, label, f"{pytorch_from} ends in /{label}"
    default = _check(defaults[0][1], defaults[0][0])
    label, stripped = _variant_of(default)
    if label is not None:  # pip install torch --index-url https://download.pytorch.org/whl/cu128
        name = defaults[0][0]
        if backend is not None and backend != label:
            raise IndexConfigError(f"{backend_from}, {name} in /{label}: they ask for different builds; give one")
        if backend is None:
            backend, backend_from = label, f"{name} ends in /{label}"
            if not pytorch_index and (name == "--index-url" or not pytorch):  # an option beats a variable
                base = stripped
        rest = defaults[1]
        default = _check(rest[1], rest[0])
        notes.append(
            f"{name} {defaults[0][1]} is a PyTorch variant index: torch-family packages come from it; "
            f"everything else from {default}" + (f" ({rest[0]})" if rest[0] != name else "")
        )
    extras: list[str] = []
    for url in extra_index_urls:  # pip install torch --extra-index-url https://download.pytorch.org/whl/cu118
        label, stripped = _variant_of(_check(url, "--extra-index-url"))
        if label is None:
            extras.append(url)
            continue
        if backend is not None and backend != label:
            raise IndexConfigError(
                f"{backend_from}, --extra-index-url in /{label}: they ask for different builds; give one"
            )
        if backend is None:
            backend, backend_from = label, f"--extra-index-url ends in /{label}"
            if not pytorch_index:  # an option beats WHEELFIT_PYTORCH_INDEX
                base = stripped
        notes.append(f"--extra-index-url {url} is a PyTorch variant index: torch-family packages come from it")
    return IndexConfig(
        pytorch_base=base, default_index=default, offline=offline, torch_backend=backend,
        torch_backend_from=backend_from, notes=tuple(notes), extra_index_urls=tuple(extras),
    )  # fmt: skip


def _variant_of(url: str) -> tuple[str | None, str]:
    """``(cu128, https://download.pytorch.org/whl)`` for ``https://download.pytorch.org/whl/cu128``; ``None`` for a
    URL whose last path segment is not a per-variant index name (cpu, xpu, cuNNN, rocmX.Y)."""
    from ..candidates.knowledge import label_kind

    head, _, last = url.rstrip("/").rpartition("/")
    if urlsplit(head).path in ("", "/") or label_kind(last.lower()) is None:
        return None, url
    return last.lower(), head


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
