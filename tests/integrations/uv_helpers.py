"""Shared by the uv project tests: a project on disk and real uv runs against the loopback indexes."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from wheelfit.install.uv import find_uv

from ..conftest import hermetic_env
from ..install.conftest import Index

PASCAL = "cuda=6.1,driver=580.95.05"
ADA = "cuda=8.9,driver=580.95.05"

#: A user's project: comments, a table wheelfit never touches, a dependency group.
PYPROJECT = """\
# demo: a model server
[project]
name = "demo"
version = "0.1.0"
requires-python = ">=3.10"
dependencies = [
    "smallnum>=1.0",  # an ordinary dependency
    "torch>=2.0",
]

[dependency-groups]
dev = ["torchvision"]  # only for the notebooks

[tool.ruff]
line-length = 100   # wide
"""


def uv_env(index: Index, caches: dict[str, str]) -> dict[str, str]:
    """Real uv against the loopback default index, with this interpreter and never a download of Python."""
    return hermetic_env(**caches, UV_PYTHON=sys.executable, UV_PYTHON_DOWNLOADS="never", UV_DEFAULT_INDEX=index.default)


def project(tmp_path: Path, text: str = PYPROJECT) -> Path:
    root = tmp_path / "demo"
    root.mkdir()
    (root / "pyproject.toml").write_text(text, encoding="utf-8")
    return root


def uv(args: list[str], root: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [find_uv(), *args], cwd=root, env=env, capture_output=True, text=True, timeout=180, check=False
    )


def configure(root: Path, index: Index, *args: str) -> list[str]:
    return ["configure", "uv", "--project", str(root), "--pytorch-index", index.pytorch, *args]
