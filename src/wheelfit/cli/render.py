"""Renderings for people (machines get ``--json``), readable at 80 columns and in a log.

Text is wrapped at spaces only, with a hanging indent: a command, a ``VAR=value`` or a URL is never split, and a
word longer than the line stays whole on its own line. Data is never read as rich markup and never highlighted
(rich's highlighter colours the digits of ``2.14.1`` one fragment at a time). Tables are plain columns, on a
terminal and piped alike, as the README shows them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.console import Console
from rich.text import Text

from ..kb import device_note
from ..kinds import Mode
from ..report import Accelerator, HardwareReport
from ..resolve.plan import Plan
from .render_verify import render_verify
from .text import say as _say
from .text import table as _table

if TYPE_CHECKING:
    from collections.abc import Sequence

    from ..api import InstallOutcome
    from ..install.install_set import FamilyFile

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
    if a.vendor == "apple" and a.extra.get("macos"):  # Metal, and so MPS, comes with macOS
        return f"macOS {a.extra['macos']}"
    return ""


def _console(console: Console | None) -> Console:
    return console or Console(highlight=False)


def _arch(a: Accelerator, report: HardwareReport) -> str:
    """The architecture that decides kernels. An Apple GPU's is its chip's generation (``Apple M1``, from the
    report's CPU microarchitecture ``m1``: the same die), since Metal builds the MPS kernels for any of them.
    Unknown: a dash, and the note column says why."""
    if a.arch:
        return a.arch
    if a.vendor == "apple" and report.cpu.vendor == "Apple" and report.cpu.microarchitecture:
        micro = report.cpu.microarchitecture
        return f"Apple {micro.upper()}" if micro[:1] == "m" and micro[1:].isdigit() else micro
    return "-"


def render_report(report: HardwareReport, console: Console | None = None) -> None:
    con = _console(console)
    p, c = report.platform, report.cpu
    arch = p.machine or c.arch  # a sysroot's uname is not read: the CPU's architecture is the same
    if p.system == "Darwin":  # the release is the macOS version there, not Darwin's kernel version
        bits = [" ".join(b for b in ("macOS", p.release, arch) if b), f"Python {p.python}"]
    else:
        bits = [" ".join(b for b in (p.system, arch) if b), f"Python {p.python}"]
        bits += [b for b in (p.libc, p.release and f"kernel/OS {p.release}") if b]
    if p.wsl:
        bits.append("WSL2")
    if p.container:
        bits.append("container")
    if report.sysroot:
        bits.append(f"sysroot {report.sysroot}")
    _say(con, "[bold]Machine[/]  ", " · ".join(bits))
    cpu_bits = [c.model or c.vendor or "unknown CPU"]
    if c.microarchitecture:
        cpu_bits.append(c.microarchitecture)
    if c.x86_64_level:
        cpu_bits.append(f"x86-64-{c.x86_64_level}")
    notable = [f for f in _NOTABLE_FEATURES if f in c.features]
    if notable:
        cpu_bits.append(", ".join(notable))
    _say(con, "[bold]CPU[/]      ", " · ".join(cpu_bits))

    if report.accelerators:
        rows: list[list[str | Text]] = []
        for i, a in enumerate(report.accelerators):
            name = Text(a.name)
            if not a.extra.get("visible", True):
                name.append(" (hidden by CUDA_VISIBLE_DEVICES)", style="dim")
            rows.append([str(i), name, _arch(a, report), _driver(a), device_note(a)])
        headers = ("#", "Device", "Architecture", "Driver", "What it means for PyTorch")
        _table(con, headers, rows, wrap=(1, 3, 4))
    else:
        _say(con, "[bold]GPUs[/]     ", "none usable here: PyTorch's CPU build is the one that fits")

    failed = report.failed_probes()
    problems = [f for f in failed if f.hint]
    for f in problems:
        _say(con, "[yellow]![/] ", f"{f.provider}: {f.error}")
        _say(con, "  [bold]→[/] ", f.hint or "")
    quiet = len(failed) - len(problems)
    if quiet:
        _say(con, "", f"{quiet} probe(s) found nothing or failed; `wheelfit detect --json` lists every probe.", "dim")


def _build(plan: Plan) -> str:
    """``2.14.1+cu126``; a variant label or a macOS wheel (which carries no label) is not joined with ``+``."""
    if plan.mode is Mode.VARIANT:
        return f"{plan.torch_version} (variant {plan.variant})"
    if plan.platform.startswith("macos"):
        return plan.torch_version
    return f"{plan.torch_version}+{plan.variant}"


def render_plan(
    plan: Plan, console: Console | None = None, *, explain: bool = False, install: str | None = None
) -> None:
    """The pick, its index, why, and the command that installs it (``install``); warnings whole. By default the
    facts below primary are one line and the builds turned down are counted by reason; ``explain`` lists both."""
    con = _console(console)
    # a variant label is not a local version: it never joins the version with "+"
    variant = plan.mode is Mode.VARIANT
    title = f"torch {plan.torch_version}, variant {plan.variant}" if variant else f"torch {_build(plan)}"
    _say(con, f"[bold green]{title}[/]  from ", plan.index_url)
    if variant:
        for p in plan.packages:
            _say(con, "  ", p.filename or p.requirement)
        for dep in plan.dependencies:
            _say(con, "  [dim]requires[/] ", dep)
    else:
        for p in plan.packages:
            _say(con, "  ", p.requirement)
    for p in plan.extensions:
        _say(con, "  ", p.filename or p.requirement)
    if plan.reasons:
        con.print(Text("Why", style="bold"), highlight=False)
        for reason in plan.reasons:
            _say(con, "  - ", reason)
    for w in plan.warnings:
        _say(con, "[yellow]![/] ", w)
    _fallbacks(con, plan)
    if plan.env:
        _say(con, "[bold]Run with[/]  ", " ".join(f"{k}={v}" for k, v in plan.env.items()))
    doubts = plan.uncertain
    if doubts and explain:
        _say(con, "[bold]Uncertain[/]  ", "this plan rests on facts below primary or measured:")
        for fact in doubts:
            _say(con, "  - ", f"{fact.what} ({fact.confidence}): {fact.source}")
    elif doubts:
        levels = ", ".join(dict.fromkeys(f.confidence for f in doubts))
        many = "facts" if len(doubts) > 1 else "fact"
        _say(con, "[bold]Uncertain[/]  ", f"rests on {len(doubts)} {many} below primary ({levels}): `--explain`")
    if install is not None:
        _say(con, "[bold]Install[/]  ", install)
    if plan.rejected and explain:
        rows = [[r.version, r.variant, r.reason] for r in plan.rejected]
        _table(con, ("torch", "build", "why not"), rows, title="Not chosen", wrap=(2,))
    elif plan.rejected:
        _say(con, "[bold]Not chosen[/]  ", _rejected_summary(plan) + ": `--explain`")


#: How the short plan counts the builds each rule turned down (``Judge`` values; others by their name).
_JUDGED = {
    "absent": "not on the index",
    "files": "without a wheel for this platform and Python",
    "python": "for another Python",
    "glibc": "needing a newer glibc",
    "macos": "needing a newer macOS",
    "kernels": "without kernels for this GPU",
    "driver": "needing a newer driver",
    "rocm": "whose ROCm lost this GPU's kernels",
    "override": "needing HSA_OVERRIDE_GFX_VERSION",
    "properties": "with variant properties not supported here",
    "unconfirmed": "not known to exist",
    "extensions": "without wheels of every extension asked for",
}


def _rejected_summary(plan: Plan) -> str:
    """``5 without kernels for this GPU (cu130, cu132, cu134); 21 not on the index (rocm6.1, ..., +9)``."""
    groups: dict[str, list[str]] = {}
    for r in plan.rejected:
        groups.setdefault(_JUDGED.get(r.judge, r.judge or "other"), []).append(r.variant)
    parts = []
    for why, labels in groups.items():
        names = list(dict.fromkeys(labels))
        shown = ", ".join(names[:4]) + (f", +{len(names) - 4}" if len(names) > 4 else "")
        parts.append(f"{len(labels)} {why} ({shown})")
    return "; ".join(parts)


def _fallbacks(con: Console, plan: Plan) -> None:
    """A detector plugin that failed: what the plan is for instead, and what to do."""
    for fb in plan.detector_failures:
        _say(con, "[yellow]![/] ", fb.sentence())
        _say(con, "  [bold]→[/] ", fb.advice)


def _wheels(con: Console, wheels: Sequence[FamilyFile], dry_run: bool) -> None:
    for w in wheels:
        line = Text(f"{w.name} {w.version}  {w.url}")
        if w.needed_by:
            line.append(f"  (needed by {w.needed_by})", style="dim")
        _say(con, "  ", line)
        if dry_run and w.sha256:
            _say(con, "    ", f"sha256 {w.sha256}")


def render_install(outcome: InstallOutcome, console: Console | None = None, *, verbose: bool = False) -> None:
    con = _console(console)
    result, env = outcome.result, outcome.env
    if verbose and result.output:
        con.print(result.output, markup=False, highlight=False, style="dim")
    plan = result.plan
    if plan is None:
        _render_other_only(outcome, con)
        return
    for note in (*plan.warnings, *result.notes):
        _say(con, "[yellow]![/] ", note)
    _fallbacks(con, plan)
    changed = bool(result.installs or result.removes)
    head = "Would install" if result.dry_run else "Installed" if changed else "Already installed:"
    into = "into" if changed or result.dry_run else "in"
    _say(con, f"[bold green]{head} torch {_build(plan)}[/] {into} ", f"{env.prefix} ({result.backend})")
    extensions = {p.name for p in plan.extensions}
    _say(con, f"[bold]From {plan.index_url}[/] ", "(torch-family, checked by sha256)")
    _wheels(con, [w for w in result.wheels if w.name not in extensions], result.dry_run)
    if extensions:
        _say(con, "[bold]Built for it[/] ", "(extensions, checked by sha256)")
        _wheels(con, [w for w in result.wheels if w.name in extensions], result.dry_run)
    family = {w.name for w in result.wheels}
    rest = [i for i in result.installs if i.split("==")[0].split(" @ ")[0].strip() not in family]
    if rest:
        _say(con, "[bold]From[/] ", result.index_url)
        for item in rest:
            _say(con, "  ", item)
    if result.removes:
        _say(con, "[bold]Replacing[/]  ", ", ".join(result.removes))
    if plan.reasons:
        _say(con, "[bold]Why[/]  ", plan.reasons[0])
    if result.dry_run:
        _say(con, "", "--dry-run: nothing was changed.", "dim")
    elif not changed:
        _say(con, "", f"{result.backend} found nothing to change.", "dim")
    if outcome.verification is not None:
        render_verify(outcome.verification, env.executable, con)


def _render_other_only(outcome: InstallOutcome, con: Console) -> None:
    """An install that asked for no torch-family package: what the backend did, and the guard that stayed on."""
    result = outcome.result
    for note in result.notes:
        _say(con, "[yellow]![/] ", note)
    head = "Would install" if result.dry_run else "Installed" if result.installs or result.removes else "Nothing to do:"
    _say(con, f"[bold green]{head}[/] ", f"into {outcome.env.prefix} ({result.backend}), from {result.index_url}")
    for item in result.installs:
        _say(con, "  ", item)
    if result.removes:
        _say(con, "[bold]Replacing[/]  ", ", ".join(result.removes))
    _say(con, "", "No torch-family package was asked for: none was taken from the default index.", "dim")
