"""wheelfit detector plugin for NVIDIA GPUs: driver, CUDA driver version and compute capability of every GPU.

Importing this package is cheap: the detector (its parsers, the PCI device table) is loaded inside ``probe()``
only, so that reading the driver table (``wheelfit_nvidia.versions``, for a ``--target`` naming a driver) does not
load it (~10 ms).
"""

from __future__ import annotations

from typing import Any

from wheelfit_probekit import ProbeLog, ProviderResult, System

from .versions import DriverFloor, DriverTableError, minor_compat_floor, newest_update_floor, toolkit_floor

__all__ = ["PROVIDER", "DriverFloor", "DriverTableError", "minor_compat_floor", "newest_update_floor", "toolkit_floor"]


class _Provider:
    name = "nvidia"

    def probe(self, system: System) -> ProviderResult:
        from .detect import detect_gpus

        log = ProbeLog(self.name)
        accelerators: list[dict[str, Any]] = []
        try:
            accelerators = detect_gpus(system, log)
        except Exception as exc:  # noqa: BLE001 - a detector bug is a failed probe, not a crash
            log.failed("detect", f"{type(exc).__name__}: {exc}")
        return ProviderResult(accelerators=accelerators, probes=log.records)


PROVIDER = _Provider()
