"""The user's own choice of build (issue 12): a local label selects that build, which is judged, never swapped.

Facts (``src/wheelfit/kb/data/pytorch.json``): torch 2.9.0 cu128 has SASS sm_70-sm_120 (BM-2.x), so it runs
on sm_86 and has nothing for sm_61; CUDA 13.x builds need a driver >= 580 (NVIDIA Table 2, BM-3.2).
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.install.conftest import Index, caches, env, import_torch, index, installed, make_venv, run_wheelfit
from tests.support.inprocess import wheelfit_in_process
from wheelfit import api
from wheelfit.candidates.knowledge import knowledge_set
from wheelfit.errors import UsageError
from wheelfit.kb.matrix import load_knowledge
from wheelfit.probe.target import load_target
from wheelfit.resolve import Machine, Request, ResolveError, judge_build, resolve

from ..conftest import hermetic_env

__all__ = ["caches", "env", "index"]  # the install fixtures, used here by name

RTX_3090 = "cuda=8.6,driver=580.95.05"
GTX_1080 = "cuda=6.1,driver=580.95.05"
KB = load_knowledge()


def plan_cli(*args: str, **variables: str) -> subprocess.CompletedProcess[str]:
    return wheelfit_in_process(["plan", "--offline", *args], hermetic_env(**variables))


def kb_resolve(target: str, *specs: str, **kwargs: object) -> object:
    machine = Machine.from_report(load_target(f"{target},python=3.12"))
    return resolve(machine, knowledge_set(KB, machine.platform_key), Request.parse(specs, **kwargs))  # type: ignore[arg-type]


def test_a_local_label_plans_that_build() -> None:
    r = plan_cli("torch==2.9.0+cu128", "--target", RTX_3090, "--json")
    assert r.returncode == 0, r.stderr
    d = json.loads(r.stdout)
    assert (d["torch_version"], d["variant"]) == ("2.9.0", "cu128")  # the normal choice would be cu130
    assert d["packages"][0]["requirement"] == "torch==2.9.0+cu128"
    assert d["index_url"].endswith("/cu128")
    assert any("chosen by the user (torch==2.9.0+cu128)" in s for s in d["reasons"])
    # Without a label ``==2.9.0`` matches every build: wheelfit's own choice, the highest CUDA the driver meets.
    assert json.loads(plan_cli("torch==2.9.0", "--target", RTX_3090, "--json").stdout)["variant"] == "cu130"


def test_an_excluded_label_excludes_that_build_only() -> None:
    plan = kb_resolve(RTX_3090, "torch==2.9.0,!=2.9.0+cu130")
    assert plan.variant not in ("cu130", "cpu")  # type: ignore[attr-defined]
    assert not any("chosen by the user" in r for r in plan.reasons)  # type: ignore[attr-defined]


def test_a_companion_label_chooses_the_build_too() -> None:
    plan = kb_resolve(RTX_3090, "torch==2.9.0", "torchvision==0.24.0+cu128")
    assert plan.variant == "cu128"  # type: ignore[attr-defined]
    assert [p.requirement for p in plan.packages] == ["torch==2.9.0+cu128", "torchvision==0.24.0+cu128"]  # type: ignore[attr-defined]


def test_a_build_without_kernels_is_refused_naming_them_and_the_flag() -> None:
    r = plan_cli("torch==2.9.0+cu128", "--target", GTX_1080)
    assert r.returncode == 1, r.stdout
    line = r.stderr.strip()
    assert len(line.splitlines()) == 1 and "Traceback" not in line
    assert "cu128 has no SASS for sm_61 (has sm_70-sm_120)" in line
    assert "--force-build" in line


def test_force_build_plans_it_with_the_reason_as_a_warning() -> None:
    r = plan_cli("torch==2.9.0+cu128", "--target", GTX_1080, "--force-build", "--json")
    assert r.returncode == 0, r.stderr
    d = json.loads(r.stdout)
    assert (d["torch_version"], d["variant"]) == ("2.9.0", "cu128")
    assert any("--force-build: cu128 has no SASS for sm_61" in w for w in d["warnings"])


def test_a_driver_below_the_floor_is_refused() -> None:
    with pytest.raises(ResolveError, match=r"driver 535\.129\.03 is below .*--force-build"):
        kb_resolve("cuda=8.6,driver=535.129.03", "torch==2.9.0+cu130")


def test_the_cpu_build_always_runs() -> None:
    plan = kb_resolve(GTX_1080, "torch==2.9.0+cpu")
    assert plan.variant == "cpu"  # type: ignore[attr-defined]
    assert any("will not be used" in w for w in plan.warnings)  # type: ignore[attr-defined]


def test_different_labels_are_a_usage_error() -> None:
    r = plan_cli("torch==2.9.0+cu128", "torchvision==0.24.0+cu126", "--target", RTX_3090)
    assert r.returncode == 2 and "different builds" in r.stderr


def test_judge_build_runs_refused_unknown() -> None:
    machine = Machine.from_report(load_target(f"{GTX_1080},python=3.12"))
    cands = knowledge_set(KB, machine.platform_key)
    refused = judge_build(machine, cands, "2.9.0+cu128")
    assert (refused.status, refused.judge) == ("refused", "kernels")
    assert refused.reason == "cu128 has no SASS for sm_61 (has sm_70-sm_120)"
    runs = judge_build(machine, cands, "2.9.0", "cu126")
    assert runs.runs and runs.label == "cu126"
    unknown = judge_build(machine, cands, "2.9.0+cu999")
    assert unknown.status == "unknown" and "cu126" in unknown.reason  # names the builds it does know


def test_api_judge_build_from_the_knowledge_base() -> None:
    target = api.machine(api.MachineOptions(target=GTX_1080), environ={})
    verdict = api.judge_build("2.9.0+cu128", target, api.PlanOptions(), environ={})
    assert verdict.status == "refused" and "sm_61" in verdict.reason
    assert api.judge_build("2.9.0+cu126", target, api.PlanOptions(), environ={}).runs


@pytest.mark.parametrize("version", ["2.9.x", "2." + "9" * 5000], ids=["not-a-version", "past-int-digit-limit"])
def test_api_judge_build_of_something_that_is_not_a_version_is_a_usage_error(version: str) -> None:
    """packaging raises a plain ValueError (int()'s 4300-digit limit) where it would raise InvalidVersion."""
    with pytest.raises(UsageError, match="is not a version"):
        api.judge_build(version, api.machine(api.MachineOptions(target=GTX_1080), environ={}), api.PlanOptions(),
                        environ={})  # fmt: skip


def test_install_a_chosen_build_from_the_loopback_index(index: Index, env: dict[str, str], tmp_path: Path) -> None:
    """An RTX 3090 would get cu130; the user asks for cu126 (sm_86 is in it) and gets it, installed by real uv."""
    python = make_venv(tmp_path / "venv")
    args = ["install", "torch==2.14.1+cu126", "--target", RTX_3090, "--python", str(python)]
    done = run_wheelfit([*args, "--pytorch-index", index.pytorch, "--index-url", index.default, "--json"], env)
    assert done.returncode == 0, done.stderr
    assert installed(python, env)["torch"] == "2.14.1+cu126"
    assert import_torch(python, env)[:2] == ["2.14.1+cu126", "12.6"]
    assert any("chosen by the user" in s for s in json.loads(done.stdout)["plan"]["reasons"])
