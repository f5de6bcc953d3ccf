"""Text for people at any width: wrapped at spaces with a hanging indent, a long word (a URL, a command,
``VAR=value``) never broken, data never highlighted. Shared by every renderer."""

from __future__ import annotations

import re
from collections.abc import Sequence

from rich.console import Console
from rich.text import Text

__all__ = ["HANG", "say", "table", "wrap"]

#: The widest head (``Machine  ``, ``  - ``) whose text continues under itself; a longer one indents by 4.
HANG = 12


def wrap(text: Text, width: int) -> list[Text]:
    """``text`` broken at spaces into lines of at most ``width`` cells; a longer word is a line of its own, whole
    (rich's wrapping folds or crops it)."""
    out: list[Text] = []
    for line in text.split("\n", allow_blank=True):
        offsets: list[int] = []
        start = 0
        for word in re.finditer(r"\S+", line.plain):
            if word.end() - start > width and word.start() > start:
                offsets.append(word.start())
                start = word.start()
        for piece in line.divide(offsets):
            piece.rstrip()
            out.append(piece)
    return out


def say(
    con: Console, head: str, body: str | Text = "", style: str = "", hang: int = HANG, indent: int | None = None
) -> None:
    """``head`` (markup: a label or a bullet) then ``body`` (data, never markup), wrapped at spaces to the console
    width; the lines after the first are indented under the body's start (by 4 after a head wider than ``hang``;
    by ``indent`` when given), and a first word too long to follow the head starts the next line."""
    lead = Text.from_markup(head)
    text = body if isinstance(body, Text) else Text(body, style=style)
    if indent is None:
        indent = lead.cell_len if lead.cell_len <= hang else 4
    first = text.plain.split(maxsplit=1)[0] if text.plain.strip() else ""
    if lead.cell_len > indent and len(first) > con.width - lead.cell_len:
        con.print(lead, soft_wrap=True, highlight=False)
        lead = Text(" " * indent)
    lines = wrap(text, max(con.width - indent, 20)) if text.plain else [Text()]
    for i, line in enumerate(lines):
        con.print(Text.assemble(lead if i == 0 else " " * indent, line), soft_wrap=True, highlight=False)


#: Columns between table cells.
GAP = 2
_wrap = wrap  # ``table``'s parameter ``wrap`` (the columns that wrap) hides the function


def table(
    con: Console,
    headers: Sequence[str],
    rows: Sequence[Sequence[str | Text]],
    *,
    title: str | None = None,
    wrap: Sequence[int] = (),
) -> None:
    """Plain columns: the ``wrap`` columns are narrowed (never below their longest word) until the table fits the
    console, their cells wrapped at spaces; the others keep their width. Nothing fits: the line overflows (rich's
    tables fold a word that does not fit, ``amd-variant-provider>=0.0.2,<1.0.0`` across two lines)."""
    cells = [[c if isinstance(c, Text) else Text(c) for c in row] for row in rows]
    heads = [Text(h, style="bold") for h in headers]
    n = len(headers)
    widths = [max([heads[i].cell_len, *(row[i].cell_len for row in cells)]) for i in range(n)]
    floors = [
        max([1, *(len(w) for row in [*cells, heads] for w in row[i].plain.split())]) if i in wrap else widths[i]
        for i in range(n)
    ]
    while sum(widths) + GAP * (n - 1) > con.width:
        shrinkable = [i for i in range(n) if widths[i] > floors[i]]
        if not shrinkable:
            break  # a word longer than the room left: the line overflows rather than split it
        # the last column holds the sentences: it gives up room at half the rate of the short ones
        widest = max(shrinkable, key=lambda i: widths[i] / (2 if i == n - 1 else 1))
        widths[widest] -= 1
    if title:
        con.print(Text(title, style="bold"), soft_wrap=True, highlight=False)
    for row in [heads, *cells]:
        wrapped = [_wrap(row[i], widths[i]) for i in range(n)]
        for k in range(max(len(w) for w in wrapped)):
            parts: list[Text] = []
            for i in range(n):
                piece = wrapped[i][k].copy() if k < len(wrapped[i]) else Text()
                if i < n - 1:
                    piece.pad_right(widths[i] - piece.cell_len + GAP)
                parts.append(piece)
            line = Text.assemble(*parts)
            line.rstrip()
            con.print(line, soft_wrap=True, highlight=False)
