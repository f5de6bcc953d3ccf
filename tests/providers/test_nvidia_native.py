"""The NVML/libcuda child probe: its JSON parser, and the real child on this GPU-less machine."""

from __future__ import annotations

import ctypes.util
import json
from pathlib import Path

import pytest

from wheelfit_nvidia import PROVIDER
from wheelfit_nvidia.detect import run_native
from wheelfit_nvidia.native import parse_native
from wheelfit_probekit import ProbeLog, System

from ..conftest import hermetic_env

NVML_ANSWER = {
    "nvml": {
        "driver": "550.144.03",
        "cuda": 12040,
        "devices": [
            {
                "index": 0,
                "name": "NVIDIA H100 80GB HBM3",
                "uuid": "GPU-f75045e8-4d87-49d1-2eb9-39ec2baddf9b",
                "cc": [9, 0],
                "bus_id": "00000000:62:00.0",
                "pci_device_id": 0x233010DE,
            },
            {"index": 1, "error": "NVML error 15 (GPU is lost)"},
            {"index": 2, "name": "NVIDIA GeForce RTX 5090", "cc": [12, 0], "pci_device_id": 0x12345678},
        ],
    },
    "cuda": None,
}


def test_parse_nvml_answer() -> None:
    report = parse_native(json.dumps(NVML_ANSWER) + "\n")
    assert report.source == "nvml"
    assert (report.driver_version, report.cuda_driver_version) == ("550.144.03", "12.4")
    h100, rtx = report.gpus  # the lost GPU is dropped
    assert (h100.name, h100.compute_capability, h100.bus_id, h100.pci_id) == (
        "NVIDIA H100 80GB HBM3",
        "9.0",
        "0000:62:00.0",
        "10de:2330",
    )
    assert h100.uuid == "GPU-f75045e8-4d87-49d1-2eb9-39ec2baddf9b"
    assert (rtx.index, rtx.compute_capability, rtx.pci_id, rtx.bus_id) == (2, "12.0", None, None)


def test_parse_libcuda_fallback() -> None:
    answer = {
        "nvml": {"error": "nvmlInit: NVML error 9 (Driver Not Loaded)"},
        "cuda": {"cuda": 12060, "devices": [{"index": 0, "name": "Orin", "cc": [8, 7]}]},
    }
    report = parse_native(json.dumps(answer))
    assert report.source == "libcuda"
    assert report.cuda_driver_version == "12.6"
    assert report.gpus[0].compute_capability == "8.7"
    assert report.errors == {"nvml": "nvmlInit: NVML error 9 (Driver Not Loaded)"}
    assert not report.library_missing


def test_parse_nothing_found() -> None:
    answer = {
        "nvml": {"error": "library not found: libnvidia-ml.so.1: cannot open shared object file", "missing": True},
        "cuda": {"error": "library not found: libcuda.so.1: cannot open shared object file", "missing": True},
    }
    report = parse_native(json.dumps(answer))
    assert report.source is None and report.gpus == []
    assert report.library_missing


@pytest.mark.parametrize("text", ["", "Segmentation fault", "[1, 2]", '{"nvml": "x"'])
def test_parse_rejects_non_objects(text: str) -> None:
    with pytest.raises(ValueError):
        parse_native(text)


def test_parse_ignores_malformed_fields() -> None:
    answer = {"nvml": {"driver": "\x00??", "cuda": "12.4", "devices": [{"index": 0, "cc": [9], "uuid": 7}]}}
    report = parse_native(json.dumps(answer))
    assert (report.driver_version, report.cuda_driver_version) == (None, None)
    assert report.gpus[0].compute_capability is None and report.gpus[0].uuid is None


needs_no_nvidia = pytest.mark.skipif(
    ctypes.util.find_library("nvidia-ml") is not None or Path("/dev/nvidiactl").exists(),
    reason="this machine has an NVIDIA driver; the test covers the library-absent path",
)


@needs_no_nvidia
def test_child_on_this_machine_reports_the_missing_library() -> None:
    system = System(environ=hermetic_env())
    assert system.native
    log = ProbeLog("nvidia")
    report, timed_out = run_native(system, log)
    assert not timed_out
    assert report is not None and report.gpus == [] and report.library_missing
    (record,) = log.records
    assert not record.ok
    assert record.error is not None and "libnvidia-ml.so.1" in record.error
    assert record.hint is not None and "user-space libraries" in record.hint


@needs_no_nvidia
def test_provider_on_this_machine_finds_nothing_and_does_not_crash() -> None:
    result = PROVIDER.probe(System(environ=hermetic_env()))
    assert result.accelerators == []
    assert all(r.source != "detect" for r in result.probes)
