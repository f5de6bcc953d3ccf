"""Command line: the only layer that prints. Heavy modules load inside the commands."""

from __future__ import annotations

import sys
from collections.abc import Sequence

__all__ = ["main"]


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``wheelfit`` script; returns the exit status."""
    args = list(sys.argv[1:] if argv is None else argv)
    if args in (["--version"], ["-V"]):
        # Answered before typer is imported: `--version` must stay instant.
        from .. import __version__

        sys.stdout.write(f"wheelfit {__version__}\n")
        return 0
    from .app import run

    return run(args)
