"""Command bodies that need no typer: shared by the typer app and the start-up fast path."""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import WheelfitError

if TYPE_CHECKING:
    import httpx

    from ..fetch.cache import Cache
    from ..report import HardwareReport
    from ..resolve import Request
    from ..resolve.plan import Plan

__all__ = ["error_status", "run_detect", "user_cache", "variant_mode"]


def error_status(exc: Exception) -> int:
    """Say what failed in one line on stderr, never a traceback: 2 for a library error (it says what to do),
    70 for anything else (a bug)."""
    if isinstance(exc, WheelfitError):
        sys.stderr.write(f"wheelfit: error: {exc}\n")
        return 2
    sys.stderr.write(f"wheelfit: internal error: {type(exc).__name__}: {exc} (please report this)\n")
    return 70


def run_detect(as_json: bool, sysroot: Path | None, probe_timeout: float, disable: Sequence[str]) -> None:
    """The body of ``wheelfit detect``, shared with the no-typer fast path in :mod:`wheelfit.cli`."""
    from wheelfit_probekit import System

    from ..probe import detect

    if sysroot is not None and not sysroot.is_dir():
        raise WheelfitError(f"--sysroot {sysroot} is not a directory")
    report = detect(System.from_sysroot(sysroot, command_timeout=probe_timeout), disabled=disable)
    if as_json:
        sys.stdout.write(report.to_json() + "\n")
        return
    from .render import render_report

    render_report(report)


def user_cache() -> Cache:
    """The download and page cache of this user (``WHEELFIT_CACHE_DIR`` or the platform's cache directory)."""
    from ..fetch.cache import Cache, default_cache_dir

    return Cache(default_cache_dir(os.environ, sys.platform, Path.home()))


def variant_mode(
    report: HardwareReport, request: Request, url: str, offline: bool, client: httpx.Client | None = None
) -> tuple[Plan | None, list[str]]:
    """The variant-mode plan, or ``None`` and why the per-variant indexes are used instead (``client``: the
    caller's, so that an install builds one HTTP client, not two)."""
    import contextlib
    import os
    from urllib.parse import urlsplit

    from packaging.utils import canonicalize_name

    from ..fetch import Downloader, make_client
    from ..index.client import IndexClient
    from ..variants.index_mode import plan_from_variant_index

    if offline:
        return None, [f"--offline: {url} not read; planned from the per-variant indexes"]
    if request.companions:
        names = ", ".join(canonicalize_name(r.name) for r in request.companions)
        return None, [f"variant mode plans torch alone ({names} asked for): planned from the per-variant indexes"]
    if urlsplit(url.strip()).scheme not in ("http", "https"):
        raise WheelfitError(
            f"--variant-index {url!r} is not an http(s) URL; give e.g. https://download.pytorch.org/whl/variant"
        )
    url = url.strip().rstrip("/")
    cache = user_cache()
    with contextlib.ExitStack() as stack:
        http = client if client is not None else stack.enter_context(make_client())
        plan = plan_from_variant_index(
            report,
            os.environ,
            index=IndexClient(http, cache),
            client=http,
            index_url=url,
            specifier=request.torch.specifier,
            downloader=Downloader(http, cache),
        )
    if plan is None:
        return None, [f"no variants metadata at {url}: planned from the per-variant indexes"]
    return plan, []
