"""The loopback index fixture (``index_server``) from tests.support, and a fake timer for the retries' backoff."""

from __future__ import annotations

import pytest

from tests.support import index_server as index_server
from wheelfit.fetch import http
from wheelfit.fetch.http import RetryPolicy


@pytest.fixture
def backoff(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """The pauses before each retry that wheelfit (run in this process) takes, recorded instead of slept: a fake
    timer for the backoff, so a test of what happens after every retry does not wait for them. The retries
    themselves, their timeouts and the servers' pace stay real."""
    pauses: list[float] = []

    def pause(policy: RetryPolicy, seconds: float, watch: object) -> None:
        pauses.append(seconds)

    monkeypatch.setattr(http, "pause", pause)
    return pauses
