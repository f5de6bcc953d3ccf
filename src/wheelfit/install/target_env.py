"""What the target interpreter is: its tags, marker environment, install directories and installed packages.

Asked of the interpreter itself (one child process, standard library only), so ``--python`` may name any
environment on this machine. Its wheel tags are computed here with our own ``packaging`` from the facts it gives
(the same code that ranks wheels here); for an interpreter of another platform or pointer size they are asked of it,
with our ``packaging`` put first on its path for that one run (a fresh venv has none).
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import packaging

from .errors import EnvironmentProbeError

__all__ = ["PendingEnv", "TargetEnv", "inspect_env", "start_inspect"]

#: The description, with the standard library only (a fresh interpreter imports ``importlib.metadata`` and
#: ``packaging.tags`` in about 0.07 s each): the marker environment as ``packaging.markers.default_environment``
#: builds it, the installed distributions from the ``*.dist-info``/``*.egg-info`` entries on ``sys.path`` (first one
#: wins, as ``importlib.metadata`` finds them), and the facts the wheel tags are computed from in wheelfit's process.
_SCRIPT = r"""
import json, os, platform, struct, sys, sysconfig

def version(info):
    text = "%d.%d.%d" % (info.major, info.minor, info.micro)
    return text if info.releaselevel == "final" else text + info.releaselevel[0] + str(info.serial)

def header(path):
    found = {}
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            for line in f:
                if not line.strip():
                    break
                key, _, value = line.partition(":")
                if key in ("Name", "Version") and key not in found:
                    found[key] = value.strip()
    except OSError:
        pass
    return found

dists = {}
for entry in sys.path:
    try:
        names = sorted(os.listdir(entry or "."))
    except OSError:
        continue
    for name in names:
        if name.endswith(".dist-info"):
            meta = header(os.path.join(entry, name, "METADATA"))
        elif name.endswith(".egg-info"):
            path = os.path.join(entry, name)
            meta = header(os.path.join(path, "PKG-INFO") if os.path.isdir(path) else path)
        else:
            continue
        if meta.get("Name") and meta.get("Version") and meta["Name"] not in dists:
            dists[meta["Name"]] = meta["Version"]
paths = sysconfig.get_paths()
print(json.dumps({
    "executable": sys.executable,
    "prefix": sys.prefix,
    "python": "%d.%d" % sys.version_info[:2],
    "markers": {
        "implementation_name": sys.implementation.name,
        "implementation_version": version(sys.implementation.version),
        "os_name": os.name,
        "platform_machine": platform.machine(),
        "platform_release": platform.release(),
        "platform_system": platform.system(),
        "platform_version": platform.version(),
        "python_full_version": platform.python_version(),
        "platform_python_implementation": platform.python_implementation(),
        "python_version": ".".join(platform.python_version_tuple()[:2]),
        "sys_platform": sys.platform,
    },
    "tag_facts": {
        "implementation": sys.implementation.name,
        "version": list(sys.version_info[:2]),
        "platform": sysconfig.get_platform(),
        "bits": struct.calcsize("P") * 8,
        "debug": bool(sysconfig.get_config_var("Py_DEBUG")),
        "free_threaded": bool(sysconfig.get_config_var("Py_GIL_DISABLED")),
    },
    "purelib": paths["purelib"], "platlib": paths["platlib"], "scripts": paths["scripts"],
    "installed": dists,
}))
"""

#: The wheel tags asked of the interpreter itself, with our own ``packaging`` (when the fast path cannot say).
_TAGS_SCRIPT = r"""
import json, sys
sys.path.insert(0, sys.argv[1])
from packaging import tags
print(json.dumps([str(t) for t in tags.sys_tags()]))
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
    env: Mapping[str, str] | None = None
    _answer: TargetEnv | None = None

    def result(self, timeout: float = 60.0) -> TargetEnv:
        if self._answer is None:
            self._answer = self._collect(timeout)
        return self._answer

    def close(self) -> None:
        """Stop the child if its answer is no longer wanted (the command was refused before it was read)."""
        if self.process is not None and self._answer is None and self.process.returncode is None:
            self.process.kill()
            self.process.communicate()

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
        return _parse(stdout, self.python, self.env or _child_env(None))


def start_inspect(python: str, env: Mapping[str, str] | None = None) -> PendingEnv:
    """Start describing ``python``'s environment; :meth:`PendingEnv.result` collects the answer."""
    child_env = _child_env(env)
    try:
        process = subprocess.Popen(
            [python, "-s", "-c", _SCRIPT],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=child_env,
        )
    except OSError as exc:
        return PendingEnv(python, None, exc)
    return PendingEnv(python, process, env=child_env)


def _parse(stdout: str, python: str, env: Mapping[str, str]) -> TargetEnv:
    data = _last_json(stdout, python)
    dirs: list[Path] = []
    for key in ("purelib", "platlib", "scripts"):
        path = Path(data[key])
        if path not in dirs:
            dirs.append(path)
    found = local_tags(data["tag_facts"])
    return TargetEnv(
        executable=data["executable"],
        prefix=Path(data["prefix"]),
        python=data["python"],
        tags=found if found is not None else _asked_tags(python, env),
        markers=dict(data["markers"]),
        install_dirs=tuple(dirs),
        installed=dict(data["installed"]),
    )


def _last_line(stdout: str) -> tuple[str, Any]:
    """A child's answer: its last line, and that line read as JSON (``None`` if it is not); whatever its start-up
    printed before (a ``.pth`` banner) is not read."""
    lines = stdout.strip().splitlines()
    last = lines[-1] if lines else ""
    try:
        return last, json.loads(last) if last else None
    except ValueError:
        return last, None


def _last_json(stdout: str, python: str) -> dict[str, Any]:
    """The description: the last line of the child's output (a ``.pth`` file may print at start-up before it),
    checked for the shape read from it before anything is trusted."""
    last, data = _last_line(stdout)
    texts = ("executable", "prefix", "python", "purelib", "platlib", "scripts")
    tables = ("markers", "installed", "tag_facts")
    if not (
        isinstance(data, dict)
        and all(isinstance(data.get(k), str) for k in texts)
        and all(isinstance(data.get(k), dict) for k in tables)
    ):
        shown = (last or "nothing")[:200]
        raise EnvironmentProbeError(f"{python} did not describe itself (it printed {shown!r}); is it Python 3.8+?")
    markers, installed = data["markers"], data["installed"]
    if not all(isinstance(v, str) for d in (markers, installed) for v in [*d, *d.values()]):
        raise EnvironmentProbeError(f"{python} described itself with values that are not text; is it Python 3.8+?")
    return data


def local_tags(facts: Mapping[str, object]) -> tuple[str, ...] | None:
    """The target's wheel tags, most preferred first, as ``packaging.tags.sys_tags`` gives them in the target,
    computed here: for a CPython of this machine's platform and pointer size (the platform tags are then this
    process's, glibc and all). ``None``: ask the interpreter (:data:`_TAGS_SCRIPT`)."""
    import struct
    import sys
    import sysconfig

    from packaging import tags

    version = facts.get("version")
    if (
        facts.get("implementation") != "cpython"
        or sys.implementation.name != "cpython"
        or facts.get("platform") != sysconfig.get_platform()
        or facts.get("bits") != struct.calcsize("P") * 8
        or not (isinstance(version, list) and len(version) == 2 and all(isinstance(v, int) for v in version))
    ):
        return None
    major, minor = version
    nodot = f"{major}{minor}"
    threading = "t" if facts.get("free_threaded") and (major, minor) >= (3, 13) else ""
    abis = [f"cp{nodot}{threading}d", f"cp{nodot}{threading}"] if facts.get("debug") else [f"cp{nodot}{threading}"]
    platforms = list(tags.platform_tags())
    found = [*tags.cpython_tags((major, minor), abis, platforms)]
    found += tags.compatible_tags((major, minor), f"cp{nodot}", platforms)
    return tuple(str(t) for t in found)


def _asked_tags(python: str, env: Mapping[str, str]) -> tuple[str, ...]:
    lib = str(Path(packaging.__file__).resolve().parent.parent)
    try:
        done = subprocess.run(
            [python, "-s", "-c", _TAGS_SCRIPT, lib], capture_output=True, text=True, env=_child_env(env), timeout=60,
            check=False,
        )  # fmt: skip
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise EnvironmentProbeError(f"cannot run {python} ({exc}); pass --python with a working interpreter") from exc
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["no output"])[-1]
        raise EnvironmentProbeError(f"{python} failed to give its wheel tags: {last}")
    _last, found = _last_line(done.stdout)
    if not (isinstance(found, list) and found and all(isinstance(t, str) for t in found)):
        raise EnvironmentProbeError(f"{python} gave no wheel tags; is it Python 3.8 or newer?")
    return tuple(found)


def _child_env(env: Mapping[str, str] | None) -> dict[str, str]:
    child = dict(os.environ if env is None else env)
    child.pop("PYTHONPATH", None)
    return child
