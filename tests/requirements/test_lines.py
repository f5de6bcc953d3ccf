"""The line rules (continuations, comments, ${VAR}) equal pip's own on any text: pip's ``preprocess`` is the
oracle (pip is in every virtual environment; its parser is internal, so the test skips if it moves)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from wheelfit.requirements.lines import logical_lines, split_options

req_file = pytest.importorskip("pip._internal.req.req_file")

#: Pieces that exercise every rule: backslashes at line ends, '#' with and without whitespace before it,
#: blank and indented lines, CRLF, set, empty and unset variables, and lower-case names (never expanded).
PIECES = ["a", "b ", " ", "\t", "#", " #c", "\\", "\n", "\r\n", "${SET}", "${EMPTY}", "${UNSET}", "${low}", "-x", "; m"]
ENVIRON = {"SET": "value", "EMPTY": "", "low": "no"}


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(PIECES), max_size=40).map("".join))
def test_logical_lines_are_pips(text: str) -> None:
    with pytest.MonkeyPatch.context() as env:  # pip reads os.environ; wheelfit the mapping it is given
        for name, value in ENVIRON.items():
            env.setenv(name, value)
        env.delenv("UNSET", raising=False)
        expected = list(req_file.preprocess(text))
    assert list(logical_lines(text, ENVIRON)) == expected


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(["torch", "==2.9", " ", "-", "--hash=x", ";", "a"]), max_size=20).map("".join))
def test_options_start_where_pips_do(text: str) -> None:
    args, options = req_file.break_args_options(text)
    assert split_options(text) == ((args.strip(), options) if options else (args, ""))
