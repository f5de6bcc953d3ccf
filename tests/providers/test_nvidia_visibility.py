"""CUDA_VISIBLE_DEVICES semantics (CUDA programming guide, "Environment Variables"; torch/cuda/__init__.py)."""

from __future__ import annotations

import pytest

from wheelfit_nvidia.visibility import parse_visible_devices

UUIDS = [
    "GPU-8932f937-d72c-4106-c12f-20bd9faed9f6",
    "GPU-f75045e8-4d87-49d1-2eb9-39ec2baddf9b",
    "GPU-f7aa0000-0000-0000-0000-000000000000",
    None,
]


@pytest.mark.parametrize(
    ("value", "visible"),
    [
        (None, (0, 1, 2, 3)),  # unset: all
        ("", ()),  # empty: none
        ("  ", ()),
        ("1", (1,)),
        ("2,0", (2, 0)),  # list order is CUDA ordinal order
        ("0,2,-1,1", (0, 2)),  # stop at the first invalid entry (NVIDIA's example)
        ("1gpu2,2ampere", (1, 2)),  # torch's strtoul prefix parse
        ("0,7,1", (0,)),  # out of range is invalid
        ("0,0", ()),  # a repeated device hides everything
        ("GPU-8932f937", (0,)),  # unique UUID prefix
        ("GPU-f75045e8-4d87-49d1-2eb9-39ec2baddf9b,0", (1, 0)),
        ("GPU-f7,0", ()),  # ambiguous prefix is invalid -> stop at once
        ("GPU-deadbeef", ()),
        ("MIG-GPU-f75045e8-4d87-49d1-2eb9-39ec2baddf9b/1/0", (1,)),
        ("1,MIG-7b9e6e2f-0000-0000-0000-000000000000", (1,)),
        ("NoDevFiles", ()),
    ],
)
def test_visible_devices(value: str | None, visible: tuple[int, ...]) -> None:
    assert parse_visible_devices(value, UUIDS).visible == visible


def test_notes_say_why_parsing_stopped() -> None:
    assert parse_visible_devices("0,2,-1,1", UUIDS).note == "stopped at '-1' is not a device index"
    assert "twice" in (parse_visible_devices("1,1", UUIDS).note or "")
    assert parse_visible_devices("1", UUIDS).note is None
    assert "more than one" in (parse_visible_devices("GPU-f7", UUIDS).note or "")


def test_no_gpus() -> None:
    assert parse_visible_devices(None, []).visible == ()
    assert parse_visible_devices("0", []).visible == ()


def test_an_index_too_long_for_int_or_in_other_scripts_is_invalid() -> None:
    # Issue 15 (fuzzing): int() refuses 4300+ digits with a ValueError that ended the whole NVIDIA detection;
    # CUDA reads the index with strtoul, ASCII digits only, so Arabic-Indic zero is no index 0.
    long = parse_visible_devices("0," + "9" * 5000, UUIDS)
    assert long.visible == (0,) and long.note == "stopped at index 999999999999 is out of range (4 GPUs)"
    assert parse_visible_devices("\u0660", UUIDS).visible == ()
