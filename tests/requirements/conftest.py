"""Helpers for the requirements tests: real files in a temporary directory, read with the real disk reader."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from wheelfit.errors import UsageError
from wheelfit.requirements import IndexOptions, RequirementSet, read_file, read_requirements


def write(root: Path, name: str, text: str | bytes) -> Path:
    path = root / name
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8", newline="")
    return path


def read(
    root: Path,
    files: Sequence[str] = (),
    constraints: Sequence[str] = (),
    *,
    specs: Sequence[str] = (),
    environ: Mapping[str, str] | None = None,
    **options: Any,
) -> RequirementSet:
    """``pip install SPECS -r FILES -c CONSTRAINTS`` run in ``root``."""
    return read_requirements(
        specs, files, constraints, reader=read_file, cwd=str(root), environ=environ or {},
        given=IndexOptions(**{k: tuple(v) if isinstance(v, list) else v for k, v in options.items()}),  # type: ignore[arg-type]
    )  # fmt: skip


def refused(root: Path, files: Sequence[str] = (), **kwargs: Any) -> str:
    """The one-line UsageError reading ``files`` raises."""
    with pytest.raises(UsageError) as info:
        read(root, files, **kwargs)
    message = str(info.value)
    assert "\n" not in message and message.strip() == message
    return message
