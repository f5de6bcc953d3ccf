"""Download progress on stderr: rich bars (size, speed, ETA) on a terminal, one plain line per event otherwise
(CI logs), nothing with ``--json``."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from types import TracebackType

    from rich.progress import Progress as Bars
    from rich.progress import TaskID

    from ..fetch import Progress

__all__ = ["Downloads", "plain_line"]


class Downloads:
    def __init__(self, quiet: bool) -> None:
        self.quiet = quiet
        self.tasks: dict[str, TaskID] = {}
        self.progress: Bars | None = None

    def __enter__(self) -> Downloads:
        if not self.quiet and sys.stderr.isatty():
            from rich.console import Console
            from rich.progress import (
                BarColumn,
                DownloadColumn,
                TextColumn,
                TimeRemainingColumn,
                TransferSpeedColumn,
            )
            from rich.progress import Progress as Bars

            self.progress = Bars(
                TextColumn("{task.description}"),
                BarColumn(),
                DownloadColumn(),
                TransferSpeedColumn(),
                TimeRemainingColumn(),
                console=Console(stderr=True),
                transient=False,
            )
            self.progress.start()
        return self

    def update(self, event: Progress) -> None:
        if self.quiet:
            return
        if self.progress is None:
            line = plain_line(event)
            if line:
                sys.stderr.write(line + "\n")
            return
        if event.state in ("waiting", "retrying"):
            self.progress.console.print(plain_line(event))
            return
        if event.filename not in self.tasks:
            self.tasks[event.filename] = self.progress.add_task(event.filename, total=event.total)
        self.progress.update(self.tasks[event.filename], completed=event.received, total=event.total)

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self.progress is not None:
            self.progress.stop()


def plain_line(event: Progress) -> str:
    """The log line for a download event; '' for the many in-between 'downloading' ticks."""
    size = f"{event.total / 1e6:.1f} MB" if event.total else "size unknown"
    if event.state == "start":
        return f"downloading {event.filename} ({size})"
    if event.state == "done":
        return f"downloaded {event.filename} ({event.received / 1e6:.1f} MB)"
    if event.state == "cached":
        return f"cached {event.filename} ({size})"
    if event.state == "retrying":
        return f"retrying {event.filename} (attempt {event.attempt + 1}): {event.detail}"
    if event.state == "waiting":
        return f"waiting for another wheelfit run that is downloading {event.filename}"
    return ""
