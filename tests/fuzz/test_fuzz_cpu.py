"""Fuzz targets: ``/proc/cpuinfo``, macOS ``sysctl``, recorded CPUID dumps, ``ldd --version`` (issue 15).

Contract (wheelfit_cpu): ``info_from_cpuinfo`` returns a :class:`CpuInfo` or raises ``CpuinfoError``;
``parse_cpuid_dump`` raises ``ValueError`` for a malformed line; the other parsers never raise.
"""

from __future__ import annotations

from hypothesis import example, given
from hypothesis import strategies as st

from wheelfit_cpu.cpuid import decode_cpuid, parse_cpuid_dump
from wheelfit_cpu.cpuinfo import CpuinfoError, first_block, guess_arch, info_from_cpuinfo
from wheelfit_cpu.darwin import info_from_sysctl, parse_sysctl, plist_version, version_tuple
from wheelfit_cpu.info import CpuInfo
from wheelfit_cpu.uarch import Resolved, archspec_tables, resolve
from wheelfit_probekit.platform import parse_ldd_version

from ..conftest import REALDATA
from .strategies import binary_text, samples, texts

TABLES = archspec_tables()
LINUX = samples("cpu/linux-*", REALDATA, limit=60)
DARWIN = samples("cpu/darwin-*", REALDATA)
CPUID = samples("cpu/windows-cpuid-*", REALDATA)
LDD = [
    "ldd (Debian GLIBC 2.36-9+deb12u4) 2.36\nCopyright (C) 2022 Free Software Foundation, Inc.\n",
    "ldd (GNU libc) 2.17\nCopyright (C) 2012 Free Software Foundation, Inc.\nWritten by Roland McGrath\n",
    "musl libc (x86_64)\nVersion 1.2.4\nDynamic Program Loader\nUsage: ldd [options] [--] pathname\n",
]
ARCHES = st.sampled_from([None, "x86_64", "aarch64", "ppc64le", "riscv64", "i686", "s390x"])


@given(texts(LINUX) | binary_text(), ARCHES)
def test_cpuinfo_gives_a_cpu_or_a_cpuinfo_error(text: str, arch: str | None) -> None:
    try:
        info = info_from_cpuinfo(text, arch, TABLES["arm_vendors"])
    except CpuinfoError as exc:
        assert str(exc).startswith("/proc/cpuinfo") or "architecture" in str(exc)
        return
    assert isinstance(info, CpuInfo)
    assert info.os == "Linux" and info.arch
    assert info.generation >= 0
    assert all(f and not any(c.isspace() for c in f) for f in info.features)
    # Whatever was read, archspec's selection names some target for it.
    assert isinstance(resolve(info), Resolved)


@given(texts(LINUX))
def test_the_first_block_is_a_prefix_of_the_text(text: str) -> None:
    block = first_block(text)
    assert all(k == k.strip() and v == v.strip() for k, v in block.items())
    assert guess_arch(block) in (None, "x86_64", "i686", "aarch64", "riscv64", "ppc64le")


@given(texts(DARWIN) | binary_text())
def test_sysctl_never_raises_and_describes_a_mac(text: str) -> None:
    data = parse_sysctl(text)
    assert all(k and k == k.strip() and v == v.strip() for k, v in data.items())
    info = info_from_sysctl(data, TABLES["darwin_flags"])
    assert info.os == "Darwin" and info.arch in ("aarch64", "x86_64")
    assert isinstance(resolve(info), Resolved)


@given(st.text(max_size=300) | st.from_regex(r"\A\d{1,3}(\.\d{1,3}){0,3}\Z"))
@example("12.6.1")
@example("١٢.٣")
def test_version_tuple_is_the_dotted_numbers(text: str) -> None:
    v = version_tuple(text)
    if v is not None:
        assert ".".join(map(str, v)) == ".".join(str(int(p)) for p in text.strip().split("."))
        assert all(n >= 0 for n in v)


@given(texts(["<plist><dict><key>ProductVersion</key>\n<string>14.2.1</string></dict></plist>"]))
def test_plist_version_never_raises(text: str) -> None:
    v = plist_version(text)
    assert v is None or (v == v.strip() and v)


@given(texts(CPUID) | binary_text())
@example("0x0, 0x0, -1, -1, -1, -1\n")
@example("0x0, 0x0, 0xd, 0x756e6547, 0x6c65746e, 0x1000000000\n")
def test_a_cpuid_dump_gives_registers_or_a_value_error(text: str) -> None:
    try:
        regs = parse_cpuid_dump(text)
    except ValueError:
        return
    assert all(0 <= v <= 0xFFFFFFFF for key, r in regs.items() for v in (*key, *r))
    decoded = decode_cpuid(regs, TABLES["cpuid"])
    assert decoded.vendor


@given(texts(LDD) | binary_text())
@example("ldd (GNU libc) ٢.٣٦\n")
@example("musl libc (x86_64)\nVersion \u0661.\u0662.\u0664\n")  # Arabic-Indic 1.2.4
def test_ldd_version_is_a_libc_name_and_version_or_none(text: str) -> None:
    libc = parse_ldd_version(text)
    assert libc is None or libc == "musl" or libc.split(" ")[0] in ("glibc", "musl")
    if libc is not None and " " in libc:
        assert libc.split(" ", 1)[1].replace(".", "").isascii()
