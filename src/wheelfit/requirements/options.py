"""The options of a requirements-file line, read as pip's optparse reads them: ``--opt=value``, ``--opt value``,
``-xvalue``, ``-x value``, and a long option abbreviated to a unique prefix (``--extra-index`` is
``--extra-index-url``).

Which options pip accepts in a file: pip ``src/pip/_internal/req/req_file.py`` ``SUPPORTED_OPTIONS`` and
``SUPPORTED_OPTIONS_REQ``. wheelfit reads the ones that say where packages come from and which requirement files
to read; the others are refused by name rather than ignored, since ignoring them would install something else
than ``pip install -r`` does.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass, field

from .model import clip, cut

__all__ = ["LineOptions", "OptionError", "parse_options"]

#: Long name -> (short name, takes a value, attribute of LineOptions).
_SUPPORTED: dict[str, tuple[str | None, bool, str]] = {
    "--requirement": ("-r", True, "requirements"),
    "--constraint": ("-c", True, "constraints"),
    "--index-url": ("-i", True, "index_urls"),
    "--extra-index-url": (None, True, "extra_index_urls"),
    "--find-links": ("-f", True, "find_links"),
    "--pre": (None, False, "pre"),
    "--no-index": (None, False, "no_index"),
    "--hash": (None, True, "hashes"),
}
#: The rest of pip's requirements-file options (long -> short): known, so that a prefix resolves as pip's
#: would, and refused by name.
_REFUSED: dict[str, str | None] = {
    "--editable": "-e",
    "--no-binary": None,
    "--only-binary": None,
    "--prefer-binary": None,
    "--require-hashes": None,
    "--trusted-host": None,
    "--use-feature": None,
    "--global-option": None,
    "--config-settings": "-C",
}
_SHORT: dict[str, str] = {short: long for long, (short, _, _) in _SUPPORTED.items() if short is not None} | {
    short: long for long, short in _REFUSED.items() if short is not None
}
_LONG = (*_SUPPORTED, *_REFUSED)


class OptionError(ValueError):
    """An option wheelfit cannot take; the message is the part after ``FILE:LINE:``."""


@dataclass
class LineOptions:
    """The options found on one line, in order of appearance within each kind."""

    requirements: list[str] = field(default_factory=list)
    constraints: list[str] = field(default_factory=list)
    index_urls: list[str] = field(default_factory=list)
    extra_index_urls: list[str] = field(default_factory=list)
    find_links: list[str] = field(default_factory=list)
    hashes: list[str] = field(default_factory=list)
    pre: bool = False
    no_index: bool = False
    #: Long names as they came, for "this option does not belong here" messages.
    seen: list[str] = field(default_factory=list)


def _long_name(token: str) -> str:
    name = token.split("=", 1)[0]
    if name in _LONG:
        return name
    matches = [long for long in _LONG if long.startswith(name)]
    if len(matches) == 1:
        return matches[0]
    if matches:
        raise OptionError(f"{cut(name)} is ambiguous ({', '.join(matches)}); spell the option out")
    raise OptionError(f"{cut(name)} is not an option of a requirements file; remove it")


def _refuse(long: str) -> OptionError:
    short = _REFUSED.get(long)
    shown = f"{short}/{long}" if short else long
    if long == "--editable":
        return OptionError(f"{shown} is not supported by wheelfit; install editable projects with pip or uv")
    return OptionError(f"{shown} is not supported by wheelfit; remove it or install with pip or uv")


def parse_options(text: str) -> LineOptions:
    """The options in ``text`` (a line's part from its first ``-`` token on). Raises :class:`OptionError`."""
    try:
        tokens = shlex.split(text)
    except ValueError as exc:
        raise OptionError(f"cannot split the options {clip(text)} ({exc}); check the quotes") from exc
    found = LineOptions()
    index = 0
    while index < len(tokens):
        token = tokens[index]
        index += 1
        value: str | None = None
        if token.startswith("--"):
            long = _long_name(token)
            if "=" in token:
                value = token.split("=", 1)[1]
        elif token.startswith("-") and len(token) > 1 and token[:2] in _SHORT:
            long = _SHORT[token[:2]]
            value = token[2:] or None
        else:
            what = "is not an option" if token.startswith("-") else "comes after the options"
            raise OptionError(f"{clip(token)} {what}; put a requirement before its options, one per line")
        if long in _REFUSED:
            raise _refuse(long)
        _, takes_value, attribute = _SUPPORTED[long]
        if not takes_value:
            if value is not None:
                raise OptionError(f"{long} takes no value; write it alone")
            setattr(found, attribute, True)
        else:
            if value is None:
                if index >= len(tokens):
                    raise OptionError(f"{long} needs a value; write {long}=VALUE")
                value = tokens[index]
                index += 1
            if not value:
                raise OptionError(f"{long} has an empty value; give one")
            getattr(found, attribute).append(value)
        found.seen.append(long)
    return found
