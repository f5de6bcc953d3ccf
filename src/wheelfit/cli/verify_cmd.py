"""``wheelfit verify``: registered on the app when this module is imported."""

from __future__ import annotations

import os

import typer

from .app import (
    JsonOpt,
    KbOpt,
    PytorchIndexOpt,
    SysrootOpt,
    TargetOpt,
    TimeoutOpt,
    VariantIndexOpt,
    app,
    knowledge,
    print_json,
)
from .install_cmd import PythonOpt

__all__ = ["verify"]


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
    from .. import api

    kb = knowledge(kb_file)
    with api.network(os.environ) as net:
        outcome = api.verify_environment(
            environ=os.environ,
            network=net,
            python=python,
            target=target,
            sysroot=sysroot,
            probe_timeout=probe_timeout,
            kb=kb,
            pytorch_index=pytorch_index,
            variant_index=variant_index,
        )
    if as_json:
        print_json(outcome.to_dict())
    else:
        from .render_verify import render_verify

        render_verify(outcome.verification, outcome.env.executable)
    if not outcome.verification.ok:
        raise typer.Exit(1)
