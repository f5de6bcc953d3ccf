"""What the user asked the planner for: torch and its companions, with ordinary specifiers."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name

from ..errors import UsageError, first_line
from ..kb.overrides import rocm_known_broken, rocm_overrides
from .machine import ResolveError

__all__ = ["COMPANIONS", "DEFAULT_INDEX", "Request"]

DEFAULT_INDEX = "https://download.pytorch.org/whl"

#: Packages that come at the version matching the chosen torch, from the same variant index.
COMPANIONS = ("torchvision", "torchaudio", "triton")


@dataclass(frozen=True)
class Request:
    """``torch`` (first) and the companions asked for, and the choices that shape the plan."""

    requirements: tuple[Requirement, ...]
    allow_cpu: bool = False
    index_base: str = DEFAULT_INDEX
    #: Pre-releases (``--pre``): nightly builds and release candidates are candidates too.
    pre: bool = False
    #: Near-miss AMD targets: ``{"gfx1031": ("gfx1030", "10.3.0", risk or None)}``.
    rocm_overrides: dict[str, tuple[str, str, str | None]] = field(default_factory=lambda: dict(rocm_overrides()))
    #: Listed targets whose kernels are missing from a ROCm version on: ``{"gfx906": ("6.4", why)}``.
    rocm_broken: dict[str, tuple[str, str]] = field(default_factory=lambda: dict(rocm_known_broken()))

    @classmethod
    def parse(cls, specs: Sequence[str], **kwargs: object) -> Request:
        reqs: list[Requirement] = []
        for spec in specs:
            try:
                req = Requirement(spec)
            except InvalidRequirement as exc:
                raise UsageError(f"cannot read the requirement {spec!r}: {first_line(exc)}") from exc
            name = canonicalize_name(req.name)
            if name != "torch" and name not in COMPANIONS:
                raise ResolveError(
                    f"wheelfit plans torch and its companions ({', '.join(COMPANIONS)}); {req.name} is not one of them"
                )
            reqs.append(req)
        if not any(canonicalize_name(r.name) == "torch" for r in reqs):
            reqs.insert(0, Requirement("torch"))
        reqs.sort(key=lambda r: canonicalize_name(r.name) != "torch")
        return cls(tuple(reqs), **kwargs)  # type: ignore[arg-type]

    @property
    def torch(self) -> Requirement:
        return self.requirements[0]

    @property
    def companions(self) -> tuple[Requirement, ...]:
        return self.requirements[1:]

    @property
    def prereleases(self) -> bool | None:
        """For ``SpecifierSet.contains``: ``True`` with ``--pre`` or an exact pin, else the specifier's own rule."""
        return True if self.pre or self.exact else None

    @property
    def exact(self) -> bool:
        """An exact pin of torch (``==2.9.0``): the only request that may take a yanked file (PEP 592)."""
        return any(s.operator in ("==", "===") and not s.version.endswith("*") for s in self.torch.specifier)
