"""Run every detector with a deadline and assemble the hardware report.

Providers run concurrently in daemon threads: the slowest one bounds the wall
time, and one that hangs past its deadline is recorded as failed while the
others' findings are kept. Tools a provider runs have their own, shorter
deadlines (:class:`wheelfit_probekit.System`), so a hung thread is the rare
case of a hung file read.
"""

from __future__ import annotations

import platform as _platform
import threading
import time
from collections.abc import Iterable, Mapping
from typing import Any

from wheelfit_probekit import ProbeRecord, Provider, ProviderResult, System, platform_info

from ..errors import ReportError
from ..report import Accelerator, Cpu, HardwareReport, Platform, accelerator_from_dict
from .registry import LoadedProvider, discover, load

__all__ = ["detect", "run_providers"]

#: Extra time a provider gets beyond one tool deadline before it is abandoned.
GRACE_SECONDS = 5.0


def detect(system: System, disabled: Iterable[str] = ()) -> HardwareReport:
    """Probe the machine that ``system`` describes."""
    loaded = [load(ep) for ep in discover(disabled)]
    started = time.perf_counter()
    slot: list[object] = []
    # The platform's reads (kernel release, libc, OS version) get the providers' deadline too: a read that hangs
    # in the kernel (a dead network mount under the sysroot) must not hold detection.
    reader = threading.Thread(target=_read_platform, args=(system, slot), name="probe-platform", daemon=True)
    reader.start()
    results = run_providers(system, loaded)
    reader.join(max(0.0, system.command_timeout + GRACE_SECONDS - (time.perf_counter() - started)))
    if slot and isinstance(slot[0], Platform):
        plat = slot[0]
    else:
        ms = (time.perf_counter() - started) * 1000
        why = f"crashed: {type(slot[0]).__name__}: {slot[0]}" if slot else f"did not finish within {ms / 1000:.1f} s"
        results.append(("platform", _failed("platform", "platform", f"{why}; OS, libc and kernel left unknown", ms)))
        # No further I/O here: a sysroot's OS is known only from its files, which are what hung.
        osname = "unknown" if system.is_sysroot else system.os_name
        plat = Platform(system=osname, machine=None, python=_platform.python_version())
    return assemble(plat, results, sysroot=str(system.root) if system.is_sysroot else None)


def _read_platform(system: System, slot: list[object]) -> None:
    try:
        slot.append(Platform(**platform_info(system)))
    except Exception as exc:  # noqa: BLE001 - reported as a failed probe by the caller
        slot.append(exc)


def run_providers(system: System, providers: list[LoadedProvider]) -> list[tuple[str, ProviderResult]]:
    deadline = time.monotonic() + system.command_timeout + GRACE_SECONDS
    results: list[tuple[str, ProviderResult]] = []
    slots: dict[str, list[object]] = {}
    threads: list[tuple[LoadedProvider, threading.Thread, float]] = []
    for lp in providers:
        if lp.provider is None:
            results.append((lp.name, _failed(lp.name, "load", lp.error or "not loaded", 0.0)))
            continue
        slot: list[object] = []
        slots[lp.name] = slot
        t = threading.Thread(target=_call, args=(lp.provider, system, slot), name=f"probe-{lp.name}", daemon=True)
        threads.append((lp, t, time.perf_counter()))
        t.start()
    for lp, t, started in threads:
        t.join(max(0.0, deadline - time.monotonic()))
        ms = (time.perf_counter() - started) * 1000
        slot = slots[lp.name]
        if t.is_alive() or not slot:
            results.append((lp.name, _failed(lp.name, "provider", f"did not finish within {ms / 1000:.1f} s", ms)))
        elif isinstance(slot[0], BaseException):
            exc = slot[0]
            results.append((lp.name, _failed(lp.name, "provider", f"crashed: {type(exc).__name__}: {exc}", ms)))
        elif isinstance(slot[0], ProviderResult):
            results.append((lp.name, slot[0]))
        else:  # a third-party plugin may return anything
            wrong = "returned something that is not a ProviderResult"
            results.append((lp.name, _failed(lp.name, "provider", wrong, ms)))
    return results


def _call(provider: Provider, system: System, slot: list[object]) -> None:
    try:
        slot.append(provider.probe(system))
    except BaseException as exc:  # noqa: BLE001 - reported as a failed probe by the caller
        slot.append(exc)


def _failed(provider: str, source: str, error: str, ms: float) -> ProviderResult:
    return ProviderResult(probes=[ProbeRecord(provider, source, False, ms, error=" ".join(error.split())[:300])])


def assemble(plat: Platform, results: list[tuple[str, ProviderResult]], sysroot: str | None = None) -> HardwareReport:
    """Merge provider results into one validated report."""
    accels: list[Accelerator] = []
    probes: list[ProbeRecord] = []
    cpu: Cpu | None = None
    for name, res in results:
        probes.extend(res.probes)
        for entry in res.accelerators:
            try:
                accels.append(accelerator_from_dict(entry))
            except ReportError as exc:
                probes.append(ProbeRecord(name, "report", False, 0.0, error=f"rejected an accelerator entry: {exc}"))
        if res.cpu is not None and cpu is None:
            cpu = _cpu(res.cpu, name, probes)
    if cpu is None:
        cpu = Cpu(arch=plat.machine)
    return HardwareReport(plat, cpu, tuple(accels), tuple(probes), sysroot)


def _cpu(data: Mapping[str, Any], provider: str, probes: list[ProbeRecord]) -> Cpu | None:
    try:
        return Cpu(
            arch=data.get("arch"),
            vendor=data.get("vendor"),
            model=data.get("model"),
            microarchitecture=data.get("microarchitecture"),
            x86_64_level=data.get("x86_64_level"),
            features=tuple(sorted(set(data.get("features") or ()))),
        )
    except TypeError as exc:
        probes.append(ProbeRecord(provider, "report", False, 0.0, error=f"rejected the cpu section: {exc}"))
        return None
