"""The one loader of a detector's packaged data table (``<package>/data/<file>.json``).

A table's shape is the JSON Schema beside it (``<file>.schema.json``), to which the tests hold it: providers load
in isolated environments with only the standard library and this toolkit, so nothing checks the shape at run time.
What a schema cannot say (a source is a key of ``sources``, a range's first ID is not above its last, an ID in
one group only) the table's ``build`` function checks through :class:`Table`. Every error is one line,
``<file>: <where>: <what>``; a shape the schema would refuse ends there too, never as a bare ``KeyError``.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from importlib.resources import files
from typing import Any, TypeVar

__all__ = ["DataFileError", "Table", "load_table"]

T = TypeVar("T")


class DataFileError(ValueError):
    """A packaged data table is malformed; the message names the file, the entry and the problem."""


class Table:
    """A decoded table and the checks a loader adds to its schema."""

    def __init__(self, name: str, doc: dict[str, Any]) -> None:
        self.name = name
        self.doc = doc

    def fail(self, where: str, what: str) -> DataFileError:
        return DataFileError(f"{self.name}: {where}: {what}" if where else f"{self.name}: {what}")

    def cited(self, row: dict[str, Any], where: str) -> str:
        """The citation of ``row["source"]``, a key of the table's ``sources``."""
        key = row["source"]
        if key not in self.doc["sources"]:
            raise self.fail(f"{where}.source", f"source {key!r} is not a key of 'sources'")
        return str(self.doc["sources"][key])

    def ids(self, row: dict[str, Any], where: str) -> list[int]:
        """The PCI device IDs of a row: its ``ids`` (``0x744c`` or ``2684``), or ``first`` through ``last``."""
        if "ids" in row:
            return [int(text, 16) for text in row["ids"]]
        first, last = int(row["first"], 16), int(row["last"], 16)
        if first > last:
            raise self.fail(where, f"'first' {row['first']} is above 'last' {row['last']}")
        return list(range(first, last + 1))


def load_table(
    package: str, filename: str, build: Callable[[Table], T], text: str | bytes | None = None, name: str = ""
) -> T:
    """``build`` over ``package``'s ``data/<filename>``, or over ``text`` (a test's edited copy). ``name`` is how
    messages call the file (``<package>/data/<filename>`` by default)."""
    shown = name or f"{package}/data/{filename}"
    if text is None:
        text = files(package).joinpath("data", filename).read_bytes()
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise DataFileError(f"{shown}: not valid JSON: {exc.msg} at line {exc.lineno}, column {exc.colno}") from None
    except (ValueError, RecursionError) as exc:  # not UTF-8, nested too deeply
        raise DataFileError(f"{shown}: not valid JSON: {exc}") from None
    if not isinstance(doc, dict):
        raise DataFileError(f"{shown}: expected an object, got {type(doc).__name__}")
    try:
        return build(Table(shown, doc))
    except DataFileError:
        raise
    except (KeyError, TypeError, ValueError, AttributeError, IndexError) as exc:
        schema = filename.removesuffix(".json") + ".schema.json"
        what = f"{type(exc).__name__} {exc}".splitlines()[0]
        raise DataFileError(f"{shown}: does not follow {schema} ({what})") from None
