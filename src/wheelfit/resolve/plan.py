"""The resolver's answer: which build, from where, why, what was turned down, and how sure each pin is.

``Plan.to_dict`` is a contract other tools read (``wheelfit plan --json``): keys keep their meaning,
new keys are additions, and ``schema_version`` says which.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..candidates.model import Fact, weakest
from ..kinds import Confidence, Mode

if TYPE_CHECKING:
    from .fallback import DetectorFallback

__all__ = ["PLAN_SCHEMA_VERSION", "PackagePin", "Plan", "Rejection"]

#: 1.0: the keys of wheelfit 0.1; 1.1 adds ``schema_version``, ``confidence``/``uncertain`` per package,
#: ``judge`` per rejection and ``sources``; 1.2 adds ``detector_failures`` (an empty list when every detector
#: plugin worked or the machine was given with ``--target``); 1.3 adds ``gpu_fallback`` (why a machine with a GPU
#: gets the CPU build, else null); 1.4 adds ``extensions`` (the files of packages built against the torch, each
#: with ``filename``, ``url`` and, where listed, ``sha256``; an empty list when none was asked for).
PLAN_SCHEMA_VERSION = "1.4"


@dataclass(frozen=True)
class PackagePin:
    name: str
    version: str
    #: What an installer is asked for, e.g. ``torch==2.14.1+cu126``.
    requirement: str
    #: Variant mode: the one wheel chosen (its name carries the variant label), and where it is.
    filename: str | None = None
    url: str | None = None
    #: The facts this pin rests on that are below primary or measured (the knowledge base's S, U, or inferred).
    uncertain: tuple[Fact, ...] = ()
    #: The file's sha256 where its listing gave one (an extension's wheel: a GitHub asset's digest, a page's hash).
    sha256: str | None = None

    @property
    def confidence(self) -> Confidence:
        return weakest(self.uncertain)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name, "version": self.version, "requirement": self.requirement}
        if self.filename is not None:
            out["filename"] = self.filename
        if self.url is not None:
            out["url"] = self.url
        if self.sha256 is not None:
            out["sha256"] = self.sha256
        out["confidence"] = self.confidence.value
        out["uncertain"] = [f.to_dict() for f in self.uncertain]
        return out


@dataclass(frozen=True)
class Rejection:
    variant: str
    version: str
    reason: str
    #: Which rule turned it down: ``absent``, ``files``, ``python``, ``kernels``, ``driver``, ... (stable names).
    judge: str = ""


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
    mode: Mode = Mode.INDEX
    platform: str = ""
    python: str = ""
    #: Variant mode: the chosen wheel's Requires-Dist whose markers (variant markers included) hold here.
    dependencies: tuple[str, ...] = ()
    #: Variant mode: the chosen variant's properties narrowed to what the machine supports (``ns :: f :: v``);
    #: the variant markers of its dependencies are evaluated with them (PEP 825).
    variant_properties: tuple[str, ...] = ()
    #: What the candidates came from: the knowledge base (with its date) and the index that was read, if any.
    sources: tuple[str, ...] = ()
    #: Detector plugins that failed while the machine was detected, and what the plan was made for instead.
    detector_failures: tuple[DetectorFallback, ...] = ()
    #: A machine with a GPU that gets the CPU build: why (``None``: it does not). Every output that acts on the
    #: plan shows it, and a caller that asked for a GPU build refuses the plan (:func:`require_gpu`).
    gpu_fallback: str | None = None
    #: Packages built against this torch (flash-attn, torch-scatter): each the one file built for it
    #: (:mod:`wheelfit.stack`), with where it is listed.
    extensions: tuple[PackagePin, ...] = ()

    @property
    def uncertain(self) -> tuple[Fact, ...]:
        """Every doubtful fact the plan rests on, once."""
        return tuple(dict.fromkeys(f for p in self.packages for f in p.uncertain))

    def to_dict(self) -> dict[str, Any]:
        return {
            "schema_version": PLAN_SCHEMA_VERSION,
            "torch_version": self.torch_version,
            "variant": self.variant,
            "index_url": self.index_url,
            "mode": self.mode.value,
            "platform": self.platform,
            "python": self.python,
            "packages": [p.to_dict() for p in self.packages],
            "reasons": list(self.reasons),
            "rejected": [
                {"variant": r.variant, "version": r.version, "reason": r.reason, "judge": r.judge}
                for r in self.rejected
            ],
            "warnings": list(self.warnings),
            "env": dict(self.env),
            "sources": list(self.sources),
            "detector_failures": [f.to_dict() for f in self.detector_failures],
            "gpu_fallback": self.gpu_fallback,
            "extensions": [p.to_dict() for p in self.extensions],
            **(
                {"dependencies": list(self.dependencies), "variant_properties": list(self.variant_properties)}
                if self.mode is Mode.VARIANT
                else {}
            ),
        }
