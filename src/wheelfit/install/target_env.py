"""What the target interpreter is: its tags, marker environment, install directories and installed packages.

Asked of the interpreter itself (one child process), so ``--python`` may name any environment on this machine.
Our own ``packaging`` is put first on its path for that one run: a fresh venv has none, and the answer must come
from the same code that ranks wheels here.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import packaging

from .errors import EnvironmentProbeError

__all__ = ["PendingEnv", "TargetEnv", "inspect_env", "start_inspect"]

_SCRIPT = r"""
import json, sys, sysconfig
import importlib.metadata as md
dists = {}
for d in md.distributions():  # before our packaging joins sys.path: only the target's own
    name = d.metadata["Name"]
    if name and name not in dists:
        dists[name] = d.version
sys.path.insert(0, sys.argv[1])
from packaging import tags, markers
paths = sysconfig.get_paths()
print(json.dumps({
    "executable": sys.executable,
    "prefix": sys.prefix,
    "python": "%d.%d" % sys.version_info[:2],
    "tags": [str(t) for t in tags.sys_tags()],
    "markers": markers.default_environment(),
    "purelib": paths["purelib"], "platlib": paths["platlib"], "scripts": paths["scripts"],
    "installed": dists,
}))
"""


@dataclass(frozen=True)
class TargetEnv:
    executable: str
    prefix: Path
    python: str
    #: Supported wheel tags, most preferred first (``cp311-cp311-manylinux_2_28_x86_64``, ...).
    tags: tuple[str, ...]
    markers: Mapping[str, str]
    #: The directories installers write into; what a rollback restores.
    install_dirs: tuple[Path, ...]
    #: Installed distributions, name (as spelled in METADATA) -> version.
    installed: Mapping[str, str]

    @property
    def is_virtualenv(self) -> bool:
        return (self.prefix / "pyvenv.cfg").is_file()


def inspect_env(python: str, env: Mapping[str, str] | None = None, timeout: float = 60.0) -> TargetEnv:
    """Run ``python`` once and describe the environment it belongs to."""
    return start_inspect(python, env).result(timeout)


@dataclass
class PendingEnv:
    """The child process describing an environment, started early so it runs while wheelfit imports and plans."""

    python: str
    process: subprocess.Popen[str] | None
    error: OSError | None = None
    _answer: TargetEnv | None = None

    def result(self, timeout: float = 60.0) -> TargetEnv:
        if self._answer is None:
            self._answer = self._collect(timeout)
        return self._answer

    def _collect(self, timeout: float) -> TargetEnv:
        if self.process is None:
            raise EnvironmentProbeError(
                f"cannot run {self.python} ({self.error}); pass --python with a working interpreter"
            )
        try:
            stdout, stderr = self.process.communicate(timeout=timeout)
        except subprocess.TimeoutExpired as exc:
            self.process.kill()
            self.process.communicate()
            raise EnvironmentProbeError(
                f"cannot run {self.python} ({exc}); pass --python with a working interpreter"
            ) from exc
        if self.process.returncode != 0:
            last = (stderr.strip().splitlines() or ["no output"])[-1]
            raise EnvironmentProbeError(f"{self.python} failed to describe itself: {last}; is it Python 3.8 or newer?")
        return _parse(stdout)


def start_inspect(python: str, env: Mapping[str, str] | None = None) -> PendingEnv:
    """Start describing ``python``'s environment; :meth:`PendingEnv.result` collects the answer."""
    lib = str(Path(packaging.__file__).resolve().parent.parent)
    child_env = dict(os.environ if env is None else env)
    child_env.pop("PYTHONPATH", None)
    try:
        process = subprocess.Popen(
            [python, "-s", "-c", _SCRIPT, lib],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=child_env,
        )
    except OSError as exc:
        return PendingEnv(python, None, exc)
    return PendingEnv(python, process)


def _parse(stdout: str) -> TargetEnv:
    data = json.loads(stdout)
    dirs: list[Path] = []
    for key in ("purelib", "platlib", "scripts"):
        path = Path(data[key])
        if path not in dirs:
            dirs.append(path)
    return TargetEnv(
        executable=data["executable"],
        prefix=Path(data["prefix"]),
        python=data["python"],
        tags=tuple(data["tags"]),
        markers=dict(data["markers"]),
        install_dirs=tuple(dirs),
        installed=dict(data["installed"]),
    )
