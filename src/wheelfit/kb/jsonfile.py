"""One JSON reader for every document wheelfit takes in: ``--kb FILE``, ``*-variants.json``, its own data files.

``json.loads`` alone accepts documents no data file should hold and refuses others with exceptions other
than ``JSONDecodeError``, so a hostile file ends as a traceback or is silently misread. :func:`load_json`
turns each case into one line naming the file:

* bytes that are not UTF-8 (a UTF-16 or UTF-32 byte-order mark is named as such). A UTF-8 byte-order mark
  is skipped: RFC 8259 section 8.1 lets a parser ignore it, and Windows editors write one;
* ``NaN``, ``Infinity`` and ``-Infinity``, which Python accepts but JSON does not have (RFC 8259 section 6),
  and numbers that overflow a double (``1e999``);
* number literals longer than 100 characters: Python's int parser refuses more than 4300 digits with a bare
  ``ValueError`` and is quadratic below that (CVE-2020-10735), and that limit can be switched off;
* nesting deeper than the interpreter's recursion limit (``RecursionError``);
* a key twice in one object: RFC 8259 section 4 leaves the meaning to the parser (Python keeps the last,
  other parsers the first), so two tools could read different data from one file;
* a ``\\ud800`` escape with no partner, a lone surrogate, which fails later when printed or encoded;
* more than ``max_bytes``.

:class:`Fields` checks the shape of the decoded document the way ``matrix._Reader`` does, with messages
``<file>: <where>: <what>``. Pure (json, math and re only) and cheap: the duplicate-key check, a Python call
per object, adds about 0.6 ms to decoding the 70 KB packaged knowledge base; the other checks run only on
numbers, on non-ASCII text and when a ``\\u`` escape names a surrogate.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, NoReturn

from ..errors import WheelfitError

__all__ = ["MAX_BYTES", "MAX_NUMBER_CHARS", "DataFileError", "Fields", "load_json", "read_json_file"]

#: The largest document read by default: over 100 times the packaged knowledge base, and the cap of a variants file.
MAX_BYTES = 8 * 1024 * 1024
#: The longest number literal read: a 64-bit integer has 20 digits, a double's shortest repr at most 24 characters.
MAX_NUMBER_CHARS = 100

#: Byte-order marks of the encodings a Windows tool may save JSON in; UTF-32 first (its LE mark starts like UTF-16's).
_FOREIGN_BOMS = (
    (b"\xff\xfe\x00\x00", "UTF-32 (little-endian)"),
    (b"\x00\x00\xfe\xff", "UTF-32 (big-endian)"),
    (b"\xff\xfe", "UTF-16 (little-endian)"),
    (b"\xfe\xff", "UTF-16 (big-endian)"),
)
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")
_SHOWN = 60  # characters of a key or literal quoted in a message


class DataFileError(WheelfitError, ValueError):
    """A data file cannot be read, is not JSON wheelfit accepts, or lacks the shape its reader needs."""


class _RefusedError(Exception):
    """Raised by the decoder's hooks, which do not know the file name; load_json adds it."""


def load_json(
    data: str | bytes,
    name: str,
    *,
    error: Callable[[str], Exception] = DataFileError,
    max_bytes: int = MAX_BYTES,
) -> object:
    """Decode one JSON document, refusing what the module docstring lists with ``error("<name>: <what>")``."""
    if len(data) > max_bytes:  # a str's length in characters is at most its UTF-8 size
        raise error(f"{name}: larger than {_size(max_bytes)}; not a data file wheelfit reads")
    try:
        text = _text(data)
        if not text.strip():
            raise _RefusedError("not valid JSON: it is empty")
        value = _DECODER.decode(text)
        if "\\u" in text and _SURROGATE_ESCAPE.search(text):
            _no_lone_surrogates(value)
    except _RefusedError as exc:
        raise error(f"{name}: {exc}") from None
    except json.JSONDecodeError as exc:
        what = exc.msg.removesuffix(" at")  # "Invalid control character at"
        raise error(f"{name}: not valid JSON: {what} at line {exc.lineno}, column {exc.colno}") from None
    except RecursionError:
        raise error(f"{name}: not valid JSON: nested too deeply") from None
    except ValueError as exc:  # nothing else is known to raise it; still one line, never a traceback
        raise error(f"{name}: not valid JSON: {_first_line(exc)}") from None
    return value


def read_json_file(
    path: str | Path,
    name: str | None = None,
    *,
    error: Callable[[str], Exception] = DataFileError,
    max_bytes: int = MAX_BYTES,
) -> object:
    """:func:`load_json` of a file, reading at most ``max_bytes + 1`` bytes (``/dev/zero`` is refused, not eaten)."""
    shown = str(path) if name is None else name
    try:
        with open(path, "rb") as fh:
            data = fh.read(max_bytes + 1)
    except FileNotFoundError:
        raise error(f"{shown}: no such file") from None
    except OSError as exc:
        raise error(f"{shown}: cannot read it ({exc.strerror or exc})") from None
    return load_json(data, shown, error=error, max_bytes=max_bytes)


def _text(data: str | bytes) -> str:
    if isinstance(data, str):
        text = data
        if not text.isascii():  # O(1) in CPython; only a str made with errors="surrogateescape" can fail here
            try:
                text.encode("utf-8")
            except UnicodeEncodeError as exc:
                raise _RefusedError(f"not UTF-8 text: it holds {_codepoint(exc)}, which is not a character") from None
    else:
        for bom, encoding in _FOREIGN_BOMS:
            if data.startswith(bom):
                raise _RefusedError(f"not UTF-8 text: it starts with a {encoding} byte-order mark; save it as UTF-8")
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            line = data.count(b"\n", 0, exc.start) + 1
            raise _RefusedError(f"not UTF-8 text (byte 0x{data[exc.start]:02x} at line {line})") from None
    return text[1:] if text.startswith("\ufeff") else text


def _no_lone_surrogates(value: object) -> None:
    """Paired ``\\ud83d\\ude00`` escapes make one character; an unpaired one decodes to a str that cannot be encoded."""
    try:
        json.dumps(value, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError as exc:
        raise _RefusedError(f"a \\u escape gives {_codepoint(exc)}, a lone surrogate, not a character") from None


def _pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out = dict(pairs)
    if len(out) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise _RefusedError(
                    f"key {_show(key)} appears twice in one object; JSON tools disagree on which one counts"
                )
            seen.add(key)
    return out


def _int(text: str) -> int:
    if len(text) > MAX_NUMBER_CHARS:
        digits = len(text.lstrip("-"))
        raise _RefusedError(
            f"an integer of {digits} digits; wheelfit reads at most {MAX_NUMBER_CHARS} characters per number"
        )
    return int(text)


def _float(text: str) -> float:
    if len(text) > MAX_NUMBER_CHARS:
        raise _RefusedError(f"a number of {len(text)} characters; wheelfit reads at most {MAX_NUMBER_CHARS} per number")
    value = float(text)
    if not math.isfinite(value):
        raise _RefusedError(f"the number {text} is too large for a double")
    return value


def _constant(text: str) -> NoReturn:
    raise _RefusedError(f"{text} is not JSON (RFC 8259 has no NaN or Infinity); write a number or null")


_DECODER = json.JSONDecoder(object_pairs_hook=_pairs, parse_int=_int, parse_float=_float, parse_constant=_constant)


def _codepoint(exc: UnicodeEncodeError) -> str:
    return f"U+{ord(exc.object[exc.start]):04X}"


def _show(text: str) -> str:
    """A key or literal quoted for a one-line message: escaped (no newline gets through) and cut short."""
    return repr(text) if len(text) <= _SHOWN else repr(text[:_SHOWN]) + f"... ({len(text)} characters)"


def _size(n: int) -> str:
    return f"{n // (1024 * 1024)} MiB" if n % (1024 * 1024) == 0 else f"{n:,} bytes"


def _first_line(exc: BaseException) -> str:
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0]


# --------------------------------------------------------------------------- shape


class Fields:
    """Checks of a decoded document's shape; each failure is ``error("<file>: <where>: <what>")``.

    ``where`` is a path such as ``overrides[1].gfx``. Objects are closed: an unknown key is a typo of an
    optional one far more often than new data, and the packaged files ship with the code that reads them.
    """

    def __init__(self, name: str, error: Callable[[str], Exception] = DataFileError) -> None:
        self.name = name
        self.error = error

    def fail(self, where: str, what: str) -> Exception:
        return self.error(f"{self.name}: {where}: {what}" if where else f"{self.name}: {what}")

    @staticmethod
    def at(where: str, key: str | int) -> str:
        """``overrides`` + 1 -> ``overrides[1]``; ``overrides[1]`` + ``gfx`` -> ``overrides[1].gfx``."""
        if isinstance(key, int):
            return f"{where}[{key}]"
        return f"{where}.{key}" if where else key

    def obj(
        self, value: object, where: str, required: Iterable[str] = (), optional: Iterable[str] = ()
    ) -> dict[str, Any]:
        """An object with every ``required`` key and no key outside ``required`` and ``optional``."""
        if not isinstance(value, dict):
            raise self.fail(where, f"expected an object, got {_kind(value)}")
        needed = tuple(required)
        missing = [k for k in needed if k not in value]
        if missing:
            raise self.fail(where, f"missing {', '.join(map(repr, missing))}")
        known = {*needed, *optional}
        unknown = sorted(k for k in value if k not in known)
        if unknown:
            keys = ", ".join(_show(k) for k in unknown[:3])
            raise self.fail(where, f"unknown key {keys} (known: {', '.join(sorted(known))})")
        return value

    def mapping(self, value: object, where: str) -> dict[str, Any]:
        """An object whose keys are data (IDs, names), not a fixed set."""
        if not isinstance(value, dict):
            raise self.fail(where, f"expected an object, got {_kind(value)}")
        return value

    def items(self, value: object, where: str) -> list[Any]:
        if not isinstance(value, list):
            raise self.fail(where, f"expected a list, got {_kind(value)}")
        return value

    def text(self, value: object, where: str, pattern: re.Pattern[str] | None = None) -> str:
        """A non-empty string, matching ``pattern`` if given."""
        if not isinstance(value, str) or not value:
            raise self.fail(where, f"expected a non-empty string, got {_kind(value)}")
        if pattern is not None and not pattern.fullmatch(value):
            raise self.fail(where, f"malformed: {_show(value)}")
        return value

    def opt_text(self, value: object, where: str, pattern: re.Pattern[str] | None = None) -> str | None:
        return None if value is None else self.text(value, where, pattern)

    def texts(self, value: object, where: str, pattern: re.Pattern[str] | None = None) -> tuple[str, ...]:
        """A non-empty list of distinct non-empty strings."""
        out = tuple(self.text(v, self.at(where, i), pattern) for i, v in enumerate(self.items(value, where)))
        if not out:
            raise self.fail(where, "empty list")
        if len(set(out)) != len(out):
            raise self.fail(where, f"{_show(next(v for v in out if out.count(v) > 1))} is listed twice")
        return out

    def source(self, value: object, where: str, sources: dict[str, Any]) -> str:
        key = self.text(value, where)
        if key not in sources:
            raise self.fail(where, f"source {_show(key)} is not a key of 'sources'")
        return key

    def sources(self, value: object, where: str = "sources") -> dict[str, str]:
        """The ``sources`` table every data file carries: key -> citation."""
        table = self.mapping(value, where)
        if not table:
            raise self.fail(where, "must name at least one source")
        for key, text in table.items():
            self.text(text, self.at(where, key))
        return table

    def schema_version(self, value: object, major: int) -> str:
        """``major.minor``; another major is a file this code cannot read."""
        version = self.text(value, "schema_version", re.compile(r"\d+\.\d+"))
        if int(version.split(".")[0]) != major:
            raise self.fail("schema_version", f"{version} is not supported (this wheelfit reads {major}.x)")
        return version


def _kind(value: object) -> str:
    """How a wrong value is named in a message: its JSON type, and a short value when it is a scalar."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return f"boolean {'true' if value else 'false'}"
    if isinstance(value, (int, float)):
        return f"number {value!r}"
    if isinstance(value, str):
        return f"string {_show(value)}" if value else "an empty string"
    if isinstance(value, dict):
        return "an object"
    return "a list" if isinstance(value, list) else type(value).__name__
