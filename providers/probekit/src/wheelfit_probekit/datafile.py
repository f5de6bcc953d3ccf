"""Checking a detector's packaged data table: every error one line, ``<file>: <where>: <what>``.

The providers' device and feature tables are trusted input for detection, so a typo in one must say where it
is, never end in a bare ``KeyError``. Stdlib only, like the rest of the toolkit (providers cannot import the
core, which checks its own files the same way).
"""

from __future__ import annotations

import json
import re
from typing import Any

__all__ = ["DataFields", "DataFileError"]


class DataFileError(ValueError):
    """A packaged data table is malformed; the message names the file, the entry and the problem."""


class DataFields:
    """The checks a table loader composes: an object with exactly its keys, a non-empty string, a decoded file."""

    def __init__(self, name: str) -> None:
        self.name = name

    def fail(self, where: str, what: str) -> DataFileError:
        return DataFileError(f"{self.name}: {where}: {what}" if where else f"{self.name}: {what}")

    def decode(self, text: str | bytes) -> object:
        try:
            return json.loads(text)
        except json.JSONDecodeError as exc:
            raise self.fail("", f"not valid JSON: {exc.msg} at line {exc.lineno}, column {exc.colno}") from None
        except (ValueError, RecursionError) as exc:  # not UTF-8, nested too deeply
            raise self.fail("", f"not valid JSON: {exc}") from None

    def obj(
        self, value: object, where: str, required: tuple[str, ...] = (), optional: tuple[str, ...] = ()
    ) -> dict[str, Any]:
        """An object; with ``required``, one with exactly those keys and any of ``optional`` (a typo is refused)."""
        if not isinstance(value, dict):
            raise self.fail(where, f"expected an object, got {type(value).__name__}")
        if required:
            missing = [k for k in required if k not in value]
            if missing:
                raise self.fail(where, f"missing {', '.join(map(repr, missing))}")
            unknown = sorted(set(value) - set(required) - set(optional))
            if unknown:
                raise self.fail(where, f"unknown key {', '.join(map(repr, unknown))}")
        return value

    def text(self, value: object, where: str, pattern: re.Pattern[str] | None = None) -> str:
        if not isinstance(value, str) or not value:
            raise self.fail(where, f"expected a non-empty string, got {value!r}")
        if pattern is not None and not pattern.fullmatch(value):
            raise self.fail(where, f"malformed: {value!r}")
        return value
