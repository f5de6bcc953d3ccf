"""Download progress on stderr: rich bars (size, speed, ETA) on a terminal, one plain line per event otherwise
(CI logs), nothing with ``--json``. A server slow to answer is a ``waiting for <host> (N s)`` line either way."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from types import TracebackType

    from rich.console import Console
    from rich.progress import Progress as Bars
    from rich.progress import TaskID

    from ..fetch import Progress

__all__ = ["Downloads", "bars", "plain_line"]

#: Events that are a line of their own, above the bars on a terminal.
_LINES = ("stalled",)


class Downloads:
    """The progress callback's renderer. On a terminal the bars start with the first download, so a command
    that downloads nothing (``plan``) only ever prints its ``waiting for`` lines."""

    def __init__(self, quiet: bool) -> None:
        self.quiet = quiet
        self.tasks: dict[str, TaskID] = {}
        self.progress: Bars | None = None
        self.terminal = False

    def __enter__(self) -> Downloads:
        self.terminal = not self.quiet and sys.stderr.isatty()
        return self

    def update(self, event: Progress) -> None:
        if self.quiet:
            return
        if not self.terminal or (self.progress is None and event.state in _LINES):
            line = plain_line(event)
            if line:
                sys.stderr.write(line + "\n")
                sys.stderr.flush()
            return
        if self.progress is None:
            from rich.console import Console

            self.progress = bars(Console(stderr=True))
            self.progress.start()
        if event.state in _LINES:
            self.progress.console.print(plain_line(event), markup=False, highlight=False)
            return
        if event.filename not in self.tasks:
            self.tasks[event.filename] = self.progress.add_task(event.filename, total=event.total)
        self.progress.update(self.tasks[event.filename], completed=event.received, total=event.total)

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self.progress is not None:
            self.progress.stop()


def bars(console: Console) -> Bars:
    """One line per file that never wraps: the file name gives way (cut with an ellipsis) before the size
    (``12.3/800.0 MB``), speed and time left, which keep their width at 80 columns."""
    from rich.progress import (
        BarColumn,
        DownloadColumn,
        TextColumn,
        TimeRemainingColumn,
        TransferSpeedColumn,
    )
    from rich.progress import Progress as Bars
    from rich.table import Column

    def fixed(width: int) -> Column:
        return Column(no_wrap=True, min_width=width, justify="right")

    return Bars(
        TextColumn("{task.description}", table_column=Column(no_wrap=True, overflow="ellipsis", ratio=1)),
        BarColumn(bar_width=16),
        DownloadColumn(table_column=fixed(len("1234.5/1234.5 MB"))),
        TransferSpeedColumn(table_column=fixed(len("123.4 MB/s"))),
        TimeRemainingColumn(table_column=fixed(len("0:00:00"))),
        console=console,
        transient=False,
        expand=True,  # the name's column takes what the others leave (its ratio), never more
    )


def plain_line(event: Progress) -> str:
    """The log line for a download event; '' for the many in-between 'downloading' ticks."""
    size = f"{event.total / 1e6:.1f} MB" if event.total else "size unknown"
    if event.state == "start":
        return f"downloading {event.filename} ({size})"
    if event.state == "done":
        return f"downloaded {event.filename} ({event.received / 1e6:.1f} MB)"
    if event.state == "cached":
        return f"cached {event.filename} ({size})"
    if event.state == "stalled":
        return f"waiting for {event.detail} ({event.waited:.0f} s) ... {event.filename}"
    return ""
