"""``wheelfit lock``: registered on the app when this module is imported."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated

import typer

from .app import (
    AllowCpuOpt,
    CertOpt,
    FindLinksOpt,
    HttpTimeoutOpt,
    IndexUrlOpt,
    KbOpt,
    OfflineOpt,
    PreOpt,
    PytorchIndexOpt,
    RequireGpuOpt,
    SysrootOpt,
    TargetsOpt,
    TimeoutOpt,
    TorchBackendOpt,
    app,
    knowledge,
    session,
)

__all__ = ["lock"]

RequirementsArg = Annotated[
    list[str] | None, typer.Argument(help="Requirements to lock (pip's syntax); default: torch.", show_default=False)
]
RequirementFileOpt = Annotated[
    list[str] | None,
    typer.Option("--requirement", "-r", help="Lock what a requirements file lists (pip's format).", metavar="FILE"),
]
OutputOpt = Annotated[
    Path,
    typer.Option(
        "--output", "-o", help="pylock.toml, or a .txt for the requirements form; several --target: one file "
        "each beside it (pylock.<name>.toml).", metavar="FILE",
    ),
]  # fmt: skip
FormatOpt = Annotated[
    str | None,
    typer.Option("--format", help="pylock (PEP 751) or requirements (pip --require-hashes); default: by -o's name."),
]


@app.command()
def lock(
    requirements: RequirementsArg = None,
    output: OutputOpt = Path("pylock.toml"),
    requirement_files: RequirementFileOpt = None,
    targets: TargetsOpt = None,
    fmt: FormatOpt = None,
    index_url: IndexUrlOpt = None,
    pytorch_index: PytorchIndexOpt = None,
    sysroot: SysrootOpt = None,
    probe_timeout: TimeoutOpt = 15.0,
    kb_file: KbOpt = None,
    offline: OfflineOpt = False,
    torch_backend: TorchBackendOpt = None,
    pre: PreOpt = False,
    allow_cpu: AllowCpuOpt = False,
    require_gpu: RequireGpuOpt = False,
    find_links: FindLinksOpt = None,
    http_timeout: HttpTimeoutOpt = None,
    cert: CertOpt = None,
) -> None:
    """Write a lock file (PEP 751 pylock.toml, or hash-pinned requirements) for this machine or each --target."""
    from .. import api
    from ..fetch.deadline import index_deadline
    from ..integrations.lock import LockOutput
    from ..integrations.lock import lock as write_locks

    where = api.MachineOptions(sysroot=sysroot, probe_timeout=probe_timeout)
    options = api.PlanOptions(
        kb=knowledge(kb_file), pytorch_index=pytorch_index, index_url=index_url, find_links=tuple(find_links or ()),
        allow_cpu=allow_cpu, pre=pre, torch_backend=torch_backend, require_gpu=require_gpu,
    )  # fmt: skip
    deadline = index_deadline(os.environ, "install")
    with session(offline=offline, timeout=http_timeout, cert=cert, deadline=deadline) as net:
        done = write_locks(
            requirements or [], requirement_files or [], targets or [], where, options,
            LockOutput(output, fmt, Path.cwd()), environ=os.environ, network=net,
        )  # fmt: skip
    from ..integrations.targets import plan_warnings

    for warning in plan_warnings([item.target for item in done]):
        typer.echo(f"wheelfit: warning: {warning}", err=True)
    for item in done:
        plan = item.target.plan
        count = f"{len(item.packages)} package{'s' if len(item.packages) != 1 else ''}"
        family = ", ".join(f"{f.name} {f.version}" for f in item.family) or "no torch-family package"
        typer.echo(f"Locked {count} for {item.target.name} ({plan.variant}: {family}) into {item.path}")
