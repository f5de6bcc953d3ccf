"""The knowledge base as build candidates: every build it knows of for a platform, with each fact's source.

And the inference for a build the index has and the knowledge base does not know (a release newer than it):
its kernels and floors are those of the same variant in the newest release that has it, marked ``inferred``.
Pure: a loaded :class:`~wheelfit.kb.matrix.Knowledge` in, plain values out.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace

from packaging.version import Version

from ..builds import CudaBuild, RocmBuild
from ..kb.drivers import compat_floor, toolkit_floor
from ..kb.matrix import Companions, Knowledge, PlatformBuilds, Release, Variant
from ..kb.overlay import Overlay
from ..kinds import BuildKind, Confidence
from ..simple.links import FileLink
from .model import Candidate, CandidateSet, Fact, Kernels, Runtime

__all__ = [
    "infer_candidate", "kb_candidates", "knowledge_set", "knowledge_span", "label_kind", "measured", "pypi_label",
]  # fmt: skip

_CUDA_LABEL = re.compile(r"cu(\d+)(\d)")
_ROCM_LABEL = re.compile(r"rocm\d+\.\d+(\.\d+)?")


def knowledge_span(kb: Knowledge) -> str:
    """``2.5-2.15``: the release series the knowledge base covers, then its lines not released yet
    (``2.5-2.15, test 2.16, nightly 2.17``)."""
    series = [r.name for r in kb.releases_newest_first()]
    span = f"{series[-1]}-{series[0]}" if series else "none"
    for channel in ("test", "nightly"):
        lines = [r.name for r in kb.releases_newest_first(pre=True) if r.channel == channel]
        span += f", {channel} {', '.join(lines)}" if lines else ""
    return span


def label_kind(label: str) -> BuildKind | None:
    """What a per-variant index name holds: ``cu130`` -> CUDA, ``rocm7.1`` -> ROCm, ``xpu``, ``cpu``."""
    if _CUDA_LABEL.fullmatch(label):
        return BuildKind.CUDA
    if _ROCM_LABEL.fullmatch(label):
        return BuildKind.ROCM
    return {"xpu": BuildKind.XPU, "cpu": BuildKind.CPU}.get(label)


def pypi_label(kb: Knowledge, version: Version, platform: str) -> str | None:
    """The build ``pip install torch==X`` gets from PyPI on ``platform`` (``cu128`` for 2.9 on Linux x86_64): what a
    torch version without a local label is; ``None`` when the knowledge base does not say."""
    release = kb.release(f"{version.major}.{version.minor}")
    builds = release.platform(platform) if release is not None else None
    return builds.pypi_default if builds is not None else None


def kb_candidates(kb: Knowledge, platform: str) -> tuple[Candidate, ...]:
    """Every (version, variant) build the knowledge base lists for ``platform``, newest version first, each patch
    release with the builds it publishes. Nightly lines have no versions to pin: the index names them."""
    out: list[Candidate] = []
    for release in kb.releases_for(platform):  # with the last series of a platform PyTorch no longer builds for
        builds = release.platform(platform)
        if builds is None:
            continue
        for version in sorted(release.versions, reverse=True):
            for variant in builds.variants_for(version):
                out.append(measured(kb.measured, _candidate(kb, release, builds, variant, version)))
    return tuple(out)


def _candidate(
    kb: Knowledge, release: Release, builds: PlatformBuilds, variant: Variant, version: Version
) -> Candidate:
    companions = release.companions.get(version)
    facts = {
        "exists": Fact(
            f"torch {version}+{variant.label} is published for {builds.name}",
            variant.confidence if variant.advertised else Confidence.UNCERTAIN,
            _source(kb, kb.field_sources.get("variants", variant.source))
            + ("" if variant.advertised else " (built, not advertised)"),
        ),
        "kernels": Fact(
            f"the kernels of torch {release.name} {variant.label} ({builds.name})",
            variant.confidence,
            _source(kb, variant.source) + (f"; {variant.note}" if variant.note else ""),
        ),
    }
    if variant.kind is BuildKind.CPU and builds.mps_min_macos is not None:
        key = kb.field_sources.get("mps_min_macos")
        facts["kernels"] = Fact(
            f"MPS of torch {release.name} needs macOS >= {builds.mps_min_macos}",
            builds.confidence,
            _source(kb, key) if key else "knowledge base",
        )
    build = variant.build
    if isinstance(build, CudaBuild) and (floor := toolkit_floor(build.cuda)) is not None:
        facts["driver"] = Fact(
            f"CUDA {build.cuda}'s driver minimum",
            floor.confidence.get("windows" if builds.os == "windows" else "linux", Confidence.UNCERTAIN),
            floor.source,
        )
    if companions is not None:
        facts["companions"] = Fact(
            f"the companions of torch {version}", companions.confidence, _source(kb, companions.source)
        )
    return Candidate(
        version=version,
        label=variant.label,
        kind=variant.kind,
        platform=builds.name,
        kernels=Kernels.of(variant.build),
        runtime=_runtime(kb, builds, variant),
        python_tags=release.python_tags_for(version, builds.name),
        companions=dict(companions.pins) if companions is not None else {},
        advertised=variant.advertised,
        facts=facts,
    )


def _runtime(kb: Knowledge, builds: PlatformBuilds, variant: Variant) -> Runtime:
    build = variant.build
    cuda = build.cuda if isinstance(build, CudaBuild) else None
    return Runtime(
        cuda=cuda,
        rocm=build.rocm if isinstance(build, RocmBuild) else None,
        driver_floor=toolkit_floor(cuda) if cuda else None,
        compat_floor=compat_floor(int(cuda.split(".")[0])) if cuda else None,
        min_glibc=builds.min_glibc,
        min_macos=builds.min_macos,
        mps_min_macos=builds.mps_min_macos,
    )


def _source(kb: Knowledge, key: str) -> str:
    return kb.sources.get(key, key)


def infer_candidate(
    kb: Knowledge, platform: str, version: Version, label: str, files: Sequence[FileLink], index_url: str
) -> Candidate | None:
    """A candidate for a build the index lists and the knowledge base does not: the facts of the same label in
    its own series (a new patch release, release candidates, a nightly) or else the newest release that has it
    (else of the newest build of its kind), marked ``inferred`` unless they are its own series' facts; its
    companion pins are its own series' for that version on every platform, or none. ``None`` when not even its
    kind is known."""
    kind = label_kind(label)
    if kind is None:
        return None
    like: tuple[Release, PlatformBuilds, Variant] | None = None
    series = f"{version.major}.{version.minor}"
    releases = kb.releases_newest_first(pre=True)
    for release in sorted(releases, key=lambda r: r.name != series):  # its own series first (a new patch)
        builds = release.platform(platform)
        if builds is None:
            continue
        variant = builds.variant(label)
        if variant is not None and release.name == series:
            variant = variant.in_version(Version(version.base_version)) or variant  # a patch release's own lists
        if variant is not None:
            like = (release, builds, variant)
            break
        if like is None:
            same = [v for v in builds.of_kind(kind) if kind is not BuildKind.CUDA or _same_major(v, label)]
            if same:
                like = (release, builds, max(same, key=_toolkit))
    if like is None:
        return None
    release, builds, variant = like
    own = release.name == series and variant.label == label
    how = "the same build" if variant.label == label else f"{variant.label}, the newest {kind} build it knows"
    source = f"inferred from {how} of torch {release.name} in the knowledge base ({_source(kb, variant.source)})"
    if own:
        source = f"the knowledge base's torch {release.name}{_CHANNEL_WORDS[release.channel]} {label}: "
        source += _source(kb, variant.source)
    runtime = _runtime(kb, builds, variant)
    companions = _own_companions(kb, version)
    if variant.label != label:
        cuda = _CUDA_LABEL.fullmatch(label)
        if cuda:  # cu134: CUDA 13.4, whose floors the knowledge base may know
            toolkit = f"{cuda[1]}.{cuda[2]}"
            floor = toolkit_floor(toolkit)
            runtime = Runtime(
                toolkit, None, floor, runtime.compat_floor, runtime.min_glibc, runtime.min_macos, runtime.mps_min_macos
            )
        elif kind is BuildKind.ROCM:
            runtime = Runtime(None, label.removeprefix("rocm"), None, None, runtime.min_glibc)
    inferred = Candidate(
        version=version,
        label=label,
        kind=kind,
        platform=platform,
        kernels=Kernels.of(variant.build),
        runtime=runtime,
        python_tags=None,
        files=tuple(files),
        index_url=index_url,
        companions=dict(companions.pins) if companions is not None else {},
        advertised=True,
        facts={
            "exists": Fact(f"torch {version}+{label} is on the index", Confidence.PRIMARY, index_url),
            "kernels": Fact(
                f"the kernels of torch {version} {label} ({platform})",
                variant.confidence if own else Confidence.INFERRED,
                source,
            ),
            **_companions_fact(kb, version, companions),
        },
    )
    return measured(kb.measured, inferred)


#: How a source names a line of each channel ("the knowledge base's torch 2.16 release candidates cu130").
_CHANNEL_WORDS = {"release": "", "test": " release candidates", "nightly": " nightly"}


def _own_companions(kb: Knowledge, version: Version) -> Companions | None:
    """The companion pins of ``version`` from its own series, whatever platform or build it is: a nightly line's
    pins for its dev builds only, a release's (or release candidates') for its versions only, so every platform
    pins the same and a released 2.16.0 never takes the 2.16 nightlies' torchvision."""
    release = kb.release(f"{version.major}.{version.minor}")
    if release is None or not release.builds_version(version):
        return None
    return release.companions.get(Version(version.base_version))


def _companions_fact(kb: Knowledge, version: Version, companions: Companions | None) -> dict[str, Fact]:
    """The fact the pins rest on, so that a plan shows their confidence (U for a line not released yet)."""
    if companions is None:
        return {}
    fact = Fact(f"the companions of torch {version}", companions.confidence, _source(kb, companions.source))
    return {"companions": fact}


def _same_major(variant: Variant, label: str) -> bool:
    cuda = _CUDA_LABEL.fullmatch(label)
    return cuda is not None and isinstance(variant.build, CudaBuild) and variant.build.cuda.split(".")[0] == cuda[1]


def _toolkit(variant: Variant) -> Version:
    return Version(variant.build.toolkit or "0")


def knowledge_set(kb: Knowledge, platform: str, notes: Sequence[str] = (), *, jetson: bool = False) -> CandidateSet:
    """The knowledge base's candidates alone (a plan made from it says the index was not read), with its facts
    about the platform: where PyTorch stopped building for it, and who publishes a Jetson's builds."""
    return CandidateSet(
        kb_candidates(kb, platform), knowledge=knowledge_span(kb), knowledge_updated=kb.updated, notes=tuple(notes),
        platform_end=kb.platform_ends.get(platform), elsewhere=kb.elsewhere.get("jetson") if jetson else None,
    )  # fmt: skip


def measured(overlay: Overlay, candidate: Candidate) -> Candidate:
    """``candidate`` with its kernels as measured on this machine, when this build was (``verify``, ``doctor``):
    confidence ``M``, the date said."""
    found = overlay.builds.get((Version(candidate.version.public), candidate.label, candidate.platform))
    if found is None:
        return candidate
    kernels = Kernels.from_arch_list(found.arch_list)
    what = f"the kernels of torch {candidate.version} {candidate.label} ({candidate.platform})"
    fact = Fact(what, Confidence.MEASURED, found.source, measured_here=True)
    return replace(candidate, kernels=kernels, facts={**candidate.facts, "kernels": fact})
