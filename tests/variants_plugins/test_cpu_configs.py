"""The x86_64 and aarch64 namespaces over report-shaped CPU data.

The expected lists for bulldozer, sandybridge, x86_64_v2, cortex_a72, a64fx, armv8.4a
and aarch64 are the reference plugins' own test cases
(provider-variant-x86-64 @ f239c32 and provider-variant-aarch64 tests/test_plugin.py).
"""

from __future__ import annotations

from typing import Any

import pytest

from wheelfit_cpu.variant_plugin import (
    AARCH64_FEATURES,
    VARIANT_NAMESPACES,
    X86_64_FEATURES,
    aarch64_all_configs,
    aarch64_supported_configs,
    x86_64_all_configs,
    x86_64_supported_configs,
)


def cpu(uarch: str | None, arch: str = "x86_64", level: str | None = None) -> dict[str, Any]:
    return {"arch": arch, "vendor": None, "model": None, "microarchitecture": uarch, "x86_64_level": level,
            "features": []}  # fmt: skip


def on(*names: str) -> list[tuple[str, list[str], bool]]:
    return [(n, ["on"], False) for n in names]


X86_CASES = {
    "x86_64_v2": [
        ("level", ["v2", "v1"], False),
        *on("sse4_2", "sse4_1", "ssse3", "sse3", "cx16", "lahf_lm", "popcnt", "sse2", "sse", "mmx"),
    ],
}

#: The reference's bulldozer / sandybridge cases were written against an older archspec, whose targets
#: listed fewer features (archspec 0.2.7 adds e.g. xsave, cx16); their lists must still appear, in order.
X86_OLDER_ARCHSPEC = {
    "bulldozer": ["avx", "abm", "aes", "pclmulqdq", "sse4a", "sse4_2", "sse4_1", "ssse3", "sse3", "cx16", "sse2",
                  "sse", "mmx"],
    "sandybridge": ["avx", "aes", "pclmulqdq", "sse4_2", "sse4_1", "ssse3", "sse3", "popcnt", "sse2", "sse", "mmx"],
}  # fmt: skip

ARM_CASES = {
    "cortex_a72": [
        ("version", ["8a"], False),
        *on("aes", "asimd", "cpuid", "crc32", "evtstrm", "fp", "pmull", "sha1", "sha2"),
    ],
    "a64fx": [
        ("version", ["8.2a", "8.1a", "8a"], False),
        *on("asimdhp", "dcpop", "fcma", "fphp", "sve", "asimd", "cpuid", "crc32", "evtstrm", "fp", "sha1", "sha2"),
    ],
    "armv8.4a": [("version", ["8.4a", "8.3a", "8.2a", "8.1a", "8a"], False)],
    "aarch64": [("version", ["8a"], False)],
}


@pytest.mark.parametrize("uarch", sorted(X86_CASES))
def test_x86_64_reference_cases(uarch: str) -> None:
    assert x86_64_supported_configs([], cpu(uarch), {}) == X86_CASES[uarch]


@pytest.mark.parametrize("uarch", sorted(X86_OLDER_ARCHSPEC))
def test_x86_64_reference_cases_under_a_newer_archspec(uarch: str) -> None:
    configs = x86_64_supported_configs([], cpu(uarch), {})
    assert configs[0] == ("level", ["v2", "v1"], False)
    names = [c[0] for c in configs[1:]]
    assert [n for n in names if n in X86_OLDER_ARCHSPEC[uarch]] == X86_OLDER_ARCHSPEC[uarch]


@pytest.mark.parametrize("uarch", sorted(ARM_CASES))
def test_aarch64_reference_cases(uarch: str) -> None:
    assert aarch64_supported_configs([], cpu(uarch, arch="aarch64"), {}) == ARM_CASES[uarch]


def test_sapphire_rapids() -> None:
    configs = x86_64_supported_configs([], cpu("sapphirerapids", level="v4"), {})
    assert configs[0] == ("level", ["v4", "v3", "v2", "v1"], False)
    names = [c[0] for c in configs[1:]]
    assert {"avx512_bf16", "avx512_vnni", "avx512f", "avx2", "movdir64b"} <= set(names)
    assert names == [f for f in X86_64_FEATURES if f in names]  # the reference's preference order
    assert all(values == ["on"] and not multi for _, values, multi in configs[1:])


def test_graviton3() -> None:
    configs = aarch64_supported_configs([], cpu("neoverse_v1", arch="aarch64"), {})
    assert configs[0] == ("version", ["8.4a", "8.3a", "8.2a", "8.1a", "8a"], False)
    names = [c[0] for c in configs[1:]]
    assert {"sve", "bf16", "i8mm", "svebf16", "asimddp"} <= set(names) and "sve2" not in names
    assert names == [f for f in AARCH64_FEATURES if f in names]


def test_aarch64_version_is_capped_at_9_0a() -> None:
    assert aarch64_supported_configs([], cpu("neoverse_v2", arch="aarch64"), {})[0] == (
        "version",
        ["9.0a", "8.5a", "8.4a", "8.3a", "8.2a", "8.1a", "8a"],
        False,
    )


def test_each_namespace_is_empty_on_the_other_architecture() -> None:
    assert aarch64_supported_configs([], cpu("sapphirerapids", level="v4"), {}) == []
    assert x86_64_supported_configs([], cpu("neoverse_v1", arch="aarch64"), {}) == []
    assert x86_64_supported_configs([], cpu("m4", arch="aarch64"), {}) == []
    assert x86_64_supported_configs([], None, {}) == aarch64_supported_configs([], None, {}) == []
    assert x86_64_supported_configs([], cpu(None, arch="ppc64le"), {}) == []


def test_baseline_x86_64_gets_nothing_as_in_the_reference() -> None:
    assert x86_64_supported_configs([], cpu("x86_64", level="v1"), {}) == []


def test_report_without_a_known_microarchitecture_uses_the_generic_level() -> None:
    configs = x86_64_supported_configs([], cpu(None, level="v3"), {})
    assert configs[0] == ("level", ["v3", "v2", "v1"], False)
    names = {c[0] for c in configs}
    assert "avx2" in names and "avx512f" not in names
    assert x86_64_supported_configs([], cpu("not-a-cpu", level="v2"), {})[0] == ("level", ["v2", "v1"], False)
    assert aarch64_supported_configs([], cpu(None, arch="aarch64"), {}) == [("version", ["8a"], False)]


def test_all_configs() -> None:
    x86 = x86_64_all_configs()
    assert x86[0] == ("level", ["v4", "v3", "v2", "v1"], False)
    # 56 in provider-variant-x86-64 0.0.1.post2; 40 in provider-variant-aarch64 @ 47b6e1e
    assert [c[0] for c in x86[1:]] == X86_64_FEATURES and len(X86_64_FEATURES) == 56
    arm = aarch64_all_configs()
    assert arm[0] == ("version", ["9.0a", "8.5a", "8.4a", "8.3a", "8.2a", "8.1a", "8a"], False)
    assert [c[0] for c in arm[1:]] == AARCH64_FEATURES and len(AARCH64_FEATURES) == 40
    assert set(VARIANT_NAMESPACES) == {"x86_64", "aarch64"}
