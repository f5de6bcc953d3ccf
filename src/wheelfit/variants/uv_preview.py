"""uv's wheel-variant preview (``uv pip install --preview-features wheel-variants``): the variables that make it
choose for another machine (a GPU-less builder installing for a GPU box), and whether it can read an index's
variants metadata, in uv's words.

The facts are measured, with the uv version and date, in ``kb/data/uv_preview.json``; everything here but
:func:`load_uv_preview` is pure. ``wheelfit env --format uv-variants`` renders :func:`uv_variant_env` in
:mod:`wheelfit.integrations.uv_variants`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from email.parser import BytesHeaderParser
from functools import cache
from importlib.resources import files
from typing import TYPE_CHECKING, Any, cast

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name

from ..kb.jsonfile import DataFileError, conform, load_json

if TYPE_CHECKING:
    from ..report import HardwareReport
    from .metadata import VariantsMetadata

__all__ = [
    "UvPreview",
    "UvVariantsEnv",
    "load_uv_preview",
    "plan_notes",
    "uv_cannot_read",
    "uv_skips",
    "uv_variant_env",
    "variant_marker",
]

_PACKAGED = "wheelfit/kb/data/uv_preview.json"
_VARIANT_MARKER = re.compile(r"\b(variant_label|variant_namespaces|variant_features|variant_properties)\b")


@dataclass(frozen=True)
class UvPreview:
    """``uv_preview.json``, read."""

    uv: str
    measured: str
    preview_flag: str
    preview_variable: str
    preview_value: str
    nvidia_provider: str
    nvidia_plugin_api: str
    nvidia_version: str
    sm_arch_variable: str
    cuda_driver_variable: str
    #: namespace -> the provider package its built-in provider stands for.
    builtin: Mapping[str, str]
    skipped: tuple[str, ...]
    not_read: tuple[str, ...]
    schemas: tuple[str, ...]
    provider_keys: tuple[str, ...]
    priority_keys: tuple[str, ...]
    messages: Mapping[str, str]

    @property
    def who(self) -> str:
        return f"uv {self.uv}'s wheel-variant preview"


@cache
def _packaged() -> UvPreview:
    doc = load_json(files("wheelfit.kb").joinpath("data/uv_preview.json").read_bytes(), _PACKAGED)
    return _build(cast("dict[str, Any]", doc), _PACKAGED)  # parsed only: the tests hold it to the schema


def load_uv_preview(text: str | bytes | None = None, name: str = _PACKAGED) -> UvPreview:
    """The packaged facts, or ``text`` (a test's copy, held to ``uv_preview.schema.json``); ``DataFileError`` naming
    file and key if malformed. The packaged file is only parsed: the tests hold it to the schema."""
    if text is None:
        return _packaged()
    return _build(conform(load_json(text, name), "kb/data/uv_preview.schema.json", name, reads="1"), name)


def _build(doc: dict[str, Any], name: str) -> UvPreview:
    """The facts from a document that follows the schema; what it cannot say is that each source is cited."""
    cited = [(key, doc[key]) for key in ("measured", "preview", "nvidia")]
    for where, item in [*cited, *((f"builtin[{i}]", row) for i, row in enumerate(doc["builtin"]))]:
        if item["source"] not in doc["sources"]:
            raise DataFileError(f"{name}: {where}.source: source {item['source']!r} is not a key of 'sources'")
    measured, preview, nvidia = doc["measured"], doc["preview"], doc["nvidia"]
    return UvPreview(
        uv=measured["uv"],
        measured=measured["date"],
        preview_flag=preview["flag"],
        preview_variable=preview["variable"],
        preview_value=preview["value"],
        nvidia_provider=nvidia["provider"],
        nvidia_plugin_api=nvidia["plugin_api"],
        nvidia_version=nvidia["version"],
        sm_arch_variable=nvidia["sm_arch_variable"],
        cuda_driver_variable=nvidia["cuda_driver_variable"],
        builtin={row["namespace"]: row["provider"] for row in doc["builtin"]},
        skipped=tuple(doc["skipped"]),
        not_read=tuple(doc["not_read"]),
        schemas=tuple(doc["schemas"]),
        provider_keys=tuple(doc["provider_keys"]),
        priority_keys=tuple(doc["priority_keys"]),
        messages=dict(doc["messages"]),
    )


# -- the variables for a target -----------------------------------------------------------------------------


@dataclass(frozen=True)
class UvVariantsEnv:
    """What to set for uv's preview to choose for a machine, and what it still cannot do for it."""

    variables: tuple[tuple[str, str], ...]
    notes: tuple[str, ...]


def uv_variant_env(report: HardwareReport, variant: str | None = None, facts: UvPreview | None = None) -> UvVariantsEnv:
    """The variables for ``report``'s machine (``variant``: the build wheelfit plans for it, for the notes).

    uv's NVIDIA provider needs both of its variables (one alone is ignored, measured), the compute capability as
    ``X.Y`` and the CUDA version the driver runs as ``M.m`` (``89`` or a driver version such as ``580.95.05`` make
    it skip the provider and install the null variant). It reads one compute capability; with several GPUs the
    lowest is given, so that the label it takes has kernels for every GPU, as wheelfit's own choice does."""
    uv = facts or _packaged()
    variables: list[tuple[str, str]] = [(uv.preview_variable, uv.preview_value)]
    notes: list[str] = []
    gpus = [a for a in report.accelerators if a.vendor == "nvidia" and a.compute_capability]
    ccs = sorted({a.compute_capability for a in gpus if a.compute_capability}, key=_cc_key)
    cuda = max((a.cuda_driver_version for a in gpus if a.cuda_driver_version), key=_cc_key, default=None)
    if ccs and cuda:
        variables += [(uv.sm_arch_variable, ccs[0]), (uv.cuda_driver_variable, _major_minor(cuda))]
        if len(ccs) > 1:
            notes.append(
                f"{uv.who} reads one compute capability: {uv.sm_arch_variable}={ccs[0]} is the lowest of "
                f"{', '.join(ccs)}, so the label it takes has kernels for every GPU"
            )
    elif ccs:
        notes.append(
            f"the target's CUDA driver version is unknown: {uv.who} needs {uv.cuda_driver_variable} as well as "
            f"{uv.sm_arch_variable} (one alone is ignored); give --target cuda={ccs[0]},driver=VERSION"
        )
    else:
        notes.append(
            f"no NVIDIA GPU in the target: nothing forces {uv.who}'s NVIDIA provider, which detects a GPU of the "
            "builder itself through nvidia-smi; build where there is none"
        )
    for vendor in sorted({a.vendor for a in report.accelerators if a.vendor in uv.skipped}):
        build = f" ({variant})" if variant else ""
        notes.append(
            f"{uv.who} has no provider for {vendor} GPUs: it skips the {vendor} namespace and installs no "
            f"{vendor} variant{build}; wheelfit install --variant-index URL installs it"
        )
    cpus = sorted(ns for ns in uv.builtin if ns != "nvidia")
    if report.platform.machine in cpus:
        notes.append(
            f"{uv.who} reads the {report.platform.machine} CPU of the machine it runs on; no variable sets it "
            "for another machine"
        )
    return UvVariantsEnv(tuple(variables), tuple(notes))


def _cc_key(text: str) -> tuple[int, ...]:
    return tuple(int(p) for p in re.findall(r"\d+", text)) or (0,)


def _major_minor(version: str) -> str:
    parts = re.findall(r"\d+", version)
    return ".".join([*parts, "0"][:2])


# -- can uv's preview read this index? ----------------------------------------------------------------------


def uv_cannot_read(metadata: VariantsMetadata, facts: UvPreview | None = None) -> str | None:
    """``None`` when uv's preview reads ``metadata``, else why not in uv's words.

    uv reads by content, not by the ``$schema`` URL (measured): a 0.0.x provider's ``enable-if``,
    ``install-time`` or ``plugin-use`` fail its provider type, ``default-priorities.feature``/``.property``
    are unknown fields; a URL it does not know only adds "Unknown variant metadata schema" to the message."""
    uv = facts or _packaged()
    error: str | None = None
    if metadata.generation == "0.0":
        if any(p.enable_if is not None or p.is_static or p.plugin_api is None for p in metadata.providers.values()):
            error = uv.messages["provider_kind"]
        elif metadata.feature_order or metadata.value_order:
            key = "feature" if metadata.feature_order else "property"
            error = uv.messages["unknown_priority"].format(key=key)
    if error is None:
        return None
    if metadata.schema_url in uv.schemas:
        return error
    return uv.messages["unknown_schema"].format(schema=metadata.schema_url, error=error)


def uv_skips(metadata: VariantsMetadata, namespaces: Sequence[str], facts: UvPreview | None = None) -> dict[str, str]:
    """Of ``namespaces``, those uv's preview has no provider for here: namespace -> why, in uv's words where it
    says one. Its NVIDIA provider counts as ``nvidia-variant-provider`` 0.0.1 with its own plugin-api, so a
    ``requires`` that does not admit 0.0.1 (PyTorch's ``>=0.0.2,<1.0.0``) skips it (measured)."""
    uv = facts or _packaged()
    out: dict[str, str] = {}
    for ns in namespaces:
        provider = metadata.providers.get(ns)
        if provider is not None and provider.is_static:
            continue
        if provider is None:
            out[ns] = f"the metadata names no provider for the {ns} namespace"
            continue
        wanted = {canonicalize_name(r.name): r for r in _requirements(provider.requires)}
        api = provider.plugin_api or (next(iter(wanted), "").replace("-", "_"))
        skip = uv.messages["skipped_provider"].format(plugin_api=api, namespace=ns)
        package = uv.builtin.get(ns)
        if ns in uv.skipped or package is None or canonicalize_name(package) not in wanted:
            out[ns] = skip
        elif ns == "nvidia":
            spec = wanted[canonicalize_name(package)].specifier
            if api != uv.nvidia_plugin_api:
                out[ns] = skip
            elif not spec.contains(uv.nvidia_version, prereleases=True):
                out[ns] = (
                    f"{skip}: requires {package}{spec} does not admit its built-in provider's version "
                    f"{uv.nvidia_version}"
                )
        elif api != package.replace("-", "_"):
            out[ns] = skip
    return out


def _requirements(texts: Sequence[str]) -> list[Requirement]:
    found: list[Requirement] = []
    for text in texts:
        try:
            found.append(Requirement(text))
        except InvalidRequirement:
            continue
    return found


def variant_marker(core_metadata: bytes, facts: UvPreview | None = None) -> str | None:
    """uv's refusal of a wheel whose Requires-Dist uses variant markers (``variant_label == 'cuda13.0'``),
    which 0.13.9 gives even with its preview, or ``None``."""
    uv = facts or _packaged()
    for line in BytesHeaderParser().parsebytes(core_metadata).get_all("Requires-Dist") or []:
        found = _VARIANT_MARKER.search(str(line).partition(";")[2])
        if found:
            return uv.messages["variant_marker"].format(name=found.group(1))
    return None


def plan_notes(
    url: str,
    filename: str,
    metadata: VariantsMetadata,
    label: str,
    wheel: str,
    core_metadata: bytes,
    facts: UvPreview | None = None,
) -> list[str]:
    """What a variant-mode plan says about uv's preview installing the same: nothing when it would install
    ``label``'s wheel, else why not (uv's words) and that ``wheelfit install --variant-index`` does."""
    uv = facts or _packaged()
    ours = f"wheelfit install --variant-index {url} installs it"
    refused = uv_cannot_read(metadata, uv)
    if refused is not None:
        return [f"{uv.who} cannot install from {url}: it refuses {filename}: {refused}; {ours}"]
    variant = metadata.variants.get(label)
    skipped = uv_skips(metadata, variant.namespaces if variant is not None else (), uv)
    notes = [
        f"{uv.who} would not install {label} from {url} ({ns}: {why}): it takes another variant; {ours}"
        for ns, why in skipped.items()
    ]
    marker = variant_marker(core_metadata, uv)
    if marker is not None:
        notes.append(f"{uv.who} cannot install {wheel}: {marker}; {ours} (a plain copy, variant markers evaluated)")
    return notes
