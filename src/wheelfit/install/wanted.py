"""What the user asked ``wheelfit install`` for, sorted: torch-family requirements for the planner (with their
extras, markers applied, constraints folded in), everything else for the backend as written. Pure."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import unquote, urlsplit

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import InvalidWheelFilename, canonicalize_name, parse_wheel_filename

from ..errors import UsageError, first_line
from .family import is_torch_family

__all__ = ["Wanted", "sort_wanted"]


@dataclass(frozen=True)
class Wanted:
    #: Torch-family requirements for the planner: no extras, no markers, the user's constraints folded in.
    family: tuple[Requirement, ...] = ()
    #: Torch-family direct references (``torch @ https://...whl``, ``torch @ file:///...``), as written.
    direct: tuple[Requirement, ...] = ()
    #: Everything else, as written, for the backend and the default index.
    other: tuple[str, ...] = ()
    #: Constraints on names that are not torch-family, for the backend's constraints file.
    constraints: tuple[str, ...] = ()
    #: Extras asked for on torch-family packages: ``{"torch": ("opt-einsum",)}``.
    extras: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    #: Why a requirement was left out (its marker is false for this environment).
    skipped: tuple[str, ...] = ()

    @property
    def asks_family(self) -> bool:
        return bool(self.family or self.direct)


def _parse(text: str, cwd: Path | None = None) -> Requirement:
    try:
        return Requirement(_wheel_path(text, cwd) if cwd is not None else text)
    except InvalidRequirement as exc:
        raise UsageError(f"cannot read the requirement {text!r}: {first_line(exc)}") from exc


def _wheel_path(text: str, cwd: Path) -> str:
    """A wheel given by its path or ``file:`` URL (``./torch-2.9.0+cu128-...whl``), as pip takes it, becomes
    ``name @ file:///...``; anything else is left as written."""
    stripped = text.strip()
    if " @ " in stripped or not (stripped.startswith("file:") or stripped.split("#")[0].endswith(".whl")):
        return text
    if stripped.startswith("file:"):
        uri, filename = stripped, unquote(urlsplit(stripped).path).rsplit("/", 1)[-1]
    else:
        path = (cwd / Path(stripped).expanduser()).resolve()
        if not path.is_file():
            raise UsageError(f"{text}: no such wheel file")
        uri, filename = path.as_uri(), path.name
    try:
        name = parse_wheel_filename(filename)[0]
    except InvalidWheelFilename:
        raise UsageError(f"{text}: not a wheel file name (name-version-python-abi-platform.whl)") from None
    return f"{name} @ {uri}"


def sort_wanted(
    requirements: Sequence[str], constraints: Sequence[str], markers: Mapping[str, str], cwd: Path | None = None
) -> Wanted:
    """Sort ``requirements`` and ``constraints`` (requirement strings) for a target with ``markers``; a wheel
    path in ``requirements`` is read relative to ``cwd``.

    A torch-family constraint narrows the planner's requirement of the same name, as pip's ``-c`` narrows what
    it may choose; it adds no package of its own.
    """
    family: dict[str, Requirement] = {}
    direct: list[Requirement] = []
    other: list[str] = []
    extras: dict[str, tuple[str, ...]] = {}
    skipped: list[str] = []
    environment = {**markers, "extra": ""}
    for text in requirements:
        req = _parse(text, cwd or Path.cwd())
        if req.marker is not None and not req.marker.evaluate(environment):
            skipped.append(f"{text}: its marker is false for this environment, skipped")
            continue
        name = canonicalize_name(req.name)
        if not is_torch_family(name):
            other.append(str(req) if req.url and req.url.startswith("file:") else text)
            continue
        if req.extras:
            extras[name] = tuple(sorted(set(extras.get(name, ())) | req.extras))
        if req.url:
            direct.append(req)
            continue
        plain = Requirement(f"{req.name}{req.specifier}")
        if name in family:  # `torch>=2.8 torch<2.10`: both hold
            plain = Requirement(f"{req.name}{family[name].specifier & plain.specifier}")
        family[name] = plain
    other_constraints: list[str] = []
    for text in constraints:
        req = _parse(text)
        if req.marker is not None and not req.marker.evaluate(environment):
            continue
        name = canonicalize_name(req.name)
        if not is_torch_family(name):
            other_constraints.append(text)
        elif req.url:
            raise UsageError(f"constraint {text!r}: a direct reference cannot constrain; give a version specifier")
        elif name in family:
            family[name] = Requirement(f"{family[name].name}{family[name].specifier & req.specifier}")
    return Wanted(
        tuple(family.values()), tuple(direct), tuple(other), tuple(other_constraints), extras, tuple(skipped)
    )
