"""The install set and ``wheelfit.api.install`` driven in memory, as pypa/installer's tests drive its installer:
a fake index (real wheel files, no server), a metadata reader that reads them, and a fake installer backend that
records what it is asked and writes into the environment's directories itself. No subprocess, no server."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from packaging.markers import default_environment
from packaging.requirements import Requirement
from packaging.tags import Tag

from tests.support.wheels import make_torch_like, make_wheel
from wheelfit import api
from wheelfit.install.backend import BackendRequest, BackendResult
from wheelfit.install.errors import BackendError, WheelNotFoundError
from wheelfit.install.install_set import (
    InstallSet,
    Platform,
    WheelMetadata,
    family_files,
    parse_metadata,
    read_wheel_metadata,
)
from wheelfit.install.run import BackendOptions
from wheelfit.install.target_env import TargetEnv
from wheelfit.probe.target import load_target
from wheelfit.resolve import Plan
from wheelfit.simple.links import FileLink

GTX_1080 = "cuda=6.1,driver=580.95.05"


@dataclass
class FakeSource:
    """The plan's variant index as a folder of wheel files."""

    folder: Path
    index_url: str = "memory://pytorch/cu126"
    fetched: list[str] = field(default_factory=list)

    def files(self, project: str) -> Sequence[FileLink]:
        return [
            FileLink(p.name, f"{self.index_url}/{p.name}", {"sha256": hashlib.sha256(p.read_bytes()).hexdigest()})
            for p in sorted(self.folder.glob("*.whl"))
            if p.name.split("-")[0].replace("_", "-") == project
        ]

    def metadata(self, link: FileLink) -> WheelMetadata:
        """The reader's side: METADATA from the file (as a PEP 658 file would give it), nothing downloaded."""
        self.fetched.append(link.filename)
        return parse_metadata(read_wheel_metadata(self.folder / link.filename, link.filename), link)


@dataclass
class FakeInstaller:
    """Records each request; writes one file per requirement into site-packages, then answers ``returncode``."""

    site: Path
    returncode: int = 0
    name: str = "fake"
    requests: list[BackendRequest] = field(default_factory=list)
    constraints: list[str] = field(default_factory=list)

    def install(self, request: BackendRequest) -> BackendResult:
        self.requests.append(request)
        assert request.constraints is not None
        self.constraints.append(request.constraints.read_text())
        for req in request.requirements:
            (self.site / f"{req.split(' ')[0]}.installed").write_text(req)
        if self.returncode:
            return BackendResult(self.returncode, "", "error: the disk is full")
        return BackendResult(0, "", "", installs=tuple(r.split(" @ ")[0] for r in request.requirements))


@pytest.fixture
def env(tmp_path: Path) -> TargetEnv:
    prefix = tmp_path / "env"
    site, scripts = prefix / "lib" / "site-packages", prefix / "bin"
    site.mkdir(parents=True)
    scripts.mkdir()
    (site / "already.py").write_text("kept\n")
    markers = {key: str(value) for key, value in default_environment().items()}
    return TargetEnv(
        executable=str(scripts / "python"),
        prefix=prefix,
        python=markers["python_version"],
        tags=("py3-none-any",),
        markers=markers,
        install_dirs=(site, scripts),
        installed={},
    )


@pytest.fixture
def plan() -> Plan:
    """The knowledge base's plan for a GTX 1080: torch 2.14.1+cu126 and torchvision 0.29.1+cu126."""
    target = api.Target(load_target(GTX_1080))
    return api.plan(["torch", "torchvision"], target, api.PlanOptions(), environ={}, network=None)


@pytest.fixture
def source(tmp_path: Path) -> FakeSource:
    folder = tmp_path / "wheels"
    make_torch_like(folder, "2.14.1", "cu126", requires=["smallnum>=1.0", 'triton==3.5.1; platform_system == "Linux"'])
    make_torch_like(folder, "2.15.0", "cu126")  # a newer torch the plan does not pin: never taken
    make_wheel(folder, "torchvision", "0.29.1+cu126", requires=["torch==2.14.1"])
    make_wheel(folder, "triton", "3.5.1")
    return FakeSource(folder)


def _install_set(plan: Plan, env: TargetEnv, source: FakeSource, others: Sequence[str] = ()) -> InstallSet:
    platform = Platform((Tag("py3", "none", "any"),), env.markers, env.python)
    pins = [Requirement(p.requirement) for p in plan.packages]
    return InstallSet(tuple(family_files(pins, source, source, platform)), tuple(others))


def _options(dry_run: bool = False) -> BackendOptions:
    return BackendOptions("memory://default", {}, dry_run=dry_run)


def test_install_takes_the_plan_from_the_source_and_hands_the_backend_urls_with_hashes(
    plan: Plan, env: TargetEnv, source: FakeSource
) -> None:
    assert (plan.torch_version, plan.variant) == ("2.14.1", "cu126")
    backend = FakeInstaller(env.install_dirs[0])
    wanted = _install_set(plan, env, source, ["numpy"])
    result = api.install(plan, wanted, env, installer=backend, options=_options())
    assert {(w.name, w.version) for w in result.wheels} == {
        ("torch", "2.14.1+cu126"),
        ("torchvision", "0.29.1+cu126"),
        ("triton", "3.5.1"),  # torch's own torch-family dependency, from the same source
    }
    (request,) = backend.requests
    family = [r for r in request.requirements if " @ memory://pytorch/cu126/" in r]
    assert sorted(r.split(" @ ")[0] for r in family) == ["torch", "torchvision", "triton"]
    for line in family:  # the index's sha256 pinned: the backend checks it
        name = line.split(" @ ")[1].split("#")[0].rsplit("/", 1)[1]
        assert line.endswith(f"#sha256={hashlib.sha256((source.folder / name).read_bytes()).hexdigest()}")
    assert "numpy" in request.requirements and request.index_url == "memory://default"
    # Every other torch-family name is unresolvable on the default index.
    blocked = backend.constraints[0].splitlines()
    assert "torchaudio<0" in blocked and "pytorch-triton-rocm<0" in blocked and "torch<0" not in blocked
    assert result.installs == ("torch", "torchvision", "triton", "numpy")
    assert "torch-2.15.0+cu126-py3-none-any.whl" not in source.fetched


def test_a_failed_backend_leaves_the_environment_as_it_was(plan: Plan, env: TargetEnv, source: FakeSource) -> None:
    site = env.install_dirs[0]
    before = sorted(p.name for p in site.iterdir())
    backend = FakeInstaller(site, returncode=1)
    with pytest.raises(BackendError, match="the disk is full"):
        api.install(plan, _install_set(plan, env, source), env, installer=backend, options=_options())
    assert backend.requests  # it ran, and wrote into site-packages before failing
    assert sorted(p.name for p in site.iterdir()) == before
    assert (site / "already.py").read_text() == "kept\n"


def test_without_the_snapshot_a_failed_backend_leaves_what_it_wrote_and_says_so(
    plan: Plan, env: TargetEnv, source: FakeSource
) -> None:
    """``--no-snapshot``: nothing is linked before the backend runs, so nothing is put back; the line says so."""
    site = env.install_dirs[0]
    backend = FakeInstaller(site, returncode=1)
    options = BackendOptions("memory://default", {}, snapshot=False)
    with pytest.raises(BackendError, match="without a snapshot, what it installed before failing stays"):
        api.install(plan, _install_set(plan, env, source), env, installer=backend, options=options)
    assert (site / "torch.installed").exists()
    assert not list(env.prefix.glob(".wheelfit-rollback-*"))


def test_a_dry_run_changes_nothing(plan: Plan, env: TargetEnv, source: FakeSource) -> None:
    site = env.install_dirs[0]
    backend = FakeInstaller(site / "elsewhere")
    (site / "elsewhere").mkdir()
    result = api.install(plan, _install_set(plan, env, source), env, installer=backend, options=_options(True))
    assert result.dry_run and backend.requests[0].dry_run
    assert sorted(p.name for p in site.iterdir()) == ["already.py", "elsewhere"]


def test_a_planned_build_the_source_lacks_is_one_clear_error(plan: Plan, env: TargetEnv, tmp_path: Path) -> None:
    folder = tmp_path / "other"
    make_wheel(folder, "torchvision", "0.29.1+cu126", requires=["torch==2.14.1"])
    with pytest.raises(WheelNotFoundError, match=r"torch==2\.14\.1\+cu126: torch is not on it"):
        _install_set(plan, env, FakeSource(folder))
