"""The typer application: parses options, calls the library, hands results to the renderers."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from .. import __version__
from ..errors import WheelfitError

__all__ = ["app", "run"]

app = typer.Typer(
    name="wheelfit",
    help="Install the PyTorch build that has kernels for this machine, and say why.",
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)

SysrootOpt = Annotated[
    Path | None,
    typer.Option(
        "--sysroot",
        envvar="WHEELFIT_SYSROOT",
        help="Detect a simulated machine: read every file under DIR and run tools only from DIR.",
        metavar="DIR",
    ),
]
TimeoutOpt = Annotated[
    float,
    typer.Option(
        "--probe-timeout",
        envvar="WHEELFIT_PROBE_TIMEOUT",
        min=0.1,
        help="Deadline in seconds for each hardware tool (nvidia-smi, rocminfo, ...).",
    ),
]


def _version(value: bool) -> None:
    if value:
        sys.stdout.write(f"wheelfit {__version__}\n")
        raise typer.Exit


@app.callback()
def _root(
    version: Annotated[
        bool, typer.Option("--version", "-V", callback=_version, is_eager=True, help="Show the version and exit.")
    ] = False,
) -> None:
    """wheelfit: the right PyTorch for this hardware."""


@app.command()
def detect(
    as_json: Annotated[bool, typer.Option("--json", help="Print the hardware report as JSON.")] = False,
    sysroot: SysrootOpt = None,
    probe_timeout: TimeoutOpt = 15.0,
    disable: Annotated[
        list[str] | None, typer.Option("--disable-provider", help="Skip a detector plugin by name.", metavar="NAME")
    ] = None,
) -> None:
    """Show what hardware this machine has and what it means for PyTorch."""
    from .commands import run_detect

    run_detect(as_json, sysroot, probe_timeout, disable or ())


@app.command()
def plan(
    requirements: Annotated[
        list[str] | None, typer.Argument(help='What to plan: "torch", "torch==2.9.*", "torchvision", ...')
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the plan as JSON.")] = False,
    target: Annotated[
        str | None,
        typer.Option(
            "--target",
            envvar="WHEELFIT_TARGET",
            help="Plan for another machine: a saved `wheelfit detect --json` file, or "
            "key=value,... with keys cuda (6.1+8.9), driver, rocm (gfx942+gfx90a), xpu (8086:e20b or a family), "
            "cpu (v3), os (linux|windows|macos), arch, python.",
            metavar="FILE|SPEC",
        ),
    ] = None,
    sysroot: SysrootOpt = None,
    probe_timeout: TimeoutOpt = 15.0,
    kb_file: Annotated[
        Path | None, typer.Option("--kb", help="Use this knowledge-base file instead of the built-in one.")
    ] = None,
    allow_cpu: Annotated[
        bool, typer.Option("--allow-cpu", help="Prefer the newest release's CPU build to an older GPU build.")
    ] = False,
    offline: Annotated[bool, typer.Option("--offline", help="Decide from the knowledge base alone.")] = False,
    pytorch_index: Annotated[
        str,
        typer.Option("--pytorch-index", envvar="WHEELFIT_PYTORCH_INDEX", help="Base URL of the PyTorch indexes."),
    ] = "https://download.pytorch.org/whl",
    variant_index: Annotated[
        str | None,
        typer.Option(
            "--variant-index",
            envvar="WHEELFIT_VARIANT_INDEX",
            help="A wheel-variant index (e.g. https://download.pytorch.org/whl/variant): plan from its "
            "torch-X-variants.json if it serves one, else from the per-variant indexes.",
            metavar="URL",
        ),
    ] = None,
) -> None:
    """Choose the PyTorch build that has kernels for this machine (or --target), and say why."""
    import os

    from wheelfit_probekit import System

    from ..kb.matrix import load_knowledge
    from ..probe import detect as run_detect
    from ..probe.target import apply_overrides, load_target
    from ..resolve import Request, resolve

    if target:
        report = load_target(target)
    else:
        if sysroot is not None and not sysroot.is_dir():
            raise WheelfitError(f"--sysroot {sysroot} is not a directory")
        report = run_detect(System.from_sysroot(sysroot, command_timeout=probe_timeout))
    report, notes = apply_overrides(report, os.environ)
    request = Request.parse(requirements or ["torch"], allow_cpu=allow_cpu, index_base=pytorch_index)
    result = None
    if variant_index:
        from .commands import variant_mode

        result, fallback = variant_mode(report, request, variant_index, offline)
        notes = [*notes, *fallback]
    if result is None:
        result = resolve(report, load_knowledge(kb_file), request)
    if notes:
        from dataclasses import replace

        result = replace(result, warnings=(*notes, *result.warnings))
    if as_json:
        import json

        sys.stdout.write(json.dumps(result.to_dict(), indent=2) + "\n")
        return
    from .render import render_plan

    render_plan(result)


def run(args: list[str]) -> int:
    """Run the app on ``args``; library errors become one line on stderr, never a traceback."""
    try:
        app(args=args, prog_name="wheelfit")  # standalone: usage errors print and exit 2
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    except KeyboardInterrupt:
        sys.stderr.write("wheelfit: interrupted\n")
        return 130
    except Exception as exc:  # noqa: BLE001 - the promise is one line, never a traceback
        from .commands import error_status

        return error_status(exc)
    return 0


def _register_more_commands() -> None:
    """Commands that live in their own modules register on ``app`` when imported."""
    import importlib

    for module in ("variants_cmd", "install_cmd"):
        try:
            importlib.import_module(f"{__package__}.{module}")
        except ModuleNotFoundError as exc:
            if exc.name != f"{__package__}.{module}":
                raise


_register_more_commands()
