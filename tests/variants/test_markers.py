"""Variant markers in dependency specifiers (PEP 825), as PyTorch's variant wheels use them (variant-repack configs)."""

from __future__ import annotations

from pathlib import Path

import pytest
from packaging.markers import Marker

from wheelfit.variants import VariantError
from wheelfit.variants.markers import VariantEnvironment, evaluate_marker, requirement_applies
from wheelfit.variants.metadata import loads
from wheelfit.variants.ranking import rank_variants

from .oracle import nvidia

LINUX = {
    "platform_system": "Linux",
    "platform_machine": "x86_64",
    "sys_platform": "linux",
    "python_version": "3.12",
    "python_full_version": "3.12.4",
    "os_name": "posix",
}
WINDOWS = {**LINUX, "platform_system": "Windows", "sys_platform": "win32", "os_name": "nt"}

#: From variant-repack configs/torch-2.9 deps_add_list.
TORCH_DEPS = [
    "nvidia-cublas==12.8.4.1; platform_system == 'Linux' and variant_label == 'cuda12.8'",
    "nvidia-nccl==2.27.5; platform_system == 'Linux' and "
    "'nvidia :: cuda_version_lower_bound :: 12.0' in variant_properties",
    "triton==3.5.0; platform_system == 'Linux' and 'nvidia' in variant_namespaces",
    'pytorch-triton-rocm==3.5.0; platform_system == "Linux" and "amd" in variant_namespaces',
    "intel-sycl-rt; 'intel' in variant_namespaces",
]


def _chosen(realdata: Path, umd: tuple[int, int], cc: tuple[int, int]) -> VariantEnvironment:
    meta = loads((realdata / "torch-2.9.0-variants.json").read_bytes())
    best = rank_variants(meta, {"nvidia": nvidia(umd, cc)}, environment=LINUX).compatible[0]
    return VariantEnvironment.of(best.variant)


def test_torch_cuda12_8_dependencies(realdata: Path) -> None:
    env = _chosen(realdata, (12, 8), (9, 0))
    assert env.label == "cuda12.8"
    wanted = [req.name for req, ok in (requirement_applies(d, LINUX, env) for d in TORCH_DEPS) if ok]
    assert wanted == ["nvidia-cublas", "nvidia-nccl", "triton"]
    assert not any(ok for _, ok in (requirement_applies(d, WINDOWS, env) for d in TORCH_DEPS[:4]))


def test_properties_are_narrowed_to_what_the_machine_supports(realdata: Path) -> None:
    """PEP 825: cuda13.0 lists 120_real and 120_virtual, an sm_120 GPU supports both; 90_real is gone."""
    env = _chosen(realdata, (13, 0), (12, 0))
    assert env.label == "cuda13.0"
    assert evaluate_marker("'nvidia :: sm_arch :: 120_real' in variant_properties", LINUX, env)
    assert not evaluate_marker("'nvidia :: sm_arch :: 90_real' in variant_properties", LINUX, env)
    assert evaluate_marker(
        "'nvidia::sm_arch' in variant_features and 'priority :: order :: 1' in variant_properties", LINUX, env
    )


def test_non_variant_and_null_wheels() -> None:
    plain = VariantEnvironment.of(None)
    assert evaluate_marker("variant_label == ''", LINUX, plain)
    assert evaluate_marker("'nvidia' not in variant_namespaces", LINUX, plain)
    null = VariantEnvironment(label="null")
    assert evaluate_marker("variant_label == 'null' and 'nvidia' not in variant_namespaces", LINUX, null)
    assert evaluate_marker("'cuda' in variant_label or variant_label != 'cuda13.0'", LINUX, null)


@pytest.mark.parametrize(
    "marker",
    [
        "python_version >= '3.10'",
        "python_version < '3.12' or platform_system == 'Linux'",
        "(os_name == 'nt' or sys_platform == 'linux') and platform_machine != 'aarch64'",
        "'linux' in sys_platform",
        "python_full_version ~= '3.12.0' and 'x86' not in platform_machine",
        "extra == 'cuda'",
    ],
)
@pytest.mark.parametrize("environment", [LINUX, WINDOWS])
def test_standard_markers_evaluate_as_packaging_does(marker: str, environment: dict[str, str]) -> None:
    expected = Marker(marker).evaluate({"extra": "", **environment})
    assert evaluate_marker(marker, environment, VariantEnvironment()) is expected


def test_url_requirements_keep_their_url() -> None:
    req, ok = requirement_applies(
        "demo @ https://example.org/demo.whl#sha256=ab;c ; 'x' in variant_namespaces",
        LINUX,
        VariantEnvironment(namespaces=frozenset({"x"})),
    )
    assert (req.url, ok) == ("https://example.org/demo.whl#sha256=ab;c", True)


@pytest.mark.parametrize(
    ("marker", "fragment"),
    [
        ("variant_namespaces == 'nvidia'", "variant_namespaces is a set"),
        ("'nvidia' >= variant_namespaces", "use 'in' or 'not in'"),
        ("variant_label >= 'a'", "variant_label supports"),
        ("variant_label == variant_label", "compare a variant variable with a quoted string"),
        ("'nvidia' in variant_namespaces and", "ends too early"),
        ("('a' in variant_namespaces", "missing ')'"),
        ("'a' in variant_namespaces ) ", "unexpected ')'"),
        ("no_such_variable == '1'", "cannot be evaluated"),
        ("'a' in variant_namespaces $", "cannot read it"),
    ],
)
def test_bad_markers_are_variant_errors(marker: str, fragment: str) -> None:
    with pytest.raises(VariantError, match=fragment.replace("(", r"\(").replace(")", r"\)")):
        evaluate_marker(marker, LINUX, VariantEnvironment())
