"""PCI devices from sysfs: present with or without a driver, the one source every GPU vendor shares."""

from __future__ import annotations

from dataclasses import dataclass

from .system import System, parse_int

__all__ = ["PCI_DEVICES", "PciDevice", "scan_pci"]

PCI_DEVICES = "/sys/bus/pci/devices"

#: PCI base classes that hold GPUs and accelerators: display (VGA 0x0300, 3D 0x0302,
#: other 0x0380) and processing accelerators (0x12, AMD Instinct).
GPU_BASE_CLASSES = (0x03, 0x12)


@dataclass(frozen=True)
class PciDevice:
    """One PCI function as sysfs shows it."""

    slot: str
    vendor: int
    device: int
    pci_class: int
    driver: str | None
    subsystem_vendor: int | None = None
    subsystem_device: int | None = None

    @property
    def pci_id(self) -> str:
        return f"{self.vendor:04x}:{self.device:04x}"

    @property
    def base_class(self) -> int:
        return self.pci_class >> 16

    @property
    def is_gpu_class(self) -> bool:
        return self.base_class in GPU_BASE_CLASSES


def scan_pci(system: System, vendor: int | None = None, gpus_only: bool = True) -> list[PciDevice]:
    """PCI functions, sorted by slot; entries with unreadable or garbage ids (not 16-bit vendor and device ids
    and a 24-bit class, as the kernel writes them) are skipped.

    ``gpus_only`` keeps display and accelerator classes, dropping e.g. a GPU's
    HDMI-audio function (class 0x0403) and bridges.
    """
    found: list[PciDevice] = []
    for slot in system.listdir(PCI_DEVICES):
        base = f"{PCI_DEVICES}/{slot}"
        ven = parse_int(_read(system, f"{base}/vendor"), 16)
        dev = parse_int(_read(system, f"{base}/device"), 16)
        cls = parse_int(_read(system, f"{base}/class"), 16)
        if ven is None or dev is None or cls is None or ven > 0xFFFF or dev > 0xFFFF or cls > 0xFFFFFF:
            continue
        if vendor is not None and ven != vendor:
            continue
        d = PciDevice(
            slot=slot,
            vendor=ven,
            device=dev,
            pci_class=cls,
            driver=system.link_name(f"{base}/driver"),
            subsystem_vendor=_id16(_read(system, f"{base}/subsystem_vendor")),
            subsystem_device=_id16(_read(system, f"{base}/subsystem_device")),
        )
        if gpus_only and not d.is_gpu_class:
            continue
        found.append(d)
    return found


def _id16(text: str | None) -> int | None:
    value = parse_int(text, 16)
    return value if value is not None and value <= 0xFFFF else None


def _read(system: System, path: str) -> str | None:
    try:
        return system.read_text(path, limit=64)
    except Exception:  # noqa: BLE001 - one unreadable attribute skips one device, not the scan
        return None
