"""``wheelfit kb show BUILD``: what is known about a build and where each fact came from."""

from __future__ import annotations

import os
from typing import Annotated, Any

import typer

from .app import JsonOpt, KbOpt, app, knowledge, print_json

__all__ = ["kb_app"]

kb_app = typer.Typer(help="The knowledge base: what wheelfit knows about PyTorch's builds, and from where.")
app.add_typer(kb_app, name="kb")


@kb_app.command("show")
def show(
    build: Annotated[str, typer.Argument(help="A build: VERSION+LABEL, e.g. 2.9.0+cu126.", metavar="BUILD")],
    kb_file: KbOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Print what is known about a build on each platform (kernels, runtime, companions) and each fact's
    confidence and source, measured facts of this machine included."""
    from packaging.version import InvalidVersion, Version

    from .. import api
    from ..candidates.builds import known_builds
    from ..errors import UsageError

    try:
        version = Version(build)
    except (InvalidVersion, ValueError):
        raise UsageError(f"{build[:100]!r} is not a build; give VERSION+LABEL, e.g. 2.9.0+cu126") from None
    if not version.local:
        raise UsageError(f"{build} names no build; add its label, e.g. {version}+cu126")
    kb = api.with_measured(knowledge(kb_file), os.environ)
    found = known_builds(kb, version, version.local)
    if as_json:
        print_json({"build": str(version), "platforms": {c.platform: _facts(c) for c in found}})
    else:
        _render(str(version), found)
    if not found:
        raise typer.Exit(1)


def _facts(c: Any) -> dict[str, Any]:
    k = c.kernels
    kernels = None if k is None else {"sass": list(k.sass), "ptx": list(k.ptx), "gfx": list(k.gfx), "aot": list(k.aot)}
    return {"kernels": kernels, "facts": {name: f.to_dict() for name, f in c.facts.items()}}


def _render(build: str, found: Any) -> None:
    from rich.console import Console

    from ..resolve.coverage import describe_archs
    from .text import say

    con = Console()
    if not found:
        say(con, "[bold]Unknown[/]  ", f"the knowledge base knows no torch {build} on any platform")
        return
    say(con, "[bold]Build[/]  ", f"torch {build}")
    for c in found:
        say(con, f"\n[bold]{c.platform}[/]  ", "")
        k = c.kernels
        if k is not None and (k.sass or k.ptx):
            say(con, "  kernels  ", describe_archs(k.sass, k.ptx))
        elif k is not None and (k.gfx or k.aot):
            say(con, "  kernels  ", ", ".join(k.gfx or k.aot))
        for name, fact in c.facts.items():
            say(con, f"  {name:9}", f"{fact.confidence}: {fact.what}; {fact.source}")
