"""Variant wheel filenames: real PyTorch names, build tags, hash labels, the old null label, invalid labels."""

from __future__ import annotations

import pytest
from packaging.utils import parse_wheel_filename

from wheelfit.variants import VariantError
from wheelfit.variants.filename import parse_wheel_name


@pytest.mark.parametrize(
    ("filename", "label", "platform", "null", "hash_label"),
    [
        (
            "torch-2.9.0-cp313-cp313-manylinux_2_28_x86_64-cuda12.8.whl",
            "cuda12.8",
            "manylinux_2_28_x86_64",
            False,
            False,
        ),
        ("torch-2.8.0-cp312-cp312-win_amd64-00000000.whl", "00000000", "win_amd64", True, True),
        ("torch-2.8.0-cp312-cp312-manylinux_2_28_aarch64-cu129.whl", "cu129", "manylinux_2_28_aarch64", False, False),
        ("torch-2.10.0-cp314-cp314t-macosx_14_0_arm64-null.whl", "null", "macosx_14_0_arm64", True, False),
        ("torch-2.10.0-cp313-cp313-linux_x86_64-xpu.whl", "xpu", "linux_x86_64", False, False),
        (
            "numpy-2.3.2-cp313-cp313t-musllinux_1_2_x86_64-x86_64_v3.whl",
            "x86_64_v3",
            "musllinux_1_2_x86_64",
            False,
            False,
        ),
        ("demo-1.0-py3-none-any-d8e7b80a.whl", "d8e7b80a", "any", False, True),
        # PEP 825 dropped the 16-character cap.
        (
            "demo-1.0-py3-none-any-a_label_much_longer_than_sixteen.whl",
            "a_label_much_longer_than_sixteen",
            "any",
            False,
            False,
        ),
    ],
)
def test_variant_names(filename: str, label: str, platform: str, null: bool, hash_label: bool) -> None:
    w = parse_wheel_name(filename)
    assert (w.label, w.platform_tag, w.is_null, w.is_hash_label, w.is_variant) == (
        label,
        platform,
        null,
        hash_label,
        True,
    )
    assert w.build is None


@pytest.mark.parametrize(
    "filename",
    [
        "torch-2.9.0-cp313-cp313-manylinux_2_28_x86_64.whl",
        "torch-2.9.0-1-cp313-cp313-manylinux_2_28_x86_64.whl",
        "torch-2.9.0-12abc-cp313-cp313-win_amd64.whl",
        "Foo.Bar-1.0.post1-py2.py3-none-any.whl",
    ],
)
def test_non_variant_names_read_as_packaging_reads_them(filename: str) -> None:
    name, version, build, tags = parse_wheel_filename(filename)
    w = parse_wheel_name(filename)
    assert (w.name, w.version, w.build or (), w.tags) == (name, version, build, tags)
    assert w.label is None and not w.is_variant and not w.is_null


def test_build_tag_and_label_together() -> None:
    w = parse_wheel_name("torch-2.9.0-1abc-cp313-cp313-manylinux_2_28_x86_64-cuda13.0.whl")
    assert (w.build, w.python_tag, w.label) == ((1, "abc"), "cp313", "cuda13.0")


def test_old_installers_cannot_read_variant_names() -> None:
    """The backward-compatibility trick the format relies on: packaging refuses the label."""
    with pytest.raises(ValueError, match="build"):
        parse_wheel_filename("torch-2.9.0-cp313-cp313-manylinux_2_28_x86_64-cuda12.8.whl")


@pytest.mark.parametrize(
    ("filename", "fragment"),
    [
        ("torch-2.9.0-cp313-cp313-manylinux_2_28_x86_64-CUDA12.8.whl", "variant label 'CUDA12.8'"),
        ("torch-2.9.0-cp313-cp313-manylinux_2_28_x86_64-cu+128.whl", "variant label 'cu+128'"),
        ("torch-2.9.0-cp313-cp313-manylinux_2_28_x86_64-.whl", "variant label ''"),
        ("torch-2.9.0-x1-cp313-cp313-any-cuda.whl", "build tag 'x1'"),
        ("torch-2.9.0-1-313-cp313-any-cuda.whl", "python tag '313'"),
        ("torch-2.9.0-cp313-cp313-any-cu-da.whl", "build tag 'cp313'"),
        ("torch-two-cp313-cp313-any.whl", "'two' is not a valid version"),
        ("torch-2.9.0-cp313-any.whl", "expected name-version"),
        ("torch-2.9.0-cp313-cp313-any.zip", "must end in .whl"),
        ("-2.9.0-cp313-cp313-any.whl", "not a valid distribution name"),
    ],
)
def test_invalid_names(filename: str, fragment: str) -> None:
    with pytest.raises(VariantError, match=fragment.replace("+", r"\+").replace(".", r"\.")) as info:
        parse_wheel_name(filename)
    assert "\n" not in str(info.value)
