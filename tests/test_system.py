"""wheelfit_probekit.System: sysroot-confined reads and tools with real deadlines."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from wheelfit_probekit import ProbeError, ProbeTimeout, System


def tool(root: Path, rel: str, body: str) -> Path:
    p = root / rel
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text("#!/bin/sh\n" + body + "\n")
    p.chmod(0o755)
    return p


def make(root: Path, rel: str, text: str) -> None:
    p = root / rel
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(text)


def test_reads_happen_under_the_sysroot(tmp_path: Path) -> None:
    make(tmp_path, "sys/module/nvidia/version", "580.95.05\n")
    s = System.from_sysroot(tmp_path, environ={})
    assert s.read_text("/sys/module/nvidia/version") == "580.95.05\n"
    assert s.read_text("/proc/driver/nvidia/version") is None  # absent in the tree, whatever the host has
    assert s.is_sysroot and not s.native


def test_unreadable_file_is_a_probe_error_naming_it(tmp_path: Path) -> None:
    loop = tmp_path / "sys/class/kfd/kfd/topology/nodes/1/properties"
    loop.parent.mkdir(parents=True)
    loop.symlink_to(loop.name)  # a symlink to itself: ELOOP, unreadable even for root
    s = System.from_sysroot(tmp_path, environ={})
    with pytest.raises(ProbeError, match=r"nodes/1/properties.*ELOOP"):
        s.read_text("/sys/class/kfd/kfd/topology/nodes/1/properties")


def test_oversized_file_is_refused(tmp_path: Path) -> None:
    make(tmp_path, "proc/cpuinfo", "x" * 2000)
    with pytest.raises(ProbeError, match="larger than"):
        System.from_sysroot(tmp_path, environ={}).read_text("/proc/cpuinfo", limit=1000)


def test_tools_are_found_only_inside_the_sysroot(tmp_path: Path) -> None:
    s = System.from_sysroot(tmp_path, environ={"PATH": os.environ.get("PATH", "")})
    assert s.which("sh") is None  # the host's /bin/sh is not the simulated machine's
    tool(tmp_path, "usr/lib/wsl/lib/nvidia-smi", "echo 572.60")
    found = s.which("nvidia-smi")
    assert found == tmp_path / "usr/lib/wsl/lib/nvidia-smi"
    with pytest.raises(ProbeError, match="rocminfo not found"):
        s.run("rocminfo")


def test_run_returns_exit_status_and_output(tmp_path: Path) -> None:
    tool(tmp_path, "usr/bin/nvidia-smi", 'echo "NVIDIA-SMI has failed because it couldn\'t communicate"; exit 9')
    r = System.from_sysroot(tmp_path, environ={}).run("nvidia-smi", "--query-gpu=name", "--format=csv,noheader")
    assert r.returncode == 9 and not r.ok
    assert r.first_line().startswith("NVIDIA-SMI has failed")
    assert r.argv == ("nvidia-smi", "--query-gpu=name", "--format=csv,noheader")


def test_hanging_tool_and_its_children_are_killed_at_the_deadline(tmp_path: Path) -> None:
    # The shell's child keeps stdout open: killing only the shell would leave the read hanging.
    tool(tmp_path, "usr/bin/rocminfo", "sleep 30; echo never")
    s = System.from_sysroot(tmp_path, environ={}, command_timeout=0.5)
    start = time.monotonic()
    with pytest.raises(ProbeTimeout, match=r"rocminfo did not answer within 0.5 s"):
        s.run("rocminfo")
    assert time.monotonic() - start < 5


def test_tool_that_cannot_start_is_a_probe_error(tmp_path: Path) -> None:
    p = tmp_path / "usr/bin/nvidia-smi"
    p.parent.mkdir(parents=True)
    p.write_bytes(b"\x7fELF garbage")
    p.chmod(0o755)
    with pytest.raises(ProbeError, match="could not start"):
        System.from_sysroot(tmp_path, environ={}).run("nvidia-smi")


def test_os_of_a_sysroot_is_read_from_its_layout(tmp_path: Path) -> None:
    assert System.from_sysroot(tmp_path, environ={}).os_name == "Linux"
    make(tmp_path, "System/Library/CoreServices/SystemVersion.plist", "<plist/>")
    assert System.from_sysroot(tmp_path, environ={}).os_name == "Darwin"


def test_a_tool_that_exits_is_not_waited_for_while_its_child_holds_the_output(tmp_path: Path) -> None:
    # nvidia-smi answered and exited; a child it left (a daemon, a wrapper's `sleep &`) still holds stdout.
    tool(tmp_path, "usr/bin/nvidia-smi", "sleep 30 &\necho '0, NVIDIA GeForce GTX 1080'")
    s = System.from_sysroot(tmp_path, environ={}, command_timeout=20)
    start = time.monotonic()
    r = s.run("nvidia-smi")
    assert time.monotonic() - start < 3  # not the 20 s deadline, nor the child's 30 s
    assert r.ok and r.stdout == "0, NVIDIA GeForce GTX 1080\n"


def test_a_flood_of_output_is_bounded_and_counted(tmp_path: Path) -> None:
    from wheelfit_probekit.system import MAX_OUTPUT

    # 6 MiB on stdout: more than the cap, and more than a pipe holds (a reader that stopped would hang it).
    tool(tmp_path, "usr/bin/rocminfo", "head -c 6291456 /dev/zero | tr '\\\\0' x")
    r = System.from_sysroot(tmp_path, environ={"PATH": "/usr/bin:/bin"}, command_timeout=20).run("rocminfo")
    assert len(r.stdout) == MAX_OUTPUT
    assert r.discarded == 6291456 - MAX_OUTPUT


def test_a_fifo_where_a_sysfs_attribute_should_be_is_refused_at_once(tmp_path: Path) -> None:
    # Opening a FIFO for reading blocks until a writer comes: the read would hold the detector forever.
    fifo = tmp_path / "sys/module/nvidia/version"
    fifo.parent.mkdir(parents=True)
    os.mkfifo(fifo)
    s = System.from_sysroot(tmp_path, environ={})
    start = time.monotonic()
    with pytest.raises(ProbeError, match=r"cannot read /sys/module/nvidia/version: it is a FIFO, not a regular file"):
        s.read_text("/sys/module/nvidia/version")
    assert time.monotonic() - start < 1


def test_a_directory_where_a_file_should_be_is_a_probe_error(tmp_path: Path) -> None:
    (tmp_path / "proc/cpuinfo").mkdir(parents=True)
    with pytest.raises(ProbeError, match="it is a directory"):
        System.from_sysroot(tmp_path, environ={}).read_text("/proc/cpuinfo")
