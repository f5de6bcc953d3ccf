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
major); unknown keys are ignored (PEP 817). Every defect is a :class:`VariantError`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..kb.jsonfile import load_json
from .errors import VariantError
from .properties import FEATURE_RE, LABEL_RE, NAMESPACE_RE, NULL_LABEL, VALUE_RE, VariantProperty, is_null_label

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
    def __init__(self, source: str) -> None:
        self.source = source

    def fail(self, where: str, problem: str) -> VariantError:
        return VariantError(f"{self.source}: {where}: {problem}")

    def obj(self, value: object, where: str) -> Mapping[str, Any]:
        if not isinstance(value, Mapping):
            raise self.fail(where, f"expected an object, found {_kind(value)}")
        return value

    def strings(self, value: object, where: str, pattern: re.Pattern[str] | None = None) -> tuple[str, ...]:
        if not isinstance(value, list):
            raise self.fail(where, f"expected a list of strings, found {_kind(value)}")
        out: list[str] = []
        for item in value:
            if not isinstance(item, str):
                raise self.fail(where, f"expected a list of strings, found an item that is {_kind(item)}")
            if pattern is not None and not pattern.fullmatch(item):
                raise self.fail(where, f"{item!r} is not allowed here (must match {pattern.pattern})")
            if item not in out:
                out.append(item)
        return tuple(out)

    def name(self, value: str, where: str, pattern: re.Pattern[str], what: str) -> str:
        if not pattern.fullmatch(value):
            raise self.fail(where, f"{value!r} is not a valid {what} (must match {pattern.pattern})")
        return value

    def boolean(self, value: object, where: str) -> bool:
        if not isinstance(value, bool):
            raise self.fail(where, f"expected true or false, found {_kind(value)}")
        return value

    def string(self, value: object, where: str) -> str:
        if not isinstance(value, str) or not value.strip():
            raise self.fail(where, f"expected a non-empty string, found {_kind(value)}")
        return value

    def features(self, value: object, where: str) -> dict[str, tuple[str, ...]]:
        out: dict[str, tuple[str, ...]] = {}
        for feat, values in self.obj(value, where).items():
            self.name(feat, where, FEATURE_RE, "feature name")
            out[feat] = self.strings(values, f"{where}.{feat}", VALUE_RE)
        return out

    def version(self, root: Mapping[str, Any]) -> tuple[str, tuple[int, int, int]]:
        url = root.get("$schema")
        if url is None:
            raise self.fail("$schema", "missing; variant metadata must say which schema it follows")
        if not isinstance(url, str):
            raise self.fail("$schema", f"expected a URL string, found {_kind(url)}")
        m = _VERSION_RE.search(url)
        if m is None:
            raise self.fail("$schema", f"{url!r} names no schema version (expected .../vX.Y.Z.json)")
        version = (int(m[1]), int(m[2]), int(m[3]))
        if version[0] != SUPPORTED_MAJOR:
            raise self.fail(
                "$schema",
                f"schema version {'.'.join(map(str, version))} is not supported "
                f"(this wheelfit reads {SUPPORTED_MAJOR}.x); upgrade wheelfit",
            )
        return url, version

    def read(self, data: object) -> VariantsMetadata:
        root = self.obj(data, "top level")
        url, version = self.version(root)
        legacy = version[1] == 0
        prio = self.obj(root.get("default-priorities"), "default-priorities")
        if "namespace" not in prio:
            raise self.fail("default-priorities.namespace", "missing; it must list the namespaces by priority")
        namespaces = self.strings(prio["namespace"], "default-priorities.namespace", NAMESPACE_RE)
        feature_order: dict[str, tuple[str, ...]] = {}
        value_order: dict[str, dict[str, tuple[str, ...]]] = {}
        if legacy:
            for ns, feats in self.obj(prio.get("feature", {}), "default-priorities.feature").items():
                where = f"default-priorities.feature.{ns}"
                feature_order[self.name(ns, where, NAMESPACE_RE, "namespace")] = self.strings(feats, where, FEATURE_RE)
            for ns, feats in self.obj(prio.get("property", {}), "default-priorities.property").items():
                where = f"default-priorities.property.{ns}"
                value_order[self.name(ns, where, NAMESPACE_RE, "namespace")] = self.features(feats, where)
        providers = self.providers(root, legacy, feature_order, value_order)
        variants = self.variants(root.get("variants"), namespaces)
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
        raw = root.get("providers")
        if raw is None:
            if legacy:
                raise self.fail("providers", "missing; schema 0.0.x requires a providers table")
            return {}
        top_static = self.obj(root.get("static-properties", {}), "static-properties") if legacy else {}
        out: dict[str, Provider] = {}
        for ns, info in self.obj(raw, "providers").items():
            where = f"providers.{ns}"
            self.name(ns, where, NAMESPACE_RE, "namespace")
            info = self.obj(info, where)
            requires = self.strings(info.get("requires", []), f"{where}.requires")
            plugin_api = info.get("plugin-api")
            if plugin_api is not None:
                plugin_api = self.string(plugin_api, f"{where}.plugin-api")
            optional = self.boolean(info.get("optional", False), f"{where}.optional")
            enable_if: str | None = None
            static: dict[str, tuple[str, ...]] | None = None
            if legacy:
                if "enable-if" in info:
                    enable_if = self.string(info["enable-if"], f"{where}.enable-if")
                install_time = self.boolean(info.get("install-time", True), f"{where}.install-time")
                plugin_use = info.get("plugin-use", "all")
                if plugin_use not in ("none", "build", "all"):
                    raise self.fail(f"{where}.plugin-use", f"expected none, build or all, found {plugin_use!r}")
                if not install_time or plugin_use in _PLUGIN_USE_STATIC:
                    if ns in top_static:
                        static = self.features(top_static[ns], f"static-properties.{ns}")
                    else:  # v0.0.2 kept the values of plugin-less namespaces in default-priorities.property
                        static = dict(value_order.get(ns, {}))
            elif "static-properties" in info:
                static = self.features(info["static-properties"], f"{where}.static-properties")
                if "feature-order" in info:
                    feature_order[ns] = self.strings(info["feature-order"], f"{where}.feature-order", FEATURE_RE)
            if static is not None:
                static = _ordered(static, feature_order.get(ns, ()))
            out[ns] = Provider(ns, requires, plugin_api, optional, enable_if, static)
        return out

    def variants(self, raw: object, namespaces: tuple[str, ...]) -> dict[str, Variant]:
        out: dict[str, Variant] = {}
        for label, body in self.obj(raw, "variants").items():
            where = f"variants.{label}"
            if not LABEL_RE.fullmatch(label):
                raise self.fail(where, f"label {label!r} may hold only lowercase letters, digits, '_' and '.'")
            feats: dict[str, dict[str, tuple[str, ...]]] = {}
            for ns, fv in self.obj(body, where).items():
                self.name(ns, where, NAMESPACE_RE, "namespace")
                if ns not in namespaces and ns != ABI_DEPENDENCY:
                    raise self.fail(where, f"namespace {ns!r} is missing from default-priorities.namespace")
                values = self.features(fv, f"{where}.{ns}")
                for feat, vals in values.items():
                    if not vals:
                        raise self.fail(f"{where}.{ns}.{feat}", "lists no values")
                if values:
                    feats[ns] = values
            if not feats and not is_null_label(label):
                raise self.fail(where, f"has no properties; only the null variant ({NULL_LABEL!r}) may be empty")
            if feats and label == NULL_LABEL:
                raise self.fail(where, f"{NULL_LABEL!r} is reserved for the null variant, which has no properties")
            out[label] = Variant(label, feats)
        return out


def _ordered(features: dict[str, tuple[str, ...]], first: tuple[str, ...]) -> dict[str, tuple[str, ...]]:
    """``features`` with the explicitly prioritised ones first, the rest in their given order."""
    keys = [f for f in first if f in features] + [f for f in features if f not in first]
    return {k: features[k] for k in keys}


def _kind(value: object) -> str:
    if value is None:
        return "null"
    return {bool: "a boolean", int: "a number", float: "a number", str: "a string", list: "a list"}.get(
        type(value), "an object" if isinstance(value, Mapping) else type(value).__name__
    )
