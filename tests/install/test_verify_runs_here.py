"""``wheelfit verify`` judges the torch in an environment by kernels and runtime, not by the plan.

Real venvs, fake torch-like wheels installed by real uv; the machine is a ``--target`` (no driver where tests run),
so the GPUs judged are the report's, against the knowledge base's arch list for the installed build, unless the
fake torch sees GPUs of its own (``WHEELFIT_FAKE_TORCH_GPUS``) and reports its ``get_arch_list()``.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import hermetic_env
from tests.support.inprocess import wheelfit_in_process
from tests.support.wheels import make_torch_like, make_wheel
from wheelfit.install.uv import find_uv

from .conftest import make_venv, run_wheelfit

RTX_3090 = "cuda=8.6,driver=580.95.05"
GTX_1080 = "cuda=6.1,driver=580.95.05"
#: The R470 branch: CUDA 11.4, below the 525.60.13 any CUDA 12.x build needs (NVIDIA CUDA Toolkit release notes,
#: Table 2, minor version compatibility).
OLD_DRIVER = "cuda=8.6,driver=470.57.02"

#: PyPI's torch 2.9.0 for Linux x86_64: no local label, a CUDA 12.8 build (its torch.version.cuda is "12.8";
#: pytorch/pytorch RELEASE.md, "the default CUDA version on PyPI").
PYPI_TORCH = partial(make_torch_like, version="2.9.0", variant="cu128", local=False)
PYPI_VISION = partial(make_wheel, name="torchvision", version="0.24.0", requires=["torch==2.9.0"])

Maker = Callable[[Path], Path]


def _environment(tmp_path: Path, env: dict[str, str], *makers: Maker) -> Path:
    """A fresh venv with ``makers``' wheels installed into it by uv (no index: only these files)."""
    python = make_venv(tmp_path / "venv")
    if makers:
        wheels = [str(make(tmp_path / "wheels")) for make in makers]
        argv = [find_uv(), "pip", "install", "--python", str(python), "--no-index", *wheels]
        done = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=120, check=False)
        assert done.returncode == 0, done.stderr
    return python


def _verify(python: Path, env: dict[str, str], target: str, *extra: str) -> subprocess.CompletedProcess[str]:
    return run_wheelfit(["verify", "--python", str(python), "--target", target, *extra], env)


def _json(python: Path, env: dict[str, str], target: str) -> dict[str, Any]:
    done = _verify(python, env, target, "--json")
    data = json.loads(done.stdout)
    assert done.returncode == (0 if data["ok"] else 1), done.stderr
    assert isinstance(data, dict)
    return data


def _failed(data: dict[str, Any]) -> list[str]:
    return [c["detail"] for c in data["checks"] if c["ok"] is False]


@pytest.fixture
def offline(env: dict[str, str]) -> dict[str, str]:
    """Plans from the knowledge base alone: the note says what the plan would be, no index needed."""
    return {**env, "WHEELFIT_OFFLINE": "1"}


def test_pypi_torch_on_an_sm86_with_driver_580_passes_though_the_plan_is_cu130(
    tmp_path: Path, offline: dict[str, str]
) -> None:
    python = _environment(tmp_path, offline, PYPI_TORCH, PYPI_VISION)
    done = _verify(python, offline, RTX_3090)
    assert done.returncode == 0, done.stdout + done.stderr
    out = " ".join(done.stdout.split())  # the renderer wraps at 80 columns
    assert "CUDA 12.8" in out and "PyPI's build for linux_x86_64 (cu128)" in out
    assert "not wheelfit's planned build (2.9.0+cu130), but it runs here" in out
    assert "it has kernels for every GPU and a runtime the driver supports" in out
    assert "no GPU is visible to torch here; judged from --target cuda=8.6,driver=580.95.05" in out
    assert "the knowledge base's list for torch 2.9.0 cu128 (linux_x86_64)" in out
    assert not any(repr_ in out for repr_ in ("{'", "['", "': '", "None"))  # plain words, no Python reprs

    data = _json(python, offline, RTX_3090)
    assert data["ok"] is True and data["reason"] is None
    assert (data["planned"], data["plan_build"], data["plan"]["variant"]) == (False, "2.9.0+cu130", "cu130")
    assert (data["torch"]["label"], data["torch"]["runtime"]) == ("cu128", "CUDA 12.8")
    assert data["gpus_from"] == f"--target {RTX_3090}"
    checks = {c["name"]: c for c in data["checks"]}
    assert checks["kernels"]["ok"] is True and "sm_86" in checks["kernels"]["detail"]
    assert checks["driver"]["ok"] is True and "580.95.05" in checks["driver"]["detail"]
    assert checks["torchvision"]["ok"] is True
    assert checks["plan"]["ok"] is None  # a note, not a failure


def test_the_same_torch_on_a_gtx_1080_fails_naming_the_missing_kernels(tmp_path: Path, offline: dict[str, str]) -> None:
    python = _environment(tmp_path, offline, PYPI_TORCH)
    done = _verify(python, offline, GTX_1080)
    assert done.returncode == 1, done.stdout + done.stderr
    # torch 2.9's cu128 build: SASS for sm_70-sm_120 (pytorch/pytorch .ci/manywheel/build_cuda.sh), none for Pascal.
    out = " ".join(done.stdout.split())  # the renderer wraps at 80 columns
    assert "no kernels for sm_61 (has sm_70-sm_120" in out
    assert "FAIL: torch 2.9.0 (CUDA 12.8) in" in out and "will not work here" in out
    data = _json(python, offline, GTX_1080)
    assert data["ok"] is False
    assert [d.split(": ", 2)[-1] for d in _failed(data)] == [
        "no kernels for sm_61 (has sm_70-sm_120; from the knowledge base's list for torch 2.9.0 cu128 (linux_x86_64))"
    ]
    assert "no kernels for sm_61" in data["reason"]


def test_a_driver_too_old_for_the_runtime_fails_naming_the_floor(tmp_path: Path, offline: dict[str, str]) -> None:
    python = _environment(tmp_path, offline, PYPI_TORCH)
    data = _json(python, offline, OLD_DRIVER)
    assert data["ok"] is False
    failed = _failed(data)
    assert len(failed) == 1 and failed[0].startswith("driver 470.57.02 is below 525.60.13")
    checks = {c["name"]: c["ok"] for c in data["checks"]}
    assert checks["kernels"] is True and checks["driver"] is False


@pytest.mark.parametrize(
    ("vision", "wrong"),
    [
        # A CPU torchvision beside a CUDA torch: its operators have no CUDA kernels.
        ("0.24.0+cpu", "a CPU build, torch is cu130"),
        # The torchvision of another torch (0.23 is torch 2.8's).
        ("0.23.0+cu130", "needs torch==2.8.0, torch is 2.9.0+cu130"),
    ],
)
def test_a_torchvision_that_is_not_torchs_fails(
    tmp_path: Path, offline: dict[str, str], vision: str, wrong: str
) -> None:
    needs = "torch==2.8.0" if vision.startswith("0.23") else "torch==2.9.0"
    torch = partial(make_torch_like, version="2.9.0", variant="cu130")
    # uv would refuse torchvision 0.23 beside torch 2.9: installed as a pip user who forced it would have it.
    python = _environment(tmp_path, offline, torch)
    wheel = make_wheel(tmp_path / "wheels", "torchvision", vision, requires=[needs])
    argv = [find_uv(), "pip", "install", "--python", str(python), "--no-index", "--no-deps", str(wheel)]
    assert subprocess.run(argv, capture_output=True, env=offline, timeout=120, check=False).returncode == 0
    data = _json(python, offline, RTX_3090)
    assert data["ok"] is False
    assert [c["name"] for c in data["checks"] if c["ok"] is False] == ["torchvision"]
    assert wrong in data["reason"]
    done = _verify(python, offline, RTX_3090)
    assert done.returncode == 1 and wrong in " ".join(done.stdout.split())


def test_json_when_torch_is_missing(tmp_path: Path, offline: dict[str, str]) -> None:
    python = _environment(tmp_path, offline)
    done = _verify(python, offline, RTX_3090, "--json")
    assert done.returncode == 1, done.stderr
    data = json.loads(done.stdout)
    assert data["ok"] is False and data["torch"]["missing"] is True and data["plan"] is None
    assert "torch is not installed" in data["reason"]
    human = _verify(python, offline, RTX_3090)
    assert human.returncode == 1 and "torch is not installed" in human.stdout and not human.stderr


def test_json_when_torch_cannot_be_imported(tmp_path: Path, offline: dict[str, str]) -> None:
    broken = {"torch/__init__.py": "raise ImportError('libcudart.so.12: cannot open shared object file')\n"}
    python = _environment(tmp_path, offline, partial(make_wheel, name="torch", version="2.9.0", files=broken))
    done = _verify(python, offline, RTX_3090, "--json")
    assert done.returncode == 1, done.stderr
    data = json.loads(done.stdout)
    assert data["ok"] is False and data["torch"]["missing"] is False
    assert "import torch failed (ImportError: libcudart.so.12: cannot open shared object file)" in data["reason"]


#: torch 2.9 cu128's arch list as torch.cuda.get_arch_list() would say it (no sm_70: a narrower build than the
#: knowledge base's, so the test shows whose list was used).
TORCH_ARCHS = ["sm_75", "sm_80", "sm_86", "sm_90", "sm_100", "sm_120"]


def test_the_gpus_torch_sees_and_its_arch_list_decide(tmp_path: Path, offline: dict[str, str]) -> None:
    torch = partial(make_torch_like, version="2.9.0", variant="cu128", local=False, arch_list=TORCH_ARCHS)
    python = _environment(tmp_path, offline, torch)
    sees_1080 = {**offline, "WHEELFIT_FAKE_TORCH_GPUS": "NVIDIA GeForce GTX 1080=6.1"}
    data = _json(python, sees_1080, RTX_3090)  # the report says sm_86; torch sees the 1080 that is really there
    assert data["ok"] is False and data["gpus_from"] == "torch"
    assert data["kernels_from"] == "torch.cuda.get_arch_list()"
    assert _failed(data) == [
        "GPU 0 NVIDIA GeForce GTX 1080 (sm_61): no kernels for sm_61 (has sm_75-sm_120; from "
        "torch.cuda.get_arch_list())"
    ]
    sees_3090 = {**offline, "WHEELFIT_FAKE_TORCH_GPUS": "NVIDIA GeForce RTX 3090=8.6"}
    assert _json(python, sees_3090, GTX_1080)["ok"] is True


def test_verify_output_wraps_at_80_columns_with_a_hanging_indent(tmp_path: Path) -> None:
    """A check's detail continues under the detail, the summary under itself; nothing is wider than 80 columns
    and the --target spec is never split."""
    venv = make_venv(tmp_path / "venv")
    wheel = make_torch_like(tmp_path / "w", "2.14.1", "cu126")
    env = hermetic_env(COLUMNS="80")
    subprocess.run([find_uv(), "pip", "install", "--python", str(venv), str(wheel)], env=env, check=True,
                   capture_output=True)  # fmt: skip
    done = wheelfit_in_process(["verify", "--python", str(venv), "--target", "cuda=6.1,driver=580.95.05"], env)
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    # at most 80 columns, but for a line that is one word longer than that (the venv's path, never split)
    assert lines and all(len(line) <= 80 or len(line.split()) == 1 for line in lines), lines
    assert sum("cuda=6.1,driver=580.95.05" in line for line in lines) == 1
    kernels = next(i for i, line in enumerate(lines) if line.startswith("  ok    kernels"))
    detail_at = lines[kernels].index("no GPU")
    assert lines[kernels + 1].startswith(" " * detail_at) and lines[kernels + 1][detail_at] != " "
    summary = next(i for i, line in enumerate(lines) if line.startswith("verified: "))
    assert all(line.startswith("  ") for line in lines[summary + 1 :])
