"""Command line: the only layer that prints. Heavy modules load inside the commands."""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from pathlib import Path

__all__ = ["main"]


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``wheelfit`` script; returns the exit status."""
    args = list(sys.argv[1:] if argv is None else argv)
    if args in (["--version"], ["-V"]):
        # Answered before typer is imported: `--version` must stay instant.
        from .. import __version__

        sys.stdout.write(f"wheelfit {__version__}\n")
        return 0
    fast = _fast_detect_json(args)
    if fast is not None:
        return fast
    # `import httpx` also imports its own command line (click, rich.progress, pygments): ~40-80 ms for nothing
    # (encode/httpx#3547, not merged). This process is ours, so its CLI module is marked as not importable;
    # httpx then binds a stub `httpx.main`, which nobody here calls.
    sys.modules.setdefault("httpx._main", None)  # type: ignore[arg-type]
    from .app import run

    return run(args)


def _fast_detect_json(args: list[str]) -> int | None:
    """``wheelfit detect --json`` without importing typer and rich (about 50 ms of start-up).

    Machines call it (CI, other tools), so it must be cheap. Only the plain spellings are
    taken here; anything else (``--opt=value``, ``--help``, a mistake) returns ``None`` and
    goes through typer, which owns help and error messages.
    """
    if not args or args[0] != "detect" or "--json" not in args:
        return None
    sysroot = os.environ.get("WHEELFIT_SYSROOT") or None
    timeout_text = os.environ.get("WHEELFIT_PROBE_TIMEOUT") or "15"
    disable: list[str] = []
    rest = args[1:]
    while rest:
        flag = rest.pop(0)
        if flag == "--json":
            continue
        if flag not in ("--sysroot", "--probe-timeout", "--disable-provider") or not rest or rest[0].startswith("-"):
            return None
        value = rest.pop(0)
        if flag == "--sysroot":
            sysroot = value
        elif flag == "--probe-timeout":
            timeout_text = value
        else:
            disable.append(value)
    try:
        timeout = float(timeout_text)
    except ValueError:
        return None
    if timeout < 0.1:
        return None
    from ..errors import WheelfitError
    from .commands import run_detect

    try:
        run_detect(True, Path(sysroot) if sysroot else None, timeout, disable)
    except WheelfitError as exc:
        sys.stderr.write(f"wheelfit: error: {exc}\n")
        return 2
    return 0
