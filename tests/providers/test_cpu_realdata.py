"""All 52 recorded real CPUs (archspec's test corpus) through the cpu provider, as whole sysroots.

Linux dumps become ``proc/cpuinfo``; macOS dumps are answered by a fake ``usr/sbin/sysctl``
next to a real-format ``SystemVersion.plist``; Windows CPUID dumps go through the pure
decoder. The expected microarchitecture is the last part of the file name.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from wheelfit_cpu import PROVIDER
from wheelfit_cpu.cpuid import decode_cpuid, parse_cpuid_dump
from wheelfit_cpu.darwin import SYSCTL_ARGS
from wheelfit_cpu.info import CpuInfo
from wheelfit_cpu.uarch import archspec_tables, resolve
from wheelfit_probekit import ProviderResult, System

from ..conftest import REALDATA

CPU_DIR = REALDATA / "cpu"
FILES = sorted(p.name for p in CPU_DIR.iterdir() if p.name != "LICENSE-MIT") if CPU_DIR.is_dir() else []

#: macOS versions for the codename in a Darwin dump's name (the dumps do not record one).
MACOS = {"bigsur": "11.2.3", "mojave": "10.14.6", "monterey": "12.6", "sequoia": "15.3.1"}

#: Dumps whose file name is not what archspec answers for the data, with the reason and
#: archspec's answer. POWER cpuinfo does not say the byte order: the kernel's ``arch`` does.
UNDECIDABLE: dict[str, tuple[str, str | None, str]] = {
    "linux-rhel8-power9": ("cpuinfo-has-no-byte-order-ppc64le-names-it-power9le", None, "power9le"),
    "linux-unknown-power10": ("cpuinfo-has-no-byte-order-ppc64le-names-it-power10le", None, "power10le"),
}
#: Dumps that need ``proc/sys/kernel/arch`` to be decidable: BG/Q front ends are big-endian ppc64.
KERNEL_ARCH = {"bgq-rhel6-power7": "ppc64"}

SYSCTL_SCRIPT = """#!/bin/sh
# Fake macOS sysctl: answers `sysctl -i NAME...` from a recorded dump ({source}).
# Like the real tool, a NAME prints itself or its whole subtree; -i drops unknown names.
if [ "$1" != "-i" ]; then echo "fake sysctl: only -i NAME... was recorded, got: $*" >&2; exit 2; fi
shift
for name in "$@"; do
awk -v n="$name" 'index($0, n ": ") == 1 || index($0, n ".") == 1' <<'DUMP'
{dump}DUMP
done
"""

PLIST = """<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
<plist version="1.0">
<dict>
\t<key>ProductName</key>
\t<string>macOS</string>
\t<key>ProductUserVisibleVersion</key>
\t<string>{version}</string>
\t<key>ProductVersion</key>
\t<string>{version}</string>
</dict>
</plist>
"""


def linux_sysroot(root: Path, cpuinfo: str, kernel_arch: str | None = None) -> Path:
    (root / "proc").mkdir(parents=True)
    (root / "proc" / "cpuinfo").write_text(cpuinfo)
    if kernel_arch:
        (root / "proc" / "sys" / "kernel").mkdir(parents=True)
        (root / "proc" / "sys" / "kernel" / "arch").write_text(kernel_arch + "\n")
    return root


def darwin_sysroot(root: Path, dump: str, version: str | None, source: str = "recorded") -> Path:
    """A Mac: SystemVersion.plist (unless ``version`` is None) and a fake sysctl answering ``dump``."""
    if version is not None:
        (root / "System/Library/CoreServices").mkdir(parents=True)
        (root / "System/Library/CoreServices/SystemVersion.plist").write_text(PLIST.format(version=version))
    else:  # os_name still has to say Darwin: an unreadable-version Mac keeps an empty plist
        (root / "System/Library/CoreServices").mkdir(parents=True)
        (root / "System/Library/CoreServices/SystemVersion.plist").write_text("")
    sbin = root / "usr" / "sbin"
    sbin.mkdir(parents=True)
    script = sbin / "sysctl"
    script.write_text(SYSCTL_SCRIPT.format(source=source, dump=dump if dump.endswith("\n") else dump + "\n"))
    script.chmod(0o755)
    return root


def probe(root: Path) -> ProviderResult:
    return PROVIDER.probe(System.from_sysroot(root, environ={"PATH": "/usr/bin:/bin"}))


def generic_level(name: str) -> str:
    """archspec's own answer for the psABI level of a named x86 target (its generic ancestor)."""
    from archspec.cpu import TARGETS

    generic = str(TARGETS[name].generic.name)
    return {"x86_64": "v1"}.get(generic, generic.replace("x86_64_", ""))


def _case_id(name: str) -> str:
    if name in UNDECIDABLE:
        return f"{name}[{UNDECIDABLE[name][0]}]"
    if name in KERNEL_ARCH:
        return f"{name}[needs-kernel-arch-{KERNEL_ARCH[name]}]"
    return name


def test_corpus_is_complete(realdata: Path) -> None:
    assert len(FILES) == 52, FILES
    assert {f.split("-")[0] for f in FILES} == {"linux", "darwin", "windows", "bgq"}


@pytest.mark.parametrize("name", FILES, ids=[_case_id(n) for n in FILES])
def test_recorded_cpu(name: str, realdata: Path, tmp_path: Path) -> None:
    text = (realdata / "cpu" / name).read_text()
    expected = name.split("-", 2)[2]
    kind = name.split("-")[0]
    if kind == "windows":
        tables = archspec_tables()
        decoded = decode_cpuid(parse_cpuid_dump(text), tables["cpuid"])
        info = CpuInfo("x86_64", "Windows", decoded.vendor, decoded.brand, decoded.features)
        assert resolve(info).name == expected
        return
    if kind == "darwin":
        version = MACOS[name.split("-")[1]]
        res = probe(darwin_sysroot(tmp_path, text, version, source=f"archspec target {name}"))
    else:
        res = probe(linux_sysroot(tmp_path, text, KERNEL_ARCH.get(name)))
    cpu: dict[str, Any] = res.cpu or {}
    assert [p for p in res.probes if not p.ok] == []
    if name in UNDECIDABLE:
        _, _, archspec_says = UNDECIDABLE[name]
        assert cpu["microarchitecture"] == archspec_says
        # With the kernel saying big-endian ppc64, the file's own name comes out.
        other = probe(linux_sysroot(tmp_path / "be", text, "ppc64"))
        assert (other.cpu or {})["microarchitecture"] == expected
        return
    assert cpu["microarchitecture"] == expected
    if cpu["arch"] == "x86_64":
        assert cpu["x86_64_level"] == generic_level(expected)
        assert cpu["vendor"] in ("GenuineIntel", "AuthenticAMD")
        assert cpu["model"]
    else:
        assert cpu["x86_64_level"] is None
    assert cpu["features"] == sorted(cpu["features"])
    apple = [a for a in res.accelerators if a["vendor"] == "apple"]
    if kind == "darwin" and cpu["arch"] == "aarch64":
        assert len(apple) == 1
        assert apple[0]["mps"] is (tuple(int(x) for x in version.split(".")) >= (12, 3))
        assert apple[0]["macos"] == version
    else:
        assert apple == []


def test_darwin_fake_sysctl_answers_exactly_the_provider_call(realdata: Path, tmp_path: Path) -> None:
    """The fake tool prints the subtree of each name asked and nothing else, like sysctl -i."""
    dump = (realdata / "cpu" / "darwin-sequoia-m4").read_text()
    root = darwin_sysroot(tmp_path, dump, "15.3.1")
    out = System.from_sysroot(root, environ={"PATH": "/usr/bin:/bin"}).run("sysctl", *SYSCTL_ARGS)
    lines = out.stdout.splitlines()
    assert out.returncode == 0
    assert "machdep.cpu.brand_string: Apple M4 Max" in lines
    assert "hw.optional.arm.FEAT_SME2: 1" in lines
    assert all(line.startswith(("machdep.cpu.", "hw.optional.")) for line in lines)
    assert not any(line.startswith("machdep.wake_abstime") for line in lines)


@pytest.mark.parametrize(
    ("name", "level", "must_have", "must_lack"),
    [
        ("linux-unknown-sapphirerapids", "v4", {"amx_tile", "amx_bf16", "amx_int8", "avx512_bf16"}, set()),
        ("linux-rocky8.5-zen4", "v4", {"avx512_bf16", "avx512_vnni"}, {"amx_tile"}),
        ("linux-ubuntu24.04-alderlake", "v3", {"avx_vnni"}, {"avx512f"}),
        ("linux-scientific7-k10", "v1", {"sse4a"}, {"ssse3"}),
        ("linux-amazon-neoverse_v1", None, {"sve", "bf16", "i8mm"}, {"sve2"}),
        ("linux-rhel9-neoverse_v2", None, {"sve2", "svebf16"}, set()),
    ],
)
def test_ai_relevant_features(
    name: str, level: str | None, must_have: set[str], must_lack: set[str], realdata: Path, tmp_path: Path
) -> None:
    cpu = probe(linux_sysroot(tmp_path, (realdata / "cpu" / name).read_text())).cpu or {}
    assert cpu["x86_64_level"] == level
    assert must_have <= set(cpu["features"])
    assert not must_lack & set(cpu["features"])


def test_apple_silicon_features_in_linux_spelling(realdata: Path, tmp_path: Path) -> None:
    m4 = probe(darwin_sysroot(tmp_path / "m4", (realdata / "cpu" / "darwin-sequoia-m4").read_text(), "15.3.1"))
    m1 = probe(darwin_sysroot(tmp_path / "m1", (realdata / "cpu" / "darwin-monterey-m1").read_text(), "12.6"))
    m4f, m1f = set((m4.cpu or {})["features"]), set((m1.cpu or {})["features"])
    assert {"asimd", "asimddp", "bf16", "i8mm", "sme", "sme2"} <= m4f
    assert {"asimd", "asimddp"} <= m1f
    # M1 records FEAT_BF16: 0 and FEAT_I8MM: 0 (tests/data/realdata/cpu/darwin-monterey-m1)
    assert not {"bf16", "i8mm", "sme"} & m1f
    assert (m4.cpu or {})["vendor"] == "Apple"
    assert m4.accelerators[0]["name"] == "Apple M4 Max GPU"
