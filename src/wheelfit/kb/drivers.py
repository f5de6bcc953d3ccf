"""NVIDIA driver floors for the planner, from the one driver table (``wheelfit_probekit.drivers``).

The table is the shared toolkit's data, not a detector plugin's, so the planner reads it without loading one. The
NVIDIA detector reads the same table to say which CUDA a driver supports, so the planner and the detector can
never disagree (they once did: 560.35.05 here, 560.28.03 there, for CUDA 12.6). The floor that decides whether a
build of a CUDA minor runs natively is that minor's GA row (NVIDIA Table 3); minor-version compatibility is
Table 2's, per CUDA major.
"""

from __future__ import annotations

from functools import cache
from types import MappingProxyType

from wheelfit_probekit import drivers

from ..kinds import Confidence
from .matrix import DriverFloor, DriverVersion

__all__ = ["compat_floor", "toolkit_floor"]


@cache
def toolkit_floor(cuda: str) -> DriverFloor | None:
    """The driver a CUDA toolkit (``12.6``) asks for on its own, per OS, with the release each belongs to
    (``12.6 GA``); ``None`` when the table does not list that CUDA."""
    return _both(drivers.toolkit_floor(cuda, False), drivers.toolkit_floor(cuda, True))


@cache
def compat_floor(cuda_major: int) -> DriverFloor | None:
    """The lowest driver that runs builds of a CUDA major through minor-version compatibility (Table 2)."""
    return _both(drivers.minor_compat_floor(cuda_major, False), drivers.minor_compat_floor(cuda_major, True))


def _both(linux: drivers.DriverFloor | None, windows: drivers.DriverFloor | None) -> DriverFloor | None:
    if linux is None and windows is None:
        return None
    rows = {"linux": linux, "windows": windows}
    return DriverFloor(
        linux=_version(linux),
        windows=_version(windows),
        confidence=MappingProxyType(
            {os: Confidence(row.confidence) if row else Confidence.UNCERTAIN for os, row in rows.items()}
        ),
        source="; ".join(dict.fromkeys(f"{row.release}: {row.source}" for row in rows.values() if row)),
        note="; ".join(dict.fromkeys(row.note for row in rows.values() if row and row.note)) or None,
        releases=MappingProxyType({os: row.release for os, row in rows.items() if row}),
    )


def _version(row: drivers.DriverFloor | None) -> DriverVersion | None:
    return DriverVersion.parse(row.min_driver) if row is not None and row.min_driver is not None else None
