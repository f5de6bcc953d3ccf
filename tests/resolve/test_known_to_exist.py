"""issue 31: a plan prefers what is known to exist. With no index page to confirm them, a build the knowledge base
only guesses is published (confidence U) is passed over, with why, for one of the same release it is sure of; an
index that lists the build confirms it, and it may win again.

The knowledge base here is the packaged one with torch 2.15's Linux CUDA builds marked as the issue found them:
cu130 and cu132 primary, cu134 uncertain, so the test does not depend on what the data says this week. The target
names no driver, so every CUDA build's driver fit is unknown and the highest CUDA would win (cu134) on fit alone:
the driver floor of CUDA 13.4 is no part of the decision tested.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from functools import partial
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.conftest import ROOT, hermetic_env
from tests.install.conftest import Index
from tests.install.loopback import serve
from tests.support.inprocess import wheelfit_in_process
from tests.support.wheels import make_torch_like
from wheelfit import api
from wheelfit.fetch import Cache, make_client
from wheelfit.kb.matrix import Knowledge, load_knowledge
from wheelfit.probe.target import load_target
from wheelfit.resolve import Plan

SM89 = "cuda=8.9,python=3.12"


def _kb_file(directory: Path, confidences: dict[str, str]) -> Path:
    """The packaged knowledge base with torch 2.15's Linux x86_64 builds at the given confidences."""
    data: dict[str, Any] = json.loads((ROOT / "src/wheelfit/kb/data/pytorch.json").read_text())
    variants = data["releases"]["2.15"]["platforms"]["linux_x86_64"]["variants"]
    for label, confidence in confidences.items():
        variants[label]["confidence"] = confidence
        variants[label].pop("advertised", None)  # advertised, as the cu134 is
    path = directory / "kb.json"
    path.write_text(json.dumps(data))
    return path


@pytest.fixture(scope="module")
def kb_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _kb_file(tmp_path_factory.mktemp("kb"), {"cu130": "P", "cu132": "P", "cu134": "U"})


@pytest.fixture(scope="module")
def kb(kb_path: Path) -> Knowledge:
    return load_knowledge(kb_path)


@pytest.fixture
def http() -> Iterator[httpx.Client]:
    with make_client(trust_env=False) as client:
        yield client


def plan(kb: Knowledge, net: api.Network | None, pytorch_index: str | None = None) -> Plan:
    return api.plan(["torch==2.15.*"], api.Target(load_target(SM89)),
        api.PlanOptions(kb=kb, pytorch_index=pytorch_index),
        environ={}, network=net)


def passed_over(p: Plan) -> dict[str, str]:
    return {r.variant: r.reason for r in p.rejected if r.judge == "unconfirmed"}


def test_offline_the_uncertain_build_is_passed_over_for_a_sure_one(
    kb: Knowledge, http: httpx.Client, tmp_path: Path
) -> None:
    p = plan(kb, api.Network(http, Cache(tmp_path / "cache"), offline=True))
    assert (p.torch_version, p.variant) == ("2.15.0", "cu132")  # the newest CUDA of the builds known to exist
    assert passed_over(p) == {
        "cu134": "cu134: not known to exist (the knowledge base marks it U, and no index page was read for it); "
        "cu132 is known to exist"
    }
    assert any(w.startswith("--offline and no cached pages") for w in p.warnings)
    # No index at all: the same choice.
    alone = plan(kb, None)
    assert (alone.variant, passed_over(alone)) == ("cu132", passed_over(p))


def test_an_unreachable_index_does_not_confirm_it_either(kb: Knowledge, http: httpx.Client, tmp_path: Path) -> None:
    p = plan(kb, api.Network(http, Cache(tmp_path / "cache")), "http://127.0.0.1:9/whl")
    assert any(w.startswith("could not read the PyTorch index http://127.0.0.1:9/whl") for w in p.warnings)
    assert p.variant == "cu132" and set(passed_over(p)) == {"cu134"}


@pytest.fixture(scope="module")
def mirror(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Index]:
    """torch 2.15.0 built as cu130, cu132 and cu134, as the knowledge base lists them."""
    root = tmp_path_factory.mktemp("mirror")
    index = Index(root, "")
    for label in ("cu130", "cu132", "cu134"):
        index.put(f"pytorch/{label}", partial(make_torch_like, version="2.15.0", variant=label))
    with serve(root) as url:
        yield Index(root, url)


def test_an_index_that_lists_it_confirms_it(kb: Knowledge, mirror: Index, http: httpx.Client, tmp_path: Path) -> None:
    p = plan(kb, api.Network(http, Cache(tmp_path / "cache")), mirror.pytorch)
    assert (p.torch_version, p.variant) == ("2.15.0", "cu134")
    assert p.packages[0].url == f"{mirror.pytorch}/cu134/torch/torch-2.15.0+cu134-py3-none-any.whl"
    assert passed_over(p) == {}


def test_an_uncertain_build_is_still_planned_when_nothing_sure_runs(tmp_path: Path) -> None:
    """Only a sure build of the same release displaces it: with every CUDA build of 2.15 uncertain, the plan is
    what it was, the newest release's best build, not an older release's."""
    kb = load_knowledge(_kb_file(tmp_path, {"cu130": "U", "cu132": "U", "cu134": "U"}))
    p = plan(kb, None)
    assert (p.torch_version, p.variant, passed_over(p)) == ("2.15.0", "cu134", {})


def test_the_command_shows_the_build_passed_over(kb_path: Path) -> None:
    command = ["plan", "torch", "--offline", "--kb", str(kb_path), "--target", SM89, "--explain"]
    env = hermetic_env(COLUMNS="200")
    human = wheelfit_in_process(command, env)
    assert human.returncode == 0, human.stderr
    assert human.stdout.startswith("torch 2.15.0+cu132")
    assert "2.15.0  cu134  cu134: not known to exist (the knowledge base marks it U" in human.stdout
    done = wheelfit_in_process([*command, "--json"], env)
    assert done.returncode == 0, done.stderr
    rows = [r for r in json.loads(done.stdout)["rejected"] if r["variant"] == "cu134"]
    assert [(r["version"], r["judge"]) for r in rows] == [("2.15.0", "unconfirmed")]
