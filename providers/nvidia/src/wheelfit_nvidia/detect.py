"""Find every NVIDIA GPU this machine can use: sources in order, merged by PCI bus id, then gated.

Order: kernel driver files -> NVML/libcuda (child process, real machine only) ->
``nvidia-smi`` -> PCI sysfs with the device-ID table. The first source that
lists GPUs defines them; the others fill gaps (PCI id, model name, device minor).
A GPU is reported only when it is usable here: a loaded driver and openable
``/dev/nvidia*`` nodes on Linux, ``/dev/dxg`` on WSL2. Anything seen but not
usable becomes a failed probe with a hint instead.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from wheelfit_probekit import PciDevice, ProbeError, ProbeLog, ProbeTimeout, System, scan_pci
from wheelfit_probekit.drivers import max_cuda_for_driver

from .devicetable import lookup_device
from .kernel import is_tegra_numbering, parse_module_version, parse_nvrm
from .native import CHILD_CODE, NativeReport, parse_native
from .procfs import GpuInformation, normalize_bus_id, parse_information
from .smi import HINT_NO_DRIVER, SmiGpu, classify_failure, parse_query, query_args
from .visibility import parse_visible_devices

__all__ = ["detect_gpus"]

NVIDIA = 0x10DE
SYS_MODULE_VERSION = "/sys/module/nvidia/version"
PROC_VERSION = "/proc/driver/nvidia/version"
PROC_GPUS = "/proc/driver/nvidia/gpus"
WSL_NVML = "/usr/lib/wsl/lib/libnvidia-ml.so.1"

HINT_NO_NODES = (
    "the container has no /dev/nvidia* nodes: run it with --gpus all or the NVIDIA container toolkit "
    "(on a host, nvidia-modprobe creates the nodes)"
)
HINT_NO_LIBRARY = (
    "libnvidia-ml.so.1 is missing: install the NVIDIA driver's user-space libraries "
    "(in a container: NVIDIA_DRIVER_CAPABILITIES must include utility)"
)
HINT_TIMEOUT = (
    "the driver did not answer in time: enable persistence mode (nvidia-persistenced) or raise WHEELFIT_PROBE_TIMEOUT"
)
HINT_LEFTOVER = (
    "no NVIDIA GPU is on the PCI bus: this nvidia-smi is left over from an earlier install "
    "(or the GPU is not passed through to this machine)"
)
_DEV_NODE = re.compile(r"^nvidia(\d+)$")


@dataclass
class DriverState:
    """What the kernel side says: is a module loaded, which version, which flavour."""

    loaded: bool = False
    version: str | None = None
    kernel_module: str | None = None
    arch: str | None = None
    tegra: bool = False


@dataclass
class Gpu:
    """One physical GPU as merged from all sources."""

    source: str
    bus_id: str | None
    index: int | None = None
    name: str | None = None
    compute_capability: str | None = None
    uuid: str | None = None
    pci: PciDevice | None = None
    pci_id: str | None = None
    info: GpuInformation | None = None
    driver_version: str | None = None
    notes: list[str] = field(default_factory=list)

    @property
    def label(self) -> str:
        where = self.bus_id or (f"index {self.index}" if self.index is not None else "unknown slot")
        return f"{self.name or 'NVIDIA GPU'} ({where})"


def _text(system: System, path: str) -> str | None:
    """A file that may be missing or unreadable; unreadable counts as missing here."""
    try:
        return system.read_text(path, limit=1 << 16)
    except ProbeError:
        return None


def _shown(text: str) -> str:
    return repr(" ".join(text.split())[:60])


def is_wsl(system: System) -> bool:
    release = (_text(system, "/proc/sys/kernel/osrelease") or "").lower()
    return "microsoft" in release and system.exists("/dev/dxg")


def _read_optional(system: System, log: ProbeLog, source: str, path: str) -> str | None:
    """A file that may be absent (``None``, no record); any other read failure is a failed probe."""
    try:
        return system.read_text(path, limit=4096)
    except ProbeError as exc:
        log.failed(source, str(exc))
        return None


def read_driver(system: System, log: ProbeLog) -> DriverState:
    """``/sys/module/nvidia/version`` first, then the NVRM banner (which also tells open vs proprietary)."""
    state = DriverState(loaded=system.exists("/sys/module/nvidia"))
    text = _read_optional(system, log, "sys-module-version", SYS_MODULE_VERSION)
    if text is not None:
        state.loaded = True
        with log.probe("sys-module-version") as p:
            state.version = parse_module_version(text)
            if state.version is None:
                p.error = f"{SYS_MODULE_VERSION} holds no driver version: {_shown(text)}"
            else:
                p.detail = f"nvidia kernel module {state.version}"
    text = _read_optional(system, log, "proc-driver-version", PROC_VERSION)
    if text is not None:
        state.loaded = True
        with log.probe("proc-driver-version") as p:
            nvrm = parse_nvrm(text)
            if nvrm is None:
                p.error = f"{PROC_VERSION} has no NVRM version line: {_shown(text)}"
            else:
                state.kernel_module, state.arch = nvrm.kernel_module, nvrm.arch
                p.detail = f"NVRM {nvrm.version} ({nvrm.kernel_module or 'unknown'} kernel module, {nvrm.arch or '?'})"
                if state.version is None:
                    state.version = nvrm.version
                elif state.version != nvrm.version:
                    p.detail += f"; differs from the module's {state.version}"
    state.tegra = system.exists("/etc/nv_tegra_release") or (
        state.version is not None and is_tegra_numbering(state.version, state.arch)
    )
    return state


def read_proc_gpus(system: System) -> dict[str, GpuInformation]:
    """``/proc/driver/nvidia/gpus/<bus>/information`` by normalised bus id (model name, UUID, device minor)."""
    out: dict[str, GpuInformation] = {}
    try:
        names = system.listdir(PROC_GPUS)
    except ProbeError:
        return out
    for name in names:
        text = _text(system, f"{PROC_GPUS}/{name}/information")
        bus = normalize_bus_id(name)
        if text is None or bus is None:
            continue
        out[bus] = parse_information(text)
    return out


def run_native(system: System, log: ProbeLog) -> tuple[NativeReport | None, bool]:
    """NVML then libcuda in a child interpreter; returns (report, timed out)."""
    report: NativeReport | None = None
    timed_out = False
    with log.probe("nvml") as p:
        try:
            result = system.run_python(CHILD_CODE)
        except ProbeTimeout as exc:
            timed_out = True
            p.error, p.hint = f"timed out: {exc}", HINT_TIMEOUT
            return None, True
        if not result.ok:
            p.error = f"the native probe exited {result.returncode}: {result.first_line()[:160]}"
            return None, False
        try:
            report = parse_native(result.stdout)
        except ValueError as exc:
            p.error = f"the native probe printed unexpected output: {exc}"
            return None, False
        if report.source is not None:
            p.detail = (
                f"{report.source}: {len(report.gpus)} GPU(s), driver {report.driver_version}, "
                f"CUDA {report.cuda_driver_version}"
            )
        else:
            p.error = "; ".join(f"{k}: {v}" for k, v in report.errors.items()) or "no GPUs"
            if report.library_missing:
                p.hint = HINT_NO_LIBRARY
    return report, timed_out


def run_smi(system: System, log: ProbeLog, no_hardware: bool = False) -> list[SmiGpu]:
    """``nvidia-smi --query-gpu=...``; on a 470-era driver retry without ``compute_cap``.

    ``no_hardware``: nothing NVIDIA is on the PCI bus, so a "no driver" failure means a leftover tool.
    """
    gpus: list[SmiGpu] = []
    with log.probe("nvidia-smi") as p:
        with_cc = True
        try:
            result = system.run("nvidia-smi", *query_args(with_cc))
            if not result.ok:
                failure = classify_failure(result.returncode, result.stdout, result.stderr)
                if not failure.retry_without_compute_cap:
                    p.error = failure.error
                    p.hint = HINT_LEFTOVER if no_hardware and failure.hint == HINT_NO_DRIVER else failure.hint
                    return gpus
                with_cc = False
                result = system.run("nvidia-smi", *query_args(with_cc))
                if not result.ok:
                    failure = classify_failure(result.returncode, result.stdout, result.stderr)
                    p.error, p.hint = failure.error, failure.hint
                    return gpus
        except ProbeTimeout as exc:
            p.error, p.hint = f"timed out: {exc}", HINT_TIMEOUT
            return gpus
        gpus, bad = parse_query(result.stdout, with_compute_cap=with_cc)
        if not gpus:
            p.error = f"unrecognised output: {_shown(result.stdout) if result.stdout.strip() else 'nothing'}"
            return gpus
        notes = [] if with_cc else ["no compute_cap field on this driver: capability from the PCI ID table"]
        if bad:
            notes.append(f"{len(bad)} unparsable line(s) ignored")
        p.detail = "; ".join([f"{len(gpus)} GPU(s)", *notes])
    return gpus


def _pci_gpus(system: System, log: ProbeLog) -> list[PciDevice]:
    try:
        found = scan_pci(system, vendor=NVIDIA)
    except ProbeError as exc:
        log.failed("pci-sysfs", str(exc))
        return []
    with log.probe("pci-sysfs") as p:
        p.detail = (
            ", ".join(f"{d.slot} {d.pci_id} class 0x{d.pci_class:06x} driver={d.driver}" for d in found)
            or "no NVIDIA GPU on the PCI bus"
        )
    return found


def _one_per_bus(gpus: list[Gpu], log: ProbeLog) -> list[Gpu]:
    """One GPU per PCI bus id and per index, the first listed: a tool that repeats itself (a flood of identical
    lines) must not become thousands of GPUs, and an index is the GPU's CUDA ordinal, so two GPUs cannot share
    one. What was dropped is said in the log."""
    kept: dict[str, Gpu] = {}
    rest: list[Gpu] = []
    dropped: dict[str, int] = {}
    indices: set[int] = set()
    for g in gpus:
        if g.bus_id in kept or g.index in indices:
            key = g.bus_id if g.bus_id in kept else f"index {g.index}"
            dropped[key] = dropped.get(key, 0) + 1
            continue
        if g.index is not None:
            indices.add(g.index)
        if g.bus_id is None:
            rest.append(g)
        else:
            kept[g.bus_id] = g
    if dropped:
        shown = ", ".join(f"{bus} x{n}" for bus, n in sorted(dropped.items())[:4])
        more = f" and {len(dropped) - 4} more bus ids" if len(dropped) > 4 else ""
        with log.probe(f"{gpus[0].source}-duplicates") as p:
            p.detail = (
                f"{sum(dropped.values())} repeated GPU entries discarded (one GPU per PCI bus id and index): "
                f"{shown}{more}"
            )
    return [*kept.values(), *rest]


def _merge(gpus: list[Gpu], pci: dict[str, PciDevice], info: dict[str, GpuInformation]) -> None:
    for g in gpus:
        if g.bus_id is not None:
            g.pci = g.pci or pci.get(g.bus_id)
            g.info = info.get(g.bus_id)
        if g.pci is not None:
            g.pci_id = g.pci_id or g.pci.pci_id
        if g.info is not None:
            g.uuid = g.uuid or g.info.uuid
            g.name = g.name or g.info.model
        if g.compute_capability is None and g.pci_id is not None:
            dev = lookup_device(int(g.pci_id.split(":")[1], 16))
            if dev is not None:
                g.compute_capability = dev.compute_capability
                g.notes.append(dev.describe())
                if g.name is None and dev.name:
                    g.name = f"NVIDIA {dev.name}"
            else:
                g.notes.append(f"{g.pci_id} is not in the ID table: compute capability unknown")


def _node_problem(system: System, g: Gpu) -> str | None:
    if not system.can_open("/dev/nvidiactl"):
        return "/dev/nvidiactl is missing or cannot be opened"
    minor = g.info.minor if g.info is not None else None
    if minor is not None:
        return None if system.can_open(f"/dev/nvidia{minor}") else f"/dev/nvidia{minor} is missing or cannot be opened"
    try:
        nodes = [n for n in system.listdir("/dev") if _DEV_NODE.match(n)]
    except ProbeError:
        nodes = []
    if any(system.can_open(f"/dev/{n}") for n in nodes):
        return None
    return "no /dev/nvidia<N> device node can be opened"


def _unusable(system: System, g: Gpu, drv: DriverState, wsl: bool) -> tuple[str, str] | None:
    """Why this GPU cannot be used here (reason, hint), or ``None`` when it can."""
    answered = g.source != "pci-sysfs"
    if wsl:
        if not answered:
            return "no NVIDIA library or tool answered under WSL2", "install the NVIDIA driver on the Windows host"
        if not system.can_open("/dev/dxg"):
            return "/dev/dxg cannot be opened", "run inside WSL2 with GPU support (or pass /dev/dxg to the container)"
        return None
    if system.os_name != "Linux":
        return None if answered else ("no NVIDIA driver answered", HINT_NO_DRIVER)
    if not answered and not drv.loaded:
        return "no NVIDIA driver is loaded", HINT_NO_DRIVER
    if g.pci is not None and g.pci.driver not in (None, "nvidia"):
        return (
            f"bound to the {g.pci.driver} driver, not nvidia",
            f"{g.pci.driver} owns this GPU: install the NVIDIA driver (or unbind {g.pci.driver})",
        )
    problem = _node_problem(system, g)
    if problem is not None:
        return problem, HINT_NO_NODES
    return None


def detect_gpus(system: System, log: ProbeLog) -> list[dict[str, Any]]:
    """The accelerator entries for every usable NVIDIA GPU; everything else goes to ``log``."""
    wsl = is_wsl(system)
    drv = read_driver(system, log)
    pci_list = _pci_gpus(system, log)
    pci: dict[str, PciDevice] = {}
    for d in pci_list:
        bus = normalize_bus_id(d.slot)
        if bus is not None:
            pci[bus] = d
    info = read_proc_gpus(system)
    windows = system.os_name == "Windows"
    evidence = (
        drv.loaded
        or system.exists("/dev/nvidiactl")
        or (wsl and system.exists(WSL_NVML))
        or (windows and system.exists(r"C:\Windows\System32\nvml.dll"))
    )

    native: NativeReport | None = None
    native_hung = False
    if evidence and not system.native:
        log.skipped("nvml", "native libraries are never loaded under a sysroot")
    elif evidence:
        native, native_hung = run_native(system, log)

    gpus: list[Gpu] = []
    driver_answer: str | None = None
    if native is not None and native.gpus:
        driver_answer = native.driver_version
        source = native.source or "nvml"
        gpus = [
            Gpu(source, n.bus_id, n.index, n.name, n.compute_capability, n.uuid, pci_id=n.pci_id) for n in native.gpus
        ]
    elif native_hung:
        log.skipped("nvidia-smi", "NVML did not answer, so nvidia-smi (built on NVML) would hang too")
    elif system.which("nvidia-smi") is not None:
        smi = run_smi(system, log, no_hardware=not pci_list and not wsl)
        driver_answer = next((s.driver_version for s in smi if s.driver_version), None)
        gpus = [
            Gpu("nvidia-smi", s.bus_id, s.index, s.name, s.compute_capability, s.uuid, driver_version=s.driver_version)
            for s in smi
        ]
    elif evidence:
        log.skipped("nvidia-smi", "not installed")

    if not gpus:
        gpus = [Gpu("pci-sysfs", normalize_bus_id(d.slot), pci=d) for d in pci_list]
    gpus = _one_per_bus(gpus, log)
    if not gpus and drv.tegra:
        log.skipped("tegra", f"Jetson/Tegra integrated GPU (L4T driver {drv.version}): not reported by this provider")
    elif all(g.bus_id is not None for g in gpus):
        seen = {g.bus_id for g in gpus}
        hidden = [d.slot for d in pci_list if normalize_bus_id(d.slot) not in seen]
        if hidden:
            log.skipped("pci-sysfs", f"on the PCI bus but not exposed by the driver: {', '.join(hidden)}")
    _merge(gpus, pci, info)

    usable: list[Gpu] = []
    for g in gpus:
        why = _unusable(system, g, drv, wsl)
        if why is None:
            usable.append(g)
        else:
            log.failed(g.source, f"{g.label} is present but not usable: {why[0]}", why[1])
    if not usable:
        return []

    driver = drv.version or driver_answer
    cuda = native.cuda_driver_version if native is not None else None
    if cuda is None and driver is not None:
        with log.probe("cuda-driver-table") as p:
            if drv.tegra:
                p.detail = f"skipped: {driver} is Jetson/L4T numbering, not a desktop driver version"
            else:
                cuda = max_cuda_for_driver(driver, windows_numbering=wsl or windows)
                column = "Windows" if wsl or windows else "Linux"
                p.detail = f"driver {driver} -> CUDA {cuda} ({column} column of NVIDIA's toolkit/driver table)"
    table_notes = [f"{g.label}: {'; '.join(g.notes)}" for g in usable if g.notes]
    if table_notes:
        with log.probe("pci-id-table") as p:
            p.detail = " | ".join(table_notes)
    return _entries(system, log, usable, driver, cuda, drv)


def _entries(
    system: System,
    log: ProbeLog,
    usable: list[Gpu],
    driver: str | None,
    cuda: str | None,
    drv: DriverState,
) -> list[dict[str, Any]]:
    ordered = sorted(usable, key=lambda g: (g.index if g.index is not None else 1 << 30, g.bus_id or ""))
    for position, g in enumerate(ordered):
        if g.index is None:  # PCI-sourced: the driver numbers GPUs in PCI bus order
            g.index = position
    # CUDA ordinals are physical indices (NVML/nvidia-smi numbering), not positions in this list.
    by_index: list[str | None] = [None] * (max(g.index or 0 for g in ordered) + 1)
    for g in ordered:
        by_index[g.index or 0] = g.uuid
    cvd = system.environ.get("CUDA_VISIBLE_DEVICES")
    vis = parse_visible_devices(cvd, by_index)
    if cvd is not None:
        with log.probe("cuda-visible-devices") as p:
            shown = ", ".join(str(i) for i in vis.visible) or "none"
            p.detail = f"CUDA_VISIBLE_DEVICES={cvd!r}: visible GPU(s) {shown}; every GPU is still reported" + (
                f" ({vis.note})" if vis.note else ""
            )
    entries: list[dict[str, Any]] = []
    for g in ordered:
        entry: dict[str, Any] = {
            "vendor": "nvidia",
            "name": g.name or (f"NVIDIA GPU {g.pci_id}" if g.pci_id else "NVIDIA GPU"),
            "pci_id": g.pci_id,
            "source": g.source,
            "integrated": False if (g.pci is not None or g.bus_id is not None) else None,
            "compute_capability": g.compute_capability,
            "driver_version": driver or g.driver_version,
            "cuda_driver_version": cuda,
            "index": g.index,
            "visible": g.index in vis.visible,
        }
        if g.uuid:
            entry["uuid"] = g.uuid
        if drv.kernel_module:
            entry["kernel_module"] = drv.kernel_module
        entries.append(entry)
    return entries
