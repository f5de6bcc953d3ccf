"""sysfs/DRM scanning and usability gating, on sysroot trees in the real sysfs layout."""

from __future__ import annotations

import os
from pathlib import Path

from wheelfit_intel import PROVIDER
from wheelfit_intel.drm import IntelGpu, scan_intel_gpus, unusable_reason
from wheelfit_probekit import ProbeRecord, System


def _write(p: Path, text: str) -> None:
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(text)


def _link(p: Path, target: str) -> None:
    p.parent.mkdir(parents=True, exist_ok=True)
    os.symlink(target, p)


def add_pci(
    root: Path,
    slot: str,
    device: int,
    cls: int = 0x030000,
    driver: str | None = None,
    render: str | None = None,
    *,
    vendor: int = 0x8086,
    device_drm_dir: bool = True,
    dev_node: bool = True,
) -> Path:
    """One PCI function laid out like /sys/devices/pci0000:00/<slot>, with bus and class symlinks."""
    d = root / "sys/devices/pci0000:00" / slot
    _write(d / "vendor", f"0x{vendor:04x}\n")
    _write(d / "device", f"0x{device:04x}\n")
    _write(d / "class", f"0x{cls:06x}\n")
    _link(root / "sys/bus/pci/devices" / slot, f"../../../devices/pci0000:00/{slot}")
    if driver:
        _write(root / "sys/bus/pci/drivers" / driver / "bind", "")
        _link(d / "driver", f"../../../bus/pci/drivers/{driver}")
    if render:
        if device_drm_dir:
            _link(d / "drm" / render / "device", f"../../../{slot}")
            _link(root / "sys/class/drm" / render, f"../../devices/pci0000:00/{slot}/drm/{render}")
        if dev_node:
            _write(root / "dev/dri" / render, "")
    return d


def _sys(root: Path) -> System:
    return System.from_sysroot(root, environ={})


def _failed(probes: list[ProbeRecord]) -> list[ProbeRecord]:
    return [p for p in probes if not p.ok]


def test_scan_keeps_intel_display_class_only(tmp_path: Path) -> None:
    add_pci(tmp_path, "0000:00:02.0", 0x7D55, driver="i915", render="renderD128")
    add_pci(tmp_path, "0000:00:0b.0", 0x7D1D, cls=0x120000, driver="intel_vpu")  # NPU: processing accelerator
    add_pci(tmp_path, "0000:01:00.0", 0x2684, vendor=0x10DE, driver="nvidia", render="renderD129")
    gpus = scan_intel_gpus(_sys(tmp_path))
    assert gpus == [IntelGpu("0000:00:02.0", 0x7D55, "i915", ("renderD128",), ("renderD128",))]


def test_render_node_found_through_class_drm_only(tmp_path: Path) -> None:
    # Some kernels' sysfs copies only keep /sys/class/drm: the device link still names the slot.
    add_pci(tmp_path, "0000:03:00.0", 0xE20B, driver="xe")
    _link(tmp_path / "sys/class/drm/renderD130", "../../devices/pci0000:00/0000:03:00.0/drm/renderD130")
    _link(tmp_path / "sys/devices/pci0000:00/0000:03:00.0/drm/renderD130/device", "../../../0000:03:00.0")
    _write(tmp_path / "dev/dri/renderD130", "")
    (gpu,) = scan_intel_gpus(_sys(tmp_path))
    assert (gpu.render_nodes, gpu.openable_nodes, gpu.mapped) == (("renderD130",), ("renderD130",), True)


def test_a_render_node_of_another_gpu_does_not_count(tmp_path: Path) -> None:
    add_pci(tmp_path, "0000:01:00.0", 0x744C, vendor=0x1002, driver="amdgpu", render="renderD128")
    add_pci(tmp_path, "0000:03:00.0", 0xE20B, driver="xe", render="renderD129", dev_node=False)
    (gpu,) = scan_intel_gpus(_sys(tmp_path))
    assert gpu.openable_nodes == ()
    assert "renderD129" in (unusable_reason(gpu) or "")


def test_without_any_sysfs_drm_link_any_openable_render_node_is_accepted(tmp_path: Path) -> None:
    add_pci(tmp_path, "0000:00:02.0", 0x64A0, driver="xe", render="renderD128", device_drm_dir=False)
    (gpu,) = scan_intel_gpus(_sys(tmp_path))
    assert (gpu.render_nodes, gpu.openable_nodes, gpu.mapped) == ((), ("renderD128",), False)
    assert unusable_reason(gpu) is None


def test_unreadable_drm_directory_does_not_stop_the_scan(tmp_path: Path) -> None:
    d = add_pci(tmp_path, "0000:00:02.0", 0x64A0, driver="xe")
    os.symlink("drm", d / "drm")  # ELOOP, fails for root too
    add_pci(tmp_path, "0000:03:00.0", 0xE20B, driver="xe", render="renderD129")
    gpus = scan_intel_gpus(_sys(tmp_path))
    assert [(g.slot, g.openable_nodes) for g in gpus] == [("0000:00:02.0", ()), ("0000:03:00.0", ("renderD129",))]


def test_unusable_reasons() -> None:
    unbound = unusable_reason(IntelGpu("s", 0xE20B, None, (), ()))
    assert unbound == "not bound to any kernel driver (PyTorch XPU needs i915 or xe)"
    assert "bound to vfio-pci" in (unusable_reason(IntelGpu("s", 0xE20B, "vfio-pci", ("renderD128",), ())) or "")
    assert "no /dev/dri/renderD* node" in (unusable_reason(IntelGpu("s", 0xE20B, "xe", (), ())) or "")
    assert unusable_reason(IntelGpu("s", 0xE20B, "i915", ("renderD128",), ("renderD128",))) is None


def test_provider_unbound_gpu_is_not_listed_and_hints_at_the_driver(tmp_path: Path) -> None:
    add_pci(tmp_path, "0000:03:00.0", 0x56A0)
    result = PROVIDER.probe(_sys(tmp_path))
    assert result.accelerators == []
    (failed,) = _failed(result.probes)
    assert failed.source == "drm"
    assert "Intel Arc A770 (8086:56a0) at 0000:03:00.0: not bound" in (failed.error or "")
    assert "i915" in (failed.hint or "") and "nomodeset" in (failed.hint or "")


def test_provider_lists_a_legacy_igpu_as_not_xpu(tmp_path: Path) -> None:
    add_pci(tmp_path, "0000:00:02.0", 0x5916, driver="i915", render="renderD128")
    result = PROVIDER.probe(_sys(tmp_path))
    (acc,) = result.accelerators
    assert (acc["name"], acc["family"], acc["xpu_capable"], acc["integrated"]) == (
        "Intel HD Graphics 620",
        "legacy",
        False,
        True,
    )
    scan = next(p for p in result.probes if p.source == "pci-sysfs")
    assert scan.ok and "not a PyTorch XPU device" in (scan.detail or "")
    l0 = next(p for p in result.probes if p.source == "level-zero")
    assert l0.ok and "no usable XPU-capable" in (l0.detail or "")


def test_provider_garbage_pci_entry_is_skipped(tmp_path: Path) -> None:
    d = add_pci(tmp_path, "0000:00:02.0", 0x64A0, driver="xe", render="renderD128")
    (d / "device").write_text("garbage\n")
    add_pci(tmp_path, "0000:03:00.0", 0xE20B, driver="xe", render="renderD129")
    result = PROVIDER.probe(_sys(tmp_path))
    assert [a["pci_id"] for a in result.accelerators] == ["8086:e20b"]


def test_provider_unreadable_pci_directory_is_a_failed_probe(tmp_path: Path) -> None:
    (tmp_path / "sys/bus/pci").mkdir(parents=True)
    os.symlink("devices", tmp_path / "sys/bus/pci/devices")  # ELOOP
    result = PROVIDER.probe(_sys(tmp_path))
    assert result.accelerators == []
    (failed,) = _failed(result.probes)
    assert failed.source == "pci-sysfs" and "sys/bus/pci/devices" in (failed.error or "")


def test_provider_skips_non_linux(tmp_path: Path) -> None:
    (tmp_path / "Windows/System32").mkdir(parents=True)
    result = PROVIDER.probe(_sys(tmp_path))
    assert result.accelerators == []
    assert [(p.source, p.ok) for p in result.probes] == [("pci-sysfs", True)]
    assert "Windows" in (result.probes[0].detail or "")
