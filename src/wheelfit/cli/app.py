"""The typer application: parses options, calls :mod:`wheelfit.api`, hands results to the renderers."""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import click
import typer
from typer.core import TyperCommand, TyperGroup

from ..errors import UsageError, WheelfitError, clip
from ..lazy import LazyMapping
from . import version_line

if TYPE_CHECKING:
    from ..app.session import Network
    from ..fetch.wheels import ProgressCallback
    from ..kb.matrix import Knowledge

__all__ = ["app", "error_status", "first_sentence", "knowledge", "print_json", "run", "session"]


def first_sentence(text: str) -> str:
    """The first sentence of a command's help, whole (click cuts it to the line with "..."); ``e.g.`` and
    ``...`` inside do not end it."""
    import re

    flat = " ".join(text.split("\n\n")[0].split())
    end = re.search(r"(?<!\be\.g)(?<!\bi\.e)(?<!\.)\.(?=\s|$)", flat)
    return flat[: end.end()] if end else flat


class _Group(TyperGroup):
    """Every command group of wheelfit (see :func:`_house_classes`): its command list gives each command's first
    sentence whole, wrapped."""

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = []
        for name in self.list_commands(ctx):
            cmd = self.get_command(ctx, name)
            if cmd is not None and not cmd.hidden:
                rows.append((name, first_sentence(cmd.short_help or cmd.help or "")))
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)


class _Root(_Group):
    """The ``wheelfit`` group: the commands of :data:`ELSEWHERE` are imported and built when first asked for."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.commands = LazyMapping(self.commands, ELSEWHERE, _command_elsewhere)


class _Command(TyperCommand):
    """Every command of wheelfit (see :func:`_house_classes`): ``--help`` describes each argument, once."""

    def format_help(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        _argument_help(self)
        super().format_help(ctx, formatter)

    def format_arguments(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """Nothing: typer lists the arguments with the options ("Arguments"); click 8.5's own "Positional
        arguments" would list them twice."""


def _argument_help(cmd: click.Command) -> None:
    """Give back each argument the help its ``typer.Argument(help=...)`` declares: typer (0.25) sets it before
    click (8.5, whose ``Argument`` takes a help of its own) overwrites it with ``None``, and ``--help`` showed
    ``[REQUIREMENTS]...`` bare."""
    missing = [p for p in cmd.params if isinstance(p, click.Argument) and getattr(p, "help", None) is None]
    original = getattr(cmd.callback, "__wrapped__", None)  # typer's wrapper of the command's function
    if not missing or original is None:
        return
    from typer.models import ArgumentInfo
    from typer.utils import get_params_from_function

    declared = get_params_from_function(original)
    for param in missing:
        info = declared[param.name].default if param.name in declared else None
        if isinstance(info, ArgumentInfo) and info.help:
            param.help = info.help


def _house_classes(typer_app: typer.Typer) -> None:
    """Make ``typer_app``'s commands and groups, and theirs, :class:`_Command` and :class:`_Group` (unless one
    chose its own): each module then declares its commands the ordinary way."""
    for command in typer_app.registered_commands:
        if command.cls in (None, TyperCommand):  # typer's default
            command.cls = _Command
    for group in typer_app.registered_groups:
        if not isinstance(group.cls, type):  # typer's "not set" placeholder
            group.cls = _Group
        if group.typer_instance is not None:
            _house_classes(group.typer_instance)


app = typer.Typer(
    name="wheelfit",
    help="Install the PyTorch build that has kernels for this machine, and say why.",
    cls=_Root,
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
    suggest_commands=False,  # click suggests already: typer's own made it "Did you mean 'install'?" twice
    context_settings={"help_option_names": ["-h", "--help"]},
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
TargetOpt = Annotated[
    str | None,
    typer.Option(
        "--target",
        envvar="WHEELFIT_TARGET",
        help="Plan for another machine: a saved `wheelfit detect --json` file, or "
        "key=value,... with keys cuda (6.1+8.9), driver, rocm (gfx942+gfx90a), xpu (8086:e20b or a family), "
        "cpu (v3), os (linux|windows|macos), arch, python.",
        metavar="FILE|SPEC",
    ),
]
TargetsOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--target",
        envvar="WHEELFIT_TARGET",  # several: separated by spaces
        help="A machine to plan for (repeat for several): a saved `wheelfit detect --json` file, or key=value,... "
        "with keys cuda (6.1+8.9), driver, rocm (gfx942+gfx90a), xpu, cpu (v3), os, arch, python. "
        "Default: this machine.",
        metavar="FILE|SPEC",
    ),
]
KbOpt = Annotated[Path | None, typer.Option("--kb", help="Use this knowledge-base file instead of the built-in one.")]
PytorchIndexOpt = Annotated[
    str | None,
    typer.Option(
        "--pytorch-index",
        help="Base URL of the PyTorch indexes (or WHEELFIT_PYTORCH_INDEX; default https://download.pytorch.org/whl).",
    ),
]
VariantIndexOpt = Annotated[
    str | None,
    typer.Option(
        "--variant-index",
        envvar="WHEELFIT_VARIANT_INDEX",
        help="A wheel-variant index (e.g. https://download.pytorch.org/whl/variant): plan from its "
        "torch-X-variants.json if it serves one, else from the per-variant indexes.",
        metavar="URL",
    ),
]
AllowCpuOpt = Annotated[
    bool, typer.Option("--allow-cpu", help="Prefer the newest release's CPU build to an older GPU build.")
]
TorchBackendOpt = Annotated[
    str | None,
    typer.Option(
        "--torch-backend",
        help="The build to plan, as uv spells it: auto (wheelfit's choice), cpu, cu126, cu128, cu130, ..., "
        "rocm7.1, xpu (or UV_TORCH_BACKEND). A build without kernels for this machine is refused.",
        metavar="auto|cpu|cuNNN|rocmX.Y|xpu",
    ),
]
ForceBuildOpt = Annotated[
    bool,
    typer.Option("--force-build", help="Plan the chosen build even when it has no kernels for this machine."),
]
AllowHsaOverrideOpt = Annotated[
    bool,
    typer.Option(
        "--allow-hsa-override",
        help="Let an AMD GPU that no build lists run a neighbour's kernels under HSA_OVERRIDE_GFX_VERSION "
        "(not supported by AMD; off by default).",
    ),
]
def _finite(value: float | None, what: str) -> float | None:
    """A number option that ``inf`` or ``nan`` passed (click's range lets ``nan`` through) is a usage error."""
    import math

    if value is not None and not math.isfinite(value):
        raise typer.BadParameter(f"{value} is not a number of seconds", param_hint=what)
    return value


HttpTimeoutOpt = Annotated[
    float | None,
    typer.Option(
        "--timeout",
        envvar=["WHEELFIT_HTTP_TIMEOUT", "UV_HTTP_TIMEOUT", "UV_REQUEST_TIMEOUT", "PIP_TIMEOUT", "PIP_DEFAULT_TIMEOUT"],
        min=0.1,
        max=86400.0,
        callback=lambda value: _finite(value, "--timeout (or its variables)"),
        help="Seconds to wait for an index or download server to connect and for each read (or "
        "WHEELFIT_HTTP_TIMEOUT, uv's UV_HTTP_TIMEOUT/UV_REQUEST_TIMEOUT, pip's PIP_TIMEOUT/PIP_DEFAULT_TIMEOUT; "
        "default 10 to connect, 30 per read).",
        metavar="SECONDS",
    ),
]
CertOpt = Annotated[
    str | None,
    typer.Option(
        "--cert",
        envvar="WHEELFIT_CERT",
        help="A PEM file of CA certificates to verify HTTPS servers with, instead of the system's store and "
        "certifi's (or WHEELFIT_CERT; SSL_CERT_FILE does the same); passed on to uv and pip.",
        metavar="FILE",
    ),
]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print the result as JSON.")]
DisableOpt = Annotated[
    list[str] | None, typer.Option("--disable-provider", help="Skip a detector plugin by name.", metavar="NAME")
]
OfflineOpt = Annotated[
    bool,
    typer.Option(
        "--offline",
        help="Read no index: the knowledge base and what is already in the caches (or WHEELFIT_OFFLINE=1).",
    ),
]
IndexUrlOpt = Annotated[
    str | None,
    typer.Option(
        "--index-url", "-i", help="The index for everything that is not torch-family, never consulted for torch-family "
        "names (or WHEELFIT_INDEX_URL, UV_DEFAULT_INDEX, UV_INDEX_URL, PIP_INDEX_URL; default https://pypi.org/simple).",
        metavar="URL",
    ),
]  # fmt: skip
RequireGpuOpt = Annotated[
    bool,
    typer.Option(
        "--require-gpu",
        help="Fail instead of planning the CPU build for a machine (or --target) whose GPU no build serves: CI for a "
        "GPU fleet then stops rather than test CPU builds.",
        envvar="WHEELFIT_REQUIRE_GPU",
    ),
]
FindLinksOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--find-links",
        "-f",
        help="A wheelhouse directory or find-links page (repeatable; or UV_FIND_LINKS, PIP_FIND_LINKS). Wheels of "
        "packages built against torch (flash-attn, torch-scatter, ...) then come from there only; so does what is "
        "not torch-family; a torch-family wheel in it is used only if it is the very file the plan chose.",
        metavar="DIR",
    ),
]
PreOpt = Annotated[
    bool,
    typer.Option(
        "--pre",
        help="Consider pre-releases: release candidates and nightly builds (read from <pytorch-index>/test and "
        "<pytorch-index>/nightly).",
    ),
]


def _version(value: bool) -> None:
    if value:
        sys.stdout.write(version_line())
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
    disable: DisableOpt = None,
) -> None:
    """Show what hardware this machine has and what it means for PyTorch."""
    from .. import api

    where = api.MachineOptions(sysroot=sysroot, probe_timeout=probe_timeout, disabled=tuple(disable or ()))
    report = api.detect(where, environ=os.environ)
    if as_json:
        sys.stdout.write(report.to_json() + "\n")
        return
    from .render import render_report

    render_report(report)


@app.command()
def plan(
    requirements: Annotated[
        list[str] | None,
        typer.Argument(
            help='Packages to plan, as pip takes them: torch, "torch==2.9.*", torchvision==0.24, torchaudio, '
            "triton (default: torch)."
        ),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the plan as JSON.")] = False,
    target: TargetOpt = None,
    sysroot: SysrootOpt = None,
    probe_timeout: TimeoutOpt = 15.0,
    kb_file: KbOpt = None,
    allow_cpu: AllowCpuOpt = False,
    offline: OfflineOpt = False,
    pytorch_index: PytorchIndexOpt = None,
    variant_index: VariantIndexOpt = None,
    pre: PreOpt = False,
    torch_backend: TorchBackendOpt = None,
    force_build: ForceBuildOpt = False,
    allow_hsa_override: AllowHsaOverrideOpt = False,
    require_gpu: RequireGpuOpt = False,
    find_links: FindLinksOpt = None,
    http_timeout: HttpTimeoutOpt = None,
    cert: CertOpt = None,
    disable: DisableOpt = None,
    explain: Annotated[
        bool,
        typer.Option("--explain", help="Show everything: each build turned down and why, each fact below primary."),
    ] = False,
) -> None:
    """Choose the PyTorch build that has kernels for this machine (or --target), and say why."""
    from .. import api
    from ..fetch.deadline import index_deadline
    from ..resolve.request import check_names
    from .progress import Downloads

    check_names(requirements or ["torch"])  # a name it cannot plan (troch): said before detecting or fetching
    kb = knowledge(kb_file)
    deadline = index_deadline(os.environ, "plan")  # an index that does not answer: the knowledge base, soon
    where = api.MachineOptions(target, sysroot, probe_timeout, tuple(disable or ()))
    options = api.PlanOptions(
        kb=kb, pytorch_index=pytorch_index, variant_index=variant_index, find_links=tuple(find_links or ()),
        allow_cpu=allow_cpu, pre=pre, torch_backend=torch_backend, force=force_build,
        allow_hsa_override=allow_hsa_override, require_gpu=require_gpu,
    )  # fmt: skip
    with (
        Downloads(quiet=as_json) as slow,  # only "waiting for <server>" lines: a plan downloads nothing
        session(offline=offline, progress=slow.update, timeout=http_timeout, cert=cert, deadline=deadline) as net,
    ):
        net.prepare()  # while the machine is detected
        here = api.machine(where, environ=os.environ, kb=kb)
        result = api.plan(requirements or ["torch"], here, options, environ=os.environ, network=net)
    if as_json:
        print_json(result.to_dict())
        return
    from .render import render_plan

    command = _install_command(requirements or ["torch"], target, pytorch_index, find_links or [])
    render_plan(result, explain=explain, install=command)


def _install_command(
    requirements: list[str], target: str | None, pytorch_index: str | None, find_links: list[str]
) -> str:
    """The ``wheelfit install`` line that installs what was planned, for the same machine, index and wheelhouses."""
    import shlex

    argv = ["wheelfit", "install", *requirements]
    if target:
        argv += ["--target", target]
    if pytorch_index:
        argv += ["--pytorch-index", pytorch_index]
    for place in find_links:
        argv += ["--find-links", place]
    return " ".join(map(shlex.quote, argv))


@contextlib.contextmanager
def session(
    *,
    offline: bool,
    timeout: float | None,
    cert: str | None,
    deadline: float | None,
    progress: ProgressCallback | None = None,
) -> Iterator[Network]:
    """The run's network session (:func:`wheelfit.api.network`), in which Ctrl-C stops every request and download
    at once: the command line owns the process, so the signal handler is set here, never by the library."""
    from .. import api
    from ..fetch.watch import sigint_cancels

    with api.network(os.environ, offline=offline, progress=progress, timeout=timeout, cert=cert,
                     deadline=deadline) as net:  # fmt: skip
        if net.watch is None:  # pragma: no cover - api.network always makes one
            yield net
            return
        with sigint_cancels(net.watch):
            yield net


def knowledge(path: Path | None) -> Knowledge | None:
    """``--kb FILE``: that knowledge base; ``None`` for the built-in one."""
    if path is None:
        return None
    from ..kb.matrix import load_knowledge

    try:
        return load_knowledge(path)
    except UsageError:
        raise
    except WheelfitError as exc:  # a file the user named that cannot be read: a usage error, as a requirements file
        raise UsageError(str(exc)) from None


def print_json(data: object) -> None:
    """A result for machines: indented JSON and a newline on stdout."""
    import json

    sys.stdout.write(json.dumps(data, indent=2) + "\n")


#: The longest error line: each message quotes what it is about, but never a 100 kB argument whole.
_MAX_LINE = 1500


def error_status(exc: Exception) -> int:
    """Say what failed in one line on stderr, never a traceback. The status is uv's: 2 for a usage error, 1 for
    any other refusal or failure (it says what to do), 70 for anything else (a bug)."""
    if isinstance(exc, WheelfitError):  # one line, however long a value it quotes
        sys.stderr.write(f"wheelfit: error: {clip(str(exc), _MAX_LINE)}\n")
        return 2 if isinstance(exc, UsageError) else 1
    what = clip(str(exc), _MAX_LINE)
    sys.stderr.write(f"wheelfit: internal error: {type(exc).__name__}: {what} (please report this)\n")
    return 70


def run(args: list[str]) -> int:
    """Run the app on ``args``; library errors become one line on stderr, never a traceback."""
    try:
        app(args=args, prog_name="wheelfit")  # standalone: usage errors print and exit 2
    except SystemExit as exc:
        if _interrupt_in(exc):  # typer turns Ctrl-C into a silent exit 130: say it, once
            sys.stderr.write("wheelfit: interrupted\n")
            return 130
        return exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    except KeyboardInterrupt:
        sys.stderr.write("wheelfit: interrupted\n")
        return 130
    except Exception as exc:  # noqa: BLE001 - the promise is one line, never a traceback
        code = error_status(exc)
        if "--json" in args:  # a caller that reads JSON gets its error as JSON too (the line above stays)
            print_json(error_json(exc, code))
        return code
    return 0


def error_json(exc: Exception, code: int) -> dict[str, object]:
    """The error of a ``--json`` run, as a document: ``{"error": {"kind", "message", "exit_code"}}``."""
    kind = "usage" if code == 2 else "failure" if code == 1 else "internal"
    return {"schema_version": "1.0", "error": {"kind": kind, "message": clip(str(exc), _MAX_LINE), "exit_code": code}}


def _interrupt_in(exc: BaseException) -> bool:
    """Whether a ``KeyboardInterrupt`` is in the exception's cause or context chain."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        if isinstance(current, KeyboardInterrupt):
            return True
        seen.add(id(current))
        current = current.__cause__ or current.__context__
    return False


#: The commands (and command groups) that live in their own modules, in the order ``--help`` lists them after
#: ``detect`` and ``plan``: each module is imported, and its command built, when the command is run or listed
#: (:class:`wheelfit.lazy.LazyMapping`), so that one command does not pay for the other ten.
ELSEWHERE = {
    "install": "install_cmd",
    "doctor": "doctor_cmd",
    "env": "env_cmd",
    "lock": "lock_cmd",
    "sync": "sync_cmd",
    "verify": "verify_cmd",
    "configure": "configure_cmd",
    "kb": "kb_cmd",
    "variants": "variants_cmd",
}


def _command_elsewhere(name: str) -> click.Command:
    """Import the module of ``ELSEWHERE[name]`` (which registers its command on ``app``) and build that command."""
    import importlib

    import typer.main

    importlib.import_module(f"{__package__}.{ELSEWHERE[name]}")
    _house_classes(app)
    for info in app.registered_commands:
        if (info.name or typer.main.get_command_name(getattr(info.callback, "__name__", ""))) == name:
            return typer.main.get_command_from_info(
                info, pretty_exceptions_short=app.pretty_exceptions_short, rich_markup_mode=app.rich_markup_mode
            )
    for group in app.registered_groups:
        named = [group.name, group.typer_instance.info.name if group.typer_instance else None]
        if name in named:
            return typer.main.get_group_from_info(
                group,
                pretty_exceptions_short=app.pretty_exceptions_short,
                suggest_commands=app.suggest_commands,
                rich_markup_mode=app.rich_markup_mode,
            )
    raise LookupError(f"{ELSEWHERE[name]} registers no command {name!r}")
