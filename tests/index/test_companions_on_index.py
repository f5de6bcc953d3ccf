"""issue 31: a plan checks every package it pins. ``torch torchvision`` against an index that has the torch but no
torchvision once pinned a torchvision anyway, and only the install failed; now the plan is refused, in one line
naming the pin, the torch it goes with and the index. Offline, with no page to look at, the pin stays as it was.

The versions pinned are the knowledge base's (whatever it pins for torch 2.15.0 this week): each test reads them
from the offline plan, which does not check.
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import partial
from pathlib import Path

import httpx
import pytest

from tests.conftest import hermetic_env
from tests.install.conftest import Index, make_venv
from tests.install.loopback import serve
from tests.support.inprocess import wheelfit_in_process
from tests.support.wheels import make_torch_like, make_wheel
from wheelfit import api
from wheelfit.fetch import Cache, make_client
from wheelfit.probe.target import load_target
from wheelfit.resolve import Plan, ResolveError

RTX_3090 = "cuda=8.6,driver=580.95.05,python=3.12"
TORCH = "torch==2.15.0+cu130"


def offline_pin(name: str) -> tuple[str, str]:
    """The version and requirement the knowledge base pins for ``name`` with torch 2.15.0+cu130 (no index read)."""
    p = api.plan([TORCH, name], api.Target(load_target(RTX_3090)), api.PlanOptions(), environ={}, network=None)
    pin = next(pin for pin in p.packages if pin.name == name)
    return pin.version, pin.requirement


def mirror_with(root: Path, *companions: partial[Path]) -> Index:
    index = Index(root, "")
    index.put("pytorch/cu130", partial(make_torch_like, version="2.15.0", variant="cu130"))
    for make in companions:
        index.put("pytorch/cu130", make)
    return index


@pytest.fixture(scope="module")
def bare(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Index]:
    """torch 2.15.0+cu130 and nothing else."""
    index = mirror_with(tmp_path_factory.mktemp("bare"))
    with serve(index.root) as url:
        yield Index(index.root, url)


@pytest.fixture
def http() -> Iterator[httpx.Client]:
    with make_client(trust_env=False) as client:
        yield client


def plan(index: Index, http: httpx.Client, cache: Path, *reqs: str, offline: bool = False) -> Plan:
    net = api.Network(http, Cache(cache), offline=offline)
    return api.plan([TORCH, *reqs], api.Target(load_target(RTX_3090)), api.PlanOptions(pytorch_index=index.pytorch),
        environ={}, network=net)


@pytest.mark.parametrize("name", ["torchvision", "triton"])
def test_a_companion_the_index_lacks_refuses_the_plan(
    name: str, bare: Index, http: httpx.Client, tmp_path: Path
) -> None:
    _, requirement = offline_pin(name)
    with pytest.raises(ResolveError) as refused:
        plan(bare, http, tmp_path, name)
    assert str(refused.value) == (
        f"{requirement}, planned with torch 2.15.0+cu130, is not on the index for this machine "
        f"({bare.pytorch}/cu130: no {name} there)"
    )


def test_offline_the_pin_is_kept_unchecked(bare: Index, http: httpx.Client, tmp_path: Path) -> None:
    """The torch page cached, the torchvision page never read: an offline plan cannot check, and pins as before."""
    assert plan(bare, http, tmp_path, offline=False).packages[0].url is not None  # caches torch's page
    p = plan(bare, http, tmp_path, "torchvision", offline=True)
    assert p.packages[0].url is not None  # torch from the cached page
    version, requirement = offline_pin("torchvision")
    assert [(pin.name, pin.requirement) for pin in p.packages[1:]] == [("torchvision", requirement)]
    assert version in requirement


def test_a_companion_on_the_index_is_planned(tmp_path: Path, http: httpx.Client) -> None:
    version, requirement = offline_pin("torchvision")
    vision = partial(make_wheel, name="torchvision", version=f"{version}+cu130", requires=["torch==2.15.0"])
    index = mirror_with(tmp_path / "mirror", vision)
    with serve(index.root) as url:
        p = plan(Index(index.root, url), http, tmp_path / "cache", "torchvision")
    assert [pin.requirement for pin in p.packages] == [TORCH, requirement]


def test_other_versions_or_platforms_are_named(tmp_path: Path, http: httpx.Client) -> None:
    version, requirement = offline_pin("torchvision")
    older = partial(make_wheel, name="torchvision", version="0.1.0+cu130")
    windows = partial(make_wheel, name="torchvision", version=f"{version}+cu130", tag="cp312-cp312-win_amd64")
    for makers, has in (
        ((older,), "its torchvision versions are 0.1.0+cu130"),
        ((windows,), f"no wheel for {requirement} fits Python 3.12"),
    ):
        index = mirror_with(tmp_path / has.split()[0], *makers)
        with serve(index.root) as url, pytest.raises(ResolveError) as refused:
            plan(Index(index.root, url), http, tmp_path / "cache" / has.split()[0], "torchvision")
        assert f"{requirement}, planned with torch 2.15.0+cu130, is not on the index for this machine" in str(
            refused.value
        )
        assert f"({url}/pytorch/cu130: {has}" in str(refused.value)


def test_the_command_fails_in_one_line(bare: Index, tmp_path: Path) -> None:
    _, requirement = offline_pin("torchvision")
    done = wheelfit_in_process(
        ["plan", "torch", "torchvision", "--target", RTX_3090, "--pytorch-index", bare.pytorch],
        hermetic_env(WHEELFIT_CACHE_DIR=str(tmp_path / "cache")),
    )
    assert done.returncode == 1, done.stdout
    assert done.stdout == "" and len(done.stderr.strip().splitlines()) == 1
    assert f"{requirement}, planned with torch 2.15.0+cu130" in done.stderr and f"{bare.pytorch}/cu130" in done.stderr


def test_a_companion_given_as_a_file_is_not_looked_up(bare: Index, tmp_path: Path) -> None:
    """``wheelfit install torch ./torchvision-...whl``: the file given is installed, whatever the index has."""
    version, _ = offline_pin("torchvision")
    given = make_wheel(tmp_path / "files", "torchvision", f"{version}+cu130", requires=["torch==2.15.0"])
    python = make_venv(tmp_path / "venv")
    done = wheelfit_in_process(
        ["install", "torch", str(given), "--target", "cuda=8.6,driver=580.95.05", "--python", str(python),
         "--pytorch-index", bare.pytorch, "--dry-run"],
        hermetic_env(WHEELFIT_CACHE_DIR=str(tmp_path / "cache"), UV_CACHE_DIR=str(tmp_path / "uv")),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert f"torchvision {version}+cu130" in done.stdout and given.as_uri().replace("+", "%2B") in done.stdout
