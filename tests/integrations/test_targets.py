"""One plan per ``--target``, each named for the outputs that need a name (lock files, extras, matrix jobs)."""

from __future__ import annotations

from wheelfit.integrations.targets import plan_targets, target_names
from wheelfit.options import MachineOptions, PlanOptions
from wheelfit.resolve.plan import Plan

from ..conftest import hermetic_env


def _plan(variant: str, platform: str = "linux_x86_64", python: str = "3.12") -> Plan:
    return Plan("2.14.1", variant, f"https://example.invalid/whl/{variant}", (), (), platform=platform, python=python)


def test_a_variant_alone_names_its_plan() -> None:
    assert target_names([_plan("cu126"), _plan("cpu")]) == ["cu126", "cpu"]


def test_the_same_build_twice_gets_one_name_and_a_different_python_another() -> None:
    names = target_names([_plan("cu126"), _plan("cu126"), _plan("cu126", python="3.11"), _plan("cpu")])
    assert names == ["cu126-linux-x86-64-py3.12", "cu126-linux-x86-64-py3.12", "cu126-linux-x86-64-py3.11", "cpu"]


def test_each_target_is_planned_for_its_own_hardware() -> None:
    specs = ["cuda=6.1,driver=580.95.05,python=3.12", "cuda=8.9,driver=580.95.05,python=3.12", "cpu=v3,python=3.12"]
    found = plan_targets(["torch"], specs, MachineOptions(), PlanOptions(), environ=hermetic_env(), network=None)
    assert [t.spec for t in found] == specs
    assert [t.name for t in found] == [t.plan.variant for t in found]
    pascal, ada, cpu = found
    assert pascal.plan.variant == "cu126"  # no sm_61 kernels in CUDA 12.8+ builds
    assert ada.plan.variant.startswith("cu") and ada.plan.variant != "cu126"
    assert cpu.plan.variant == "cpu"
    assert {t.target.report.platform.python for t in found} == {"3.12"}
