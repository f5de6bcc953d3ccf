"""``wheelfit env``: registered on the app when this module is imported."""

from __future__ import annotations

import importlib
import os
import sys
from typing import TYPE_CHECKING, Annotated

import typer

from ..errors import UsageError
from .app import (
    AllowCpuOpt,
    AllowHsaOverrideOpt,
    CertOpt,
    FindLinksOpt,
    ForceBuildOpt,
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
    VariantIndexOpt,
    app,
    knowledge,
    session,
)

if TYPE_CHECKING:
    from ..integrations.ci_env import Renderer

__all__ = ["FORMATS", "env"]

#: ``--format`` name -> its renderer, ``module:function`` under :mod:`wheelfit.integrations` (imported only when
#: chosen: ``wheelfit`` starts without them). Each is a :data:`wheelfit.integrations.ci_env.Renderer`.
FORMATS: dict[str, str] = {
    "shell": "ci_env:render_shell",
    "dotenv": "ci_env:render_dotenv",
    "json": "ci_env:render_json",
    "github": "github:render_github",
    "uv-variants": "uv_variants:render_uv_variants",
}


def renderer(name: str) -> Renderer:
    module, _, function = FORMATS[name].partition(":")
    found: Renderer = getattr(importlib.import_module(f"wheelfit.integrations.{module}"), function)
    return found


@app.command()
def env(
    requirements: Annotated[
        list[str] | None, typer.Argument(help='What to plan: "torch", "torch==2.9.*", "torchvision", ...')
    ] = None,
    targets: TargetsOpt = None,
    fmt: Annotated[
        str | None,
        typer.Option(
            "--format",
            help="shell (export lines for eval), dotenv (docker --env-file, compose env_file), json, github "
            "($GITHUB_OUTPUT, $GITHUB_STEP_SUMMARY, ::warning:: annotations; the default when GITHUB_ACTIONS=true), "
            "uv-variants (export lines that make uv's --preview-features wheel-variants choose for the target).",
            metavar="|".join(FORMATS),
        ),
    ] = None,
    as_matrix: Annotated[
        bool,
        typer.Option(
            "--matrix",
            help='Job-matrix JSON for the targets ({"include": [...]}, for fromJSON in strategy.matrix): printed, '
            "or with --format github the output `matrix`.",
        ),
    ] = False,
    sysroot: SysrootOpt = None,
    probe_timeout: TimeoutOpt = 15.0,
    kb_file: KbOpt = None,
    offline: OfflineOpt = False,
    pytorch_index: PytorchIndexOpt = None,
    variant_index: VariantIndexOpt = None,
    allow_cpu: AllowCpuOpt = False,
    pre: PreOpt = False,
    torch_backend: TorchBackendOpt = None,
    force_build: ForceBuildOpt = False,
    allow_hsa_override: AllowHsaOverrideOpt = False,
    require_gpu: RequireGpuOpt = False,
    find_links: FindLinksOpt = None,
    http_timeout: HttpTimeoutOpt = None,
    cert: CertOpt = None,
) -> None:
    """Print the plan as CI values: variant, index URL, pins, UV_TORCH_BACKEND, cache key (one set per --target)."""
    from .. import api
    from ..fetch.deadline import index_deadline
    from ..integrations.ci_env import apply_output, env_values, render_matrix

    chosen = fmt or ("github" if os.environ.get("GITHUB_ACTIONS") == "true" else "shell")
    if chosen not in FORMATS:
        raise UsageError(f"--format {chosen!r}: use one of {', '.join(FORMATS)}")
    draw = render_matrix if as_matrix and chosen != "github" else renderer(chosen)
    from ..resolve.request import check_names

    check_names(requirements or ["torch"])  # a name it cannot plan (troch): said before detecting or fetching
    if chosen == "github":
        from ..integrations.github import output_path

        output_path(os.environ)  # no $GITHUB_OUTPUT: say so before detecting and planning
    where = api.MachineOptions(sysroot=sysroot, probe_timeout=probe_timeout)
    options = api.PlanOptions(
        kb=knowledge(kb_file), pytorch_index=pytorch_index, variant_index=variant_index,
        find_links=tuple(find_links or ()), allow_cpu=allow_cpu, pre=pre, torch_backend=torch_backend,
        force=force_build, allow_hsa_override=allow_hsa_override, require_gpu=require_gpu,
    )  # fmt: skip
    deadline = index_deadline(os.environ, "plan")
    with session(offline=offline, timeout=http_timeout, cert=cert, deadline=deadline) as net:
        values = env_values(requirements or ["torch"], targets or [], where, options, environ=os.environ, network=net)
    output = draw(values, os.environ)
    apply_output(output)
    for line in output.stderr:
        sys.stderr.write(f"wheelfit: warning: {line}\n")
    sys.stdout.write(output.stdout)
