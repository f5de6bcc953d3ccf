"""``--torch-backend`` and ``UV_TORCH_BACKEND`` as uv spells them (auto, cpu, cuNNN, rocmX.Y, xpu: uv's
``TorchMode``, docs.astral.sh/uv/guides/integration/pytorch), and an index URL that ends in a variant
(``pip install torch --index-url https://download.pytorch.org/whl/cu128``, PyTorch's install selector).

Facts (``src/wheelfit/kb/data/pytorch.json``): cu126 has sm_86 and ends at torch 2.14; 2.15 builds cu130+;
no torch 2.9 build is cu132.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.install.conftest import Index, caches, env, index, make_venv, run_wheelfit
from tests.support.inprocess import wheelfit_in_process
from wheelfit import api
from wheelfit.errors import UsageError
from wheelfit.index.config import resolve_index_config

from ..conftest import hermetic_env

__all__ = ["caches", "env", "index"]  # the install fixtures, used here by name

RTX_3090 = "cuda=8.6,driver=580.95.05"


def plan(*args: str, **variables: str) -> subprocess.CompletedProcess[str]:
    return wheelfit_in_process(["plan", "--offline", *args], hermetic_env(**variables))


def plan_json(*args: str, **variables: str) -> dict[str, Any]:
    r = plan(*args, "--json", **variables)
    assert r.returncode == 0, r.stderr
    data: dict[str, Any] = json.loads(r.stdout)
    return data


def test_a_backend_restricts_the_plan_to_that_label() -> None:
    d = plan_json("torch", "--target", RTX_3090, "--torch-backend", "cu126")
    assert (d["torch_version"], d["variant"]) == ("2.14.1", "cu126")  # the newest release with a cu126 build
    assert d["reasons"][0] == "the cu126 build was chosen by the user (--torch-backend cu126)"
    assert "torch 2.15.0 has no cu126 build" in d["reasons"][1]


def test_the_variable_is_honoured_and_named() -> None:
    d = plan_json("torch", "--target", RTX_3090, UV_TORCH_BACKEND="cu126")
    assert d["variant"] == "cu126"
    assert "(UV_TORCH_BACKEND=cu126)" in d["reasons"][0]


def test_the_flag_wins_over_the_variable_and_auto_is_the_normal_choice() -> None:
    auto = plan_json("torch", "--target", RTX_3090, "--torch-backend", "auto", UV_TORCH_BACKEND="cu126")
    assert auto["variant"] != "cu126" and auto["variant"] == plan_json("torch", "--target", RTX_3090)["variant"]


def test_a_backend_without_kernels_is_refused_then_forced() -> None:
    r = plan("torch==2.14.1", "--target", "cuda=6.1,driver=580.95.05", "--torch-backend", "cu130")
    assert r.returncode == 1
    assert "cu130 has no SASS for sm_61" in r.stderr and "--force-build" in r.stderr
    d = plan_json("torch==2.14.1", "--target", "cuda=6.1,driver=580.95.05", "--torch-backend", "cu130", "--force-build")
    assert d["variant"] == "cu130" and any("--force-build" in w for w in d["warnings"])


def test_a_label_with_no_build_matching_the_request_says_so() -> None:
    r = plan("torch==2.9.0", "--target", RTX_3090, "--torch-backend", "cu132")
    assert r.returncode == 1
    assert "no cu132 build of torch matches torch==2.9.0" in r.stderr and "2.15.0" in r.stderr


def test_an_unknown_backend_is_a_usage_error() -> None:
    r = plan("torch", "--target", RTX_3090, "--torch-backend", "cuda12")
    assert r.returncode == 2 and "--torch-backend 'cuda12'" in r.stderr


def test_a_pytorch_index_ending_in_a_variant_is_the_backend() -> None:
    d = plan_json("torch==2.9.0", "--target", RTX_3090, "--pytorch-index", "https://download.pytorch.org/whl/cu128")
    assert d["variant"] == "cu128"  # not the cu130 wheelfit would choose
    assert d["index_url"] == "https://download.pytorch.org/whl/cu128"
    assert d["reasons"][0] == "--pytorch-index ends in /cu128: planning the cu128 build, as --torch-backend cu128"


def test_an_index_url_ending_in_a_variant_keeps_pypi_for_the_rest() -> None:
    config = resolve_index_config({}, index_url="https://download.pytorch.org/whl/cu128/")
    assert (config.torch_backend, config.pytorch_base) == ("cu128", "https://download.pytorch.org/whl")
    assert config.default_index == "https://pypi.org/simple"
    assert any("everything else from https://pypi.org/simple" in n for n in config.notes)
    plain = resolve_index_config({}, index_url="https://mirror.example/simple")
    assert plain.torch_backend is None and plain.default_index == "https://mirror.example/simple"


def test_the_library_reads_the_variable_from_environ_and_the_index_url() -> None:
    target = api.machine(api.MachineOptions(target=RTX_3090), environ={})
    p = api.plan(["torch==2.9.0"], target, api.PlanOptions(), environ={"UV_TORCH_BACKEND": "cu126"}, network=None)
    assert p.variant == "cu126"
    p = api.plan(["torch==2.9.0"], target, api.PlanOptions(index_url="https://download.pytorch.org/whl/cu128"),
        environ={}, network=None)
    assert p.variant == "cu128"
    assert p.reasons[0].startswith("--index-url ends in /cu128: planning the cu128 build")
    assert any("everything else from https://pypi.org/simple" in w for w in p.warnings)


def test_conflicting_choices_are_a_usage_error() -> None:
    target = api.machine(api.MachineOptions(target=RTX_3090), environ={})
    with pytest.raises(UsageError, match="different builds"):
        api.plan(["torch"], target,
            api.PlanOptions(torch_backend="cu126", index_url="https://download.pytorch.org/whl/cu128"),
            environ={}, network=None)  # fmt: skip


def test_install_from_an_index_url_ending_in_a_variant(index: Index, env: dict[str, str], tmp_path: Path) -> None:
    """What PyTorch's selector prints, given to wheelfit: torch-family from that variant, the rest from the next
    default index (here the loopback one named by WHEELFIT_INDEX_URL; PyPI when none is set)."""
    python = make_venv(tmp_path / "venv")
    args = ["install", "torch", "--target", RTX_3090, "--python", str(python), "--dry-run", "--json"]
    done = run_wheelfit([*args, "--index-url", f"{index.pytorch}/cu126"], {**env, "WHEELFIT_INDEX_URL": index.default})
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["plan"]["variant"] == "cu126"  # not the cu130 build wheelfit would choose for sm_86
    assert report["plan"]["reasons"][0].startswith("--index-url ends in /cu126: planning the cu126 build")
    assert {w["url"].split("/pytorch/")[1].split("/")[0] for w in report["torch_family"]} == {"cu126"}
    assert any(f"everything else from {index.default}" in w for w in report["plan"]["warnings"])
