"""The Intel detector: which Intel GPUs this process can use, and whether PyTorch XPU runs on them.

Order: PCI sysfs (always, no driver or runtime needed) -> DRM gating (driver and
openable render node) -> Level Zero device IP (real machine only, in a child).
"""

from __future__ import annotations

from typing import Any

from wheelfit_probekit import ProbeLog, ProviderResult, System

from .devices import DeviceInfo, lookup
from .drm import GPU_DRIVERS, IntelGpu, scan_intel_gpus, unusable_reason
from .level_zero import ZeDevice, query_level_zero

__all__ = ["IntelProvider"]

HINT_DRIVER = (
    "load an Intel GPU kernel driver (i915, or xe on Lunar Lake/Battlemage/Panther Lake); "
    "a kernel booted with nomodeset leaves the GPU unbound"
)
HINT_NODE = (
    "in a container, pass the GPU in (docker run --device=/dev/dri); "
    "on the host, add the user to the render (and video) group"
)
HINT_LEVEL_ZERO = (
    "install the Intel GPU compute runtime (Level Zero loader libze_loader.so.1 and the GPU driver "
    "for it); PyTorch XPU needs it at run time"
)


class IntelProvider:
    """Entry point object for the ``wheelfit.providers`` group."""

    name = "intel"

    def probe(self, system: System) -> ProviderResult:
        log = ProbeLog(self.name)
        if system.os_name != "Linux":
            log.skipped("pci-sysfs", f"Intel GPU detection reads Linux sysfs; not available on {system.os_name}")
            return ProviderResult(probes=log.records)

        gpus: list[IntelGpu] = []
        with log.probe("pci-sysfs") as p:
            gpus = scan_intel_gpus(system)
            p.detail = _scan_detail(gpus)

        accelerators: list[dict[str, Any]] = []
        for gpu in gpus:
            info = lookup(gpu.device)
            reason = unusable_reason(gpu)
            if reason is not None:
                hint = HINT_DRIVER if gpu.driver not in GPU_DRIVERS else HINT_NODE
                log.failed("drm", f"{info.name} ({info.pci_id}) at {gpu.slot}: {reason}", hint=hint)
                continue
            accelerators.append(_entry(gpu, info))

        _add_device_ip(system, log, accelerators)
        return ProviderResult(accelerators=accelerators, probes=log.records)


def _scan_detail(gpus: list[IntelGpu]) -> str:
    if not gpus:
        return "no Intel display-class PCI device"
    parts = []
    for gpu in gpus:
        info = lookup(gpu.device)
        what = f"{info.pci_id} at {gpu.slot} [{gpu.driver or 'no driver'}] {info.name}: {info.family}"
        if not info.xpu_capable:
            what += " (not a PyTorch XPU device)"
        parts.append(what)
    return "; ".join(parts)


def _entry(gpu: IntelGpu, info: DeviceInfo) -> dict[str, Any]:
    return {
        "vendor": "intel",
        "name": info.name,
        "pci_id": info.pci_id,
        "source": "pci-sysfs",
        "integrated": info.integrated,
        "family": info.family,
        "xpu_capable": info.xpu_capable,
        "device_ip": None,
        "driver": gpu.driver,
        "slot": gpu.slot,
        "subfamily": info.subfamily,
        "aot_target": info.aot_target,
    }


def _add_device_ip(system: System, log: ProbeLog, accelerators: list[dict[str, Any]]) -> None:
    """Fill ``device_ip`` from Level Zero for XPU-capable GPUs it reports."""
    wanted = [a for a in accelerators if a["xpu_capable"]]
    if not wanted:
        log.skipped("level-zero", "no usable XPU-capable Intel GPU")
        return
    if not system.native:
        log.skipped("level-zero", "native libraries are not loaded under a sysroot")
        return
    with log.probe("level-zero") as p:
        p.hint = HINT_LEVEL_ZERO
        zdevs = query_level_zero(system)
        p.hint = None
        p.detail = apply_level_zero(wanted, zdevs)


def apply_level_zero(accelerators: list[dict[str, Any]], zdevs: list[ZeDevice]) -> str:
    """Match Level Zero devices to PCI GPUs by device ID; return a one-line summary.

    Root devices and sub-devices (PVC stacks) of one ID share an IP version, so a
    device-ID match is enough; Level Zero's base properties carry no PCI address.
    """
    by_id: dict[int, ZeDevice] = {}
    for z in zdevs:
        if z.vendor_id == 0x8086 and (z.device_id not in by_id or by_id[z.device_id].ip_version is None):
            by_id[z.device_id] = z
    matched = 0
    for acc in accelerators:
        hit = by_id.get(int(acc["pci_id"].split(":")[1], 16))
        if hit is None:
            continue
        matched += 1
        acc["source"] = "level-zero"
        acc["device_ip"] = hit.device_ip
    seen = ", ".join(f"{z.name or hex(z.device_id)} ip {z.device_ip or '?'}" for z in zdevs) or "no GPU"
    return f"{len(zdevs)} Level Zero GPU device(s) ({seen}); {matched} of {len(accelerators)} matched by device ID"
