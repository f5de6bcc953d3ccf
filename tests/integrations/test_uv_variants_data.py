"""``uv_preview.json``: the packaged facts load and follow their schema; a damaged copy is refused with one line
naming the file and the key (never a KeyError), and the schema refuses the same copy."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from wheelfit.errors import WheelfitError
from wheelfit.kb.jsonfile import DataFileError
from wheelfit.variants.uv_preview import load_uv_preview

from ..conftest import ROOT

DATA = ROOT / "src/wheelfit/kb/data/uv_preview.json"
SCHEMA = ROOT / "src/wheelfit/kb/data/uv_preview.schema.json"


def packaged() -> dict[str, Any]:
    found: dict[str, Any] = json.loads(DATA.read_text(encoding="utf-8"))
    return found


def test_the_packaged_file_loads_and_names_what_uv_reads() -> None:
    facts = load_uv_preview()
    assert facts == load_uv_preview(DATA.read_bytes())
    assert facts.uv == packaged()["measured"]["uv"]
    assert facts.builtin["nvidia"] == facts.nvidia_provider
    assert {"amd", "intel"} <= set(facts.skipped)
    assert facts.sm_arch_variable.startswith("NV_") and facts.cuda_driver_variable.startswith("NV_")


def _drop(key: str) -> Callable[[dict[str, Any]], None]:
    return lambda d: d.pop(key)


def _set(path: str, value: object) -> Callable[[dict[str, Any]], None]:
    def edit(d: dict[str, Any]) -> None:
        *parents, last = path.split(".")
        node: Any = d
        for part in parents:
            node = node[int(part)] if part.isdigit() else node[part]
        node[int(last) if last.isdigit() else last] = value

    return edit


BROKEN = {
    "missing messages": (_drop("messages"), "missing 'messages'"),
    "unknown key": (_set("nvidia.sm_arch", "8.9"), "nvidia: unknown key 'sm_arch'"),
    "bad variable": (_set("nvidia.sm_arch_variable", "nv force sm"), "sm_arch_variable: 'nv force sm' does not match"),
    "unknown source": (_set("builtin.0.source", "NOWHERE"), "builtin[0].source: source 'NOWHERE' is not a key"),
    "uv version": (_set("measured.uv", "latest"), "measured.uv: 'latest' does not match"),
    "schema major": (_set("schema_version", "2.0"), "schema_version: 2.0 is not supported"),
    "not a list": (_set("skipped", "amd"), "skipped: expected a list, got string 'amd'"),
    "message missing": (lambda d: d["messages"].pop("variant_marker"), "messages: missing 'variant_marker'"),
}

#: A JSON Schema cannot say that a value is a key of another object.
SCHEMA_CANNOT = {"unknown source"}


@pytest.mark.parametrize("name", BROKEN)
def test_a_damaged_copy_is_one_line_naming_the_key(name: str) -> None:
    edit, expected = BROKEN[name]
    data = copy.deepcopy(packaged())
    edit(data)
    with pytest.raises(DataFileError) as caught:
        load_uv_preview(json.dumps(data), "uv_preview.json")
    message = str(caught.value)
    assert message.startswith("uv_preview.json: ") and expected in message
    assert "\n" not in message
    assert isinstance(caught.value, WheelfitError)
    if name in SCHEMA_CANNOT:
        return
    errors = list(Draft202012Validator(json.loads(SCHEMA.read_text(encoding="utf-8"))).iter_errors(data))
    assert errors, f"the schema accepts the copy with {name}"


def test_not_json_is_one_line() -> None:
    with pytest.raises(DataFileError, match=r"^uv_preview.json: not valid JSON: .* at line 1, column 2$"):
        load_uv_preview("{,", "uv_preview.json")
