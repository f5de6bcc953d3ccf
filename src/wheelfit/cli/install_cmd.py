"""``wheelfit install``: registered on the app when this module is imported."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Annotated

import typer

from .app import (
    AllowCpuOpt,
    AllowHsaOverrideOpt,
    CertOpt,
    DisableOpt,
    FindLinksOpt,
    ForceBuildOpt,
    HttpTimeoutOpt,
    IndexUrlOpt,
    JsonOpt,
    KbOpt,
    OfflineOpt,
    PreOpt,
    PytorchIndexOpt,
    RequireGpuOpt,
    SysrootOpt,
    TargetOpt,
    TimeoutOpt,
    TorchBackendOpt,
    VariantIndexOpt,
    app,
    knowledge,
    print_json,
    session,
)

if TYPE_CHECKING:
    from ..install.backend import BackendRequest, BackendResult, Installer

__all__ = ["PythonOpt", "install"]

PythonOpt = Annotated[
    str | None,
    typer.Option(
        "--python",
        "-p",
        help="The environment: a Python interpreter or a virtual environment's directory (default: $VIRTUAL_ENV, "
        "$CONDA_PREFIX, or a .venv here or above, as uv finds it).",
        metavar="PATH",
    ),
]


@app.command()
def install(
    requirements: Annotated[
        list[str] | None,
        typer.Argument(
            help='What to install: "torch", "torchvision", "torch==2.9.*"; other names come from --index-url.'
        ),
    ] = None,
    python: PythonOpt = None,
    installer: Annotated[str, typer.Option("--installer", help="Backend: uv or pip.", metavar="uv|pip")] = "uv",
    pytorch_index: PytorchIndexOpt = None,
    variant_index: VariantIndexOpt = None,
    index_url: IndexUrlOpt = None,
    target: TargetOpt = None,
    sysroot: SysrootOpt = None,
    probe_timeout: TimeoutOpt = 15.0,
    kb_file: KbOpt = None,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Say what would be downloaded and installed; change nothing.")
    ] = False,
    as_json: JsonOpt = False,
    allow_cpu: AllowCpuOpt = False,
    pre: PreOpt = False,
    torch_backend: TorchBackendOpt = None,
    force_build: ForceBuildOpt = False,
    allow_hsa_override: AllowHsaOverrideOpt = False,
    require_gpu: RequireGpuOpt = False,
    offline: OfflineOpt = False,
    http_timeout: HttpTimeoutOpt = None,
    cert: CertOpt = None,
    no_verify: Annotated[
        bool, typer.Option("--no-verify", help="Skip importing torch afterwards (`wheelfit verify` does it later).")
    ] = False,
    extra_index_url: Annotated[
        list[str] | None,
        typer.Option(
            "--extra-index-url",
            help="More indexes for packages that are not torch-family (torch-family come only from the plan's index).",
            metavar="URL",
        ),
    ] = None,
    find_links: FindLinksOpt = None,
    upgrade: Annotated[
        bool, typer.Option("--upgrade", "-U", help="Upgrade what is installed already, torch included.")
    ] = False,
    reinstall: Annotated[bool, typer.Option("--reinstall", help="Reinstall even what is installed already.")] = False,
    no_deps: Annotated[bool, typer.Option("--no-deps", help="Install the requirements without dependencies.")] = False,
    system: Annotated[
        bool, typer.Option("--system", help="With no virtual environment, install into the Python on PATH.")
    ] = False,
    requirement: Annotated[
        list[str] | None,
        typer.Option(
            "--requirement", "-r", help="Install what a requirements file lists (pip's format).", metavar="FILE"
        ),
    ] = None,
    constraint: Annotated[
        list[str] | None,
        typer.Option(
            "--constraint", "-c", help="Constrain versions with a constraints file (pip's format).", metavar="FILE"
        ),
    ] = None,
    no_index: Annotated[
        bool,
        typer.Option("--no-index", help="Use no default index: only --find-links (torch-family: the plan's index)."),
    ] = False,
    recover: Annotated[
        str | None,
        typer.Option(
            "--recover",
            help="An earlier wheelfit install into this environment was killed midway and the environment changed "
            "since (another package installed): restore puts it back as it was before that install, undoing the "
            "later changes too; keep leaves it as it is and drops the saved state. Without it, wheelfit restores "
            "only when nothing else changed, else stops and asks.",
            metavar="restore|keep",
        ),
    ] = None,
    no_snapshot: Annotated[
        bool,
        typer.Option(
            "--no-snapshot",
            help="Skip the rollback snapshot (about 0.7 s for an environment holding torch): if the installer "
            "fails midway, what it installed before failing stays.",
        ),
    ] = False,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="Print errors only.")] = False,
    verbose: Annotated[bool, typer.Option("--verbose", "-v", help="Also print what the installer printed.")] = False,
    disable: DisableOpt = None,
) -> None:
    """Install the PyTorch build that has kernels for this machine (or --target) into an environment."""
    from .. import api
    from ..fetch.deadline import index_deadline
    from .progress import Downloads

    where = api.MachineOptions(target, sysroot, probe_timeout, tuple(disable or ()))
    options = api.PlanOptions(
        kb=knowledge(kb_file), pytorch_index=pytorch_index, variant_index=variant_index, index_url=index_url,
        extra_index_urls=tuple(extra_index_url or ()), find_links=tuple(find_links or ()), allow_cpu=allow_cpu,
        pre=pre, torch_backend=torch_backend, force=force_build, allow_hsa_override=allow_hsa_override,
        require_gpu=require_gpu,
    )  # fmt: skip
    how = api.InstallOptions(
        python=python, installer=installer, dry_run=dry_run, verify_after=not no_verify,
        requirement_files=tuple(requirement or ()), constraint_files=tuple(constraint or ()), upgrade=upgrade,
        reinstall=reinstall, no_deps=no_deps, no_index=no_index, system=system, recover=recover,
        snapshot=not no_snapshot,
    )  # fmt: skip
    with (
        Downloads(quiet=as_json or quiet) as downloads,
        session(offline=offline, progress=downloads.update, timeout=http_timeout, cert=cert,
                deadline=index_deadline(os.environ, "install")) as net,
    ):  # fmt: skip
        outcome = api.install_requirements(
            requirements or (), where, options, how, environ=os.environ, network=net,
            wrap_backend=None if as_json or quiet else _renderer_loading,
        )  # fmt: skip
    if as_json:
        print_json(outcome.to_dict())
    elif not quiet:
        from .render import render_install

        render_install(outcome, verbose=verbose)
    if outcome.verification is not None and not outcome.verification.ok:
        raise typer.Exit(1)


def _renderer_loading(backend: Installer) -> Installer:
    """``backend``, importing the summary's renderer on a thread while it runs."""
    return _LoadingWhileItRuns(backend, "rich.console")


class _LoadingWhileItRuns:
    """An installer that imports ``module`` on a thread while its backend runs, when this process only waits.

    Started any earlier, the import competes for the GIL with planning and fetching, which are on the critical
    path. The later ``import`` in the main thread finds the module done (or waits on its module lock).
    """

    def __init__(self, backend: Installer, module: str) -> None:
        self.backend, self.module, self.name = backend, module, backend.name

    def install(self, request: BackendRequest) -> BackendResult:
        import importlib
        import threading

        threading.Thread(target=importlib.import_module, args=(self.module,), daemon=True).start()
        return self.backend.install(request)
