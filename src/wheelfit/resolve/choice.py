"""The user's own choice of build: does the build they named run on this machine? Pure.

A local label (``torch==2.9.0+cu128``), ``--torch-backend cu128`` or a direct reference to a wheel
(``torch @ https://.../torch-2.9.0+cu128-...whl``) names one build; wheelfit does not choose another, it judges
that one: it runs (perhaps only on the CPU, said so), it is refused with the rule's reason (the kernels it lacks,
the driver it needs), or it is not a build wheelfit knows.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from packaging.version import Version

from ..candidates.model import Candidate, CandidateSet
from ..kinds import BuildKind, Mode
from ..report import Accelerator
from .judges import Found, Refusal, describe, judge_kernels
from .machine import Machine
from .request import Request

__all__ = ["BuildVerdict", "judge_build", "judge_chosen", "refusal_text"]

Status = Literal["runs", "refused", "unknown"]


@dataclass(frozen=True)
class BuildVerdict:
    """Whether one named build runs here: ``runs`` (with what to watch out for), ``refused`` (``reason`` names
    what it lacks, ``judge`` the rule), or ``unknown`` (a build wheelfit has no facts for)."""

    status: Status
    version: str
    label: str
    reason: str = ""
    judge: str = ""
    warnings: tuple[str, ...] = ()
    #: Environment the build needs at run time (``HSA_OVERRIDE_GFX_VERSION`` the user set).
    env: Mapping[str, str] = field(default_factory=dict)

    @property
    def runs(self) -> bool:
        return self.status == "runs"

    def to_dict(self) -> dict[str, Any]:
        return {
            "status": self.status,
            "version": self.version,
            "label": self.label,
            "reason": self.reason,
            "judge": self.judge,
            "warnings": list(self.warnings),
            "env": dict(self.env),
        }


def refusal_text(label: str, refusal: Refusal) -> str:
    """A judge's reason said of the build: ``cu128 has no SASS for sm_61 (has sm_75-sm_120)``, ``cu128: ...``."""
    return f"{label} has {refusal.reason}" if refusal.lacks else f"{label}: {refusal.reason}"


def judge_chosen(
    c: Candidate, machine: Machine, request: Request, devices: tuple[Accelerator, ...] | None = None
) -> Found | Refusal:
    """The kernel and driver rules for a build the user chose, over ``devices`` (default: every GPU of the machine's
    chosen vendor). A build of another kind than the GPU's runs on the CPU only: allowed, and said."""
    group = machine.gpus
    if c.kind is BuildKind.CPU:
        found = Found(c)
        if group is not None and group.kind is not BuildKind.MPS:
            found.warnings.append(
                f"{c.label} is the CPU build: {', '.join(describe(a) for a in group.devices)} will not be used"
            )
        return found
    if group is None or group.kind is not c.kind:
        where = (
            "this machine has no GPU PyTorch can use"
            if group is None
            else (f"this machine's GPUs are {group.kind} ones ({', '.join(describe(a) for a in group.devices)})")
        )
        found = Found(c)
        found.warnings.append(f"{c.label} is a {c.kind} build and {where}: torch will run on the CPU only")
        return found
    return judge_kernels(c, machine, request, devices if devices is not None else group.devices)


def judge_build(
    machine: Machine,
    candidates: CandidateSet | Iterable[Candidate],
    version: str | Version,
    label: str | None = None,
    request: Request | None = None,
) -> BuildVerdict:
    """Whether torch ``version`` (``2.9.0`` or ``2.9.0+cu128``) built as ``label`` (default: the version's local
    label) has kernels and a runtime for every GPU of ``machine``, judged on the facts of ``candidates`` (the
    knowledge base's or the index's). For a build named outright, e.g. a direct reference to a wheel URL: the
    installer warns on ``refused`` and says ``unknown`` builds were not checked. The wheel's platform and Python
    tags are not judged here (the installer checks those)."""
    try:
        parsed = Version(str(version))
    except ValueError:  # InvalidVersion, or a release number past int()'s 4300-digit limit
        return BuildVerdict("unknown", str(version), label or "", f"{version!r} is not a version")
    public = Version(parsed.public)
    chosen = (label or parsed.local or "").lower()
    pool = candidates.candidates if isinstance(candidates, CandidateSet) else tuple(candidates)
    here = [c for c in pool if c.platform == machine.platform_key and c.mode is Mode.INDEX and c.version == public]
    match = next((c for c in here if c.label == chosen), None)
    if match is None:
        known = ", ".join(dict.fromkeys(c.label for c in here))
        what = f"torch {public}+{chosen}" if chosen else f"torch {public} without a build label"
        has = f" (its builds there: {known})" if known else ""
        return BuildVerdict(
            "unknown", str(public), chosen, f"{what} is not a build wheelfit knows for {machine.platform_key}{has}"
        )
    verdict = judge_chosen(match, machine, request if request is not None else Request.parse(["torch"]))
    if isinstance(verdict, Refusal):
        return BuildVerdict("refused", str(public), chosen, refusal_text(chosen, verdict), verdict.judge.value)
    return BuildVerdict("runs", str(public), chosen, warnings=tuple(verdict.warnings), env=dict(verdict.env))
