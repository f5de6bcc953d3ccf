"""What a plan says when a detector plugin failed: the hardware that plugin would have reported is unknown, so the
plan is for what the others detected, and the user is told which package failed and how to plan for the rest.

Without this a crashed NVIDIA detector would quietly give a CPU plan on a GPU machine (issue 15): the failure is
only a failed probe in ``wheelfit detect --json``, which a user running ``wheelfit install`` never sees.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any

from ..report import HardwareReport, ProviderFailure

__all__ = ["DetectorFallback", "detector_fallbacks"]

#: The built-in detectors' vendors (``providers/*``), and the ``--target`` key that states that vendor's GPUs.
_VENDORS = {
    "nvidia": ("NVIDIA", "cuda=<compute capability>,driver=<driver version>"),
    "amd": ("AMD", "rocm=<gfx target>"),
    "intel": ("Intel", "xpu=<family>"),
}


@dataclass(frozen=True)
class DetectorFallback:
    """One failed detector plugin, what is unknown because of it, what the plan is for instead, what to do."""

    failure: ProviderFailure
    #: ``no NVIDIA GPU is known``; for a plugin of unknown purpose, ``what it would have found is unknown``.
    unknown: str
    #: What the plan was made for: the devices the other detectors found (``NVIDIA GeForce GTX 1080 (sm_61)``),
    #: or ``CPU``.
    planned_for: str
    advice: str

    def sentence(self) -> str:
        f = self.failure
        return (
            f"the {f.provider} detector ({f.origin}) {f.error}; {self.unknown}, "
            f"so the plan is for what was detected: {self.planned_for}"
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            **self.failure.to_dict(),
            "unknown": self.unknown,
            "planned_for": self.planned_for,
            "advice": self.advice,
        }


def detector_fallbacks(report: HardwareReport) -> tuple[DetectorFallback, ...]:
    """One :class:`DetectorFallback` per failed plugin of ``report`` (none for a ``--target`` spec)."""
    if not report.failed_providers:
        return ()
    counts = Counter(f"{a.name} ({a.arch})" if a.arch else a.name for a in report.accelerators)
    found = ", ".join(f"{n}x {name}" if n > 1 else name for name, n in counts.items()) or "CPU"
    out = []
    for failure in report.failed_providers:
        fix = f"fix or uninstall {failure.origin}, or skip it with --disable-provider {failure.provider}"
        vendor = _VENDORS.get(failure.provider)
        if vendor is not None and not report.by_vendor(failure.provider):
            unknown = f"no {vendor[0]} GPU is known"
            advice = f"to plan for an {vendor[0]} GPU, name it: --target {vendor[1]}; or {fix}"
        elif failure.provider == "cpu" and report.cpu.model is None:
            unknown, advice = "the CPU's model and features are unknown", fix
        else:
            unknown, advice = "what it would have found is unknown", fix
        out.append(DetectorFallback(failure, unknown, found, advice))
    return tuple(out)
