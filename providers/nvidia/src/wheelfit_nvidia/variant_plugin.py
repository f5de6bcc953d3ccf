"""The ``nvidia`` wheel-variant provider: the reference plugin's output, computed from wheelfit's detection.

Scripts and installers written for ``nvidia-variant-provider``
(``nvidia_variant_provider.plugin:NvidiaVariantPlugin`` @ ffea5d3) keep working: the
same features, values and order, and the same override variables. Like the
reference, only the *highest* compute capability on the machine is used; wheelfit's
own resolver looks at every GPU instead (docs/variant-plugins.md).

:data:`VARIANT_NAMESPACES` is the pure part the wheelfit core calls for ``--target``
reports; :class:`NvidiaVariantPlugin` is the ``variant_plugins`` entry point that
variantlib and other installers load, its plugin-API machinery shared with the other
providers in ``wheelfit_probekit.variant_plugin``. Stdlib only, no variantlib import.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from wheelfit_probekit.drivers import cuda_major_minor
from wheelfit_probekit.variant_plugin import (
    Config,
    NamespaceFunction,
    OverrideError,
    VariantFeatureConfig,
    VariantPlugin,
)

from . import PROVIDER

__all__ = [
    "FORCE_CUDA_DRIVER_VERSION",
    "FORCE_SM_ARCH",
    "VARIANT_NAMESPACES",
    "NvidiaVariantPlugin",
    "OverrideError",
    "VariantFeatureConfig",
    "nvidia_all_configs",
    "nvidia_supported_configs",
]

FORCE_CUDA_DRIVER_VERSION = "NV_VARIANT_PROVIDER_FORCE_CUDA_DRIVER_VERSION"
FORCE_SM_ARCH = "NV_VARIANT_PROVIDER_FORCE_SM_ARCH"

#: The reference's value universe: CUDA majors 11..15, minors 0..20; ``sm_arch`` majors 5..12.
CUDA_MAJORS = range(11, 16)
CUDA_MINORS = range(21)
SM_MAJORS = range(5, 13)
#: Below this compute capability the reference offers no ``sm_arch`` feature.
MIN_SM = (5, 0)


# -- pure part ------------------------------------------------------------------------


def nvidia_supported_configs(
    accelerators: Sequence[Mapping[str, Any]], cpu: Mapping[str, Any] | None, environ: Mapping[str, str]
) -> list[Config]:
    """The reference plugin's ``get_supported_configs()`` for a machine described by report-shaped data."""
    del cpu  # not an NVIDIA input
    gpus = [a for a in accelerators if a.get("vendor") == "nvidia"]
    umd = _cuda_driver_version(gpus, environ)
    if umd is None:
        return []
    major, minor = umd
    configs: list[Config] = []
    # `>= value`: this driver's M.m down to M.0, then M, then every lower major as K.20 .. K.0, K.
    lower = [
        v
        for k in range(major, CUDA_MAJORS.start - 1, -1)
        for v in _major_values(k, minor if k == major else CUDA_MINORS[-1], stop=-1)
    ]
    if lower:
        configs.append(("cuda_version_lower_bound", lower, False))
    # `< value`: 15.20 down to just above this driver (M.(m+1)); a higher major also lists its bare name.
    upper: list[str] = []
    for k in range(CUDA_MAJORS[-1], major - 1, -1):
        if k > major:
            upper += _major_values(k, CUDA_MINORS[-1], stop=-1)
        else:
            upper += [f"{k}.{m}" for m in range(CUDA_MINORS[-1], minor, -1)]
    if upper:
        configs.append(("cuda_version_upper_bound", upper, False))
    sm = _highest_compute_capability(gpus, environ)
    if sm is not None and sm >= MIN_SM:
        sm_major, sm_minor = sm
        values = [f"{sm_major}{m}_real" for m in range(sm_minor, -1, -1)] + [f"{sm_major}0_virtual"]
        configs.append(("sm_arch", values, True))
    return configs


def nvidia_all_configs() -> list[Config]:
    """Every value the reference plugin can return (its ``get_all_configs()``)."""
    cuda = [v for k in reversed(CUDA_MAJORS) for v in _major_values(k, CUDA_MINORS[-1], stop=-1)]
    sm = [f"{k}{m}_{kind}" for kind in ("real", "virtual") for k in reversed(SM_MAJORS) for m in range(9, -1, -1)]
    return [
        ("cuda_version_lower_bound", cuda, False),
        ("cuda_version_upper_bound", list(cuda), False),
        ("sm_arch", sm, True),
    ]


def _major_values(major: int, top_minor: int, stop: int) -> list[str]:
    return [f"{major}.{m}" for m in range(top_minor, stop, -1)] + [str(major)]


def _cuda_driver_version(gpus: Sequence[Mapping[str, Any]], environ: Mapping[str, str]) -> tuple[int, int] | None:
    """The forced version as given (the reference checks no range then), else the driver's, within 11.0-15.20."""
    forced = environ.get(FORCE_CUDA_DRIVER_VERSION)
    if forced:
        parsed = cuda_major_minor(forced)
        if parsed is None:
            raise OverrideError(
                f"{FORCE_CUDA_DRIVER_VERSION}={forced!r} is not a CUDA version: set it to MAJOR.MINOR "
                "(for example 12.8) or unset it"
            )
        return parsed
    found = [v for v in (cuda_major_minor(str(g.get("cuda_driver_version") or "")) for g in gpus) if v is not None]
    if not found:
        return None
    umd = max(found)
    if not (CUDA_MAJORS.start, CUDA_MINORS.start) <= umd <= (CUDA_MAJORS[-1], CUDA_MINORS[-1]):
        return None  # the reference disables NVIDIA detection outside its range
    return umd


def _highest_compute_capability(
    gpus: Sequence[Mapping[str, Any]], environ: Mapping[str, str]
) -> tuple[int, int] | None:
    """The forced ``X.Y``, else the highest compute capability of any NVIDIA GPU (as NVML lists them)."""
    forced = environ.get(FORCE_SM_ARCH)
    if forced:
        parts = forced.split(".", 1)
        try:
            if len(parts) != 2:
                raise ValueError(forced)
            return int(parts[0]), int(parts[1])
        except ValueError:
            raise OverrideError(
                f"{FORCE_SM_ARCH}={forced!r} is not a compute capability: set it to MAJOR.MINOR "
                "(for example 8.6) or unset it"
            ) from None
    found: list[tuple[int, int]] = []
    for g in gpus:
        match = re.fullmatch(r"(\d+)\.(\d+)", str(g.get("compute_capability") or ""))
        if match:
            found.append((int(match.group(1)), int(match.group(2))))
    return max(found) if found else None


#: namespace -> pure function over report-shaped data; the contract the wheelfit core relies on.
VARIANT_NAMESPACES: dict[str, NamespaceFunction] = {"nvidia": nvidia_supported_configs}


class NvidiaVariantPlugin(VariantPlugin):
    """``variant_plugins`` entry point for the ``nvidia`` namespace (class methods: works instantiated or not)."""

    namespace = "nvidia"
    _provider = PROVIDER
    _supported = staticmethod(nvidia_supported_configs)
    _all = staticmethod(nvidia_all_configs)
