"""The loopback index fixture (``index_server``) from tests.support."""

from __future__ import annotations

from tests.support import index_server as index_server
