"""Command line: the only layer that prints. Heavy modules load inside the commands."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

__all__ = ["main"]


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``wheelfit`` script; returns the exit status."""
    if argv is not None:
        return _main(list(argv))
    import gc

    # The process is ours and runs one command. Start-up allocates some 200,000 objects (module code, classes,
    # typer's option models, httpx) and frees almost none: the collector's passes every 700 allocations (~80 a
    # run, 15-30 ms) find no garbage. A young generation of 50,000 still bounds any cyclic garbage of a long
    # download. At exit the last full pass only delays it (30-40 ms): frozen objects are left to the OS.
    gc.set_threshold(50_000, *gc.get_threshold()[1:])
    try:
        return _main(sys.argv[1:])
    finally:
        gc.freeze()


def _main(args: list[str]) -> int:
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
    fast = _fast_install(args)
    if fast is not None:
        return fast
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
    from .commands import error_status, run_detect

    try:
        run_detect(True, Path(sysroot) if sysroot else None, timeout, disable)
    except WheelfitError as exc:
        return error_status(exc)
    return 0


#: ``wheelfit install``'s options that take a value, and its flags (as the typer command declares them).
_INSTALL_VALUES = ("--python", "--installer", "--pytorch-index", "--variant-index", "--index-url", "--target",
                   "--sysroot", "--probe-timeout", "--kb")  # fmt: skip
_INSTALL_FLAGS = ("--dry-run", "--json", "--allow-cpu", "--offline", "--no-verify")
#: Read by typer when an option is not given; their spellings (empty, paths) are left to typer.
_INSTALL_ENVVARS = (
    "WHEELFIT_TARGET",
    "WHEELFIT_SYSROOT",
    "WHEELFIT_PROBE_TIMEOUT",
    "WHEELFIT_VARIANT_INDEX",
    "_WHEELFIT_COMPLETE",
)


def _fast_install(args: list[str]) -> int | None:
    """``wheelfit install`` without importing typer and click (~60 ms of a warm install that takes ~0.4 s).

    Only the plain spellings are taken here: each option at most once, as ``--option value``, requirements
    not starting with ``-``, and none of the environment variables typer would read for an option. Anything
    else (``--help``, ``--opt=value``, ``--``, a mistake) returns ``None`` and goes through typer, which owns
    help and error messages. Outcomes are typer's: the same exit statuses and messages (see :func:`_outcome`).
    """
    if not args or args[0] != "install" or any(os.environ.get(name) is not None for name in _INSTALL_ENVVARS):
        return None
    values: dict[str, str] = {}
    flags: set[str] = set()
    requirements: list[str] = []
    rest = args[1:]
    while rest:
        item = rest.pop(0)
        if not item.startswith("-"):
            requirements.append(item)
        elif item in _INSTALL_FLAGS and item not in flags:
            flags.add(item)
        elif item in _INSTALL_VALUES and item not in values and rest and rest[0] and not rest[0].startswith("-"):
            values[item] = rest.pop(0)
        else:
            return None
    timeout = _plain_float(values.get("--probe-timeout", "15"))
    if timeout is None or timeout < 0.1:
        return None
    sysroot, kb = values.get("--sysroot"), values.get("--kb")
    if any(path is not None and os.path.exists(path) and not os.access(path, os.R_OK) for path in (sysroot, kb)):
        return None  # typer's "is not readable" usage error
    from .install_run import run_install

    return _outcome(
        lambda: run_install(
            requirements or None,
            python=values.get("--python"),
            installer=values.get("--installer", "uv"),
            pytorch_index=values.get("--pytorch-index"),
            variant_index=values.get("--variant-index"),
            index_url=values.get("--index-url"),
            target=values.get("--target"),
            sysroot=Path(sysroot) if sysroot is not None else None,
            probe_timeout=timeout,
            kb_file=Path(kb) if kb is not None else None,
            dry_run="--dry-run" in flags,
            as_json="--json" in flags,
            allow_cpu="--allow-cpu" in flags,
            offline="--offline" in flags,
            no_verify="--no-verify" in flags,
        )
    )


def _plain_float(text: str) -> float | None:
    """``15``, ``0.5``, ``2.``: the numbers typer's float parsing accepts alike; anything else is typer's."""
    body = text.replace(".", "", 1)
    return float(text) if body.isdigit() and body.isascii() else None


def _outcome(command: Callable[[], int]) -> int:
    """Run a command body as the typer app runs it (typer's standalone mode inside :func:`.app.run`): the same
    exit statuses, and the same messages on stderr."""
    import errno

    from .commands import error_status

    try:
        return command()
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    except KeyboardInterrupt:
        return 130  # typer: Exit(130), no message
    except EOFError:
        sys.stderr.write("\nAborted!\n")  # click: Abort
        return 1
    except Exception as exc:  # noqa: BLE001 - the promise is one line, never a traceback
        if isinstance(exc, OSError) and exc.errno == errno.EPIPE:  # click checks a closed pipe first
            sys.stdout, sys.stderr = _QuietPipe(sys.stdout), _QuietPipe(sys.stderr)
            return 1
        return error_status(exc)


class _QuietPipe:
    """A standard stream after its pipe closed: the flush at exit fails quietly (click's PacifyFlushWrapper)."""

    def __init__(self, wrapped: Any) -> None:
        self.wrapped = wrapped

    def flush(self) -> None:
        try:
            self.wrapped.flush()
        except OSError as exc:
            import errno

            if exc.errno != errno.EPIPE:
                raise

    def __getattr__(self, name: str) -> Any:
        return getattr(self.wrapped, name)
