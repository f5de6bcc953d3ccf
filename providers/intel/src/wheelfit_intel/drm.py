"""Intel GPUs as sysfs shows them: PCI function, kernel driver and DRM render nodes.

sysfs lists the host's GPUs even inside a container that was given none, so a
GPU counts as usable only when it is bound to an Intel GPU driver and one of its
render nodes can be opened (a container gets ``/dev/dri/renderD*`` only for the GPUs passed to it).
"""

from __future__ import annotations

from dataclasses import dataclass

from wheelfit_probekit import PciDevice, ProbeError, System, scan_pci

from .devices import INTEL_VENDOR

__all__ = ["GPU_DRIVERS", "IntelGpu", "scan_intel_gpus", "unusable_reason"]

#: Kernel drivers that give PyTorch XPU (Level Zero) a device: Linux's ``i915`` and ``xe`` DRM drivers.
GPU_DRIVERS = ("i915", "xe")
DISPLAY_BASE_CLASS = 0x03
PCI_DEVICES = "/sys/bus/pci/devices"
CLASS_DRM = "/sys/class/drm"
DEV_DRI = "/dev/dri"


@dataclass(frozen=True)
class IntelGpu:
    """One Intel display-class PCI function and its DRM nodes."""

    slot: str
    device: int
    driver: str | None
    #: ``renderD*`` names sysfs ties to this PCI function.
    render_nodes: tuple[str, ...]
    #: The subset of ``render_nodes`` this process can open; when sysfs ties none to
    #: this GPU, the ``/dev/dri/renderD*`` nodes sysfs gives to no other GPU.
    openable_nodes: tuple[str, ...]
    #: False when sysfs ties no DRM node to the device, so any openable node was accepted.
    mapped: bool = True


def scan_intel_gpus(system: System) -> list[IntelGpu]:
    """Intel display-class (0x03xxxx) PCI functions, sorted by slot.

    Processing accelerators (class 0x12, e.g. an NPU) share the vendor ID but are
    not GPUs, so only base class 0x03 is kept.
    """
    class_links = _class_drm_render_links(system)
    dev_nodes = [n for n in _listdir(system, DEV_DRI) if n.startswith("renderD")]
    found: list[tuple[PciDevice, list[str]]] = []
    for pci in scan_pci(system, vendor=INTEL_VENDOR):
        if pci.base_class != DISPLAY_BASE_CLASS:
            continue
        nodes = sorted(
            {n for n in _listdir(system, f"{PCI_DEVICES}/{pci.slot}/drm") if n.startswith("renderD")}
            | {n for n, slot in class_links.items() if slot == pci.slot}
        )
        found.append((pci, nodes))
    # A GPU that sysfs ties to no node may use any /dev/dri node that sysfs does not give to another GPU.
    taken = set(class_links).union(*(nodes for _, nodes in found))
    unclaimed = [n for n in dev_nodes if n not in taken]
    gpus: list[IntelGpu] = []
    for pci, nodes in found:
        candidates = nodes or unclaimed
        openable = tuple(n for n in candidates if system.can_open(f"{DEV_DRI}/{n}"))
        gpus.append(IntelGpu(pci.slot, pci.device, pci.driver, tuple(nodes), openable, mapped=bool(nodes)))
    return gpus


def _class_drm_render_links(system: System) -> dict[str, str]:
    """``renderD128`` -> PCI slot, from ``/sys/class/drm/renderD*/device`` symlinks."""
    links: dict[str, str] = {}
    for name in _listdir(system, CLASS_DRM):
        if name.startswith("renderD"):
            slot = system.link_name(f"{CLASS_DRM}/{name}/device")
            if slot:
                links[name] = slot
    return links


def _listdir(system: System, path: str) -> list[str]:
    # An unreadable DRM directory means "no node known here", not a failed scan of every GPU.
    try:
        return system.listdir(path)
    except ProbeError:
        return []


def unusable_reason(gpu: IntelGpu) -> str | None:
    """Why PyTorch could not open this GPU, or None when it can."""
    if gpu.driver not in GPU_DRIVERS:
        bound = f"bound to {gpu.driver}" if gpu.driver else "not bound to any kernel driver"
        return f"{bound} (PyTorch XPU needs i915 or xe)"
    if not gpu.openable_nodes:
        if gpu.render_nodes:
            node = f"/dev/dri/{gpu.render_nodes[0]}"
            return f"driver {gpu.driver} is loaded but {node} is missing or not readable and writable"
        return f"driver {gpu.driver} is loaded but no /dev/dri/renderD* node can be opened"
    return None
