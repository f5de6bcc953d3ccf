"""torchvision and torchaudio beside a torch: are they that torch's, and of its build? Pure.

A companion of another torch version fails at import or at its first operator; one of another build (``+cpu``
beside a CUDA torch) has no GPU kernels for its own operators. Its ``Requires-Dist: torch==X`` says which torch it
is for (PyTorch pins it exactly), else the knowledge base's pairing; its local label says which build.
"""

from __future__ import annotations

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

from ..kb.matrix import Knowledge
from ..resolve.machine import Machine
from ..variants.legacy import legacy_variant
from .verify import Check, Problem, TorchFacts

__all__ = ["companion_checks"]


def companion_checks(
    facts: TorchFacts, torch: Version, label: str, pypi: str | None, kb: Knowledge, machine: Machine | None
) -> list[Check]:
    """Each installed torchvision/torchaudio: made for this torch version (its ``torch==X`` pin, else the knowledge
    base's pairing) and for the same build (its local label)."""
    macos = machine is not None and machine.platform_key.startswith("macos")
    markers = {**(machine.markers if machine is not None else {}), "extra": ""}
    out: list[Check] = []
    for comp in facts.companions:
        try:
            have = Version(comp.version)
        except ValueError:  # InvalidVersion, or a release number past int()'s 4300-digit limit
            out.append(Check(comp.name, False, f"{comp.name} says its version is {comp.version!r}", Problem.COMPANION))
            continue
        problems: list[str] = []
        pins = [r for r in map(_requirement, comp.requires) if r is not None and canonicalize_name(r.name) == "torch"]
        pins = [r for r in pins if r.marker is None or r.marker.evaluate(markers)]
        spec = next((r.specifier for r in pins if r.specifier), None)
        if spec is not None:
            if not spec.contains(torch, prereleases=True):
                problems.append(f"needs torch{spec}, torch is {torch}")
        else:
            series = kb.release(f"{torch.major}.{torch.minor}")
            pairing = series.companions.get(Version(torch.public)) if series is not None else None
            want = pairing.pins.get(comp.name) if pairing is not None else None
            if want is not None and not want.contains(Version(have.public), prereleases=True):
                problems.append(f"torch {torch.public} pairs with {comp.name}{want} (knowledge base)")
        theirs = have.local or (label if not torch.local else pypi)
        unknown = not macos and theirs is None
        if not macos and theirs is not None and theirs != label and legacy_variant(theirs) != label:
            what = "a CPU build" if theirs == "cpu" else f"a {theirs} build"
            problems.append(f"{what}, torch is {label}")
        if problems:
            fix = f"install the {comp.name} of torch {torch} (`wheelfit install torch {comp.name}`)"
            why = f"{comp.name} {comp.version}: {'; '.join(problems)}: {fix}"
            out.append(Check(comp.name, False, why, Problem.COMPANION))
        else:
            pin = f"needs torch{spec}" if spec is not None else "torch's pairing"
            if unknown:
                why = f"which build it is cannot be told (no local label; torch is {label})"
                out.append(Check(comp.name, None, f"{comp.name} {comp.version}: {pin}; {why}"))
            else:
                same = "" if macos else f", the same {label} build"
                out.append(Check(comp.name, True, f"{comp.name} {comp.version}: {pin}{same}"))
    return out


def _requirement(text: str) -> Requirement | None:
    try:
        return Requirement(text)
    except InvalidRequirement:
        return None
