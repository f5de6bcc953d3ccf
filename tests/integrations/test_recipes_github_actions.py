"""The GitHub Actions recipe (``docs/recipes/github-actions.yml``), run here as far as this machine allows.

The workflow is read as GitHub reads it (YAML) and one matrix entry's job is run: every ``run:`` step in order,
in a shell as GitHub runs it (``bash -e``), in a fresh workspace, with ``${{ matrix.* }}`` replaced by the entry's
values; every entry's target is planned against the same index. The ``uses:`` steps cannot run here and are
skipped by name: ``actions/checkout`` (the recipe reads no file of the repository), ``actions/setup-python``
(stood in for by a fresh venv that has only pip, first on ``PATH``: a bare Python) and ``actions/cache`` (the
caches start empty, as on a cache miss).

The loopback indexes are substituted through the environment only, so the steps run as written:
``PIP_FIND_LINKS`` (the wheels of wheelfit and its providers, built once per session; their dependencies come
from the package registry), ``WHEELFIT_PYTORCH_INDEX`` (the loopback index laid out as download.pytorch.org) and
``WHEELFIT_INDEX_URL`` (the loopback default index, with its squatted torch-family names).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.conftest import ROOT, hermetic_env
from tests.install.conftest import Index, index, make_venv
from tests.support.inprocess import wheelfit_in_process

from .test_bare_python import assert_from_wheelhouse, pip_cache, wheelhouse

__all__ = ["index"]  # the install fixtures' loopback index, used here by name

RECIPE = ROOT / "docs" / "recipes" / "github-actions.yml"
#: The steps that need GitHub's runner, skipped here (the module docstring says what stands in for each).
SKIPPED = {"actions/checkout@v4", "actions/setup-python@v5", "actions/cache@v4"}
#: What ``import torch`` says in each entry's environment, from the loopback index (tests/install/conftest.py).
EXPECTED = {
    "gtx-1080": "2.14.1+cu126 12.6 None",  # sm_61: no kernels in the cu130 build of 2.15.0
    "rtx-4090": "2.15.0+cu130 13.0 None",
    "cpu": "2.15.0+cpu None None",
}
EXPRESSION = re.compile(r"\$\{\{\s*matrix\.([A-Za-z0-9_-]+)\s*\}\}")


def workflow() -> dict[Any, Any]:
    loaded: dict[Any, Any] = yaml.safe_load(RECIPE.read_text())
    return loaded


def the_job() -> dict[str, Any]:
    jobs: dict[str, dict[str, Any]] = workflow()["jobs"]
    (job,) = jobs.values()
    return job


def entries() -> list[dict[str, str]]:
    include: list[dict[str, str]] = the_job()["strategy"]["matrix"]["include"]
    return include


def substitute(text: str, entry: dict[str, str]) -> str:
    """``${{ matrix.KEY }}`` as GitHub expands it; any other expression is not this test's to guess."""
    out = EXPRESSION.sub(lambda m: entry[m.group(1)], text)
    assert "${{" not in out, f"an expression this test does not expand: {out}"
    return out


def test_the_workflow_installs_with_one_wheelfit_command_after_pip_install_wheelfit() -> None:
    doc = workflow()
    # YAML 1.1 reads the key `on` as true; GitHub reads it as the trigger.
    assert set(doc.get("on", doc.get(True)) or {}) == {"push", "pull_request"}
    job = the_job()
    assert job["runs-on"] == "ubuntu-latest"
    assert [e["name"] for e in entries()] == list(EXPECTED)
    assert all(e["target"] for e in entries())  # GitHub's runners have no GPU: every job says its machine
    steps: list[dict[str, Any]] = job["steps"]
    assert {s["uses"] for s in steps if "uses" in s} == SKIPPED
    lines = [ln.strip() for s in steps if "run" in s for ln in str(s["run"]).splitlines() if ln.strip()]
    wheelfit = [i for i, ln in enumerate(lines) if ln.startswith("wheelfit ")]
    assert len(wheelfit) == 1, lines
    assert lines.index("python -m pip install wheelfit") < wheelfit[0]
    assert '--target "${{ matrix.target }}"' in lines[wheelfit[0]]


#: The job run step by step, as the runner runs it: the one whose build differs from the default (Pascal, cu126).
#: The others run the same steps with another ``--target``: their builds are checked by planning them alike.
RUN = "gtx-1080"


def test_every_matrix_entry_plans_its_build(index: Index) -> None:
    """Each entry's ``--target`` gives its build from the same loopback index, planned as the job's one
    ``wheelfit install`` plans it (in process: what varies between entries is the target alone)."""
    for entry in entries():
        env = hermetic_env(WHEELFIT_PYTORCH_INDEX=index.pytorch, WHEELFIT_INDEX_URL=index.default)
        done = wheelfit_in_process(["plan", "torch", "--target", entry["target"], "--json"], env)
        assert done.returncode == 0, done.stderr
        plan = json.loads(done.stdout)
        assert f"{plan['torch_version']}+{plan['variant']}" == EXPECTED[entry["name"]].split()[0], entry


def test_a_matrix_job_runs_and_gets_its_build(
    index: Index, tmp_path_factory: pytest.TempPathFactory, tmp_path: Path
) -> None:
    name = RUN
    (entry,) = [e for e in entries() if e["name"] == name]
    wheels = wheelhouse(tmp_path_factory)
    runner = make_venv(tmp_path / "runner-python", with_pip=True)  # actions/setup-python
    workspace, home = tmp_path / "workspace", tmp_path / "home"
    workspace.mkdir()
    home.mkdir()
    env = hermetic_env(
        HOME=str(home),
        PATH=f"{runner.parent}{os.pathsep}{os.environ['PATH']}",
        CI="true",
        GITHUB_ACTIONS="true",
        GITHUB_WORKSPACE=str(workspace),
        PIP_FIND_LINKS=str(wheels),
        PIP_CACHE_DIR=pip_cache(tmp_path_factory),
        PIP_DISABLE_PIP_VERSION_CHECK="1",
        WHEELFIT_PYTORCH_INDEX=index.pytorch,
        WHEELFIT_INDEX_URL=index.default,
    )
    env.pop("VIRTUAL_ENV", None)
    outputs: list[str] = []
    for step in the_job()["steps"]:
        if "uses" in step:
            continue
        script = tmp_path / "step.sh"
        script.write_text(substitute(str(step["run"]), entry))
        done = subprocess.run(
            ["bash", "-e", str(script)], capture_output=True, text=True, env=env, cwd=workspace, timeout=600
        )
        assert done.returncode == 0, f"step {step.get('name')!r} exited {done.returncode}\n{done.stderr}"
        outputs.append(done.stdout)
    assert_from_wheelhouse(runner, wheels)  # the wheelfit that ran is the one built here
    assert outputs[-1].strip() == EXPECTED[name]
