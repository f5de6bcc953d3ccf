"""What one PyTorch build has kernels for, as a tagged union: a type per kind of build, each with its own facts.

A CUDA build has its toolkit and SASS/PTX lists, a ROCm build its ROCm version and gfx targets, an XPU build its
AOT targets, a CPU build nothing more; an MPS build is macOS's CPU wheel, which also drives the Apple GPU, so its
:attr:`kind` is CPU (it is the ``cpu`` index's wheel). Code that needs one kind's facts matches on the type, so a
gfx list is never read off a CUDA build and a build cannot hold both. Pure: no I/O.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, TypeVar

from .kinds import BuildKind

__all__ = ["Build", "BuildT", "CpuBuild", "CudaBuild", "MpsBuild", "RocmBuild", "XpuBuild"]


@dataclass(frozen=True)
class CudaBuild:
    """Built with CUDA ``cuda`` (``12.6``): SASS for the ``sass`` capabilities (``"86"``), PTX for ``ptx``."""

    cuda: str
    sass: tuple[str, ...] = ()
    ptx: tuple[str, ...] = ()
    kind: ClassVar[BuildKind] = BuildKind.CUDA

    @property
    def label(self) -> str:
        """The PyTorch index's name for it: ``cu126``."""
        return "cu" + self.cuda.replace(".", "")

    @property
    def toolkit(self) -> str | None:
        """The GPU toolkit it was built with, the same for every kind: the newest build of a kind has the highest."""
        return self.cuda


@dataclass(frozen=True)
class RocmBuild:
    """Built with ROCm ``rocm`` (``7.2``) for the ``gfx`` targets."""

    rocm: str
    gfx: tuple[str, ...] = ()
    kind: ClassVar[BuildKind] = BuildKind.ROCM

    @property
    def label(self) -> str:
        return "rocm" + self.rocm

    @property
    def toolkit(self) -> str | None:
        return self.rocm


@dataclass(frozen=True)
class XpuBuild:
    """Intel GPUs: ahead-of-time kernels for the ``aot`` targets (``pvc``, ``bmg``), others compiled at load."""

    aot: tuple[str, ...] = ()
    kind: ClassVar[BuildKind] = BuildKind.XPU
    label: ClassVar[str] = "xpu"
    toolkit: ClassVar[str | None] = None


@dataclass(frozen=True)
class CpuBuild:
    """CPU kernels only."""

    kind: ClassVar[BuildKind] = BuildKind.CPU
    label: ClassVar[str] = "cpu"
    toolkit: ClassVar[str | None] = None


@dataclass(frozen=True)
class MpsBuild:
    """macOS's CPU wheel, which also runs on the Apple GPU through MPS (Metal)."""

    kind: ClassVar[BuildKind] = BuildKind.CPU
    label: ClassVar[str] = "cpu"
    toolkit: ClassVar[str | None] = None


Build = CudaBuild | RocmBuild | XpuBuild | CpuBuild | MpsBuild
#: One member of the union, for functions that hand back the member they were asked for.
BuildT = TypeVar("BuildT", CudaBuild, RocmBuild, XpuBuild, CpuBuild, MpsBuild)
