"""How download progress is drawn (``wheelfit.cli.progress``): a bar per file that stays on one line at 80
columns, and the plain line for a server that is slow to answer."""

from __future__ import annotations

import io
import time

import pytest
from rich.console import Console

from tests.install.conftest import PROGRESS
from wheelfit.cli.progress import bars, plain_line
from wheelfit.fetch import Progress

LONG = "torch-2.14.1+cu126-cp311-cp311-manylinux_2_28_x86_64.whl"


@pytest.mark.parametrize("width", [80, 100])
def test_a_bar_never_wraps_its_size_at_80_columns(width: int) -> None:
    out = io.StringIO()
    console = Console(file=out, width=width, color_system=None, force_terminal=False)
    progress = bars(console)
    task = progress.add_task(LONG, total=800e6)
    progress.add_task("triton-3.5.1-py3-none-any.whl", total=80e6)
    progress.update(task, completed=1e6)
    time.sleep(0.05)
    progress.update(task, completed=12.3e6)
    console.print(progress.get_renderable())
    lines = out.getvalue().rstrip("\n").splitlines()
    assert len(lines) == 2, lines  # one line per file
    assert "12.3/800.0 MB" in lines[0] and "0.0/80.0 MB" in lines[1]
    assert all(len(line) <= width for line in lines)
    assert "MB/s" in lines[0]  # the speed is not cut off either
    assert lines[0].startswith("torch-2.14.1+cu126")


def test_a_stall_is_one_plain_progress_line() -> None:
    event = Progress("http://127.0.0.1:8123/cu126/torch/", "stalled", detail="127.0.0.1:8123", waited=3.2)
    line = plain_line(event)
    assert line == "waiting for 127.0.0.1:8123 (3 s) ... http://127.0.0.1:8123/cu126/torch/"
    assert line.startswith(PROGRESS)  # the tests' list of progress lines knows it
