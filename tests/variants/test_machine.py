"""From a hardware report to supported configs and the marker environment."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pytest

from wheelfit.probe.target import load_target
from wheelfit.variants import VariantError
from wheelfit.variants.machine import marker_environment, supported_configs
from wheelfit.variants.ranking import FeatureConfig


def _seen(accels: Sequence[Mapping[str, Any]], cpu: Mapping[str, Any] | None, env: Mapping[str, str]) -> Any:
    """A stand-in namespace that reports what it was handed."""
    return [("vendors", [str(a["vendor"]) for a in accels], True), ("arch", [str((cpu or {}).get("arch"))], False)]


def test_plugins_get_the_report_as_data() -> None:
    report = load_target("cuda=8.6,rocm=gfx942,os=linux,arch=x86_64")
    configs = supported_configs(report, {}, plugins={"seen": ("test", _seen)})
    assert configs == {"seen": [FeatureConfig("vendors", ("nvidia", "amd"), True), FeatureConfig("arch", ("x86_64",))]}


@pytest.mark.parametrize("bad", [None, [("f", "v", False)], [("f", ["v"])], [("f", [1], False)], [("f", ["v"], "no")]])
def test_malformed_plugin_output_is_a_variant_error(bad: object) -> None:
    with pytest.raises(VariantError, match="test namespace 'x' returned"):
        supported_configs(load_target("os=linux"), {}, plugins={"x": ("test", lambda *_: bad)})  # type: ignore[dict-item]


def test_target_kernel_driver_becomes_the_cuda_driver_version() -> None:
    """``--target driver=580.95.05``: the installed nvidia provider sees CUDA 13.0, as NVML would report."""
    pytest.importorskip("wheelfit_nvidia.variant_plugin")
    configs = supported_configs(load_target("cuda=8.6,driver=580.95.05"), {})
    lower = next(c for c in configs["nvidia"] if c.name == "cuda_version_lower_bound")
    assert lower.values[0] == "13.0"


def test_marker_environment_follows_the_target_platform() -> None:
    env = marker_environment(load_target("os=windows,python=3.12.1"))
    assert (env["platform_system"], env["sys_platform"], env["os_name"], env["python_version"]) == (
        "Windows",
        "win32",
        "nt",
        "3.12",
    )
    assert marker_environment(load_target("os=macos"))["platform_system"] == "Darwin"
