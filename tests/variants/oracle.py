"""The reference side of the ranking tests: supported configs as the reference providers
report them, and variantlib 0.2.2 (the reference implementation) ranking the raw JSON.

Nothing here uses wheelfit's parser or ranking; the configs follow the provider plugins themselves
(wheelnext/nvidia-variant-provider @ ffea5d3, amd-variant-provider @ 4d985a9, intel-variant-provider
@ 9516bd2), not the wheelfit providers.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from variantlib.models.variant import VariantDescription, VariantProperty
from variantlib.resolver.lib import sort_and_filter_supported_variants

Config = tuple[str, list[str], bool]
Configs = dict[str, list[Config]]

TORCH_FILES = ("torch-2.8.0-variants.json", "torch-2.9.0-variants.json", "torch-2.10.0-variants.json")


def nvidia(umd: tuple[int, int], cc: tuple[int, int]) -> list[Config]:
    """``NvidiaVariantPlugin.get_supported_configs()`` for a CUDA driver version and highest compute capability."""
    major, minor = umd
    lower = [f"{major}.{m}" for m in range(minor, -1, -1)] + [str(major)]
    for k in range(major - 1, 10, -1):
        lower += [f"{k}.{m}" for m in range(20, -1, -1)] + [str(k)]
    upper: list[str] = []
    for k in range(15, major, -1):
        upper += [f"{k}.{m}" for m in range(20, -1, -1)] + [str(k)]
    upper += [f"{major}.{m}" for m in range(20, minor, -1)]
    configs: list[Config] = [("cuda_version_lower_bound", lower, False), ("cuda_version_upper_bound", upper, False)]
    sm_major, sm_minor = cc
    if cc >= (5, 0):
        configs.append(
            ("sm_arch", [f"{sm_major}{m}_real" for m in range(sm_minor, -1, -1)] + [f"{sm_major}0_virtual"], True)
        )
    return configs


def amd(gfx: list[str], rocm: str) -> list[Config]:
    """``AMDVariantPlugin``: the GPUs' gfx targets (multi-value), then the exact ROCm ``X.Y``."""
    return [("gfx_arch", gfx, True), ("rocm_version", [rocm], False)]


def intel(ips: list[str]) -> list[Config]:
    """``IntelVariantPlugin``: each device's IP and its compat base IP (multi-value)."""
    return [("device_ip", ips, True)]


def raw(realdata: Path, name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((realdata / name).read_text(encoding="utf-8"))
    return data


def variantlib_order(data: dict[str, Any], configs: Configs, disabled: frozenset[str] = frozenset()) -> list[str]:
    """Labels best first as variantlib ranks the raw v0.0.x JSON for these provider outputs.

    Static namespaces take their values from ``static-properties``, as variantlib's loader does;
    ``disabled`` namespaces (false ``enable-if``) report nothing, as variantlib 0.0.3's loader skipped them.
    The hash-era null label ``00000000`` is read as ``null`` (variantlib refuses the old spelling).
    """
    vdescs = []
    for label, body in data["variants"].items():
        props = [VariantProperty(ns, f, v) for ns, feats in body.items() for f, vals in feats.items() for v in vals]
        vdescs.append(VariantDescription(properties=props, label="null" if label == "00000000" else label))
    supported: list[VariantProperty] = []
    for ns, provider in data["providers"].items():
        if ns in disabled:
            continue
        if provider.get("install-time", True) is False:
            feats = data.get("static-properties", {}).get(ns, {})
            supported += [VariantProperty(ns, f, v) for f, vals in feats.items() for v in vals]
        else:
            supported += [VariantProperty(ns, f, v) for f, vals, _ in configs.get(ns, []) for v in vals]
    prio = data["default-priorities"]
    result = sort_and_filter_supported_variants(
        vdescs,
        supported,
        namespace_priorities=list(prio["namespace"]),
        feature_priorities=prio.get("feature") or None,
        property_priorities=prio.get("property") or None,
        filter_values=True,
    )
    return [v.label for v in result]
