"""The pip backend: the target's own ``python -m pip``, or this environment's pip with ``--python`` (pip 22.3+)
when the target has no pip (``python -m venv --without-pip``)."""

from __future__ import annotations

import re
import subprocess
import sys
from dataclasses import dataclass

from .backend import BackendRequest, BackendResult, source_args
from .errors import BackendError

__all__ = ["PipInstaller"]

#: pip's spelling of the :class:`BackendRequest` switches.
_FLAGS = (("--upgrade", "upgrade"), ("--force-reinstall", "reinstall"), ("--no-deps", "no_deps"))
_WOULD = re.compile(r"^Would install (.*)$", re.MULTILINE)
_DONE = re.compile(r"^Successfully installed (.*)$", re.MULTILINE)
_UNINSTALL = re.compile(r"^\s*Successfully uninstalled (\S+)-(\S+)$", re.MULTILINE)


@dataclass
class PipInstaller:
    #: Whether the target interpreter has pip itself.
    target_has_pip: bool = True
    name: str = "pip"

    def install(self, request: BackendRequest) -> BackendResult:
        if self.target_has_pip:
            argv = [request.python, "-m", "pip"]
        else:
            argv = [sys.executable, "-m", "pip", "--python", request.python]
        argv += ["install", "--disable-pip-version-check", "--no-input", "--index-url", request.index_url]
        argv += source_args(request, constraints="--constraint")
        argv += [flag for flag, on in _FLAGS if getattr(request, on)]
        if request.dry_run:
            argv.append("--dry-run")
        if request.offline and not request.no_index:
            argv.append("--no-index")
        argv += request.requirement_args()
        try:
            out = subprocess.run(argv, capture_output=True, text=True, env=dict(request.environ), check=False)
        except OSError as exc:
            raise BackendError(f"cannot run pip ({exc}); use --installer uv") from exc
        return BackendResult(out.returncode, out.stdout, out.stderr, _installs(out.stdout), _removes(out.stdout))


def _split(names: str) -> tuple[str, ...]:
    """pip prints ``torch-2.14.1+cu126``; the version is after the last hyphen (names are normalized)."""
    return tuple("==".join(item.rsplit("-", 1)) for item in names.split())


def _installs(text: str) -> tuple[str, ...]:
    m = _WOULD.search(text) or _DONE.search(text)
    return _split(m.group(1)) if m else ()


def _removes(text: str) -> tuple[str, ...]:
    return tuple(f"{n}=={v}" for n, v in _UNINSTALL.findall(text))
