"""Run every detector with a deadline and assemble the hardware report.

Providers are loaded and run concurrently in daemon threads: the slowest one bounds the wall time, and one that
hangs past its deadline (in its import or its probe) is recorded as failed while the others' findings are kept.
Tools a provider runs have their own, shorter deadlines (:class:`wheelfit_probekit.System`), so a hung thread is
the rare case of a hung file read or a broken plugin. What a plugin hands back is checked before it is used: a
crash, a hang, an import error or malformed data each becomes a :class:`~wheelfit.report.ProviderFailure` naming
the plugin and its distribution, and a failed probe with what to do; what a plugin prints goes to stderr
(:mod:`.divert`), so ``--json`` output stays readable.
"""

from __future__ import annotations

import json
import math
import platform as _platform
import threading
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from wheelfit_probekit import ProbeRecord, ProviderResult, System, platform_info

from ..errors import ReportError
from ..report import Accelerator, Cpu, HardwareReport, Platform, ProviderFailure, accelerator_from_dict
from .divert import ProviderOutput
from .registry import LoadedProvider, PluginEntry, discover, load

__all__ = ["Ran", "assemble", "detect", "run_providers"]

#: Extra time a provider gets beyond one tool deadline before it is abandoned.
GRACE_SECONDS = 5.0


@dataclass
class Ran:
    """One provider's outcome, checked: only well-formed findings are kept, and why it failed if it did."""

    name: str
    probes: list[ProbeRecord] = field(default_factory=list)
    accelerators: list[Accelerator] = field(default_factory=list)
    cpu: Cpu | None = None
    failure: ProviderFailure | None = None


def detect(system: System, disabled: Iterable[str] = ()) -> HardwareReport:
    """Probe the machine that ``system`` describes."""
    entries = discover(disabled)
    started = time.perf_counter()
    slot: list[object] = []
    # The platform's reads (kernel release, libc, OS version) get the providers' deadline too: a read that hangs
    # in the kernel (a dead network mount under the sysroot) must not hold detection.
    reader = threading.Thread(target=_read_platform, args=(system, slot), name="probe-platform", daemon=True)
    reader.start()
    results = run_providers(system, entries)
    reader.join(max(0.0, system.command_timeout + GRACE_SECONDS - (time.perf_counter() - started)))
    if slot and isinstance(slot[0], Platform):
        plat = slot[0]
    else:
        ms = (time.perf_counter() - started) * 1000
        why = f"crashed: {type(slot[0]).__name__}: {slot[0]}" if slot else f"did not finish within {ms / 1000:.1f} s"
        error = _line(f"{why}; OS, libc and kernel left unknown")
        results.append(Ran("platform", [ProbeRecord("platform", "platform", False, ms, error=error)]))
        # No further I/O here: a sysroot's OS is known only from its files, which are what hung.
        osname = "unknown" if system.is_sysroot else system.os_name
        plat = Platform(system=osname, machine=None, python=_platform.python_version())
    return assemble(plat, results, sysroot=str(system.root) if system.is_sysroot else None)


def _read_platform(system: System, slot: list[object]) -> None:
    try:
        slot.append(Platform(**platform_info(system)))
    except Exception as exc:  # noqa: BLE001 - reported as a failed probe by the caller
        slot.append(exc)


def run_providers(system: System, providers: Sequence[LoadedProvider | PluginEntry]) -> list[Ran]:
    """Each provider on its own thread (a :class:`PluginEntry` is imported there, so an import that hangs is
    abandoned too), all under one deadline."""
    deadline = time.monotonic() + system.command_timeout + GRACE_SECONDS
    output = ProviderOutput()
    threads: list[tuple[LoadedProvider | PluginEntry, threading.Thread, float, list[object]]] = []
    for item in providers:
        slot: list[object] = []
        t = threading.Thread(target=_call, args=(item, system, slot, output), name=f"probe-{item.name}", daemon=True)
        threads.append((item, t, time.perf_counter(), slot))
        t.start()
    results: list[Ran] = []
    try:
        for item, t, started, slot in threads:
            t.join(max(0.0, deadline - time.monotonic()))
            ms = (time.perf_counter() - started) * 1000
            results.append(_outcome(item, _HUNG if t.is_alive() or not slot else slot[0], ms))
    finally:
        output.close()
    return results


class _NotLoaded:
    def __init__(self, problem: str) -> None:
        self.problem = problem


_HUNG = object()  #: nothing came back before the deadline (``None`` is what a plugin may return)


def _call(item: LoadedProvider | PluginEntry, system: System, slot: list[object], output: ProviderOutput) -> None:
    output.enter()
    try:
        loaded = load(item) if isinstance(item, PluginEntry) else item
        if loaded.provider is None:
            slot.append(_NotLoaded(loaded.problem or loaded.error or "could not be loaded"))
            return
        slot.append(loaded.provider.probe(system))
    except BaseException as exc:  # noqa: BLE001 - reported as a failed probe by the caller
        slot.append(exc)


def _outcome(item: LoadedProvider | PluginEntry, got: object, ms: float) -> Ran:
    if got is _HUNG:
        return _failed(item, "timeout", f"did not finish within {ms / 1000:.1f} s", ms)
    if isinstance(got, _NotLoaded):
        return _failed(item, "load", got.problem, ms)
    if isinstance(got, BaseException):
        return _failed(item, "crash", f"crashed: {type(got).__name__}: {_text(got)}", ms)
    if not isinstance(got, ProviderResult):  # a third-party plugin may return anything
        wrong = f"returned something that is not a ProviderResult ({type(got).__name__})"
        return _failed(item, "invalid", wrong, ms)
    return _checked(item, got)


def _failed(item: LoadedProvider | PluginEntry, kind: str, error: str, ms: float) -> Ran:
    failure = ProviderFailure(item.name, item.distribution, item.version, kind, _line(error))
    return Ran(item.name, [_failure_record(failure, "load" if kind == "load" else "provider", ms)], failure=failure)


def _failure_record(failure: ProviderFailure, source: str, ms: float) -> ProbeRecord:
    said = f"detector {failure.provider!r} ({failure.origin}) {failure.error}"
    hint = f"fix or uninstall {failure.origin}, or skip it with --disable-provider {failure.provider}"
    return ProbeRecord(failure.provider, source, False, ms, error=_line(said), hint=hint)


def _checked(item: LoadedProvider | PluginEntry, res: ProviderResult) -> Ran:
    """The well-formed part of a provider's result; each malformed piece is a failed probe and the provider a
    failure of kind ``invalid``, so nothing a plugin returns can end detection or corrupt the JSON report."""
    name = item.name
    ran = Ran(name)
    problems: list[str] = []
    try:
        probes, accels, cpu = res.probes, res.accelerators, res.cpu
    except Exception as exc:  # noqa: BLE001 - a subclass whose attributes raise
        return _failed(item, "invalid", f"returned a ProviderResult that cannot be read: {_text(exc)}", 0.0)
    for record in _items(probes, "probes", problems):
        if _well_formed(record):
            ran.probes.append(record)
        else:
            problems.append(f"a probe record is malformed: {_text(record)[:80]}")
    for entry in _items(accels, "accelerators", problems):
        try:
            json.dumps(entry, allow_nan=False)
            ran.accelerators.append(accelerator_from_dict(entry))
        except (ReportError, TypeError, ValueError, RecursionError) as exc:
            why = f"rejected an accelerator entry: {_text(exc)}"
            ran.probes.append(ProbeRecord(name, "report", False, 0.0, error=_line(why)))
            problems.append(why)
    if cpu is not None:
        try:
            ran.cpu = _cpu(cpu)
        except TypeError as exc:
            why = f"rejected the cpu section: {_text(exc)}"
            ran.probes.append(ProbeRecord(name, "report", False, 0.0, error=_line(why)))
            problems.append(why)
    if problems:
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        ran.failure = ProviderFailure(name, item.distribution, item.version, "invalid",
                                      _line(f"returned invalid data: {problems[0]}{more}"))  # fmt: skip
        ran.probes.append(_failure_record(ran.failure, "provider", 0.0))
    return ran


def _items(value: object, what: str, problems: list[str]) -> list[Any]:
    if isinstance(value, (list, tuple)):
        return list(value)
    problems.append(f"{what} is a {type(value).__name__}, not a list")
    return []


def _well_formed(p: object) -> bool:
    if not isinstance(p, ProbeRecord):
        return False
    # A plugin built against another probekit, or one that fills the fields itself, may put anything in them.
    texts: tuple[object, ...] = (p.provider, p.source, p.detail or "", p.error or "", p.hint or "")
    ok: object = p.ok
    ms: object = p.ms
    return (
        all(isinstance(t, str) for t in texts)
        and isinstance(ok, bool)
        and isinstance(ms, (int, float))
        and math.isfinite(ms)
    )


def _text(obj: object) -> str:
    """``str(obj)`` of a plugin's object, whose ``__str__`` may itself raise."""
    try:
        return str(obj)
    except Exception:  # noqa: BLE001 - unprintable, but still named
        return f"<unprintable {type(obj).__name__}>"


def _line(text: str) -> str:
    return " ".join(text.split())[:300]


def assemble(plat: Platform, results: list[Ran], sysroot: str | None = None) -> HardwareReport:
    """Merge checked provider results into one report; the first provider's CPU section wins."""
    accels: list[Accelerator] = []
    probes: list[ProbeRecord] = []
    failed: list[ProviderFailure] = []
    cpu: Cpu | None = None
    for ran in results:
        probes.extend(ran.probes)
        accels.extend(ran.accelerators)
        if ran.cpu is not None and cpu is None:
            cpu = ran.cpu
        if ran.failure is not None:
            failed.append(ran.failure)
    if cpu is None:
        cpu = Cpu(arch=plat.machine)
    return HardwareReport(plat, cpu, tuple(accels), tuple(probes), sysroot, failed_providers=tuple(failed))


_CPU_TEXT = ("arch", "vendor", "model", "microarchitecture", "x86_64_level")


def _cpu(data: object) -> Cpu:
    """A provider's CPU section, or ``TypeError`` saying what is wrong with it."""
    if not isinstance(data, Mapping):
        raise TypeError(f"it is a {type(data).__name__}, not a mapping")
    for key in _CPU_TEXT:
        if not isinstance(data.get(key), (str, type(None))):
            raise TypeError(f"{key!r} must be a string or null")
    features = data.get("features") or ()
    if not isinstance(features, (list, tuple, set, frozenset)) or not all(isinstance(f, str) for f in features):
        raise TypeError("'features' must be a list of strings")
    return Cpu(
        arch=data.get("arch"),
        vendor=data.get("vendor"),
        model=data.get("model"),
        microarchitecture=data.get("microarchitecture"),
        x86_64_level=data.get("x86_64_level"),
        features=tuple(sorted(set(features))),
    )
