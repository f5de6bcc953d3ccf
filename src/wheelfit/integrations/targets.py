"""One plan per target machine, with a name each output can use (a lock file's ``pylock.<name>.toml``, a uv
project's extra, a CI matrix entry): several ``--target`` values in one run, or this machine when none is given."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..app.machine import Target
    from ..app.session import Network
    from ..options import MachineOptions, PlanOptions
    from ..resolve.plan import Plan

__all__ = ["TargetPlan", "plan_targets", "plan_warnings", "target_names"]


@dataclass(frozen=True)
class TargetPlan:
    """A target and its plan. ``name`` is the plan's variant (``cu126``, ``cpu``, ``rocm7.1``), with the platform
    and Python added only where two targets with the same variant differ in them."""

    name: str
    #: The ``--target`` value as given; ``None``: this machine (detected).
    spec: str | None
    target: Target
    plan: Plan


def plan_warnings(plans: Sequence[TargetPlan]) -> tuple[str, ...]:
    """Every plan's warnings, each once, named by its target when there are several: the warnings travel with the
    plan to every command that acts on it (``lock``, ``configure pip``, ``configure uv`` as ``plan`` and ``env``)."""
    several = len({tp.name for tp in plans}) > 1
    out = [f"{tp.name}: {w}" if several else w for tp in plans for w in tp.plan.warnings]
    return tuple(dict.fromkeys(out))


def plan_targets(
    requirements: Sequence[str],
    targets: Sequence[str],
    where: MachineOptions,
    options: PlanOptions,
    *,
    environ: Mapping[str, str],
    network: Network | None,
) -> list[TargetPlan]:
    """Plan ``requirements`` for each of ``targets`` (specs or saved reports), or for the machine ``where`` finds
    when there are none. Targets that plan the same build on the same platform and Python get the same name: they
    need the same files."""
    from dataclasses import replace

    from ..app.machine import machine
    from ..app.plan import plan

    wanted: Sequence[str | None] = list(targets) or [where.target]
    found: list[tuple[str | None, Target, Plan]] = []
    for spec in wanted:
        here = machine(replace(where, target=spec), environ=environ, kb=options.kb)
        found.append((spec, here, plan(requirements, here, options, environ=environ, network=network)))
    names = target_names([p for _, _, p in found])
    return [TargetPlan(name, spec, here, p) for name, (spec, here, p) in zip(names, found, strict=True)]


def target_names(plans: Sequence[Plan]) -> list[str]:
    """A name per plan: its variant; ``<variant>-<platform>-py<X.Y>`` where the variant alone is ambiguous."""

    def key(p: Plan) -> tuple[str, str, str]:
        return (p.variant, p.platform, p.python)

    builds: dict[str, set[tuple[str, str, str]]] = {}
    for p in plans:
        builds.setdefault(p.variant, set()).add(key(p))
    return [
        p.variant if len(builds[p.variant]) == 1 else f"{p.variant}-{p.platform}-py{p.python}".replace("_", "-")
        for p in plans
    ]
