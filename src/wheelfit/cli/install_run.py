"""The bodies of ``wheelfit install`` and its helpers, without typer: shared by the typer commands
(:mod:`.install_cmd`) and the start-up fast path in :mod:`wheelfit.cli`, which skips importing typer and
click (~60 ms of every warm install)."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import WheelfitError

if TYPE_CHECKING:
    from types import TracebackType

    import httpx
    from rich.console import Console
    from rich.progress import Progress as Bars
    from rich.progress import TaskID

    from ..fetch import Progress
    from ..index.config import IndexConfig
    from ..install.backend import BackendRequest, BackendResult, Installer
    from ..install.gather import WheelSource
    from ..install.run import InstallResult
    from ..install.target_env import TargetEnv
    from ..install.verify import Verification
    from ..report import HardwareReport
    from ..resolve.plan import Plan

__all__ = ["full_python", "machine_report", "plan_for", "render_verify", "run_install", "target_python"]


def run_install(
    requirements: list[str] | None,
    *,
    python: str | None,
    installer: str,
    pytorch_index: str | None,
    variant_index: str | None,
    index_url: str | None,
    target: str | None,
    sysroot: Path | None,
    probe_timeout: float,
    kb_file: Path | None,
    dry_run: bool,
    as_json: bool,
    allow_cpu: bool,
    offline: bool,
    no_verify: bool,
) -> int:
    """The body of ``wheelfit install``; returns the exit status (1: the installed torch failed verification)."""
    if installer not in ("uv", "pip"):
        raise WheelfitError(f"--installer {installer}: use uv or pip")
    from ..install.target_env import start_inspect

    pending = start_inspect(target_python(python), os.environ)  # runs while the rest is imported and detected
    from ..index.config import resolve_index_config
    from ..install.run import install_plan, split_requirements
    from ..install.verify import probe_torch
    from ..install.verify import verify as check

    family, other = split_requirements(requirements or ["torch"])
    config = resolve_index_config(os.environ, pytorch_index=pytorch_index, index_url=index_url, offline=offline)
    report = machine_report(target, sysroot, probe_timeout, lambda: full_python(pending.result()))
    env = pending.result()
    from ..fetch import make_client

    with make_client() as client:
        plan = plan_for(
            family or ["torch"], report, kb_file, allow_cpu, config.pytorch_base, variant_index, config.offline, client
        )
        backend = _backend(installer, env)
        if not as_json:
            backend = _LoadingWhileItRuns(backend, "rich.console")  # for the summary
        with _Downloads(quiet=as_json) as downloads:
            result = install_plan(
                plan,
                env,
                _source(client, plan, config, downloads.update),
                backend,
                index_url=config.default_index,
                environ=os.environ,
                extra=other,
                dry_run=dry_run,
                offline=config.offline,
            )
    verification = None if dry_run or no_verify else check(probe_torch(env.executable, os.environ), plan)
    if as_json:
        data = result.to_dict()
        data["python"] = env.executable
        if verification is not None:
            data["verify"] = verification.to_dict()
        sys.stdout.write(json.dumps(data, indent=2) + "\n")
    else:
        _render_install(result, env, verification)
    return 1 if verification is not None and not verification.ok else 0


def target_python(python: str | None) -> str:
    if python:
        return python
    venv = os.environ.get("VIRTUAL_ENV")
    if venv:
        for rel in ("bin/python", "Scripts/python.exe"):
            if (Path(venv) / rel).exists():
                return str(Path(venv) / rel)
    return sys.executable


def full_python(env: TargetEnv) -> str:
    return env.markers.get("python_full_version", env.python)


def machine_report(
    target: str | None, sysroot: Path | None, probe_timeout: float, python: Callable[[], str]
) -> HardwareReport:
    """The machine to plan for; its Python is the target environment's (asked for only after detection, which
    runs meanwhile) unless --target names one."""
    from dataclasses import replace

    from wheelfit_probekit import System

    from ..probe import detect
    from ..probe.target import apply_overrides, load_target

    if target:
        report = load_target(target, host_python=python())
    else:
        if sysroot is not None and not sysroot.is_dir():
            raise WheelfitError(f"--sysroot {sysroot} is not a directory")
        report = detect(System.from_sysroot(sysroot, command_timeout=probe_timeout))
        report = replace(report, platform=replace(report.platform, python=python()))
    report, _notes = apply_overrides(report, os.environ)
    return report


def plan_for(
    specs: list[str],
    report: HardwareReport,
    kb_file: Path | None,
    allow_cpu: bool,
    index: str,
    variant_index: str | None = None,
    offline: bool = False,
    client: httpx.Client | None = None,
) -> Plan:
    """The index-mode plan, or with ``variant_index`` the variant-mode one when that index serves variants
    metadata (else index mode, and the plan's warnings say why)."""
    from dataclasses import replace

    from ..kb.matrix import load_knowledge
    from ..resolve import Request, resolve
    from .commands import variant_mode

    request = Request.parse(specs, allow_cpu=allow_cpu, index_base=index)
    notes: list[str] = []
    if variant_index:
        plan, notes = variant_mode(report, request, variant_index, offline, client)
        if plan is not None:
            return plan
    plan = resolve(report, load_knowledge(kb_file), request)
    return replace(plan, warnings=(*notes, *plan.warnings)) if notes else plan


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


def _backend(name: str, env: TargetEnv) -> Installer:
    from packaging.utils import canonicalize_name

    if name == "pip":
        from ..install.pip import PipInstaller

        return PipInstaller(target_has_pip=any(canonicalize_name(n) == "pip" for n in env.installed))
    from ..install.uv import UvInstaller, find_uv

    return UvInstaller(uv=find_uv())


def _source(client: httpx.Client, plan: Plan, config: IndexConfig, progress: Callable[[Progress], None]) -> WheelSource:
    """Where the torch-family wheels come from: the plan's index; in variant mode its plain-copy adapter."""
    from ..fetch import Downloader
    from ..index.client import IndexClient
    from ..index.links import FileLink
    from ..install.source import IndexSource, VariantSource
    from ..variants.legacy import legacy_variant
    from ..variants.markers import VariantEnvironment
    from .commands import user_cache

    cache = user_cache()
    index = IndexClient(client, cache, offline=config.offline)
    downloader = Downloader(client, cache, progress=progress)
    source = IndexSource(plan.index_url, index, downloader)
    if plan.mode != "variant":
        return source
    pin = plan.packages[0]
    legacy = legacy_variant(plan.variant)
    fallback = None if legacy is None else IndexSource(config.pytorch_variant_index(legacy), index, downloader)
    return VariantSource(
        source,
        FileLink(pin.filename or "", pin.url or ""),
        VariantEnvironment.from_properties(plan.variant, plan.variant_properties),
        fallback,
    )


class _Downloads:
    """Per-file progress on stderr: rich bars (size, speed, ETA) on a terminal, one plain line per event
    otherwise (CI logs), nothing with --json."""

    def __init__(self, quiet: bool) -> None:
        self.quiet = quiet
        self.tasks: dict[str, TaskID] = {}
        self.progress: Bars | None = None

    def __enter__(self) -> _Downloads:
        if not self.quiet and sys.stderr.isatty():
            from rich.console import Console
            from rich.progress import (
                BarColumn,
                DownloadColumn,
                TextColumn,
                TimeRemainingColumn,
                TransferSpeedColumn,
            )
            from rich.progress import Progress as Bars

            self.progress = Bars(
                TextColumn("{task.description}"),
                BarColumn(),
                DownloadColumn(),
                TransferSpeedColumn(),
                TimeRemainingColumn(),
                console=Console(stderr=True),
                transient=False,
            )
            self.progress.start()
        return self

    def update(self, event: Progress) -> None:
        if self.quiet:
            return
        if self.progress is None:
            line = _plain_line(event)
            if line:
                sys.stderr.write(line + "\n")
            return
        if event.state in ("waiting", "retrying"):
            self.progress.console.print(_plain_line(event))
            return
        if event.filename not in self.tasks:
            self.tasks[event.filename] = self.progress.add_task(event.filename, total=event.total)
        self.progress.update(self.tasks[event.filename], completed=event.received, total=event.total)

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self.progress is not None:
            self.progress.stop()


def _plain_line(event: Progress) -> str:
    """The log line for a download event; '' for the many in-between 'downloading' ticks."""
    size = f"{event.total / 1e6:.1f} MB" if event.total else "size unknown"
    if event.state == "start":
        return f"downloading {event.filename} ({size})"
    if event.state == "done":
        return f"downloaded {event.filename} ({event.received / 1e6:.1f} MB)"
    if event.state == "cached":
        return f"cached {event.filename} ({size})"
    if event.state == "retrying":
        return f"retrying {event.filename} (attempt {event.attempt + 1}): {event.detail}"
    if event.state == "waiting":
        return f"waiting for another wheelfit run that is downloading {event.filename}"
    return ""


def _render_install(result: InstallResult, env: TargetEnv, verification: Verification | None) -> None:
    from rich.console import Console

    con = Console()
    plan = result.plan
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
    if verification is not None:
        render_verify(verification, env.executable, con)


def render_verify(verification: Verification, python: str, console: Console | None = None) -> None:
    from rich.console import Console

    con = console or Console()
    marks = {True: "[green]ok[/]", False: "[red]FAIL[/]", None: "[yellow]--[/]"}
    for c in verification.checks:
        con.print(f"  {marks[c.ok]}  {c.name:8} {c.detail}")
    if verification.ok:
        con.print(f"[bold green]verified[/]: torch in {python} is the planned build")
    else:
        con.print(f"[bold red]not the planned build[/]: torch in {python} does not match the plan")
