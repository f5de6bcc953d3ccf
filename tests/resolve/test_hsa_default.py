"""A near-miss AMD GPU does not get the HSA_OVERRIDE_GFX_VERSION build by default (issue 12).

The Radeon 780M (gfx1103, ``tests/machines/amd-radeon-780m``) is in no torch 2.11 build; forcing it to gfx1100
(11.0.0) "has caused GPU page faults and hard hangs" (pytorch/pytorch#179653, ``rocm_overrides.json``). The safe
plan is the CPU build, with the override build offered in one line; ``--allow-hsa-override`` or the variable
already set (``tests/machines/amd-hsa-override``: an RX 6700 XT run with 10.3.0) is the user's choice.
"""

from __future__ import annotations

import json
from typing import Any

from tests.conftest import MACHINES, hermetic_env
from tests.support.inprocess import wheelfit_in_process

from . import kb_plan


def plan(machine: str, *args: str, **variables: str) -> dict[str, Any]:
    r = wheelfit_in_process(
        ["plan", "--offline", "--json", "--sysroot", str(MACHINES / machine / "root"), *args], hermetic_env(**variables)
    )
    assert r.returncode == 0, r.stderr
    data: dict[str, Any] = json.loads(r.stdout)
    return data


def test_the_780m_gets_the_safe_build_and_the_override_offered() -> None:
    d = plan("amd-radeon-780m", "torch==2.11.0")
    assert (d["torch_version"], d["variant"]) == ("2.11.0", "cpu")
    assert "HSA_OVERRIDE_GFX_VERSION" not in d["env"]
    offers = [w for w in d["warnings"] if "--allow-hsa-override" in w]
    assert len(offers) == 1
    assert "torch 2.11.0+rocm7.2 would run" in offers[0] and "export HSA_OVERRIDE_GFX_VERSION=11.0.0" in offers[0]
    assert "hard hangs" in offers[0]
    assert {r["judge"] for r in d["rejected"] if r["variant"].startswith("rocm")} == {"override"}


def test_the_flag_takes_the_override_build() -> None:
    d = plan("amd-radeon-780m", "torch==2.11.0", "--allow-hsa-override")
    assert (d["variant"], d["env"]) == ("rocm7.2", {"HSA_OVERRIDE_GFX_VERSION": "11.0.0"})
    assert any("hard hangs" in w for w in d["warnings"])


def test_the_variable_already_set_is_the_users_choice() -> None:
    d = plan("amd-hsa-override", "torch", HSA_OVERRIDE_GFX_VERSION="10.3.0")
    assert d["variant"].startswith("rocm") and d["env"] == {"HSA_OVERRIDE_GFX_VERSION": "10.3.0"}
    assert any("HSA_OVERRIDE_GFX_VERSION=10.3.0 is set: the user's choice" in w for w in d["warnings"])
    assert not any("--allow-hsa-override" in w for w in d["warnings"])


def test_the_pure_resolver_agrees() -> None:
    from wheelfit.kb.matrix import load_knowledge
    from wheelfit.kb.overrides import rocm_overrides
    from wheelfit.probe.target import load_target
    from wheelfit.resolve import Request

    report = load_target("rocm=gfx1031,python=3.12")
    near = dict(rocm_overrides())  # the knowledge base's near misses, as the orchestration passes them
    safe = kb_plan(report, load_knowledge(), Request.parse(["torch==2.9.*"], rocm_overrides=near))
    assert safe.variant == "cpu"
    chosen = kb_plan(report, load_knowledge(), Request.parse(["torch==2.9.*"], allow_hsa_override=True,
                                                             rocm_overrides=near))  # fmt: skip
    assert (chosen.variant, dict(chosen.env)) == ("rocm6.4", {"HSA_OVERRIDE_GFX_VERSION": "10.3.0"})


def test_a_chosen_rocm_build_for_a_near_miss_gpu_names_the_override_flag() -> None:
    root = str(MACHINES / "amd-radeon-780m" / "root")
    args = ["plan", "--offline", "torch==2.11.0", "--torch-backend", "rocm7.2", "--sysroot", root]
    r = wheelfit_in_process(args, hermetic_env())
    assert r.returncode == 1
    assert "HSA_OVERRIDE_GFX_VERSION=11.0.0" in r.stderr and "pass --allow-hsa-override" in r.stderr
    d = plan("amd-radeon-780m", "torch==2.11.0", "--torch-backend", "rocm7.2", "--allow-hsa-override")
    assert (d["variant"], d["env"]) == ("rocm7.2", {"HSA_OVERRIDE_GFX_VERSION": "11.0.0"})
