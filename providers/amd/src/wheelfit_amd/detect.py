"""Find usable AMD GPUs: KFD topology first, the ROCm tools and PCI sysfs as fallbacks.

A GPU is reported only when this process could run ROCm on it: ``/dev/kfd``
is usable, the amdgpu driver drives it (KFD lists it, or PCI shows amdgpu
bound) and its render node ``/dev/dri/renderD<drm_render_minor>`` is there (KFD's
``drm_render_minor``, Linux ``drivers/gpu/drm/amd/amdkfd/kfd_topology.c``). Everything else
becomes a failed probe with a hint, so "I have a GPU but wheelfit picked CPU"
has an answer in the report.

Decisions:
- rocminfo runs whenever ROCm is installed and /dev/kfd is usable: its
  marketing name ("AMD Radeon RX 7900 XTX") beats the device table, whose
  entries often cover several boards; a generic "AMD Radeon Graphics" does not.
- A KFD node that cannot be read is a failed probe naming it. Its GPU is still
  listed when rocminfo sees it, or when PCI sysfs shows it with amdgpu bound and
  its own render node (``<slot>/drm/renderD*``) is openable here; a GPU whose
  render node this container lacks is the one the device cgroup hid, so it is
  not guessed from PCI.
- An amdgpu GPU absent from a fully readable KFD topology has no ROCm support.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from wheelfit_probekit import PciDevice, ProbeLog, ProbeTimeout, ProviderResult, System, scan_pci

from .devices import DeviceInfo, fallback_name, lookup
from .gfx import OVERRIDE_VAR, hsa_override
from .kfd import KfdTopology, read_topology
from .rocm_tools import RocmAgent, find_tool, parse_agent_enumerator, parse_rocminfo, run_rocm_tool
from .rocm_version import RocmInstall, read_rocm_version, rocm_root

__all__ = ["detect"]

AMD_PCI_VENDOR = 0x1002
DEV_KFD = "/dev/kfd"
PCI_DEVICES = "/sys/bus/pci/devices"

HINT_CONTAINER = "pass --device=/dev/kfd --device=/dev/dri to the container"
HINT_GROUPS = "add the user to the render and video groups (ROCm needs read-write access to {path})"
HINT_DRIVER = "the amdgpu driver is not loaded for this GPU: install it (amdgpu-dkms or a recent kernel) and load it"
HINT_CGROUP = (
    "in a container this means its device cgroup hides the GPU: pass it with --device=/dev/kfd "
    "--device=/dev/dri (or the GPU's /dev/dri/renderD* node)"
)
HINT_OVERRIDE = "fix or unset it: with an invalid value the ROCm runtime fails and sees no GPU"
#: rocminfo's name for APUs and some boards that the device table can say better.
GENERIC_NAMES = frozenset({"AMD Radeon Graphics", "AMD Radeon(TM) Graphics"})


@dataclass
class Candidate:
    """A GPU some probe found, before the usability gate."""

    source: str
    gfx: str | None
    device_id: int | None
    node: int | None = None
    slot: str | None = None
    runtime_name: str | None = None
    compute_units: int | None = None
    render_minor: int | None = None
    gpu_family: str | None = None
    pci: PciDevice | None = None

    @property
    def info(self) -> DeviceInfo | None:
        return lookup(self.device_id) if self.device_id is not None else None

    @property
    def name(self) -> str:
        info = self.info
        if self.runtime_name and (self.runtime_name not in GENERIC_NAMES or info is None):
            return self.runtime_name
        if info is not None:
            return info.name
        if self.device_id is not None:
            return fallback_name(self.device_id)
        return f"AMD GPU ({self.gfx})" if self.gfx else "AMD GPU"

    @property
    def label(self) -> str:
        where = self.slot or (f"KFD node {self.node}" if self.node is not None else None)
        return f"{self.name} ({where})" if where else self.name


def detect(system: System) -> ProviderResult:
    log = ProbeLog("amd")
    if system.os_name != "Linux":
        log.skipped("kfd", f"ROCm runs on Linux only, this is {system.os_name}")
        return ProviderResult(probes=log.records)

    rocm = _rocm_install(system, log)
    pci = _pci(system, log)
    topo = _kfd(system, log)
    kfd_usable = system.can_open(DEV_KFD)
    amd_seen = bool(topo.gpus or topo.unreadable or pci or system.exists(DEV_KFD))

    agents: list[RocmAgent] = []
    timed_out = False
    if amd_seen and kfd_usable:
        agents, timed_out = _rocminfo(system, rocm, log, needed=not topo.gpus)
    enumerated: list[str] = []
    if amd_seen and kfd_usable and not topo.gpus and not agents and not timed_out:
        enumerated = _enumerator(system, rocm, log)

    candidates = _candidates(system, topo, agents, enumerated, pci, log)
    accelerators: list[dict[str, Any]] = []
    if candidates and not kfd_usable:
        _report_no_kfd(system, candidates, log)
        return ProviderResult(probes=log.records)
    for c in candidates:
        if _usable(system, c, log):
            accelerators.append(_entry(system, c, rocm))
    _report_overrides(system, accelerators, log)
    return ProviderResult(accelerators=accelerators, probes=log.records)


# -- probes --------------------------------------------------------------------------


def _rocm_install(system: System, log: ProbeLog) -> RocmInstall:
    install = RocmInstall(rocm_root(system.environ), None)
    with log.probe("rocm-version") as p:
        install = read_rocm_version(system)
        if install.path is None:
            p.detail = f"no ROCm install at {install.root} (fine: PyTorch ROCm wheels bundle the runtime)"
        elif install.version is None:
            p.error = f"{install.path} does not hold a version: {install.raw!r:.60}"
        else:
            p.detail = f"ROCm {install.version} ({install.raw}) from {install.path}"
    return install


def _pci(system: System, log: ProbeLog) -> list[PciDevice]:
    found: list[PciDevice] = []
    with log.probe("pci-sysfs") as p:
        found = scan_pci(system, vendor=AMD_PCI_VENDOR)
        p.detail = ", ".join(f"{d.slot} {d.pci_id} class {d.pci_class:06x} driver {d.driver}" for d in found) or (
            "no AMD GPU on the PCI bus"
        )
    return found


def _kfd(system: System, log: ProbeLog) -> KfdTopology:
    topo = KfdTopology()
    with log.probe("kfd") as p:
        topo = read_topology(system)
        if not topo.present:
            p.detail = "no KFD topology (amdgpu with KFD not loaded, or sysfs hidden)"
        else:
            gpus = ", ".join(f"node {n.node} {n.gfx}" for n in topo.gpus) or "no readable GPU node"
            p.detail = f"{gpus}; {topo.other_nodes} CPU node(s)"
    for node, error in topo.unreadable:
        log.failed("kfd", f"KFD node {node}: {error}", HINT_CGROUP)
    return topo


def _rocminfo(system: System, rocm: RocmInstall, log: ProbeLog, needed: bool) -> tuple[list[RocmAgent], bool]:
    if find_tool(system, rocm.root, "rocminfo") is None:
        if needed:
            log.skipped("rocminfo", "not installed")
        return [], False
    agents: list[RocmAgent] = []
    timed_out = False
    with log.probe("rocminfo") as p:
        try:
            out = run_rocm_tool(system, rocm.root, "rocminfo")
        except ProbeTimeout:
            timed_out = True
            raise
        agents, repeated = _one_per_agent(parse_rocminfo(out.stdout))
        if out.returncode != 0 and not agents:
            p.error = f"rocminfo exited with {out.returncode}: {out.first_line()}"
        else:
            p.detail = ", ".join(f"{a.gfx} {a.marketing_name or ''}".strip() for a in agents) or "no GPU agent"
            if repeated:
                p.detail += f"; {repeated} repeated agent(s) discarded (one GPU per KFD node and PCI address)"
    return agents, timed_out


def _one_per_agent(agents: list[RocmAgent]) -> tuple[list[RocmAgent], int]:
    """Agents with the KFD node and PCI address of one listed before are the same GPU printed again (a flood
    from a broken tool must not become thousands of GPUs); agents with neither are kept as they are."""
    seen: set[tuple[int | None, int | None]] = set()
    kept: list[RocmAgent] = []
    for a in agents:
        key = (a.node, a.bdfid)
        if key != (None, None) and key in seen:
            continue
        seen.add(key)
        kept.append(a)
    return kept, len(agents) - len(kept)


def _enumerator(system: System, rocm: RocmInstall, log: ProbeLog) -> list[str]:
    if find_tool(system, rocm.root, "rocm_agent_enumerator") is None:
        return []
    targets: list[str] = []
    with log.probe("rocm_agent_enumerator") as p:
        out = run_rocm_tool(system, rocm.root, "rocm_agent_enumerator")
        targets = parse_agent_enumerator(out.stdout)
        if out.returncode != 0 and not targets:
            p.error = f"rocm_agent_enumerator exited with {out.returncode}: {out.first_line()}"
        else:
            p.detail = " ".join(targets) or "no GPU"
    return targets


# -- merging sources -------------------------------------------------------------------


def _candidates(
    system: System,
    topo: KfdTopology,
    agents: list[RocmAgent],
    enumerated: list[str],
    pci: list[PciDevice],
    log: ProbeLog,
) -> list[Candidate]:
    """One candidate per GPU: KFD nodes, then runtime agents KFD did not show, then PCI leftovers."""
    by_slot = {d.slot: d for d in pci}
    used_pci: set[str] = set()
    free_agents = list(agents)
    out: list[Candidate] = []

    def take_pci(match: PciDevice | None) -> PciDevice | None:
        if match is not None:
            used_pci.add(match.slot)
        return match

    def first_free_pci(device_id: int | None, gfx: str | None) -> PciDevice | None:
        for d in pci:
            if d.slot in used_pci:
                continue
            info = lookup(d.device)
            if (device_id is not None and d.device == device_id) or (
                device_id is None and info is not None and info.gfx == gfx
            ):
                return take_pci(d)
        return None

    for n in topo.gpus:
        agent = next((a for a in free_agents if a.node == n.node), None) or next(
            (a for a in free_agents if a.node is None and a.chip_id == n.device_id), None
        )
        if agent is not None:
            free_agents.remove(agent)
        dev = take_pci(by_slot.get(n.slot or ""))
        out.append(
            Candidate(
                source="kfd",
                gfx=n.gfx,
                device_id=n.device_id,
                node=n.node,
                slot=n.slot,
                runtime_name=agent.marketing_name if agent else None,
                compute_units=n.compute_units or (agent.compute_units if agent else None),
                render_minor=n.render_minor,
                gpu_family=n.gpu_family,
                pci=dev,
            )
        )
    for a in free_agents:
        at = a.bus_devfn
        dev = take_pci(next((d for d in pci if at and d.slot.endswith(at) and d.slot not in used_pci), None))
        dev = dev or first_free_pci(a.chip_id, a.gfx)
        out.append(
            Candidate(
                source="rocminfo",
                gfx=a.gfx,
                device_id=a.chip_id if a.chip_id is not None else (dev.device if dev else None),
                node=a.node,
                slot=dev.slot if dev else None,
                runtime_name=a.marketing_name,
                compute_units=a.compute_units,
                pci=dev,
            )
        )
    for gfx in enumerated:
        dev = first_free_pci(None, gfx)
        out.append(
            Candidate(
                source="rocm_agent_enumerator",
                gfx=gfx,
                device_id=dev.device if dev else None,
                slot=dev.slot if dev else None,
                pci=dev,
            )
        )
    kfd_complete = topo.present and not topo.unreadable
    for d in pci:
        if d.slot in used_pci:
            continue
        info = lookup(d.device)
        c = Candidate(source="pci-sysfs", gfx=info.gfx if info else None, device_id=d.device, slot=d.slot, pci=d)
        if kfd_complete and d.driver == "amdgpu":
            log.failed(
                "kfd",
                f"{c.label} is driven by amdgpu but not in the KFD topology: ROCm cannot use it",
                "this GPU has no ROCm compute support in the running kernel driver",
            )
            continue
        out.append(c)
    return out


# -- usability gate -------------------------------------------------------------------


def _report_no_kfd(system: System, candidates: list[Candidate], log: ProbeLog) -> None:
    """Without /dev/kfd nothing is usable; say why per GPU: no driver, or a device not passed in."""
    waiting: list[Candidate] = []
    for c in candidates:
        if not _driver_ok(c, log):
            continue
        waiting.append(c)
    if not waiting:
        return
    names = "; ".join(c.label for c in waiting)
    if system.exists(DEV_KFD):
        hint = HINT_GROUPS.format(path=DEV_KFD)
        log.failed("dev-kfd", f"{DEV_KFD} is not readable and writable; unusable: {names}", hint)
    else:
        log.failed("dev-kfd", f"{DEV_KFD} is missing; unusable: {names}", HINT_CONTAINER)


def _driver_ok(c: Candidate, log: ProbeLog) -> bool:
    """A GPU that only PCI (or the enumerator's lspci path) shows must have amdgpu bound."""
    if c.source not in ("pci-sysfs", "rocm_agent_enumerator") or c.pci is None or c.pci.driver == "amdgpu":
        return True
    bound = f"bound to {c.pci.driver}" if c.pci.driver else "no driver bound"
    log.failed("pci-sysfs", f"{c.label}: {bound}", HINT_DRIVER)
    return False


def _render_nodes(system: System, c: Candidate) -> list[str]:
    if c.render_minor is not None:
        return [f"/dev/dri/renderD{c.render_minor}"]
    if c.pci is not None:
        return [f"/dev/dri/{n}" for n in system.glob_names(f"{PCI_DEVICES}/{c.pci.slot}/drm", "renderD")]
    return []


def _usable(system: System, c: Candidate, log: ProbeLog) -> bool:
    if not _driver_ok(c, log):
        return False
    if c.source == "rocminfo":
        return True  # the runtime opened it
    nodes = _render_nodes(system, c)
    if nodes and not any(system.can_open(n) for n in nodes):
        missing = [n for n in nodes if not system.exists(n)]
        hint = HINT_CONTAINER if missing else HINT_GROUPS.format(path=nodes[0])
        state = "missing" if missing else "not readable and writable"
        log.failed("dev-dri", f"{c.label}: render node {' '.join(nodes)} {state}", hint)
        return False
    return True


def _entry(system: System, c: Candidate, rocm: RocmInstall) -> dict[str, Any]:
    info = c.info
    override = hsa_override(system.environ, c.node)
    effective = override.gfx if override is not None and override.gfx else c.gfx
    entry: dict[str, Any] = {
        "vendor": "amd",
        "name": c.name,
        "pci_id": f"1002:{c.device_id:04x}" if c.device_id is not None else None,
        "source": c.source,
        "integrated": info.integrated if info else None,
        "gfx": c.gfx,
        "effective_gfx": effective,
        "rocm_version": rocm.version,
        "node": c.node,
        "slot": c.slot,
        "compute_units": c.compute_units,
    }
    if c.gpu_family:
        entry["gpu_family"] = c.gpu_family
    return entry


def _report_overrides(system: System, accelerators: list[dict[str, Any]], log: ProbeLog) -> None:
    """One record per override variable: what it changes, or why it is invalid."""
    seen: set[str] = set()
    for acc in accelerators:
        override = hsa_override(system.environ, acc["node"])
        if override is None or override.variable in seen:
            continue
        seen.add(override.variable)
        if override.gfx is None:
            log.failed("hsa-override", override.error or f"{override.variable} is invalid", HINT_OVERRIDE)
            continue
        changed = [a for a in accelerators if hsa_override(system.environ, a["node"]) == override]
        with log.probe("hsa-override") as p:
            p.detail = f"{override.variable}={override.value}: " + ", ".join(
                f"{a['name']} {a['gfx']} runs as {a['effective_gfx']}" for a in changed
            )
    stray = sorted(k for k in system.environ if k.startswith(OVERRIDE_VAR) and k not in seen)
    if stray and accelerators:
        log.skipped("hsa-override", f"{', '.join(stray)} set but applies to no detected GPU")
