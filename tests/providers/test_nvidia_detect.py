"""Usability gating and source merging on small sysroots built per test (real file formats, fake tools)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from wheelfit_nvidia import PROVIDER
from wheelfit_probekit import ProbeRecord, System

NVRM = "NVRM version: NVIDIA UNIX x86_64 Kernel Module  570.86.15  Wed Jan 22 2025\n"
QUERY = "--query-gpu=index,name,pci.bus_id,compute_cap,driver_version,uuid --format=csv,noheader"


def _write(root: Path, rel: str, text: str, mode: int | None = None) -> None:
    p = root / rel
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(text)
    if mode is not None:
        p.chmod(mode)


def _gpu(root: Path, slot: str, device: str, driver: str | None = "nvidia", cls: str = "0x030000") -> None:
    base = f"sys/bus/pci/devices/{slot}"
    _write(root, f"{base}/vendor", "0x10de\n")
    _write(root, f"{base}/device", f"0x{device}\n")
    _write(root, f"{base}/class", f"{cls}\n")
    if driver is not None:
        (root / f"sys/bus/pci/drivers/{driver}").mkdir(parents=True, exist_ok=True)
        os.symlink(f"../../../bus/pci/drivers/{driver}", root / f"{base}/driver")


def _driver(root: Path, minors: tuple[int, ...] = (0,)) -> None:
    _write(root, "sys/module/nvidia/version", "570.86.15\n")
    _write(root, "proc/driver/nvidia/version", NVRM)
    for name in ("nvidiactl", *(f"nvidia{m}" for m in minors)):
        _write(root, f"dev/{name}", "")


def _smi(root: Path, body: str) -> None:
    _write(root, "usr/bin/nvidia-smi", f"#!/bin/sh\n{body}\n", 0o755)


def _run(root: Path, **env: str) -> tuple[list[dict[str, Any]], list[ProbeRecord]]:
    result = PROVIDER.probe(System.from_sysroot(root, environ={"PATH": "/usr/bin:/bin", **env}, command_timeout=5))
    return result.accelerators, result.probes


def _failed(probes: list[ProbeRecord]) -> list[ProbeRecord]:
    return [p for p in probes if not p.ok]


def test_gpu_bound_to_nouveau_is_not_usable(tmp_path: Path) -> None:
    _driver(tmp_path)
    _gpu(tmp_path, "0000:01:00.0", "2684", driver="nouveau")
    accels, probes = _run(tmp_path)
    assert accels == []
    (bad,) = _failed(probes)
    assert "bound to the nouveau driver" in (bad.error or "")
    assert "NVIDIA GeForce RTX 4090 (0000:01:00.0)" in (bad.error or "")


def test_the_device_minor_node_must_exist(tmp_path: Path) -> None:
    _driver(tmp_path, minors=(0,))
    _gpu(tmp_path, "0000:01:00.0", "2330", cls="0x030200")
    _write(
        tmp_path,
        "proc/driver/nvidia/gpus/0000:01:00.0/information",
        "Model: \t\t NVIDIA H100 80GB HBM3\nGPU UUID: \t GPU-1\nBus Location: \t 0000:01:00.0\nDevice Minor: \t 3\n",
    )
    accels, probes = _run(tmp_path)
    assert accels == []
    assert "/dev/nvidia3" in (_failed(probes)[0].error or "")


def test_a_device_node_that_cannot_be_opened_counts_as_missing(tmp_path: Path) -> None:
    _driver(tmp_path, minors=())
    os.symlink("nvidia0", tmp_path / "dev/nvidia0")  # ELOOP, which fails for root too
    _gpu(tmp_path, "0000:01:00.0", "1b80")
    accels, probes = _run(tmp_path)
    assert accels == []
    assert _failed(probes)[0].hint is not None


def test_gpus_the_driver_does_not_expose_are_left_out(tmp_path: Path) -> None:
    # A container given one of two host GPUs: sysfs shows both, nvidia-smi only the one passed in.
    _driver(tmp_path)
    _gpu(tmp_path, "0000:01:00.0", "2230")
    _gpu(tmp_path, "0000:02:00.0", "2230")
    _smi(
        tmp_path,
        f'[ "$*" = "{QUERY}" ] || exit 64\necho "0, NVIDIA RTX A6000, 00000000:02:00.0, 8.6, 570.86.15, GPU-2"',
    )
    accels, probes = _run(tmp_path)
    assert [(a["pci_id"], a["index"], a["uuid"]) for a in accels] == [("10de:2230", 0, "GPU-2")]
    assert any(p.source == "pci-sysfs" and "0000:01:00.0" in (p.detail or "") for p in probes)


def test_nvml_unknown_error_is_a_failed_probe_with_a_hint(tmp_path: Path) -> None:
    _driver(tmp_path)
    _gpu(tmp_path, "0000:01:00.0", "2204")
    _smi(tmp_path, 'echo "Failed to initialize NVML: Unknown Error"\nexit 255')
    accels, probes = _run(tmp_path)
    # The kernel side is healthy and the nodes exist: the GPU still comes from PCI sysfs.
    assert [(a["source"], a["compute_capability"], a["cuda_driver_version"]) for a in accels] == [
        ("pci-sysfs", "8.6", "12.8")
    ]
    (smi,) = [p for p in probes if p.source == "nvidia-smi"]
    assert smi.error == "exit 255: Failed to initialize NVML: Unknown Error"
    assert smi.hint is not None and "reboot" in smi.hint


def test_unknown_device_id_gets_a_flagged_guess(tmp_path: Path) -> None:
    _driver(tmp_path)
    _gpu(tmp_path, "0000:01:00.0", "2c05")
    accels, probes = _run(tmp_path, CUDA_VISIBLE_DEVICES="")
    assert [(a["name"], a["compute_capability"], a["visible"]) for a in accels] == [
        ("NVIDIA GPU 10de:2c05", "12.0", False)
    ]
    (table,) = [p for p in probes if p.source == "pci-id-table"]
    assert "guessed" in (table.detail or "")
    (cvd,) = [p for p in probes if p.source == "cuda-visible-devices"]
    assert "visible GPU(s) none" in (cvd.detail or "")


def test_an_unreadable_version_file_is_a_failed_probe(tmp_path: Path) -> None:
    (tmp_path / "sys/module/nvidia").mkdir(parents=True)
    os.symlink("version", tmp_path / "sys/module/nvidia/version")
    accels, probes = _run(tmp_path)
    assert accels == []
    (bad,) = _failed(probes)
    assert bad.source == "sys-module-version" and "cannot read" in (bad.error or "")


def test_a_tool_that_repeats_itself_gives_one_gpu_per_bus_id_and_says_what_it_dropped(tmp_path: Path) -> None:
    # A broken nvidia-smi (or a wrapper looping over it) printing the same GPU 20000 times, and a second GPU twice.
    _driver(tmp_path, minors=(0, 1))
    _gpu(tmp_path, "0000:01:00.0", "1b80")
    _gpu(tmp_path, "0000:02:00.0", "2684")
    line = "0, NVIDIA GeForce GTX 1080, 00000000:01:00.0, 6.1, 570.86.15, GPU-1"
    other = "1, NVIDIA GeForce RTX 4090, 00000000:02:00.0, 8.9, 570.86.15, GPU-2"
    _smi(tmp_path, f'[ "$*" = "{QUERY}" ] || exit 64\ni=0\nwhile [ $i -lt 20000 ]; do echo "{line}"; i=$((i+1)); done\n'
         f'echo "{other}"\necho "{other}"')  # fmt: skip
    accels, probes = _run(tmp_path)
    assert [(a["name"], a["index"]) for a in accels] == [("NVIDIA GeForce GTX 1080", 0), ("NVIDIA GeForce RTX 4090", 1)]
    (note,) = [p for p in probes if p.source == "nvidia-smi-duplicates"]
    assert note.detail == (
        "20000 repeated GPU entries discarded (one GPU per PCI bus id and index): 0000:01:00.0 x19999, 0000:02:00.0 x1"
    )


def test_two_gpus_claiming_one_index_keep_the_first(tmp_path: Path) -> None:
    # Issue 15 (fuzzing): an index is the CUDA ordinal, so a second GPU at index 0 would make visibility wrong.
    _driver(tmp_path, minors=(0, 1))
    _gpu(tmp_path, "0000:01:00.0", "1b80")
    _gpu(tmp_path, "0000:07:00.0", "20b0")
    _smi(tmp_path, f'[ "$*" = "{QUERY}" ] || exit 64\n'
         'echo "0, NVIDIA GeForce GTX 1080, 00000000:01:00.0, 6.1, 580.95.05, GPU-1"\n'
         'echo "0, NVIDIA A100-SXM4-40GB, 00000000:07:00.0, 8.0, 580.95.05, GPU-2"')  # fmt: skip
    accels, probes = _run(tmp_path)
    assert [(a["name"], a["index"]) for a in accels] == [("NVIDIA GeForce GTX 1080", 0)]
    (note,) = [p for p in probes if p.source == "nvidia-smi-duplicates"]
    assert note.detail == "1 repeated GPU entries discarded (one GPU per PCI bus id and index): index 0 x1"


def test_an_nvidia_smi_index_too_large_for_a_machine_is_refused(tmp_path: Path) -> None:
    # Issue 15 (fuzzing): the index sizes a per-index table; 99999999 would have allocated 800 MB.
    _driver(tmp_path, minors=(0,))
    _gpu(tmp_path, "0000:01:00.0", "1b80")
    _smi(tmp_path, f'[ "$*" = "{QUERY}" ] || exit 64\n'
         'echo "99999999, NVIDIA GeForce GTX 1080, 00000000:01:00.0, 6.1, 580.95.05, GPU-1"')  # fmt: skip
    accels, probes = _run(tmp_path)
    assert accels[0]["source"] == "pci-sysfs"  # nvidia-smi's line is refused; the PCI bus still shows the GPU
    (smi,) = [p.error for p in probes if p.source == "nvidia-smi"]
    assert smi is not None and smi.startswith("unrecognised output: '99999999, NVIDIA GeForce GTX 1080")
