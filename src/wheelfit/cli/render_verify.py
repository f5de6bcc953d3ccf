"""The human rendering of a verification (``wheelfit verify``, and the end of ``wheelfit install``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.console import Console
from rich.markup import escape
from rich.text import Text

from .text import say

if TYPE_CHECKING:
    from ..install.verify import Verification

__all__ = ["render_verify"]


def render_verify(verification: Verification, python: str, console: Console | None = None) -> None:
    con = console or Console()
    marks = {True: "[green]ok[/]  ", False: "[red]FAIL[/]", None: "[yellow]--[/]  "}
    for c in verification.checks:
        say(con, f"  {marks[c.ok]}  {c.name:11} ", c.detail, hang=20)
    # The summary's variable parts are escaped where they are put in; wrapped, it hangs by 2.
    say(con, "", Text.from_markup(_summary(verification, python)), indent=2)


def _summary(v: Verification, python: str) -> str:
    """One line: whether torch runs here, and (a note) whether it is wheelfit's pick."""
    torch = f"torch {v.facts.version}" + (f" ({v.runtime})" if v.runtime else "")
    if not v.ok:
        what = escape(torch if v.facts.version else "torch")
        fail = f"[bold red]FAIL[/]: {what} in {escape(python)} will not work here"
        if v.planned is False and v.plan_build:
            fix = f"wheelfit install torch=={v.facts.version.split('+')[0]} --python {python}"
            fail += f"; wheelfit's plan for this machine is torch {escape(v.plan_build)} ({escape(fix)})"
        return fail
    head = f"[bold green]verified[/]: {escape(torch)} in {escape(python)}"
    judged = _judged(v)
    if v.planned is True:
        return f"{head} is wheelfit's planned build{judged}"
    if v.planned is False:
        return f"{head} is not wheelfit's planned build ({escape(v.plan_build or '?')}), but it runs here{judged}"
    return f"{head} runs here{judged}"


def _judged(v: Verification) -> str:
    """``: it has kernels for every GPU and a runtime the driver supports`` (what the checks showed)."""
    kinds = {c.name for c in v.checks if c.ok is True}
    said = []
    if "kernels" in kinds:
        said.append("kernels for every GPU")
    if "driver" in kinds:
        said.append("a runtime the driver supports")
    return f": it has {' and '.join(said)}" if said else ""
