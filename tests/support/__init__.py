"""Shared test support: real wheels (``wheels``) and a loopback package index (``index_server``)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Protocol

import pytest

from .index_server import Faults, IndexServer

__all__ = ["Faults", "IndexServer", "StartServer", "index_server"]


class StartServer(Protocol):
    def __call__(self, root: Path, **kwargs: Any) -> IndexServer: ...


@pytest.fixture
def index_server() -> Iterator[StartServer]:
    """Start ``IndexServer(root, **kwargs)``; every server started is stopped when the test ends."""
    with contextlib.ExitStack() as stack:

        def start(root: Path, **kwargs: Any) -> IndexServer:
            return stack.enter_context(IndexServer(root, **kwargs))

        yield start
