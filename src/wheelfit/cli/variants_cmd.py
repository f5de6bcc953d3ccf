"""``wheelfit variants``: rank a release's variants for this machine, show a variants file."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Annotated

import typer
from rich.text import Text

from ..errors import UsageError, WheelfitError
from .app import SysrootOpt, TimeoutOpt, app, print_json
from .text import say

if TYPE_CHECKING:
    from ..variants.metadata import VariantsMetadata

__all__ = ["variants_app"]

variants_app = typer.Typer(
    help="Wheel variants: which of a release's variant wheels run here, best first.",
    no_args_is_help=True,
    rich_markup_mode=None,
)
app.add_typer(variants_app, name="variants")


@variants_app.command("rank")
def rank(
    source: Annotated[str, typer.Argument(help="A *-variants.json file or http(s) URL.", metavar="FILE_OR_URL")],
    as_json: Annotated[bool, typer.Option("--json", help="Print the ranking as JSON.")] = False,
    target: Annotated[
        str | None,
        typer.Option(
            "--target",
            envvar="WHEELFIT_TARGET",
            help="Rank for another machine: a saved `wheelfit detect --json` file, or key=value,... "
            "(cuda=8.6, driver=580.95.05, rocm=gfx942, xpu=bmg, os=linux|windows|macos, ...).",
            metavar="FILE|SPEC",
        ),
    ] = None,
    sysroot: SysrootOpt = None,
    probe_timeout: TimeoutOpt = 15.0,
    enable_optional: Annotated[
        list[str] | None,
        typer.Option("--enable-optional", help="Query this optional provider namespace too.", metavar="NAMESPACE"),
    ] = None,
) -> None:
    """Rank a release's variants for this machine (or --target): compatible labels best first,
    and for each other label the property that excluded it."""
    from .. import api

    name, metadata = _variants_file(source)
    here = api.machine(api.MachineOptions(target, sysroot, probe_timeout), environ=os.environ)
    notes = here.notes
    ranking = api.rank(metadata, here, environ=os.environ, enable_optional=enable_optional or ())
    if as_json:
        print_json(ranking.to_dict())
        return
    from rich.console import Console

    from .text import table

    con = Console(highlight=False)
    for note in notes:
        say(con, "[yellow]note:[/] ", note)
    rows: list[list[str]] = []
    for i, ranked in enumerate(ranking.compatible, 1):
        verdict = "runs here (null variant: no accelerator)" if ranked.is_null else "runs here"
        rows.append([str(i), ranked.label, verdict])
    for excl in ranking.incompatible:
        rows.append(["-", excl.label, excl.reason])
    runs = f"{len(ranking.compatible)} of {len(metadata.variants)} variants run here"
    say(con, "", Text.assemble((name, "bold"), f": {runs}"))
    table(con, ("#", "Label", "Verdict"), rows, wrap=(1, 2))


@variants_app.command("show")
def show(
    source: Annotated[
        str, typer.Argument(help="A *-variants.json or variant.json file, or an http(s) URL.", metavar="FILE")
    ],
) -> None:
    """Print a variants file as a readable table: providers, priorities, and each variant's properties."""
    from rich.console import Console

    from .text import table

    name, meta = _variants_file(source)
    con = Console(highlight=False)
    schema = f"  schema {'.'.join(map(str, meta.schema_version))} ({meta.schema_url})"
    say(con, "", Text.assemble((name, "bold"), schema))
    say(con, "Namespace priority: ", " > ".join(meta.namespace_order))
    if meta.providers:
        providers: list[list[str]] = []
        for ns, p in meta.providers.items():
            if p.static_properties is not None:
                kind = "static"
                what = "; ".join(f"{f} = {', '.join(v)}" for f, v in p.static_properties.items())
            else:
                kind = "install-time" + (", optional" if p.optional else "")
                what = ", ".join(p.requires) or (p.plugin_api or "")
            providers.append([ns, kind, what, p.enable_if or "always"])
        headers = ("Namespace", "Kind", "Requires / values", "Enabled if")
        table(con, headers, providers, title="Providers", wrap=(1, 2, 3))
    variants: list[list[str]] = []
    for label, variant in meta.variants.items():
        if variant.is_null:
            variants.append([label, "-", "-", "(null variant: no properties)"])
            continue
        first = True
        for ns, feats in variant.features.items():
            for feat, values in feats.items():
                variants.append([label if first else "", ns, feat, ", ".join(values)])
                first = False
    table(con, ("Label", "Namespace", "Feature", "Values"), variants, title="Variants", wrap=(2, 3))


def _variants_file(source: str) -> tuple[str, VariantsMetadata]:
    """The ``*-variants.json`` the user named; one that cannot be read or is malformed is a usage error (2), as a
    requirements file is. A network failure reading a URL stays a failure (1)."""
    from .. import api
    from ..fetch.errors import NetworkError
    from ..variants.metadata import loads

    try:
        body, name = api.read_variants_file(source, environ=os.environ)
        return name, loads(body, name)
    except (UsageError, NetworkError):
        raise
    except WheelfitError as exc:
        raise UsageError(str(exc)) from None
