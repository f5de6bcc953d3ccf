"""Which of an extension's wheels was built for one torch build, read from the wheel's name alone. Pure.

An extension (flash-attn, torch-scatter, ...) links against one torch release, one CUDA major or variant and
one C++ ABI; its label says which (:mod:`wheelfit.kb.extensions`). A wheel fits a build when every part its
label names agrees, its tags fit the target, and its Requires-Python admits the target's Python. A wheel whose
label says nothing is taken only from a listing made for that very build (PyG's page for ``torch-2.9.0+cu128``).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.tags import Tag
from packaging.utils import canonicalize_name
from packaging.version import Version

from ..kb.extensions import Extension, cxx11_abi
from ..simple.filenames import WheelName, parse_wheel_name
from ..simple.links import FileLink
from ..simple.select import requires_python_problem

__all__ = ["Fit", "Listing", "Miss", "TorchBuild", "TorchPin", "pick"]

_CUDA_LABEL = re.compile(r"cu(\d+)(\d)")


@dataclass(frozen=True)
class TorchBuild:
    """The torch an extension must be built for: its release, its per-variant label and its platform."""

    version: Version
    #: ``cu128``, ``cpu``, ``rocm7.1``, ``xpu`` (a wheel-variant plan's label as its per-variant index's).
    variant: str
    #: wheelfit's platform key (``linux_x86_64``); the C++ ABI is a Linux matter.
    platform: str
    #: The index the plan installs torch from: where an extension published beside torch is listed (xformers).
    index: str = ""

    @property
    def series(self) -> str:
        return f"{self.version.major}.{self.version.minor}"

    @property
    def cuda(self) -> tuple[str, str] | None:
        """``("12", "8")`` for ``cu128``; ``None`` for a build without CUDA."""
        m = _CUDA_LABEL.fullmatch(self.variant)
        return None if m is None else (str(int(m[1])), m[2])

    @property
    def cxx11_abi(self) -> bool | None:
        return cxx11_abi(self.series, self.variant) if self.platform.startswith("linux") else None

    def __str__(self) -> str:
        return f"torch {self.version.public}+{self.variant}"


@dataclass(frozen=True)
class Listing:
    """The files a source lists for an extension, and where they were read."""

    links: tuple[FileLink, ...]
    where: str
    #: The listing was made for this very build (a page per torch and variant): a label may say nothing.
    per_build: bool = False


@dataclass(frozen=True)
class Fit:
    """The extension's file for the build."""

    name: str
    link: FileLink
    version: Version
    #: What the label says it was built for (``torch 2.9, CUDA 12, C++11 ABI``), for the plan's reasons.
    built_for: str
    where: str


@dataclass(frozen=True)
class Miss:
    """No file of the extension fits the build."""

    name: str
    #: One clause: ``publishes no wheel for torch 2.10 (CUDA 12, C++11 ABI, cp312, linux_x86_64)``.
    why: str
    #: Torch series it has wheels for that fit this machine otherwise (CUDA major, Python, platform), newest
    #: first; ``None`` when the listing cannot tell (a page made for one build).
    series: tuple[str, ...] | None


#: The torch a wheel's metadata requires (``Requires-Dist: torch==2.9.0``), read with I/O by the caller; ``None``:
#: it names none, or its metadata cannot be read.
TorchPin = Callable[[FileLink], SpecifierSet | None]


def pick(
    ext: Extension,
    requirement: Requirement,
    listing: Listing,
    build: TorchBuild,
    tags: Sequence[Tag],
    python: str,
    pins: TorchPin | None = None,
) -> Fit | Miss:
    """The newest file of ``listing`` that ``requirement`` allows and that was built for ``build``, best tag
    first; else why none fits, and which torch series would have one. An extension that pins its torch
    (``ext.torch_pin``: xformers) is taken only when its metadata's pin, read by ``pins``, admits ``build``."""
    name = canonicalize_name(requirement.name)
    exact = any(s.operator in ("==", "===") for s in requirement.specifier)
    priority = {tag: i for i, tag in reversed(list(enumerate(tags)))}
    fits: list[tuple[tuple[Version, int], FileLink, WheelName, str]] = []
    other_series: set[str] = set()
    for link, wheel in _wheels(listing.links, name):
        if link.yanked is not None or not requirement.specifier.contains(wheel.version, prereleases=exact or None):
            continue
        ranks = [priority[t] for t in wheel.tags if t in priority]
        if not ranks or requires_python_problem(link.requires_python, Version(python)) is not None:
            continue
        said = _said(ext, wheel)
        if said is None:  # the label says nothing: only a page made for this build, or the wheel's pin, vouches
            if listing.per_build or (ext.torch_pin and pins is not None):
                fits.append(((wheel.version, -min(ranks)), link, wheel, f"listed for {build}"))
            continue
        pt = (said["torch_major"], said["torch_minor"]) if "torch_minor" in said else None
        series = said.get("torch") or (f"{pt[0]}.{pt[1]}" if pt else None)
        if not _cuda_fits(said, build, major_only=True):
            continue
        if series is not None and series != build.series:
            other_series.add(series)
            continue
        if _cuda_fits(said, build) and _abi_fits(said, build):
            fits.append(((wheel.version, -min(ranks)), link, wheel, _describe(said, series, build)))
    fits.sort(key=lambda f: f[0], reverse=True)
    for _, link, wheel, built_for in fits:
        if ext.torch_pin and pins is not None:
            pinned = pins(link)
            if pinned is None or not pinned.contains(build.version.public, prereleases=True):
                other_series.update(_pinned_series(pinned))
                continue
            built_for = f"torch{pinned}"
        return Fit(name, link, wheel.version, built_for, listing.where)
    known = None if listing.per_build else tuple(sorted(other_series, key=_series_key, reverse=True))
    return Miss(name, _why(requirement, build, tags, known), known)


def _pinned_series(pinned: SpecifierSet | None) -> set[str]:
    """The torch series an exact pin names (``==2.9.0`` -> ``2.9``), for the back-off."""
    out: set[str] = set()
    for spec in pinned or ():
        if spec.operator in ("==", "==="):
            parts = spec.version.split("+")[0].split(".")
            if len(parts) >= 2 and parts[0].isdigit() and parts[1].isdigit():
                out.add(f"{parts[0]}.{parts[1]}")
    return out


def _wheels(links: Iterable[FileLink], name: str) -> Iterable[tuple[FileLink, WheelName]]:
    for link in links:
        wheel = parse_wheel_name(link.filename)
        if wheel is not None and wheel.name == name:
            yield link, wheel


def _said(ext: Extension, wheel: WheelName) -> dict[str, str] | None:
    """The named groups of the extension's label pattern in the wheel's local label, lower-cased; ``None`` when
    the label (or its absence) says nothing about the build."""
    if ext.label is None or wheel.local is None:
        return None
    m = ext.label.fullmatch(wheel.local)
    return None if m is None else {k: v.lower() for k, v in m.groupdict().items() if v is not None}


def _cuda_fits(said: dict[str, str], build: TorchBuild, *, major_only: bool = False) -> bool:
    """A ``cu12`` label needs a CUDA 12 torch; ``cu128`` (a ``cuda`` or ``variant`` group) exactly torch's
    ``cu128``, or with ``major_only`` any CUDA 12 torch; ``cpu`` or ``rocm7.1`` exactly that build."""
    variant = said.get("variant")
    if variant is not None and not variant.startswith("cu"):
        return variant == build.variant
    digits = said.get("cuda") or (variant[2:] if variant is not None else None)
    if digits is None:
        return True
    here = build.cuda
    if here is None:
        return False
    if len(digits) <= 2 or major_only:
        return (digits if len(digits) <= 2 else digits[:-1]) == here[0]
    return f"cu{digits}" == build.variant


def _abi_fits(said: dict[str, str], build: TorchBuild) -> bool:
    abi, here = said.get("abi"), build.cxx11_abi
    return abi is None or here is None or (abi == "true") == here


def _describe(said: dict[str, str], series: str | None, build: TorchBuild) -> str:
    parts = [f"torch {series}" if series else str(build)]
    if "cuda" in said:
        parts.append(f"CUDA {said['cuda'] if len(said['cuda']) <= 2 else build.variant}")
    elif "variant" in said:
        parts.append(said["variant"])
    if "abi" in said:
        parts.append("C++11 ABI" if said["abi"] == "true" else "the pre-C++11 ABI")
    return ", ".join(parts)


def _why(requirement: Requirement, build: TorchBuild, tags: Sequence[Tag], series: tuple[str, ...] | None) -> str:
    """``flash-attn has no wheel built for torch 2.10 (cu128: CUDA 12, C++11 ABI, cp312, linux_x86_64); it has
    wheels for torch 2.9, 2.8``."""
    needs = [] if build.cuda is None else [f"CUDA {build.cuda[0]}"]
    abi = build.cxx11_abi
    if abi is not None:
        needs.append("C++11 ABI" if abi else "the pre-C++11 ABI")
    if tags:
        needs.append(tags[0].interpreter)
    needs.append(build.platform)
    why = f"{requirement} has no wheel built for torch {build.series} ({build.variant}: {', '.join(needs)})"
    if series:
        why += f"; it has wheels for torch {', '.join(series)}"
    return why


def _series_key(series: str) -> tuple[int, ...]:
    return tuple(int(p) for p in series.split(".") if p.isdigit())
