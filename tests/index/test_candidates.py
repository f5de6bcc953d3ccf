"""The index says what exists, the knowledge base what it holds: plans over a loopback mirror of the PyTorch
index that lacks builds the knowledge base lists, and has a release the knowledge base does not know.

The knowledge base (``src/wheelfit/kb/data/pytorch.json``) says: torch 2.15.0 publishes rocm7.14 (and, likely,
rocm10.0), 2.14.1 rocm7.2 and rocm7.14, builds that list gfx1103 (confidence U); 2.13.0's rocm7.1/7.2 list it
too (S); cu130 has sm_75-sm_120 SASS in 2.15; it knows no release after 2.15: 2.16 is a test-channel line (release
candidates), 2.17 a nightly line.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from functools import partial
from pathlib import Path

import httpx
import pytest
from packaging.specifiers import SpecifierSet

from tests.conftest import hermetic_env
from tests.install.conftest import Index, import_torch, installed, make_venv
from tests.install.loopback import serve
from tests.support.inprocess import wheelfit_in_process
from tests.support.wheels import make_torch_like, make_wheel
from wheelfit import api
from wheelfit.fetch import Cache, make_client
from wheelfit.probe.target import load_target
from wheelfit.resolve import Plan, ResolveError

GFX1103 = "rocm=gfx1103,python=3.12"
RTX_3090 = "cuda=8.6,driver=580.95.05,python=3.12"


@pytest.fixture(scope="module")
def mirror(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Index]:
    """A mirror with 2.14.1+rocm7.2 but no rocm7.14 at all and no 2.15.0 ROCm build; cu130 up to 2.18.0, a
    release newer than the knowledge base, with its torchvision, 2.16.0 (the knowledge base's release candidates,
    released) and 2.17.0 (its nightly line, released), and Triton 3.9; cpu 2.15.0."""
    root = tmp_path_factory.mktemp("mirror")
    index = Index(root, "")
    index.put("pytorch/rocm7.2", partial(make_torch_like, version="2.14.1", variant="rocm7.2"))
    index.put("pytorch/rocm7.2", partial(make_torch_like, version="2.13.0", variant="rocm7.2"))
    for version in ("2.15.0", "2.16.0", "2.17.0", "2.18.0"):
        index.put("pytorch/cu130", partial(make_torch_like, version=version, variant="cu130"))
    index.put(
        "pytorch/cu130", partial(make_wheel, name="torchvision", version="0.33.0+cu130", requires=["torch==2.18.0"])
    )
    index.put("pytorch/cu130", partial(make_wheel, name="triton", version="3.9.0"))
    index.put("pytorch/cpu", partial(make_torch_like, version="2.15.0", variant="cpu"))
    index.put("default/simple", partial(make_wheel, name="smallnum", version="1.0"))
    with serve(root) as url:
        yield Index(root, url)


@pytest.fixture
def http() -> Iterator[httpx.Client]:
    with make_client(trust_env=False) as client:
        yield client


def plan(mirror: Index, http: httpx.Client, tmp_path: Path, target: str, *reqs: str, offline: bool = False) -> Plan:
    net = api.Network(http, Cache(tmp_path / "cache"), offline=offline)
    return api.plan(list(reqs) or ["torch"], api.Target(load_target(target)),
        api.PlanOptions(pytorch_index=mirror.pytorch),
        environ={}, network=net)


def test_a_build_the_mirror_lacks_is_skipped_for_the_newest_one_it_has(
    mirror: Index, http: httpx.Client, tmp_path: Path
) -> None:
    p = plan(mirror, http, tmp_path, GFX1103)
    # The knowledge base alone would say 2.15.0+rocm7.14 (the highest ROCm of the newest release).
    offline = api.plan(["torch"], api.Target(load_target(GFX1103)), api.PlanOptions(), environ={}, network=None)
    assert (offline.torch_version, offline.variant) == ("2.15.0", "rocm7.14")
    assert (p.torch_version, p.variant) == ("2.14.1", "rocm7.2")
    assert p.packages[0].url == f"{mirror.pytorch}/rocm7.2/torch/torch-2.14.1+rocm7.2-py3-none-any.whl"
    absent = {(r.version, r.variant): r.reason for r in p.rejected if r.judge == "absent"}
    assert absent[("2.15.0", "rocm7.14")] == f"rocm7.14: not on the index ({mirror.pytorch}/rocm7.14)"
    assert ("2.14.1", "rocm7.14") in absent
    # The pick rests on a knowledge-base fact marked U: the plan says which, with its source.
    torch = p.packages[0]
    assert torch.confidence == "U"
    assert [f.what for f in torch.uncertain] == ["the kernels of torch 2.14 rocm7.2 (linux_x86_64)"]
    assert torch.uncertain[0].source  # a public source, not a file outside the repository
    d = p.to_dict()
    assert d["packages"][0]["uncertain"][0]["confidence"] == "U"
    assert d["sources"][1] == f"index: {mirror.pytorch}"


def test_a_release_newer_than_the_knowledge_base_is_inferred(mirror: Index, http: httpx.Client, tmp_path: Path) -> None:
    p = plan(mirror, http, tmp_path, RTX_3090, "torch", "torchvision")
    assert (p.torch_version, p.variant) == ("2.18.0", "cu130")
    torch, vision = p.packages
    assert torch.confidence == "inferred"
    assert "inferred from the same build of torch 2.17" in torch.uncertain[-1].source  # the nightly line's
    span = "2.5-2.15, test 2.16, nightly 2.17"
    assert any(f"newer than the knowledge base ({span})" in w and "inferred" in w for w in p.warnings)
    # No pin is known for its torchvision: the index's newest that fits torch is taken at install time.
    assert (vision.requirement, vision.confidence) == ("torchvision", "inferred")
    # And a pin past the knowledge base is planned from the index, not refused as a hardware problem.
    pinned = plan(mirror, http, tmp_path, RTX_3090, "torch>=2.16,<2.17")
    assert pinned.torch_version == "2.16.0"
    # A release the knowledge base knows as release candidates takes that line's facts, with their confidence.
    (kernels,) = [f for f in pinned.packages[0].uncertain if f.what.startswith("the kernels")]
    assert kernels.confidence == "U"
    assert kernels.source.startswith("the knowledge base's torch 2.16 release candidates cu130")
    # A released 2.17.0 takes the nightly line's kernels, never its dev companions: torchvision is the index's.
    released = plan(mirror, http, tmp_path, RTX_3090, "torch==2.17.0", "torchvision")
    assert released.torch_version == "2.17.0"
    assert released.packages[0].uncertain[0].source.startswith("the knowledge base's torch 2.17 nightly cu130")
    assert (released.packages[1].requirement, released.packages[1].confidence) == ("torchvision", "inferred")


@pytest.mark.parametrize("target", [RTX_3090, "os=windows,cuda=8.6,driver=581.42,python=3.12"])
def test_a_released_2_16_0_plans_its_companions_alike_on_every_platform(
    mirror: Index, http: httpx.Client, tmp_path: Path, target: str
) -> None:
    """issue 31: a 2.16.0 on the release index once pinned the 2.16 nightlies' torchvision on Linux (a dev range in
    the version field, shown as certain) and left it to the index on Windows. Now both take the facts of the
    knowledge base's 2.16 release candidates: Triton 3.9 (U) where torch requires Triton, torchvision unpinned."""
    p = plan(mirror, http, tmp_path, target, "torch==2.16.0", "torchvision", "triton")
    assert (p.torch_version, p.variant) == ("2.16.0", "cu130")
    by_name = {pin.name: pin for pin in p.packages}
    torch, vision = by_name["torch"], by_name["torchvision"]
    assert torch.confidence == "U"
    assert torch.uncertain[0].source.startswith("the knowledge base's torch 2.16 release candidates cu130")
    assert (vision.requirement, vision.version, vision.confidence) == ("torchvision", "", "inferred")
    assert not any("newer than the knowledge base" in w for w in p.warnings)
    if "windows" in target:
        assert "triton" not in by_name and any("Triton on Linux only" in w for w in p.warnings)
    else:
        triton = by_name["triton"]
        assert (triton.requirement, triton.confidence) == (f"triton{SpecifierSet('~=3.9.0')}", "U")
        assert [f.what for f in triton.uncertain] == ["the companions of torch 2.16.0"]


def test_missing_knowledge_is_said_to_be_missing_knowledge(mirror: Index, http: httpx.Client, tmp_path: Path) -> None:
    with pytest.raises(ResolveError) as offline:
        api.plan(["torch==2.15.1"], api.Target(load_target(RTX_3090)), api.PlanOptions(), environ={}, network=None)
    message = str(offline.value)
    assert "knowledge base covers torch 2.5-2.15, test 2.16, nightly 2.17 (updated " in message
    assert "the PyTorch index was not read" in message
    assert "--kb FILE" in message
    with pytest.raises(ResolveError, match=r"knowledge base covers torch 2\.5-2\.15.* does not have it either"):
        plan(mirror, http, tmp_path, RTX_3090, "torch==2.19.0")


def test_offline_plans_from_the_cached_pages(mirror: Index, http: httpx.Client, tmp_path: Path) -> None:
    online = plan(mirror, http, tmp_path, GFX1103)
    cached = plan(mirror, http, tmp_path, GFX1103, offline=True)
    assert (cached.torch_version, cached.variant) == (online.torch_version, online.variant) == ("2.14.1", "rocm7.2")
    empty = plan(mirror, http, tmp_path / "elsewhere", GFX1103, offline=True)
    assert (empty.torch_version, empty.variant) == ("2.15.0", "rocm7.14")  # the knowledge base alone, and said so
    assert any("--offline and no cached pages" in w for w in empty.warnings)


def test_an_unreachable_index_plans_from_the_knowledge_base_and_says_so(http: httpx.Client, tmp_path: Path) -> None:
    net = api.Network(http, Cache(tmp_path / "cache"))
    p = api.plan(["torch"], api.Target(load_target(GFX1103)), api.PlanOptions(pytorch_index="http://127.0.0.1:9/whl"),
        environ={}, network=net)
    assert (p.torch_version, p.variant) == ("2.15.0", "rocm7.14")
    assert any(w.startswith("could not read the PyTorch index http://127.0.0.1:9/whl") for w in p.warnings)
    assert p.sources[1] == "index: not read (planned from the knowledge base alone)"


def test_the_command_shows_skipped_and_uncertain_builds(mirror: Index, tmp_path: Path) -> None:
    env = hermetic_env(WHEELFIT_CACHE_DIR=str(tmp_path / "cache"), COLUMNS="200")
    args = ["plan", "torch", "--target", GFX1103, "--pytorch-index", mirror.pytorch, "--explain"]
    done = wheelfit_in_process(args, env)
    assert done.returncode == 0, done.stderr
    assert "torch 2.14.1+rocm7.2" in done.stdout
    assert "rocm7.14: not on the index" in done.stdout
    assert "Uncertain" in done.stdout and "the kernels of torch 2.14 rocm7.2 (linux_x86_64) (U)" in done.stdout


def test_install_takes_the_newest_build_the_mirror_has(mirror: Index, tmp_path: Path) -> None:
    """The gfx1103 case end to end: a real uv install of what the mirror really has."""
    python = make_venv(tmp_path / "venv")
    env = hermetic_env(WHEELFIT_CACHE_DIR=str(tmp_path / "cache"), UV_CACHE_DIR=str(tmp_path / "uv"))
    args = ["install", "torch", "--target", GFX1103.replace("python=3.12", "os=linux"), "--python", str(python)]
    args += ["--pytorch-index", mirror.pytorch, "--index-url", mirror.default, "--json"]
    done = wheelfit_in_process(args, env)
    assert done.returncode == 0, done.stderr
    assert installed(python, env)["torch"] == "2.14.1+rocm7.2"
    assert import_torch(python, env)[0] == "2.14.1+rocm7.2"
    out = json.loads(done.stdout)
    assert out["plan"]["packages"][0]["confidence"] == "U"
    assert out["verify"]["ok"] is True


@pytest.fixture(scope="module")
def channels(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Index]:
    """torch 2.15.0+cu130 released, a 2.16.0 release candidate on ``<base>/test/cu130`` and a 2.17 nightly on
    ``<base>/nightly/cu130`` with its torchvision; the CPU build has 2.16.0 both released and as a release
    candidate."""
    root = tmp_path_factory.mktemp("channels")
    index = Index(root, "")
    index.put("pytorch/cu130", partial(make_torch_like, version="2.15.0", variant="cu130"))
    index.put("pytorch/test/cu130", partial(make_torch_like, version="2.16.0", variant="cu130"))
    index.put("pytorch/nightly/cu130", partial(make_torch_like, version="2.17.0.dev20261201", variant="cu130"))
    vision = partial(make_wheel, name="torchvision", version="0.32.0.dev20261201+cu130")
    index.put("pytorch/nightly/cu130", partial(vision, requires=["torch==2.17.0.dev20261201"]))
    index.put("pytorch/cpu", partial(make_torch_like, version="2.15.0", variant="cpu"))
    index.put("pytorch/test/cpu", partial(make_torch_like, version="2.16.0", variant="cpu"))
    index.put("pytorch/cpu", partial(make_torch_like, version="2.16.0", variant="cpu"))
    with serve(root) as url:
        yield Index(root, url)


def test_unreleased_builds_only_with_pre(channels: Index, http: httpx.Client, tmp_path: Path) -> None:
    """The knowledge base's 2.16 release candidates (test channel) and 2.17 nightly line are planned only when
    pre-releases are asked for, each from its own index, with the line's facts (U)."""
    target = api.Target(load_target(RTX_3090))
    net = api.Network(http, Cache(tmp_path / "cache"))
    released = api.plan(["torch"], target, api.PlanOptions(pytorch_index=channels.pytorch), environ={}, network=net)
    assert (released.torch_version, released.variant) == ("2.15.0", "cu130")
    pre = api.plan(["torch", "torchvision"], target, api.PlanOptions(pytorch_index=channels.pytorch, pre=True),
        environ={}, network=net)
    assert (pre.torch_version, pre.variant) == ("2.17.0.dev20261201", "cu130")
    assert pre.index_url == f"{channels.pytorch}/nightly/cu130"
    torch, vision = pre.packages
    assert torch.requirement == "torch==2.17.0.dev20261201+cu130" and torch.confidence == "U"
    assert vision.requirement == f"torchvision{SpecifierSet('>=0.30.0.dev0')}"  # the nightly line's pairing
    assert vision.confidence == "U"
    # The release candidates: the test index, under the version the release will have.
    rc = api.plan(["torch<2.17"], target, api.PlanOptions(pytorch_index=channels.pytorch, pre=True),
        environ={}, network=net)
    assert (rc.torch_version, rc.variant, rc.index_url) == ("2.16.0", "cu130", f"{channels.pytorch}/test/cu130")
    assert rc.packages[0].uncertain[0].source.startswith("the knowledge base's torch 2.16 release candidates cu130")
    # Without an index there is nothing to pin: the plan says so.
    offline = api.plan(["torch"], target, api.PlanOptions(pre=True), environ={}, network=None)
    assert offline.torch_version == "2.15.0"
    assert any("nightly builds and release candidates are planned only from the index" in w for w in offline.warnings)


def test_a_released_candidate_comes_from_the_release_index(
    channels: Index, http: httpx.Client, tmp_path: Path
) -> None:
    """Once 2.16.0 is released, the release index's build is planned, not the test channel's of the same version."""
    net = api.Network(http, Cache(tmp_path / "cache"))
    target = api.Target(load_target("os=linux,arch=x86_64,python=3.12"))
    p = api.plan(["torch==2.16.0"], target, api.PlanOptions(pytorch_index=channels.pytorch, pre=True),
        environ={}, network=net)
    assert (p.torch_version, p.variant, p.index_url) == ("2.16.0", "cpu", f"{channels.pytorch}/cpu")
    assert p.packages[0].url == f"{channels.pytorch}/cpu/torch/torch-2.16.0+cpu-py3-none-any.whl"
