"""Shared test helpers: the repository layout and hermetic environments."""

from __future__ import annotations

import os
import signal
import tempfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
MACHINES = Path(__file__).resolve().parent / "machines"
#: Recorded real data (origin and licence in its README.md); inside the repository, so a fresh clone tests.
REALDATA = Path(__file__).resolve().parent / "data" / "realdata"
#: A data directory that does not exist, for children started outside a test (session fixtures): nothing measured.
_NO_DATA_DIR = str(Path(tempfile.gettempdir()) / f"wheelfit-tests-no-data-{os.getpid()}")
#: A PyTorch index URL on loopback where nothing listens (TCP port 9, discard).
UNREACHABLE_INDEX = "http://127.0.0.1:9/whl"


def pytest_configure(config: pytest.Config) -> None:
    """Ctrl-C as a terminal delivers it, whoever started the suite: a shell's background job starts with SIGINT
    ignored, which its children inherit, and then wheelfit rightly leaves it ignored (``sigint_cancels``), so the
    tests that interrupt a run would wait for an exit that never comes."""
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


def hermetic_env(**extra: str) -> dict[str, str]:
    """An environment for child processes that machine-wide config cannot steer."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PIP_", "UV_", "WHEELFIT_", "CUDA_", "HSA_"))}
    env.update(PIP_CONFIG_FILE=os.devnull, UV_NO_CONFIG="1", PYTHONDONTWRITEBYTECODE="1")
    # Tests never contact the real PyTorch index: one that forgets --pytorch-index (or --offline) reaches a port
    # where nothing listens (the discard port) and plans from the knowledge base, saying so.
    env.update(WHEELFIT_PYTORCH_INDEX=UNREACHABLE_INDEX)
    # The test's own data directory (what verify and doctor measured), never the user's: see the fixture below.
    env.update(WHEELFIT_DATA_DIR=os.environ.get("WHEELFIT_DATA_DIR", _NO_DATA_DIR))
    env.update(extra)
    return env


@pytest.fixture(scope="session")
def realdata() -> Path:
    if not REALDATA.is_dir():
        pytest.fail(f"recorded real data not found at {REALDATA}; it is part of the repository (tests/data/realdata)")
    return REALDATA


@pytest.fixture(autouse=True)
def _own_data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test measures into and plans from its own data directory (``WHEELFIT_DATA_DIR``): what one test's
    ``verify`` recorded never steers another's plan, and the user's is never read or written."""
    monkeypatch.setenv("WHEELFIT_DATA_DIR", str(tmp_path / "wheelfit-data"))


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--full-grid",
        action="store_true",
        help="also run the tests marked full_grid: the whole oracle grid of tests/variants/test_ranking_oracle.py "
        "(a fixed sample of it runs by default)",
    )


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Without ``--full-grid``, the ``full_grid`` cases are deselected (reported as such, never skipped)."""
    if config.getoption("--full-grid"):
        return
    deselected = [item for item in items if item.get_closest_marker("full_grid") is not None]
    if deselected:
        config.hook.pytest_deselected(items=deselected)
        items[:] = [item for item in items if item.get_closest_marker("full_grid") is None]
