"""A variant index's builds as candidates: one per (version, label) of each ``*-variants.json``. Pure.

The kernels come from the variant's own properties (``nvidia :: sm_arch`` ``86_real`` is SASS, ``_virtual`` PTX;
``amd :: gfx_arch``): PyTorch's published metadata, a primary source. A variant without them leaves the
kernels to the ranking, as the reference providers do. And :func:`dependencies`: a chosen wheel's
``Requires-Dist`` whose markers, variant markers included, hold for the machine.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from email.parser import BytesParser

from packaging.utils import canonicalize_name
from packaging.version import Version

from ..kinds import BuildKind, Confidence, Mode
from ..simple.links import FileLink
from ..variants.errors import VariantError
from ..variants.filename import parse_wheel_name
from ..variants.markers import VariantEnvironment, requirement_applies
from ..variants.metadata import Variant
from .model import Candidate, Fact, Kernels, VariantsFile

__all__ = ["dependencies", "metadata_file_version", "variant_candidates", "variant_kind"]

_KIND_OF_NAMESPACE = (("nvidia", BuildKind.CUDA), ("amd", BuildKind.ROCM), ("intel", BuildKind.XPU))


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
    except ValueError:  # InvalidVersion, or a release number past int()'s 4300-digit limit
        return None


def variant_kind(variant: Variant) -> BuildKind:
    """CUDA, ROCm, XPU by the accelerator namespace a variant uses; CPU for the rest (null)."""
    return next((kind for ns, kind in _KIND_OF_NAMESPACE if ns in variant.features), BuildKind.CPU)


def _kernels(variant: Variant) -> Kernels | None:
    sm = variant.features.get("nvidia", {}).get("sm_arch")
    gfx = variant.features.get("amd", {}).get("gfx_arch")
    if sm is None and gfx is None:
        return None
    sass = tuple(v.removesuffix("_real") for v in sm or () if v.endswith("_real"))
    ptx = tuple(v.removesuffix("_virtual") for v in sm or () if v.endswith("_virtual"))
    return Kernels(sass=sass, ptx=ptx, gfx=tuple(gfx or ()))


def variant_candidates(
    metadata: Mapping[Version, VariantsFile],
    links: Iterable[FileLink],
    *,
    platform: str,
    index_url: str,
    page_url: str,
    project: str = "torch",
) -> tuple[Candidate, ...]:
    """The candidates of every version with variant metadata, for ``platform`` (files of every platform attached:
    the judges keep the ones whose tags fit)."""
    name = canonicalize_name(project)
    files: dict[tuple[Version, str], list[FileLink]] = {}
    for link in links:
        try:
            wheel = parse_wheel_name(link.filename)
        except VariantError:
            continue
        if wheel.name == name and wheel.label is not None:
            files.setdefault((Version(wheel.version.public), wheel.label), []).append(link)
    out: list[Candidate] = []
    for version in sorted(metadata, reverse=True):
        vf = metadata[version]
        for label, variant in vf.metadata.variants.items():
            kernels = _kernels(variant)
            facts = {
                "exists": Fact(f"torch {version} variant {label} is on the index", Confidence.PRIMARY, page_url),
                "kernels": Fact(
                    f"the properties of torch {version} variant {label}",
                    Confidence.PRIMARY,
                    f"{index_url}/{vf.filename}",
                ),
            }
            out.append(
                Candidate(
                    version=version,
                    label=label,
                    kind=variant_kind(variant),
                    platform=platform,
                    mode=Mode.VARIANT,
                    kernels=kernels,
                    files=tuple(files.get((version, label), ())),
                    index_url=index_url,
                    facts=facts,
                    variant=variant,
                    variants_file=vf,
                )
            )
    return tuple(out)


def dependencies(
    core_metadata: bytes, environment: Mapping[str, str], variant: VariantEnvironment, source: str = "METADATA"
) -> tuple[str, ...]:
    """The wheel's ``Requires-Dist`` entries whose markers hold, variant markers (of the chosen variant, narrowed
    to what the machine supports: PEP 825) included; markers dropped."""
    msg = BytesParser().parsebytes(core_metadata, headersonly=True)
    env = variant
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
