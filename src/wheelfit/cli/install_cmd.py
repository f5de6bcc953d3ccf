"""``wheelfit install`` and ``wheelfit verify``: registered on the app when this module is imported.

The body of ``install`` is in :mod:`.install_run` (no typer), which the start-up fast path calls directly.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Annotated

import typer

from .app import SysrootOpt, TimeoutOpt, app
from .install_run import full_python, machine_report, plan_for, render_verify, run_install, target_python

__all__ = ["install", "verify"]

PythonOpt = Annotated[
    str | None,
    typer.Option(
        "--python",
        help="The environment to use: its Python interpreter (default: $VIRTUAL_ENV's, else wheelfit's own).",
        metavar="PATH",
    ),
]
TargetOpt = Annotated[
    str | None,
    typer.Option(
        "--target",
        envvar="WHEELFIT_TARGET",
        help="Plan for another machine: a saved `wheelfit detect --json` file or key=value,... (see `plan --help`).",
        metavar="FILE|SPEC",
    ),
]
PytorchIndexOpt = Annotated[
    str | None,
    typer.Option(
        "--pytorch-index",
        help="Base URL of the PyTorch indexes (or WHEELFIT_PYTORCH_INDEX; default https://download.pytorch.org/whl).",
    ),
]
KbOpt = Annotated[Path | None, typer.Option("--kb", help="Use this knowledge-base file instead of the built-in one.")]
VariantIndexOpt = Annotated[
    str | None,
    typer.Option(
        "--variant-index",
        envvar="WHEELFIT_VARIANT_INDEX",
        help="A wheel-variant index (e.g. https://download.pytorch.org/whl/variant): take torch's variant wheel "
        "from it if it serves torch-X-variants.json, else use the per-variant indexes.",
        metavar="URL",
    ),
]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print the result as JSON.")]


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
    index_url: Annotated[
        str | None,
        typer.Option(
            "--index-url",
            help="The index for everything that is not torch-family, never consulted for torch-family names "
            "(or WHEELFIT_INDEX_URL, UV_DEFAULT_INDEX, UV_INDEX_URL, PIP_INDEX_URL; default https://pypi.org/simple).",
        ),
    ] = None,
    target: TargetOpt = None,
    sysroot: SysrootOpt = None,
    probe_timeout: TimeoutOpt = 15.0,
    kb_file: KbOpt = None,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Say what would be downloaded and installed; change nothing.")
    ] = False,
    as_json: JsonOpt = False,
    allow_cpu: Annotated[
        bool, typer.Option("--allow-cpu", help="Prefer the newest CPU build to an older GPU build.")
    ] = False,
    offline: Annotated[bool, typer.Option("--offline", help="Use only what is already in the caches.")] = False,
    no_verify: Annotated[
        bool, typer.Option("--no-verify", help="Skip importing torch afterwards (`wheelfit verify` does it later).")
    ] = False,
) -> None:
    """Install the PyTorch build that has kernels for this machine (or --target) into an environment."""
    status = run_install(
        requirements,
        python=python,
        installer=installer,
        pytorch_index=pytorch_index,
        variant_index=variant_index,
        index_url=index_url,
        target=target,
        sysroot=sysroot,
        probe_timeout=probe_timeout,
        kb_file=kb_file,
        dry_run=dry_run,
        as_json=as_json,
        allow_cpu=allow_cpu,
        offline=offline,
        no_verify=no_verify,
    )
    if status:
        raise typer.Exit(status)


@app.command()
def verify(
    python: PythonOpt = None,
    target: TargetOpt = None,
    sysroot: SysrootOpt = None,
    probe_timeout: TimeoutOpt = 15.0,
    kb_file: KbOpt = None,
    pytorch_index: PytorchIndexOpt = None,
    variant_index: VariantIndexOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Import torch in an environment and check it is the build this machine (or --target) should have."""
    from packaging.version import Version

    from ..index.config import resolve_index_config
    from ..install.target_env import start_inspect
    from ..install.verify import probe_torch
    from ..install.verify import verify as check

    base = resolve_index_config(os.environ, pytorch_index=pytorch_index).pytorch_base
    py = target_python(python)
    pending = start_inspect(py, os.environ)  # the environment is described while torch imports
    facts = probe_torch(py, os.environ)
    env = pending.result()
    public = Version(facts.version).public
    report = machine_report(target, sysroot, probe_timeout, lambda: full_python(env))
    plan = plan_for([f"torch=={public}"], report, kb_file, False, base, variant_index)
    verification = check(facts, plan)
    if as_json:
        data = verification.to_dict()
        data["plan"] = plan.to_dict()
        data["python"] = env.executable
        sys.stdout.write(json.dumps(data, indent=2) + "\n")
    else:
        render_verify(verification, env.executable)
    if not verification.ok:
        raise typer.Exit(1)
