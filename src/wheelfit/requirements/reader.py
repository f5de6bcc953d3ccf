"""The one place this package touches the disk: the default ``reader`` for :func:`read_requirements`."""

from __future__ import annotations

__all__ = ["read_file"]


def read_file(path: str, limit: int) -> bytes:
    """At most ``limit`` bytes of ``path``: a huge (or endless, ``/dev/zero``) file is never read whole. Raises
    ``OSError`` (missing, a directory, no permission). Pipes such as ``/dev/stdin`` work, as with pip."""
    with open(path, "rb") as file:
        return file.read(limit)
