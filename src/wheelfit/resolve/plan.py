"""The resolver's answer: which build, from where, why, and what was turned down."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = ["PackagePin", "Plan", "Rejection"]


@dataclass(frozen=True)
class PackagePin:
    name: str
    version: str
    #: What an installer is asked for, e.g. ``torch==2.14.1+cu126``.
    requirement: str
    #: Variant mode: the one wheel chosen (its name carries the variant label), and where it is.
    filename: str | None = None
    url: str | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name, "version": self.version, "requirement": self.requirement}
        if self.filename is not None:
            out["filename"] = self.filename
        if self.url is not None:
            out["url"] = self.url
        return out


@dataclass(frozen=True)
class Rejection:
    variant: str
    version: str
    reason: str


@dataclass(frozen=True)
class Plan:
    torch_version: str
    variant: str
    index_url: str
    packages: tuple[PackagePin, ...]
    #: Why this build: one sentence each, most important first.
    reasons: tuple[str, ...]
    rejected: tuple[Rejection, ...] = ()
    warnings: tuple[str, ...] = ()
    #: Environment the build needs at run time (``HSA_OVERRIDE_GFX_VERSION``, ``CUDA_VISIBLE_DEVICES``).
    env: Mapping[str, str] = field(default_factory=dict)
    #: ``index``: the per-variant PyTorch indexes; ``variant``: wheel-variant metadata (PEP 817/825).
    mode: str = "index"
    platform: str = ""
    python: str = ""
    #: Variant mode: the chosen wheel's Requires-Dist whose markers (variant markers included) hold here.
    dependencies: tuple[str, ...] = ()
    #: Variant mode: the chosen variant's properties narrowed to what the machine supports (``ns :: f :: v``);
    #: the variant markers of its dependencies are evaluated with them (PEP 825).
    variant_properties: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {
            "torch_version": self.torch_version,
            "variant": self.variant,
            "index_url": self.index_url,
            "mode": self.mode,
            "platform": self.platform,
            "python": self.python,
            "packages": [p.to_dict() for p in self.packages],
            "reasons": list(self.reasons),
            "rejected": [{"variant": r.variant, "version": r.version, "reason": r.reason} for r in self.rejected],
            "warnings": list(self.warnings),
            "env": dict(self.env),
            **(
                {"dependencies": list(self.dependencies), "variant_properties": list(self.variant_properties)}
                if self.mode == "variant"
                else {}
            ),
        }
