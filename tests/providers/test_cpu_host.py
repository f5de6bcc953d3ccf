"""The cpu provider on THIS machine, checked against answers that do not go through it."""

from __future__ import annotations

import platform
import re
import subprocess
import sys
from pathlib import Path

import pytest

from wheelfit_cpu import PROVIDER
from wheelfit_probekit import System

from ..conftest import hermetic_env

LDSO = Path("/lib64/ld-linux-x86-64.so.2")
on_x86_linux = pytest.mark.skipif(
    not (sys.platform == "linux" and platform.machine() == "x86_64"), reason="needs an x86_64 Linux host"
)


def ldso_level() -> str | None:
    """The highest ``x86-64-vN`` glibc's loader marks "supported" (authoritative on glibc >= 2.33)."""
    out = subprocess.run([str(LDSO), "--help"], capture_output=True, text=True, timeout=30, check=False).stdout
    if "glibc-hwcaps" not in out:
        return None
    levels = re.findall(r"^\s+x86-64-(v[234]) \(supported", out, re.MULTILINE)
    return max(levels) if levels else "v1"


@on_x86_linux
def test_level_matches_glibc_loader() -> None:
    if not LDSO.exists():
        pytest.skip("no glibc dynamic loader at /lib64")
    want = ldso_level()
    if want is None:
        pytest.skip("glibc older than 2.33: no glibc-hwcaps section in ld.so --help")
    cpu = PROVIDER.probe(System.from_sysroot(None)).cpu or {}
    assert cpu["arch"] == "x86_64"
    assert cpu["x86_64_level"] == want


@pytest.mark.skipif(sys.platform != "linux", reason="reads /proc/cpuinfo")
def test_features_match_proc_cpuinfo() -> None:
    text = Path("/proc/cpuinfo").read_text()
    key = "flags" if platform.machine() == "x86_64" else "Features"
    line = next(ln for ln in text.splitlines() if ln.split(":")[0].strip() == key)
    res = PROVIDER.probe(System.from_sysroot(None))
    cpu = res.cpu or {}
    assert cpu["features"] == sorted(set(line.split(":", 1)[1].split()))
    assert cpu["microarchitecture"]
    assert all(p.ok for p in res.probes), res.probes


def test_import_does_not_load_archspec() -> None:
    code = "import sys, wheelfit_cpu; print('archspec' in sys.modules, 'plistlib' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=hermetic_env(), check=True)
    assert out.stdout.split() == ["False", "False"]


@on_x86_linux
def test_cpuid_child_agrees_with_the_kernel() -> None:
    """The Windows path's machinery (CPUID in a child, decode) run here, checked against /proc/cpuinfo."""
    from wheelfit_cpu.cpuid import read_cpuid
    from wheelfit_cpu.levels import x86_64_level
    from wheelfit_cpu.uarch import archspec_tables

    decoded = read_cpuid(System.from_sysroot(None), archspec_tables()["cpuid"])
    text = Path("/proc/cpuinfo").read_text()
    flags = set(next(ln for ln in text.splitlines() if ln.startswith("flags")).split(":", 1)[1].split())
    vendor = next(ln for ln in text.splitlines() if ln.startswith("vendor_id")).split(":", 1)[1].strip()
    assert decoded.vendor == vendor
    assert x86_64_level(decoded.features) == x86_64_level(flags)
    ai = {"avx2", "fma", "avx512f", "avx512bw", "avx512_vnni", "avx512_bf16", "avx_vnni", "amx_tile", "amx_bf16"}
    assert decoded.features & ai == flags & ai


def test_cpuid_refused_in_a_sysroot(tmp_path: Path) -> None:
    from wheelfit_cpu.cpuid import read_cpuid
    from wheelfit_probekit import ProbeError

    with pytest.raises(ProbeError, match="real machine"):
        read_cpuid(System.from_sysroot(tmp_path), {})
