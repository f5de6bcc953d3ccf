"""wheelfit install end to end with uv: a loopback PyTorch-style index, a default index holding squatted
higher versions of torch-family names, and real virtual environments."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import Index, env_paths, error_line, import_torch, installed, make_venv, run_wheelfit, tree
from .loopback import serve

GTX_1080 = "cuda=6.1,driver=580.95.05"


def test_installs_the_planned_variant_and_never_the_squatted_versions(
    index: Index, env: dict[str, str], tmp_path: Path
) -> None:
    python = make_venv(tmp_path / "venv")
    args = ["install", "torch", "torchvision", "--target", GTX_1080, "--python", str(python)]
    args += ["--pytorch-index", index.pytorch, "--index-url", index.default, "--json"]
    done = run_wheelfit(args, env)
    assert done.returncode == 0, done.stderr
    have = installed(python, env)
    # sm_61 has kernels only in cu126 builds (pytorch/pytorch .ci/manywheel/build_cuda.sh), which end at torch 2.14
    # (pytorch/test-infra#8739); the default index's 99.0 copies of torch, torchvision and triton are higher and
    # must never win.
    assert have["torch"] == "2.14.1+cu126"
    assert have["torchvision"] == "0.29.1+cu126"
    assert have["triton"] == "3.5.1"
    assert have["smallnum"] == "1.0"  # an ordinary dependency still comes from the default index
    assert import_torch(python, env) == ["2.14.1+cu126", "12.6", "None"]
    report = json.loads(done.stdout)
    assert {w["name"]: w["url"].split("/pytorch/")[1] for w in report["torch_family"]} == {
        "torch": "cu126/torch/torch-2.14.1+cu126-py3-none-any.whl",
        "torchvision": "cu126/torchvision/torchvision-0.29.1+cu126-py3-none-any.whl",
        "triton": "cu126/triton/triton-3.5.1-py3-none-any.whl",
    }
    assert report["verify"]["ok"] is True

    check = run_wheelfit(
        ["verify", "--python", str(python), "--target", GTX_1080, "--pytorch-index", index.pytorch], env
    )
    assert check.returncode == 0, check.stdout + check.stderr
    assert "torch.version.cuda = 12.6" in check.stdout
    assert "no GPU is visible" in check.stdout


def test_verify_judges_the_build_by_what_runs_not_by_the_plan(
    index: Index, env: dict[str, str], tmp_path: Path
) -> None:
    python = make_venv(tmp_path / "venv")
    args = ["install", "torch", "--target", GTX_1080, "--python", str(python)]
    done = run_wheelfit([*args, "--pytorch-index", index.pytorch, "--index-url", index.default], env)
    assert done.returncode == 0, done.stderr
    # On an RTX 4090 the plan is cu130, but the cu126 build runs there too (sm_86 kernels run on sm_89): it passes,
    # and says it is not the planned build.
    check = run_wheelfit(["verify", "--python", str(python), "--target", "cuda=8.9,driver=580.95.05", "--json"], env)
    assert check.returncode == 0, check.stdout
    result = json.loads(check.stdout)
    assert (result["ok"], result["planned"], result["plan_build"]) == (True, False, "2.14.1+cu130")
    # A driver below every CUDA 12 floor (525.60.13, minor-version compatibility included) fails, naming it.
    old = run_wheelfit(["verify", "--python", str(python), "--target", "cuda=8.9,driver=520.61.05", "--json"], env)
    assert old.returncode == 1, old.stdout
    failed = {c["name"]: c["detail"] for c in json.loads(old.stdout)["checks"] if c["ok"] is False}
    assert "525.60.13" in failed["driver"], failed


def test_torch_family_dependency_of_a_default_index_package_is_refused(
    index: Index, env: dict[str, str], tmp_path: Path
) -> None:
    """``needstriton`` (default index) depends on ``triton``: with the cpu plan no triton is fetched from the
    variant index, so the only triton around is the default index's 99.0, which must not be installed."""
    python = make_venv(tmp_path / "venv")
    before = installed(python, env)
    args = ["install", "torch", "needstriton", "--target", "os=linux", "--python", str(python)]
    done = run_wheelfit([*args, "--pytorch-index", index.pytorch, "--index-url", index.default], env)
    assert done.returncode == 1
    assert "triton" in done.stderr and "torch-family" in done.stderr
    error_line(done.stderr)
    assert installed(python, env) == before


def test_rocm_build_takes_pytorch_triton_rocm_from_the_variant_index(
    index: Index, env: dict[str, str], tmp_path: Path
) -> None:
    python = make_venv(tmp_path / "venv")
    args = ["install", "torch", "--target", "rocm=gfx942", "--python", str(python), "--json"]
    done = run_wheelfit([*args, "--pytorch-index", index.pytorch, "--index-url", index.default], env)
    assert done.returncode == 0, done.stderr
    have = installed(python, env)
    assert have["torch"].endswith("+" + json.loads(done.stdout)["plan"]["variant"])
    assert have["pytorch-triton-rocm"] == "3.6.0"  # the default index has 99.0
    assert import_torch(python, env)[2].startswith("7.")


def test_dry_run_says_what_and_changes_nothing(index: Index, env: dict[str, str], tmp_path: Path) -> None:
    python = make_venv(tmp_path / "venv")
    before = tree(tmp_path / "venv")
    args = ["install", "torch", "torchvision", "--target", GTX_1080, "--python", str(python), "--dry-run", "--json"]
    done = run_wheelfit([*args, "--pytorch-index", index.pytorch, "--index-url", index.default], env)
    assert done.returncode == 0, done.stderr
    assert tree(tmp_path / "venv") == before
    report = json.loads(done.stdout)
    assert report["dry_run"] is True
    assert sorted(w["name"] for w in report["torch_family"]) == ["torch", "torchvision", "triton"]
    assert "smallnum==1.0" in report["installs"]
    # uv names a not-yet-cached file wheel by its URL and a cached one by its version: either names the build.
    assert any(i.startswith("torch") and "2.14.1+cu126" in i for i in report["installs"])


def test_the_backend_downloads_each_wheel_once_and_wheelfit_none(
    index: Index, env: dict[str, str], tmp_path: Path
) -> None:
    """wheelfit reads the PEP 658 metadata and hands uv the URL with its sha256: the torch wheel is downloaded
    once, by uv, and a second environment takes it from uv's cache."""
    env = {**env, "WHEELFIT_CACHE_DIR": str(tmp_path / "cache"), "UV_CACHE_DIR": str(tmp_path / "uv")}
    log: list[tuple[str, dict[str, str]]] = []
    with serve(index.root, request_log=log) as url:
        args = ["install", "torch", "--target", GTX_1080, "--pytorch-index", f"{url}/pytorch"]
        args += ["--index-url", f"{url}/default/simple", "--no-verify"]
        first = run_wheelfit([*args, "--python", str(make_venv(tmp_path / "one"))], env)
        assert first.returncode == 0, first.stderr
        assert "Installed torch 2.14.1+cu126" in first.stdout
        second = run_wheelfit([*args, "--python", str(make_venv(tmp_path / "two"))], env)
        assert second.returncode == 0, second.stderr
        quiet = run_wheelfit([*args, "--python", str(make_venv(tmp_path / "three")), "--json"], env)
    assert quiet.returncode == 0 and quiet.stderr == ""
    wheel = "torch-2.14.1+cu126-py3-none-any.whl"
    paths = [path for path, _headers in log]
    # uv reads a URL wheel's METADATA with a range request (as from a CDN), then downloads it once
    whole = [path for path, headers in log if path.endswith(wheel) and "range" not in headers]
    assert whole == [f"/pytorch/cu126/torch/{wheel}"]
    assert f"/pytorch/cu126/torch/{wheel}.metadata" in paths  # wheelfit's own read
    assert not (tmp_path / "cache" / "by-sha256").exists()


def test_offline_install_from_the_caches_with_no_network_at_all(
    index: Index, env: dict[str, str], tmp_path: Path
) -> None:
    unshare = shutil.which("unshare")
    if unshare is None or subprocess.run([unshare, "-n", "true"], capture_output=True).returncode != 0:
        pytest.skip("cannot create a network namespace here (needs util-linux unshare and root)")
    env = {**env, "WHEELFIT_CACHE_DIR": str(tmp_path / "cache"), "UV_CACHE_DIR": str(tmp_path / "uv")}
    args = ["install", "torch", "--target", GTX_1080, "--pytorch-index", index.pytorch, "--index-url", index.default]
    online = run_wheelfit([*args, "--python", str(make_venv(tmp_path / "one")), "--no-verify"], env)
    assert online.returncode == 0, online.stderr
    python = make_venv(tmp_path / "two")
    argv = [unshare, "-n", sys.executable, "-m", "wheelfit", *args, "--python", str(python), "--offline", "--json"]
    offline = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=120, check=False)
    assert offline.returncode == 0, offline.stderr
    assert installed(python, env)["torch"] == "2.14.1+cu126"
    assert json.loads(offline.stdout)["verify"]["ok"] is True
    # With empty caches there is nothing to install from: one line that says so, and the environment is as it was.
    empty = {**env, "WHEELFIT_CACHE_DIR": str(tmp_path / "empty"), "UV_CACHE_DIR": str(tmp_path / "uv-empty")}
    python3 = make_venv(tmp_path / "three")
    before = tree(tmp_path / "three")
    argv = [unshare, "-n", sys.executable, "-m", "wheelfit", *args, "--python", str(python3), "--offline"]
    failed = subprocess.run(argv, capture_output=True, text=True, env=empty, timeout=120, check=False)
    assert failed.returncode != 0
    assert "offline" in error_line(failed.stderr).lower()
    assert tree(tmp_path / "three") == before


def _inodes(directory: Path) -> dict[str, tuple[int, int, int]]:
    """Every path's inode, change time and modification time: a rollback snapshot links each file of the
    environment and unlinks it again, which changes its change time though not its bytes."""
    return {
        str(p.relative_to(directory)): (st.st_ino, st.st_ctime_ns, st.st_mtime_ns)
        for p in env_paths(directory)
        for st in [p.lstat()]
    }


@pytest.mark.parametrize("installer", ["uv", "pip"])
def test_a_re_run_that_changes_nothing_touches_no_file_and_says_so(
    index: Index, env: dict[str, str], tmp_path: Path, installer: str
) -> None:
    python = make_venv(tmp_path / "venv")
    args = ["install", "torch", "--target", GTX_1080, "--python", str(python), "--installer", installer]
    args += ["--pytorch-index", index.pytorch, "--index-url", index.default, "--no-verify"]
    first = run_wheelfit(args, env)
    assert first.returncode == 0, first.stderr
    assert "Installed torch 2.14.1+cu126" in first.stdout
    before = _inodes(tmp_path / "venv")
    again = run_wheelfit(args, env)
    assert again.returncode == 0, again.stderr
    assert "Already installed: torch 2.14.1+cu126 in " in again.stdout
    assert f"{installer} found nothing to change." in again.stdout
    report = json.loads(run_wheelfit([*args, "--json"], env).stdout)
    assert (report["dry_run"], report["installs"], report["removes"]) == (False, [], [])
    assert _inodes(tmp_path / "venv") == before
    # Something to change is installed as ever.
    more = run_wheelfit([*args, "torchvision"], env)
    assert more.returncode == 0, more.stderr
    assert installed(python, env)["torchvision"] == "0.29.1+cu126"


def test_install_keeps_the_notes_of_the_override_variables(index: Index, env: dict[str, str], tmp_path: Path) -> None:
    """The one machine function serves install as it serves plan: the overrides used are said."""
    python = make_venv(tmp_path / "venv")
    args = ["install", "torch", "--target", "os=linux", "--python", str(python), "--dry-run", "--json"]
    args += ["--pytorch-index", index.pytorch, "--index-url", index.default]
    done = run_wheelfit(args, {**env, "NV_VARIANT_PROVIDER_FORCE_SM_ARCH": "6.1"})
    assert done.returncode == 0, done.stderr
    plan = json.loads(done.stdout)["plan"]
    assert (plan["torch_version"], plan["variant"]) == ("2.14.1", "cu126")
    assert "NV_VARIANT_PROVIDER_FORCE_SM_ARCH=6.1 overrides detection" in plan["warnings"]
