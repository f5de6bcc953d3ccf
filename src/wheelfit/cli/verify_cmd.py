"""``wheelfit verify``: registered on the app when this module is imported."""

from __future__ import annotations

import datetime
import os
from typing import Annotated

import typer

from .app import (
    CertOpt,
    HttpTimeoutOpt,
    JsonOpt,
    KbOpt,
    OfflineOpt,
    PytorchIndexOpt,
    SysrootOpt,
    TargetOpt,
    TimeoutOpt,
    VariantIndexOpt,
    app,
    knowledge,
    print_json,
    session,
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
    offline: OfflineOpt = False,
    http_timeout: HttpTimeoutOpt = None,
    cert: CertOpt = None,
    as_json: JsonOpt = False,
    record: Annotated[
        bool,
        typer.Option(
            "--record",
            help="Also check every installed distribution's files against its RECORD (each file's sha256 and "
            "size as installed): a file changed or missing since, or a RECORD row that is malformed or leads "
            'outside the environment, fails verify. With --json, under "record".',
        ),
    ] = False,
) -> None:
    """Import torch in an environment and check it is the build this machine (or --target) should have;
    --record also checks the installed files against their RECORD."""
    from .. import api
    from ..fetch.deadline import index_deadline

    where = api.MachineOptions(target, sysroot, probe_timeout)
    options = api.PlanOptions(kb=knowledge(kb_file), pytorch_index=pytorch_index, variant_index=variant_index)
    deadline = index_deadline(os.environ, "plan")
    with session(offline=offline, timeout=http_timeout, cert=cert, deadline=deadline) as net:
        outcome = api.verify_environment(python, where, options, environ=os.environ, network=net,
                                         today=datetime.date.today().isoformat())  # fmt: skip
    records = None
    if record:  # after torch's verdict: a missing torch is reported as without --record
        from ..install.installed_record import check_installed_records

        records = check_installed_records(outcome.env.install_dirs, outcome.env.prefix)
    if as_json:
        data = outcome.to_dict()
        if records is not None:
            data["record"] = records.to_dict()
            if not records.ok:  # "ok" is the exit status's verdict: torch's and the files'
                from .render_verify import record_line

                data["ok"] = False
                bad = [record_line(d) for d in records.distributions if not d.ok]
                data["reason"] = "; ".join(filter(None, [data["reason"], *bad]))
        print_json(data)
    else:
        from .render_verify import render_record, render_verify

        render_verify(outcome.verification, outcome.env.executable, target=target)
        if records is not None:
            render_record(records)
    if not outcome.verification.ok or (records is not None and not records.ok):
        raise typer.Exit(1)
