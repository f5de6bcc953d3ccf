"""Ctrl-C during `wheelfit install`: a real process gets SIGINT while it downloads a big wheel from a slow mirror,
while the index page hangs, and while the backend (uv) runs. It must stop within a second, print one line, exit
130 and leave the environment as it was; an interrupted download is resumed by the next run."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.conftest import hermetic_env
from tests.support.hung import hung_server
from tests.support.running import Running
from tests.support.wheels import make_wheel, torch_version_attrs

from .conftest import PROGRESS, make_venv, tree
from .loopback import serve

RTX_3090 = "cuda=8.6,driver=580.95.05"
RATE = 256 * 1024  # bytes per second: a slow mirror
BIG = 2_000_000  # random, so the wheel does not compress: ~8 s at RATE


def _torch_wheel(directory: Path, size: int) -> Path:
    """torch 2.14.1+cu126 (what an sm_86 machine gets from an index that has only that build), ``size`` bytes."""
    full = "2.14.1+cu126"
    version_py = f'__version__ = "{full}"\n' + "".join(
        f"{key} = {value!r}\n" for key, value in torch_version_attrs("cu126").items()
    )
    files: dict[str, str | bytes] = {
        "torch/__init__.py": f'from torch import version\n__version__ = "{full}"\n',
        "torch/version.py": version_py,
        "torch/blob.bin": os.urandom(size),
    }
    return make_wheel(directory, "torch", full, files=files)


@pytest.fixture
def mirror(tmp_path: Path) -> Path:
    root = tmp_path / "mirror"
    _torch_wheel(root / "pytorch" / "cu126" / "torch", BIG)
    (root / "default" / "simple").mkdir(parents=True)
    return root


def _assert_one_interrupt_line(lines: list[str]) -> None:
    """Progress lines may come first; then exactly one line, the interrupt, and no traceback."""
    others = [ln for ln in lines if not ln.startswith(PROGRESS)]
    assert others == ["wheelfit: interrupted"], lines
    assert lines[-1] == "wheelfit: interrupted", lines


def _install_args(python: Path, pytorch_index: str, default_index: str) -> list[str]:
    return ["install", "torch", "--target", RTX_3090, "--python", str(python), "--pytorch-index", pytorch_index,
            "--index-url", default_index]  # fmt: skip


def test_ctrl_c_while_the_index_page_hangs(tmp_path: Path) -> None:
    env = hermetic_env(WHEELFIT_CACHE_DIR=str(tmp_path / "cache"), UV_CACHE_DIR=str(tmp_path / "uv"))
    python = make_venv(tmp_path / "venv")
    before = tree(tmp_path / "venv")
    with hung_server() as hung:
        run = Running(_install_args(python, hung.url, f"{hung.url}/default/simple"), env)
        # After 2 s without an answer the user is told what it waits for (instead of silence until the timeout).
        run.wait_until(lambda: any(ln.startswith(f"waiting for 127.0.0.1:{hung.port} (") for ln in run.lines))
        took = run.interrupt()
    assert run.proc.returncode == 130, run.lines
    assert took < 1.0, f"took {took:.2f} s to stop"
    _assert_one_interrupt_line(run.lines)
    assert tree(tmp_path / "venv") == before


def test_ctrl_c_while_the_backend_runs_restores_the_environment(mirror: Path, tmp_path: Path) -> None:
    """uv waits on a hung default index for an ordinary requirement; Ctrl-C stops it and undoes the snapshot."""
    env = hermetic_env(WHEELFIT_CACHE_DIR=str(tmp_path / "cache"), UV_CACHE_DIR=str(tmp_path / "uv"))
    python = make_venv(tmp_path / "venv")
    before = tree(tmp_path / "venv")
    with serve(mirror) as url, hung_server() as hung:
        args = _install_args(python, f"{url}/pytorch", f"{hung.url}/simple")
        run = Running([*args[:2], "smallnum", *args[2:]], env)
        run.wait_until(hung.connected.is_set)  # the backend is asking the default index
        took = run.interrupt()
    assert run.proc.returncode == 130, run.lines
    assert took < 1.0, f"took {took:.2f} s to stop"
    _assert_one_interrupt_line(run.lines)
    assert tree(tmp_path / "venv") == before  # the snapshot was put back and removed
