"""Shared test helpers: the repository layout and hermetic environments."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
MACHINES = Path(__file__).resolve().parent / "machines"
#: Recorded real data (origin and licence in its README.md); inside the repository, so a fresh clone tests.
REALDATA = Path(__file__).resolve().parent / "data" / "realdata"


def hermetic_env(**extra: str) -> dict[str, str]:
    """An environment for child processes that machine-wide config cannot steer."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PIP_", "UV_", "WHEELFIT_", "CUDA_", "HSA_"))}
    env.update(PIP_CONFIG_FILE=os.devnull, UV_NO_CONFIG="1", PYTHONDONTWRITEBYTECODE="1")
    env.update(extra)
    return env


@pytest.fixture(scope="session")
def realdata() -> Path:
    if not REALDATA.is_dir():
        pytest.fail(f"recorded real data not found at {REALDATA}; it is part of the repository (tests/data/realdata)")
    return REALDATA
