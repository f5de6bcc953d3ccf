"""Every packaged data file against its JSON Schema (draft 2020-12), the one description of its shape.

As archspec does, the packaged files are checked here, not at run time (start-up; providers load with the standard
library only): their loaders only parse them and check what a schema cannot say. A file the user passes is held to
the same schema at run time (:func:`wheelfit.kb.jsonfile.conform`). Pairs are found by name, so a schema added next
to a data file later is checked without editing this test.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from ..conftest import ROOT

DRAFT = "https://json-schema.org/draft/2020-12/schema"
SCHEMAS = sorted([*ROOT.glob("src/wheelfit/**/data/*.schema.json"), *ROOT.glob("providers/*/src/*/data/*.schema.json")])
#: Schemas of files wheelfit reads or writes at run time, with no packaged file beside them.
RUN_TIME = sorted(ROOT.glob("src/wheelfit/schemas/*.json"))
DATA = sorted(
    p
    for p in [*ROOT.glob("src/wheelfit/**/data/*.json"), *ROOT.glob("providers/*/src/*/data/*.json")]
    if not p.name.endswith(".schema.json")
)


def rel(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


def data_file(schema: Path) -> Path:
    return schema.with_name(schema.name.removesuffix(".schema.json") + ".json")


def load(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


def test_the_schemas_are_found() -> None:
    found = {rel(p) for p in SCHEMAS}
    assert {
        "src/wheelfit/kb/data/rocm_overrides.schema.json",
        "src/wheelfit/kb/data/device_notes.schema.json",
        "providers/nvidia/src/wheelfit_nvidia/data/pci_devices.schema.json",
        "providers/amd/src/wheelfit_amd/data/devices.schema.json",
        "providers/intel/src/wheelfit_intel/data/devices.schema.json",
        "providers/cpu/src/wheelfit_cpu/data/x86_64_levels.schema.json",
        "providers/cpu/src/wheelfit_cpu/data/darwin_arm_features.schema.json",
        "providers/probekit/src/wheelfit_probekit/data/cuda_drivers.schema.json",
        "src/wheelfit/kb/data/pytorch.schema.json",
        "src/wheelfit/kb/data/uv_preview.schema.json",
    } <= found


def test_every_data_file_has_a_schema() -> None:
    missing = [rel(p) for p in DATA if not (p.parent / f"{p.stem}.schema.json").is_file()]
    assert missing == []


@pytest.mark.parametrize("schema", SCHEMAS, ids=rel)
def test_schema_is_a_valid_draft_2020_12_schema(schema: Path) -> None:
    document = load(schema)
    assert document.get("$schema") == DRAFT
    Draft202012Validator.check_schema(document)


@pytest.mark.parametrize("schema", SCHEMAS, ids=rel)
def test_data_file_follows_its_schema(schema: Path) -> None:
    data = data_file(schema)
    assert data.is_file(), f"{rel(schema)} has no data file {data.name} beside it"
    validator = Draft202012Validator(load(schema))
    errors = [f"{e.json_path}: {e.message}" for e in validator.iter_errors(load(data))]
    assert errors == [], f"{rel(data)} does not follow {schema.name}"


@pytest.mark.parametrize("schema", RUN_TIME, ids=rel)
def test_run_time_schema_is_a_valid_draft_2020_12_schema(schema: Path) -> None:
    document = load(schema)
    assert document.get("$schema") == DRAFT
    Draft202012Validator.check_schema(document)


def test_the_run_time_schemas_are_found() -> None:
    assert {p.name for p in RUN_TIME} >= {"measured.schema.json", "variants.schema.json", "doctor.schema.json"}


def test_the_packaged_files_load_without_the_schema_library() -> None:
    """Start-up: reading the packaged data (the knowledge base, its notes, the providers' tables) never imports
    jsonschema; only a file the user passes does."""
    code = """
import sys
from wheelfit.kb.matrix import load_knowledge
from wheelfit.kb.notes import load_device_notes
from wheelfit.kb.overrides import load_rocm_overrides
from wheelfit.kb.extensions import extensions
from wheelfit.variants.uv_preview import load_uv_preview
from wheelfit_amd.devices import load_table as amd
from wheelfit_intel.devices import load_table as intel
from wheelfit_nvidia.devicetable import load_table as nvidia
from wheelfit_probekit.drivers import load_driver_table as drivers
load_knowledge(); load_device_notes(); load_rocm_overrides(); extensions(); load_uv_preview(); amd(); intel(); nvidia()
drivers()
assert "jsonschema" not in sys.modules, "jsonschema imported"
"""
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
