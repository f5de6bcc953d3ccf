"""The human rendering of a verification (``wheelfit verify``, and the end of ``wheelfit install``), and of
``wheelfit verify --record``'s check of the installed files."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.console import Console
from rich.markup import escape
from rich.text import Text

from .text import say

if TYPE_CHECKING:
    from ..install.installed_record import DistributionRecord, RecordCheck
    from ..install.verify import Verification

__all__ = ["record_line", "record_summary", "render_record", "render_verify"]

#: Paths named per kind of problem in a distribution's line; the rest are counted (``--json`` has them all).
_NAMED = 3


def render_verify(
    verification: Verification, python: str, console: Console | None = None, *, target: str | None = None
) -> None:
    con = console or Console()
    marks = {True: "[green]ok[/]  ", False: "[red]FAIL[/]", None: "[yellow]--[/]  "}
    for c in verification.checks:
        say(con, f"  {marks[c.ok]}  {c.name:11} ", c.detail, hang=20)
    # The summary's variable parts are escaped where they are put in; wrapped, it hangs by 2.
    say(con, "", Text.from_markup(_summary(verification, python, target)), indent=2)


def _summary(v: Verification, python: str, target: str | None = None) -> str:
    """One line: whether torch runs here, and (a note) whether it is wheelfit's pick."""
    torch = f"torch {v.facts.version}" + (f" ({v.runtime})" if v.runtime else "")
    if not v.ok:
        what = escape(torch if v.facts.version else "torch")
        fail = f"[bold red]FAIL[/]: {what} in {escape(python)} will not work here"
        if v.planned is False and v.plan_build:
            build = v.plan_build if " " not in v.plan_build else v.facts.version.split("+")[0]  # a variant: its version
            fix = f"wheelfit install torch=={build} --python {python}"
            fix += f" --target {target}" if target else ""
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


def render_record(check: RecordCheck, console: Console | None = None) -> None:
    """A line for each distribution whose files are not as its RECORD says, then the count of what was checked."""
    con = console or Console()
    for dist in check.distributions:
        if not dist.ok:
            say(con, "  [red]FAIL[/]  record      ", record_line(dist), hang=20)
    colour = "green" if check.ok else "red"
    say(con, "", Text.from_markup(f"[bold {colour}]RECORD[/]: {escape(record_summary(check))}"), indent=2)


def record_line(dist: DistributionRecord) -> str:
    """``torch 2.9.0+cu128: 2 files differ from RECORD (torch/lib/libc10.so, torch/x.py), 1 missing (...)``"""
    from ..install.installed_record import ProblemKind

    words = {
        ProblemKind.MISMATCH: ("file differs from RECORD", "files differ from RECORD"),
        ProblemKind.MISSING: ("missing", "missing"),
        ProblemKind.UNREADABLE: ("unreadable", "unreadable"),
        ProblemKind.OUTSIDE: ("RECORD row leads outside the environment", "RECORD rows lead outside the environment"),
        ProblemKind.MALFORMED: ("malformed RECORD row", "malformed RECORD rows"),
    }
    parts = []
    for kind, (one, many) in words.items():
        paths = [p.path for p in dist.problems if p.kind is kind]
        if paths:
            named = ", ".join(paths[:_NAMED]) + (f", and {len(paths) - _NAMED} more" if len(paths) > _NAMED else "")
            parts.append(f"{len(paths)} {one if len(paths) == 1 else many} ({named})")
    return f"{dist.name} {dist.version}: {', '.join(parts)}"


def record_summary(check: RecordCheck) -> str:
    """``143 distributions, 12,406 files checked, all match`` (or how many problems, in how many)."""
    head = f"{_n(len(check.distributions), 'distribution')}, {_n(check.checked, 'file')} checked"
    if check.ok:
        tail = "all match"
    else:
        bad = sum(1 for d in check.distributions if not d.ok)
        tail = f"{_n(len(check.problems), 'problem')} in {_n(bad, 'distribution')}"
    if check.without_record:
        tail += f" ({len(check.without_record):,} without a RECORD, not checked)"
    return f"{head}, {tail}"


def _n(count: int, word: str) -> str:
    return f"{count:,} {word}{'' if count == 1 else 's'}"
