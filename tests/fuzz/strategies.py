"""Inputs for the fuzz targets: arbitrary text and bytes, and near-valid text made by mutating real samples.

Random text rarely gets past a parser's first check; recorded tool output with a few lines changed, repeated,
dropped or cut does, so the code behind that check is exercised too. Every strategy is bounded in size, so a
target never waits on a huge input (a parser's own limits are tested where they are set).
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from hypothesis import strategies as st

from ..conftest import MACHINES, REALDATA

#: Sizes: a few KiB is enough to reach every branch of a line parser and keeps 200 examples fast.
MAX_TEXT = 2000
MAX_LINES = 60

#: Tokens that have broken parsers before: signs, non-ASCII digits (``str.isdigit`` accepts ``²``, ``int``
#: does not; ``int`` accepts ``٣``, a PCI id should not), separators, NUL, line breaks ``splitlines`` knows,
#: huge and non-finite numbers, byte-order marks, ``[N/A]``.
TRICKY = (
    "",
    " ",
    "-1",
    "+7",
    "1_0",
    "²",
    "٣",
    "0x",
    "0xffffffffff",
    "9" * 40,
    "1e999",
    "NaN",
    "[N/A]",
    "\x00",
    "\t",
    "\r",
    "\x0b",
    "\x1c",
    "\u2028",
    "\ufeff",
    ",",
    ", ",
    ":",
    ": ",
    "=",
    "+",
    "#",
    "\\",
    '"',
    "<",
    ">",
    "&#0;",
    "%",
    "/",
    "..",
    "gfx",
    "GPU-",
    "0000:01:00.0",
)


def arabic(text: str) -> str:
    """``text`` with its digits in Arabic-Indic script: ``\\d`` and ``int`` accept them, the kernel and the tools
    never write them, so a parser that takes them reports a number no other program would read."""
    return text.translate({ord("0") + i: 0x0660 + i for i in range(10)})


def sample(rel: str) -> str:
    """A recorded file under tests/machines or tests/data/realdata, as text."""
    for base in (MACHINES, REALDATA):
        path = base / rel
        if path.is_file():
            return path.read_text(encoding="utf-8", errors="replace")
    raise FileNotFoundError(rel)


def samples(pattern: str, base: Path = MACHINES, limit: int = 20) -> list[str]:
    """Up to ``limit`` recorded files matching ``pattern`` (sorted, so the ci profile sees the same ones)."""
    found = sorted(p for p in base.glob(pattern) if p.is_file())[:limit]
    if not found:
        raise FileNotFoundError(f"no recorded sample matches {base}/{pattern}")
    return [p.read_text(encoding="utf-8", errors="replace") for p in found]


def junk() -> st.SearchStrategy[str]:
    """A short piece of text: a tricky token, or arbitrary characters."""
    return st.one_of(st.sampled_from(TRICKY), st.text(max_size=12))


@st.composite
def _mutated_line(draw: st.DrawFn, line: str) -> str:
    kind = draw(st.integers(0, 5))
    if kind == 0 or not line:
        return line
    at = draw(st.integers(0, len(line)))
    if kind == 1:  # insert
        return line[:at] + draw(junk()) + line[at:]
    if kind == 2:  # cut
        end = draw(st.integers(at, len(line)))
        return line[:at] + line[end:]
    if kind == 3:  # replace one whitespace-separated token
        tokens = line.split(" ")
        i = draw(st.integers(0, len(tokens) - 1))
        tokens[i] = draw(junk())
        return " ".join(tokens)
    if kind == 4:  # truncate
        return line[:at]
    return line + draw(junk())


@st.composite
def near_valid(draw: st.DrawFn, corpus: Sequence[str]) -> str:
    """One recorded sample with some lines mutated, repeated, dropped or reordered, bounded in size."""
    lines = draw(st.sampled_from(corpus)).splitlines()[:MAX_LINES] or [""]
    out: list[str] = []
    for line in lines:
        op = draw(st.integers(0, 9))
        if op == 0:
            continue  # dropped
        mutated = draw(_mutated_line(line)) if op <= 3 else line
        out.append(mutated)
        if op == 9:
            out.extend([mutated] * draw(st.integers(1, 3)))  # repeated
    if draw(st.booleans()):
        other = draw(st.sampled_from(corpus)).splitlines()[:MAX_LINES]
        if other:
            out.insert(draw(st.integers(0, len(out))), draw(st.sampled_from(other)))
    newline = draw(st.sampled_from(("\n", "\n", "\r\n", "\r")))
    return newline.join(out)[: MAX_TEXT * 4]


def texts(corpus: Sequence[str] | None = None) -> st.SearchStrategy[str]:
    """Arbitrary text, and (given a corpus) near-valid text, which most examples are."""
    arbitrary = st.text(max_size=MAX_TEXT)
    if corpus is None:
        return arbitrary
    return st.one_of(arbitrary, near_valid(corpus), near_valid(corpus))


def binary_text() -> st.SearchStrategy[str]:
    """Bytes read the way the providers read files (UTF-8 with replacement), and the surrogateescape form."""
    raw = st.binary(max_size=MAX_TEXT)
    return st.one_of(
        raw.map(lambda b: b.decode("utf-8", errors="replace")),
        raw.map(lambda b: b.decode("utf-8", errors="surrogateescape")),
        raw.map(lambda b: b.decode("latin-1")),
    )


#: Any JSON value, small: what a mutated document gets in place of one of its own.
JSON_VALUES: st.SearchStrategy[Any] = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-2, 1 << 64)
    | st.floats(allow_nan=False, allow_infinity=False)
    | junk()
    | st.sampled_from(["1.0", "2.0", "null", "sha256", "cuda", "nvidia", "sm_arch", "90_real", "x.whl"]),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(junk(), inner, max_size=3),
    max_leaves=6,
)


def _slots(value: Any) -> Iterator[tuple[Any, Any]]:
    """Every (container, key or index) in a decoded JSON document, outermost first."""
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    for key, child in items:
        yield value, key
        yield from _slots(child)


@st.composite
def mutated_json(draw: st.DrawFn, documents: Sequence[Any]) -> str:
    """A real JSON document with one to three values replaced, removed or added, as text.

    Line mutations of JSON mostly give a syntax error, which the first check refuses; this keeps the document
    well-formed so the checks of its shape are what is exercised.
    """
    doc = copy.deepcopy(draw(st.sampled_from(documents)))
    for _ in range(draw(st.integers(1, 3))):
        slots = list(_slots(doc))
        if not slots:
            break
        parent, key = draw(st.sampled_from(slots))
        op = draw(st.integers(0, 3))
        if op <= 1:
            parent[key] = draw(JSON_VALUES)
        elif op == 2:
            del parent[key]
        elif isinstance(parent, dict):
            parent[draw(junk())] = draw(JSON_VALUES)
        else:
            parent.insert(key, draw(JSON_VALUES))
    return json.dumps(doc, ensure_ascii=draw(st.booleans()))
