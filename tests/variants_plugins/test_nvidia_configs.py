"""The nvidia namespace over report-shaped data, against the reference plugin's documented output.

Expected lists come from the reference (wheelnext/nvidia-variant-provider @ ffea5d3, ``plugin.py``
and its tests), written out here, not taken from the code.
"""

from __future__ import annotations

from typing import Any

import pytest

from wheelfit_nvidia.variant_plugin import (
    VARIANT_NAMESPACES,
    OverrideError,
    nvidia_all_configs,
    nvidia_supported_configs,
)


def gpu(cc: str | None, cuda: str | None = "12.8", **extra: Any) -> dict[str, Any]:
    return {"vendor": "nvidia", "name": "GPU", "pci_id": None, "source": "nvidia-smi",
            "compute_capability": cc, "driver_version": "570.86.10", "cuda_driver_version": cuda, **extra}  # fmt: skip


def by_name(configs: list[tuple[str, list[str], bool]]) -> dict[str, tuple[list[str], bool]]:
    return {name: (values, multi) for name, values, multi in configs}


LOWER_12_8 = [
    "12.8", "12.7", "12.6", "12.5", "12.4", "12.3", "12.2", "12.1", "12.0", "12",
    "11.20", "11.19", "11.18", "11.17", "11.16", "11.15", "11.14", "11.13", "11.12", "11.11", "11.10",
    "11.9", "11.8", "11.7", "11.6", "11.5", "11.4", "11.3", "11.2", "11.1", "11.0", "11",
]  # fmt: skip


def test_driver_12_8_and_sm_86_in_reference_order() -> None:
    configs = nvidia_supported_configs([gpu("8.6", "12.8")], None, {})
    assert [c[0] for c in configs] == ["cuda_version_lower_bound", "cuda_version_upper_bound", "sm_arch"]
    got = by_name(configs)
    assert got["cuda_version_lower_bound"] == (LOWER_12_8, False)
    upper, multi = got["cuda_version_upper_bound"]
    assert not multi
    assert len(upper) == 78  # 15.20 down to 12.9
    assert upper[:3] == ["15.20", "15.19", "15.18"]
    assert upper[20:23] == ["15.0", "15", "14.20"]
    assert upper[-3:] == ["12.11", "12.10", "12.9"]
    assert "13" in upper and "12" not in upper and "12.8" not in upper
    assert got["sm_arch"] == (
        ["86_real", "85_real", "84_real", "83_real", "82_real", "81_real", "80_real", "80_virtual"],
        True,
    )


def test_sm_examples_from_the_reference() -> None:
    got = by_name(nvidia_supported_configs([gpu("8.9")], None, {}))
    assert got["sm_arch"][0] == [f"8{m}_real" for m in (9, 8, 7, 6, 5, 4, 3, 2, 1, 0)] + ["80_virtual"]
    assert by_name(nvidia_supported_configs([gpu("9.0")], None, {}))["sm_arch"][0] == ["90_real", "90_virtual"]
    assert by_name(nvidia_supported_configs([gpu("12.0")], None, {}))["sm_arch"][0] == ["120_real", "120_virtual"]


def test_driver_13_0_lower_bound_starts_at_the_major() -> None:
    lower = by_name(nvidia_supported_configs([gpu("9.0", "13.0")], None, {}))["cuda_version_lower_bound"][0]
    assert lower[:4] == ["13.0", "13", "12.20", "12.19"]
    assert len(lower) == 2 + 22 + 22
    upper = by_name(nvidia_supported_configs([gpu("9.0", "13.0")], None, {}))["cuda_version_upper_bound"][0]
    assert upper[-2:] == ["13.2", "13.1"]


def test_multi_gpu_uses_only_the_highest_compute_capability_like_the_reference() -> None:
    rtx4090, gtx1080 = gpu("8.9", "13.0", index=0), gpu("6.1", "13.0", index=1)
    for order in ([rtx4090, gtx1080], [gtx1080, rtx4090]):
        sm = by_name(nvidia_supported_configs(order, None, {}))["sm_arch"][0]
        assert sm[0] == "89_real" and sm[-1] == "80_virtual"
        assert "61_real" not in sm  # the reference's known gap: the GTX 1080 is ignored


def test_hidden_gpus_count_as_nvml_sees_them() -> None:
    sm = by_name(nvidia_supported_configs([gpu("9.0", visible=False), gpu("8.6")], None, {}))["sm_arch"][0]
    assert sm == ["90_real", "90_virtual"]


def test_no_nvidia_gpu_gives_nothing() -> None:
    assert nvidia_supported_configs([], None, {}) == []
    amd = {"vendor": "amd", "name": "MI300X", "source": "kfd", "gfx": "gfx942"}
    assert nvidia_supported_configs([amd], {"arch": "x86_64"}, {}) == []


def test_unknown_or_out_of_range_driver_disables_detection() -> None:
    assert nvidia_supported_configs([gpu("8.6", None)], None, {}) == []
    assert nvidia_supported_configs([gpu("8.6", "10.2")], None, {}) == []
    assert nvidia_supported_configs([gpu("8.6", "16.0")], None, {}) == []
    assert by_name(nvidia_supported_configs([gpu("8.6", "11.0")], None, {}))["cuda_version_lower_bound"][0] == [
        "11.0",
        "11",
    ]


def test_compute_capability_below_5_0_drops_only_sm_arch() -> None:
    configs = nvidia_supported_configs([gpu("3.7", "11.4")], None, {})
    assert [c[0] for c in configs] == ["cuda_version_lower_bound", "cuda_version_upper_bound"]


def test_forced_driver_version_replaces_the_detected_one() -> None:
    env = {"NV_VARIANT_PROVIDER_FORCE_CUDA_DRIVER_VERSION": "12.4"}
    got = by_name(nvidia_supported_configs([gpu("8.6", "13.0")], None, env))
    assert got["cuda_version_lower_bound"][0][:2] == ["12.4", "12.3"]
    assert got["cuda_version_upper_bound"][0][-1] == "12.5"
    # the reference reads it as a version: a patch part and a bare major are accepted
    env = {"NV_VARIANT_PROVIDER_FORCE_CUDA_DRIVER_VERSION": "12.6.3"}
    assert by_name(nvidia_supported_configs([gpu("8.6")], None, env))["cuda_version_lower_bound"][0][0] == "12.6"
    env = {"NV_VARIANT_PROVIDER_FORCE_CUDA_DRIVER_VERSION": "13"}
    assert by_name(nvidia_supported_configs([gpu("8.6")], None, env))["cuda_version_lower_bound"][0][:2] == [
        "13.0",
        "13",
    ]


def test_forced_driver_without_a_gpu_gives_the_bounds_only() -> None:
    env = {"NV_VARIANT_PROVIDER_FORCE_CUDA_DRIVER_VERSION": "12.8"}
    configs = nvidia_supported_configs([], None, env)
    assert [c[0] for c in configs] == ["cuda_version_lower_bound", "cuda_version_upper_bound"]
    assert configs[0][1] == LOWER_12_8


def test_forced_driver_is_not_range_checked_as_in_the_reference() -> None:
    env = {"NV_VARIANT_PROVIDER_FORCE_CUDA_DRIVER_VERSION": "16.0"}
    configs = nvidia_supported_configs([gpu("8.6")], None, env)
    assert [c[0] for c in configs] == ["cuda_version_lower_bound", "sm_arch"]  # nothing above 15.20 to offer
    assert configs[0][1][:3] == ["16.0", "16", "15.20"]


def test_forced_sm_arch_replaces_the_detected_one() -> None:
    env = {"NV_VARIANT_PROVIDER_FORCE_SM_ARCH": "9.0"}
    assert by_name(nvidia_supported_configs([gpu("8.6")], None, env))["sm_arch"][0] == ["90_real", "90_virtual"]
    env = {"NV_VARIANT_PROVIDER_FORCE_SM_ARCH": "12.5", "NV_VARIANT_PROVIDER_FORCE_CUDA_DRIVER_VERSION": "12.7"}
    got = by_name(nvidia_supported_configs([], None, env))
    # the reference's own test: lower 12.7 .. 11, upper 15.20 .. 12.8, sm 125_real .. 120_virtual
    assert got["cuda_version_lower_bound"][0][0] == "12.7" and got["cuda_version_lower_bound"][0][-1] == "11"
    assert got["cuda_version_upper_bound"][0][-1] == "12.8"
    assert got["sm_arch"][0][0] == "125_real" and got["sm_arch"][0][-1] == "120_virtual"


def test_forced_sm_arch_alone_needs_a_driver() -> None:
    assert nvidia_supported_configs([], None, {"NV_VARIANT_PROVIDER_FORCE_SM_ARCH": "9.0"}) == []


def test_empty_override_means_unset() -> None:
    env = {"NV_VARIANT_PROVIDER_FORCE_CUDA_DRIVER_VERSION": "", "NV_VARIANT_PROVIDER_FORCE_SM_ARCH": ""}
    assert nvidia_supported_configs([gpu("8.6")], None, env) == nvidia_supported_configs([gpu("8.6")], None, {})


@pytest.mark.parametrize(
    ("var", "value"),
    [
        ("NV_VARIANT_PROVIDER_FORCE_CUDA_DRIVER_VERSION", "abc"),
        ("NV_VARIANT_PROVIDER_FORCE_CUDA_DRIVER_VERSION", "12,8"),
        ("NV_VARIANT_PROVIDER_FORCE_SM_ARCH", "9"),
        ("NV_VARIANT_PROVIDER_FORCE_SM_ARCH", "sm_90"),
        ("NV_VARIANT_PROVIDER_FORCE_SM_ARCH", "9.0.1"),
    ],
)
def test_malformed_override_is_a_clear_error(var: str, value: str) -> None:
    with pytest.raises(OverrideError) as err:
        nvidia_supported_configs([gpu("8.6")], None, {var: value})
    message = str(err.value)
    assert var in message and repr(value) in message and "\n" not in message
    assert isinstance(err.value, ValueError)


def test_all_configs_is_the_reference_universe() -> None:
    got = by_name(nvidia_all_configs())
    lower, upper, sm = got["cuda_version_lower_bound"][0], got["cuda_version_upper_bound"][0], got["sm_arch"]
    assert len(lower) == 110 and lower[0] == "15.20" and lower[-1] == "11"  # 5 majors x (21 minors + bare)
    assert upper == lower
    assert sm[1] is True
    assert len(sm[0]) == 160 and sm[0][0] == "129_real" and sm[0][80] == "129_virtual" and sm[0][-1] == "50_virtual"


@pytest.mark.parametrize(("cc", "cuda"), [("8.6", "12.8"), ("12.0", "13.0"), ("5.0", "11.0"), ("10.3", "15.20")])
def test_supported_values_are_a_subset_of_all(cc: str, cuda: str) -> None:
    universe = by_name(nvidia_all_configs())
    for name, values, multi in nvidia_supported_configs([gpu(cc, cuda)], None, {}):
        assert set(values) <= set(universe[name][0])
        assert multi == universe[name][1]
        assert len(values) == len(set(values))


def test_namespace_table() -> None:
    assert {"nvidia": nvidia_supported_configs} == VARIANT_NAMESPACES
