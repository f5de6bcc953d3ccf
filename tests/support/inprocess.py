"""``wheelfit ARGS`` in this process, as the console script runs it (``wheelfit.cli.app.run``), for tests where the
command's output and exit status are the point and a child process is not: the same answer as
``subprocess.run([sys.executable, "-m", "wheelfit", *args], env=env, cwd=cwd, capture_output=True, text=True)``
without starting an interpreter and importing wheelfit each time.

The environment is exactly ``env`` while the command runs (as a child's would be), the working directory ``cwd``;
both are put back after. Output of the child processes wheelfit starts itself (uv, pip) is theirs to capture, as
wheelfit does; a test that reads what such a child prints on wheelfit's own stdout keeps a real process. Tests of
the process itself (exit codes of the entry point, signals, start-up, isolation) keep ``subprocess``.
"""

from __future__ import annotations

import contextlib
import io
import os
import subprocess
import sys
import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence

__all__ = ["wheelfit_in_process"]


def _run() -> Callable[[list[str]], int]:
    with warnings.catch_warnings():  # typer 0.25 trips a click deprecation warning when imported under pytest
        warnings.simplefilter("ignore", DeprecationWarning)
        from wheelfit.cli.app import run
    return run


@contextlib.contextmanager
def _environment(env: Mapping[str, str], cwd: str | os.PathLike[str] | None) -> Iterator[None]:
    saved, here = dict(os.environ), os.getcwd()
    os.environ.clear()
    os.environ.update(env)
    try:
        if cwd is not None:
            os.chdir(cwd)
        yield
    finally:
        os.chdir(here)
        os.environ.clear()
        os.environ.update(saved)


def wheelfit_in_process(
    args: Sequence[str], env: Mapping[str, str] | None = None, cwd: str | os.PathLike[str] | None = None
) -> subprocess.CompletedProcess[str]:
    """The exit status, stdout and stderr of ``wheelfit ARGS`` run here; ``env`` (all of it) defaults to this
    process's own."""
    run = _run()
    out, err = io.StringIO(), io.StringIO()
    environ = dict(os.environ) if env is None else env
    with _environment(environ, cwd), contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = run([str(a) for a in args])
    argv = [sys.executable, "-m", "wheelfit", *map(str, args)]
    return subprocess.CompletedProcess(argv, code, out.getvalue(), err.getvalue())
