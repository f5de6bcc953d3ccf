"""The hardware report: what a machine has, in the terms that decide which PyTorch build runs on it.

A versioned, JSON-serialisable contract (``wheelfit detect --json``) that the
resolver, ``--target`` files and other tools read. Providers hand in plain
dicts; :func:`accelerator_from_dict` validates them so a broken third-party
detector cannot corrupt a report.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields
from typing import Any, Literal, get_args

from wheelfit_probekit import ProbeRecord

from .errors import ReportError

__all__ = [
    "SCHEMA_VERSION",
    "Accelerator",
    "Cpu",
    "HardwareReport",
    "Platform",
    "ProviderFailure",
    "accelerator_from_dict",
]

#: The major is bumped on any incompatible change to the JSON shape (readers refuse other majors), the minor when
#: keys are added: 1.1 adds ``failed_providers``.
SCHEMA_VERSION = "1.1"

Vendor = Literal["nvidia", "amd", "intel", "apple"]
VENDORS: tuple[str, ...] = get_args(Vendor)

#: Vendor-specific keys an accelerator carries in JSON (null when unknown).
VENDOR_KEYS: dict[str, tuple[str, ...]] = {
    "nvidia": ("compute_capability", "driver_version", "cuda_driver_version"),
    "amd": ("gfx", "effective_gfx", "rocm_version"),
    "intel": ("family", "xpu_capable", "device_ip"),
    "apple": ("mps",),
}

_BOOL_KEYS = frozenset({"xpu_capable", "mps", "integrated"})


@dataclass(frozen=True)
class Platform:
    system: str
    machine: str | None
    python: str
    libc: str | None = None
    wsl: bool = False
    #: Kernel release on Linux, OS version on macOS/Windows.
    release: str | None = None
    container: bool = False
    #: A Jetson's Linux for Tegra release (``36.4.7``: JetPack 6), from ``/etc/nv_tegra_release``; else ``None``.
    l4t: str | None = None


@dataclass(frozen=True)
class Cpu:
    arch: str | None
    vendor: str | None = None
    model: str | None = None
    microarchitecture: str | None = None
    x86_64_level: str | None = None
    features: tuple[str, ...] = ()


@dataclass(frozen=True)
class Accelerator:
    """One usable device. Fields that do not apply to the vendor stay ``None``."""

    vendor: str
    name: str
    pci_id: str | None
    source: str
    integrated: bool | None = None
    # NVIDIA
    compute_capability: str | None = None
    driver_version: str | None = None
    cuda_driver_version: str | None = None
    # AMD
    gfx: str | None = None
    effective_gfx: str | None = None
    rocm_version: str | None = None
    # Intel
    family: str | None = None
    xpu_capable: bool | None = None
    device_ip: str | None = None
    # Apple
    mps: bool | None = None
    #: Anything else a provider reports (slot, uuid, memory, ...), kept verbatim.
    extra: Mapping[str, Any] = field(default_factory=dict)

    @property
    def arch(self) -> str | None:
        """The architecture that decides kernels: ``sm_86``, ``gfx942``, an Intel family."""
        if self.compute_capability:
            return "sm_" + self.compute_capability.replace(".", "")
        return self.effective_gfx or self.gfx or self.family

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "vendor": self.vendor,
            "name": self.name,
            "pci_id": self.pci_id,
            "source": self.source,
            "integrated": self.integrated,
        }
        for key in VENDOR_KEYS.get(self.vendor, ()):
            out[key] = getattr(self, key)
        out.update(self.extra)
        return out


_ACCEL_FIELDS = {f.name for f in fields(Accelerator)} - {"extra"}


def accelerator_from_dict(data: Mapping[str, Any]) -> Accelerator:
    """Validate a provider's (or a saved report's) accelerator entry."""
    if not isinstance(data, Mapping):
        raise ReportError(f"accelerator entry is not an object: {data!r:.80}")
    vendor = data.get("vendor")
    if vendor not in VENDORS:
        raise ReportError(f"accelerator has unknown vendor {vendor!r} (expected one of {', '.join(VENDORS)})")
    for key in ("name", "source"):
        if not isinstance(data.get(key), str) or not data[key]:
            raise ReportError(f"{vendor} accelerator lacks a {key!r} string")
    known: dict[str, Any] = {}
    extra: dict[str, Any] = {}
    for key, value in data.items():
        if key in _ACCEL_FIELDS:
            expected = bool if key in _BOOL_KEYS else str
            if value is not None and not isinstance(value, expected):
                raise ReportError(f"{vendor} accelerator field {key!r} must be {expected.__name__} or null")
            known[key] = value
        else:
            extra[key] = value
    known.setdefault("pci_id", None)
    return Accelerator(**known, extra=extra)


def plugin_origin(distribution: str | None, version: str | None) -> str:
    """``wheelfit-nvidia 0.2.0``: the package a user fixes or removes when its detector fails."""
    return " ".join(filter(None, (distribution or "an unknown distribution", version)))


@dataclass(frozen=True)
class ProviderFailure:
    """A detector plugin that crashed, hung, could not be loaded or returned invalid data: what it would have found
    is missing from the report, and a plan made from it has to say so and name the package to fix."""

    provider: str
    distribution: str | None
    version: str | None
    #: ``load``, ``crash``, ``timeout`` or ``invalid`` (stable names).
    kind: str
    #: What happened, one line without the plugin's name: ``crashed: RuntimeError: ...``.
    error: str

    @property
    def origin(self) -> str:
        return plugin_origin(self.distribution, self.version)

    def to_dict(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in fields(self)}


@dataclass(frozen=True)
class HardwareReport:
    platform: Platform
    cpu: Cpu
    accelerators: tuple[Accelerator, ...] = ()
    probes: tuple[ProbeRecord, ...] = ()
    #: The sysroot the report was taken from, when simulated.
    sysroot: str | None = None
    schema_version: str = SCHEMA_VERSION
    #: Detector plugins that gave nothing usable (each also has a failed probe in ``probes``).
    failed_providers: tuple[ProviderFailure, ...] = ()

    def by_vendor(self, vendor: str) -> list[Accelerator]:
        return [a for a in self.accelerators if a.vendor == vendor]

    def failed_probes(self) -> list[ProbeRecord]:
        return [p for p in self.probes if not p.ok]

    def to_dict(self) -> dict[str, Any]:
        return {
            "schema_version": self.schema_version,
            "platform": _plain(self.platform),
            "cpu": {**_plain(self.cpu), "features": sorted(self.cpu.features)},
            "accelerators": [a.to_dict() for a in self.accelerators],
            "probes": [p.to_dict() for p in self.probes],
            "sysroot": self.sysroot,
            "failed_providers": [f.to_dict() for f in self.failed_providers],
        }

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> HardwareReport:
        """Read a saved report (``--target report.json``); refuses other schema majors."""
        if not isinstance(data, Mapping):
            raise ReportError("a hardware report must be a JSON object")
        version = str(data.get("schema_version", ""))
        if version.split(".")[0] != SCHEMA_VERSION.split(".")[0]:
            raise ReportError(
                f"hardware report schema {version or '(missing)'} is not supported "
                f"(this wheelfit reads {SCHEMA_VERSION.split('.')[0]}.x); re-run `wheelfit detect --json`"
            )
        try:
            plat = Platform(**_only(data["platform"], Platform))
            cpu_d = _only(data["cpu"], Cpu)
            cpu_d["features"] = tuple(cpu_d.get("features") or ())
            cpu = Cpu(**cpu_d)
            accels = tuple(accelerator_from_dict(a) for a in data.get("accelerators", []))
            probes = tuple(ProbeRecord(**_only(p, ProbeRecord)) for p in data.get("probes", []))
            failed = tuple(ProviderFailure(**_only(f, ProviderFailure)) for f in data.get("failed_providers", []))
        except (KeyError, TypeError) as exc:
            raise ReportError(f"hardware report is malformed: {exc}") from exc
        return cls(plat, cpu, accels, probes, data.get("sysroot"), version, failed)


def _plain(obj: Platform | Cpu) -> dict[str, Any]:
    return {f.name: getattr(obj, f.name) for f in fields(obj)}


def _only(data: Any, cls: type) -> dict[str, Any]:
    if not isinstance(data, Mapping):
        raise TypeError(f"{cls.__name__.lower()} section is not an object")
    names = {f.name for f in fields(cls)}
    return {k: v for k, v in data.items() if k in names}


def sorted_features(features: Sequence[str]) -> tuple[str, ...]:
    return tuple(sorted(set(features)))
