# ruff: noqa: F811 - the fixtures are imported, then named as parameters
"""``wheelfit configure pip`` writes the torch family as ``name @ url#sha256=...`` lines that real pip (26.1 and
later) and real uv 0.13.9 install, as requirements (``-r``) and as constraints (``-c``), from the loopback
indexes; the default index squats torch at 99.0 and never wins; one changed hash makes each refuse. Settings that
would mix the PyTorch index into pip's (``PIP_EXTRA_INDEX_URL``, ``extra-index-url`` in a pip.conf) are warned
about."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from wheelfit.install.uv import find_uv

from ..conftest import hermetic_env
from ..install.conftest import Index, caches, env, error_line, index, installed, make_venv, run_wheelfit, tree  # noqa: F401
from .uv_helpers import ADA, PASCAL


def _configure(index: Index, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return run_wheelfit(["configure", "pip", "--pytorch-index", index.pytorch, *args], env)


def _pip(python: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    argv = [sys.executable, "-m", "pip", "--python", str(python), "install", "--no-cache-dir", *args]
    return subprocess.run(argv, env=env, capture_output=True, text=True, timeout=180, check=False)


def _uv_pip(python: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    argv = [find_uv(), "pip", "install", "--python", str(python), *args]
    return subprocess.run(argv, env=env, capture_output=True, text=True, timeout=180, check=False)


CLIENTS = {"pip": _pip, "uv": _uv_pip}


def _site_packages(python: Path) -> Path:
    return next((python.parent.parent / "lib").glob("python*/site-packages"))


@pytest.mark.parametrize("client", sorted(CLIENTS))
def test_requirements_file_installs_the_planned_build_with_pip_and_uv(
    client: str, index: Index, env: dict[str, str], tmp_path: Path
) -> None:
    out = tmp_path / "torch.txt"
    done = _configure(index, env, "torch", "torchvision", "--target", PASCAL, "-o", str(out))
    assert done.returncode == 0, done.stderr
    assert "3 torch-family files for cu126 (torch 2.14.1, cu126)" in done.stdout
    pins = [ln for ln in out.read_text().splitlines() if not ln.startswith("#")]
    assert [ln.split(" @ ")[0] for ln in pins] == ["torch", "torchvision", "triton"]
    assert all(f" @ {index.pytorch}/cu126/" in ln and "#sha256=" in ln for ln in pins)
    assert "PIP_EXTRA_INDEX_URL" not in "".join(pins)

    python = make_venv(tmp_path / "venv")
    # The default index offers torch, torchvision and triton 99.0: the direct URLs leave it nothing to choose.
    done = CLIENTS[client](python, env, "-r", str(out), "--index-url", index.default)
    assert done.returncode == 0, done.stderr
    got = installed(python, env)
    assert (got["torch"], got["torchvision"], got["triton"]) == ("2.14.1+cu126", "0.29.1+cu126", "3.5.1")


@pytest.mark.parametrize("client", sorted(CLIENTS))
def test_constraints_file_steers_a_plain_torch_request_and_a_changed_hash_is_refused(
    client: str, index: Index, env: dict[str, str], tmp_path: Path
) -> None:
    out = tmp_path / "constraints.txt"
    done = _configure(index, env, "--target", ADA, "--constraints", "-o", str(out))
    assert done.returncode == 0, done.stderr
    assert "pip install -c THIS_FILE" in out.read_text()

    python = make_venv(tmp_path / "venv")
    done = CLIENTS[client](python, env, "-c", str(out), "torch", "smallnum", "--index-url", index.default)
    assert done.returncode == 0, done.stderr
    assert installed(python, env)["torch"] == "2.15.0+cu130"

    text = out.read_text()
    sha = text.split("torch-2.15.0+cu130-py3-none-any.whl#sha256=")[1][:64]
    changed = tmp_path / "changed.txt"
    changed.write_text(text.replace(sha, ("0" if sha[0] != "0" else "1") + sha[1:]))
    fresh = make_venv(tmp_path / "refuses")
    before = tree(_site_packages(fresh))
    refused = CLIENTS[client](fresh, env, "-c", str(changed), "torch", "--index-url", index.default)
    assert refused.returncode != 0
    assert "hash" in refused.stderr.lower() and sha[1:] in refused.stderr
    assert tree(_site_packages(fresh)) == before


def test_no_output_prints_the_file_and_several_targets_write_one_each(
    index: Index, env: dict[str, str], tmp_path: Path
) -> None:
    printed = _configure(index, env, "--target", PASCAL)
    assert printed.returncode == 0, printed.stderr
    assert printed.stdout.startswith("# Written by wheelfit configure pip for --target " + PASCAL)
    assert f"torch @ {index.pytorch}/cu126/torch/torch-2.14.1+cu126" in printed.stdout

    done = _configure(index, env, "--target", PASCAL, "--target", ADA, "-o", str(tmp_path / "torch.txt"))
    assert done.returncode == 0, done.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["torch.cu126.txt", "torch.cu130.txt"]
    assert "torch-2.15.0+cu130" in (tmp_path / "torch.cu130.txt").read_text()


def test_pip_settings_that_mix_in_the_pytorch_index_are_warned_about(
    index: Index, caches: dict[str, str], tmp_path: Path
) -> None:
    home = tmp_path / "home"
    (home / ".config" / "pip").mkdir(parents=True)
    (home / ".config" / "pip" / "pip.conf").write_text(f"[global]\nextra-index-url = {index.pytorch}/cu126\n")
    quiet = hermetic_env(**caches, HOME=str(home))
    quiet.pop("PIP_CONFIG_FILE")  # pip reads the user's pip.conf only without PIP_CONFIG_FILE=os.devnull
    done = _configure(index, {**quiet, "PIP_EXTRA_INDEX_URL": f"{index.pytorch}/cu130/"}, "--target", PASCAL)
    assert done.returncode == 0, done.stderr
    warnings = [ln for ln in done.stderr.splitlines() if ln.startswith("wheelfit: warning: ")]
    assert len(warnings) == 2, done.stderr
    assert warnings[0].startswith(
        f"wheelfit: warning: PIP_EXTRA_INDEX_URL points at the PyTorch index ({index.pytorch}"
    )
    assert f"extra-index-url in {home}/.config/pip/pip.conf [global]" in warnings[1]
    assert all("torchtriton" in w for w in warnings)
    assert done.stdout.count("torch @ ") == 1  # the file is still written

    hermetic = _configure(index, hermetic_env(**caches, HOME=str(home)), "--target", PASCAL)
    assert hermetic.returncode == 0 and "warning" not in hermetic.stderr  # PIP_CONFIG_FILE=os.devnull: none read


def test_a_direct_reference_is_a_usage_error(index: Index, env: dict[str, str]) -> None:
    done = _configure(index, env, f"torch @ {index.pytorch}/cu126/torch/torch-2.14.1+cu126-py3-none-any.whl")
    assert done.returncode == 2
    assert "plans torch-family packages by name" in error_line(done.stderr)


def test_every_spelling_pip_honours_is_seen(tmp_path: Path) -> None:
    """pip normalizes config keys (case, ``_`` for ``-``, a leading ``--``) and hosts are case-insensitive: each
    spelling that makes pip use the PyTorch index is warned about (one of five was, once)."""
    from wheelfit.integrations.pip_config import pytorch_index_warnings

    conf = tmp_path / "pip.conf"
    conf.write_text(
        "[global]\nextra_index_url = https://download.pytorch.org/whl/cu126\n"
        "[install]\n--extra-index-url = HTTPS://Download.PyTorch.org/whl/cu128/\n"
        "Index-URL = https://pypi.org/simple\n"
    )
    environ = {"PIP_EXTRA_INDEX_URL": "https://DOWNLOAD.pytorch.org/whl/cpu", "PIP_INDEX_URL": "https://pypi.org/simple"}
    warned = pytorch_index_warnings(environ, "https://download.pytorch.org/whl", [conf])
    assert [w.split(" points at ")[0] for w in warned] == [
        "PIP_EXTRA_INDEX_URL",
        f"extra_index_url in {conf} [global]",
        f"--extra-index-url in {conf} [install]",
    ]


def test_a_gpu_target_that_gets_the_cpu_build_is_warned_about_by_every_command_that_writes_it(
    index: Index, env: dict[str, str], tmp_path: Path
) -> None:
    """The plan's warning travels with it: ``lock``, ``configure pip`` and ``configure uv`` say it as ``plan`` does
    (they once wrote the CPU build for a GPU target without a word)."""
    old_driver = "cuda=8.6,driver=390.00"  # no CUDA build runs on it: the CPU build, and why
    warned = "has kernels for target GPU sm_86"
    done = _configure(index, env, "--target", old_driver, "-o", str(tmp_path / "torch.txt"))
    assert done.returncode == 0, done.stderr
    assert any(ln.startswith("wheelfit: warning: ") and warned in ln for ln in done.stderr.splitlines()), done.stderr
    locked = run_wheelfit(["lock", "torch", "--target", old_driver, "--pytorch-index", index.pytorch, "--index-url",
                           index.default, "-o", str(tmp_path / "pylock.toml")], env)  # fmt: skip
    assert locked.returncode == 0, locked.stderr
    assert any(ln.startswith("wheelfit: warning: ") and warned in ln for ln in locked.stderr.splitlines())
    (tmp_path / "demo").mkdir()
    pyproject = '[project]\nname = "demo"\nversion = "0.1"\ndependencies = ["torch"]\n'
    (tmp_path / "demo" / "pyproject.toml").write_text(pyproject)
    project = run_wheelfit(["configure", "uv", "--project", str(tmp_path / "demo"), "--pytorch-index", index.pytorch,
                            "--target", old_driver], env)  # fmt: skip
    assert project.returncode == 0, project.stderr
    assert any(ln.startswith("wheelfit: warning: ") and warned in ln for ln in project.stderr.splitlines())
