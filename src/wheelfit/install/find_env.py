"""Which environment an install goes into, found the way uv finds it.

``--python`` (an interpreter, or a virtual environment's directory), else the active virtual environment
(``VIRTUAL_ENV``, then ``CONDA_PREFIX``), else a ``.venv`` in the working directory or above it. Nothing found
is a refusal, not wheelfit's own interpreter: under pipx or ``uv tool`` that is the tool's private environment,
where torch would land unseen. ``--system`` opts in to the first Python on ``PATH``. Reading commands
(``wheelfit verify``) fall back to that Python without being asked, as ``uv pip list`` does.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Mapping
from pathlib import Path

from ..errors import UsageError

__all__ = ["find_python"]

#: Where a virtual environment keeps its interpreter (POSIX, Windows).
_INTERPRETERS = ("bin/python", "bin/python3", "Scripts/python.exe")


def find_python(
    python: str | None,
    environ: Mapping[str, str],
    cwd: Path,
    *,
    system: bool = False,
    read_only: bool = False,
    ceiling: Path | None = None,
) -> str:
    """The interpreter of the environment to use; :class:`~wheelfit.errors.UsageError` when there is none.

    ``.venv`` is looked for in ``cwd`` and every directory above it, up to ``ceiling`` (default: the root)."""
    if python:
        return _given(python, environ, cwd)
    for variable in ("VIRTUAL_ENV", "CONDA_PREFIX"):
        prefix = environ.get(variable)
        if prefix:
            found = _interpreter(Path(prefix))
            if found is None:
                raise UsageError(
                    f"${variable} is {prefix}, which has no Python interpreter; activate an existing environment "
                    "or pass --python"
                )
            return found
    for directory in (cwd, *cwd.parents):
        found = _interpreter(directory / ".venv")
        if found is not None:
            return found
        if directory == ceiling:
            break
    if system or read_only:
        on_path = _on_path(environ)
        if on_path is not None:
            return on_path
        raise UsageError("--system: no python3 or python on PATH; pass --python with an interpreter")
    raise UsageError(
        f"no virtual environment found (no --python, no $VIRTUAL_ENV, no .venv in {cwd} or above); "
        "create one (python3 -m venv .venv) and activate it, pass --python, or --system to install into "
        "the Python on PATH"
    )


def _given(python: str, environ: Mapping[str, str], cwd: Path) -> str:
    path = Path(python).expanduser()
    if not path.is_absolute():
        path = cwd / path
    if path.is_dir():
        found = _interpreter(path)
        if found is None:
            raise UsageError(
                f"--python {python}: a directory without bin/python; give a virtual environment or an interpreter"
            )
        return found
    if path.exists():
        return str(path)
    if os.sep not in python and "/" not in python:  # a name: python3.12, as on a command line
        on_path = shutil.which(python, path=environ.get("PATH"))
        if on_path is not None:
            return on_path
    raise UsageError(f"--python {python}: no such interpreter or directory")


def _interpreter(prefix: Path) -> str | None:
    for rel in _INTERPRETERS:
        candidate = prefix / rel
        if candidate.is_file():
            return str(candidate)
    return None


def _on_path(environ: Mapping[str, str]) -> str | None:
    for name in ("python3", "python"):
        found = shutil.which(name, path=environ.get("PATH"))
        if found is not None:
            return found
    return None
