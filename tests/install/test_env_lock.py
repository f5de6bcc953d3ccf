"""One wheelfit install per environment at a time: a second waits (and says so) then proceeds; one that waits too
long stops with one line naming the lock file and its holder; a holder that dies frees the lock at once. The
environment's lock is the download cache's (wheelfit.locking), so these hold for both."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import ROOT, hermetic_env
from wheelfit.install.errors import InstallError
from wheelfit.install.transaction import env_lock

from .conftest import Index, installed, make_venv

HOLD = """
import sys
from pathlib import Path
from wheelfit.install.transaction import env_lock
with env_lock(Path(sys.argv[1])):
    print("locked", flush=True)
    sys.stdin.readline()
"""


def _holder(prefix: Path) -> subprocess.Popen[str]:
    """Another process holding the environment's lock until a line arrives on its stdin."""
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD, str(prefix)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env=hermetic_env(PYTHONPATH=str(ROOT / "src")),
    )
    assert holder.stdout is not None and holder.stdout.readline() == "locked\n"
    return holder


def test_a_second_install_waits_for_the_first_says_so_then_proceeds(
    index: Index, env: dict[str, str], tmp_path: Path
) -> None:
    prefix = tmp_path / "venv"
    python = make_venv(prefix)
    log = tmp_path / "stderr.log"
    holder = _holder(prefix)
    try:
        args = ["install", "torch", "--target", "os=linux", "--python", str(python), "--no-verify",
                "--pytorch-index", index.pytorch, "--index-url", index.default]  # fmt: skip
        with log.open("w") as err:
            second = subprocess.Popen(
                [sys.executable, "-m", "wheelfit", *args], env=env, stdout=subprocess.PIPE, stderr=err, text=True
            )
        waiting = f"waiting for another wheelfit install into {prefix} (0 s) ... {prefix / '.wheelfit.lock'}"
        deadline = time.monotonic() + 60
        while waiting not in log.read_text():
            assert second.poll() is None, log.read_text()  # it must not finish while the lock is held
            assert time.monotonic() < deadline, log.read_text()
            time.sleep(0.02)
        time.sleep(0.5)
        assert second.poll() is None and "torch" not in installed(python, env)  # it waits, touching nothing
    finally:
        holder.communicate("\n", timeout=10)
    stdout, _ = second.communicate(timeout=120)
    assert second.returncode == 0, log.read_text()
    assert "Installed torch 2.15.0+cpu" in stdout
    assert installed(python, env)["torch"] == "2.15.0+cpu"


def test_a_lock_held_too_long_is_one_line_naming_the_file_and_its_holder(tmp_path: Path) -> None:
    holder = _holder(tmp_path)
    try:
        started = time.monotonic()
        with pytest.raises(InstallError) as info, env_lock(tmp_path, timeout=0.3):
            pass
        assert 0.3 <= time.monotonic() - started < 5
    finally:
        holder.communicate("\n", timeout=10)
    message = str(info.value)
    assert "\n" not in message
    assert message.startswith(f"{tmp_path / '.wheelfit.lock'} (this environment's install lock) has been held by ")
    assert f"process {holder.pid} (another wheelfit run) for 0.3 s; wait for that run to finish" in message
    with env_lock(tmp_path, timeout=1):  # released: taken at once
        pass


def test_a_holder_that_is_killed_frees_the_lock_at_once(tmp_path: Path) -> None:
    """The lock is the OS's on an open file, not the file's existence: nothing is left to remove by hand."""
    holder = _holder(tmp_path)
    os.kill(holder.pid, signal.SIGKILL)
    holder.communicate(timeout=10)
    assert (tmp_path / ".wheelfit.lock").exists()
    started = time.monotonic()
    with env_lock(tmp_path, timeout=5):
        assert time.monotonic() - started < 0.5
