"""A requirements file's text as pip's ``req_file.preprocess`` sees it: decoded, continued lines joined, comments
and blank lines dropped, ``${VAR}`` expanded; then each logical line broken into its requirement and its options.

Source: pip ``src/pip/_internal/req/req_file.py`` (``join_lines``, ``ignore_comments``, ``expand_env_variables``,
``break_args_options``) and ``utils/encoding.py`` (``auto_decode``), pip 24.x. Written without regular expressions
that backtrack, so a hostile line (megabytes of spaces) costs linear time.
"""

from __future__ import annotations

import codecs
import re
from collections.abc import Iterator, Mapping

__all__ = ["decode", "logical_lines", "split_options"]

#: pip's ``auto_decode``: a BOM decides the encoding.
_BOMS: tuple[tuple[bytes, str], ...] = (
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF32_BE, "utf-32-be"),  # before UTF-16: the UTF-32-LE BOM starts with the UTF-16-LE one
    (codecs.BOM_UTF32_LE, "utf-32-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
)
#: PEP 263: ``# -*- coding: latin-1 -*-`` on one of the first two lines. Bounded, so linear.
_CODING = re.compile(rb"coding[:=][ \t]{0,64}([-\w.]{1,64})")
#: pip's ENV_VAR_RE: only ``${NAME}``, NAME of upper-case letters, digits and underscores (POSIX).
_ENV_VAR = re.compile(r"\$\{([A-Z0-9_]+)\}")


def decode(data: bytes) -> str:
    """The text of a requirements file: by its BOM, else its PEP 263 coding line, else UTF-8 (pip falls back to
    the locale's encoding; a file must not mean different things on different machines). Raises
    ``UnicodeDecodeError`` or ``LookupError`` (an unknown coding name)."""
    for bom, encoding in _BOMS:
        if data.startswith(bom):
            return data[len(bom) :].decode(encoding)
    for line in data.split(b"\n", 2)[:2]:
        found = _CODING.search(line[:256]) if line.startswith(b"#") else None
        if found:
            return data.decode(found.group(1).decode("ascii"))
    return data.decode("utf-8")


def _is_comment_line(line: str) -> bool:
    """pip's ``COMMENT_RE.match``: ``#`` first, or after leading whitespace."""
    return line.lstrip().startswith("#")


def _strip_comment(line: str) -> str:
    """``line`` up to its comment: a ``#`` at the start or after whitespace (``pkg#frag`` is no comment)."""
    start = 0
    while (at := line.find("#", start)) != -1:
        if at == 0 or line[at - 1].isspace():
            return line[:at]
        start = at + 1
    return line


def _join(text: str) -> Iterator[tuple[int, str]]:
    """Physical lines joined where one ends in ``\\``; a joined line takes its first line's number. A comment
    line ends a continuation (it is kept, to be dropped next), as in pip's ``join_lines``."""
    first = 0
    parts: list[str] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.endswith("\\") or _is_comment_line(line):
            if _is_comment_line(line):
                line = " " + line
            if parts:
                parts.append(line)
                yield first, "".join(parts)
                parts = []
            else:
                yield number, line
        else:
            if not parts:
                first = number
            parts.append(line.strip("\\"))  # as pip: every backslash at either end goes
    if parts:
        yield first, "".join(parts)


def logical_lines(text: str, environ: Mapping[str, str]) -> Iterator[tuple[int, str]]:
    """(line number, line) for each line that says something: joined, comment-free, stripped, ``${VAR}``
    expanded from ``environ`` (a variable unset or empty stays as written, as in pip)."""
    for number, line in _join(text):
        stripped = _strip_comment(line).strip()
        if stripped:
            yield number, _ENV_VAR.sub(lambda m: environ.get(m.group(1)) or m.group(0), stripped)


def split_options(line: str) -> tuple[str, str]:
    """(requirement, options): the options start at the first space-separated token that starts with ``-``, so
    markers (which shell-style splitting would mangle) stay whole (pip's ``break_args_options``)."""
    tokens = line.split(" ")
    for index, token in enumerate(tokens):
        if token.startswith("-"):
            return " ".join(tokens[:index]).strip(), " ".join(tokens[index:])
    return line, ""
