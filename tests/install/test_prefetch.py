"""The backend's cache is warmed with the default-index dependencies while wheelfit downloads torch
(src/wheelfit/install/prefetch.py): real uv installs from a loopback index that serves PEP 658 metadata, with the
torch wheel served slowly so there is a download to overlap with. Correctness only, not timing: what was fetched,
when, and from where."""

from __future__ import annotations

import shutil
from functools import partial
from pathlib import Path

import pytest

from tests.conftest import hermetic_env
from tests.support.wheels import make_torch_like, make_wheel
from wheelfit.install.prefetch import default_index_dependencies, missing

from .conftest import Index, installed, make_venv, run_wheelfit
from .pep658_index import Request, Served, serve_pep658

GTX_1080 = "cuda=6.1,driver=580.95.05"
TORCH_WHEEL = "/pytorch/cu126/torch/torch-2.14.1+cu126"
#: A torch download long enough to overlap with: the warm-up runs while it does.
SLOW = 2.0


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory) -> Index:
    root = tmp_path_factory.mktemp("pep658-index")
    idx = Index(root, "")
    requires = ["smallnum>=1.0", 'triton==3.5.1; platform_system == "Linux"', 'winonly; platform_system == "Windows"']
    idx.put("pytorch/cu126", partial(make_torch_like, version="2.14.1", variant="cu126", requires=requires))
    idx.put("pytorch/cu126", partial(make_wheel, name="triton", version="3.5.1"))
    idx.put("default/simple", partial(make_wheel, name="smallnum", version="1.0"))
    idx.put("default/simple", partial(make_wheel, name="triton", version="99.0"))  # the squatter
    idx.put("default/simple", partial(make_wheel, name="needstriton", version="1.0", requires=["triton"]))
    return idx


def _install(index: Index, served: Served, tmp_path: Path, *extra: str) -> tuple[int, str, Path]:
    python = make_venv(tmp_path / "venv")
    # Fresh caches (uv's and wheelfit's): cold, as a first install; TMPDIR to see what the warm-up leaves behind.
    (tmp_path / "tmp").mkdir()
    env = hermetic_env(
        UV_CACHE_DIR=str(tmp_path / "uv"), WHEELFIT_CACHE_DIR=str(tmp_path / "wf"), TMPDIR=str(tmp_path / "tmp")
    )
    args = ["install", "torch==2.14.1", *extra, "--target", GTX_1080, "--python", str(python), "--no-verify"]
    done = run_wheelfit(
        [*args, "--pytorch-index", f"{served.url}/pytorch", "--index-url", f"{served.url}/default/simple"], env
    )
    return done.returncode, done.stderr, python


def _files(served: Served, part: str) -> list[Request]:
    """Downloads of wheels (not their PEP 658 metadata) whose path contains ``part``."""
    return [r for r in served.fetched(part) if r.path.endswith(".whl")]


def _torch_done(served: Served) -> float:
    (torch,) = _files(served, TORCH_WHEEL)
    assert torch.end - torch.start >= SLOW
    return torch.end


def test_dependencies_are_downloaded_during_the_torch_download_and_installed_from_the_cache(
    index: Index, tmp_path: Path
) -> None:
    with serve_pep658(index.root, slow={TORCH_WHEEL: SLOW}) as served:
        code, stderr, python = _install(index, served, tmp_path)
    assert code == 0, stderr
    have = installed(python, hermetic_env())
    assert {k: have[k] for k in ("torch", "triton", "smallnum")} == {
        "torch": "2.14.1+cu126", "triton": "3.5.1", "smallnum": "1.0",
    }  # fmt: skip
    assert "winonly" not in have
    # One download (the install found the warm-up's copy in uv's cache), while wheelfit was still downloading torch.
    (wheel,) = _files(served, "/default/simple/smallnum/smallnum-1.0-py3-none-any.whl")
    assert wheel.end < _torch_done(served)  # fetched while wheelfit was still downloading torch
    assert not served.fetched("/default/simple/triton/triton-99")  # never the squatter
    assert not served.fetched("/default/simple/winonly")  # markers were evaluated for the target
    assert list((tmp_path / "tmp").iterdir()) == []  # the warm-up's target directory is gone


def test_torch_is_unpacked_while_the_dependencies_still_download(index: Index, tmp_path: Path) -> None:
    """A dependency slower than torch: the warm-up still runs when torch is in, so uv unpacks torch into its
    cache meanwhile (into a second throw-away target). The install is the same, and nothing is left behind."""
    slow = {TORCH_WHEEL: SLOW, "/default/simple/smallnum/smallnum-1.0-py3-none-any.whl": 2 * SLOW}
    with serve_pep658(index.root, slow=slow) as served:
        code, stderr, python = _install(index, served, tmp_path)
    assert code == 0, stderr
    have = installed(python, hermetic_env())
    assert (have["torch"], have["triton"], have["smallnum"]) == ("2.14.1+cu126", "3.5.1", "1.0")
    (wheel,) = _files(served, "/default/simple/smallnum/smallnum-1.0-py3-none-any.whl")
    assert wheel.start < _torch_done(served) < wheel.end  # torch was in while the warm-up was still downloading
    assert list((tmp_path / "tmp").iterdir()) == []


def test_a_failing_warmup_neither_fails_the_install_nor_reaches_the_squatted_triton(
    index: Index, tmp_path: Path
) -> None:
    """``needstriton`` (default index) depends on ``triton``. During the warm-up every torch-family name is
    unresolvable, so uv's warm-up fails instead of taking the default index's triton 99.0; the install then
    brings triton 3.5.1 from the PyTorch index, as planned."""
    with serve_pep658(index.root, slow={TORCH_WHEEL: SLOW}) as served:
        code, stderr, python = _install(index, served, tmp_path, "needstriton")
    assert code == 0, stderr
    have = installed(python, hermetic_env())
    assert (have["triton"], have["needstriton"], have["smallnum"]) == ("3.5.1", "1.0", "1.0")
    # The warm-up ran (it read needstriton's page while torch was still downloading) ...
    assert min(r.start for r in served.fetched("/default/simple/needstriton/")) < _torch_done(served)
    # ... and neither it nor the install ever fetched the squatter's metadata or wheel.
    assert not served.fetched("/default/simple/triton/triton-99")
    assert list((tmp_path / "tmp").iterdir()) == []


def test_no_warmup_when_the_torch_wheel_is_in_wheelfit_s_cache(index: Index, tmp_path: Path) -> None:
    """A re-run (torch in wheelfit's cache, checked in milliseconds) has nothing to overlap with: no warm-up, the
    install alone fetches the dependencies. A cold run starts one at once (the tests above)."""
    with serve_pep658(index.root, slow={TORCH_WHEEL: SLOW}) as served:
        code, stderr, _python = _install(index, served, tmp_path)
        assert code == 0, stderr
        served.log.clear()
        shutil.rmtree(tmp_path / "uv")  # uv's cache empty again: the install has to fetch smallnum itself
        shutil.rmtree(tmp_path / "venv")
        shutil.rmtree(tmp_path / "tmp")
        code, stderr, _python = _install(index, served, tmp_path)
    assert code == 0, stderr
    assert not _files(served, TORCH_WHEEL)  # taken from wheelfit's cache
    # One look at the default index (the install's); a warm-up would have read the page too.
    assert [r.path for r in served.log if r.path.startswith("/default/")] == [
        "/default/simple/smallnum/", "/default/simple/smallnum/smallnum-1.0-py3-none-any.whl.metadata",
        "/default/simple/smallnum/smallnum-1.0-py3-none-any.whl",
    ]  # fmt: skip


def test_default_index_dependencies_skip_the_torch_family_and_markers_that_do_not_hold() -> None:
    metadata = (
        b"Metadata-Version: 2.1\nName: torch\nVersion: 2.14.1+cu126\n"
        b"Requires-Dist: filelock\n"
        b"Requires-Dist: nvidia-cublas-cu12==12.6.4.1; platform_system == 'Linux'\n"
        b"Requires-Dist: triton==3.5.1; platform_system == 'Linux'\n"
        b"Requires-Dist: pytorch-triton-rocm==3.6.0\n"
        b"Requires-Dist: opt-einsum>=3.3; extra == 'opt-einsum'\n"
        b"Requires-Dist: winonly; platform_system == 'Windows'\n\n"
    )
    linux = {"platform_system": "Linux", "python_version": "3.11", "sys_platform": "linux"}
    assert default_index_dependencies(metadata, linux) == ["filelock", "nvidia-cublas-cu12==12.6.4.1"]


def test_requirements_the_environment_meets_are_not_warmed() -> None:
    """An environment that has the nvidia-* wheels at the versions torch wants keeps them: nothing to fetch."""
    installed = {"NVIDIA_cublas_cu12": "12.6.4.1", "filelock": "3.0"}
    wanted = ["nvidia-cublas-cu12==12.6.4.1", "filelock>=3.10", "sympy"]
    assert missing(wanted, installed) == ["filelock>=3.10", "sympy"]
