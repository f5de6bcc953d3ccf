"""Rich renderings for people. Machines get ``--json``."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.console import Console
from rich.table import Table

from ..kb import device_note
from ..report import Accelerator, HardwareReport
from ..resolve.plan import Plan
from .render_verify import render_verify

if TYPE_CHECKING:
    from ..api import InstallOutcome

__all__ = ["render_install", "render_plan", "render_report"]

_NOTABLE_FEATURES = (
    "avx512f",
    "avx512_bf16",
    "avx512_fp16",
    "avx512_vnni",
    "avx_vnni",
    "amx_tile",
    "sve",
    "sve2",
    "bf16",
    "i8mm",
)


def _driver(a: Accelerator) -> str:
    if a.vendor == "nvidia":
        cuda = f" (CUDA {a.cuda_driver_version})" if a.cuda_driver_version else ""
        return f"{a.driver_version or '?'}{cuda}"
    if a.vendor == "amd":
        return f"ROCm {a.rocm_version}" if a.rocm_version else "amdgpu (no ROCm install)"
    if a.vendor == "intel":
        return str(a.extra.get("driver") or "")
    return ""


def render_report(report: HardwareReport, console: Console | None = None) -> None:
    con = console or Console()
    p, c = report.platform, report.cpu
    bits = [f"{p.system} {p.machine or '?'}", f"Python {p.python}"]
    bits += [b for b in (p.libc, p.release and f"kernel/OS {p.release}") if b]
    if p.wsl:
        bits.append("WSL2")
    if p.container:
        bits.append("container")
    if report.sysroot:
        bits.append(f"sysroot {report.sysroot}")
    con.print("[bold]Machine[/]  " + " · ".join(bits))
    cpu_bits = [c.model or c.vendor or "unknown CPU"]
    if c.microarchitecture:
        cpu_bits.append(c.microarchitecture)
    if c.x86_64_level:
        cpu_bits.append(f"x86-64-{c.x86_64_level}")
    notable = [f for f in _NOTABLE_FEATURES if f in c.features]
    if notable:
        cpu_bits.append(", ".join(notable))
    con.print("[bold]CPU[/]      " + " · ".join(cpu_bits))

    if report.accelerators:
        table = Table(title=None, show_lines=False, header_style="bold")
        for col in ("#", "Device", "Architecture", "Driver", "What it means for PyTorch"):
            table.add_column(col, overflow="fold")
        for i, a in enumerate(report.accelerators):
            name = a.name + ("" if a.extra.get("visible", True) else " [dim](hidden by CUDA_VISIBLE_DEVICES)[/]")
            table.add_row(str(i), name, a.arch or "?", _driver(a), device_note(a))
        con.print(table)
    else:
        con.print("[bold]GPUs[/]     none usable here: PyTorch's CPU build is the one that fits")

    failed = report.failed_probes()
    problems = [f for f in failed if f.hint]
    for f in problems:
        con.print(f"[yellow]![/] {f.provider}: {f.error}\n  [bold]→[/] {f.hint}")
    quiet = len(failed) - len(problems)
    if quiet:
        con.print(f"[dim]{quiet} probe(s) found nothing or failed; `wheelfit detect --json` lists every probe.[/]")


def render_plan(plan: Plan, console: Console | None = None) -> None:
    con = console or Console()
    if plan.mode == "variant":  # a variant label is not a local version: it never joins the version with "+"
        con.print(f"[bold green]torch {plan.torch_version}, variant {plan.variant}[/]  from {plan.index_url}")
        for p in plan.packages:
            con.print(f"  {p.filename or p.requirement}")
        for dep in plan.dependencies:
            con.print(f"  [dim]requires[/] {dep}")
    else:
        con.print(f"[bold green]torch {plan.torch_version}+{plan.variant}[/]  from {plan.index_url}")
        for p in plan.packages:
            con.print(f"  {p.requirement}")
    if plan.reasons:
        con.print("[bold]Why[/]")
        for reason in plan.reasons:
            con.print(f"  - {reason}")
    for w in plan.warnings:
        con.print(f"[yellow]![/] {w}")
    if plan.env:
        con.print("[bold]Run with[/]  " + " ".join(f"{k}={v}" for k, v in plan.env.items()))
    doubts = plan.uncertain
    if doubts:
        con.print("[bold]Uncertain[/]  this plan rests on facts below primary or measured:")
        for fact in doubts:
            con.print(f"  - {fact.what} ({fact.confidence}): {fact.source}", highlight=False)
    if plan.rejected:
        table = Table(title="Not chosen", header_style="bold", title_justify="left")
        table.add_column("torch")
        table.add_column("build")
        table.add_column("why not", overflow="fold")
        for r in plan.rejected:
            table.add_row(r.version, r.variant, r.reason)
        con.print(table)


def render_install(outcome: InstallOutcome, console: Console | None = None, *, verbose: bool = False) -> None:
    con = console or Console()
    result, env = outcome.result, outcome.env
    if verbose and result.output:
        con.print(result.output, markup=False, highlight=False, style="dim")
    plan = result.plan
    if plan is None:
        _render_other_only(outcome, con)
        return
    for note in (*plan.warnings, *result.notes):
        con.print(f"[yellow]![/] {note}")
    changed = bool(result.installs or result.removes)
    head = "Would install" if result.dry_run else "Installed" if changed else "Already installed:"
    build = (
        f"{plan.torch_version} (variant {plan.variant})"
        if plan.mode == "variant"
        else f"{plan.torch_version}+{plan.variant}"
    )
    into = "into" if changed or result.dry_run else "in"
    con.print(f"[bold green]{head} torch {build}[/] {into} {env.prefix} ({result.backend})")
    con.print(f"[bold]From {plan.index_url}[/] (torch-family, checked by sha256)")
    for w in result.wheels:
        why = f"  [dim](needed by {w.needed_by})[/]" if w.needed_by else ""
        con.print(f"  {w.name} {w.version}  {w.file.url}{why}")
    family = {w.name for w in result.wheels}
    rest = [i for i in result.installs if i.split("==")[0].split(" @ ")[0].strip() not in family]
    if rest:
        con.print(f"[bold]From {result.index_url}[/]")
        for item in rest:
            con.print(f"  {item}")
    if result.removes:
        con.print("[bold]Replacing[/]  " + ", ".join(result.removes))
    if plan.reasons:
        con.print("[bold]Why[/]  " + plan.reasons[0])
    if result.dry_run:
        con.print("[dim]--dry-run: nothing was changed.[/]")
    elif not changed:
        con.print(f"[dim]{result.backend} found nothing to change.[/]")
    if outcome.verification is not None:
        render_verify(outcome.verification, env.executable, con)


def _render_other_only(outcome: InstallOutcome, con: Console) -> None:
    """An install that asked for no torch-family package: what the backend did, and the guard that stayed on."""
    result = outcome.result
    for note in result.notes:
        con.print(f"[yellow]![/] {note}")
    head = "Would install" if result.dry_run else "Installed" if result.installs or result.removes else "Nothing to do:"
    con.print(f"[bold green]{head}[/] into {outcome.env.prefix} ({result.backend}), from {result.index_url}")
    for item in result.installs:
        con.print(f"  {item}")
    if result.removes:
        con.print("[bold]Replacing[/]  " + ", ".join(result.removes))
    con.print("[dim]No torch-family package was asked for: none was taken from the default index.[/]")

