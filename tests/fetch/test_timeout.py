"""``--timeout`` (and the variables uv and pip read for theirs) bounds every connect and read: a hung server is a
one-line error after it, not minutes of silence; a slow one is reported after 2 s."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import hermetic_env
from tests.install.conftest import error_line
from tests.support.hung import hung_server
from tests.support.inprocess import wheelfit_in_process
from tests.support.running import Running
from wheelfit.fetch import NetworkError, RetryPolicy, make_client
from wheelfit.fetch.http import get

RTX_3090 = "cuda=8.6,driver=580.95.05"


def _wheelfit(args: list[str], env: dict[str, str]) -> tuple[subprocess.CompletedProcess[str], float]:
    started = time.monotonic()
    done = wheelfit_in_process(args, env)
    return done, time.monotonic() - started


def test_make_client_timeout_bounds_a_hung_read() -> None:
    with hung_server() as hung, make_client(timeout=0.4) as http:
        started = time.monotonic()
        with pytest.raises(NetworkError) as info:
            get(http, f"{hung.url}/simple/torch/", {}, RetryPolicy(retries=1, sleep=lambda _s: None))
        took = time.monotonic() - started
    assert 0.7 <= took < 2.0, took  # two attempts of 0.4 s each
    message = str(info.value)
    assert "\n" not in message and "no answer within 0.4 s" in message and "--timeout" in message
    assert len(hung.requests) == 2


def test_install_timeout_gives_one_line_after_the_timeout(tmp_path: Path, backoff: list[float]) -> None:
    """Every read of the hung index ends after 0.5 s, each retried after a growing pause (recorded, not slept)."""
    env = hermetic_env(WHEELFIT_CACHE_DIR=str(tmp_path / "cache"))
    with hung_server() as hung:
        args = ["install", "torch", "--target", RTX_3090, "--pytorch-index", hung.url, "--dry-run"]
        done, took = _wheelfit([*args, "--python", sys.executable, "--timeout", "0.5"], env)
    assert done.returncode == 1, done.stderr
    line = error_line(done.stderr)
    assert f"{hung.url}/" in line and "no answer within 0.5 s" in line
    pages = len(set(hung.requests))  # each page read until its attempts ran out, a pause before each retry
    assert backoff and len(hung.requests) == len(backoff) + pages, (hung.requests, backoff)
    assert took < 0.5 * len(hung.requests) + 5, took  # the reads' 0.5 s each (the default 30 s would take minutes)


@pytest.mark.parametrize("variable", ["UV_HTTP_TIMEOUT", "PIP_DEFAULT_TIMEOUT"])
def test_the_timeout_variables_of_uv_and_pip_are_read(tmp_path: Path, variable: str, backoff: list[float]) -> None:
    env = hermetic_env(WHEELFIT_CACHE_DIR=str(tmp_path / "cache"), **{variable: "0.5"})
    with hung_server() as hung:
        done, took = _wheelfit(["plan", "torch", "--target", RTX_3090, "--pytorch-index", hung.url, "--json"], env)
    assert done.returncode == 0, done.stderr  # a plan without the index: from the knowledge base, saying so
    assert "no answer within 0.5 s" in done.stdout
    assert took < 0.5 * len(hung.requests) + 5, took


def test_a_slow_index_is_reported_within_seconds(tmp_path: Path) -> None:
    """`plan` against an index that does not answer: a `waiting for HOST:PORT (N s) ... URL` line on stderr
    after 2 s (before, nothing until the 30 s read timeout, four times over)."""
    env = hermetic_env(WHEELFIT_CACHE_DIR=str(tmp_path / "cache"))
    with hung_server() as hung:
        run = Running(["plan", "torch", "--target", RTX_3090, "--pytorch-index", hung.url], env)
        hung.connected.wait(30)
        asked = time.monotonic()
        prefix = f"waiting for 127.0.0.1:{hung.port} ("
        run.wait_until(lambda: any(ln.startswith(prefix) for ln in run.lines))
        reported = time.monotonic() - asked
        run.interrupt()
    assert 1.5 <= reported < 4, reported
    line = next(ln for ln in run.lines if ln.startswith(prefix))
    assert line.startswith(f"{prefix}2 s) ... {hung.url}/") and line.endswith("/torch/"), line
