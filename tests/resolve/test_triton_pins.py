"""An explicit Triton request is the Triton the chosen torch's own metadata pins, under the name its build
requires, never an invented local label (``triton==3.5.0+cu130`` does not exist: Triton wheels carry none).

Facts: the knowledge base's companion pins (BM-7.3: torch 2.9.0 pins ``triton==3.5.0`` on Linux, 2.10.0
``3.6.0``, 2.14.x ``~=3.8.0``); PyTorch's ROCm and XPU wheels require ``pytorch-triton-rocm``/``pytorch-triton-xpu``
at the same version (2.9.0 variant metadata: ``pytorch-triton-rocm==3.5.0``; 2.10 xpu: triton-xpu 3.6.0, BM-5.4);
the CPU wheels require no Triton.
"""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import pytest

from ..conftest import hermetic_env


def plan(*args: str) -> dict[str, Any]:
    r = subprocess.run(
        [sys.executable, "-m", "wheelfit", "plan", "--offline", "--json", *args],
        capture_output=True, text=True, env=hermetic_env(), timeout=120,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    data: dict[str, Any] = json.loads(r.stdout)
    return data


def requirements(d: dict[str, Any]) -> list[str]:
    return [p["requirement"] for p in d["packages"]]


@pytest.mark.parametrize(
    ("args", "expected", "says"),
    [
        (
            ("torch==2.9.0", "triton", "--target", "cuda=8.6,driver=580.95.05"),
            ["torch==2.9.0+cu130", "triton==3.5.0"],
            None,
        ),
        (
            ("torch==2.9.0", "triton", "--target", "rocm=gfx90a"),
            ["torch==2.9.0+rocm6.4", "pytorch-triton-rocm==3.5.0"],
            "triton asked for: torch 2.9.0+rocm6.4 requires pytorch-triton-rocm",
        ),
        (
            ("torch==2.10.0", "triton", "--target", "xpu=bmg"),
            ["torch==2.10.0+xpu", "pytorch-triton-xpu==3.6.0"],
            "requires pytorch-triton-xpu",
        ),
        (
            ("torch==2.9.0", "pytorch-triton-rocm", "--target", "cuda=8.6,driver=580.95.05"),
            ["torch==2.9.0+cu130", "triton==3.5.0"],
            "pytorch-triton-rocm asked for: torch 2.9.0+cu130 requires triton",
        ),
        (
            ("torch==2.9.0", "triton", "--target", "os=linux"),
            ["torch==2.9.0+cpu"],
            "triton is not planned: torch's CPU build does not require Triton",
        ),
    ],
    ids=["cuda", "rocm", "xpu", "rocm-name-on-cuda", "cpu"],
)
def test_triton_is_what_torch_pins(args: tuple[str, ...], expected: list[str], says: str | None) -> None:
    d = plan(*args)
    assert requirements(d) == expected
    if says is not None:
        assert any(says in w for w in d["warnings"]), d["warnings"]


def test_a_users_triton_pin_is_checked_against_torchs_under_any_triton_name() -> None:
    assert requirements(plan("torch==2.9.0", "pytorch-triton-rocm==3.5.0", "--target", "rocm=gfx90a")) == [
        "torch==2.9.0+rocm6.4",
        "pytorch-triton-rocm==3.5.0",
    ]
    args = ["plan", "--offline", "torch==2.9.0", "pytorch-triton-rocm==3.4.0", "--target", "rocm=gfx90a"]
    r = subprocess.run(
        [sys.executable, "-m", "wheelfit", *args], capture_output=True, text=True, env=hermetic_env(), timeout=120
    )
    assert r.returncode == 1 and "no PyTorch release matches" in r.stderr
