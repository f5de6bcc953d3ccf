"""The doctor's answer as values: what it found (:class:`Issue`), in words, and what fixes it (:class:`Fix`)."""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Any

from ..install.verify import Verification

__all__ = ["Diagnosis", "Finding", "Fix", "FixKind", "Issue"]


class Issue(enum.Enum):
    """What the doctor found: ``verify``'s problems and its own."""

    NOT_INSTALLED = "not-installed"
    IMPORT_FAILS = "import-fails"
    BROKEN_BUILD = "broken-build"
    CPU_BUILD_ON_GPU = "cpu-build-on-gpu"
    WRONG_VENDOR = "wrong-vendor"
    NO_KERNELS = "no-kernels"
    DRIVER_TOO_OLD = "driver-too-old"
    COMPANION = "companion"
    TRITON = "triton"
    GPUS_HIDDEN = "gpus-hidden"
    NO_GPU_VISIBLE = "no-gpu-visible"
    XPU_NOT_XE = "xpu-not-xe"
    SHADOWED = "shadowed"
    FILES_CHANGED = "files-changed"
    EXTENSION = "extension"


class FixKind(enum.Enum):
    #: Install ``requirements`` into the environment (with ``upgrade``/``reinstall``).
    INSTALL = "install"
    #: Unset the environment variable ``name``.
    UNSET = "unset"
    #: Take ``path`` off the interpreter's path (a ``PYTHONPATH`` entry, a ``.pth`` file's).
    UNSHADOW = "unshadow"
    #: Uninstall the copy Python finds first (the user site's), so the environment's own is imported.
    UNINSTALL_FIRST = "uninstall-first"
    #: Update the NVIDIA driver to ``driver`` or newer.
    DRIVER = "driver"
    #: Reinstall the extension ``name`` built for this torch (no wheel of it is known to wheelfit yet).
    REBUILD = "rebuild"


@dataclass(frozen=True)
class Fix:
    kind: FixKind
    requirements: tuple[str, ...] = ()
    upgrade: bool = False
    reinstall: bool = False
    #: A variable, a path, a package, or a driver version, as ``kind`` says.
    name: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind.value,
            "requirements": list(self.requirements),
            "upgrade": self.upgrade,
            "reinstall": self.reinstall,
            "name": self.name,
        }


@dataclass(frozen=True)
class Finding:
    issue: Issue
    #: One sentence in plain words: what is wrong and what it does to the user.
    summary: str
    #: The facts it rests on.
    evidence: str
    #: What fixes it, best first (``()``: nothing wheelfit can name).
    fixes: tuple[Fix, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {
            "issue": self.issue.value,
            "summary": self.summary,
            "evidence": self.evidence,
            "fixes": [f.to_dict() for f in self.fixes],
        }


@dataclass(frozen=True)
class Diagnosis:
    verification: Verification
    findings: tuple[Finding, ...]
    #: What was checked and found right, for "all good" to rest on.
    good: tuple[str, ...]

    @property
    def healthy(self) -> bool:
        return not self.findings
