"""What the knowledge base (and what was measured on this machine) says about one build, on every platform it
exists for: the facts behind ``wheelfit kb show 2.9.0+cu126``. Pure."""

from __future__ import annotations

from dataclasses import replace

from packaging.version import Version

from ..kb.matrix import Knowledge
from ..kinds import Confidence
from .knowledge import infer_candidate, kb_candidates
from .model import Candidate, Fact

__all__ = ["PLATFORMS", "known_builds"]

PLATFORMS = ("linux_x86_64", "linux_aarch64", "windows_amd64", "macos_arm64", "macos_x86_64")


def known_builds(kb: Knowledge, version: Version, label: str) -> tuple[Candidate, ...]:
    """The build ``version`` ``label`` per platform: as the knowledge base lists it, else as wheelfit would infer
    it for a release it does not list (its facts say ``inferred``), each with what was measured here over it."""
    out: list[Candidate] = []
    public = Version(version.public)
    for platform in PLATFORMS:
        listed = next((c for c in kb_candidates(kb, platform) if c.version == public and c.label == label), None)
        if listed is None and kb.release(f"{public.major}.{public.minor}") is None:
            listed = infer_candidate(kb, platform, public, label, (), "")
            if listed is not None:  # no index was read: whether it exists is not known
                said = f"torch {public}+{label} exists for {platform}"
                exists = Fact(said, Confidence.UNCERTAIN, "not known: no index was read")
                listed = replace(listed, facts={**listed.facts, "exists": exists})
        if listed is not None:
            out.append(listed)
    return tuple(out)
