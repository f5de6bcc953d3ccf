"""One plan for torch and the extensions built against it (flash-attn, torch-scatter, ...).

The torch build is planned as ever; then each extension's file built for exactly that build is looked up. When
one has none, the plan backs off to an older torch series (the newest one every such extension lists wheels
for, when the listings say; else the series below) and tries again, and says what it passed over and why. A
torch the user pinned is never swapped: the plan is refused, naming the extension that blocks, the torch series
it has wheels for, and what building it from source would need. Never a silent source build.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from packaging.requirements import InvalidRequirement, Requirement
from packaging.specifiers import SpecifierSet
from packaging.tags import Tag
from packaging.utils import canonicalize_name
from packaging.version import Version

from ..candidates.model import Fact
from ..kb.extensions import Extension, extensions
from ..kinds import Mode
from ..resolve.machine import ResolveError
from ..resolve.plan import PackagePin, Plan, Rejection
from ..variants.legacy import legacy_variant
from .match import Fit, Miss, TorchBuild, pick

if TYPE_CHECKING:
    from .sources import ExtensionSources

__all__ = ["ExtensionRequest", "StackError", "plan_stack", "split_extensions"]

#: Torch series tried before the plan gives up (each one plan, from pages already read).
_MAX_TRIES = 8


class StackError(ResolveError):
    """No torch build for this machine has a wheel of every extension asked for (or the one pinned has not)."""


@dataclass(frozen=True)
class ExtensionRequest:
    ext: Extension
    requirement: Requirement


def split_extensions(requirements: Sequence[str]) -> tuple[list[str], list[ExtensionRequest]]:
    """``requirements`` that name a package built against torch (the extension table's; xformers, torch-family,
    from the plan's own index), and the rest, as given."""
    table = extensions()
    rest: list[str] = []
    found: list[ExtensionRequest] = []
    for text in requirements:
        try:
            req = Requirement(text)
        except InvalidRequirement:
            rest.append(text)  # the planner says what is wrong with it
            continue
        ext = table.get(canonicalize_name(req.name))
        if ext is None or req.url:
            rest.append(text)
        else:
            found.append(ExtensionRequest(ext, req))
    return rest, found


def plan_stack(
    plan_torch: Callable[[SpecifierSet], Plan],
    wanted: Sequence[ExtensionRequest],
    sources: ExtensionSources,
    tags: Sequence[Tag],
    python: str,
) -> Plan:
    """The plan ``plan_torch`` makes (given the extra specifier on torch the back-off adds), with each extension of
    ``wanted`` as the file built for its torch; ``tags`` and ``python`` are the target's."""
    passed: list[tuple[Plan, list[Miss]]] = []
    narrow = SpecifierSet()
    for _ in range(_MAX_TRIES):
        try:
            chosen = plan_torch(narrow)
        except ResolveError:
            if not passed:
                raise
            raise StackError(_blocked(passed, True)) from None
        build = build_of(chosen)
        outcomes = [pick(w.ext, w.requirement, sources.listing(w.ext, build), build, tags, python, sources.torch_pin)
                    for w in wanted]  # fmt: skip
        misses = [o for o in outcomes if isinstance(o, Miss)]
        if not misses:
            return _joined(chosen, [o for o in outcomes if isinstance(o, Fit)], passed, wanted)
        passed.append((chosen, misses))
        below = _below(build.series, misses)
        if below is None:
            raise StackError(_blocked(passed, False))
        narrow &= SpecifierSet(f"<{below}")
    raise StackError(_blocked(passed, False))


def build_of(plan: Plan) -> TorchBuild:
    """The torch build a plan installs, as extensions name builds (a wheel-variant label as its index's)."""
    variant = plan.variant if plan.mode is not Mode.VARIANT else (legacy_variant(plan.variant) or plan.variant)
    return TorchBuild(Version(plan.torch_version), variant, plan.platform, plan.index_url)


def _below(series: str, misses: Sequence[Miss]) -> str | None:
    """The series the next plan must stay below: past the newest one every missing extension lists wheels for
    (when their listings say), else just below ``series``; ``None`` when the listings rule every older one out."""
    current = _key(series)
    known = [set(m.series) for m in misses if m.series is not None]
    if not known:
        return series
    common = [s for s in set.intersection(*known) if _key(s) < current]
    if not common:
        return None
    newest = max(common, key=_key)
    major, _, minor = newest.partition(".")
    return f"{major}.{int(minor) + 1}"


def _joined(chosen: Plan, fits: Sequence[Fit], passed: Sequence[tuple[Plan, list[Miss]]],
            wanted: Sequence[ExtensionRequest]) -> Plan:  # fmt: skip
    by_name = {str(canonicalize_name(w.requirement.name)): w.ext for w in wanted}
    pins = tuple(_pin(fit, by_name[fit.name]) for fit in fits)
    reasons = [*chosen.reasons]
    reasons += [f"{fit.name}: {fit.link.filename}, built for {fit.built_for} (from {fit.where})" for fit in fits]
    rejected: list[Rejection] = []
    if passed:
        names = ", ".join(["torch", *(fit.name for fit in fits)])
        skipped = "; ".join(f"{_build(p)}: {'; '.join(m.why for m in misses)}" for p, misses in passed)
        reasons.insert(0, f"{skipped}; {_build(chosen)} has wheels for all of {names}")
        rejected = [Rejection(p.variant, p.torch_version, "; ".join(m.why for m in misses), "extensions")
                    for p, misses in passed]  # fmt: skip
    return replace(chosen, extensions=pins, reasons=tuple(reasons), rejected=(*rejected, *chosen.rejected))


def _pin(fit: Fit, ext: Extension) -> PackagePin:
    how = "wheel names say" if ext.label is not None else "metadata pins" if ext.torch_pin else "listing says"
    fact = Fact(f"{fit.name}'s {how} the torch build its files were built for", ext.confidence, ext.source)
    version = fit.link.filename.split("-")[1]  # as its project spells it (cxx11abiTRUE), not normalised
    return PackagePin(
        fit.name, version, f"{fit.name}=={version}", fit.link.filename, fit.link.url,
        () if fact.certain else (fact,), sha256=fit.link.hashes.get("sha256"),
    )  # fmt: skip


def _blocked(passed: Sequence[tuple[Plan, list[Miss]]], refused: bool) -> str:
    """One line: which extension blocks which torch, the torch series they have wheels for, and what a source
    build needs. ``refused``: the planner found no older torch the request allows that runs here."""
    first = passed[0][0]
    build = build_of(first)
    names = ", ".join(dict.fromkeys(m.name for _, ms in passed for m in ms))
    text = "; ".join(f"{_build(p)}: {'; '.join(m.why for m in ms)}" for p, ms in passed)
    text += (", and no older torch that the request allows runs on this machine" if refused
             else ", and no older torch series has wheels of all of them")  # fmt: skip
    known = [set(m.series) for m in passed[-1][1] if m.series]
    common = sorted(set.intersection(*known), key=_key, reverse=True) if known else []
    ask = f"ask for a torch they have wheels for (torch=={common[0]}.*), or " if common else ""
    cuda = f"the CUDA {build.cuda[0]} toolkit (nvcc) and " if build.cuda else ""
    return f"{text}: {ask}build {names} from source ({cuda}{_build(first)} installed first, then pip install " \
           f"{names.replace(', ', ' ')} --no-build-isolation)"  # fmt: skip


def _build(plan: Plan) -> str:
    return f"torch {plan.torch_version}+{build_of(plan).variant}"


def _key(series: str) -> tuple[int, ...]:
    return tuple(int(p) for p in series.split(".") if p.isdigit())
