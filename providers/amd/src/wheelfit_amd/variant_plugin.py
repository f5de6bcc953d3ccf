"""The ``amd`` wheel-variant provider: the reference plugin's output, computed from wheelfit's detection.

Mirrors ``amd_variant_provider.plugin:AMDVariantPlugin`` (wheelnext/amd-variant-provider):
``gfx_arch`` (multi-value, the runtime's gfx targets sorted and de-duplicated, or the
forced list as given) then ``rocm_version`` (one exact ``MAJOR.MINOR`` value), and its
override variables. :data:`VARIANT_NAMESPACES` is the pure part the wheelfit core
calls; :class:`AMDVariantPlugin` is the ``variant_plugins`` entry point. Stdlib only.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from wheelfit_probekit import System

__all__ = [
    "FORCE_GFX_ARCH",
    "FORCE_ROCM_VERSION",
    "VARIANT_NAMESPACES",
    "AMDVariantPlugin",
    "OverrideError",
    "VariantFeatureConfig",
    "amd_all_configs",
    "amd_supported_configs",
]

Config = tuple[str, list[str], bool]

FORCE_GFX_ARCH = "AMD_VARIANT_PROVIDER_FORCE_GFX_ARCH"
FORCE_ROCM_VERSION = "AMD_VARIANT_PROVIDER_FORCE_ROCM_VERSION"

#: The reference's ``get_all_configs()`` values (wheelnext/amd-variant-provider @ 4d985a9).
ALL_ROCM_VERSIONS = [f"7.{m}" for m in range(10, -1, -1)] + ["6.4", "6.3"]
ALL_GFX_ARCHS = [
    "gfx900", "gfx906", "gfx908", "gfx90a", "gfx942", "gfx1030", "gfx1100", "gfx1101", "gfx1102", "gfx1200", "gfx1201",
]  # fmt: skip

_ROCM = re.compile(r"^\s*(\d+)\.(\d+)")


class OverrideError(ValueError):
    """An override variable holds a value the provider cannot read."""


@dataclass(frozen=True)
class VariantFeatureConfig:
    """One feature as variantlib's ``VariantFeatureConfigType`` expects: values most preferred first."""

    name: str
    values: list[str]
    multi_value: bool = False


# -- pure part ------------------------------------------------------------------------


def amd_supported_configs(
    accelerators: Sequence[Mapping[str, Any]], cpu: Mapping[str, Any] | None, environ: Mapping[str, str]
) -> list[Config]:
    """The reference plugin's ``get_supported_configs()`` for a machine described by report-shaped data."""
    del cpu
    gpus = [a for a in accelerators if a.get("vendor") == "amd"]
    configs: list[Config] = []
    forced_gfx = environ.get(FORCE_GFX_ARCH)
    if forced_gfx:
        # As the reference: split on commas, spaces, semicolons; order and spelling kept.
        gfx = [p for p in re.split(r"[,\s;]+", forced_gfx.strip()) if p]
    else:
        # rocminfo / rocm_agent_enumerator name the runtime's target (after HSA_OVERRIDE_GFX_VERSION).
        gfx = sorted({str(name) for name in (g.get("effective_gfx") or g.get("gfx") for g in gpus) if name})
    if gfx:
        configs.append(("gfx_arch", gfx, True))
    rocm = _rocm_version(gpus, environ)
    if rocm is not None:
        configs.append(("rocm_version", [rocm], False))
    return configs


def amd_all_configs() -> list[Config]:
    """The reference plugin's fixed ``get_all_configs()`` (its order: ``rocm_version`` first)."""
    return [("rocm_version", list(ALL_ROCM_VERSIONS), False), ("gfx_arch", list(ALL_GFX_ARCHS), True)]


def _rocm_version(gpus: Sequence[Mapping[str, Any]], environ: Mapping[str, str]) -> str | None:
    forced = environ.get(FORCE_ROCM_VERSION)
    if forced:
        parts = forced.strip().split(".")
        if len(parts) != 3 or not all(parts):
            # The reference asserts exactly three fields; say so instead of an AssertionError.
            raise OverrideError(
                f"{FORCE_ROCM_VERSION}={forced!r} must be a full ROCm version MAJOR.MINOR.PATCH "
                "(for example 7.1.0): fix it or unset it"
            )
        return f"{parts[0]}.{parts[1]}"
    for g in gpus:
        match = _ROCM.match(str(g.get("rocm_version") or ""))
        if match:
            return f"{int(match.group(1))}.{int(match.group(2))}"
    return None


#: namespace -> pure function over report-shaped data; the contract the wheelfit core relies on.
VARIANT_NAMESPACES: dict[
    str, Callable[[Sequence[Mapping[str, Any]], Mapping[str, Any] | None, Mapping[str, str]], list[Config]]
] = {"amd": amd_supported_configs}


# -- plugin API -------------------------------------------------------------------------


def _detect() -> list[Config]:
    """Probe this machine (or ``WHEELFIT_SYSROOT``) with wheelfit's detector and apply the pure function."""
    from . import PROVIDER

    environ = dict(os.environ)
    system = System.from_sysroot(environ.get("WHEELFIT_SYSROOT") or None, environ=environ, command_timeout=_timeout())
    result = PROVIDER.probe(system)
    return amd_supported_configs(result.accelerators, result.cpu, environ)


def _timeout() -> float:
    try:
        return max(0.1, float(os.environ.get("WHEELFIT_PROBE_TIMEOUT") or 15))
    except ValueError:
        return 15.0


def _objects(configs: list[Config]) -> list[VariantFeatureConfig]:
    return [VariantFeatureConfig(name, list(values), multi) for name, values, multi in configs]


class AMDVariantPlugin:
    """``variant_plugins`` entry point for the ``amd`` namespace (class methods: works instantiated or not)."""

    namespace = "amd"
    is_aot_plugin = False
    is_build_plugin = False
    all_properties_compatible = False
    dynamic = False

    @classmethod
    def get_supported_configs(cls, known_properties: object = None) -> list[VariantFeatureConfig]:
        del known_properties
        return _objects(_detect())

    @classmethod
    def get_all_configs(cls, known_properties: object = None) -> list[VariantFeatureConfig]:
        del known_properties
        return _objects(amd_all_configs())

    @classmethod
    def validate_property(cls, variant_property: Any) -> bool:
        """Early-2025 API: whether ``amd :: feature :: value`` is a value this provider knows."""
        if getattr(variant_property, "namespace", None) != cls.namespace:
            return False
        feature, value = getattr(variant_property, "feature", None), getattr(variant_property, "value", None)
        return any(name == feature and value in values for name, values, _ in amd_all_configs())
