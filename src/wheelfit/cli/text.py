"""Text for people at any width: wrapped at spaces with a hanging indent, a long word (a URL, a command,
``VAR=value``) never broken, data never highlighted. Shared by every renderer."""

from __future__ import annotations

import re

from rich.console import Console
from rich.text import Text

__all__ = ["HANG", "say", "wrap"]

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
