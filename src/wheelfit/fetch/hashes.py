"""Streaming hashes and the checks made against the index's (or the user's) expected digests.

Hashing happens while the bytes arrive, so a multi-GB torch wheel is read once.
sha256 is always computed (it is what a user pins); other guaranteed algorithms
only when an expected value asks for them. Pure apart from reading a file.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from pathlib import Path

__all__ = ["STRONG_HASHES", "Hasher", "bytes_mismatch", "first_mismatch", "has_strong_hash", "hash_file"]

#: The algorithms that count as a real check (pip's ``STRONG_HASHES``); md5/sha1 only catch corruption.
STRONG_HASHES = ("sha256", "sha384", "sha512")
_CHUNK = 1 << 20


class Hasher:
    """sha256 plus any algorithm named in ``algorithms``, fed chunk by chunk."""

    def __init__(self, algorithms: Iterable[str] = ()) -> None:
        self._hashes = {name: hashlib.new(name) for name in {"sha256", *algorithms}}

    def update(self, chunk: bytes) -> None:
        for h in self._hashes.values():
            h.update(chunk)

    def hexdigests(self) -> dict[str, str]:
        return {name: h.hexdigest() for name, h in self._hashes.items()}


def hash_file(path: Path, algorithms: Iterable[str] = ()) -> dict[str, str]:
    hasher = Hasher(algorithms)
    with path.open("rb") as f:
        while chunk := f.read(_CHUNK):
            hasher.update(chunk)
    return hasher.hexdigests()


def has_strong_hash(expected: Mapping[str, str]) -> bool:
    return any(name in expected for name in STRONG_HASHES)


def first_mismatch(expected: Mapping[str, str], got: Mapping[str, str]) -> tuple[str, str, str] | None:
    """``(algorithm, expected, got)`` for the first expected digest that differs, strongest first."""
    order = sorted(expected, key=lambda n: (n not in STRONG_HASHES, n))
    for name in order:
        if name in got and got[name] != expected[name].lower():
            return name, expected[name].lower(), got[name]
    return None


def bytes_mismatch(expected: Mapping[str, str], body: bytes) -> tuple[str, str, str] | None:
    """:func:`first_mismatch` for a small file already in memory (a PEP 658 metadata file, a variants file)."""
    return first_mismatch(expected, {name: hashlib.new(name, body).hexdigest() for name in expected})
