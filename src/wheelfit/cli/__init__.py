"""Command line: the only layer that prints. One parser (typer); heavy modules load inside the commands."""

from __future__ import annotations

import sys
from collections.abc import Sequence

__all__ = ["main", "version_line"]

#: ``wheelfit --version`` alone, the one line that scripts and bug reports ask for, is answered before the parser
#: is imported: typer and click are 50-80 ms, the answer is one constant. Any other argv is typer's (which answers
#: ``--version`` the same way, with :func:`version_line`, wherever it appears).
_VERSION_ALONE = (["--version"], ["-V"])


def version_line() -> str:
    """What ``wheelfit --version`` prints."""
    from .. import __version__

    return f"wheelfit {__version__}\n"


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``wheelfit`` script; returns the exit status."""
    if (sys.argv[1:] if argv is None else list(argv)) in _VERSION_ALONE:
        sys.stdout.write(version_line())
        return 0
    if argv is not None:
        from .app import run

        return run(list(argv))
    import gc

    # The process is ours and runs one command. Start-up allocates some 200,000 objects (module code, classes,
    # typer's option models, httpx) and frees almost none: the collector's passes every 700 allocations (~80 a
    # run, 15-30 ms) find no garbage. A young generation of 50,000 still bounds any cyclic garbage of a long
    # download. At exit the last full pass only delays it (30-40 ms): frozen objects are left to the OS.
    gc.set_threshold(50_000, *gc.get_threshold()[1:])
    # ``import httpx`` imports httpx's own command line when click and rich are installed (as they are beside
    # wheelfit), and with it pygments: some 100 ms of every command that reads an index, for a ``main`` this
    # process never calls. httpx's ``__init__`` already handles that module missing (its ``[cli]`` extra not
    # installed) with a stub, which this makes it take. A process of ours only: a library caller's httpx is whole.
    sys.modules.setdefault("httpx._main", None)  # type: ignore[arg-type]
    try:
        from .app import run

        return run(sys.argv[1:])
    finally:
        gc.freeze()
