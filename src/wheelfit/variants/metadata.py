"""Variant metadata in every schema generation in use, read into one model.

Sources: ``*.dist-info/variant.json`` (one variant) and the index-level
``{name}-{version}-variants.json`` (all of a release's variants). Generations
(the ``$schema`` URL carries the version; wheelnext/variants-schema ``v0.0.2.json``, ``v0.0.3.json``,
``peps/825/v0.1.0.json``; PEP 825; the providers draft ``wheelnext/peps`` branch ``pep-providers``):

* 0.0.x (v0.0.2, v0.0.3; every PyTorch release so far): ``providers.{ns}`` with
  ``enable-if``, ``install-time`` (v0.0.3) or ``plugin-use`` (v0.0.2); top-level
  ``static-properties``; ``default-priorities.feature`` / ``.property``.
* 0.1.x (PEP 825): only ``default-priorities.namespace`` and ``variants``.
* 0.2.x (providers draft, variantlib 0.2): ``providers.{ns}.static-properties`` and
  ``feature-order``; ``enable-if``, ``install-time`` and the top-level table are gone.

Major versions other than 0 are refused (PEP 825: tools MUST reject an unsupported
major); unknown keys are ignored (PEP 817). The shape of every generation is ``schemas/variants.schema.json``, to
which each document is held (``jsonschema``, imported only when a variants document is read); every defect is a
:class:`VariantError`, one line naming the file and the key.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..kb.jsonfile import conform, load_json
from .errors import VariantError
from .properties import NULL_LABEL, VariantProperty, is_null_label

__all__ = [
    "SUPPORTED_MAJOR",
    "Provider",
    "Variant",
    "VariantsMetadata",
    "loads",
    "parse_dist_info",
    "parse_variants_json",
]

SUPPORTED_MAJOR = 0
#: Reserved namespace implemented by installers, not providers; ranked after the listed ones.
ABI_DEPENDENCY = "abi_dependency"
_VERSION_RE = re.compile(r"/v(\d+)\.(\d+)\.(\d+)\.json$")
_SCHEMA = "schemas/variants.schema.json"
_PLUGIN_USE_STATIC = frozenset({"none", "build"})


@dataclass(frozen=True)
class Provider:
    """How the supported values of one namespace are found."""

    namespace: str
    requires: tuple[str, ...] = ()
    plugin_api: str | None = None
    #: Optional providers are not queried unless the user opts in (PEP 817).
    optional: bool = False
    #: PEP 508 marker (0.0.x only): false means the namespace is unsupported.
    enable_if: str | None = None
    #: Ahead-of-time providers: feature -> values, most preferred first, in feature order.
    #: ``None`` means the values come from the machine (a provider queried at install time).
    static_properties: Mapping[str, tuple[str, ...]] | None = None

    @property
    def is_static(self) -> bool:
        return self.static_properties is not None


@dataclass(frozen=True)
class Variant:
    label: str
    #: namespace -> feature -> values (any one of them must be supported).
    features: Mapping[str, Mapping[str, tuple[str, ...]]] = field(default_factory=dict)

    @property
    def is_null(self) -> bool:
        return not self.features

    @property
    def namespaces(self) -> tuple[str, ...]:
        return tuple(self.features)

    def properties(self) -> list[VariantProperty]:
        return [
            VariantProperty(ns, feat, value)
            for ns, feats in self.features.items()
            for feat, values in feats.items()
            for value in values
        ]


@dataclass(frozen=True)
class VariantsMetadata:
    schema_url: str
    schema_version: tuple[int, int, int]
    namespace_order: tuple[str, ...]
    #: Explicit feature priorities by namespace, highest first (0.0.x ``default-priorities.feature``,
    #: 0.2.x ``providers.{ns}.feature-order``); the provider's own order follows.
    feature_order: Mapping[str, tuple[str, ...]]
    #: Explicit value priorities (0.0.x ``default-priorities.property``); the provider's order follows.
    value_order: Mapping[str, Mapping[str, tuple[str, ...]]]
    providers: Mapping[str, Provider]
    variants: Mapping[str, Variant]

    @property
    def generation(self) -> str:
        """``0.0``, ``0.1`` or ``0.2`` (newer 0.x minors are read as 0.2)."""
        minor = min(self.schema_version[1], 2)
        return f"0.{minor}"


def loads(text: str | bytes, source: str = "variants.json") -> VariantsMetadata:
    """Parse an index-level ``*-variants.json`` document."""
    return parse_variants_json(_decode(text, source), source)


def _decode(text: str | bytes, source: str) -> object:
    """The shared reader's checks (non-UTF-8, NaN, huge numbers, duplicate keys, deep nesting), as VariantError."""
    return load_json(text, source, error=VariantError)


def parse_dist_info(data: object, source: str = "variant.json", label: str | None = None) -> VariantsMetadata:
    """Parse a wheel's ``*.dist-info/variant.json``: exactly one variant, matching ``label`` if given."""
    if isinstance(data, (str, bytes)):
        data = _decode(data, source)
    meta = parse_variants_json(data, source)
    if len(meta.variants) != 1:
        count = len(meta.variants)
        raise VariantError(f"{source}: a wheel's variant.json must describe exactly one variant, not {count}")
    if label is not None and label not in meta.variants:
        found = next(iter(meta.variants))
        raise VariantError(f"{source}: describes variant {found!r}, but the wheel filename says {label!r}")
    return meta


def parse_variants_json(data: object, source: str = "variants.json") -> VariantsMetadata:
    """Read decoded JSON of any supported generation into :class:`VariantsMetadata`."""
    return _Reader(source).read(data)


class _Reader:
    """The model from a document that follows ``schemas/variants.schema.json``, checking what the schema cannot:
    the generation's own rules and the cross-references between tables."""

    def __init__(self, source: str) -> None:
        self.source = source

    def fail(self, where: str, problem: str) -> VariantError:
        return VariantError(f"{self.source}: {where}: {problem}")

    def version(self, data: object) -> tuple[str, tuple[int, int, int]] | None:
        """The ``$schema`` URL and its version; another major is refused before the shape is read (it may be any
        shape). ``None`` when there is no such URL: the schema says what is wrong."""
        url = data.get("$schema") if isinstance(data, Mapping) else None
        m = _VERSION_RE.search(url) if isinstance(url, str) else None
        if m is None or not isinstance(url, str):
            return None
        version = (int(m[1]), int(m[2]), int(m[3]))
        if version[0] != SUPPORTED_MAJOR:
            raise self.fail(
                "$schema",
                f"schema version {'.'.join(map(str, version))} is not supported "
                f"(this wheelfit reads {SUPPORTED_MAJOR}.x); upgrade wheelfit",
            )
        return url, version

    def read(self, data: object) -> VariantsMetadata:
        found = self.version(data)
        root = conform(data, _SCHEMA, self.source, error=VariantError)
        if found is None:  # not reached: the schema's pattern for $schema is _VERSION_RE's
            raise self.fail("$schema", "names no schema version (expected .../vX.Y.Z.json)")
        url, version = found
        legacy = version[1] == 0
        prio = root["default-priorities"]
        namespaces = _unique(prio["namespace"])
        feature_order: dict[str, tuple[str, ...]] = {}
        value_order: dict[str, dict[str, tuple[str, ...]]] = {}
        if legacy:
            feature_order = {ns: _unique(feats) for ns, feats in prio.get("feature", {}).items()}
            value_order = {ns: _features(feats) for ns, feats in prio.get("property", {}).items()}
        providers = self.providers(root, legacy, feature_order, value_order)
        variants = self.variants(root["variants"], namespaces)
        if ABI_DEPENDENCY not in namespaces and any(ABI_DEPENDENCY in v.features for v in variants.values()):
            namespaces = (*namespaces, ABI_DEPENDENCY)  # reserved; installers rank it last (PEP 817)
        return VariantsMetadata(url, version, namespaces, feature_order, value_order, providers, variants)

    def providers(
        self,
        root: Mapping[str, Any],
        legacy: bool,
        feature_order: dict[str, tuple[str, ...]],
        value_order: Mapping[str, Mapping[str, tuple[str, ...]]],
    ) -> dict[str, Provider]:
        top_static = root.get("static-properties", {}) if legacy else {}
        out: dict[str, Provider] = {}
        for ns, info in root.get("providers", {}).items():
            static: dict[str, tuple[str, ...]] | None = None
            if legacy:
                if not info.get("install-time", True) or info.get("plugin-use", "all") in _PLUGIN_USE_STATIC:
                    # v0.0.2 kept the values of plugin-less namespaces in default-priorities.property
                    static = _features(top_static[ns]) if ns in top_static else dict(value_order.get(ns, {}))
            elif "static-properties" in info:
                static = _features(info["static-properties"])
                if "feature-order" in info:
                    feature_order[ns] = _unique(info["feature-order"])
            if static is not None:
                static = _ordered(static, feature_order.get(ns, ()))
            enable_if = info.get("enable-if") if legacy else None
            requires = _unique(info.get("requires", []))
            out[ns] = Provider(ns, requires, info.get("plugin-api"), info.get("optional", False), enable_if, static)
        return out

    def variants(self, raw: Mapping[str, Any], namespaces: tuple[str, ...]) -> dict[str, Variant]:
        out: dict[str, Variant] = {}
        for label, body in raw.items():
            where = f"variants.{label}"
            for ns in body:
                if ns not in namespaces and ns != ABI_DEPENDENCY:
                    raise self.fail(where, f"namespace {ns!r} is missing from default-priorities.namespace")
            feats = {ns: _features(fv) for ns, fv in body.items() if fv}
            if not feats and not is_null_label(label):
                raise self.fail(where, f"has no properties; only the null variant ({NULL_LABEL!r}) may be empty")
            if feats and label == NULL_LABEL:
                raise self.fail(where, f"{NULL_LABEL!r} is reserved for the null variant, which has no properties")
            out[label] = Variant(label, feats)
        return out


def _unique(items: list[str]) -> tuple[str, ...]:
    """A list's items, each once, in their first order (a name listed twice means it once)."""
    return tuple(dict.fromkeys(items))


def _features(raw: Mapping[str, list[str]]) -> dict[str, tuple[str, ...]]:
    return {feat: _unique(values) for feat, values in raw.items()}


def _ordered(features: dict[str, tuple[str, ...]], first: tuple[str, ...]) -> dict[str, tuple[str, ...]]:
    """``features`` with the explicitly prioritised ones first, the rest in their given order."""
    keys = [f for f in first if f in features] + [f for f in features if f not in first]
    return {k: features[k] for k in keys}
