"""The installed ROCm user space version (ROCm's own ``.info/version`` file).

``<root>/.info/version`` holds one line such as ``6.4.0-47`` or ``7.1.1``; some
installs have ``.info/version-rocm`` instead. ``ROCM_PATH``/``ROCM_HOME`` move
the root. No ROCm install is a normal state: PyTorch's ROCm wheels bundle the
runtime and need only the amdgpu driver and /dev/kfd.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from wheelfit_probekit import System

__all__ = ["RocmInstall", "parse_version_file", "read_rocm_version", "rocm_root"]

DEFAULT_ROOT = "/opt/rocm"
VERSION_FILES = (".info/version", ".info/version-rocm")

_VERSION_RE = re.compile(r"(\d+\.\d+(?:\.\d+)?)(?:[-+~.]\S*)?", re.ASCII)


def parse_version_file(text: str) -> str | None:
    """``"6.4.0-47\\n"`` -> ``"6.4.0"``; ``None`` when the first line is not a version."""
    lines = text.strip().splitlines()
    if not lines:
        return None
    m = _VERSION_RE.fullmatch(lines[0].strip())
    return m.group(1) if m else None


def rocm_root(environ: Mapping[str, str]) -> str:
    """``ROCM_PATH``, else ``ROCM_HOME``, else /opt/rocm (a machine path, read inside any sysroot)."""
    for var in ("ROCM_PATH", "ROCM_HOME"):
        value = environ.get(var, "").strip()
        if value:
            return value.rstrip("/") or "/"
    return DEFAULT_ROOT


@dataclass(frozen=True)
class RocmInstall:
    root: str
    version: str | None
    #: The file's text as written (``6.4.0-47``) and where it came from.
    raw: str | None = None
    path: str | None = None


def read_rocm_version(system: System) -> RocmInstall:
    """The version from the first version file that exists; raises ProbeError when one is unreadable."""
    root = rocm_root(system.environ)
    for name in VERSION_FILES:
        path = f"{root}/{name}"
        text = system.read_text(path, limit=4096)
        if text is None:
            continue
        return RocmInstall(root, parse_version_file(text), text.strip(), path)
    return RocmInstall(root, None)
