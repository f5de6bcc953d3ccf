"""``wheelfit configure pip``: registered on the configure group when this module is imported."""

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

__all__ = ["configure_pip"]

PackagesArg = Annotated[
    list[str] | None,
    typer.Argument(help="torch-family packages to pin (pip's syntax, by name); default: torch.", show_default=False),
]
OutputOpt = Annotated[
    Path | None,
    typer.Option(
        "--output", "-o", help="Write the file here (several --target: <stem>.<build>.txt beside it); "
        "default: print it.", metavar="FILE",
    ),
]  # fmt: skip
ConstraintsOpt = Annotated[
    bool, typer.Option("--constraints", help="Say in the file that it is for pip's -c (the same lines).")
]


@configure_app.command("pip")
def configure_pip(
    packages: PackagesArg = None,
    output: OutputOpt = None,
    constraints: ConstraintsOpt = False,
    targets: TargetsOpt = None,
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
) -> None:
    """Write a requirements file that pins the torch family by direct URL and sha256 (never an extra index)."""
    from .. import api
    from ..fetch.deadline import index_deadline
    from ..integrations.pip_config import PipOutput
    from ..integrations.pip_config import configure_pip as run

    where = api.MachineOptions(sysroot=sysroot, probe_timeout=probe_timeout)
    options = api.PlanOptions(kb=knowledge(kb_file), pytorch_index=pytorch_index, allow_cpu=allow_cpu, pre=pre,
                              torch_backend=torch_backend, require_gpu=require_gpu)  # fmt: skip
    deadline = index_deadline(os.environ, "install")
    with session(offline=offline, timeout=http_timeout, cert=cert, deadline=deadline) as net:
        done = run(packages or [], targets or [], where, options, PipOutput(output, constraints), environ=os.environ,
                   home=Path.home(), network=net)  # fmt: skip
    from ..integrations.targets import plan_warnings

    for warning in (*plan_warnings([item.target for item in done.files]), *done.warnings):
        sys.stderr.write(f"wheelfit: warning: {warning}\n")
    for item in done.files:
        plan = item.target.plan
        if item.path is None:
            sys.stdout.write(item.text)
        else:
            sys.stdout.write(
                f"Wrote {item.path}: {len(item.family)} torch-family files for {item.target.name} "
                f"(torch {plan.torch_version}, {plan.variant})\n"
            )
