"""An explicit Triton request is the Triton the chosen torch's own metadata pins, under the name its build
requires, never an invented local label (``triton==3.5.0+cu130`` does not exist: Triton wheels carry none).

Facts: the knowledge base's companion pins (BM-7.3: torch 2.9.0 pins ``triton==3.5.0`` on Linux, 2.10.0
``3.6.0``, 2.14.x ``~=3.8.0``); PyTorch's ROCm and XPU wheels require ``pytorch-triton-rocm``/``pytorch-triton-xpu``
at the same version (2.9.0 variant metadata: ``pytorch-triton-rocm==3.5.0``; 2.10 xpu: triton-xpu 3.6.0, BM-5.4);
the CPU wheels require no Triton.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.install.pep658_index import serve_pep658
from tests.support.inprocess import wheelfit_in_process
from tests.support.wheels import make_torch_like, make_wheel

from ..conftest import hermetic_env


def plan(*args: str) -> dict[str, Any]:
    r = wheelfit_in_process(["plan", "--offline", "--json", *args], hermetic_env())
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
    r = wheelfit_in_process(args, hermetic_env())
    assert r.returncode == 1 and "no PyTorch release matches" in r.stderr


def test_a_torch_newer_than_the_knowledge_base_gets_the_triton_its_metadata_pins(tmp_path: Path) -> None:
    """torch 2.18.0 is in no knowledge base here: its Triton comes from its wheel's PEP 658 METADATA on the index
    (Requires-Dist ``triton==3.10.0; platform_system == "Linux"``), not an invented pin or local label."""
    folder = tmp_path / "pytorch" / "cu130" / "torch"
    folder.mkdir(parents=True)
    make_torch_like(folder, "2.18.0", "cu130", requires=['triton==3.10.0; platform_system == "Linux"'])
    make_wheel(tmp_path / "pytorch" / "cu130" / "triton", "triton", "3.10.0")  # the plan checks it is there
    with serve_pep658(tmp_path) as served:
        args = ["plan", "torch==2.18.0", "triton", "--json", "--target", "cuda=8.6,driver=580.95.05"]
        env = hermetic_env(WHEELFIT_CACHE_DIR=str(tmp_path / "cache"))
        r = wheelfit_in_process([*args, "--pytorch-index", f"{served.url}/pytorch"], env)
        assert r.returncode == 0, r.stderr
        assert served.fetched("torch-2.18.0+cu130-py3-none-any.whl.metadata")
        assert not any(q.path.endswith(".whl") for q in served.log)  # the wheel itself is not downloaded
    d = json.loads(r.stdout)
    assert requirements(d) == ["torch==2.18.0+cu130", "triton==3.10.0"]
    assert d["packages"][1]["confidence"] == "P"
    assert any("triton==3.10.0: what torch 2.18.0+cu130 requires" in s for s in d["reasons"])
