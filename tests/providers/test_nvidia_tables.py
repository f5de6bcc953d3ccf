"""The NVIDIA data tables: driver -> highest CUDA, and PCI device ID -> chip / compute capability."""

from __future__ import annotations

import json
from importlib import resources

import pytest

from wheelfit_nvidia.devicetable import lookup_device
from wheelfit_nvidia.versions import cuda_from_int, max_cuda_for_driver, version_key


@pytest.mark.parametrize(
    ("driver", "cuda"),
    [
        # Observed driver -> "CUDA Version" pairs, from published nvidia-smi banners.
        ("580.95.05", "13.0"),
        ("570.133.07", "12.8"),
        ("535.54.03", "12.2"),
        ("535.129.03", "12.2"),
        ("550.144.03", "12.4"),
        ("525.85.12", "12.0"),
        ("450.57", "11.0"),
        # Table 3 edges: one build below a minimum stays on the previous CUDA.
        ("590.44.01", "13.1"),
        ("590.44.00", "13.0"),
        ("595.45.04", "13.2"),
        ("575.51.03", "12.9"),
        ("570.26", "12.8"),
        ("570.25.99", "12.6"),
        ("520.61.05", "11.8"),
    ],
)
def test_linux_driver_to_cuda(driver: str, cuda: str) -> None:
    assert max_cuda_for_driver(driver) == cuda


def test_table_is_conservative_for_pre_release_drivers() -> None:
    # The banner of 550.40.07 says "CUDA Version: 12.4", but Table 3's 12.4 minimum is 550.54.14 and the
    # rows in data/cuda_drivers.json have no 12.3: the table under-reports, never over-reports. NVML gives the
    # true value.
    assert max_cuda_for_driver("550.40.07") == "12.2"


@pytest.mark.parametrize(
    ("driver", "cuda"),
    [("581.42", "13.0"), ("572.60", "12.8"), ("576.02", "12.9"), ("527.41", "12.0"), ("517.48", "11.0")],
)
def test_windows_numbering_for_wsl(driver: str, cuda: str) -> None:
    assert max_cuda_for_driver(driver, windows_numbering=True) == cuda


def test_windows_and_linux_columns_differ() -> None:
    # 570.65 is the Windows minimum for 12.8; on Linux 570.26 already is.
    assert max_cuda_for_driver("570.64", windows_numbering=True) == "12.6"
    assert max_cuda_for_driver("570.64") == "12.8"


@pytest.mark.parametrize("driver", ["370.28", "garbage", "", "580", "ERR!"])
def test_no_answer_below_the_table_or_for_garbage(driver: str) -> None:
    assert max_cuda_for_driver(driver) is None


def test_table_rows_cite_a_source() -> None:
    data = json.loads(resources.files("wheelfit_nvidia").joinpath("data/cuda_drivers.json").read_text())
    for column in ("linux", "windows"):
        for row in data[column]:
            assert row["source"] in data["sources"]
            version_key(row["min_driver"])  # parses


def test_cuda_int_encoding() -> None:
    assert cuda_from_int(12040) == "12.4"
    assert cuda_from_int(13000) == "13.0"
    assert cuda_from_int(9020) == "9.2"
    assert cuda_from_int(0) is None


@pytest.mark.parametrize(
    ("device", "chip", "cc", "name"),
    [
        (0x2684, "AD102", "8.9", "GeForce RTX 4090"),
        (0x2330, "GH100", "9.0", "H100 SXM5 80GB"),  # inside the GA10x span too: exact wins
        (0x1B80, "GP104", "6.1", "GeForce GTX 1080"),
        (0x1DB4, "GV100GL", "7.0", "Tesla V100 PCIe 16GB"),
        (0x2901, "GB100", "10.0", "B200"),
        (0x2B85, "GB202", "12.0", "GeForce RTX 5090"),
        (0x2E12, "GB20B", "12.1", "GB10"),  # inside the GB20x span: exact wins
        (0x3182, "GB110", "10.3", "B300 SXM6 AC"),
    ],
)
def test_exact_ids(device: int, chip: str, cc: str, name: str) -> None:
    info = lookup_device(device)
    assert info is not None and not info.guess
    assert (info.chip, info.compute_capability, info.name) == (chip, cc, name)


@pytest.mark.parametrize(
    ("device", "cc"),
    [
        (0x2331, "9.0"),  # GH100 span (narrower than the overlapping GA10x span)
        (0x2208, "8.6"),  # GA10x only
        (0x2E10, "12.1"),  # GB20B span inside GB20x
        (0x2C05, "12.0"),
        (0x1600, "6.0"),  # GP100 span, overlapping two Maxwell spans
        (0x1000, None),  # Kepler: 3.5 or 3.7, the span cannot tell
    ],
)
def test_span_guesses_are_flagged(device: int, cc: str | None) -> None:
    info = lookup_device(device)
    assert info is not None and info.guess
    assert info.compute_capability == cc
    assert "guessed" in info.describe()


def test_unknown_id() -> None:
    assert lookup_device(0x0001) is None
    assert lookup_device(0x3340) is None  # GB120: no product, no capability known
