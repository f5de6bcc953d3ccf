"""A variant wheel made plain: variant markers evaluated ahead of time, everything else kept (PEP 825
Backwards Compatibility), checked against full evaluation over many environments."""

from __future__ import annotations

import itertools
from email.parser import BytesHeaderParser

import pytest
from packaging.markers import Marker

from wheelfit.variants import VariantError
from wheelfit.variants.filename import parse_wheel_name
from wheelfit.variants.markers import VariantEnvironment, evaluate_marker, plain_requirement, reduce_marker
from wheelfit.variants.plain import plain_filename, plain_metadata

from .test_markers import LINUX, TORCH_DEPS, WINDOWS

CUDA12_8 = VariantEnvironment.from_properties(
    "cuda12.8",
    ["nvidia :: cuda_version_lower_bound :: 12.0", "nvidia :: sm_arch :: 86_real", "priority :: order :: 2"],
)
ROCM = VariantEnvironment.from_properties("rocm7.1", ["amd :: gfx_arch :: gfx942", "amd :: rocm_version :: 7.1"])
NULL = VariantEnvironment(label="null")

MARKERS = [
    "platform_system == 'Linux' and variant_label == 'cuda12.8'",
    "variant_label != 'cuda12.8' or python_version >= '3.12'",
    "(python_version < '3.12' or os_name == 'nt') and 'nvidia' in variant_namespaces",
    "'amd' in variant_namespaces or sys_platform == 'linux' and extra == 'opt'",
    "'nvidia :: sm_arch' in variant_features and ('amd' not in variant_namespaces or os_name == 'posix')",
    "extra == 'opt' and ('nvidia::sm_arch::86_real' in variant_properties or platform_system == 'Windows')",
    "'intel' in variant_namespaces",
    "python_version >= '3.10'",
]


@pytest.mark.parametrize("marker", MARKERS)
@pytest.mark.parametrize("variant", [CUDA12_8, ROCM, NULL], ids=lambda v: v.label)
def test_the_reduced_marker_agrees_with_full_evaluation_everywhere(marker: str, variant: VariantEnvironment) -> None:
    """Whatever is left must evaluate, with packaging alone, as the whole marker does with the variant."""
    rest = reduce_marker(marker, variant)
    assert not (isinstance(rest, str) and "variant_" in rest), rest
    for base, python, extra in itertools.product((LINUX, WINDOWS), ("3.11", "3.12"), ("", "opt")):
        env = {**base, "python_version": python, "extra": extra}
        whole = evaluate_marker(marker, env, variant)
        reduced = rest if isinstance(rest, bool) else Marker(rest).evaluate(env)
        assert reduced == whole, (marker, variant.label, env, rest)


def test_torch_dependencies_for_cuda12_8() -> None:
    plain = [plain_requirement(d, CUDA12_8) for d in TORCH_DEPS]
    assert plain == [
        "nvidia-cublas==12.8.4.1; platform_system == 'Linux'",
        "nvidia-nccl==2.27.5; platform_system == 'Linux'",
        "triton==3.5.0; platform_system == 'Linux'",
        None,
        None,
    ]


def test_requirements_without_variant_markers_are_kept_byte_for_byte() -> None:
    for text in ('sympy ;extra=="opt"', "filelock", "a @ https://h/a.whl ; os_name == 'nt'"):
        assert plain_requirement(text, CUDA12_8) == text
    assert plain_requirement("x ; variant_label == 'cuda12.8'", CUDA12_8) == "x"
    assert plain_requirement("a @ https://h/a.whl ; 'nvidia' in variant_namespaces and os_name == 'nt'", CUDA12_8) == (
        "a @ https://h/a.whl ; os_name == 'nt'"
    )


def test_metadata_changes_only_the_lines_it_must() -> None:
    head = "Metadata-Version: 2.1\r\nName: torch\r\nVersion: 2.10.0\r\nSummary: Tensors and\r\n  dynamic networks\r\n"
    deps = "".join(f"Requires-Dist: {d}\r\n" for d in TORCH_DEPS)
    folded = "Requires-Dist: kernels==1.0;\r\n variant_label == 'null'\r\nRequires-Dist: sympy; extra == 'opt'\r\n"
    body = "\r\nRequires-Dist: in the description, not a header\r\n"
    out = plain_metadata((head + deps + folded + body).encode(), CUDA12_8).decode()
    assert out.startswith(head) and out.endswith(body)
    headers = BytesHeaderParser().parsebytes(out.encode())
    assert headers.get_all("Requires-Dist") == [
        "nvidia-cublas==12.8.4.1; platform_system == 'Linux'",
        "nvidia-nccl==2.27.5; platform_system == 'Linux'",
        "triton==3.5.0; platform_system == 'Linux'",
        "sympy; extra == 'opt'",
    ]
    assert "\r\nRequires-Dist: triton==3.5.0; platform_system == 'Linux'\r\n" in out  # line endings kept
    nothing = (head + "Requires-Dist: filelock\r\n\r\n").encode()
    assert plain_metadata(nothing, CUDA12_8) == nothing


def test_a_bad_marker_names_the_requirement() -> None:
    with pytest.raises(
        VariantError, match=r"Requires-Dist \"x; variant_label ~= 'a'\": .*supports ==, !=, in and not in"
    ):
        plain_metadata(b"Name: t\nRequires-Dist: x; variant_label ~= 'a'\n\n", CUDA12_8)
    with pytest.raises(VariantError, match="not UTF-8"):
        plain_metadata(b"Name: \xff\n\n", CUDA12_8)


def test_plain_filename_drops_only_the_label() -> None:
    name = "torch-2.9.0-cp313-cp313-manylinux_2_28_x86_64-cuda12.8.whl"
    assert plain_filename(parse_wheel_name(name)) == "torch-2.9.0-cp313-cp313-manylinux_2_28_x86_64.whl"
    built = "torch-2.10.0-2-cp312-none-macosx_11_0_arm64-null.whl"
    assert plain_filename(parse_wheel_name(built)) == "torch-2.10.0-2-cp312-none-macosx_11_0_arm64.whl"
    plain = "torch-2.9.0-cp313-cp313-manylinux_2_28_x86_64.whl"
    assert plain_filename(parse_wheel_name(plain)) == plain
