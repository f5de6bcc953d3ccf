"""The machine a plan is for: detected by the plugins, or given (``--target``), then the override variables."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from ..errors import UsageError
from ..options import MachineOptions

if TYPE_CHECKING:
    from ..kb.matrix import Knowledge
    from ..report import HardwareReport

__all__ = ["Target", "detect", "machine"]


@dataclass(frozen=True)
class Target:
    """The machine a plan is for: its hardware report, and what the plan should say about how it was made
    (the override variables that were used)."""

    report: HardwareReport
    notes: tuple[str, ...] = ()


def detect(options: MachineOptions, *, environ: Mapping[str, str]) -> HardwareReport:
    """Probe this machine, or the simulated one under ``options.sysroot``, with the detector plugins."""
    from wheelfit_probekit import System

    from ..probe import detect as run_detect

    sysroot = options.sysroot
    if sysroot is not None and not sysroot.is_dir():
        raise UsageError(f"--sysroot {sysroot} is not a directory")
    system = System.from_sysroot(sysroot, environ=environ, command_timeout=options.probe_timeout)
    return run_detect(system, disabled=options.disabled)


def machine(
    options: MachineOptions,
    *,
    environ: Mapping[str, str],
    python: str | Callable[[], str] | None = None,
    kb: Knowledge | None = None,
) -> Target:
    """The one way every command gets its machine: ``options.target`` (a saved report or a ``key=value,...``
    spec) or detection, then the override variables of ``environ`` (uv's and the reference variant providers').

    ``python`` is the target environment's Python version (or a function giving it, asked only after detection,
    so that both run at once); it replaces the detected one, and is a ``target`` spec's default. ``kb`` (``--kb``)
    is the knowledge a target spec's GPU is checked against (its gfx targets); ``None``: the packaged one.
    """
    from ..probe.target import apply_overrides, load_target

    def python_version() -> str | None:
        return python() if callable(python) else python or options.python_version

    if options.target:
        report = load_target(options.target, host_python=python_version(), kb=kb)
    else:
        report = detect(options, environ=environ)
        version = python_version()
        if version is not None:
            report = replace(report, platform=replace(report.platform, python=version))
    report, notes = apply_overrides(report, environ)
    return Target(report, tuple(notes))
