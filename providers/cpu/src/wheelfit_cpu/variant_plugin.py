"""The ``x86_64`` and ``aarch64`` wheel-variant providers, computed from wheelfit's CPU detection.

Mirrors the reference plugins ``provider_variant_x86_64.plugin:X8664Plugin`` and
``provider_variant_aarch64.plugin:AArch64Plugin`` (wheelnext/provider-variant-x86-64 @ f239c32,
provider-variant-aarch64 @ a9e7e5d). Both ask archspec for the host's microarchitecture
and answer from that archspec *target*: x86_64 ``level`` (``vN`` down to ``v1``, from
the target's generic ``x86_64_vN`` ancestor, capped at v4) and aarch64 ``version``
(``9.0a`` ... ``8a``: the generic ancestor, capped at armv9.0a, then its ancestors), then
one ``on`` feature per ISA extension the target has, in the reference's preference order.
wheelfit's report names the same target (``cpu.microarchitecture``, chosen as
``archspec.cpu.host()`` chooses), so the answer is the same for the same CPU.

archspec is imported on first use only. Neither reference reads an override variable.
The plugin-API machinery is shared with the other providers (``wheelfit_probekit.variant_plugin``);
this distribution declares two classes on it, one per namespace, over one detector.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from wheelfit_probekit.variant_plugin import Config, NamespaceFunction, VariantFeatureConfig, VariantPlugin

from . import PROVIDER

__all__ = [
    "AARCH64_FEATURES",
    "VARIANT_NAMESPACES",
    "X86_64_FEATURES",
    "AArch64Plugin",
    "VariantFeatureConfig",
    "X8664Plugin",
    "aarch64_all_configs",
    "aarch64_supported_configs",
    "x86_64_all_configs",
    "x86_64_supported_configs",
]

#: Highest level / version the references offer ("supported at the time").
MAX_X86_64_LEVEL = 4
MAX_AARCH64_VERSION = "armv9.0a"

#: archspec feature names the x86_64 reference offers, most preferred first (its ``all_features``).
X86_64_FEATURES = [
    "avx_vnni", "cppc", "ibrs_enhanced", "tsc_adjust",  # zen5
    "flush_l1d",  # zen4
    "movdir64b", "movdiri",  # sapphirerapids
    "avx512_bf16", "avx512_bitalg", "avx512_vbmi2", "avx512_vnni", "avx512_vp2intersect", "avx512_vpopcntdq",
    "avx512ifma", "avx512vbmi", "rdpid", "sha_ni", "vaes", "vpclmulqdq",  # icelake
    "clwb", "clzero",  # skylake_avx512
    "avx512bw", "avx512cd", "avx512dq", "avx512f", "avx512vl",  # x86-64-v4
    "clflushopt", "gfni", "rdseed", "xsavec", "xsaveopt",  # skylake
    "adx",  # broadwell
    "avx2", "avx", "bmi2", "bmi1", "abm", "f16c", "fma", "movbe", "xsave",  # x86-64-v3
    "rdrand",  # sandybridge
    "aes",  # westmere
    "pclmulqdq",  # nehalem
    "sse4a", "fsgsbase",  # steamroller
    "sse4_2", "sse4_1", "ssse3", "sse3", "cx16", "lahf_lm", "popcnt",  # x86-64-v2
    "sse2", "sse", "mmx",  # x86-64-v1
]  # fmt: skip

#: archspec feature names the aarch64 reference offers, most preferred first (its ``all_features``).
AARCH64_FEATURES = [
    "sve2", "flagm2", "frint", "sb",  # neoverse_n2/v2 (armv9.0)
    "btiecv",  # m2 (armv8.5)
    "paca", "pacg", "ssbs",  # m1 (armv8.4)
    "asimdfhm", "bf16", "dcpodp", "dgh", "dit", "flagm", "i8mm", "ilrcpc", "jscvt", "rng", "sha3", "sha512",
    "svebf16", "svei8mm", "uscat",  # neoverse_v1 (armv8.4)
    "asimddp", "lrcpc",  # neoverse_n1 (armv8.2)
    "asimdhp", "dcpop", "fcma", "fphp", "sve",  # a64fx (armv8.2)
    "asimdrdmatomics",  # thunderx2 (armv8.1)
    "aes", "asimd", "cpuid", "crc32", "evtstrm", "fp", "pmull", "sha1", "sha2",  # cortex_a72 (armv8.0)
]  # fmt: skip


# -- pure part ------------------------------------------------------------------------


def x86_64_supported_configs(
    accelerators: Sequence[Mapping[str, Any]], cpu: Mapping[str, Any] | None, environ: Mapping[str, str]
) -> list[Config]:
    """The x86_64 reference's ``get_supported_configs()`` for the CPU a report describes."""
    del accelerators, environ
    target = _target(cpu)
    if target is None:
        return []
    generic = target.generic.name
    if not generic.startswith("x86_64_v"):
        return []  # not x86, or only baseline x86-64: the reference offers nothing then
    level = min(int(generic.removeprefix("x86_64_v")), MAX_X86_64_LEVEL)
    return [("level", _levels(level), False)] + [(f, ["on"], False) for f in X86_64_FEATURES if f in target]


def aarch64_supported_configs(
    accelerators: Sequence[Mapping[str, Any]], cpu: Mapping[str, Any] | None, environ: Mapping[str, str]
) -> list[Config]:
    """The aarch64 reference's ``get_supported_configs()`` for the CPU a report describes."""
    del accelerators, environ
    target = _target(cpu)
    if target is None or "aarch64" not in (target.generic, *target.ancestors):
        return []
    from archspec.cpu import TARGETS

    generic = target.generic
    if MAX_AARCH64_VERSION in generic.ancestors:
        generic = TARGETS[MAX_AARCH64_VERSION]
    return [("version", _versions(generic), False)] + [(f, ["on"], False) for f in AARCH64_FEATURES if f in target]


def x86_64_all_configs() -> list[Config]:
    return [("level", _levels(MAX_X86_64_LEVEL), False)] + [(f, ["on"], False) for f in X86_64_FEATURES]


def aarch64_all_configs() -> list[Config]:
    from archspec.cpu import TARGETS

    return [("version", _versions(TARGETS[MAX_AARCH64_VERSION]), False)] + [
        (f, ["on"], False) for f in AARCH64_FEATURES
    ]


def _levels(top: int) -> list[str]:
    return [f"v{n}" for n in range(top, 0, -1)]


def _versions(generic: Any) -> list[str]:
    """``armv8.4a`` and its ancestors -> ``8.4a, 8.3a, 8.2a, 8.1a, 8a``."""
    return [_version_name(t.name) for t in (generic, *generic.ancestors)]


def _version_name(archspec_name: str) -> str:
    if archspec_name == "aarch64":
        return "8a"
    if archspec_name.startswith("armv") and archspec_name.endswith("a"):
        return archspec_name[4:]
    raise ValueError(f"archspec target {archspec_name!r} is not an Arm architecture version")


def _target(cpu: Mapping[str, Any] | None) -> Any:
    """The archspec target the report names; without a known one, the generic target its level implies."""
    if not cpu:
        return None
    from archspec.cpu import TARGETS

    name = cpu.get("microarchitecture")
    if isinstance(name, str) and name in TARGETS:
        return TARGETS[name]
    arch = cpu.get("arch")
    if arch == "x86_64":
        level = cpu.get("x86_64_level")
        fallback = f"x86_64_{level}" if level in ("v2", "v3", "v4") else "x86_64"
        return TARGETS[fallback]
    if arch == "aarch64":
        return TARGETS["aarch64"]
    return None


#: namespace -> pure function over report-shaped data; the contract the wheelfit core relies on.
VARIANT_NAMESPACES: dict[str, NamespaceFunction] = {
    "x86_64": x86_64_supported_configs,
    "aarch64": aarch64_supported_configs,
}


class X8664Plugin(VariantPlugin):
    """``variant_plugins`` entry point for the ``x86_64`` namespace (class methods: works instantiated or not)."""

    namespace = "x86_64"
    _provider = PROVIDER
    _supported = staticmethod(x86_64_supported_configs)
    _all = staticmethod(x86_64_all_configs)


class AArch64Plugin(VariantPlugin):
    """``variant_plugins`` entry point for the ``aarch64`` namespace (class methods: works instantiated or not)."""

    namespace = "aarch64"
    _provider = PROVIDER
    _supported = staticmethod(aarch64_supported_configs)
    _all = staticmethod(aarch64_all_configs)
