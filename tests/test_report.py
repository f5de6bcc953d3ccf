"""The hardware report contract: round trip, validation, schema versions."""

from __future__ import annotations

import json

import pytest

from wheelfit.errors import ReportError, WheelfitError
from wheelfit.report import Accelerator, Cpu, HardwareReport, Platform, accelerator_from_dict
from wheelfit_probekit import ProbeRecord


def sample() -> HardwareReport:
    return HardwareReport(
        Platform("Linux", "x86_64", "3.12.3", "glibc 2.39", False, "6.8.0", False),
        Cpu("x86_64", "GenuineIntel", "Xeon", "sapphirerapids", "v4", ("avx512f", "amx_tile")),
        (
            accelerator_from_dict(
                {"vendor": "nvidia", "name": "NVIDIA H100", "pci_id": "10de:2330", "source": "nvidia-smi",
                 "compute_capability": "9.0", "driver_version": "580.95.05", "cuda_driver_version": "13.0",
                 "index": 0}
            ),
        ),
        (ProbeRecord("nvidia", "nvidia-smi", True, 12.5, detail="1 GPU"),),
    )


def test_json_round_trip_keeps_everything() -> None:
    rep = sample()
    again = HardwareReport.from_dict(json.loads(rep.to_json()))
    assert again.to_dict() == rep.to_dict()
    assert again.accelerators[0].extra == {"index": 0}


def test_vendor_keys_follow_the_contract() -> None:
    d = sample().to_dict()
    acc = d["accelerators"][0]
    assert {"compute_capability", "driver_version", "cuda_driver_version"} <= set(acc)
    assert "gfx" not in acc and "family" not in acc
    assert d["cpu"]["features"] == ["amx_tile", "avx512f"]
    assert Accelerator("nvidia", "x", None, "pci", compute_capability="8.6").arch == "sm_86"


def test_other_schema_major_is_refused_with_advice() -> None:
    d = sample().to_dict()
    d["schema_version"] = "2.0"
    with pytest.raises(ReportError, match=r"schema 2.0 is not supported.*wheelfit detect --json"):
        HardwareReport.from_dict(d)


@pytest.mark.parametrize(
    "broken",
    [[], {"schema_version": "1.0"}, {"schema_version": "1.0", "platform": [], "cpu": {}}],
)
def test_malformed_reports_raise_the_root_error(broken: object) -> None:
    with pytest.raises(WheelfitError):
        HardwareReport.from_dict(broken)  # type: ignore[arg-type]
