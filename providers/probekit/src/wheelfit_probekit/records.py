"""What a detector hands back: plain, JSON-shaped data and a log of every probe it ran.

This is the plugin contract of the ``wheelfit.providers`` entry-point group. A
provider is an object with a ``name`` and a ``probe(system) -> ProviderResult``
method. It returns facts, never prints, and never raises for a machine that
merely lacks its hardware: a failed probe is a :class:`ProbeRecord` with ``ok``
false, and the provider goes on with its next source.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Protocol

from .system import ProbeError, System

__all__ = ["PROVIDER_API", "Probe", "ProbeLog", "ProbeRecord", "Provider", "ProviderResult"]

#: Version of this contract; the core refuses providers built for another major.
PROVIDER_API = "1"


@dataclass
class ProbeRecord:
    """One probe that ran: which source, whether it answered, how long it took, and why not."""

    provider: str
    source: str
    ok: bool
    ms: float
    detail: str | None = None
    error: str | None = None
    #: What a person can do about it (install a driver, pass a device into the container, ...).
    hint: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "provider": self.provider,
            "source": self.source,
            "ok": self.ok,
            "ms": round(self.ms, 3),
            "detail": self.detail,
            "error": self.error,
            "hint": self.hint,
        }


@dataclass
class ProviderResult:
    """A provider's findings.

    ``accelerators`` holds one dict per usable device with the report's keys
    (``vendor``, ``name``, ``pci_id``, ``source`` and the vendor's own keys).
    ``cpu`` and ``platform`` are filled by the CPU provider only.
    """

    accelerators: list[dict[str, Any]] = field(default_factory=list)
    cpu: dict[str, Any] | None = None
    platform: dict[str, Any] | None = None
    probes: list[ProbeRecord] = field(default_factory=list)


class Provider(Protocol):
    """A detector plugin."""

    name: str

    def probe(self, system: System) -> ProviderResult: ...


@dataclass
class Probe:
    """A running probe; set ``detail`` (what it found) or ``hint`` before the block ends."""

    source: str
    detail: str | None = None
    hint: str | None = None
    #: Set to mark the probe failed without raising (e.g. the tool exited non-zero).
    error: str | None = None


class ProbeLog:
    """Times and records probes for one provider.

    ``with log.probe("nvidia-smi") as p:`` runs the block; an exception inside it
    (a :class:`ProbeError` or any bug) becomes a failed record instead of ending
    detection.
    """

    def __init__(self, provider: str) -> None:
        self.provider = provider
        self.records: list[ProbeRecord] = []

    @contextmanager
    def probe(self, source: str) -> Iterator[Probe]:
        p = Probe(source)
        start = time.perf_counter()
        error: str | None = None
        try:
            yield p
        except ProbeError as exc:
            error = str(exc)
        except Exception as exc:  # noqa: BLE001 - a detector bug must not end detection
            error = f"{type(exc).__name__}: {exc}"
        ms = (time.perf_counter() - start) * 1000
        error = error or p.error
        self.records.append(ProbeRecord(self.provider, source, error is None, ms, p.detail, _one_line(error), p.hint))

    def skipped(self, source: str, why: str) -> None:
        """Record a source that was not tried (e.g. a native library under a sysroot)."""
        self.records.append(ProbeRecord(self.provider, source, True, 0.0, detail=f"skipped: {why}"))

    def failed(self, source: str, error: str, hint: str | None = None) -> None:
        """Record a finding that is a failure without a probe block (a device that is present but unusable)."""
        self.records.append(ProbeRecord(self.provider, source, False, 0.0, error=_one_line(error), hint=hint))


def _one_line(text: str | None) -> str | None:
    if text is None:
        return None
    line = " ".join(text.split())
    return line[:300]
