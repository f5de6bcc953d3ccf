"""Build candidates: the torch builds a plan can choose from, as plain values.

A candidate is one build of one torch version for one platform: a ``download.pytorch.org/whl/<label>``
build (``index`` mode) or a wheel-variant label (``variant`` mode, PEP 817/825). It carries what decides
whether it runs on a machine (the kernels it holds, its runtime floors, its Python tags), its files where an
index was read, and for every fact where it came from and how sure that is. Candidates are gathered with
I/O (:mod:`wheelfit.index.candidates`) and judged without any (:func:`wheelfit.resolve.resolve`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from packaging.specifiers import SpecifierSet
from packaging.version import Version

from ..builds import Build, CudaBuild, RocmBuild, XpuBuild
from ..kinds import BuildKind, Confidence, Mode

if TYPE_CHECKING:
    from ..kb.matrix import DriverFloor, Elsewhere, PlatformEnd
    from ..simple.links import FileLink
    from ..variants.metadata import Variant, VariantsMetadata

__all__ = [
    "BuildKind",
    "Candidate",
    "CandidateSet",
    "Confidence",
    "Fact",
    "Kernels",
    "Mode",
    "Runtime",
    "VariantsFile",
    "weakest",
]


@dataclass(frozen=True)
class Fact:
    """One fact a candidate rests on: what it says, how sure, and where it came from (a URL, an upstream file)."""

    what: str
    confidence: Confidence
    source: str
    #: Measured on this machine (``verify``, ``doctor``), not the knowledge base's word.
    measured_here: bool = False

    @property
    def certain(self) -> bool:
        return self.confidence.certain

    @property
    def doubtful(self) -> bool:
        """A guess (:attr:`Confidence.doubtful`)."""
        return self.confidence.doubtful

    @property
    def inferred(self) -> bool:
        """wheelfit's own inference (a release newer than the knowledge base), not the knowledge base's word."""
        return self.confidence is Confidence.INFERRED

    def to_dict(self) -> dict[str, str]:
        return {"fact": self.what, "confidence": self.confidence.value, "source": self.source}


def weakest(facts: Iterable[Fact]) -> Confidence:
    """The lowest confidence among ``facts`` (``P`` when there are none)."""
    return max((f.confidence for f in facts), key=lambda c: c.rank, default=Confidence.PRIMARY)


@dataclass(frozen=True)
class Kernels:
    """The device code a build holds: SASS and PTX as ``sm`` numbers (``"86"``), gfx targets, Intel AOT targets."""

    sass: tuple[str, ...] = ()
    ptx: tuple[str, ...] = ()
    gfx: tuple[str, ...] = ()
    aot: tuple[str, ...] = ()

    @classmethod
    def of(cls, build: Build) -> Kernels:
        """A knowledge-base build's kernel lists."""
        if isinstance(build, CudaBuild):
            return cls(sass=build.sass, ptx=build.ptx)
        if isinstance(build, RocmBuild):
            return cls(gfx=build.gfx)
        if isinstance(build, XpuBuild):
            return cls(aot=build.aot)
        return cls()

    @classmethod
    def from_arch_list(cls, arch_list: Sequence[str]) -> Kernels:
        """``torch.cuda.get_arch_list()`` (``sm_86``, ``sm_90a``, ``compute_120``, ``gfx942``) or
        ``torch.xpu.get_arch_list()`` (``pvc``, ``bmg``: AOT targets) as kernel lists."""
        sass: list[str] = []
        ptx: list[str] = []
        gfx: list[str] = []
        other: list[str] = []
        for entry in arch_list:
            kind, _, num = entry.partition("_")
            num = num.rstrip("af")  # sm_90a, sm_100f: family-specific builds of the same capability
            if kind == "sm" and num.isdigit() and len(num) >= 2:
                sass.append(num)
            elif kind == "compute" and num.isdigit() and len(num) >= 2:
                ptx.append(num)
            elif entry.startswith("gfx"):
                gfx.append(entry.split(":")[0])
            else:
                other.append(entry)
        return cls(tuple(dict.fromkeys(sass)), tuple(dict.fromkeys(ptx)), tuple(gfx), tuple(other))


@dataclass(frozen=True)
class Runtime:
    """What a build needs of the machine besides kernels."""

    #: The CUDA toolkit it was built with (``"13.0"``) and the ROCm version.
    cuda: str | None = None
    rocm: str | None = None
    #: The driver the toolkit asks for on its own (NVIDIA Table 3), and the floor of minor-version compatibility
    #: for its CUDA major (Table 2); per driver OS.
    driver_floor: DriverFloor | None = None
    compat_floor: DriverFloor | None = None
    min_glibc: Version | None = None
    min_macos: Version | None = None
    #: macOS builds: the oldest macOS on which MPS (the Apple GPU) works.
    mps_min_macos: Version | None = None


@dataclass(frozen=True)
class VariantsFile:
    """A version's ``*-variants.json``: its file name and parsed metadata (shared by that version's labels)."""

    filename: str
    metadata: VariantsMetadata


@dataclass(frozen=True)
class Candidate:
    version: Version
    #: ``cu130``, ``rocm7.1``, ``xpu``, ``cpu`` (index mode) or a variant label (``cuda13.0``, ``null``).
    label: str
    #: CUDA, ROCm, XPU or CPU (the null variant, macOS builds); never MPS.
    kind: BuildKind
    #: wheelfit's platform key: ``linux_x86_64``, ``linux_aarch64``, ``windows_amd64``, ``macos_arm64``.
    platform: str
    mode: Mode = Mode.INDEX
    #: ``None`` when unknown: variant metadata without ``sm_arch`` or ``gfx_arch`` leaves kernels to the ranking.
    kernels: Kernels | None = None
    runtime: Runtime = field(default_factory=Runtime)
    #: CPython tags with wheels, from the knowledge base; ``None`` when unknown (then the files decide).
    python_tags: tuple[str, ...] | None = None
    #: The index's files for this version and label (every platform); ``None``: no index was read for it.
    files: tuple[FileLink, ...] | None = None
    #: Where the files are: the per-variant index or the variant index.
    index_url: str | None = None
    #: Companion pins (``torchvision`` -> ``==0.29.1``) from the knowledge base; empty when unknown.
    companions: Mapping[str, SpecifierSet] = field(default_factory=dict)
    #: The release matrix advertises it (a build that was only built may be missing from the index).
    advertised: bool = True
    #: Every fact the candidate rests on, by topic: ``kernels``, ``exists``, ``driver``, ``companions``.
    facts: Mapping[str, Fact] = field(default_factory=dict)
    #: Variant mode: the variant as published, and its version's variants file.
    variant: Variant | None = None
    variants_file: VariantsFile | None = None

    @property
    def series(self) -> str:
        return f"{self.version.major}.{self.version.minor}"

    @property
    def on_index(self) -> bool | None:
        """True or False once an index was read for it; ``None`` when none was."""
        return None if self.files is None else bool(self.files)

    @property
    def inferred(self) -> bool:
        """Whether the kernel facts are wheelfit's inference (a release newer than the knowledge base)."""
        fact = self.facts.get("kernels")
        return fact is not None and fact.inferred

    @property
    def measured(self) -> bool:
        """Whether the kernel facts were measured on this machine (:mod:`wheelfit.kb.overlay`)."""
        fact = self.facts.get("kernels")
        return fact is not None and fact.measured_here

    def __str__(self) -> str:
        return f"{self.version}+{self.label}" if self.mode is Mode.INDEX else f"{self.version} ({self.label})"


@dataclass(frozen=True)
class CandidateSet:
    """Everything a plan is made from: the candidates, and what is known about where they came from."""

    candidates: tuple[Candidate, ...]
    #: The release range of the knowledge base (``2.5-2.15``) and the date it was last updated.
    knowledge: str = ""
    knowledge_updated: str = ""
    #: Where the index was read (``None``: the knowledge base alone), and whether every page was read.
    index: str | None = None
    index_complete: bool = False
    #: Versions the index lists that match the request but have no candidate for this platform.
    index_versions: tuple[Version, ...] = ()
    #: Things the plan should say about how the candidates were gathered.
    notes: tuple[str, ...] = ()
    #: The knowledge base's facts about the machine's platform: where PyTorch stopped building for it (macOS
    #: x86_64 after 2.2.2), and who else publishes builds for its GPU (Jetson: NVIDIA). From the knowledge base
    #: the plan was given (``--kb``), never the packaged one behind its back.
    platform_end: PlatformEnd | None = None
    elsewhere: Elsewhere | None = None
