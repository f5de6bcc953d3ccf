"""Fixtures for the install tests: a loopback index laid out like download.pytorch.org plus a separate default
index (with a squatted higher-versioned torch/triton/torchvision, the torchtriton story), and fresh venvs."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import partial
from pathlib import Path

import pytest

from tests.conftest import hermetic_env
from tests.support.inprocess import wheelfit_in_process
from tests.support.wheels import make_torch_like, make_wheel

from .loopback import serve

#: Each variant index: (torch version, torchvision version, torch-family dependency of torch or None).
VARIANTS: dict[str, list[tuple[str, str, str | None]]] = {
    "cu126": [("2.14.1", "0.29.1", "triton==3.5.1")],
    "cu130": [("2.14.1", "0.29.1", "triton==3.5.1"), ("2.15.0", "0.29.2", "triton==3.6.0")],
    "cpu": [("2.15.0", "0.29.2", None)],
    "rocm7.14": [("2.15.0", "0.29.2", "pytorch-triton-rocm==3.6.0")],
    "xpu": [("2.15.0", "0.29.2", "pytorch-triton-xpu==3.6.0")],
}


@dataclass(frozen=True)
class Index:
    root: Path
    url: str

    @property
    def pytorch(self) -> str:
        return f"{self.url}/pytorch"

    @property
    def default(self) -> str:
        return f"{self.url}/default/simple"

    def put(self, index: str, wheel_maker: Callable[[Path], Path]) -> Path:
        """Add a wheel under ``<index>/<project>/`` (the maker writes it into a directory we choose)."""
        tmp = self.root / ".new"
        made = wheel_maker(tmp)
        project = made.name.split("-")[0].replace("_", "-")
        dest = self.root / index / project / made.name
        dest.parent.mkdir(parents=True, exist_ok=True)
        made.replace(dest)
        return dest


def _build(root: Path) -> None:
    def put(index: str, make: Callable[[Path], Path]) -> None:
        Index(root, "").put(index, make)

    for variant, builds in VARIANTS.items():
        for torch, vision, dep in builds:
            requires = ["smallnum>=1.0", *([f'{dep}; platform_system == "Linux"'] if dep else [])]
            put(f"pytorch/{variant}", partial(make_torch_like, version=torch, variant=variant, requires=requires))
            put(
                f"pytorch/{variant}",
                partial(make_wheel, name="torchvision", version=f"{vision}+{variant}", requires=[f"torch=={torch}"]),
            )
            if dep:
                name, _, version = dep.partition("==")
                put(f"pytorch/{variant}", partial(make_wheel, name=name, version=version))
    # The default index: an ordinary dependency, and squatters with higher versions of torch-family names.
    put("default/simple", partial(make_wheel, name="smallnum", version="1.0"))
    for name in ("torch", "torchvision", "triton", "pytorch-triton-rocm", "torchtriton"):
        evil = {
            f"{name.replace('-', '_')}/__init__.py": "raise ImportError('the squatted copy from the default index')\n"
        }
        put("default/simple", partial(make_wheel, name=name, version="99.0", files=evil))
    put("default/simple", partial(make_wheel, name="needstriton", version="1.0", requires=["triton"]))


@pytest.fixture(scope="session")
def index(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Index]:
    root = tmp_path_factory.mktemp("index")
    _build(root)
    with serve(root) as url:
        yield Index(root, url)


@pytest.fixture(scope="session")
def caches(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """Per-session caches so tests neither read nor fill the user's."""
    root = tmp_path_factory.mktemp("caches")
    return {"UV_CACHE_DIR": str(root / "uv"), "WHEELFIT_CACHE_DIR": str(root / "wheelfit"), "PIP_NO_CACHE_DIR": "1"}


@pytest.fixture
def env(caches: dict[str, str]) -> dict[str, str]:
    return hermetic_env(**caches)


def make_venv(path: Path, with_pip: bool = False) -> Path:
    argv = [sys.executable, "-m", "venv", str(path)]
    if not with_pip:
        argv.insert(3, "--without-pip")
    subprocess.run(argv, check=True, env=hermetic_env())
    return path / "bin" / "python"


def run_wheelfit(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """``wheelfit ARGS`` with exactly ``env``, in this process (the tests that need a real one start it)."""
    return wheelfit_in_process(args, env)


def installed(python: Path, env: dict[str, str]) -> dict[str, str]:
    """name -> version of every distribution in the environment, read by its own interpreter."""
    script = (
        "import json, importlib.metadata as m; "
        "print(json.dumps({d.metadata['Name']: d.version for d in m.distributions()}))"
    )
    out = subprocess.run([str(python), "-c", script], capture_output=True, text=True, env=env, check=True)
    return dict(json.loads(out.stdout))


def import_torch(python: Path, env: dict[str, str]) -> list[str]:
    """What ``import torch`` says in that environment: version, torch.version.cuda, torch.version.hip."""
    script = "import torch; print(torch.__version__, torch.version.cuda, torch.version.hip)"
    out = subprocess.run([str(python), "-c", script], capture_output=True, text=True, env=env, check=True)
    return out.stdout.split()


def env_paths(directory: Path) -> list[Path]:
    """Every path under ``directory`` that is the environment's state: not bytecode, and not the installers'
    empty lock files (uv's ``<venv>/.lock``, wheelfit's ``.wheelfit.lock``)."""
    return [
        p
        for p in sorted(directory.rglob("*"))
        if "__pycache__" not in p.parts and p.name not in (".lock", ".wheelfit.lock")
    ]


def tree(directory: Path) -> dict[str, str]:
    """Every file and link of :func:`env_paths` with its sha256: proves 'nothing changed'."""
    return {
        str(p.relative_to(directory)): hashlib.sha256(p.read_bytes()).hexdigest() if p.is_file() else "link"
        for p in env_paths(directory)
        if p.is_file() or p.is_symlink()
    }


#: The plain progress lines `wheelfit install` writes to a stderr that is not a terminal.
PROGRESS = ("downloading ", "downloaded ", "cached ", "retrying ", "waiting for ")


def error_line(stderr: str) -> str:
    """The one error line of a failed run: the last line of stderr, and the only one that is not progress."""
    lines = [ln for ln in stderr.strip().splitlines() if not ln.startswith(PROGRESS)]
    assert len(lines) == 1, stderr
    assert lines[0].startswith("wheelfit: error: ") and stderr.strip().endswith(lines[0]), stderr
    return lines[0]
