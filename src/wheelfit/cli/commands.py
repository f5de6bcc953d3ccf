"""Command bodies that need no typer: shared by the typer app and the start-up fast path."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path

from ..errors import WheelfitError

__all__ = ["run_detect"]


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
