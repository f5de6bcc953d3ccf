"""Pure parts of the cpu provider: x86-64 level, cpuinfo parsing, Darwin names, CPUID decoding, MPS rule."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from wheelfit_cpu.cpuid import decode_cpuid, needed_leaves, parse_cpuid_dump
from wheelfit_cpu.cpuinfo import CpuinfoError, first_block, guess_arch, info_from_cpuinfo
from wheelfit_cpu.darwin import apple_gpu, darwin_x86_features, parse_sysctl, plist_version, version_tuple
from wheelfit_cpu.levels import x86_64_level
from wheelfit_cpu.uarch import apple_model, archspec_tables

V2 = {"cx16", "lahf_lm", "popcnt", "pni", "ssse3", "sse4_1", "sse4_2"}
V3 = {"avx", "avx2", "bmi1", "bmi2", "f16c", "fma", "abm", "movbe", "xsave"}
V4 = {"avx512f", "avx512bw", "avx512cd", "avx512dq", "avx512vl"}
BASE = {"fpu", "cmov", "cx8", "fxsr", "mmx", "sse", "sse2", "lm"}


# -- x86-64 level -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("features", "level"),
    [
        (BASE, "v1"),
        (BASE | V2, "v2"),
        (BASE | V2 | V3, "v3"),
        (BASE | V2 | V3 | V4, "v4"),
        ((BASE | V2 | V3 | V4) - {"movbe"}, "v2"),  # AVX-512 without MOVBE is not v4: levels are cumulative
        ((BASE | V2 | V3) - {"abm"}, "v2"),  # LZCNT is printed as abm
        ((BASE | V2) - {"pni"}, "v1"),  # SSE3 is printed as pni ...
        ((BASE | V2) - {"pni"} | {"sse3"}, "v2"),  # ... and macOS says sse3
        ((BASE | V2 | V3 | V4) - {"avx512vl"}, "v3"),
        (set(), "v1"),
    ],
    ids=["base", "v2", "v3", "v4", "v4-no-movbe", "v3-no-abm", "v2-no-pni", "darwin-sse3", "v4-no-vl", "empty"],
)
def test_x86_64_level(features: set[str], level: str) -> None:
    assert x86_64_level(features) == level


# -- /proc/cpuinfo ----------------------------------------------------------------------

TWO_CPUS = (
    "processor\t: 0\nvendor_id\t: GenuineIntel\nmodel name\t: First\nflags\t\t: fpu lm sse2\n\n"
    "processor\t: 1\nvendor_id\t: AuthenticAMD\nmodel name\t: Second\nflags\t\t: fpu lm sse2 avx512f\n"
)


def test_first_block_only_and_tabs() -> None:
    block = first_block(TWO_CPUS)
    assert block["model name"] == "First"
    assert block["vendor_id"] == "GenuineIntel"
    assert "avx512f" not in block["flags"]


def test_first_block_single_tab_and_aligned_spaces() -> None:
    text = "processor\t: 0\nCPU implementer : 0x41\nCPU part      : 0xd4f\nFeatures\t: fp asimd sve2\n"
    assert first_block(text) == {
        "processor": "0",
        "CPU implementer": "0x41",
        "CPU part": "0xd4f",
        "Features": "fp asimd sve2",
    }


def test_value_with_colon_is_kept_whole() -> None:
    assert first_block("model name : AMD Ryzen: special\n")["model name"] == "AMD Ryzen: special"


def test_x86_missing_keys_fall_back() -> None:
    info = info_from_cpuinfo("processor : 0\nflags : fpu lm sse2\n", "x86_64", {})
    assert info.vendor == "generic"
    assert info.model is None
    assert info.features == frozenset({"fpu", "lm", "sse2"})


def test_aarch64_vendor_and_part() -> None:
    text = "processor : 0\nFeatures : fp asimd\nCPU implementer : 0x41\nCPU part : 0xd0c\n"
    info = info_from_cpuinfo(text, None, archspec_tables()["arm_vendors"])
    assert (info.arch, info.vendor, info.cpu_part) == ("aarch64", "ARM", "0xd0c")
    unknown = info_from_cpuinfo(text.replace("0x41", "0x99"), None, archspec_tables()["arm_vendors"])
    assert unknown.vendor == "0x99"


@pytest.mark.parametrize(
    ("text", "arch"),
    [
        ("vendor_id : GenuineIntel\nflags : fpu lm\n", "x86_64"),
        ("vendor_id : GenuineIntel\nflags : fpu\n", "i686"),
        ("Features : fp asimd\nCPU implementer : 0x41\n", "aarch64"),
        ("isa : rv64imafdc\n", "riscv64"),
        ("cpu : POWER9, altivec supported\n", "ppc64le"),
        ("processor : 0\n", None),
    ],
)
def test_guess_arch(text: str, arch: str | None) -> None:
    assert guess_arch(first_block(text)) == arch


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "is empty"),
        ("\n\n   \n", "is empty"),
        ("\x7fELF\x02\x01\x01\x00\x00\x00garbage", "binary"),
        ("hello world\nno colons here\n", "no processor fields"),
        ("processor : 0\nbogomips : 1.0\n", "no processor fields"),
    ],
)
def test_garbage_cpuinfo(text: str, message: str) -> None:
    with pytest.raises(CpuinfoError, match=message):
        info_from_cpuinfo(text, None, {})


def test_power_without_generation_is_generation_zero() -> None:
    info = info_from_cpuinfo("cpu : emulated\n", "ppc64le", {})
    assert info.generation == 0


# -- macOS ------------------------------------------------------------------------------

SKYLAKE_MAC = {
    "machdep.cpu.features": "FPU SSE3 SSSE3 FMA CX16 SSE4.1 SSE4.2 MOVBE POPCNT XSAVE OSXSAVE AVX1.0 F16C",
    "machdep.cpu.leaf7_features": "BMI1 AVX2 BMI2 CLFSOPT",
    "machdep.cpu.extfeatures": "SYSCALL XD EM64T LAHF LZCNT RDTSCP",
}


def test_darwin_names_converted_like_archspec() -> None:
    feats = darwin_x86_features(SKYLAKE_MAC, archspec_tables()["darwin_flags"])
    assert {"sse4_1", "sse4_2", "avx", "lahf_lm", "abm", "clflushopt", "xsavec", "xsaveopt"} <= feats
    assert {"sse4.1", "avx1.0", "popcnt", "lzcnt", "xsave"} <= feats  # archspec adds, never removes
    assert x86_64_level(feats) == "v3"


def test_darwin_abm_needs_both_popcnt_and_lzcnt() -> None:
    data = dict(SKYLAKE_MAC, **{"machdep.cpu.extfeatures": "SYSCALL XD EM64T LAHF RDTSCP"})
    feats = darwin_x86_features(data, archspec_tables()["darwin_flags"])
    assert "abm" not in feats
    assert x86_64_level(feats) == "v2"


def test_parse_sysctl_drops_valueless_lines() -> None:
    data = parse_sysctl("machdep.cpu.brand_string: Apple M4 Max\nhw.osenvironment:\nhw.optional.arm64: 1\n")
    assert data == {"machdep.cpu.brand_string": "Apple M4 Max", "hw.optional.arm64": "1"}


@pytest.mark.parametrize(
    ("brand", "model"),
    [
        ("Apple M4 Max", "m4"),
        ("Apple M1 Pro", "m1"),
        ("Apple M9", "m4"),  # newer than archspec knows: counts down, as archspec does
        ("Apple processor", "m1"),
        ("Apple A18", "aarch64"),
        (None, "aarch64"),
    ],
)
def test_apple_model(brand: str | None, model: str) -> None:
    assert apple_model(brand, {"m1", "m2", "m3", "m4"}) == model


def test_plist_version() -> None:
    xml = (
        '<?xml version="1.0" encoding="UTF-8"?>\n<plist version="1.0">\n<dict>\n'
        "\t<key>ProductVersion</key>\n\t<string>14.5</string>\n</dict>\n</plist>\n"
    )
    assert plist_version(xml) == "14.5"
    assert plist_version("<key>ProductVersion</key> <string>12.6</string> broken") == "12.6"
    assert plist_version("") is None


@pytest.mark.parametrize(
    ("macos", "rosetta", "mps"),
    [
        ("15.3.1", False, True),
        ("12.3", False, True),
        ("12.2.1", False, False),
        ("11.7", False, False),
        ("14.5", True, False),
        (None, False, None),
        ("10.16", False, False),
    ],
)
def test_apple_gpu_mps_rule(macos: str | None, rosetta: bool, mps: bool | None) -> None:
    entry, why = apple_gpu("Apple M2 Ultra", macos, rosetta)
    assert entry["mps"] is mps
    assert entry["name"] == "Apple M2 Ultra GPU"
    assert (entry["vendor"], entry["pci_id"], entry["source"], entry["integrated"]) == ("apple", None, "sysctl", True)
    assert entry["macos"] == macos
    assert (why is None) is (mps is True)


def test_version_tuple() -> None:
    assert version_tuple("12.6.1") == (12, 6, 1)
    assert version_tuple("15") == (15,)
    assert version_tuple("12.x") is None


# -- CPUID ------------------------------------------------------------------------------


def test_parse_cpuid_dump_rejects_short_lines() -> None:
    with pytest.raises(ValueError, match="line 1 has 3 fields"):
        parse_cpuid_dump("1, 0, 2\n")


class _RecordedCpuid:
    """archspec's own collector driven by recorded registers: the oracle for the decoder."""

    def __init__(self, regs: dict[tuple[int, int], tuple[int, int, int, int]]) -> None:
        self.regs = regs

    def registers_for(self, eax: int, ecx: int = 0) -> Any:
        from archspec.vendor.cpuid.cpuid import CPUID_struct

        return CPUID_struct(*self.regs.get((eax, ecx), (0, 0, 0, 0)))


@pytest.mark.parametrize("name", ["windows-cpuid-broadwell", "windows-cpuid-icelake"])
def test_cpuid_decoder_matches_archspec_collector(name: str, realdata: Path) -> None:
    from archspec.cpu.detect import CpuidInfoCollector

    regs = parse_cpuid_dump((realdata / "cpu" / name).read_text())
    table = archspec_tables()["cpuid"]
    ours = decode_cpuid(regs, table)
    oracle = CpuidInfoCollector.__new__(CpuidInfoCollector)
    oracle.cpuid = _RecordedCpuid(regs)
    oracle.highest_basic_support = regs[(0, 0)][0]
    oracle.highest_extension_support = regs[(0x80000000, 0)][0]
    assert ours.features == oracle._features()
    assert ours.brand == oracle.brand_string().strip()
    assert ours.vendor == "GenuineIntel"
    assert set(needed_leaves(table)) <= set(regs)


def test_cpuid_icelake_and_broadwell_facts(realdata: Path) -> None:
    table = archspec_tables()["cpuid"]
    ice = decode_cpuid(parse_cpuid_dump((realdata / "cpu" / "windows-cpuid-icelake").read_text()), table)
    bdw = decode_cpuid(parse_cpuid_dump((realdata / "cpu" / "windows-cpuid-broadwell").read_text()), table)
    assert {"avx512f", "avx512_vnni", "avx512vl"} <= ice.features
    assert x86_64_level(ice.features) == "v4"
    assert ice.brand == "11th Gen Intel(R) Core(TM) i7-1185G7 @ 3.00GHz"
    assert "avx512f" not in bdw.features
    assert x86_64_level(bdw.features) == "v3"


def test_cpuid_skips_leaves_above_the_highest() -> None:
    # Highest basic leaf 1: leaf 7's AVX2 bit must be ignored even if the dump has it.
    regs = {(0, 0): (1, 0x756E6547, 0x6C65746E, 0x49656E69), (7, 0): (0, 1 << 5, 0, 0), (0x80000000, 0): (0, 0, 0, 0)}
    decoded = decode_cpuid(regs, archspec_tables()["cpuid"])
    assert decoded.vendor == "GenuineIntel"
    assert "avx2" not in decoded.features
    assert decoded.brand is None
