"""x86-64 psABI level (v1..v4) from Linux flag names: a pure function of the feature set."""

from __future__ import annotations

from collections.abc import Iterable

from .info import load_data

__all__ = ["x86_64_level"]


def x86_64_level(features: Iterable[str]) -> str:
    """The highest level whose flags (and every lower level's) are all present; ``v1`` at least.

    Levels follow glibc-hwcaps (see ``data/x86_64_levels.json``), so the answer matches
    which ``glibc-hwcaps/x86-64-vN`` directory the dynamic loader would search.
    """
    table = load_data("x86_64_levels.json")
    have = set(features)
    alternatives: dict[str, list[str]] = {k: v for k, v in table["alternatives"].items() if k != "source"}
    level = "v1"
    for name in ("v2", "v3", "v4"):
        needed: list[str] = table["levels"][name]
        if not all(flag in have or any(alt in have for alt in alternatives.get(flag, ())) for flag in needed):
            break
        level = name
    return level
