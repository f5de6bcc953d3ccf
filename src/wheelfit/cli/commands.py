"""Command bodies that need no typer: shared by the typer app and the start-up fast path."""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import WheelfitError

if TYPE_CHECKING:
    from ..fetch.cache import Cache

__all__ = ["run_detect", "user_cache"]


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
