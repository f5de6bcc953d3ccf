"""The one JSON reader: hostile documents are one line naming the file, through the function itself, through
``wheelfit.variants.metadata.loads`` and through ``wheelfit variants show``; never a traceback, never misread."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.inprocess import wheelfit_in_process
from wheelfit.errors import WheelfitError
from wheelfit.kb.jsonfile import MAX_BYTES, DataFileError, load_json, read_json_file
from wheelfit.variants.errors import VariantError
from wheelfit.variants.metadata import loads

from ..conftest import hermetic_env

NAME = "hostile.json"

#: (id, document, the message after "<file>: ")
HOSTILE: list[tuple[str, bytes, str]] = [
    ("int-5000-digits", b'{"a": ' + b"7" * 5000 + b"}", "an integer of 5000 digits; wheelfit reads at most 100"),
    ("int-101-digits", b'{"a": -' + b"7" * 101 + b"}", "an integer of 101 digits"),
    ("float-long", b'{"a": 0.' + b"5" * 200 + b"}", "a number of 202 characters"),
    ("float-overflow", b'{"a": 1e999}', "the number 1e999 is too large for a double"),
    ("nan", b'{"a": NaN}', "NaN is not JSON (RFC 8259 has no NaN or Infinity)"),
    ("infinity", b'{"a": [1, Infinity]}', "Infinity is not JSON"),
    ("minus-infinity", b'{"a": -Infinity}', "-Infinity is not JSON"),
    ("deep-lists", b"[" * 100_000, "not valid JSON: nested too deeply"),
    ("deep-objects", b'{"a": ' * 100_000, "not valid JSON: nested too deeply"),
    ("duplicate-key", b'{"variants": {}, "variants": {"x": {}}}', "key 'variants' appears twice in one object"),
    ("duplicate-nested", b'{"a": [{"k": 1, "k": 1}]}', "key 'k' appears twice in one object"),
    ("duplicate-newline", b'{"a\\nb": 1, "a\\nb": 2}', "key 'a\\nb' appears twice"),
    ("not-utf8", b'{"a": "caf\xe9"}', "not UTF-8 text (byte 0xe9 at line 1)"),
    ("not-utf8-line-3", b'{\n"a": 1,\n"b": "\xff"}', "not UTF-8 text (byte 0xff at line 3)"),
    ("utf16-bom", '{"a": 1}'.encode("utf-16"), "not UTF-8 text: it starts with a UTF-16 (little-endian) byte-order"),
    ("utf16be-bom", b"\xfe\xff" + b"{\x00}", "not UTF-8 text: it starts with a UTF-16 (big-endian) byte-order"),
    ("utf32-bom", '{"a": 1}'.encode("utf-32"), "not UTF-8 text: it starts with a UTF-32 (little-endian) byte-order"),
    ("lone-surrogate", b'{"a": ["\\ud800"]}', "a \\u escape gives U+D800, a lone surrogate, not a character"),
    ("lone-low-surrogate", b'{"\\udc00": 1}', "a \\u escape gives U+DC00, a lone surrogate"),
    ("empty", b"", "not valid JSON: it is empty"),
    ("blank", b" \n\t ", "not valid JSON: it is empty"),
    ("truncated", b'{"a": [1, 2', "not valid JSON: Expecting ',' delimiter at line 1, column 12"),
    ("trailing", b'{"a": 1} {"b": 2}', "not valid JSON: Extra data at line 1, column 10"),
    ("control-char", b'{"a": "x\x01y"}', "not valid JSON: Invalid control character at line 1, column 9"),
]


@pytest.mark.parametrize(("data", "message"), [h[1:] for h in HOSTILE], ids=[h[0] for h in HOSTILE])
def test_load_json_refuses_in_one_line(data: bytes, message: str) -> None:
    with pytest.raises(DataFileError) as info:
        load_json(data, NAME)
    text = str(info.value)
    assert text.startswith(f"{NAME}: {message}"), text
    assert "\n" not in text and len(text) < 300


@pytest.mark.parametrize(("data", "message"), [h[1:] for h in HOSTILE], ids=[h[0] for h in HOSTILE])
def test_variant_metadata_refuses_in_one_line(data: bytes, message: str) -> None:
    with pytest.raises(VariantError) as info:
        loads(data, NAME)
    assert str(info.value).startswith(f"{NAME}: {message}") and "\n" not in str(info.value)


def test_the_error_type_is_the_callers() -> None:
    class MineError(WheelfitError):
        pass

    with pytest.raises(MineError, match=r"^k\.json: NaN is not JSON"):
        load_json("NaN", "k.json", error=MineError)
    assert issubclass(DataFileError, WheelfitError) and issubclass(DataFileError, ValueError)


def test_a_huge_document_is_refused_before_it_is_parsed() -> None:
    with pytest.raises(DataFileError, match=r"^big\.json: larger than 8 MiB; not a data file"):
        load_json(b" " * (MAX_BYTES + 1), "big.json")
    with pytest.raises(DataFileError, match=r"^big\.json: larger than 1,000 bytes"):
        load_json("[" + "0," * 600 + "0]", "big.json", max_bytes=1000)
    assert load_json(b" " * (MAX_BYTES - 2) + b"[]", "big.json") == []


def test_what_json_allows_is_read() -> None:
    """A UTF-8 byte-order mark is skipped (RFC 8259 section 8.1), paired surrogate escapes are one character,
    numbers up to the limit and non-ASCII text are data."""
    assert load_json(b'\xef\xbb\xbf{"a": 1}', NAME) == {"a": 1}
    assert load_json('\ufeff{"a": 1}', NAME) == {"a": 1}
    assert load_json(b'["\\ud83d\\ude00", "\\\\ud800"]', NAME) == ["\U0001f600", "\\ud800"]
    assert load_json('{"a": -' + "9" * 99 + ', "b": 1.5e300, "c": "café"}', NAME) == {
        "a": -int("9" * 99),
        "b": 1.5e300,
        "c": "café",
    }
    assert load_json(b'{"a": {"a": 1}, "b": [{"a": 2}, {"a": 3}]}', NAME) == {"a": {"a": 1}, "b": [{"a": 2}, {"a": 3}]}


def test_a_str_with_a_raw_surrogate_is_refused() -> None:
    """Text read with errors='surrogateescape' carries the undecodable byte as a surrogate."""
    with pytest.raises(DataFileError, match=r"not UTF-8 text: it holds U\+DCFF, which is not a character"):
        load_json('{"a": "\udcff"}', NAME)


def test_a_long_duplicate_key_is_cut_short() -> None:
    key = "k" * 5000
    with pytest.raises(DataFileError) as info:
        load_json(f'{{"{key}": 1, "{key}": 2}}', NAME)
    assert "(5000 characters)" in str(info.value) and len(str(info.value)) < 300


def test_read_json_file(tmp_path: Path) -> None:
    good = tmp_path / "good.json"
    good.write_bytes(b'{"a": 1}')
    assert read_json_file(good) == {"a": 1}
    with pytest.raises(DataFileError, match=r"^nope\.json: no such file$"):
        read_json_file(tmp_path / "nope.json", "nope.json")
    with pytest.raises(DataFileError, match=r": cannot read it \("):
        read_json_file(tmp_path)
    big = tmp_path / "big.json"
    big.write_bytes(b" " * 2000)
    with pytest.raises(DataFileError, match=r"^big\.json: larger than 1,000 bytes"):
        read_json_file(big, "big.json", max_bytes=1000)


@pytest.mark.skipif(not Path("/dev/zero").exists(), reason="needs /dev/zero")
def test_an_endless_file_is_read_only_up_to_the_limit() -> None:
    with pytest.raises(DataFileError, match=r"^/dev/zero: larger than 1 MiB"):
        read_json_file("/dev/zero", max_bytes=1024 * 1024)


CLI_CASES = [h for h in HOSTILE if h[0] in {"int-5000-digits", "nan", "deep-lists", "duplicate-key", "not-utf8"}]
CLI_CASES += [h for h in HOSTILE if h[0] in {"utf16-bom", "lone-surrogate", "duplicate-newline"}]


@pytest.mark.parametrize(("data", "message"), [h[1:] for h in CLI_CASES], ids=[h[0] for h in CLI_CASES])
def test_variants_show_says_it_in_one_line(tmp_path: Path, data: bytes, message: str) -> None:
    (tmp_path / "torch-9.9.9-variants.json").write_bytes(data)
    r = wheelfit_in_process(["variants", "show", "torch-9.9.9-variants.json"], hermetic_env(), cwd=tmp_path)
    assert r.returncode == 2, r.stderr  # a file the user named: a usage error, as a requirements file
    assert r.stdout == ""
    lines = r.stderr.splitlines()
    assert len(lines) == 1, r.stderr
    assert lines[0].startswith(f"wheelfit: error: torch-9.9.9-variants.json: {message}")


def test_variants_show_refuses_a_huge_file_in_one_line(tmp_path: Path) -> None:
    (tmp_path / "huge-variants.json").write_bytes(b" " * (MAX_BYTES + 1))
    r = wheelfit_in_process(["variants", "show", "huge-variants.json"], hermetic_env(), cwd=tmp_path)
    assert r.returncode == 2 and len(r.stderr.splitlines()) == 1
    assert r.stderr.startswith("wheelfit: error: huge-variants.json: larger than 8 MiB")
