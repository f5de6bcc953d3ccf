"""A typo'd copy of each data file is refused in one line naming the file, the key and the problem (never a bare
KeyError or TypeError): by its JSON Schema (the one description of its shape) for what a schema can say, by its loader
for the rest. The core's loaders hold a copy given as text to the schema at run time; a detector's table loader only
parses (the tests hold the packaged table to its schema), and still ends a shape it cannot read in one line."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from wheelfit.errors import WheelfitError
from wheelfit.kb.jsonfile import DataFileError, conform
from wheelfit.kb.notes import load_device_notes
from wheelfit.kb.overrides import load_rocm_overrides
from wheelfit_amd import devices as amd_devices
from wheelfit_cpu import info as cpu_info
from wheelfit_intel import devices as intel_devices
from wheelfit_nvidia import devicetable as nvidia_devices
from wheelfit_probekit import drivers as nvidia_drivers

from ..conftest import ROOT


@dataclass(frozen=True)
class Loader:
    path: str  # the data file, from the repository root
    name: str  # how messages name it
    load: Callable[[str, str], object]  # (text, name) -> the loaded table
    error: type[Exception]
    shape_at_run_time: bool = False  # the loader itself refuses a copy of the wrong shape, with the schema's words


CORE = "src/wheelfit/kb/data"
LOADERS = {
    "rocm_overrides": Loader(
        f"{CORE}/rocm_overrides.json", "rocm_overrides.json", load_rocm_overrides, DataFileError, shape_at_run_time=True
    ),
    "device_notes": Loader(
        f"{CORE}/device_notes.json", "device_notes.json", load_device_notes, DataFileError, shape_at_run_time=True
    ),
    "nvidia": Loader(
        "providers/nvidia/src/wheelfit_nvidia/data/pci_devices.json",
        "pci_devices.json",
        nvidia_devices.load_table,
        nvidia_devices.DataFileError,
    ),
    "cuda_drivers": Loader(
        "providers/probekit/src/wheelfit_probekit/data/cuda_drivers.json",
        "wheelfit_probekit/data/cuda_drivers.json",
        nvidia_drivers.load_driver_table,
        nvidia_drivers.DataFileError,
    ),
    "amd": Loader(
        "providers/amd/src/wheelfit_amd/data/devices.json",
        "amd/devices.json",
        amd_devices.load_table,
        amd_devices.DataFileError,
    ),
    "intel": Loader(
        "providers/intel/src/wheelfit_intel/data/devices.json",
        "intel/devices.json",
        intel_devices.load_table,
        intel_devices.DataFileError,
    ),
    "x86_64_levels": Loader(
        "providers/cpu/src/wheelfit_cpu/data/x86_64_levels.json",
        "wheelfit_cpu/data/x86_64_levels.json",
        lambda text, _name: cpu_info.read_data("x86_64_levels.json", text),
        cpu_info.DataFileError,
    ),
    "darwin_arm_features": Loader(
        "providers/cpu/src/wheelfit_cpu/data/darwin_arm_features.json",
        "wheelfit_cpu/data/darwin_arm_features.json",
        lambda text, _name: cpu_info.read_data("darwin_arm_features.json", text),
        cpu_info.DataFileError,
    ),
}


def raw(loader: str) -> Any:
    return json.loads((ROOT / LOADERS[loader].path).read_text(encoding="utf-8"))


def rename(key: str, new: str) -> Callable[[Any], None]:
    def apply(node: Any) -> None:
        node[new] = node.pop(key)

    return apply


def put(key: str | int, value: Any) -> Callable[[Any], None]:
    def apply(node: Any) -> None:
        node[key] = value

    return apply


def at(path: tuple[str | int, ...], edit: Callable[[Any], None]) -> Callable[[Any], None]:
    """One of several edits, each from the document root (for a rule about two nodes)."""

    def apply(node: Any) -> None:
        for key in path:
            node = node[key]
        edit(node)

    return apply


def both(*edits: Callable[[Any], None]) -> Callable[[Any], None]:
    def apply(node: Any) -> None:
        for edit in edits:
            edit(node)

    return apply


@dataclass(frozen=True)
class Case:
    loader: str
    path: tuple[str | int, ...]  # to the node the edit applies to
    edit: Callable[[Any], None]
    message: str  # after "<file>: "
    schema_says_it: bool = True  # False: a cross-reference (source keys, ...) that JSON Schema cannot express


CASES = [
    # renamed required keys
    Case("rocm_overrides", ("overrides", 0), rename("value", "valeu"), "overrides[0]: missing 'value'"),
    Case("rocm_overrides", (), rename("overrides", "overides"), "missing 'overrides'"),
    Case("rocm_overrides", ("overrides", 1), rename("risk", "rsik"), "overrides[1]: unknown key 'rsik'"),
    Case("device_notes", ("nvidia", 3), rename("family", "famliy"), "nvidia[3]: missing 'family'"),
    Case("device_notes", ("apple",), rename("no_mps", "nomps"), "apple: missing 'no_mps'"),
    Case("nvidia", ("spans", 0), rename("last", "end"), "spans[0]: missing 'last'"),
    Case("cuda_drivers", ("linux", 0), rename("confidence", "confidance"), "linux[0]: missing 'confidence'"),
    Case("cuda_drivers", ("windows", 4), put("driver", "580.00"), "windows[4]: unknown key 'driver'"),
    Case("amd", ("devices", 0), rename("gfx", "arch"), "devices[0]: missing 'gfx'"),
    Case("amd", ("devices", 0), rename("ids", "id"), "devices[0]: needs 'ids', or 'first' and 'last'"),
    Case("intel", ("groups", 0), rename("ids", "id"), "groups[0]: missing 'ids'"),
    Case("intel", ("families",), rename("legacy", "legacyy"), "families: missing 'legacy'"),
    Case("x86_64_levels", ("levels",), rename("v3", "v3 "), "levels: missing 'v3'"),
    Case("darwin_arm_features", (), rename("features", "feature"), "missing 'features'"),
    # wrong types and malformed values
    Case(
        "rocm_overrides",
        ("overrides", 1),
        put("gfx", "gfx1103"),
        "overrides[1].gfx: expected a list, got string 'gfx1103'",
    ),
    Case(
        "rocm_overrides",
        ("known_broken", 0),
        put("from_rocm", 6.4),
        "known_broken[0].from_rocm: expected a string, got number 6.4",
    ),
    Case("rocm_overrides", (), put("schema_version", "2.0"), "schema_version: 2.0 is not supported"),
    Case("device_notes", ("apple",), put("mps", True), "apple.mps: expected a string, got boolean true"),
    Case(
        "device_notes",
        ("amd", 0),
        put("gfx", ["gfx900", "GFX906"]),
        "amd[0].gfx[1]: 'GFX906' does not match '^gfx[0-9a-f]{3,4}$'",
    ),
    Case("nvidia", ("devices", "2684"), put("cc", 8.9), "devices.2684.cc: expected a string, got number 8.9"),
    Case("nvidia", ("devices",), put("26840", {}), "devices: '26840' does not match '^[0-9a-f]{4}$'"),
    Case("nvidia", (), put("spans", {}), "spans: expected a list, got an object"),
    Case(
        "cuda_drivers",
        ("minor_compat", "windows", 0),
        put("cuda", "12.0"),
        "minor_compat.windows[0].cuda: '12.0' does not match '^\\d+$'",
    ),
    Case(
        "cuda_drivers",
        ("windows", 0),
        put("min_driver", 560),
        "windows[0].min_driver: a driver version such as '560.28.03', or null where no number is known",
    ),
    Case(
        "amd",
        ("devices", 0),
        put("integrated", "yes"),
        "devices[0].integrated: expected true or false or null, got string 'yes'",
    ),
    Case("amd", ("devices", 0), put("ids", "0x1636"), "devices[0].ids: expected a list, got string '0x1636'"),
    Case(
        "intel",
        ("families", "dg2"),
        put("xpu_capable", "true"),
        "families.dg2.xpu_capable: expected true or false, got string 'true'",
    ),
    Case("intel", ("groups", 0, "ids"), put(0, "5690"), "groups[0].ids[0]: '5690' does not match '^0x[0-9a-f]{4}$'"),
    Case(
        "darwin_arm_features",
        ("features",),
        put("hw.optional.neon", "asimd"),
        "features.hw.optional.neon: expected a list, got string 'asimd'",
    ),
    Case("x86_64_levels", ("levels",), put("v4", []), "levels.v4: [] should be non-empty"),
    # cross-references and rules a schema cannot state
    Case(
        "rocm_overrides",
        ("overrides", 0),
        both(put("as", "gfx1030"), put("value", "10.3.1")),
        "overrides[0].value: '10.3.1' is not gfx1030's version ('10.3.0')",
        schema_says_it=False,
    ),
    Case(
        "rocm_overrides",
        ("overrides", 0),
        put("source", "BM-9"),
        "overrides[0].source: source 'BM-9' is not a key of 'sources'",
        schema_says_it=False,
    ),
    Case(
        "device_notes",
        (),
        both(at(("amd", 0), put("gfx", ["gfx1234"])), at(("amd", 1), put("gfx", ["gfx1234"]))),
        "amd[1].gfx[0]: gfx1234 is in an earlier row too",
        schema_says_it=False,
    ),
    Case(
        "amd",
        ("devices", 0),
        put("source", "pciids"),
        "devices[0].source: source 'pciids' is not a key of 'sources'",
        schema_says_it=False,
    ),
    Case(
        "intel",
        ("groups", 0),
        put("family", "dg3"),
        "groups[0].family: unknown family 'dg3'",
        schema_says_it=False,
    ),
    Case(
        "nvidia",
        ("spans", 0),
        both(put("first", "ffff"), put("last", "0001")),
        "spans[0]: 'first' ffff is above 'last' 0001",
        schema_says_it=False,
    ),
    Case(
        "cuda_drivers",
        ("windows", 4),
        put("source", "audit"),
        "windows[4] (13.3 GA).source: source 'audit' is not a key of 'sources'",
        schema_says_it=False,
    ),
]


def edited(case: Case) -> Any:
    data = copy.deepcopy(raw(case.loader))
    node = data
    for key in case.path:
        node = node[key]
    case.edit(node)
    return data


def schema_of(loader: str) -> Path:
    path = ROOT / LOADERS[loader].path
    return path.with_name(path.stem + ".schema.json")


def schema_errors(loader: str, data: Any) -> list[str]:
    schema = json.loads(schema_of(loader).read_text(encoding="utf-8"))
    return [e.message for e in Draft202012Validator(schema).iter_errors(data)]


@pytest.mark.parametrize("loader", LOADERS)
def test_the_packaged_file_loads(loader: str) -> None:
    spec = LOADERS[loader]
    assert spec.load((ROOT / spec.path).read_text(encoding="utf-8"), spec.name)


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c.loader}: {c.message}")
def test_a_typo_is_one_line_naming_file_and_key(case: Case) -> None:
    spec = LOADERS[case.loader]
    if case.schema_says_it and not spec.shape_at_run_time:  # the schema says it, as the tests hold the table to it
        with pytest.raises(DataFileError) as held:
            conform(edited(case), schema_of(case.loader), spec.name)
        assert str(held.value).startswith(f"{spec.name}: {case.message}") and "\n" not in str(held.value)
        try:  # the loader itself only parses, but never ends in a bare KeyError or TypeError
            spec.load(json.dumps(edited(case)), spec.name)
        except spec.error as exc:
            assert str(exc).startswith(f"{spec.name}: ") and "\n" not in str(exc)
        return
    with pytest.raises(spec.error) as info:
        spec.load(json.dumps(edited(case)), spec.name)
    message = str(info.value)
    assert message.startswith(f"{spec.name}: {case.message}")
    assert "\n" not in message
    assert isinstance(info.value, ValueError) and not isinstance(info.value, (KeyError, TypeError))


@pytest.mark.parametrize("case", [c for c in CASES if c.schema_says_it], ids=lambda c: f"{c.loader}: {c.message}")
def test_the_schema_refuses_the_same_typo(case: Case) -> None:
    assert schema_errors(case.loader, edited(case)) != []


@pytest.mark.parametrize("loader", LOADERS)
@pytest.mark.parametrize(
    ("text", "message"),
    [("[]", "expected an object, got "), ('{"sources": ', "not valid JSON: "), ("[" * 100_000, "not valid JSON: ")],
)
def test_not_an_object_or_not_json(loader: str, text: str, message: str) -> None:
    spec = LOADERS[loader]
    with pytest.raises(spec.error) as info:
        spec.load(text, spec.name)
    assert str(info.value).startswith(f"{spec.name}: {message}") and "\n" not in str(info.value)


def test_core_errors_are_wheelfit_errors_and_provider_errors_value_errors() -> None:
    """The CLI prints a WheelfitError as one line (exit 2); providers, which cannot import the core, raise
    ValueError subclasses, which the probe runner reports as a failed probe."""
    assert issubclass(DataFileError, WheelfitError)
    for spec in LOADERS.values():
        assert issubclass(spec.error, ValueError)


def test_loaders_read_the_packaged_file_by_default() -> None:
    assert load_rocm_overrides().overrides["gfx1031"] == ("gfx1030", "10.3.0", None)
    assert load_device_notes().amd_default
    assert nvidia_devices.load_table().devices[0x2684][1] == "8.9"
    assert amd_devices.load_table()[0x744C].gfx == "gfx1100"
    assert intel_devices.load_table().families["legacy"]["xpu_capable"] is False
    assert cpu_info.read_data("x86_64_levels.json")["levels"]["v2"]


def test_an_unknown_cpu_table_is_named() -> None:
    with pytest.raises(cpu_info.DataFileError, match=r"^wheelfit_cpu/data/nope\.json: not a data file"):
        cpu_info.read_data("nope.json")


def test_the_table_paths_exist() -> None:
    for spec in LOADERS.values():
        assert Path(ROOT / spec.path).is_file()
