"""``wheelfit sync``: ``uv sync --extra <this machine's build>`` in a project ``wheelfit configure uv`` wrote.

uv's extras have no default (astral-sh/uv#10360, #12290), so each machine must name its own build's extra; this
plans for the machine (or ``--target``) and names it. A ``--target`` given as one of the recorded targets is
that build's extra without planning, so a GPU-less Docker builder needs no network to choose.
"""

from __future__ import annotations

import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import WheelfitError
from .uv_project import Build, read_builds

if TYPE_CHECKING:
    from ..app.session import Network
    from ..options import MachineOptions, PlanOptions

__all__ = ["SyncChoice", "choose_build", "run_uv_sync"]


@dataclass(frozen=True)
class SyncChoice:
    """The build chosen for this machine and the ``uv sync`` command line that installs it."""

    build: Build
    argv: tuple[str, ...]
    #: How it was chosen: ``"recorded target"`` or ``"planned <variant>"``.
    why: str


def choose_build(
    project: Path,
    uv_args: Sequence[str],
    where: MachineOptions,
    options: PlanOptions,
    *,
    environ: Mapping[str, str],
    network: Network | None,
    uv: str | None = None,
) -> SyncChoice:
    """This machine's (or ``where.target``'s) build among those ``project`` records, and the ``uv sync`` for it."""
    target = where.target
    path, recorded, builds = read_builds(project)
    chosen = next((b for b in builds if target and b.target == target), None)
    why = "recorded target"
    if chosen is None:
        from dataclasses import replace

        from .targets import plan_targets

        if options.pytorch_index is None and recorded.get("pytorch-index"):
            options = replace(options, pytorch_index=str(recorded["pytorch-index"]))
        requirements = [str(r) for r in recorded.get("requirements", [])] or ["torch"]
        (here,) = plan_targets(requirements, [], where, options, environ=environ, network=network)
        p = here.plan
        same = [b for b in builds if b.variant == p.variant]
        exact = [b for b in same if (b.platform, b.python) == (p.platform, p.python)]
        machine = f"--target {target}" if target else "this machine"
        why = f"planned for {machine}"
        if not same:
            there = ", ".join(b.extra or b.variant for b in builds)
            raise WheelfitError(
                f"{path} has no build for {machine} (planned {p.variant}; it has {there}); add it with "
                f"`wheelfit configure uv --target ...` naming every machine, then uv lock"
            )
        chosen = (exact or same)[0]
    from ..install.uv import find_uv

    argv = [uv or find_uv(), "sync", *(["--extra", chosen.extra] if chosen.extra else []), *uv_args]
    return SyncChoice(chosen, tuple(argv), why)


def run_uv_sync(choice: SyncChoice, project: Path, environ: Mapping[str, str]) -> int:
    """Run the chosen ``uv sync`` in ``project`` with the caller's terminal; uv's exit status."""
    try:
        return subprocess.run(list(choice.argv), cwd=project, env=dict(environ), check=False).returncode
    except OSError as exc:
        raise WheelfitError(f"cannot run {choice.argv[0]} ({exc}); reinstall wheelfit (it brings uv)") from None
