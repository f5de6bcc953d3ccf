"""Shared test helpers: the repository layout and hermetic environments."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
MACHINES = Path(__file__).resolve().parent / "machines"
REALDATA = ROOT.parent / "shared" / "realdata"


def hermetic_env(**extra: str) -> dict[str, str]:
    """An environment for child processes that machine-wide config cannot steer."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PIP_", "UV_", "WHEELFIT_", "CUDA_", "HSA_"))}
    env.update(PIP_CONFIG_FILE=os.devnull, UV_NO_CONFIG="1", PYTHONDONTWRITEBYTECODE="1")
    env.update(extra)
    return env


@pytest.fixture(scope="session")
def realdata() -> Path:
    if not REALDATA.is_dir():
        pytest.fail(f"recorded real data not found at {REALDATA}; tests need the shared/ folder beside the repository")
    return REALDATA
