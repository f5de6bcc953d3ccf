"""The amd and intel namespaces over report-shaped data, against the reference plugins.

Expected values follow amd-variant-provider (``gfx_arch`` multi-value, sorted; exact
``rocm_version`` MAJOR.MINOR; the override variables) and intel-variant-provider
(``device_ip`` with its compat base IP; its tests for the override): wheelnext/amd-variant-provider
@ 4d985a9 and wheelnext/intel-variant-provider @ 9516bd2.
"""

from __future__ import annotations

from typing import Any

import pytest

from wheelfit_amd.variant_plugin import VARIANT_NAMESPACES as AMD_NAMESPACES
from wheelfit_amd.variant_plugin import OverrideError, amd_all_configs, amd_supported_configs
from wheelfit_intel.variant_plugin import VARIANT_NAMESPACES as INTEL_NAMESPACES
from wheelfit_intel.variant_plugin import intel_all_configs, intel_supported_configs


def amd(gfx: str, rocm: str | None = "6.4.0", effective: str | None = None) -> dict[str, Any]:
    return {"vendor": "amd", "name": "AMD GPU", "pci_id": None, "source": "kfd", "gfx": gfx,
            "effective_gfx": effective or gfx, "rocm_version": rocm}  # fmt: skip


def intel(device_ip: str | None, family: str = "bmg") -> dict[str, Any]:
    return {"vendor": "intel", "name": "Intel GPU", "pci_id": None, "source": "pci-sysfs", "family": family,
            "xpu_capable": True, "device_ip": device_ip}  # fmt: skip


# -- amd ---------------------------------------------------------------------------------


def test_mi300x_host() -> None:
    configs = amd_supported_configs([amd("gfx942")] * 8, None, {})
    assert configs == [("gfx_arch", ["gfx942"], True), ("rocm_version", ["6.4"], False)]


def test_every_gfx_target_once_sorted() -> None:
    configs = amd_supported_configs([amd("gfx1100"), amd("gfx1036"), amd("gfx90a")], None, {})
    assert configs[0] == ("gfx_arch", ["gfx1036", "gfx1100", "gfx90a"], True)  # lexical, as the reference sorts


def test_gfx_is_the_runtime_target_after_hsa_override() -> None:
    configs = amd_supported_configs([amd("gfx1031", effective="gfx1030")], None, {})
    assert configs[0] == ("gfx_arch", ["gfx1030"], True)


def test_no_rocm_install_gives_gfx_only() -> None:
    assert amd_supported_configs([amd("gfx1100", rocm=None)], None, {}) == [("gfx_arch", ["gfx1100"], True)]


def test_no_amd_gpu_gives_nothing() -> None:
    assert amd_supported_configs([], {"arch": "x86_64"}, {}) == []
    assert amd_supported_configs([intel("20.1.0")], None, {}) == []


def test_forced_gfx_list_is_kept_as_given() -> None:
    env = {"AMD_VARIANT_PROVIDER_FORCE_GFX_ARCH": "gfx942, gfx90a;gfx1100"}
    configs = amd_supported_configs([amd("gfx1030")], None, env)
    assert configs[0] == ("gfx_arch", ["gfx942", "gfx90a", "gfx1100"], True)
    # a value that splits into nothing forces "no gfx_arch", it does not fall back to detection
    blank = {"AMD_VARIANT_PROVIDER_FORCE_GFX_ARCH": " , "}
    assert amd_supported_configs([amd("gfx1030", rocm=None)], None, blank) == []


def test_forced_rocm_version_is_cut_to_major_minor() -> None:
    env = {"AMD_VARIANT_PROVIDER_FORCE_ROCM_VERSION": "7.1.0", "AMD_VARIANT_PROVIDER_FORCE_GFX_ARCH": "gfx942"}
    assert amd_supported_configs([], None, env) == [("gfx_arch", ["gfx942"], True), ("rocm_version", ["7.1"], False)]
    assert amd_supported_configs([amd("gfx942")], None, {"AMD_VARIANT_PROVIDER_FORCE_ROCM_VERSION": " 6.3.4 "})[1] == (
        "rocm_version",
        ["6.3"],
        False,
    )


@pytest.mark.parametrize("value", ["7.1", "7", "7.1.0.1", "7..0"])
def test_forced_rocm_version_must_have_three_fields(value: str) -> None:
    with pytest.raises(OverrideError) as err:
        amd_supported_configs([amd("gfx942")], None, {"AMD_VARIANT_PROVIDER_FORCE_ROCM_VERSION": value})
    assert "AMD_VARIANT_PROVIDER_FORCE_ROCM_VERSION" in str(err.value) and "MAJOR.MINOR.PATCH" in str(err.value)


def test_amd_all_configs_are_the_reference_lists() -> None:
    rocm, gfx = amd_all_configs()
    assert rocm[0] == "rocm_version" and not rocm[2]
    assert rocm[1][:3] == ["7.10", "7.9", "7.8"] and rocm[1][-3:] == ["7.0", "6.4", "6.3"]
    assert gfx == (
        "gfx_arch",
        ["gfx900", "gfx906", "gfx908", "gfx90a", "gfx942", "gfx1030", "gfx1100", "gfx1101", "gfx1102", "gfx1200",
         "gfx1201"],
        True,
    )  # fmt: skip
    assert {"amd": amd_supported_configs} == AMD_NAMESPACES


# -- intel -------------------------------------------------------------------------------


def test_device_ip_with_its_compat_base() -> None:
    assert intel_supported_configs([intel("20.1.0")], None, {}) == [("device_ip", ["20.1.0"], True)]
    assert intel_supported_configs([intel("20.4.4", "lnl")], None, {}) == [("device_ip", ["20.4.4", "20.1.0"], True)]
    assert intel_supported_configs([intel("12.71.4", "mtl")], None, {}) == [("device_ip", ["12.71.4", "12.70.4"], True)]


def test_several_gpus_in_detection_order_without_repeats() -> None:
    gpus = [intel("12.56.5", "dg2"), intel("20.2.0"), intel("20.1.0"), intel("12.55.8", "dg2")]
    assert intel_supported_configs(gpus, None, {}) == [("device_ip", ["12.56.5", "12.55.8", "20.2.0", "20.1.0"], True)]


def test_unknown_or_missing_device_ip_gives_nothing() -> None:
    assert intel_supported_configs([intel("12.99.99")], None, {}) == []
    assert intel_supported_configs([intel(None)], None, {}) == []  # no Level Zero: the reference sees nothing
    assert intel_supported_configs([], None, {}) == []


def test_forced_device_ip_as_in_the_reference_tests() -> None:
    env = {"INTEL_VARIANT_PROVIDER_FORCE_DEVICE_IP": "12.60.7"}
    assert intel_supported_configs([], None, env) == [("device_ip", ["12.60.7"], True)]
    unknown = {"INTEL_VARIANT_PROVIDER_FORCE_DEVICE_IP": "12.99.99"}
    assert intel_supported_configs([intel("20.1.0")], None, unknown) == []


def test_forced_device_ip_stands_in_for_a_detected_one() -> None:
    env = {"INTEL_VARIANT_PROVIDER_FORCE_DEVICE_IP": "30.1.0"}
    assert intel_supported_configs([intel(None)], None, env) == [("device_ip", ["30.1.0", "30.0.4"], True)]


def test_intel_all_configs() -> None:
    ((name, values, multi),) = intel_all_configs()
    assert name == "device_ip" and multi
    for ip in ("12.55.8", "12.60.7", "12.71.4", "12.74.4", "20.1.0", "20.4.4", "30.0.4", "30.1.0"):  # torch 2.10 xpu
        assert ip in values
    assert len(values) == len(set(values))
    assert {"intel": intel_supported_configs} == INTEL_NAMESPACES
