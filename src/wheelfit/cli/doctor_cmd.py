"""``wheelfit doctor``: registered on the app when this module is imported; renders a diagnosis, fixes as commands."""

from __future__ import annotations

import datetime
import os
import shlex
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

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

if TYPE_CHECKING:
    from ..doctor import Diagnosis, Fix

__all__ = ["doctor", "fix_text"]

#: The JSON document's schema (``src/wheelfit/schemas/doctor.schema.json``), by version.
SCHEMA_VERSION = "1.0"


@app.command()
def doctor(
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
) -> None:
    """Say what is wrong with an environment's torch on this machine (or --target), and the command that fixes it;
    exit 0 when all is well, 1 when something is wrong. Changes nothing."""
    from .. import api
    from ..fetch.deadline import index_deadline

    machine = api.MachineOptions(target, sysroot, probe_timeout)
    options = api.PlanOptions(kb=knowledge(kb_file), pytorch_index=pytorch_index, variant_index=variant_index)
    deadline = index_deadline(os.environ, "plan")
    with session(offline=offline, timeout=http_timeout, cert=cert, deadline=deadline) as net:
        outcome = api.doctor_environment(python, machine, options, environ=os.environ, network=net,
                                         today=datetime.date.today().isoformat())  # fmt: skip
    where = _Where(outcome.env.executable, target, pytorch_index)
    if as_json:
        print_json(_to_dict(outcome.diagnosis, where, outcome.fix_plan.to_dict() if outcome.fix_plan else None))
    else:
        _render(outcome.diagnosis, where)
    if not outcome.diagnosis.healthy:
        raise typer.Exit(1)


@dataclass(frozen=True)
class _Where:
    """What a fix command must name so that it acts on what the doctor looked at."""

    python: str
    target: str | None
    pytorch_index: str | None


def fix_text(fix: Fix, where: _Where) -> str:
    """A fix as the user types it: a command where there is one, else a short instruction."""
    from ..doctor import FixKind

    q = shlex.quote
    if fix.kind is FixKind.INSTALL:
        argv = ["wheelfit", "install", *fix.requirements, "--python", where.python]
        if where.target:
            argv += ["--target", where.target]
        if where.pytorch_index:
            argv += ["--pytorch-index", where.pytorch_index]
        argv += ["--upgrade"] * fix.upgrade + ["--reinstall"] * fix.reinstall
        return " ".join(map(q, argv))
    if fix.kind is FixKind.UNSET:
        return f"unset {fix.name}"
    if fix.kind is FixKind.UNINSTALL_FIRST:
        return f"{q(where.python)} -m pip uninstall {fix.name}  (removes the copy Python finds first)"
    if fix.kind is FixKind.UNSHADOW:
        return f"take {fix.name} off PYTHONPATH (or out of the .pth file that adds it)"
    if fix.kind is FixKind.DRIVER:
        return f"update the NVIDIA driver to {fix.name} or newer"
    return f"reinstall {fix.name} built for this torch (or build it from source against it)"


def _to_dict(diagnosis: Diagnosis, where: _Where, plan: dict[str, Any] | None) -> dict[str, Any]:
    v = diagnosis.verification.to_dict()
    findings = []
    for f in diagnosis.findings:
        item = f.to_dict()
        for fix, data in zip(f.fixes, item["fixes"], strict=True):
            data["command"] = fix_text(fix, where)
        findings.append(item)
    return {
        "schema_version": SCHEMA_VERSION,
        "healthy": diagnosis.healthy,
        "python": where.python,
        "torch": v["torch"],
        "companions": v["companions"],
        "findings": findings,
        "good": list(diagnosis.good),
        "checks": v["checks"],
        "fix_plan": plan,
    }


def _render(diagnosis: Diagnosis, where: _Where) -> None:
    from rich.console import Console

    from .text import say

    con = Console()
    facts = diagnosis.verification.facts
    gpu = facts.cuda or facts.hip or facts.xpu
    runtime = diagnosis.verification.runtime if gpu else "a CPU build"
    torch = f"torch {facts.version}" + (f" ({runtime})" if runtime else "") if facts.version else "torch"
    say(con, "[bold]Environment[/]  ", where.python)
    if diagnosis.healthy:
        say(con, "[bold green]All good[/]  ", f"{torch} runs here.")
        for line in diagnosis.good:
            say(con, "  - ", line)
        return
    count = len(diagnosis.findings)
    say(con, f"[bold red]{count} problem{'s' if count > 1 else ''}[/]  ", f"with {torch}:")
    for i, f in enumerate(diagnosis.findings, 1):
        say(con, f"\n[bold]{i}.[/] ", f.summary)
        say(con, "   why: ", f.evidence)
        for n, fix in enumerate(f.fixes):
            say(con, "   fix: " if n == 0 else "    or: ", fix_text(fix, where))
