"""``wheelfit sync``: registered on the app when this module is imported."""

from __future__ import annotations

import os
import sys
from pathlib import Path

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
    TargetOpt,
    TimeoutOpt,
    TorchBackendOpt,
    app,
    knowledge,
    session,
)
from .configure_uv_cmd import ProjectOpt

__all__ = ["sync"]


@app.command(context_settings={"allow_extra_args": True, "ignore_unknown_options": True})
def sync(
    ctx: typer.Context,
    target: TargetOpt = None,
    sysroot: SysrootOpt = None,
    probe_timeout: TimeoutOpt = 15.0,
    kb_file: KbOpt = None,
    pytorch_index: PytorchIndexOpt = None,
    project: ProjectOpt = Path(),
    offline: OfflineOpt = False,
    torch_backend: TorchBackendOpt = None,
    pre: PreOpt = False,
    allow_cpu: AllowCpuOpt = False,
    require_gpu: RequireGpuOpt = False,
    http_timeout: HttpTimeoutOpt = None,
    cert: CertOpt = None,
) -> None:
    """Run `uv sync --extra <this machine's build>` (any other option goes to uv sync: --locked, --frozen, ...)."""
    from .. import api
    from ..fetch.deadline import index_deadline
    from ..integrations.uv_sync import choose_build, run_uv_sync

    where = api.MachineOptions(target, sysroot, probe_timeout)
    options = api.PlanOptions(kb=knowledge(kb_file), pytorch_index=pytorch_index, allow_cpu=allow_cpu, pre=pre,
                              torch_backend=torch_backend, require_gpu=require_gpu)  # fmt: skip
    deadline = index_deadline(os.environ, "plan")
    with session(offline=offline, timeout=http_timeout, cert=cert, deadline=deadline) as net:
        choice = choose_build(project, list(ctx.args), where, options, environ=os.environ, network=net)
    b = choice.build
    sys.stderr.write(f"wheelfit: {b.extra or b.name}: torch {b.torch} ({b.variant}, {choice.why})\n")
    sys.stderr.flush()
    status = run_uv_sync(choice, project, os.environ)
    if status:
        raise typer.Exit(status)
