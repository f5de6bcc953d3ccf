"""Recovery after `wheelfit install` was killed midway (SIGKILL: no chance to roll back): the next install puts back
what that install changed, and never undoes what someone else changed since (a `pip install` after the kill)
without being told to (``--recover restore`` or ``--recover keep``)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from functools import partial
from pathlib import Path

import pytest

from tests.support.hung import hung_server
from tests.support.wheels import make_wheel
from wheelfit.install.target_env import inspect_env
from wheelfit.install.transaction import Snapshot

from .conftest import Index, error_line, installed, make_venv, run_wheelfit, tree


def _install_args(index: Index, python: Path, *more: str) -> list[str]:
    return ["install", "torch", *more, "--target", "os=linux", "--python", str(python), "--pytorch-index",
            index.pytorch, "--index-url", index.default, "--no-verify"]  # fmt: skip


def _snapshots(prefix: Path) -> list[Path]:
    return sorted(prefix.glob(".wheelfit-rollback-*"))


def _pip_install(python: Path, env: dict[str, str], *args: str) -> None:
    """The user's own pip, into the same environment (the venv has none: this one's, pointed at it)."""
    argv = [sys.executable, "-m", "pip", "--python", str(python), "install", "--disable-pip-version-check", *args]
    done = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=120, check=False)
    assert done.returncode == 0, done.stderr


def _kill_midway(index: Index, env: dict[str, str], tmp_path: Path) -> Path:
    """A real `wheelfit install torch stallpkg` into a fresh venv, SIGKILLed (with its uv) once its snapshot is
    taken and uv is asking the default index, which never answers."""
    python = make_venv(tmp_path / "venv")
    prefix = tmp_path / "venv"
    log = (tmp_path / "killed.log").open("w")
    with hung_server() as hung, log:
        argv = [*_install_args(index, python, "stallpkg"), "--index-url", f"{hung.url}/simple"]
        proc = subprocess.Popen(
            [sys.executable, "-m", "wheelfit", *argv], env=env, stdout=log, stderr=log, start_new_session=True
        )
        try:
            deadline = time.monotonic() + 60
            while not list(prefix.glob(".wheelfit-rollback-*/snapshot.json")):
                assert proc.poll() is None, (tmp_path / "killed.log").read_text()
                assert time.monotonic() < deadline, "no snapshot was taken"
                time.sleep(0.02)
            assert hung.connected.wait(30)  # the installer is waiting on the default index
        finally:
            os.killpg(proc.pid, signal.SIGKILL)  # wheelfit and the uv it started, as a closed terminal or OOM would
            proc.wait()
    assert len(_snapshots(prefix)) == 1  # left behind: nothing could roll back
    return python


def test_a_package_installed_after_the_kill_is_never_silently_undone(
    index: Index, env: dict[str, str], tmp_path: Path
) -> None:
    index.put("default/simple", partial(make_wheel, name="laterpkg", version="1.0"))
    python = _kill_midway(index, env, tmp_path)
    prefix = tmp_path / "venv"
    _pip_install(python, env, "--index-url", index.default, "laterpkg")
    assert "laterpkg" in installed(python, env)
    before = tree(prefix)

    # A dry run says what a real install would do, and changes nothing.
    dry = run_wheelfit([*_install_args(index, python), "--dry-run", "--json"], env)
    assert dry.returncode == 0, dry.stderr
    (note,) = [n for n in json.loads(dry.stdout)["notes"] if "interrupted" in n]
    assert "changed since (laterpkg 1.0 installed)" in note and "--recover" in note

    # The install stops: one line naming the change and the two ways on, and nothing is touched.
    done = run_wheelfit(_install_args(index, python), env)
    assert done.returncode == 1, done.stderr
    line = error_line(done.stderr)
    assert "was interrupted, and the environment changed since in ways that install did not make" in line
    assert "(laterpkg 1.0 installed)" in line
    assert "--recover restore" in line and "--recover keep" in line
    assert tree(prefix) == before and len(_snapshots(prefix)) == 1

    # --recover keep: the environment as it is (laterpkg stays), the snapshot dropped, the install done.
    kept = run_wheelfit([*_install_args(index, python), "--recover", "keep"], env)
    assert kept.returncode == 0, kept.stderr
    now = installed(python, env)
    assert now["laterpkg"] == "1.0" and now["torch"] == "2.15.0+cpu"
    assert _snapshots(prefix) == []
    assert not list(prefix.rglob(".wheelfit-rollback-*"))  # nor its links inside site-packages and bin


def test_recover_restore_puts_back_the_state_before_the_killed_install_as_asked(
    index: Index, env: dict[str, str], tmp_path: Path
) -> None:
    index.put("default/simple", partial(make_wheel, name="laterpkg", version="1.0"))
    python = _kill_midway(index, env, tmp_path)
    prefix = tmp_path / "venv"
    _pip_install(python, env, "--index-url", index.default, "laterpkg")
    done = run_wheelfit([*_install_args(index, python), "--recover", "restore", "--json"], env)
    assert done.returncode == 0, done.stderr
    assert any("first put back as it was before it" in n for n in json.loads(done.stdout)["notes"])
    now = installed(python, env)
    assert "laterpkg" not in now and now["torch"] == "2.15.0+cpu"
    assert _snapshots(prefix) == []


def test_what_the_killed_install_did_itself_is_undone_dependencies_included(
    index: Index, env: dict[str, str], tmp_path: Path
) -> None:
    """The killed install got as far as torch and its dependency smallnum (done here by pip, as uv would have):
    both are its own changes (smallnum by torch's new METADATA), so the next install restores without asking."""
    python = make_venv(tmp_path / "venv")
    prefix = tmp_path / "venv"
    target = inspect_env(str(python), env)
    before = tree(prefix)
    Snapshot(target.install_dirs, prefix / ".wheelfit-rollback-999999", installing=["torch"])
    _pip_install(python, env, "--index-url", f"{index.pytorch}/cpu", "--extra-index-url", index.default,
                 "torch==2.15.0+cpu")  # fmt: skip
    assert set(installed(python, env)) == {"torch", "smallnum"}

    dry = run_wheelfit([*_install_args(index, python), "--dry-run", "--json"], env)
    notes = json.loads(dry.stdout)["notes"]
    assert any("a real install first puts the environment back as it was before it" in n for n in notes), notes
    assert tree(prefix) != before  # a dry run changes nothing

    # The pip-installed torch is removed (restored away), then installed again by the install proper.
    done = run_wheelfit([*_install_args(index, python), "--json"], env)
    assert done.returncode == 0, done.stderr
    assert any("first put back as it was before it" in n for n in json.loads(done.stdout)["notes"])
    assert installed(python, env) == {"torch": "2.15.0+cpu", "smallnum": "1.0"}
    assert any(i.startswith("torch") for i in json.loads(done.stdout)["installs"])  # afresh, not left from pip
    assert _snapshots(prefix) == []


@pytest.mark.parametrize("value", ["undo", "RESTORE"])
def test_an_unknown_recover_value_is_a_usage_error(
    index: Index, env: dict[str, str], tmp_path: Path, value: str
) -> None:
    python = make_venv(tmp_path / "venv")
    done = run_wheelfit([*_install_args(index, python), "--recover", value], env)
    assert done.returncode == 2
    assert error_line(done.stderr) == f"wheelfit: error: --recover {value}: use restore or keep"


_HOLD_LOCK = """
import fcntl, pathlib, time
f = open({lock!r}, "a+b")
fcntl.flock(f, fcntl.LOCK_EX)
pathlib.Path({ready!r}).touch()
while not pathlib.Path({release!r}).exists():
    time.sleep(0.02)
pathlib.Path({released!r}).touch()
"""


def test_recovery_waits_for_a_backend_that_outlived_the_killed_wheelfit(
    index: Index, env: dict[str, str], tmp_path: Path
) -> None:
    """wheelfit SIGKILLed while its uv keeps running (uv holds ``<venv>/.lock`` while it installs): the next
    install restores nothing until that uv is done, so no file of the old state is put back under a running
    installer. The still-running uv is stood in for by a process holding uv's lock (as uv does, with flock)."""
    python = make_venv(tmp_path / "venv")
    prefix = tmp_path / "venv"
    target = inspect_env(str(python), env)
    Snapshot(target.install_dirs, prefix / ".wheelfit-rollback-999999", installing=["torch"])
    ready, release = tmp_path / "held", tmp_path / "release"
    holder = subprocess.Popen(
        [sys.executable, "-c", _HOLD_LOCK.format(lock=str(prefix / ".lock"), ready=str(ready),
                                                  release=str(release), released=str(tmp_path / "released"))]
    )  # fmt: skip
    try:
        while not ready.exists():
            assert holder.poll() is None
            time.sleep(0.02)
        run = subprocess.Popen(
            [sys.executable, "-m", "wheelfit", *_install_args(index, python), "--json"],
            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        # While "uv" holds its lock, the snapshot stays untouched: recovery has not begun
        for _ in range(50):
            assert run.poll() is None
            assert _snapshots(prefix) == [prefix / ".wheelfit-rollback-999999"]
            time.sleep(0.02)
        release.touch()
        out, err = run.communicate(timeout=120)
    finally:
        release.touch()
        holder.wait(timeout=30)
    assert run.returncode == 0, err
    assert (tmp_path / "released").exists()
    assert any("first put back as it was before it" in n for n in json.loads(out)["notes"])
    assert _snapshots(prefix) == []


def _tampered_snapshot(index: Index, env: dict[str, str], tmp_path: Path) -> tuple[Path, Path, Path]:
    """A venv with an interrupted install's snapshot whose manifest can then be edited; and a directory outside."""
    python = make_venv(tmp_path / "venv")
    prefix = tmp_path / "venv"
    target = inspect_env(str(python), env)
    Snapshot(target.install_dirs, prefix / ".wheelfit-rollback-999999", installing=["torch"])
    outside = tmp_path / "home"
    outside.mkdir()
    (outside / "precious.txt").write_text("the user's\n")
    return python, prefix / ".wheelfit-rollback-999999" / "snapshot.json", outside


def test_a_manifest_naming_a_directory_outside_is_refused_and_kept_and_nothing_is_deleted(
    index: Index, env: dict[str, str], tmp_path: Path
) -> None:
    python, manifest, outside = _tampered_snapshot(index, env, tmp_path)
    data = json.loads(manifest.read_text())
    data["dirs"][0]["copy"] = str(outside)  # --recover keep would rmtree the "copy"
    manifest.write_text(json.dumps(data))
    done = run_wheelfit([*_install_args(index, python), "--recover", "keep"], env)
    assert done.returncode == 1
    line = error_line(done.stderr)
    assert f"the rollback snapshot {manifest} cannot be trusted (copy " in line and "it was kept" in line
    assert (outside / "precious.txt").read_text() == "the user's\n"
    assert manifest.exists()


def test_a_manifest_entry_that_climbs_out_is_refused_and_no_link_is_made_outside(
    index: Index, env: dict[str, str], tmp_path: Path
) -> None:
    python, manifest, outside = _tampered_snapshot(index, env, tmp_path)
    data = json.loads(manifest.read_text())
    data["dirs"][0]["entries"]["../../../../home/evil"] = ["l", "/etc/passwd"]
    manifest.write_text(json.dumps(data))
    done = run_wheelfit([*_install_args(index, python), "--recover", "restore"], env)
    assert done.returncode == 1
    assert "leaves its directory" in error_line(done.stderr)
    assert not os.path.lexists(outside / "evil")
    assert manifest.exists()


def test_a_manifest_cut_in_half_is_refused_and_kept_when_restore_is_asked(
    index: Index, env: dict[str, str], tmp_path: Path
) -> None:
    python, manifest, _outside = _tampered_snapshot(index, env, tmp_path)
    text = manifest.read_text()
    manifest.write_text(text[: len(text) // 2])
    done = run_wheelfit([*_install_args(index, python), "--recover", "restore"], env)
    assert done.returncode == 1
    assert "cannot be trusted" in error_line(done.stderr)
    assert manifest.read_text() == text[: len(text) // 2]
