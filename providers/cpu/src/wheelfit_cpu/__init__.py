"""wheelfit detector plugin: cpu."""

from __future__ import annotations

from wheelfit_probekit import ProbeLog, ProviderResult, System

__all__ = ["PROVIDER"]


class _Provider:
    name = "cpu"

    def probe(self, system: System) -> ProviderResult:
        log = ProbeLog(self.name)
        return ProviderResult(probes=log.records)


PROVIDER = _Provider()
