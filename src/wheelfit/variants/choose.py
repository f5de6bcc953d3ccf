"""Variant mode: from an index's variant wheels and ``*-variants.json`` files to the one wheel to install.

Pure: the links, the parsed metadata, the provider output and the report come in; the
choice and its reasons go out. The order is the ranking's (PEP 825, as variantlib does
it), with one check of wheelfit's own on top: the reference providers report only the
highest compute capability of a multi-GPU machine, so a label whose ``nvidia :: sm_arch``
has no kernels for some other GPU would still rank first. wheelfit skips such a label
(and likewise an ``amd :: gfx_arch`` list missing one of the machine's gfx targets).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from email.parser import BytesParser

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.tags import Tag, compatible_tags, cpython_tags, mac_platforms
from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

from ..index.links import FileLink
from ..index.select import requires_python_problem
from ..report import Accelerator, HardwareReport
from ..resolve.coverage import cuda_runs, describe_archs, sm_tuple
from ..resolve.machine import Machine, ResolveError
from ..resolve.plan import PackagePin, Plan, Rejection
from .errors import VariantError
from .filename import VariantWheelName, parse_wheel_name
from .markers import VariantEnvironment, requirement_applies
from .metadata import Variant, VariantsMetadata
from .ranking import SupportedConfigs, rank_variants

__all__ = [
    "VariantChoice",
    "choose_variant",
    "dependencies",
    "metadata_file_version",
    "target_tags",
    "variant_plan",
]

#: Oldest glibc the manylinux tags go down to (manylinux2014), and what an unknown glibc is taken to be.
_OLDEST_GLIBC = 17
_ASSUMED_GLIBC = 28


@dataclass(frozen=True)
class VariantChoice:
    version: Version
    label: str
    link: FileLink
    #: The chosen variant narrowed to what this machine supports: dependency markers use it (PEP 825).
    variant: Variant
    #: The ``*-variants.json`` file name the choice was made from.
    metadata_file: str
    reasons: tuple[str, ...]
    rejected: tuple[Rejection, ...] = ()
    warnings: tuple[str, ...] = ()

    @property
    def is_null(self) -> bool:
        return self.variant.is_null


def metadata_file_version(filename: str, project: str) -> Version | None:
    """``torch-2.10.0-variants.json`` -> 2.10.0 for project ``torch``; ``None`` for any other file."""
    suffix = "-variants.json"
    if not filename.endswith(suffix):
        return None
    name, sep, version = filename[: -len(suffix)].rpartition("-")
    if not sep or canonicalize_name(name) != canonicalize_name(project):
        return None
    try:
        return Version(version)
    except InvalidVersion:
        return None


def target_tags(report: HardwareReport) -> list[Tag]:
    """The wheel tags the report's Python and platform accept, most preferred first.

    Derived from the report, not from the running interpreter, so a ``--target`` plan is
    made for the target: Linux gets ``manylinux_2_<glibc>`` down to ``2_17`` (``2_28``
    assumed when the glibc is unknown) and ``linux_<arch>``.
    """
    p = report.platform
    parts = p.python.split(".")
    if len(parts) < 2 or not (parts[0].isdigit() and parts[1].isdigit()):
        raise VariantError(f"cannot read the Python version {p.python!r} from the report")
    py = (int(parts[0]), int(parts[1]))
    arch = (p.machine or report.cpu.arch or "").lower()
    platforms: list[str]
    if p.system == "Linux":
        arch = {"amd64": "x86_64", "arm64": "aarch64"}.get(arch, arch)
        glibc = _ASSUMED_GLIBC
        if p.libc and p.libc.startswith("glibc "):
            with contextlib.suppress(IndexError, ValueError):
                glibc = int(p.libc.split()[1].split(".")[1])
        platforms = [f"manylinux_2_{m}_{arch}" for m in range(glibc, _OLDEST_GLIBC - 1, -1)]
        platforms += [f"manylinux2014_{arch}"] if glibc >= _OLDEST_GLIBC else []
        platforms.append(f"linux_{arch}")
    elif p.system == "Windows":
        platforms = ["win_arm64" if arch in ("arm64", "aarch64") else "win_amd64"]
    elif p.system == "Darwin":
        release = (p.release or "11.0").split(".")
        try:
            mac = (int(release[0]), int(release[1]) if len(release) > 1 else 0)
        except ValueError:
            mac = (11, 0)
        platforms = list(mac_platforms(mac, "arm64" if arch in ("arm64", "aarch64") else arch))
    else:
        platforms = []
    interpreter = f"cp{py[0]}{py[1]}"
    return [*cpython_tags(py, [interpreter], platforms), *compatible_tags(py, interpreter, platforms)]


def choose_variant(
    links: Iterable[FileLink],
    metadata: Mapping[Version, tuple[str, VariantsMetadata]],
    supported: SupportedConfigs,
    report: HardwareReport,
    *,
    project: str = "torch",
    specifier: SpecifierSet | str = "",
    tags: Sequence[Tag],
    environment: Mapping[str, str],
) -> VariantChoice | None:
    """The wheel to install, or ``None`` when no version with variant metadata fits ``specifier``.

    ``metadata`` maps each version to its ``(file name, parsed metadata)``. Newest version
    first; in it, the best-ranked label that runs on every GPU and has a wheel for ``tags``.
    GPUs are served all at once if any label can, else without the least capable ones (a
    warning names them). A GPU machine whose newest version has only the null variant for it
    looks at older versions first; the null variant of the newest version is the last resort.
    """
    spec = _specifier(specifier)
    python = Version(environment.get("python_full_version") or report.platform.python)
    name = canonicalize_name(project)
    wheels = _wheels(links, name, tags, python)
    versions = sorted((v for v in metadata if spec.contains(v, prereleases=True)), reverse=True)
    has_gpu = any(a.vendor in ("nvidia", "amd", "intel") for a in report.accelerators)
    rejected: list[Rejection] = []
    fallback: VariantChoice | None = None
    for version in versions:
        filename, meta = metadata[version]
        ranking = rank_variants(meta, supported, environment=environment)
        available = wheels.get(version, {})
        rejected += [Rejection(e.label, str(version), e.reason) for e in ranking.incompatible]
        gpu_ranked = [r for r in ranking.compatible if not r.is_null]
        for tier_index, devices in enumerate(_tiers(report.accelerators)):
            for ranked in gpu_ranked:
                gap = _kernel_gap(meta.variants[ranked.label], devices)
                if gap is not None:
                    if tier_index == 0:
                        rejected.append(Rejection(ranked.label, str(version), f"{ranked.label}: {gap}"))
                    continue
                link = available.get(ranked.label)
                if link is None:
                    if tier_index == 0:
                        why = f"{ranked.label}: runs here, but the index has no wheel of it for {_tags_hint(tags)}"
                        rejected.append(Rejection(ranked.label, str(version), why))
                    continue
                reasons = [_why(ranked.label, gpu_ranked[0].label, ranking.labels, rejected, str(version))]
                warnings: list[str] = []
                if tier_index > 0:
                    left = [a for a in report.accelerators if a.vendor in ("nvidia", "amd") and a not in devices]
                    warnings.append(
                        "no variant has kernels for every GPU; not used by this build: "
                        + "; ".join(_describe(a) for a in left)
                    )
                if fallback is not None:  # an older version: the newest had no GPU variant for this machine
                    reasons.append(
                        f"torch {fallback.version} has no variant with kernels for this machine's GPUs: "
                        f"torch {version} is the newest that has one"
                    )
                return VariantChoice(
                    version, ranked.label, link, ranked.variant, filename, tuple(reasons),
                    tuple(r for r in rejected if not (r.variant == ranked.label and r.version == str(version))),
                    tuple(warnings),
                )  # fmt: skip
        null = next((r for r in ranking.compatible if r.is_null), None)
        if fallback is None and null is not None and null.label in available:
            why = (
                f"{null.label} (the null variant, CPU only) is the only variant of torch {version} that runs here"
                if not gpu_ranked
                else f"{null.label} (the null variant, CPU only): no GPU variant of torch {version} fits"
            )
            fallback = VariantChoice(version, null.label, available[null.label], null.variant, filename, (why,))
        if not has_gpu and fallback is not None:
            break
    if fallback is None:
        if not versions:
            return None
        raise VariantError(
            f"no variant wheel of {name} {'/'.join(str(v) for v in versions)} fits this machine and "
            f"{_tags_hint(tags)}, not even the null variant; plan without --variant-index"
        )
    late: tuple[str, ...] = ()
    if has_gpu:
        late = (f"no GPU variant of {name} fits this machine: installing the CPU-only null variant",)
    return VariantChoice(
        fallback.version, fallback.label, fallback.link, fallback.variant, fallback.metadata_file,
        fallback.reasons, tuple(rejected), late,
    )  # fmt: skip


def dependencies(
    core_metadata: bytes, environment: Mapping[str, str], variant: Variant | None, source: str = "METADATA"
) -> tuple[str, ...]:
    """The wheel's ``Requires-Dist`` entries whose markers hold, variant markers included, markers dropped."""
    msg = BytesParser().parsebytes(core_metadata, headersonly=True)
    env = VariantEnvironment.of(variant)
    out: list[str] = []
    for text in msg.get_all("Requires-Dist") or []:
        try:
            req, applies = requirement_applies(str(text), environment, env)
        except VariantError as exc:
            raise VariantError(f"{source}: {exc}") from None
        if applies:
            req.marker = None
            out.append(str(req))
    return tuple(out)


def variant_plan(
    choice: VariantChoice,
    report: HardwareReport,
    *,
    project: str,
    index_url: str,
    page_url: str,
    deps: Sequence[str],
    warnings: Sequence[str] = (),
) -> Plan:
    """The plan of a variant-mode choice: one pinned wheel by file name, and its dependencies."""
    try:
        platform = Machine.from_report(report).platform_key
    except ResolveError:
        platform = ""
    version = str(choice.version)
    name = canonicalize_name(project)
    pin = PackagePin(name, version, f"{name}=={version}", filename=choice.link.filename, url=choice.link.url)
    parts = report.platform.python.split(".")
    return Plan(
        torch_version=version,
        variant=choice.label,
        index_url=index_url,
        packages=(pin,),
        reasons=(f"variant mode: {page_url} serves {choice.metadata_file}", *choice.reasons),
        rejected=choice.rejected,
        warnings=(*warnings, *choice.warnings),
        mode="variant",
        platform=platform,
        python=".".join(parts[:2]),
        dependencies=tuple(deps),
        variant_properties=tuple(str(p) for p in choice.variant.properties()),
    )


# -- helpers -----------------------------------------------------------------------------------


def _specifier(specifier: SpecifierSet | str) -> SpecifierSet:
    if isinstance(specifier, SpecifierSet):
        return specifier
    try:
        return SpecifierSet(specifier)
    except InvalidSpecifier as exc:
        raise VariantError(f"cannot read the version specifier {specifier!r} ({exc})") from None


def _wheels(
    links: Iterable[FileLink], name: str, tags: Sequence[Tag], python: Version
) -> dict[Version, dict[str, FileLink]]:
    """version -> label -> the best wheel for ``tags`` (tag preference, then build tag); yanked ones left out."""
    priority = {tag: i for i, tag in reversed(list(enumerate(tags)))}
    best: dict[Version, dict[str, tuple[tuple[int, tuple[int, str] | tuple[()]], FileLink]]] = {}
    for link in links:
        if not link.filename.endswith(".whl") or link.yanked is not None:
            continue
        try:
            wheel: VariantWheelName = parse_wheel_name(link.filename)
        except VariantError:
            continue
        if wheel.name != name or wheel.label is None or requires_python_problem(link.requires_python, python):
            continue
        ranks = [priority[t] for t in wheel.tags if t in priority]
        if not ranks:
            continue
        key = (-min(ranks), wheel.build or ())
        slot = best.setdefault(Version(wheel.version.public), {})
        if wheel.label not in slot or key > slot[wheel.label][0]:
            slot[wheel.label] = (key, link)
    return {v: {label: item[1] for label, item in labels.items()} for v, labels in best.items()}


def _usable(a: Accelerator) -> bool:
    if a.vendor == "nvidia":
        return bool(a.compute_capability) and a.extra.get("visible", True) is not False
    return a.vendor == "amd" and bool(a.effective_gfx or a.gfx)


def _tiers(accelerators: Sequence[Accelerator]) -> list[tuple[Accelerator, ...]]:
    """Every GPU; then, for NVIDIA, without the least capable compute capability, and so on."""
    gpus = [a for a in accelerators if _usable(a)]
    tiers = [tuple(gpus)]
    ccs = sorted({sm_tuple(a.compute_capability or "0.0") for a in gpus if a.vendor == "nvidia"})
    for floor in ccs[1:]:
        tiers.append(tuple(a for a in gpus if a.vendor != "nvidia" or sm_tuple(a.compute_capability or "0.0") >= floor))
    return tiers


def _kernel_gap(variant: Variant, devices: Sequence[Accelerator]) -> str | None:
    """Why ``variant`` (as published, not narrowed) lacks kernels for one of ``devices``, or ``None``."""
    sm = variant.features.get("nvidia", {}).get("sm_arch")
    if sm is not None:
        sass = [v.removesuffix("_real") for v in sm if v.endswith("_real")]
        ptx = [v.removesuffix("_virtual") for v in sm if v.endswith("_virtual")]
        for a in devices:
            if a.vendor == "nvidia" and a.compute_capability and not cuda_runs(a.compute_capability, sass, ptx):
                return (
                    f"no kernels for {_describe(a)}: nvidia :: sm_arch covers {describe_archs(sass, ptx)} "
                    "(the reference providers judge by the highest compute capability only)"
                )
    gfx = variant.features.get("amd", {}).get("gfx_arch")
    if gfx is not None:
        for a in devices:
            target = a.effective_gfx or a.gfx
            if a.vendor == "amd" and target and target not in gfx:
                return f"no kernels for {_describe(a)}: amd :: gfx_arch does not list {target}"
    return None


def _describe(a: Accelerator) -> str:
    if a.vendor == "nvidia":
        return f"{a.name} (compute capability {a.compute_capability})"
    return f"{a.name} ({a.effective_gfx or a.gfx or a.vendor})"


def _why(label: str, top: str, order: Sequence[str], rejected: Sequence[Rejection], version: str) -> str:
    ranked = ", ".join(order)
    if label == top:
        return f"{label} ranks first of the variants of torch {version} that run here ({ranked})"
    skipped = [r for r in rejected if r.version == version and r.variant == top]
    because = f", which has {skipped[0].reason.removeprefix(f'{top}: ')}" if skipped else ""
    return (
        f"{label} is the best-ranked variant with kernels for every GPU and a wheel here; "
        f"the reference ranking ({ranked}) would take {top}{because}"
    )


def _tags_hint(tags: Sequence[Tag]) -> str:
    if not tags:
        return "this platform"
    first = tags[0]
    return f"{first.interpreter} on {first.platform}"
