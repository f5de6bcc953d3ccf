"""KFD topology sysfs: one node per CPU or GPU agent, the physical gfx target of each GPU.

Linux ``drivers/gpu/drm/amd/amdkfd/kfd_topology.c`` (and libhsakmt's ``topology.c``, which parses it):
``properties`` holds ``name value`` lines with decimal values;
CPU nodes have ``gfx_target_version 0``; GPU nodes of a device the caller's
device cgroup hides return EPERM.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from wheelfit_probekit import ProbeError, System

from .gfx import decode_target_version

__all__ = [
    "AMD_VENDOR_ID",
    "KFD_NODES",
    "KfdNode",
    "KfdTopology",
    "node_from_properties",
    "parse_properties",
    "read_topology",
]

KFD_NODES = "/sys/class/kfd/kfd/topology/nodes"
#: 0x1002 as KFD writes it (decimal).
AMD_VENDOR_ID = 4098


def parse_properties(text: str) -> dict[str, str]:
    """``name value`` lines -> dict of raw strings (first occurrence wins, like libhsakmt's scan)."""
    out: dict[str, str] = {}
    for line in text.splitlines():
        parts = line.split(None, 1)
        if len(parts) == 2 and parts[0] not in out:
            out[parts[0]] = parts[1].strip()
    return out


def _int(props: dict[str, str], key: str, limit: int | None = None) -> int | None:
    """An unsigned decimal as KFD prints it (``%u``/``%llu``), at most ``limit``; ``None`` for anything else
    (``int`` alone would take ``-1``, ``+7``, ``1_0`` and non-ASCII digits, and a PCI id must fit its 16 bits)."""
    value = props.get(key, "")
    if not (value.isascii() and value.isdigit()):
        return None
    number = int(value)
    return number if limit is None or number <= limit else None


@dataclass(frozen=True)
class KfdNode:
    """One AMD GPU agent as KFD describes it."""

    node: int
    gfx: str
    device_id: int
    #: PCI address ``dddd:bb:dd.f`` from ``domain`` and ``location_id`` (bus << 8 | devfn).
    slot: str | None
    render_minor: int | None
    compute_units: int | None
    gpu_family: str | None = None

    @property
    def pci_id(self) -> str:
        return f"1002:{self.device_id:04x}"


def node_from_properties(node: int, props: dict[str, str]) -> KfdNode | None:
    """An AMD GPU node, or ``None`` for CPU nodes and other vendors' agents."""
    gfx = decode_target_version(_int(props, "gfx_target_version") or 0)
    if gfx is None or _int(props, "vendor_id") != AMD_VENDOR_ID:
        return None
    location = _int(props, "location_id", 0xFFFF)  # bus << 8 | devfn
    domain = _int(props, "domain", 0xFFFFFFFF) or 0
    slot = None
    if location is not None:
        bus, devfn = location >> 8, location & 0xFF
        slot = f"{domain:04x}:{bus:02x}:{devfn >> 3:02x}.{devfn & 7:x}"
    simds, per_cu = _int(props, "simd_count"), _int(props, "simd_per_cu")
    minor = _int(props, "drm_render_minor")
    return KfdNode(
        node=node,
        gfx=gfx,
        device_id=_int(props, "device_id", 0xFFFF) or 0,
        slot=slot,
        render_minor=minor if minor else None,
        compute_units=simds // per_cu if simds and per_cu else None,
        gpu_family=props.get("gpu_family"),
    )


@dataclass
class KfdTopology:
    """What the topology showed: GPU nodes, nodes that could not be read, and whether it exists."""

    present: bool = False
    gpus: list[KfdNode] = field(default_factory=list)
    #: ``(node, error)`` for each node whose properties could not be read.
    unreadable: list[tuple[int, str]] = field(default_factory=list)
    #: CPU agents and other vendors' nodes.
    other_nodes: int = 0


def read_topology(system: System) -> KfdTopology:
    """Read every node, numerically sorted; an unreadable node is kept as an error, not raised."""
    topo = KfdTopology()
    names = system.listdir(KFD_NODES)
    topo.present = bool(names)
    for name in sorted((n for n in names if n.isdigit()), key=int):
        node = int(name)
        try:
            text = system.read_text(f"{KFD_NODES}/{name}/properties", limit=1 << 16)
        except ProbeError as exc:
            topo.unreadable.append((node, str(exc)))
            continue
        if text is None:
            topo.unreadable.append((node, f"{KFD_NODES}/{name}/properties is missing"))
            continue
        gpu = node_from_properties(node, parse_properties(text))
        if gpu is None:
            topo.other_nodes += 1
        else:
            topo.gpus.append(gpu)
    return topo
