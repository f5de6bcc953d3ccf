"""A failed install leaves the environment exactly as it was, and says why in one line."""

from __future__ import annotations

import json
import shutil
import zipfile
from functools import partial
from pathlib import Path

import pytest

from tests.support.wheels import make_torch_like, make_wheel
from wheelfit.install.errors import InstallError
from wheelfit.install.target_env import inspect_env
from wheelfit.install.transaction import Snapshot

from .conftest import Index, error_line, installed, make_venv, run_wheelfit, tree

RTX_4090 = "cuda=8.9,driver=580.95.05"


def _install(index: Index, python: Path, env: dict[str, str], *args: str) -> tuple[int, str]:
    argv = ["install", *args, "--python", str(python), "--pytorch-index", index.pytorch, "--index-url", index.default]
    done = run_wheelfit(argv, env)
    return done.returncode, done.stderr


@pytest.fixture
def venv_with_cpu_torch(index: Index, env: dict[str, str], tmp_path: Path) -> Path:
    python = make_venv(tmp_path / "venv")
    code, err = _install(index, python, env, "torch", "--target", "os=linux")
    assert code == 0, err
    return python


def test_failure_midway_through_the_installer_is_rolled_back(
    index: Index, env: dict[str, str], venv_with_cpu_torch: Path, tmp_path: Path
) -> None:
    """``clash-b`` installs ``clash/data/x.py`` where ``clash-a`` put a file named ``clash/data``: the installer
    fails after it has already replaced torch and installed other packages."""
    index.put("default/simple", partial(make_wheel, name="clash-a", version="1.0", files={"clash/data": "a file"}))
    index.put(
        "default/simple",
        partial(make_wheel, name="clash-b", version="1.0", requires=["clash-a"], files={"clash/data/x.py": ""}),
    )
    python = venv_with_cpu_torch
    before_pkgs, before_tree = installed(python, env), tree(tmp_path / "venv")
    code, err = _install(index, python, env, "torch", "clash-b", "--target", RTX_4090)
    assert code == 1
    assert "the environment was left as it was" in error_line(err)
    assert installed(python, env) == before_pkgs
    assert before_pkgs["torch"] == "2.15.0+cpu"
    assert tree(tmp_path / "venv") == before_tree
    assert not list((tmp_path / "venv").glob(".wheelfit-rollback-*"))


def test_a_path_traversal_member_never_lands_outside_the_environment(
    index: Index, env: dict[str, str], venv_with_cpu_torch: Path, tmp_path: Path
) -> None:
    def evil_torch(directory: Path) -> Path:
        wheel = make_torch_like(directory, "2.15.0", "xpu", requires=["pytorch-triton-xpu==3.6.0"])
        with zipfile.ZipFile(wheel, "a") as zf:
            zf.writestr("../../evil", "owned\n")
        return wheel

    hostile = index.put("hostile/xpu", evil_torch)
    index.put("hostile/xpu", partial(make_wheel, name="pytorch-triton-xpu", version="3.6.0"))
    python = venv_with_cpu_torch
    argv = ["install", "torch", "--target", "xpu=bmg", "--python", str(python), "--no-verify"]
    done = run_wheelfit([*argv, "--pytorch-index", f"{index.url}/hostile", "--index-url", index.default], env)
    # uv (the backend that unpacks it) skips a member whose path is not enclosed in the wheel: never written
    assert done.returncode == 0, done.stderr
    assert installed(python, env)["torch"] == "2.15.0+xpu"
    assert hostile.name not in done.stderr
    for place in (tmp_path, tmp_path / "venv", tmp_path / "venv" / "lib", *tmp_path.parents[:2]):
        assert not (place / "evil").exists()


def test_torch_family_dependency_missing_from_the_variant_index(
    index: Index, env: dict[str, str], venv_with_cpu_torch: Path, tmp_path: Path
) -> None:
    """The variant index has torch but not the triton it needs; the default index's triton 99.0 is no substitute."""
    index.put("gappy/cu130", partial(make_torch_like, version="2.15.0", variant="cu130", requires=["triton==3.6.0"]))
    python = venv_with_cpu_torch
    before_pkgs, before_tree = installed(python, env), tree(tmp_path / "venv")
    argv = ["install", "torch", "--target", RTX_4090, "--python", str(python)]
    done = run_wheelfit([*argv, "--pytorch-index", f"{index.url}/gappy", "--index-url", index.default], env)
    assert done.returncode == 1
    line = error_line(done.stderr)
    assert "triton==3.6.0 (needed by torch 2.15.0+cu130)" in line
    assert f"{index.url}/gappy/cu130" in line
    assert installed(python, env) == before_pkgs
    assert tree(tmp_path / "venv") == before_tree


def test_an_environment_wheelfit_cannot_write_to_is_one_line_and_untouched(
    index: Index, env: dict[str, str], tmp_path: Path
) -> None:
    python = make_venv(tmp_path / "venv")
    (tmp_path / "venv" / ".wheelfit.lock").mkdir()  # the lock file cannot be created there
    before = tree(tmp_path / "venv")
    code, err = _install(index, python, env, "torch", "--target", RTX_4090)
    assert code == 1
    assert "cannot create the lock file" in error_line(err) and "nothing was installed" in err
    assert tree(tmp_path / "venv") == before


def test_a_snapshot_that_cannot_be_taken_is_an_install_error_and_leaves_nothing_behind(tmp_path: Path) -> None:
    site = tmp_path / "site-packages"
    (site / "pkg").mkdir(parents=True)
    (site / "pkg" / "__init__.py").write_text("")
    blocker = tmp_path / "prefix"
    blocker.write_text("a file where the environment's prefix should be")
    with pytest.raises(InstallError, match="cannot take the rollback snapshot") as info:
        Snapshot([site], blocker / ".wheelfit-rollback-1")
    assert "\n" not in str(info.value)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["prefix", "site-packages"]


def test_an_unreadable_requirement_is_one_line(index: Index, env: dict[str, str], tmp_path: Path) -> None:
    python = make_venv(tmp_path / "venv")
    code, err = _install(index, python, env, "torch>=", "--target", RTX_4090)
    assert code == 2
    assert "cannot read the requirement 'torch>='" in error_line(err)


def test_an_install_killed_midway_is_undone_before_the_next_one(
    index: Index, env: dict[str, str], venv_with_cpu_torch: Path, tmp_path: Path
) -> None:
    """A SIGKILL gives no chance to roll back: the snapshot stays, and the next install restores it first."""
    python = venv_with_cpu_torch
    prefix = tmp_path / "venv"
    target = inspect_env(str(python), env)
    before = tree(prefix)
    Snapshot(target.install_dirs, prefix / ".wheelfit-rollback-999999")  # taken by the run that was killed
    site = Path(target.install_dirs[0])
    (site / "half_installed.py").write_text("# written by the installer before it was killed\n")
    shutil.rmtree(site / "torch")  # and the old torch already removed

    dry = run_wheelfit(["install", "torch", "--target", "os=linux", "--python", str(python), "--dry-run", "--json",
                        "--pytorch-index", index.pytorch, "--index-url", index.default], env)  # fmt: skip
    assert dry.returncode == 0, dry.stderr
    assert any("was interrupted" in n for n in json.loads(dry.stdout)["notes"])
    assert (site / "half_installed.py").exists()  # a dry run changes nothing, not even this

    code, err = _install(index, python, env, "torch", "--target", "os=linux", "--no-verify")
    assert code == 0, err
    assert not (site / "half_installed.py").exists()
    assert not list(prefix.glob(".wheelfit-rollback-*"))
    assert tree(prefix) == before  # put back, then the same plan found nothing to change
    assert installed(python, env)["torch"] == "2.15.0+cpu"


def test_a_snapshot_cut_short_is_deleted_and_one_of_other_directories_is_refused(
    index: Index, env: dict[str, str], tmp_path: Path
) -> None:
    python = make_venv(tmp_path / "venv")
    prefix = tmp_path / "venv"
    (prefix / ".wheelfit-rollback-1").mkdir()  # no manifest: killed while the snapshot was being taken
    code, err = _install(index, python, env, "torch", "--target", "os=linux", "--no-verify")
    assert code == 0, err
    assert not list(prefix.glob(".wheelfit-rollback-*"))
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    Snapshot([elsewhere], prefix / ".wheelfit-rollback-2")
    before = tree(prefix)
    code, err = _install(index, python, env, "torch", "--target", "os=linux", "--no-verify")
    assert code == 1
    assert "a rollback snapshot of other directories" in error_line(err)
    assert elsewhere.is_dir() and tree(prefix) == before


def test_a_trust_store_that_cannot_be_loaded_is_one_line_and_untouched(
    index: Index, env: dict[str, str], tmp_path: Path
) -> None:
    """A mistyped SSL_CERT_FILE was an internal error from inside httpx."""
    python = make_venv(tmp_path / "venv")
    before = tree(tmp_path / "venv")
    missing = tmp_path / "corporate-ca.pem"
    code, err = _install(index, python, {**env, "SSL_CERT_FILE": str(missing)}, "torch", "--target", RTX_4090)
    assert code == 1
    assert error_line(err) == (
        f"wheelfit: error: cannot load the TLS trust store from SSL_CERT_FILE={missing} (No such file or directory); "
        "point it at a PEM file of CA certificates or unset it"
    )
    assert tree(tmp_path / "venv") == before
