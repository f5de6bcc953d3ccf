"""The closed sets of the domain as types: the kind of a build, the mode of a plan, the confidence of a fact.

Each is a ``str`` enum (Python 3.10 has no ``StrEnum``) whose values are the words the JSON output and the data
files have always used, so ``to_dict`` and ``--json`` do not change; ``str()`` and f-strings give the value on
every Python. Data is converted where it is read (the knowledge base, variant metadata, torch's own report);
below that, code compares members (``kind is BuildKind.CPU``), never words. Imports nothing, so every layer may.
"""

from __future__ import annotations

from enum import Enum

__all__ = ["BuildKind", "Confidence", "Mode"]


class _Word(str, Enum):
    """A member that prints as its value (``cuda``, not ``BuildKind.CUDA``) in messages, as the strings did."""

    def __str__(self) -> str:
        return str(self.value)

    def __format__(self, spec: str) -> str:
        return format(str(self.value), spec)


class BuildKind(_Word):
    """What a torch build runs on, and what a machine's chosen GPUs need.

    One enum serves builds and GPU groups (:class:`~wheelfit.resolve.machine.GpuGroup`) because a group's kind
    names the build that serves it and the planner compares the two directly (a CUDA group wants a CUDA build).
    ``MPS`` is a group's kind only: Apple GPUs are served by the macOS builds, which are CPU builds, so no
    candidate is ever ``MPS``; ``CPU`` is a build's kind only (a machine without a usable GPU has no group).
    """

    CUDA = "cuda"
    ROCM = "rocm"
    XPU = "xpu"
    CPU = "cpu"
    MPS = "mps"

    @property
    def gpu_build(self) -> bool:
        """A build with a GPU runtime of its own (CUDA, ROCm, XPU): the ones a per-variant index is read for."""
        return self in (BuildKind.CUDA, BuildKind.ROCM, BuildKind.XPU)


class Mode(_Word):
    """Where a candidate (and so a plan) comes from: PyTorch's per-variant indexes (``download.pytorch.org/whl/
    <label>``) or wheel-variant metadata (PEP 817/825)."""

    INDEX = "index"
    VARIANT = "variant"


class Confidence(_Word):
    """How sure a fact is, most sure first: the knowledge base's primary, measured, secondary and uncertain
    (``data/pytorch.json`` "about"), then what wheelfit inferred itself (a release newer than its knowledge)."""

    PRIMARY = "P"
    MEASURED = "M"
    SECONDARY = "S"
    UNCERTAIN = "U"
    INFERRED = "inferred"

    @property
    def rank(self) -> int:
        """0 for the surest; the weakest of several facts has the highest rank."""
        return _ORDER.index(self)

    @property
    def certain(self) -> bool:
        """A plan that rests only on these needs no word of doubt."""
        return self in (Confidence.PRIMARY, Confidence.MEASURED)

    @property
    def doubtful(self) -> bool:
        """A guess: the knowledge base's "uncertain", or wheelfit's own inference. A build whose existence is a
        guess is not chosen over one whose existence is not (no index having said either way)."""
        return self in (Confidence.UNCERTAIN, Confidence.INFERRED)


_ORDER: tuple[Confidence, ...] = tuple(Confidence)
