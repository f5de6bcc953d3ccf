"""The installer's own reason reaches wheelfit's one-line error whole (issue 15: 'the cause gets cut off'): long
cache paths are cut to their last part, and the innermost cause is kept when the line is still too long."""

from __future__ import annotations

from wheelfit.install.backend import BackendResult

CACHE = "/home/someone/.cache/wheelfit/wheels/1d/1d543716f8cc00952e8ef9095491c07d96deb05711909af43cd59556ef244b91"
WHEEL = "torch-2.9.0-cp311-cp311-manylinux_2_28_x86_64.whl"


def test_a_full_disk_is_named_though_the_paths_are_long() -> None:
    """uv's message for a full disk while unpacking torch from wheelfit's cache (its shape, these paths)."""
    stderr = (
        f"error: Failed to install: {WHEEL} (torch==2.9.0 (from file://{CACHE}/{WHEEL}))\n"
        f"  Caused by: Failed to extract archive: {CACHE}/{WHEEL} into "
        "/home/someone/.cache/uv/archive-v0/Qm2x7yKlT0c8d9R4s/torch/lib/libtorch_cuda.so\n"
        "  Caused by: No space left on device (os error 28)\n"
    )
    reason = BackendResult(2, "", stderr).last_error()
    assert reason.endswith("Caused by: No space left on device (os error 28)"), reason
    assert CACHE not in reason and f".../{WHEEL}" in reason and len(reason) <= 400


def test_the_innermost_cause_survives_a_reason_too_long_to_quote() -> None:
    stderr = "error: " + "x" * 600 + "\n  Caused by: the real reason\n"
    reason = BackendResult(1, "", stderr).last_error()
    assert len(reason) <= 400 and reason.endswith(" ... Caused by: the real reason"), reason


def test_short_paths_and_plain_errors_are_left_as_they_are() -> None:
    reason = BackendResult(1, "", "error: no such file /tmp/x\n").last_error()
    assert reason == "error: no such file /tmp/x"
