"""What the user asked ``wheelfit install`` for, sorted: torch-family requirements for the planner (with their
extras, constraints folded in), packages built against torch (planned with it), everything else for the backend
as written. Pure but for the packaged extension table it reads."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name

from ..errors import UsageError, first_line
from ..family import is_torch_family
from ..kb.extensions import extensions
from ..requirements import ParsedRequirement

__all__ = ["Wanted", "sort_wanted"]


@dataclass(frozen=True)
class Wanted:
    #: Torch-family requirements for the planner: no extras, no markers, the user's constraints folded in.
    family: tuple[Requirement, ...] = ()
    #: Torch-family direct references (``torch @ https://...whl``, ``torch @ file:///...``, ``./torch-...whl``),
    #: as :mod:`wheelfit.requirements` read them.
    direct: tuple[ParsedRequirement, ...] = ()
    #: Everything else, as written, for the backend and the default index.
    other: tuple[str, ...] = ()
    #: Constraints on names that are not torch-family, for the backend's constraints file.
    constraints: tuple[str, ...] = ()
    #: Extras asked for on torch-family packages: ``{"torch": ("opt-einsum",)}``.
    extras: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    #: Packages built against torch (flash-attn, torch-scatter), taken out of :attr:`other`: planned with torch,
    #: each installed as the file built for it (:mod:`wheelfit.stack`).
    extensions: tuple[Requirement, ...] = ()

    @property
    def asks_family(self) -> bool:
        return bool(self.family or self.direct or self.extensions)


def _parse(text: str) -> Requirement:
    try:
        return Requirement(text)
    except InvalidRequirement as exc:
        raise UsageError(f"cannot read the requirement {text!r}: {first_line(exc)}") from exc


def sort_wanted(
    requirements: Sequence[ParsedRequirement], constraints: Sequence[str], markers: Mapping[str, str]
) -> Wanted:
    """Sort ``requirements`` (as :mod:`wheelfit.requirements` read them for the target: markers applied) and
    ``constraints`` (requirement strings, markers evaluated with ``markers``).

    A torch-family constraint narrows the planner's requirement of the same name, as pip's ``-c`` narrows what
    it may choose; it adds no package of its own.
    """
    family: dict[str, Requirement] = {}
    direct: list[ParsedRequirement] = []
    other: list[str] = []
    extras: dict[str, tuple[str, ...]] = {}
    environment = {**markers, "extra": ""}
    built = extensions()
    stack: list[Requirement] = []
    for parsed in requirements:
        name = parsed.name
        req = parsed.requirement
        if req is not None and parsed.kind == "named" and canonicalize_name(req.name) in built:
            stack.append(req)  # flash-attn, xformers: planned with torch, as the file built for it
            continue
        if name is None or req is None or not is_torch_family(name):
            other.append(parsed.line())  # with its --hash options, if any (hash-checking mode)
            continue
        if parsed.extras:
            extras[name] = tuple(sorted(set(extras.get(name, ())) | parsed.extras))
        if parsed.kind != "named":
            direct.append(parsed)
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
    return Wanted(tuple(family.values()), tuple(direct), tuple(other), tuple(other_constraints), extras, tuple(stack))
