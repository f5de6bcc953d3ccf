"""wheelfit detector plugin: amd.

Reports every usable AMD GPU with its physical gfx target (KFD), the target
the ROCm runtime will use (after ``HSA_OVERRIDE_GFX_VERSION``) and the
installed ROCm version.
"""

from __future__ import annotations

from wheelfit_probekit import ProviderResult, System

from .detect import detect

__all__ = ["PROVIDER"]


class _Provider:
    name = "amd"

    def probe(self, system: System) -> ProviderResult:
        return detect(system)


PROVIDER = _Provider()
