"""wheelfit detector plugin: intel."""

from __future__ import annotations

from wheelfit_probekit import ProbeLog, ProviderResult, System

__all__ = ["PROVIDER"]


class _Provider:
    name = "intel"

    def probe(self, system: System) -> ProviderResult:
        log = ProbeLog(self.name)
        return ProviderResult(probes=log.records)


PROVIDER = _Provider()
