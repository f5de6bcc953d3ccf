"""Rolling back a failed install works file by file inside the protected directories, never by renaming them: on
a site-packages that is a mount point (EBUSY to rename), on a disk that fills up midway, and when the rollback
itself cannot finish (it says what is left, exits 1, and the next run finishes it)."""

from __future__ import annotations

import os
from functools import partial
from pathlib import Path

import pytest

from tests.support.hung import hung_server
from tests.support.running import Running
from tests.support.wheels import make_wheel
from wheelfit.install.target_env import inspect_env
from wheelfit.install.transaction import Snapshot

from .conftest import Index, env_paths, error_line, import_torch, installed, make_venv, run_wheelfit, tree
from .mounts import remount, site_packages, tmpfs

RTX_4090 = "cuda=8.9,driver=580.95.05"


def _install(index: Index, python: Path, env: dict[str, str], *args: str) -> tuple[int, str]:
    argv = ["install", *args, "--python", str(python), "--no-verify"]
    if "--pytorch-index" not in args:
        argv += ["--pytorch-index", index.pytorch]
    done = run_wheelfit([*argv, "--index-url", index.default], env)
    return done.returncode, done.stderr


def _clashing(index: Index) -> None:
    """``rb-clash-b`` installs ``rbclash/data/x.py`` where ``rb-clash-a`` put a file named ``rbclash/data``: the
    installer fails after it has already replaced torch and installed other packages."""
    index.put("default/simple", partial(make_wheel, name="rb-clash-a", version="1.0", files={"rbclash/data": "a"}))
    index.put(
        "default/simple",
        partial(make_wheel, name="rb-clash-b", version="1.0", requires=["rb-clash-a"],
                files={"rbclash/data/x.py": ""}),
    )  # fmt: skip


def _inodes(directory: Path) -> dict[str, int]:
    return {str(p.relative_to(directory)): p.lstat().st_ino for p in env_paths(directory)}


def _junk(prefix: Path) -> list[Path]:
    """What a rollback must not leave: snapshots, their links, half-copied files."""
    return [p for p in prefix.rglob("*") if ".wheelfit-rollback-" in p.name or p.name.endswith(".wheelfit-restore")]


def test_a_failed_install_is_undone_in_place_every_directory_and_file_keeping_its_inode(
    index: Index, env: dict[str, str], tmp_path: Path
) -> None:
    """No mount needed: renaming site-packages away and the snapshot in its place gave it a new inode; a rollback
    inside it keeps the directory, and links each replaced file back (the very same inode)."""
    _clashing(index)
    prefix = tmp_path / "venv"
    python = make_venv(prefix)
    code, err = _install(index, python, env, "torch", "--target", RTX_4090)  # the build the failing install keeps
    assert code == 0, err
    site, scripts = site_packages(prefix), prefix / "bin"
    dirs = {d: os.stat(d).st_ino for d in (site, scripts)}
    before_tree, before_inodes, before_pkgs = tree(prefix), _inodes(prefix), installed(python, env)

    code, err = _install(index, python, env, "torch", "rb-clash-b", "--target", RTX_4090)
    assert code == 1
    assert "the environment was left as it was" in error_line(err)
    assert {d: os.stat(d).st_ino for d in dirs} == dirs
    assert tree(prefix) == before_tree  # byte for byte
    assert _inodes(prefix) == before_inodes
    assert installed(python, env) == before_pkgs
    assert _junk(prefix) == []


def test_site_packages_on_its_own_volume_is_rolled_back_without_renaming_the_mount_point(
    index: Index, env: dict[str, str], tmp_path: Path
) -> None:
    """A container volume or tmpfs mounted at site-packages: renaming it fails with EBUSY (was exit 70)."""
    _clashing(index)
    prefix = tmp_path / "venv"
    python = make_venv(prefix)
    with tmpfs(site_packages(prefix), "64m") as site:
        code, err = _install(index, python, env, "torch", "--target", "os=linux")
        assert code == 0, err
        before_tree, before_pkgs, inode = tree(prefix), installed(python, env), os.stat(site).st_ino

        code, err = _install(index, python, env, "torch", "rb-clash-b", "--target", RTX_4090)
        assert code == 1, err
        assert "the environment was left as it was" in error_line(err)
        assert os.path.ismount(site) and os.stat(site).st_ino == inode
        assert tree(prefix) == before_tree
        assert installed(python, env) == before_pkgs
        assert import_torch(python, env) == ["2.15.0+cpu", "None", "None"]
        assert _junk(prefix) == []


def test_a_disk_that_fills_up_midway_leaves_the_previous_torch_whole(
    index: Index, env: dict[str, str], tmp_path: Path
) -> None:
    """site-packages is a 1 MB tmpfs; the new torch carries 3 MB: the installer fails with ENOSPC after it has
    begun replacing torch. The old torch is back, importable, every file there, and pip's view agrees."""

    def big_torch(directory: Path) -> Path:
        files: dict[str, str | bytes] = {
            "torch/__init__.py": '__version__ = "2.15.0+cu130"\n',
            "torch/blob.bin": os.urandom(3_000_000),
        }
        return make_wheel(directory, "torch", "2.15.0+cu130", requires=["smallnum>=1.0"], files=files)

    index.put("diskfull/cu130", big_torch)
    prefix = tmp_path / "venv"
    python = make_venv(prefix)
    with tmpfs(site_packages(prefix), "1m") as site:
        code, err = _install(index, python, env, "torch", "--target", "os=linux")
        assert code == 0, err
        before_tree, before_pkgs = tree(prefix), installed(python, env)

        code, err = _install(index, python, env, "torch", "--target", RTX_4090, "--pytorch-index",
                             f"{index.url}/diskfull")  # fmt: skip
        assert code == 1, err
        line = error_line(err)
        assert "No space left on device" in line or "os error 28" in line, line
        assert "the environment was left as it was" in line
        assert tree(prefix) == before_tree
        assert installed(python, env) == before_pkgs
        assert import_torch(python, env) == ["2.15.0+cpu", "None", "None"]
        assert _junk(prefix) == []
        assert os.path.ismount(site)


def test_a_rollback_that_cannot_finish_says_what_is_left_exits_1_and_the_next_run_finishes_it(
    index: Index, env: dict[str, str], tmp_path: Path
) -> None:
    """An install killed midway left its snapshot; site-packages is read-only when the next run comes (a
    read-only bind mount, a volume remounted read-only). The rollback names what it could not put back and whose
    it is, keeps the snapshot and says what to do; once the cause is gone, the next run finishes it."""
    prefix = tmp_path / "venv"
    python = make_venv(prefix)
    with tmpfs(site_packages(prefix), "64m") as site:
        code, err = _install(index, python, env, "torch", "--target", "os=linux")
        assert code == 0, err
        before = tree(prefix)
        target = inspect_env(str(python), env)
        Snapshot(target.install_dirs, prefix / ".wheelfit-rollback-999999", installing=["torch"])
        for path in sorted((site / "torch").iterdir()):  # the killed install had removed the old torch's files
            path.unlink()
        for i in range(8):  # and written some of the new one's
            (site / "torch" / f"new_{i}.py").write_text("# half-installed\n")

        remount(site, "ro")
        try:
            done = run_wheelfit(["install", "torch", "--target", "os=linux", "--python", str(python), "--no-verify",
                                 "--pytorch-index", index.pytorch, "--index-url", index.default], env)  # fmt: skip
        finally:
            remount(site, "rw")
        assert done.returncode == 1, done.stderr
        line = error_line(done.stderr)
        assert "internal error" not in line
        assert "an earlier wheelfit install into" in line and "the rollback could not put back" in line
        assert "(Read-only file system)" in line and " more; " in line  # a few paths, then the count
        assert "torch 2.15.0+cpu may be incomplete or mixed" in line
        assert "is kept in" in line and "run wheelfit install again" in line and "--recover keep" in line
        assert list(prefix.glob(".wheelfit-rollback-999999/snapshot.json"))  # kept for the next run

        again = run_wheelfit(["install", "torch", "--target", "os=linux", "--python", str(python), "--no-verify",
                              "--pytorch-index", index.pytorch, "--index-url", index.default], env)  # fmt: skip
        assert again.returncode == 0, again.stderr
        assert tree(prefix) == before
        assert import_torch(python, env) == ["2.15.0+cpu", "None", "None"]
        assert _junk(prefix) == []


def test_an_install_whose_own_rollback_cannot_finish_exits_1_saying_what_is_left(
    index: Index, env: dict[str, str], tmp_path: Path
) -> None:
    """Ctrl-C while the installer runs (it waits on a hung index), after it wrote into site-packages (done here
    by the test) and site-packages became read-only: the rollback fails part-way. One line, exit 1 (never 70),
    the snapshot kept; the next run, once site-packages is writable, finishes it."""
    prefix = tmp_path / "venv"
    python = make_venv(prefix)
    with tmpfs(site_packages(prefix), "64m") as site, hung_server() as hung:
        args = ["install", "torch", "stallpkg", "--target", "os=linux", "--python", str(python), "--no-verify",
                "--pytorch-index", index.pytorch, "--index-url", f"{hung.url}/simple"]  # fmt: skip
        run = Running(args, env)
        run.wait_until(
            lambda: bool(list(prefix.glob(".wheelfit-rollback-*/snapshot.json"))) and hung.connected.is_set()
        )
        for i in range(7):  # what the installer wrote before it was stopped
            (site / f"half_{i}.py").write_text("# half-installed\n")
        remount(site, "ro")
        try:
            run.interrupt()
        finally:
            remount(site, "rw")
        assert run.proc.returncode == 1, run.lines
        (line,) = [ln for ln in run.lines if ln.startswith("wheelfit: ")]
        assert line.startswith("wheelfit: error: the uv install was interrupted, and the rollback could not put back "
                               "7 path(s) (Read-only file system): "), line  # fmt: skip
        assert " and 2 more. The state before the install is kept in " in line and "--recover keep" in line
        assert list(prefix.glob(".wheelfit-rollback-*/snapshot.json"))

        again = run_wheelfit(["install", "torch", "--target", "os=linux", "--python", str(python), "--no-verify",
                              "--pytorch-index", index.pytorch, "--index-url", index.default], env)  # fmt: skip
        assert again.returncode == 0, again.stderr
        assert "the environment was first put back as it was before it" in again.stdout
        assert not list(site.glob("half_*")) and _junk(prefix) == []
        assert installed(python, env) == {"torch": "2.15.0+cpu", "smallnum": "1.0"}


@pytest.mark.parametrize("layout", ["lib64 link", "plain"])
def test_a_directory_named_twice_is_restored_once(tmp_path: Path, layout: str) -> None:
    """Fedora's venvs name site-packages twice (purelib under lib, platlib under lib64, a link to lib)."""
    lib = tmp_path / "lib" / "site-packages"
    (lib / "pkg").mkdir(parents=True)
    (lib / "pkg" / "__init__.py").write_text("old\n")
    other = tmp_path / "lib64"
    if layout == "lib64 link":
        other.symlink_to(tmp_path / "lib")
    else:
        (other / "site-packages").mkdir(parents=True)
    dirs = [lib, other / "site-packages"]
    before = {p: p.read_bytes() for p in lib.rglob("*") if p.is_file()}
    snapshot = Snapshot(dirs, tmp_path / ".wheelfit-rollback-1")
    (lib / "pkg" / "__init__.py").unlink()
    (lib / "pkg" / "__init__.py").write_text("new\n")
    (lib / "added.py").write_text("")
    snapshot.restore()
    assert {p: p.read_bytes() for p in lib.rglob("*") if p.is_file()} == before
    assert not list(tmp_path.rglob(".wheelfit-rollback-*"))
