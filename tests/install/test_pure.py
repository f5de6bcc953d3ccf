"""The pure parts of installing: routing, build verification."""

from __future__ import annotations

import pytest

from wheelfit.family import is_torch_family
from wheelfit.install.verify import TorchFacts, covers, expected_runtime, verify
from wheelfit.resolve.plan import PackagePin, Plan


@pytest.mark.parametrize(
    ("name", "family"),
    [
        ("torch", True),
        ("Torch", True),
        ("torch_vision", False),  # canonicalizes to torch-vision: not a real package, not routed
        ("torchvision", True),
        ("triton", True),
        ("pytorch-triton-rocm", True),
        ("pytorch_triton_xpu", True),
        ("pytorch-triton-future-backend", True),
        ("torchtriton", True),
        ("numpy", False),
        ("jinja2", False),
        ("nvidia-cublas-cu12", False),  # uv routes these to PyPI too (not in uv-torch backend.rs applies_to)
    ],
)
def test_torch_family_routing(name: str, family: bool) -> None:
    assert is_torch_family(name) is family


@pytest.mark.parametrize(
    ("arch", "arch_list", "ok"),
    [
        ("sm_89", ["sm_75", "sm_80", "sm_86", "sm_90"], True),  # sm_86 SASS runs on sm_89
        ("sm_61", ["sm_75", "sm_80", "sm_86", "sm_90", "compute_90"], False),
        ("sm_120", ["sm_80", "sm_90", "compute_90"], True),  # PTX JIT
        ("sm_100", ["sm_90a", "sm_100f"], True),
        ("sm_70", ["sm_75"], False),
        ("gfx942", ["gfx90a", "gfx942"], True),
        ("gfx1031", ["gfx1030"], False),
    ],
)
def test_arch_coverage(arch: str, arch_list: list[str], ok: bool) -> None:
    assert covers(arch, arch_list) is ok


def test_expected_runtime() -> None:
    assert expected_runtime("cu126") == ("cuda", "12.6")
    assert expected_runtime("cu130") == ("cuda", "13.0")
    assert expected_runtime("rocm7.2") == ("rocm", "7.2")
    assert expected_runtime("xpu") == ("xpu", None)
    assert expected_runtime("cpu") == ("cpu", None)


def _plan(variant: str) -> Plan:
    return Plan(
        "2.14.1", variant, f"http://x/{variant}", (PackagePin("torch", "2.14.1", "t"),), (), platform="linux_x86_64"
    )


def test_verify_checks_label_runtime_and_gpu() -> None:
    good = TorchFacts(
        "2.14.1+cu126", cuda="12.6", gpus=({"name": "GTX 1080", "arch": "sm_61"},), arch_list=("sm_50", "sm_60")
    )
    result = verify(good, _plan("cu126"))
    assert result.ok and [c.ok for c in result.checks] == [True, True, True]

    uncovered = TorchFacts(
        "2.14.1+cu126", cuda="12.6", gpus=({"name": "GTX 1080", "arch": "sm_61"},), arch_list=("sm_75",)
    )
    assert not verify(uncovered, _plan("cu126")).ok

    wrong = verify(TorchFacts("2.14.1+cpu"), _plan("cu126"))
    assert [c.ok for c in wrong.checks] == [False, False, None]

    rocm = verify(TorchFacts("2.14.1+rocm7.2", hip="7.2.26015-abc"), _plan("rocm7.2"))
    assert rocm.ok
    assert rocm.checks[-1].ok is None and "no GPU is visible" in rocm.checks[-1].detail
