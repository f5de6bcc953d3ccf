"""The human rendering of a verification (``wheelfit verify``, and the end of ``wheelfit install``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.console import Console

if TYPE_CHECKING:
    from ..install.verify import Verification

__all__ = ["render_verify"]


def render_verify(verification: Verification, python: str, console: Console | None = None) -> None:
    con = console or Console()
    marks = {True: "[green]ok[/]", False: "[red]FAIL[/]", None: "[yellow]--[/]"}
    for c in verification.checks:
        con.print(f"  {marks[c.ok]}  {c.name:8} {c.detail}")
    if verification.ok:
        con.print(f"[bold green]verified[/]: torch in {python} is the planned build")
    else:
        con.print(f"[bold red]not the planned build[/]: torch in {python} does not match the plan")
