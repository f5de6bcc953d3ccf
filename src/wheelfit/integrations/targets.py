"""One plan per target machine, with a name each output can use (a lock file's ``pylock.<name>.toml``, a uv
project's extra, a CI matrix entry): several ``--target`` values in one run, or this machine when none is given."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..api import Network, Target
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
    *,
    environ: Mapping[str, str],
    network: Network | None,
    sysroot: Path | None = None,
    probe_timeout: float = 15.0,
    python: str | None = None,
    **plan_options: Any,
) -> list[TargetPlan]:
    """Plan ``requirements`` for each of ``targets`` (specs or saved reports), or for this machine when there are
    none; ``plan_options`` are :func:`wheelfit.api.plan`'s keywords. Targets that plan the same build on the same
    platform and Python get the same name: they need the same files."""
    from .. import api

    wanted: Sequence[str | None] = list(targets) or [None]
    found: list[tuple[str | None, Target, Plan]] = []
    for spec in wanted:
        here = api.machine(spec, environ=environ, sysroot=sysroot, probe_timeout=probe_timeout, python=python)
        found.append((spec, here, api.plan(requirements, here, environ=environ, network=network, **plan_options)))
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
