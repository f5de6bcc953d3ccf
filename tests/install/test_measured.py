"""Knowledge that learns (issue 31): ``verify`` records what an installed build says about its kernels, and a
later plan for that build rests on it (confidence ``M``) instead of an inference; ``kb show`` says so.

A loopback PyTorch index serves torch 2.18.0+cu130, a release the knowledge base does not list (its kernels are
inferred); the fake torch installed from it reports ``get_arch_list()`` while it sees a GPU, as real torch does.
The machine is a recorded B200 (driver 580) (``--sysroot``): only a detected machine's measurement is kept.
"""

from __future__ import annotations

import json
import os
import subprocess
import warnings
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from tests.conftest import MACHINES, ROOT, hermetic_env
from tests.support.wheels import make_torch_like
from wheelfit.install.uv import find_uv

from .conftest import make_venv
from .loopback import serve

B200 = str(MACHINES / "nvidia-b200" / "root")
ARCHS = ["sm_80", "sm_90", "sm_100"]
SCHEMA = json.loads((ROOT / "src/wheelfit/schemas/measured.schema.json").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def run_cli() -> Callable[[list[str]], int]:
    with warnings.catch_warnings():  # typer 0.25 trips a click deprecation warning when imported under pytest
        warnings.simplefilter("ignore", DeprecationWarning)
        from wheelfit.cli.app import run
    return run


def _call(
    run: Callable[[list[str]], int], args: list[str], env: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> tuple[int, str]:
    with pytest.MonkeyPatch.context() as m:
        for name in list(os.environ):
            m.delenv(name)
        for name, value in env.items():
            m.setenv(name, value)
        code = run(args)
    out = capsys.readouterr()
    return code, out.out + (out.err if code else "")


def _kernels(plan: dict[str, Any]) -> list[dict[str, str]]:
    torch = next(p for p in plan["packages"] if p["name"] == "torch")
    return [f for f in torch["uncertain"] if f["fact"].startswith("the kernels of")]


def test_verify_measures_an_inferred_build_and_the_next_plan_rests_on_it(
    tmp_path: Path, run_cli: Callable[[list[str]], int], capsys: pytest.CaptureFixture[str]
) -> None:
    root = tmp_path / "index"
    made = make_torch_like(tmp_path / "w", version="2.18.0", variant="cu130", arch_list=ARCHS)
    (root / "pytorch/cu130/torch").mkdir(parents=True)
    made.rename(root / "pytorch/cu130/torch" / made.name)
    data = tmp_path / "data"
    env = hermetic_env(WHEELFIT_DATA_DIR=str(data), WHEELFIT_CACHE_DIR=str(tmp_path / "cache"))
    with serve(root) as url:
        plan_args = ["plan", "torch==2.18.0", "--sysroot", B200, "--pytorch-index", f"{url}/pytorch", "--json"]
        code, out = _call(run_cli, plan_args, env, capsys)
        assert code == 0, out
        before = json.loads(out)
        assert before["variant"] == "cu130"
        assert [f["confidence"] for f in _kernels(before)] == ["inferred"]

        python = make_venv(tmp_path / "venv")
        subprocess.run(
            [find_uv(), "pip", "install", "--python", str(python), "--no-index", "--no-deps",
             str(root / "pytorch/cu130/torch" / made.name)],
            check=True, capture_output=True, env=hermetic_env(),
        )  # fmt: skip
        seen = {**env, "WHEELFIT_FAKE_TORCH_GPUS": "NVIDIA B200=10.0", "WHEELFIT_OFFLINE": "1"}
        code, out = _call(run_cli, ["verify", "--python", str(python), "--sysroot", B200], seen, capsys)
        assert code == 0, out
        recorded = json.loads((data / "measured.json").read_text(encoding="utf-8"))
        Draft202012Validator(SCHEMA).validate(recorded)
        (build,) = recorded["builds"]
        assert (build["version"], build["label"], build["platform"]) == ("2.18.0+cu130", "cu130", "linux_x86_64")
        assert (build["arch_list"], build["runtime"]) == (ARCHS, "13.0")

        code, out = _call(run_cli, plan_args, env, capsys)
        assert code == 0, out
        after = json.loads(out)
        assert _kernels(after) == []  # measured: no longer below primary
        assert any("measured on this machine" in r and "get_arch_list()" in r for r in after["reasons"]), after

    code, out = _call(run_cli, ["kb", "show", "2.18.0+cu130", "--json"], env, capsys)
    assert code == 0, out
    facts = json.loads(out)["platforms"]["linux_x86_64"]
    assert facts["kernels"]["sass"] == ["80", "90", "100"]
    kernels = facts["facts"]["kernels"]
    assert kernels["confidence"] == "M" and kernels["source"].startswith("measured on this machine, ")


def test_a_verify_for_a_target_or_without_a_gpu_records_nothing(
    tmp_path: Path, run_cli: Callable[[list[str]], int], capsys: pytest.CaptureFixture[str]
) -> None:
    torch = partial(make_torch_like, version="2.9.0", variant="cu126", arch_list=["sm_61"])
    python = make_venv(tmp_path / "venv")
    subprocess.run(
        [find_uv(), "pip", "install", "--python", str(python), "--no-index", "--no-deps", str(torch(tmp_path / "w"))],
        check=True, capture_output=True, env=hermetic_env(),
    )  # fmt: skip
    data = tmp_path / "data"
    env = hermetic_env(WHEELFIT_DATA_DIR=str(data), WHEELFIT_OFFLINE="1", WHEELFIT_FAKE_TORCH_GPUS="GTX 1080=6.1")
    _call(run_cli, ["verify", "--python", str(python), "--target", "cuda=6.1,driver=580.95.05"], env, capsys)
    no_gpu = {**env, "WHEELFIT_FAKE_TORCH_GPUS": ""}
    gtx_1080 = str(MACHINES / "nvidia-gtx1080/root")
    _call(run_cli, ["verify", "--python", str(python), "--sysroot", gtx_1080], no_gpu, capsys)
    assert not (data / "measured.json").exists()


def test_a_malformed_measured_file_is_one_line_naming_it(
    tmp_path: Path, run_cli: Callable[[list[str]], int], capsys: pytest.CaptureFixture[str]
) -> None:
    data = tmp_path / "data"
    data.mkdir()
    (data / "measured.json").write_text('{"schema_version": "1.0", "builds": [{"version": 7}]}', encoding="utf-8")
    env = hermetic_env(WHEELFIT_DATA_DIR=str(data), WHEELFIT_OFFLINE="1")
    code, out = _call(run_cli, ["plan", "torch", "--target", "cuda=8.6,driver=580.95.05"], env, capsys)
    assert code == 1
    assert out.strip().splitlines() == [f"wheelfit: error: {data / 'measured.json'}: builds[0]: missing 'label', "
                                        "'platform', 'arch_list', 'date'"]  # fmt: skip
