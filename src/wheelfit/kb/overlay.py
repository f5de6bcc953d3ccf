"""Knowledge measured on this machine: what an installed build said about itself when ``verify`` or ``doctor``
imported it (``torch.cuda.get_arch_list()``, ``torch.version.cuda``/``hip``), keyed by build, so that a later plan
for that build rests on it (confidence ``M``, the date said) instead of an inference or an unverified list
(:func:`wheelfit.candidates.knowledge.measured`). Pure; the file is :mod:`wheelfit.kb.measured`'s.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from packaging.version import Version

__all__ = ["EMPTY", "Measured", "Overlay"]


@dataclass(frozen=True)
class Measured:
    """One build as it described itself on this machine."""

    version: Version
    #: The build (``cu126``, ``rocm6.4``), from the version's label or, for PyPI's unlabelled torch, its runtime.
    label: str
    platform: str
    arch_list: tuple[str, ...]
    #: ``torch.version.cuda`` / ``hip`` / ``xpu`` as it said.
    runtime: str | None
    date: str

    @property
    def key(self) -> tuple[Version, str, str]:
        return Version(self.version.public), self.label, self.platform

    def to_dict(self) -> dict[str, object]:
        return {
            "version": str(self.version), "label": self.label, "platform": self.platform,
            "arch_list": list(self.arch_list), "runtime": self.runtime, "date": self.date,
        }  # fmt: skip

    @property
    def source(self) -> str:
        what = "torch.xpu" if self.label == "xpu" else "torch.cuda"
        return f"measured on this machine, {self.date}: {what}.get_arch_list() of torch {self.version}"


@dataclass(frozen=True)
class Overlay:
    """The measured builds by (public version, label, platform); empty when nothing was measured."""

    builds: Mapping[tuple[Version, str, str], Measured]
    path: str = ""


EMPTY = Overlay({})


