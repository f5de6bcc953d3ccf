"""wheelfit detector plugin for NVIDIA GPUs: driver, CUDA driver version and compute capability of every GPU.

Importing this package is cheap: the detector (its parsers, the PCI device table, ~10 ms) is loaded inside
``probe()`` only. The driver-floor table the detector reads is not this package's but ``wheelfit_probekit.drivers``,
shared with the planner, which reads it (for a ``--target`` naming a driver) without importing this plugin.
"""

from __future__ import annotations

from typing import Any

from wheelfit_probekit import ProbeLog, ProviderResult, System

__all__ = ["PROVIDER"]


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
