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
    from wheelfit_probekit import System

    from ..probe import detect as run_detect

    if sysroot is not None and not sysroot.is_dir():
        raise WheelfitError(f"--sysroot {sysroot} is not a directory")
    report = run_detect(System.from_sysroot(sysroot, command_timeout=probe_timeout), disabled=disable or ())
    if as_json:
        sys.stdout.write(report.to_json() + "\n")
        return
    from .render import render_report

    render_report(report)


def run(args: list[str]) -> int:
    """Run the app on ``args``; library errors become one line on stderr, never a traceback."""
    try:
        app(args=args, prog_name="wheelfit")  # standalone: usage errors print and exit 2
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    except WheelfitError as exc:
        sys.stderr.write(f"wheelfit: error: {exc}\n")
        return 2
    except KeyboardInterrupt:
        sys.stderr.write("wheelfit: interrupted\n")
        return 130
    except Exception as exc:  # noqa: BLE001 - the promise is one line, never a traceback
        sys.stderr.write(f"wheelfit: internal error: {type(exc).__name__}: {exc} (please report this)\n")
        return 70
    return 0
