"""From a bare Python to the right torch in a CI environment: ``pip install wheelfit`` and one wheelfit command.

The wheels of wheelfit and its five providers are built once per session (:func:`wheelhouse`, shared with the
recipe tests), as a user's index would serve them; a fresh venv that has only pip installs ``wheelfit`` from
that folder (``--find-links``; third-party dependencies from the package registry), and that venv's ``wheelfit``
installs torch and torchvision for a GTX 1080 into another fresh venv from the loopback indexes.
"""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from tests.conftest import hermetic_env
from tests.install.conftest import Index, import_torch, index, installed, make_venv
from tests.test_distributions import PROJECTS

__all__ = ["index"]  # the install fixtures' loopback index, used here by name

GTX_1080 = "cuda=6.1,driver=580.95.05"

_BUILT: dict[Path, Path] = {}


def wheelhouse(factory: pytest.TempPathFactory) -> Path:
    """The six wheels in one folder, built once per session by one pip process (each in its own isolated build
    environment, as any installer builds them)."""
    base = factory.getbasetemp()
    if base not in _BUILT:
        wheels = factory.mktemp("wheelhouse")
        argv = [sys.executable, "-m", "pip", "--disable-pip-version-check", "wheel", "-q", "--no-deps"]
        argv += ["-w", str(wheels), *map(str, PROJECTS.values())]
        done = subprocess.run(argv, capture_output=True, text=True, env=hermetic_env(), timeout=600, check=False)
        assert done.returncode == 0, done.stderr
        assert len(list(wheels.glob("*.whl"))) == len(PROJECTS), sorted(wheels.iterdir())
        _BUILT[base] = wheels
    return _BUILT[base]


def pip_cache(factory: pytest.TempPathFactory) -> str:
    """One pip cache for the session: each fresh venv downloads wheelfit's dependencies from the registry once."""
    path = factory.getbasetemp() / "pip-cache"
    path.mkdir(exist_ok=True)
    return str(path)


def assert_from_wheelhouse(python: Path, wheels: Path) -> None:
    """The environment's ``wheelfit`` is the built wheel's (its RECORD lists the same files with the same hashes),
    not a distribution of that name from the registry."""
    (wheel,) = wheels.glob("wheelfit-[0-9]*.whl")
    with zipfile.ZipFile(wheel) as zf:
        (record,) = [n for n in zf.namelist() if n.endswith(".dist-info/RECORD")]
        built = {line for line in zf.read(record).decode().splitlines() if line.startswith("wheelfit/")}
    script = "import importlib.metadata as m; print(m.distribution('wheelfit').read_text('RECORD'))"
    out = subprocess.run([str(python), "-c", script], capture_output=True, text=True, check=True).stdout
    got = {line for line in out.splitlines() if line.startswith("wheelfit/") and "__pycache__" not in line}
    assert built and got == built


def test_pip_install_wheelfit_then_one_command_installs_the_planned_torch(
    index: Index, tmp_path_factory: pytest.TempPathFactory, tmp_path: Path
) -> None:
    wheels = wheelhouse(tmp_path_factory)
    env = hermetic_env(
        PIP_CACHE_DIR=pip_cache(tmp_path_factory),
        UV_CACHE_DIR=str(tmp_path / "uv-cache"),
        WHEELFIT_CACHE_DIR=str(tmp_path / "wheelfit-cache"),
    )
    # The bare Python: a venv with what ``python -m venv`` gives it (pip; setuptools too before Python 3.12).
    tools = make_venv(tmp_path / "tools", with_pip=True)
    assert set(installed(tools, env)) <= {"pip", "setuptools"}
    pip = [str(tools), "-m", "pip", "--disable-pip-version-check", "install", "-q", "--find-links", str(wheels)]
    done = subprocess.run([*pip, "wheelfit"], capture_output=True, text=True, env=env, timeout=600, check=False)
    assert done.returncode == 0, done.stderr
    assert_from_wheelhouse(tools, wheels)

    # The CI environment, and the one command.
    ci = make_venv(tmp_path / "ci")
    argv = [str(tools.parent / "wheelfit"), "install", "torch", "torchvision", "--python", str(ci)]
    argv += ["--target", GTX_1080, "--pytorch-index", index.pytorch, "--index-url", index.default]
    done = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    # A GTX 1080 (sm_61) has kernels in cu126, not in the cu130 build the index also has for 2.14.1.
    assert import_torch(ci, env) == ["2.14.1+cu126", "12.6", "None"]
    got = installed(ci, env)
    assert got["torchvision"] == "0.29.1+cu126" and got["triton"] == "3.5.1" and got["smallnum"] == "1.0"
