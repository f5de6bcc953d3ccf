"""Broken or unusual machines: the cpu provider records a failed probe and never raises."""

from __future__ import annotations

from pathlib import Path

from wheelfit_cpu import PROVIDER
from wheelfit_probekit import ProviderResult, System

from .test_cpu_realdata import darwin_sysroot, linux_sysroot

NULL_CPU: dict[str, object] = {
    "vendor": None,
    "model": None,
    "microarchitecture": None,
    "x86_64_level": None,
    "features": [],
}


def probe(root: Path, timeout: float = 10.0) -> ProviderResult:
    return PROVIDER.probe(System.from_sysroot(root, environ={"PATH": "/usr/bin:/bin"}, command_timeout=timeout))


def failed(res: ProviderResult) -> dict[str, str]:
    return {p.source: p.error or "" for p in res.probes if not p.ok}


def assert_null_cpu(res: ProviderResult) -> None:
    cpu = res.cpu or {}
    assert {k: cpu[k] for k in NULL_CPU} == NULL_CPU
    assert res.accelerators == []


def test_missing_cpuinfo(tmp_path: Path) -> None:
    (tmp_path / "proc").mkdir()
    res = probe(tmp_path)
    assert_null_cpu(res)
    assert "does not exist" in failed(res)["proc-cpuinfo"]
    assert "archspec" not in {p.source for p in res.probes}


def test_empty_cpuinfo(tmp_path: Path) -> None:
    res = probe(linux_sysroot(tmp_path, ""))
    assert_null_cpu(res)
    assert failed(res) == {"proc-cpuinfo": "/proc/cpuinfo is empty"}


def test_binary_cpuinfo(tmp_path: Path) -> None:
    (tmp_path / "proc").mkdir()
    (tmp_path / "proc" / "cpuinfo").write_bytes(bytes(range(256)) + b"\x7fELF: \xff\xfe")
    res = probe(tmp_path)
    assert_null_cpu(res)
    assert "binary" in failed(res)["proc-cpuinfo"]


def test_unreadable_cpuinfo_symlink_loop(tmp_path: Path) -> None:
    (tmp_path / "proc").mkdir()
    (tmp_path / "proc" / "cpuinfo").symlink_to("cpuinfo")
    res = probe(tmp_path)
    assert_null_cpu(res)
    assert "cannot read /proc/cpuinfo" in failed(res)["proc-cpuinfo"]


def test_kernel_arch_is_kept_when_cpuinfo_is_garbage(tmp_path: Path) -> None:
    res = probe(linux_sysroot(tmp_path, "junk\n", kernel_arch="aarch64"))
    assert (res.cpu or {})["arch"] == "aarch64"
    assert "no processor fields" in failed(res)["proc-cpuinfo"]


def test_darwin_without_sysctl(tmp_path: Path) -> None:
    darwin_sysroot(tmp_path, "machdep.cpu.brand_string: Apple M4 Max\n", "15.3.1")
    (tmp_path / "usr" / "sbin" / "sysctl").unlink()
    res = probe(tmp_path)
    assert_null_cpu(res)
    assert "sysctl not found" in failed(res)["sysctl"]


def test_darwin_sysctl_that_hangs(tmp_path: Path) -> None:
    darwin_sysroot(tmp_path, "machdep.cpu.brand_string: Apple M4 Max\n", "15.3.1")
    (tmp_path / "usr" / "sbin" / "sysctl").write_text("#!/bin/sh\nsleep 30\n")
    res = probe(tmp_path, timeout=0.5)
    assert_null_cpu(res)
    assert "did not answer" in failed(res)["sysctl"]


def test_darwin_sysctl_without_brand(tmp_path: Path) -> None:
    res = probe(darwin_sysroot(tmp_path, "hw.optional.arm64: 1\n", "15.3.1"))
    assert_null_cpu(res)
    assert "no machdep.cpu.brand_string" in failed(res)["sysctl"]


def test_rosetta_python_gets_no_mps(realdata: Path, tmp_path: Path) -> None:
    dump = (realdata / "cpu" / "darwin-sequoia-m4").read_text() + "sysctl.proc_translated: 1\n"
    res = probe(darwin_sysroot(tmp_path, dump, "15.3.1"))
    cpu = res.cpu or {}
    assert (cpu["arch"], cpu["microarchitecture"]) == ("aarch64", "m4")
    [gpu] = res.accelerators
    assert gpu["mps"] is False
    assert gpu["rosetta"] is True
    assert any("native arm64 Python" in (p.hint or "") for p in res.probes)


def test_macos_below_12_3_has_no_mps(realdata: Path, tmp_path: Path) -> None:
    res = probe(darwin_sysroot(tmp_path, (realdata / "cpu" / "darwin-monterey-m1").read_text(), "12.2.1"))
    [gpu] = res.accelerators
    assert (gpu["mps"], gpu["macos"]) == (False, "12.2.1")
    detail = next(p.detail for p in res.probes if p.source == "macos-mps") or ""
    assert "older than 12.3" in detail


def test_macos_version_from_sysctl_when_plist_is_unreadable(realdata: Path, tmp_path: Path) -> None:
    dump = (realdata / "cpu" / "darwin-sequoia-m4").read_text() + "kern.osproductversion: 14.5\n"
    res = probe(darwin_sysroot(tmp_path, dump, None))
    [gpu] = res.accelerators
    assert (gpu["mps"], gpu["macos"]) == (True, "14.5")


def test_macos_version_unknown(realdata: Path, tmp_path: Path) -> None:
    res = probe(darwin_sysroot(tmp_path, (realdata / "cpu" / "darwin-sequoia-m4").read_text(), None))
    [gpu] = res.accelerators
    assert gpu["mps"] is None
    assert gpu["macos"] is None


def test_windows_sysroot_skips_cpuid(tmp_path: Path) -> None:
    (tmp_path / "Windows" / "System32").mkdir(parents=True)
    res = probe(tmp_path)
    assert_null_cpu(res)
    [rec] = [p for p in res.probes if p.source == "cpuid"]
    assert rec.ok
    assert "skipped" in (rec.detail or "")
