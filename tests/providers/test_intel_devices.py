"""The Intel device-ID table: family boundaries, names, AOT targets and the data file's own integrity."""

from __future__ import annotations

import json
from importlib import resources

import pytest

from wheelfit_intel.devices import lookup

# (device id, family, aot_target, subfamily): IDs on either side of each family's range.
BOUNDARIES = [
    (0x5690, "dg2", "dg2", "dg2-g10"),
    (0x56A0, "dg2", "dg2", "dg2-g10"),
    (0x56A6, "dg2", "dg2", "dg2-g11"),
    (0x56B3, "dg2", "dg2", "dg2-g12"),
    (0x56BF, "dg2", "dg2", "dg2-g10"),
    (0x56C0, "ats-m", "ats-m150", "ats-m150"),
    (0x56C1, "ats-m", "ats-m75", "ats-m75"),
    (0x56C2, "ats-m", "ats-m150", "ats-m150"),
    (0x0B69, "pvc", "pvc", "pvc"),
    (0x0BD0, "pvc", "pvc", "pvc"),
    (0x0BD5, "pvc", "pvc", "pvc"),
    (0x0BE5, "pvc", "pvc", "pvc"),
    (0x7D40, "mtl", "mtl-u", "mtl-u"),
    (0x7D41, "arl", None, "arl-u"),
    (0x7D45, "mtl", "mtl-u", "mtl-u"),
    (0x7D51, "arl", "arl-h", "arl-h"),
    (0x7D55, "mtl", "mtl-h", "mtl-h"),
    (0x7D60, "mtl", "mtl-u", "mtl-u"),
    (0x7D67, "arl", None, "arl-s"),
    (0x7DD1, "arl", "arl-h", "arl-h"),
    (0x7DD5, "mtl", "mtl-h", "mtl-h"),
    (0xB640, "arl", None, "arl-s"),
    (0x6420, "lnl", "lnl-m", "lnl-m"),
    (0x64B0, "lnl", "lnl-m", "lnl-m"),
    (0xE202, "bmg", "bmg", "bmg"),
    (0xE223, "bmg", "bmg", "bmg"),
    (0xB080, "ptl", None, "ptl"),
    (0xB087, "ptl", None, "ptl"),
    (0xB0B0, "ptl", None, "ptl"),
    (0x4905, "dg1", None, "dg1"),
    (0x4909, "dg1", None, "dg1"),
    (0xFD80, "wcl", None, "wcl"),
    (0xD740, "nvl", None, "nvl-s"),
    (0xD75F, "nvl", None, "nvl-p"),
    (0x6750, "cri", None, "cri"),
]


@pytest.mark.parametrize(("device", "family", "aot", "sub"), BOUNDARIES)
def test_family_boundaries(device: int, family: str, aot: str | None, sub: str | None) -> None:
    info = lookup(device)
    assert (info.family, info.aot_target, info.subfamily, info.known) == (family, aot, sub, True)


@pytest.mark.parametrize(
    "device",
    [0x568F, 0x56C3, 0x0BD3, 0x7D3F, 0x7D61, 0x64A1, 0xE201, 0xB088, 0xB08E, 0x4904, 0x490A, 0x3E92, 0x4680, 0x9A49],
)
def test_ids_outside_the_xe_ranges_are_legacy(device: int) -> None:
    info = lookup(device)
    assert info.family == "legacy"
    assert info.xpu_capable is False
    assert info.integrated is True
    assert info.aot_target is None


@pytest.mark.parametrize(
    ("device", "name"),
    [
        (0x56A0, "Intel Arc A770"),
        (0xE20B, "Intel Arc B580"),
        (0xE20C, "Intel Arc B570"),
        (0xE211, "Intel Arc Pro B60"),
        (0x0BD5, "Intel Data Center GPU Max 1550"),
        (0x0BDA, "Intel Data Center GPU Max 1100"),
        (0x64A0, "Intel Arc 130V/140V (Lunar Lake)"),
        (0x7D55, "Intel Arc Graphics (Meteor Lake)"),
        (0x3E92, "Intel UHD Graphics 630"),
        (0x3E98, "Intel UHD Graphics 630"),
        (0x5916, "Intel HD Graphics 620"),
        (0x9A49, "Intel Iris Xe Graphics"),
        (0x4680, "Intel GPU 8086:4680"),
        (0xB080, "Intel GPU 8086:b080"),
        (0x56A3, "Intel GPU 8086:56a3"),
    ],
)
def test_names(device: int, name: str) -> None:
    assert lookup(device).name == name


@pytest.mark.parametrize(
    ("family", "xpu", "integrated"),
    [
        ("dg2", True, False),
        ("bmg", True, False),
        ("pvc", True, False),
        ("ats-m", True, False),
        ("mtl", True, True),
        ("arl", True, True),
        ("lnl", True, True),
        ("ptl", True, True),
        ("dg1", False, False),
    ],
)
def test_family_capability(family: str, xpu: bool, integrated: bool) -> None:
    sample = next(d for d, f, _, _ in BOUNDARIES if f == family)
    info = lookup(sample)
    assert (info.xpu_capable, info.integrated) == (xpu, integrated)


def test_pci_id_is_lowercase_and_padded() -> None:
    assert lookup(0x0BD5).pci_id == "8086:0bd5"
    assert lookup(0xE20B).pci_id == "8086:e20b"


def test_data_file_cites_a_source_for_every_group() -> None:
    raw = json.loads(resources.files("wheelfit_intel").joinpath("data/devices.json").read_text(encoding="utf-8"))
    assert raw["sources"]
    for group in raw["groups"]:
        assert group["source"], group["family"]
        if group["names"]:
            assert group.get("names_source"), group["family"]
        for text in group["ids"]:
            assert text == text.lower() and len(text) == 6, text
    assert set(raw["families"]) >= {"dg2", "bmg", "pvc", "mtl", "arl", "lnl", "ptl", "legacy"}
    for fam in raw["families"].values():
        assert fam["why"]
