"""Checks made against the index's (or the user's) expected digests, and a file's sha256. Pure apart from
reading a file."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from pathlib import Path

__all__ = ["STRONG_HASHES", "bytes_mismatch", "first_mismatch", "hash_file"]

#: The algorithms that count as a real check (pip's ``STRONG_HASHES``); md5/sha1 only catch corruption.
STRONG_HASHES = ("sha256", "sha384", "sha512")
_CHUNK = 1 << 20


def hash_file(path: Path) -> str:
    """The sha256 of the file at ``path``, read in 1 MiB chunks."""
    digest = hashlib.sha256()
    with path.open("rb") as f:
        while chunk := f.read(_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


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
