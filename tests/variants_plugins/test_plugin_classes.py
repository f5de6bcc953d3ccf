"""The ``variant_plugins`` classes on simulated machines (``WHEELFIT_SYSROOT``), called as installers call them."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from wheelfit_amd.variant_plugin import AMDVariantPlugin
from wheelfit_cpu.variant_plugin import AArch64Plugin, X8664Plugin
from wheelfit_intel.variant_plugin import IntelVariantPlugin
from wheelfit_nvidia.variant_plugin import NvidiaVariantPlugin

from ..conftest import MACHINES

PLUGINS: dict[str, Any] = {
    "nvidia": NvidiaVariantPlugin,
    "amd": AMDVariantPlugin,
    "intel": IntelVariantPlugin,
    "x86_64": X8664Plugin,
    "aarch64": AArch64Plugin,
}
OVERRIDES = (
    "NV_VARIANT_PROVIDER_FORCE_CUDA_DRIVER_VERSION",
    "NV_VARIANT_PROVIDER_FORCE_SM_ARCH",
    "AMD_VARIANT_PROVIDER_FORCE_GFX_ARCH",
    "AMD_VARIANT_PROVIDER_FORCE_ROCM_VERSION",
    "INTEL_VARIANT_PROVIDER_FORCE_DEVICE_IP",
    "HSA_OVERRIDE_GFX_VERSION",
    "CUDA_VISIBLE_DEVICES",
)


@pytest.fixture
def machine(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """Point the plugins at a copy of a fixture machine (git keeps no empty dirs; the tree stays untouched)."""
    for var in OVERRIDES:
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("PATH", "/usr/bin:/bin")

    def use(name: str) -> None:
        work = tmp_path / name
        if not work.exists():
            shutil.copytree(MACHINES / name / "root", work, symlinks=True)
        monkeypatch.setenv("WHEELFIT_SYSROOT", str(work))

    yield use


def plain(configs: list[Any]) -> list[tuple[str, list[str], bool]]:
    return [(c.name, c.values, c.multi_value) for c in configs]


def test_nvidia_4090_plus_1080(machine: Any) -> None:
    machine("nvidia-4090-plus-1080")
    configs = plain(NvidiaVariantPlugin.get_supported_configs())
    assert [c[0] for c in configs] == ["cuda_version_lower_bound", "cuda_version_upper_bound", "sm_arch"]
    assert configs[0][1][:3] == ["13.0", "13", "12.20"]  # driver 580.95.05 -> CUDA 13.0
    assert configs[2] == ("sm_arch", [f"8{m}_real" for m in range(9, -1, -1)] + ["80_virtual"], True)


def test_nvidia_overrides_through_the_environment(machine: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    machine("nvidia-4090-plus-1080")
    monkeypatch.setenv("NV_VARIANT_PROVIDER_FORCE_SM_ARCH", "9.0")
    monkeypatch.setenv("NV_VARIANT_PROVIDER_FORCE_CUDA_DRIVER_VERSION", "12.8")
    configs = plain(NvidiaVariantPlugin.get_supported_configs())
    assert configs[0][1][0] == "12.8" and configs[1][1][-1] == "12.9"
    assert configs[2] == ("sm_arch", ["90_real", "90_virtual"], True)


def test_amd_8x_mi300x(machine: Any) -> None:
    machine("amd-8x-mi300x")
    assert plain(AMDVariantPlugin.get_supported_configs()) == [
        ("gfx_arch", ["gfx942"], True),
        ("rocm_version", ["6.4"], False),
    ]


def test_intel_arc_b580_without_level_zero_is_empty_as_in_the_reference(
    machine: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    machine("intel-arc-b580")
    assert IntelVariantPlugin.get_supported_configs() == []  # a sysroot loads no Level Zero: no device IP
    monkeypatch.setenv("INTEL_VARIANT_PROVIDER_FORCE_DEVICE_IP", "20.1.0")
    assert plain(IntelVariantPlugin.get_supported_configs()) == [("device_ip", ["20.1.0"], True)]


def test_sapphire_rapids(machine: Any) -> None:
    machine("cpu-sapphire-rapids-amx")
    configs = plain(X8664Plugin.get_supported_configs())
    assert configs[0] == ("level", ["v4", "v3", "v2", "v1"], False)
    assert ("avx512_bf16", ["on"], False) in configs and ("avx2", ["on"], False) in configs
    assert AArch64Plugin.get_supported_configs() == []


def test_graviton3(machine: Any) -> None:
    machine("cpu-graviton3")
    configs = plain(AArch64Plugin.get_supported_configs())
    assert configs[0] == ("version", ["8.4a", "8.3a", "8.2a", "8.1a", "8a"], False)
    assert ("sve", ["on"], False) in configs and ("sve2", ["on"], False) not in configs
    assert X8664Plugin.get_supported_configs() == []


@pytest.mark.parametrize(
    ("name", "namespace"),
    [
        ("nvidia-4090-plus-1080", "nvidia"),
        ("amd-8x-mi300x", "amd"),
        ("intel-arc-b580", "intel"),
        ("cpu-sapphire-rapids-amx", "x86_64"),
        ("cpu-graviton3", "aarch64"),
    ],
)
def test_same_answer_on_the_class_an_instance_and_with_known_properties(
    machine: Any, name: str, namespace: str
) -> None:
    machine(name)
    cls = PLUGINS[namespace]
    assert cls.namespace == namespace
    on_class = cls.get_supported_configs()
    assert cls().get_supported_configs() == on_class
    assert cls.get_supported_configs(None) == on_class  # early-2025 API passes known_properties
    assert cls().get_supported_configs(frozenset()) == on_class
    assert cls.get_all_configs() == cls().get_all_configs(None)
    universe = {c.name: c for c in cls.get_all_configs()}
    for config in on_class:
        assert isinstance(config.name, str) and isinstance(config.multi_value, bool)
        assert isinstance(config.values, list) and config.values and all(isinstance(v, str) for v in config.values)
        if namespace != "amd":  # the AMD reference's fixed list omits targets it detects (see docs)
            assert set(config.values) <= set(universe[config.name].values)
            assert config.multi_value == universe[config.name].multi_value


def test_validate_property_for_the_early_api() -> None:
    class Prop:
        def __init__(self, namespace: str, feature: str, value: str) -> None:
            self.namespace, self.feature, self.value = namespace, feature, value

    assert NvidiaVariantPlugin.validate_property(Prop("nvidia", "sm_arch", "90_real"))
    assert not NvidiaVariantPlugin.validate_property(Prop("nvidia", "sm_arch", "130_real"))
    assert AMDVariantPlugin().validate_property(Prop("amd", "gfx_arch", "gfx942"))
    assert IntelVariantPlugin.validate_property(Prop("intel", "device_ip", "20.1.0"))
    assert not IntelVariantPlugin.validate_property(Prop("amd", "device_ip", "20.1.0"))
    assert X8664Plugin.validate_property(Prop("x86_64", "level", "v3"))
    assert AArch64Plugin.validate_property(Prop("aarch64", "version", "8.5a"))
    assert not AArch64Plugin.validate_property(Prop("aarch64", "crc32", "off"))


def test_malformed_override_fails_loudly(machine: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    machine("nvidia-4090-plus-1080")
    monkeypatch.setenv("NV_VARIANT_PROVIDER_FORCE_SM_ARCH", "90")
    with pytest.raises(ValueError, match="NV_VARIANT_PROVIDER_FORCE_SM_ARCH"):
        NvidiaVariantPlugin.get_supported_configs()
