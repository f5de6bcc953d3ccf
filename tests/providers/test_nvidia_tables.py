"""The NVIDIA data tables: driver -> highest CUDA, the driver floor of a CUDA release (probekit's driver table, read
by the detector and the planner), and PCI device ID -> chip / compute capability (the detector's own)."""

from __future__ import annotations

import json
import re
from importlib import resources
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from wheelfit_nvidia.devicetable import lookup_device
from wheelfit_probekit.drivers import (
    DataFileError,
    DriverFloor,
    cuda_from_int,
    is_driver_version,
    load_driver_table,
    max_cuda_for_driver,
    minor_compat_floor,
    newest_update_floor,
    toolkit_floor,
)

DATA = resources.files("wheelfit_probekit").joinpath("data")
TABLE = DATA.joinpath("cuda_drivers.json").read_text(encoding="utf-8")
SCHEMA = json.loads(DATA.joinpath("cuda_drivers.schema.json").read_text(encoding="utf-8"))
NAME = "wheelfit_probekit/data/cuda_drivers.json"


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
        ("545.23.06", "12.3"),
        ("555.42.02", "12.5"),
        ("610.43.02", "13.3"),
        ("620.10.01", "13.3"),  # 13.4's R615 floor has no build number: never counted
    ],
)
def test_linux_driver_to_cuda(driver: str, cuda: str) -> None:
    assert max_cuda_for_driver(driver) == cuda


def test_table_is_conservative_for_pre_release_drivers() -> None:
    # The banner of 550.40.07 says "CUDA Version: 12.4", but Table 3's 12.4 minimum is 550.54.14: the table
    # under-reports (12.3, whose Update 1 needs 545.23.08), never over-reports. NVML gives the true value.
    assert max_cuda_for_driver("550.40.07") == "12.3"


@pytest.mark.parametrize(
    ("driver", "cuda"),
    [
        ("581.42", "13.0"),
        ("610.47", "13.0"),  # NVIDIA prints N/A for Windows 13.x: only the R580+ floor of 13.0 counts
        ("572.60", "12.8"),
        ("576.02", "12.9"),
        ("527.41", "12.0"),
        ("536.25", "12.2"),
        ("517.48", "11.0"),
    ],
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


def test_every_row_has_a_source_and_a_confidence() -> None:
    data = json.loads(TABLE)
    rows = [*data["linux"], *data["windows"], *data["minor_compat"]["linux"], *data["minor_compat"]["windows"]]
    assert len(rows) > 80
    for row in rows:
        assert row["source"] in data["sources"], row
        assert row["confidence"] in ("P", "M", "S", "U"), row
        assert row["release"], row
        assert row["min_driver"] is None or is_driver_version(row["min_driver"]), row
    # A floor without a number is never a primary-source guess: NVIDIA printed N/A, or it is marked S/U.
    for row in rows:
        if row["min_driver"] is None:
            assert row["confidence"] in ("S", "U") or "N/A" in row["note"], row


@pytest.mark.parametrize(
    ("cuda", "windows", "driver", "release"),
    [
        ("12.6", False, "560.28.03", "12.6 GA"),  # not 560.35.05, the Update 3 the builds were made with
        ("12.6", True, "560.76", "12.6 GA"),
        ("12.6.3", False, "560.28.03", "12.6 GA"),
        ("12.8", False, "570.26", "12.8 GA"),
        ("12.8", True, "570.65", "12.8 GA"),
        ("12.9", False, "575.51.03", "12.9 GA"),
        ("12.9", True, "576.02", "12.9 GA"),
        ("12.5", False, "555.42.02", "12.5 GA"),
        ("12.4", True, "551.61", "12.4 GA"),
        ("12.1", False, "530.30.02", "12.1 GA"),  # a tie with Update 1 goes to the GA
        ("11.8", False, "520.61.05", "11.8 GA"),
        ("13.0", False, "580.65.06", "13.0 GA"),
        ("13.2", False, "595.45.04", "13.2 GA"),
    ],
)
def test_the_ga_floor_decides(cuda: str, windows: bool, driver: str, release: str) -> None:
    floor = toolkit_floor(cuda, windows)
    assert floor is not None
    assert (floor.min_driver, floor.release, floor.confidence) == (driver, release, "P")
    assert "Table 3" in floor.source


@pytest.mark.parametrize(
    ("cuda", "windows", "driver", "release"),
    [
        ("12.6", False, "560.35.05", "12.6 Update 3"),
        ("12.6", True, "561.17", "12.6 Update 3"),
        ("12.8", False, "570.124.06", "12.8 Update 1"),
        ("13.0", False, "580.95.05", "13.0 Update 2"),
        ("13.2", False, "595.71.05", "13.2 Update 2"),
        ("13.2", True, None, "13.2 Update 2"),
    ],
)
def test_newest_update_floor_for_messages(cuda: str, windows: bool, driver: str | None, release: str) -> None:
    floor = newest_update_floor(cuda, windows)
    assert floor is not None
    assert (floor.min_driver, floor.release) == (driver, release)


def test_windows_13x_uses_the_r580_floor() -> None:
    # NVIDIA prints N/A for Windows 13.x. 13.0 stands on the R580+ floor of Table 2, marked uncertain; a later
    # minor has no Windows number at all (the Linux one names a newer branch), so the planner falls back on Table 2.
    ga = toolkit_floor("13.0", windows=True)
    assert ga is not None and (ga.min_driver, ga.release, ga.confidence) == ("580.00", "13.0 GA", "U")
    assert ga.met_by("581.42") and not ga.met_by("576.57")
    for cuda in ("13.1", "13.2"):
        floor = toolkit_floor(cuda, windows=True)
        assert floor is not None
        assert (floor.min_driver, floor.release, floor.confidence) == (None, f"{cuda} GA", "P")
        assert floor.note is not None and "N/A" in floor.note
        assert floor.met_by("600.00") is None
    compat = minor_compat_floor(13, windows=True)
    assert compat is not None and (compat.min_driver, compat.confidence) == ("580.00", "U")


def test_newest_toolkits_say_only_what_the_sources_state() -> None:
    linux = toolkit_floor("13.4", windows=False)
    assert linux is not None
    assert (linux.min_driver, linux.release, linux.confidence) == (None, "13.4 GA (13.4.1)", "S")
    assert linux.note is not None and "R615" in linux.note
    windows = toolkit_floor("13.4", windows=True)
    assert windows is not None and (windows.min_driver, windows.confidence) == (None, "U")
    v133 = toolkit_floor("13.3", windows=False)
    assert v133 is not None and (v133.min_driver, v133.release, v133.confidence) == ("610.43.02", "13.3 GA", "S")
    update = newest_update_floor("13.3", windows=False)
    assert update is not None and (update.min_driver, update.release) == ("610.43.02", "13.3 Update 1")


@pytest.mark.parametrize("windows", [False, True])
def test_cuda_13_4_update_1_and_13_5_are_listed_without_a_floor(windows: bool) -> None:
    """NVIDIA's notes list 13.4 Update 1 (13.4.2) and 13.5; no driver number of theirs was found, so the rows say
    so (null, U) and never count as the CUDA a driver supports, while 13.4's GA row still decides cu134."""
    update = newest_update_floor("13.4", windows=windows)
    assert update is not None
    assert (update.min_driver, update.release, update.confidence) == (None, "13.4 Update 1 (13.4.2)", "U")
    ga = toolkit_floor("13.4", windows=windows)
    assert ga is not None and ga.release == "13.4 GA (13.4.1)"
    v135 = toolkit_floor("13.5", windows=windows)
    assert v135 is not None and (v135.min_driver, v135.release, v135.confidence) == (None, "13.5 GA", "U")
    assert v135.met_by("700.00") is None  # an unknown floor is neither met nor missed
    assert max_cuda_for_driver("700.00", windows) == ("13.0" if windows else "13.3")


@pytest.mark.parametrize(
    ("major", "linux", "windows"),
    [(11, "450.80.02", "452.39"), (12, "525.60.13", "527.41"), (13, "580.65.06", "580.00")],
)
def test_minor_version_compatibility_floors(major: int, linux: str, windows: str) -> None:
    on_linux, on_windows = minor_compat_floor(major, windows=False), minor_compat_floor(major, windows=True)
    assert on_linux is not None and on_windows is not None
    assert (on_linux.min_driver, on_windows.min_driver) == (linux, windows)
    assert on_linux.confidence == "P" and "Table 2" in on_linux.source
    assert on_linux.release == f"{major}.x minor-version compatibility"


@pytest.mark.parametrize("cuda", ["12.7", "14.0", "7.5", "cu126", "", "garbage"])
def test_unknown_cuda_has_no_floor(cuda: str) -> None:
    assert toolkit_floor(cuda, windows=False) is None
    assert toolkit_floor(cuda, windows=True) is None
    assert newest_update_floor(cuda, windows=False) is None


def test_unknown_major_has_no_compat_floor() -> None:
    assert minor_compat_floor(10, windows=False) is None
    assert minor_compat_floor(14, windows=True) is None


def test_floors_compare_numerically() -> None:
    floor = toolkit_floor("12.8", windows=False)
    assert floor is not None
    assert floor.met_by("570.124.06")  # 124 > 26, though "1" < "2" as text
    assert floor.met_by("570.26")
    assert floor.met_by("570.25.99") is False
    assert floor.met_by("garbage") is None
    assert DriverFloor("13.4", "13.4 GA", None, "x", "S").met_by("620.1") is None


_DELETE = object()


def edited(rows: str, index: int, change: dict[str, object]) -> dict[str, Any]:
    """The shipped table with one row changed (``compat-linux``: a Table 2 row); ``_DELETE`` removes a key."""
    data: dict[str, Any] = json.loads(TABLE)
    row = (data["minor_compat"][rows.removeprefix("compat-")] if rows.startswith("compat-") else data[rows])[index]
    for key, value in change.items():
        if value is _DELETE:
            del row[key]
        else:
            row[key] = value
    return data


@pytest.mark.parametrize(
    ("rows", "index", "change", "expected"),
    [
        (
            "linux",
            20,
            {"min_driver": "606.28.03"},
            "linux[20] (12.6 GA): 606.28.03 is above 560.35.03, the floor of 12.6 Update 1",
        ),
        ("windows", 4, {"source": "audit"}, "windows[4] (13.3 GA).source: source 'audit' is not a key of 'sources'"),
        ("windows", 4, {"cuda": "13.5"}, "windows[4] (13.3 GA): rows run newest first, but 13.5 follows 13.3"),
        ("linux", 3, {"release": "13.3 GA"}, "linux[4] (13.3 GA): release '13.3 GA' appears twice"),
        (
            "compat-linux",
            1,
            {"cuda": "13"},
            "minor_compat.linux[1] (12.x minor-version compatibility): a second row for CUDA 13",
        ),
    ],
)
def test_what_the_schema_cannot_say_is_checked_at_load(
    rows: str, index: int, change: dict[str, object], expected: str
) -> None:
    """Cross-row rules and the source key: one line naming the file and the row. The copy follows the schema."""
    data = edited(rows, index, change)
    assert list(Draft202012Validator(SCHEMA).iter_errors(data)) == []
    with pytest.raises(DataFileError) as caught:
        load_driver_table(json.dumps(data))
    assert str(caught.value) == f"{NAME}: {expected}"


@pytest.mark.parametrize(
    ("rows", "index", "change", "path"),
    [
        ("linux", 20, {"confidence": _DELETE}, "$.linux[20]"),
        ("linux", 20, {"min_driver": _DELETE}, "$.linux[20]"),
        ("linux", 20, {"min_driver": "r560"}, "$.linux[20].min_driver"),
        ("windows", 0, {"min_driver": 560}, "$.windows[0].min_driver"),
        ("windows", 4, {"confidence": "high"}, "$.windows[4].confidence"),
        ("windows", 4, {"cuda": "13"}, "$.windows[4].cuda"),
        ("windows", 4, {"driver": "580.00"}, "$.windows[4]"),
        ("windows", 4, {"release": " "}, "$.windows[4].release"),
        ("windows", 4, {"note": 5}, "$.windows[4].note"),
        ("compat-windows", 0, {"cuda": 13}, "$.minor_compat.windows[0].cuda"),
        ("compat-windows", 0, {"cuda": "12.0"}, "$.minor_compat.windows[0].cuda"),
    ],
)
def test_the_schema_refuses_a_malformed_row(rows: str, index: int, change: dict[str, object], path: str) -> None:
    """The row's shape is the schema's to say (the tests hold the shipped table to it, tests/kb/test_schemas.py);
    the loader does not repeat it, yet never ends a copy it cannot read in more than one line naming the file."""
    data = edited(rows, index, change)
    assert path in {e.json_path for e in Draft202012Validator(SCHEMA).iter_errors(data)}
    try:
        load_driver_table(json.dumps(data))
    except DataFileError as exc:
        assert str(exc).startswith(f"{NAME}: ") and "\n" not in str(exc)


@pytest.mark.parametrize(
    "document",
    [
        [],
        {"sources": {}, "linux": [], "windows": [], "minor_compat": {}},
        {"sources": {}, "minor_compat": {}, "linux": [1]},
        {"sources": {"a": 1}, "linux": [], "windows": [], "minor_compat": {"linux": [], "windows": []}},
    ],
)
def test_the_schema_refuses_a_malformed_file(document: object) -> None:
    assert list(Draft202012Validator(SCHEMA).iter_errors(document)) != []


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("{", f"{NAME}: not valid JSON: "),
        ("[]", f"{NAME}: expected an object, got list"),
        ('{"sources": {}, "linux": [], "windows": [], "minor_compat": {}}', f"{NAME}: does not follow cuda_drivers"),
        ('{"sources": {}, "minor_compat": {}, "linux": [1]}', f"{NAME}: does not follow cuda_drivers.schema.json"),
    ],
)
def test_a_broken_file_is_one_line_too(text: str, expected: str) -> None:
    with pytest.raises(DataFileError, match="^" + re.escape(expected)) as caught:
        load_driver_table(text)
    assert "\n" not in str(caught.value)


def test_the_shipped_table_parses() -> None:
    table = load_driver_table(TABLE)
    assert {len(table.toolkits["linux"]), len(table.toolkits["windows"])} == {43}
    assert sorted(table.minor_compat["linux"]) == sorted(table.minor_compat["windows"]) == [11, 12, 13]
    assert load_driver_table() == table  # the packaged file, by default


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
