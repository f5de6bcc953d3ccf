"""Inputs for the fuzz targets: arbitrary text and bytes, and near-valid text made by mutating real samples.

Random text rarely gets past a parser's first check; recorded tool output with a few lines changed, repeated,
dropped or cut does, so the code behind that check is exercised too. Every strategy is bounded in size, so a
target never waits on a huge input (a parser's own limits are tested where they are set).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

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
