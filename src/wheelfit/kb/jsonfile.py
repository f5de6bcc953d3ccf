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

A document's shape is its JSON Schema (draft 2020-12, beside the data): :func:`conform` holds a file the user
passes (``--kb``, ``measured.json``, a test's edited copy) to it with ``jsonschema``, imported only then; packaged
files are held to theirs by the tests and only parsed at run time. Decoding is pure (json, math and re only) and
cheap: the duplicate-key check, a Python call per object, adds about 0.6 ms to the 80 KB packaged knowledge base;
the other checks run only on numbers, on non-ASCII text and when a ``\\u`` escape names a surrogate.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Iterable, Iterator
from functools import cache
from importlib.resources import files
from pathlib import Path
from typing import Any, NoReturn

from ..errors import WheelfitError

__all__ = ["MAX_BYTES", "MAX_NUMBER_CHARS", "DataFileError", "conform", "load_json", "read_json_file"]

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


def conform(
    doc: object,
    schema: str | Path,
    name: str,
    *,
    error: Callable[[str], Exception] = DataFileError,
    reads: str | None = None,
) -> dict[str, Any]:
    """``doc`` if it follows the packaged schema ``schema`` (a path under ``wheelfit``, ``kb/data/x.schema.json``, or
    a file: the tests hold the providers' tables to theirs), else ``error("<name>: <path>: <reason>")`` for the most
    relevant failure, on one line.

    ``reads`` is the ``schema_version`` this code reads, if the file has one: another major is refused before the
    shape is looked at (it may be any shape); given as ``major.minor``, a file of a newer minor may carry keys this
    version does not know."""
    if not isinstance(doc, dict):  # the common case worded without loading the validator
        raise error(f"{name}: expected an object, got {_kind(doc)}")
    newer = reads is not None and _newer_minor(doc.get("schema_version"), reads, name, error)
    from jsonschema.exceptions import best_match, relevance  # about 90 ms: only for a file the user passes

    errors = [
        e for e in _validator(schema).iter_errors(doc) if not (newer and e.validator == "additionalProperties")
    ]
    if not errors:
        return doc
    # The shallowest error; at one depth a rule the schema explains in words, then jsonschema's best_match order.
    best = max(errors, key=lambda e: (-len(e.absolute_path), _described(e), relevance(e)))
    if best.context and not _described(best):  # which branch of an anyOf/oneOf failed, and why
        best = best_match([best])
    where = _json_path(best.absolute_path)
    if best.validator == "required":  # every key missing from that object, in one message
        here = best.absolute_path
        lists = [e.validator_value for e in errors if e.validator == "required" and e.absolute_path == here]
        missing = [k for k in dict.fromkeys(k for keys in lists for k in keys) if k not in best.instance]
        reason = f"missing {', '.join(map(repr, missing))}"
    else:
        reason = _reason(best)
    if len(reason) > _REASON_CHARS:
        reason = reason[: _REASON_CHARS - 3] + "..."
    raise error(f"{name}: {where}: {reason}" if where else f"{name}: {reason}")


def _newer_minor(value: object, reads: str, name: str, error: Callable[[str], Exception]) -> bool:
    """Whether the file's ``schema_version`` is a newer minor of the major this code reads; another major is an
    error (a malformed version is left to the schema)."""
    if not isinstance(value, str) or not re.fullmatch(r"\d+\.\d+", value):
        return False
    major, _, minor = value.partition(".")
    ours, _, our_minor = reads.partition(".")
    if major != ours:
        raise error(f"{name}: schema_version: {value} is not supported (this wheelfit reads {ours}.x): update wheelfit")
    return bool(our_minor) and int(minor) > int(our_minor)


_REASON_CHARS = 200
_TYPES = {"object": "an object", "array": "a list", "string": "a string", "number": "a number",
          "integer": "an integer", "boolean": "true or false", "null": "null"}  # fmt: skip


def _reason(e: Any) -> str:
    """jsonschema's message, reworded where it would print a whole subtree or a schema."""
    schema = e.schema if isinstance(e.schema, dict) else {}
    if e.validator == "type":
        wanted = e.validator_value if isinstance(e.validator_value, list) else [e.validator_value]
        return f"expected {' or '.join(_TYPES.get(str(t), str(t)) for t in wanted)}, got {_kind(e.instance)}"
    if e.validator in ("additionalProperties", "unevaluatedProperties") and isinstance(e.instance, dict):
        patterns = [re.compile(p) for p in schema.get("patternProperties", {})]
        known = schema.get("properties", {})
        extra = [k for k in e.instance if k not in known and not any(p.search(k) for p in patterns)]
        return f"unknown key {', '.join(_show(k) for k in extra[:3])}"
    if _described(e):
        return str(schema["description"])  # the rule in the schema's own words, not the instance dumped
    if isinstance(e.instance, (dict, list)) and e.validator in ("not", "anyOf", "oneOf", "enum", "const"):
        return f"{_kind(e.instance)} is not allowed here"
    return str(e.message)


def _described(e: Any) -> bool:
    """A composite rule (``not``, ``anyOf``, ``oneOf``) whose schema says in a ``description`` what it requires."""
    return e.validator in ("not", "anyOf", "oneOf") and isinstance(e.schema, dict) and "description" in e.schema


def _json_path(path: Iterable[str | int]) -> str:
    """``releases.2.9.versions[0]``: keys joined by dots as the files are read, list indexes in brackets."""
    out = ""
    for key in path:
        if isinstance(key, str) and (not key.isprintable() or not key or len(key) > _SHOWN):
            key = _show(key)  # a key that is not data-like is quoted, so the message stays one line
        out += f"[{key}]" if isinstance(key, int) else (f".{key}" if out else str(key))
    return out


@cache
def _validator(schema: str | Path) -> Any:
    from jsonschema import Draft202012Validator  # see conform
    from jsonschema.validators import extend

    where = schema if isinstance(schema, Path) else files("wheelfit").joinpath(schema)
    document = json.loads(where.read_text(encoding="utf-8"))
    return extend(Draft202012Validator, {"pattern": _pattern})(document)  # type: ignore[no-untyped-call]


def _pattern(validator: Any, pattern: str, instance: object, schema: object) -> Iterator[Any]:
    """``pattern`` with the ECMA-262 meaning JSON Schema gives it: ``$`` ends the text (Python's ``re.search`` also
    accepts a final newline before it, so ``"gfx900\\n"`` would pass) and ``\\d`` is an ASCII digit."""
    if isinstance(instance, str) and not _ecma(pattern).search(instance):
        from jsonschema.exceptions import ValidationError

        yield ValidationError(f"{_show(instance)} does not match '{pattern}'")


@cache
def _ecma(pattern: str) -> re.Pattern[str]:
    return re.compile(re.sub(r"(?<!\\)\$", r"\\Z", pattern), re.ASCII)


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
