"""Which variants of a release run here, best first, and why each other one does not.

Pure: metadata plus the machine's supported configurations (by namespace, from the
providers) in, an ordered list out. The order is PEP 825's, in the form variantlib
implements it (``resolver/sorting.py``): every supported ``(namespace, feature)`` gets a
slot, ordered by namespace priority (metadata), then feature priority (explicit order,
then the provider's), each slot holding the index of the best value the variant lists
(explicit value order, then the provider's); a missing feature ranks below every value,
which is PEP 825's "more properties wins" on a prefix tie; equal vectors fall back to the
label. The null variant has no slots filled, so it ranks last.
"""

from __future__ import annotations

import sys
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import TypeAlias

from packaging.markers import InvalidMarker, Marker, UndefinedComparison, UndefinedEnvironmentName

from .errors import VariantError
from .metadata import Variant, VariantsMetadata

__all__ = ["Exclusion", "FeatureConfig", "RankedVariant", "Ranking", "SupportedConfigs", "rank_variants"]


@dataclass(frozen=True)
class FeatureConfig:
    """One feature as a provider reports it: supported values, most preferred first."""

    name: str
    values: tuple[str, ...]
    multi_value: bool = False


#: namespace -> features, as :func:`wheelfit.variants.machine.supported_configs` returns them;
#: plain ``(name, values, multi_value)`` tuples are accepted too.
ConfigLike: TypeAlias = FeatureConfig | tuple[str, Sequence[str], bool]
SupportedConfigs: TypeAlias = Mapping[str, Sequence[ConfigLike]]


@dataclass(frozen=True)
class RankedVariant:
    label: str
    #: The variant narrowed to the values this machine supports (PEP 825 markers use these).
    variant: Variant

    @property
    def is_null(self) -> bool:
        return self.variant.is_null


@dataclass(frozen=True)
class Exclusion:
    label: str
    #: One line naming the property (or provider) that excluded the variant.
    reason: str


@dataclass(frozen=True)
class Ranking:
    compatible: tuple[RankedVariant, ...]
    incompatible: tuple[Exclusion, ...]
    #: Namespaces that count as unsupported whatever the hardware, with why.
    unavailable: Mapping[str, str]

    @property
    def labels(self) -> list[str]:
        return [r.label for r in self.compatible]

    def to_dict(self) -> dict[str, object]:
        return {
            "compatible": self.labels,
            "incompatible": [{"label": e.label, "reason": e.reason} for e in self.incompatible],
        }


def rank_variants(
    metadata: VariantsMetadata,
    supported: SupportedConfigs,
    *,
    environment: Mapping[str, str],
    enable_optional: bool | Collection[str] = False,
    untrusted: Collection[str] = (),
) -> Ranking:
    """Rank ``metadata``'s variants for a machine.

    ``supported`` holds what the providers report for this machine (a namespace missing
    means no provider for it is available); ``environment`` is the PEP 508 marker
    environment ``enable-if`` is evaluated in; ``untrusted`` namespaces and optional ones
    not enabled count as unsupported (PEP 817 §Providers).
    """
    support, unavailable = _namespace_support(metadata, supported, environment, enable_optional, untrusted)
    table = _ordered_table(metadata, support)
    slots = list(table)
    compatible: list[tuple[tuple[int, ...], str, RankedVariant]] = []
    incompatible: list[Exclusion] = []
    for label, variant in metadata.variants.items():
        reason = _exclusion(metadata, variant, support, unavailable)
        if reason is not None:
            incompatible.append(Exclusion(label, reason))
            continue
        vector = [sys.maxsize] * len(slots)
        for ns, feats in variant.features.items():
            for feat, values in feats.items():
                order = table[(ns, feat)]
                vector[slots.index((ns, feat))] = min(order.index(v) for v in values if v in order)
        compatible.append((tuple(vector), label, RankedVariant(label, _narrow(variant, support))))
    compatible.sort(key=lambda item: (item[0], item[1]))
    return Ranking(tuple(item[2] for item in compatible), tuple(incompatible), unavailable)


def _configs(raw: Sequence[ConfigLike], ns: str) -> dict[str, tuple[str, ...]]:
    out: dict[str, tuple[str, ...]] = {}
    for item in raw:
        if isinstance(item, FeatureConfig):
            name, values = item.name, item.values
        else:
            name, values = item[0], tuple(item[1])
        untyped: tuple[object, ...] = (name, *values)  # callers outside mypy's reach hand in anything
        if not all(isinstance(v, str) for v in untyped):
            raise VariantError(f"provider output for namespace {ns!r} is malformed: {item!r:.80}")
        out[name] = tuple(dict.fromkeys(values))
    return out


def _namespace_support(
    metadata: VariantsMetadata,
    supported: SupportedConfigs,
    environment: Mapping[str, str],
    enable_optional: bool | Collection[str],
    untrusted: Collection[str],
) -> tuple[dict[str, dict[str, tuple[str, ...]]], dict[str, str]]:
    """Per namespace, its supported feature values, or why it has none (providers draft, 6 steps)."""
    support: dict[str, dict[str, tuple[str, ...]]] = {}
    unavailable: dict[str, str] = {}
    for ns in metadata.namespace_order:
        provider = metadata.providers.get(ns)
        enable_if = provider.enable_if if provider is not None else None
        if enable_if is not None and not _marker_true(enable_if, environment):
            unavailable[ns] = f"provider {ns!r} is disabled here (enable-if: {enable_if})"
        elif provider is not None and provider.optional and not _opted_in(ns, enable_optional):
            unavailable[ns] = f"provider {ns!r} is optional and not enabled"
        elif provider is not None and provider.static_properties is not None:
            support[ns] = dict(provider.static_properties)
        elif ns in untrusted:
            unavailable[ns] = f"provider {ns!r} is not trusted"
        elif ns in supported:
            configs = _configs(supported[ns], ns)
            if configs:
                support[ns] = configs
            else:
                unavailable[ns] = f"the {ns!r} provider reports nothing supported on this machine"
        else:
            unavailable[ns] = f"no {ns!r} provider is available on this machine"
    return support, unavailable


def _opted_in(ns: str, enable_optional: bool | Collection[str]) -> bool:
    return enable_optional if isinstance(enable_optional, bool) else ns in enable_optional


def _marker_true(expr: str, environment: Mapping[str, str]) -> bool:
    try:
        return Marker(expr).evaluate({"extra": "", **environment})
    except InvalidMarker as exc:
        raise VariantError(f"enable-if {expr!r} is not a valid environment marker ({exc})") from None
    except (UndefinedComparison, UndefinedEnvironmentName) as exc:
        raise VariantError(f"enable-if {expr!r} cannot be evaluated ({exc})") from None


def _ordered_table(
    metadata: VariantsMetadata, support: Mapping[str, Mapping[str, tuple[str, ...]]]
) -> dict[tuple[str, str], list[str]]:
    """``(namespace, feature) -> values`` in priority order: explicit metadata order first, then the provider's."""
    table: dict[tuple[str, str], list[str]] = {}
    for ns in metadata.namespace_order:
        feats = support.get(ns)
        if not feats:
            continue
        explicit = metadata.feature_order.get(ns, ())
        names = [f for f in explicit if f in feats] + [f for f in feats if f not in explicit]
        for feat in names:
            values = feats[feat]
            first = metadata.value_order.get(ns, {}).get(feat, ())
            table[(ns, feat)] = [v for v in first if v in values] + [v for v in values if v not in first]
    return table


def _exclusion(
    metadata: VariantsMetadata,
    variant: Variant,
    support: Mapping[str, Mapping[str, tuple[str, ...]]],
    unavailable: Mapping[str, str],
) -> str | None:
    """Why ``variant`` cannot run here (its first unsupported feature by priority), or ``None``."""
    for ns in metadata.namespace_order:
        feats = variant.features.get(ns)
        if not feats:
            continue
        if ns in unavailable:
            return unavailable[ns]
        explicit = metadata.feature_order.get(ns, ())
        for feat in sorted(feats, key=lambda f: (explicit.index(f) if f in explicit else len(explicit), f)):
            values = feats[feat]
            ok = support[ns].get(feat, ())
            if any(v in ok for v in values):
                continue
            wanted = " | ".join(values)
            if not ok:
                return f"{ns} :: {feat} :: {wanted} not supported here (no {ns} :: {feat} support)"
            return f"{ns} :: {feat} :: {wanted} not supported here (supports {_short(ok)})"
    return None


def _short(values: Sequence[str], limit: int = 6) -> str:
    shown = ", ".join(values[:limit])
    return shown + (f", ... ({len(values)} values)" if len(values) > limit else "")


def _narrow(variant: Variant, support: Mapping[str, Mapping[str, tuple[str, ...]]]) -> Variant:
    return Variant(
        variant.label,
        {
            ns: {feat: tuple(v for v in values if v in support[ns].get(feat, ())) for feat, values in feats.items()}
            for ns, feats in variant.features.items()
        },
    )
