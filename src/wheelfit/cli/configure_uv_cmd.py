"""``wheelfit configure uv``: registered on the configure group when this module is imported."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Annotated

import typer

from .app import (
    AllowCpuOpt,
    CertOpt,
    HttpTimeoutOpt,
    KbOpt,
    OfflineOpt,
    PreOpt,
    PytorchIndexOpt,
    RequireGpuOpt,
    SysrootOpt,
    TargetsOpt,
    TimeoutOpt,
    TorchBackendOpt,
    knowledge,
    session,
)
from .configure_cmd import configure_app

__all__ = ["configure_uv"]

ProjectOpt = Annotated[
    Path, typer.Option("--project", help="The uv project (the directory of its pyproject.toml).", metavar="DIR")
]


@configure_app.command("uv")
def configure_uv(
    targets: TargetsOpt = None,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Print the change as a diff; write nothing.")] = False,
    check: Annotated[
        bool, typer.Option("--check", help="Exit 1, showing the diff, when pyproject.toml does not match the plan.")
    ] = False,
    project: ProjectOpt = Path(),
    sysroot: SysrootOpt = None,
    probe_timeout: TimeoutOpt = 15.0,
    kb_file: KbOpt = None,
    pytorch_index: PytorchIndexOpt = None,
    offline: OfflineOpt = False,
    torch_backend: TorchBackendOpt = None,
    pre: PreOpt = False,
    allow_cpu: AllowCpuOpt = False,
    require_gpu: RequireGpuOpt = False,
    http_timeout: HttpTimeoutOpt = None,
    cert: CertOpt = None,
    replace_sources: Annotated[
        bool,
        typer.Option(
            "--replace-sources",
            help="Replace the project's own [tool.uv.sources] entries and indexes for the packages wheelfit routes "
            "(without it, such an entry stops the command, naming it).",
        ),
    ] = False,
) -> None:
    """Write the PyTorch indexes, sources and (for several --target) one extra per build into pyproject.toml."""
    from .. import api
    from ..fetch.deadline import index_deadline
    from ..integrations.uv_project import configure_uv as run

    where = api.MachineOptions(sysroot=sysroot, probe_timeout=probe_timeout)
    options = api.PlanOptions(kb=knowledge(kb_file), pytorch_index=pytorch_index, allow_cpu=allow_cpu, pre=pre,
                              torch_backend=torch_backend, require_gpu=require_gpu)  # fmt: skip
    deadline = index_deadline(os.environ, "plan")
    with session(offline=offline, timeout=http_timeout, cert=cert, deadline=deadline) as net:
        done = run(project, targets or [], where, options, environ=os.environ, network=net,
                   write=not (dry_run or check), replace_sources=replace_sources)  # fmt: skip
    for warning in done.warnings:
        sys.stderr.write(f"wheelfit: warning: {warning}\n")
    builds = ", ".join(f"{b.extra or b.name}: torch {b.torch} from {b.index}" for b in done.builds)
    if check:
        if done.changed:
            sys.stdout.write(done.diff())
            sys.stderr.write(
                f"wheelfit: error: {done.path} does not match the plan ({builds}); "
                "run `wheelfit configure uv` with the same --target options\n"
            )
            raise typer.Exit(1)
        sys.stdout.write(f"{done.path} matches the plan ({builds})\n")
        return
    if dry_run:
        sys.stdout.write(done.diff() or f"{done.path} already matches the plan ({builds})\n")
        return
    state = "updated" if done.changed else "unchanged"
    sys.stdout.write(f"{done.path} {state}: {builds}\n")
    if any(b.extra for b in done.builds):
        sys.stdout.write("Next: uv lock, then `wheelfit sync` on each machine (it runs uv sync --extra <its build>)\n")
    else:
        sys.stdout.write("Next: uv lock && uv sync\n")
