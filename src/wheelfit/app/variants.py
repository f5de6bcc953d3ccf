"""Variant files (PEP 817/825): one read from disk or the web, and its labels ranked for a machine."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import WheelfitError
from .machine import Target
from .session import network

if TYPE_CHECKING:
    from ..variants.metadata import VariantsMetadata
    from ..variants.ranking import Ranking

__all__ = ["rank", "read_variants_file"]

#: Variant metadata is small (PyTorch's is under 5 kB); anything far larger is not one.
_MAX_VARIANTS_BYTES = 8 * 1024 * 1024


def read_variants_file(source: str, *, environ: Mapping[str, str]) -> tuple[bytes, str]:
    """The bytes of a local ``*-variants.json`` or an http(s) URL (TLS verified), and a short name for messages."""
    if source.startswith(("http://", "https://")):
        from ..fetch.http import RetryPolicy, get, status_error

        with network(environ) as session:
            response = get(session.http, source, {"Accept": "application/json, */*"}, RetryPolicy(retries=1))
            if response.status_code != 200:
                raise status_error(source, response)
            body = response.content
        name = source.rstrip("/").rsplit("/", 1)[-1].split("#")[0] or source
    else:
        path = Path(source)
        try:
            with path.open("rb") as fh:
                body = fh.read(_MAX_VARIANTS_BYTES + 1)
        except FileNotFoundError:
            raise WheelfitError(f"{source}: no such file; give a *-variants.json path or an http(s) URL") from None
        except OSError as exc:
            raise WheelfitError(f"{source}: cannot read it ({exc.strerror or exc})") from None
        name = path.name
    if len(body) > _MAX_VARIANTS_BYTES:
        raise WheelfitError(f"{source}: larger than {_MAX_VARIANTS_BYTES // 1024 // 1024} MiB, not variant metadata")
    return body, name


def rank(
    metadata: VariantsMetadata, target: Target, *, environ: Mapping[str, str], enable_optional: Sequence[str] = ()
) -> Ranking:
    """A variants file's labels ranked for ``target``: compatible best first, the others with their reason."""
    from ..variants.machine import marker_environment, supported_configs
    from ..variants.ranking import rank_variants

    return rank_variants(
        metadata,
        supported_configs(target.report, environ),
        environment=marker_environment(target.report),
        enable_optional=enable_optional or (),
    )
