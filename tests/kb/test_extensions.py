"""Extension sources as data (``kb/data/extensions.json``): each entry's label pattern reads the labels its project
publishes (the examples its own workflows and indexes name), a broken entry is one line, and the doctor and the
site read the same table, so that adding a package is a data change."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from wheelfit.doctor.extensions import built_for
from wheelfit.install.verify import Companion
from wheelfit.kb.extensions import extensions, parse
from wheelfit.kb.matrix import KnowledgeError

from ..conftest import ROOT

DATA = ROOT / "src/wheelfit/kb/data/extensions.json"


@pytest.mark.parametrize(
    ("name", "version", "torch", "cuda", "abi"),
    [
        # flash-attn's publish workflow: +cu{12,13}torch{M.m}cxx11abi{TRUE,FALSE}
        ("flash-attn", "2.8.3+cu12torch2.9cxx11abiTRUE", "2.9", "12", True),
        ("mamba-ssm", "2.2.4+cu12torch2.6cxx11abiFALSE", "2.6", "12", False),
        # data.pyg.org's wheels: +pt{MM}cu{XYZ} / +pt{MM}cpu
        ("torch-scatter", "2.1.2+pt28cu126", "2.8", "126", None),
        ("pyg-lib", "0.4.0+pt210cpu", "2.10", "cpu", None),
        # data.dgl.ai: dgl-2.4.0+cu121
        ("dgl", "2.4.0+cu121", None, "121", None),
    ],
)
def test_each_pattern_reads_the_labels_its_project_publishes(
    name: str, version: str, torch: str | None, cuda: str, abi: bool | None
) -> None:
    built = built_for(Companion(name, version))
    assert (built.torch, built.cuda, built.cxx11abi) == (torch, cuda, abi)


def test_a_label_lost_from_the_version_is_read_from_the_file_it_came_from() -> None:
    url = "https://github.com/x/y/releases/download/v2.8.3/flash_attn-2.8.3%2Bcu12torch2.9cxx11abiFALSE-cp312-cp312-linux_x86_64.whl"
    built = built_for(Companion("flash-attn", "2.8.3", url=url))
    assert (built.torch, built.cuda, built.cxx11abi) == ("2.9", "12", False)


def test_every_entry_cites_a_source_and_the_doctor_reads_them_all() -> None:
    raw = json.loads(DATA.read_text(encoding="utf-8"))
    assert set(extensions()) == set(raw["packages"])
    assert all(e.source in raw["sources"] for e in extensions().values())


def test_adding_a_package_is_a_data_change(tmp_path: Path) -> None:
    raw = json.loads(DATA.read_text(encoding="utf-8"))
    raw["packages"]["new-ext"] = {
        "where": {"kind": "find-links", "url": "https://example.org/{variant}.html"},
        "label_pattern": r"pt(?P<torch_major>\d)(?P<torch_minor>\d+)(?P<variant>cpu|cu\d+)",
        "torch_pin": False, "confidence": "U", "source": "PYG",
    }  # fmt: skip
    table = parse(json.dumps(raw), "extensions.json")
    m = table["new-ext"].label
    assert m is not None and m.fullmatch("pt29cu128") is not None

    import sys

    sys.path.insert(0, str(ROOT / "docs/gen"))
    try:
        from docgen import extensions_page
    finally:
        sys.path.remove(str(ROOT / "docs/gen"))
    assert "| new-ext |" in extensions_page(json.dumps(raw)) and "| new-ext |" not in extensions_page()


@pytest.mark.parametrize(
    ("change", "said"),
    [
        ({"label_pattern": r"cu(?P<cuda>\d+"}, "not a regular expression"),
        ({"label_pattern": r"cu(?P<cudaa>\d+)"}, "unknown groups cudaa"),
        ({"torch_pin": "yes"}, "expected true or false"),
        ({"source": "NOWHERE"}, "is not a key of 'sources'"),
    ],
)
def test_a_broken_entry_is_one_line_naming_it(change: dict[str, object], said: str) -> None:
    raw = json.loads(DATA.read_text(encoding="utf-8"))
    raw["packages"]["flash-attn"].update(change)
    with pytest.raises(KnowledgeError) as exc:
        parse(json.dumps(raw), "extensions.json")
    assert str(exc.value).startswith("extensions.json: packages.flash-attn") and said in str(exc.value)
    assert "\n" not in str(exc.value)
