"""A loopback world for the stack tests: a PyTorch index with torch 2.9.0 and 2.10.0 (cu128), a default index,
a find-links folder with flash-attn wheels built only for torch 2.9 and PyG wheels for both, and the same wheels
as their projects publish them (PyG's find-links page per torch build, flash-attn's GitHub releases JSON), reached
through ``WHEELFIT_MIRROR``. Wheel names follow each project's scheme (see ``test_match``); nothing but loopback
is contacted."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from urllib.parse import quote

import pytest

from tests.conftest import hermetic_env
from tests.install.conftest import Index
from tests.install.loopback import serve
from tests.support.inprocess import wheelfit_in_process
from tests.support.wheels import make_torch_like, make_wheel

PY = f"cp{sys.version_info[0]}{sys.version_info[1]}"
TAG = f"{PY}-{PY}-linux_x86_64"
#: The done-when machine: an RTX 30xx (sm_86) with an R580 driver, this Python.
AMPERE = "cuda=8.6,driver=580.95.05"
FLASH = f"flash_attn-2.8.3+cu12torch2.9cxx11abiTRUE-{TAG}.whl"
SCATTER = {series: f"torch_scatter-2.1.2+pt{series.replace('.', '')}cu128-{TAG}.whl" for series in ("2.9", "2.10")}


@dataclass(frozen=True)
class World(Index):
    """The install tests' layout (``<url>/pytorch``, ``<url>/default/simple``), with the extensions' places."""

    @property
    def wheels(self) -> Path:
        return self.root / "wheels"

    @property
    def mirrors(self) -> str:
        return f"https://data.pyg.org/whl={self.url}/pyg https://api.github.com={self.url}/github"


def _put(directory: Path, make: Callable[[Path], Path]) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    return make(directory)


def _build(root: Path) -> None:
    for version in ("2.9.0", "2.10.0"):
        _put(root / "pytorch/cu128/torch", partial(make_torch_like, version=version, variant="cu128"))
    # xformers on the PyTorch index beside torch, each release pinning the torch it was built with (its setup.py's
    # install_requires torch==X; one abi3 wheel per CUDA build, as download.pytorch.org/whl/cu128/xformers/ lists)
    for version, torch in (("0.0.32.post2", "2.9.0"), ("0.0.33", "2.10.0")):
        xformers = partial(make_wheel, name="xformers", version=version, tag="cp39-abi3-linux_x86_64",
                           requires=[f"torch=={torch}"])  # fmt: skip
        _put(root / "pytorch/cu128/xformers", xformers)
    # flash-attn's setup.py: install_requires=["torch", "einops"]
    _put(root / "default/simple/einops", partial(make_wheel, name="einops", version="0.8.1"))
    flash = partial(make_wheel, name="flash-attn", version="2.8.3+cu12torch2.9cxx11abiTRUE", tag=TAG,
                    requires=["torch", "einops"])  # fmt: skip
    _put(root / "wheels", flash)
    _put(root / "github/download", flash)
    for name in SCATTER.values():
        scatter = partial(make_wheel, name="torch-scatter", version=name.split("-")[1], tag=TAG)
        _put(root / "wheels", scatter)
        _put(root / "pyg/cu128", scatter)


def _publish(root: Path, url: str) -> None:
    """The published listings, which need the server's URL: PyG's pages and flash-attn's releases JSON."""
    for series, name in SCATTER.items():
        page = f'<html><body><a href="cu128/{quote(name)}">{name}</a><br></body></html>\n'
        (root / f"pyg/torch-{series}.0+cu128.html").write_text(page)
    asset = {"name": FLASH, "browser_download_url": f"{url}/github/download/{quote(FLASH)}", "size": 1,
             "digest": None}  # fmt: skip
    releases = root / "github/repos/Dao-AILab/flash-attention/releases"
    releases.parent.mkdir(parents=True)
    releases.write_text(json.dumps([{"tag_name": "v2.8.3", "draft": False, "assets": [asset]}]))


@pytest.fixture(scope="session")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    root = tmp_path_factory.mktemp("stack")
    _build(root)
    with serve(root) as url:
        _publish(root, url)
        yield World(root, url)


@pytest.fixture
def cli(tmp_path: Path) -> Callable[..., tuple[int, str, str]]:
    """``wheelfit ARGS`` in process, in a hermetic environment with its own cache: status, stdout, stderr."""

    def call(args: list[str], **env: str) -> tuple[int, str, str]:
        cache = str(tmp_path / "cache")
        done = wheelfit_in_process(args, hermetic_env(COLUMNS="100", WHEELFIT_CACHE_DIR=cache, **env))
        return done.returncode, done.stdout, done.stderr

    return call
