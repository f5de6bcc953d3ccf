"""The ``amd`` wheel-variant provider: the reference plugin's output, computed from wheelfit's detection.

Mirrors ``amd_variant_provider.plugin:AMDVariantPlugin`` (wheelnext/amd-variant-provider):
``gfx_arch`` (multi-value, the runtime's gfx targets sorted and de-duplicated, or the
forced list as given) then ``rocm_version`` (one exact ``MAJOR.MINOR`` value), and its
override variables. :data:`VARIANT_NAMESPACES` is the pure part the wheelfit core
calls; :class:`AMDVariantPlugin` is the ``variant_plugins`` entry point, its plugin-API
machinery shared with the other providers in ``wheelfit_probekit.variant_plugin``. Stdlib only.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from wheelfit_probekit.variant_plugin import (
    Config,
    NamespaceFunction,
    OverrideError,
    VariantFeatureConfig,
    VariantPlugin,
)

from . import PROVIDER

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

FORCE_GFX_ARCH = "AMD_VARIANT_PROVIDER_FORCE_GFX_ARCH"
FORCE_ROCM_VERSION = "AMD_VARIANT_PROVIDER_FORCE_ROCM_VERSION"

#: The reference's ``get_all_configs()`` values (wheelnext/amd-variant-provider @ 4d985a9).
ALL_ROCM_VERSIONS = [f"7.{m}" for m in range(10, -1, -1)] + ["6.4", "6.3"]
ALL_GFX_ARCHS = [
    "gfx900", "gfx906", "gfx908", "gfx90a", "gfx942", "gfx1030", "gfx1100", "gfx1101", "gfx1102", "gfx1200", "gfx1201",
]  # fmt: skip

_ROCM = re.compile(r"^\s*(\d+)\.(\d+)")


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
VARIANT_NAMESPACES: dict[str, NamespaceFunction] = {"amd": amd_supported_configs}


class AMDVariantPlugin(VariantPlugin):
    """``variant_plugins`` entry point for the ``amd`` namespace (class methods: works instantiated or not)."""

    namespace = "amd"
    _provider = PROVIDER
    _supported = staticmethod(amd_supported_configs)
    _all = staticmethod(amd_all_configs)
