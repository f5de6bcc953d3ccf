"""The uv backend: ``uv pip install --python PY``, using the binary from the ``uv`` PyPI package."""

from __future__ import annotations

import re
import subprocess
from dataclasses import dataclass

from .backend import BackendRequest, BackendResult, source_args
from .errors import BackendError

__all__ = ["UvInstaller", "find_uv"]

#: uv's spelling of the :class:`BackendRequest` switches.
_FLAGS = (("--upgrade", "upgrade"), ("--reinstall", "reinstall"), ("--no-deps", "no_deps"))
#: `` + name==1.0`` installed, `` - name==1.0`` removed, `` ~ name==1.0`` reinstalled (``--reinstall``).
_CHANGE = re.compile(r"^\s*([+~-])\s+(\S+?)(?:==|\s@\s)(\S+)")


def find_uv() -> str:
    try:
        from uv import find_uv_bin
    except ImportError as exc:  # pragma: no cover - uv is a core dependency
        raise BackendError("the uv package is not installed; reinstall wheelfit or use --installer pip") from exc
    try:
        return str(find_uv_bin())
    except FileNotFoundError as exc:
        raise BackendError(f"the uv binary is missing ({exc}); reinstall wheelfit or use --installer pip") from exc


@dataclass
class UvInstaller:
    uv: str = ""
    name: str = "uv"

    def install(self, request: BackendRequest) -> BackendResult:
        argv = [self.uv or find_uv(), "pip", "install", "--python", request.python, "--index-url", request.index_url]
        argv += ["--index-strategy", "first-index", "--no-progress"]
        argv += source_args(request, constraints="--constraints")
        argv += [flag for flag, on in _FLAGS if getattr(request, on)]
        if request.dry_run:
            argv.append("--dry-run")
        if request.offline:
            argv.append("--offline")
        argv += request.requirement_args()
        try:
            out = subprocess.run(argv, capture_output=True, text=True, env=dict(request.environ), check=False)
        except OSError as exc:
            raise BackendError(f"cannot run uv ({exc}); reinstall wheelfit or use --installer pip") from exc
        plus, minus = _changes(out.stderr + out.stdout)
        return BackendResult(out.returncode, out.stdout, out.stderr, plus, minus)


def _changes(text: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """uv's summary lines: `` + torch==2.14.1+cu126`` or `` + torch @ file:///...``."""
    plus: list[str] = []
    minus: list[str] = []
    for line in text.splitlines():
        m = _CHANGE.match(line)
        if m:
            (minus if m.group(1) == "-" else plus).append(
                f"{m.group(2)}=={m.group(3)}" if "@" not in line else line.strip()[2:]
            )
    return tuple(plus), tuple(minus)
