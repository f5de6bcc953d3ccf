"""The plugin-API part every provider shares (``wheelfit_probekit.variant_plugin``): timeout, sysroot, attributes.

The per-namespace answers are tested in the other files here; these pin what the shared base adds: the
environment steers the probe (``WHEELFIT_SYSROOT``, ``WHEELFIT_PROBE_TIMEOUT``), and the classes show an
installer the plugin API's attributes only.
"""

from __future__ import annotations

import shutil
import time
from pathlib import Path
from typing import Any

import pytest

from wheelfit_amd.variant_plugin import AMDVariantPlugin
from wheelfit_cpu.variant_plugin import AArch64Plugin, X8664Plugin
from wheelfit_intel.variant_plugin import IntelVariantPlugin
from wheelfit_nvidia.variant_plugin import NvidiaVariantPlugin
from wheelfit_probekit import ProviderResult, System
from wheelfit_probekit.variant_plugin import DEFAULT_PROBE_TIMEOUT, Config, detect_configs, probe_timeout

from ..conftest import MACHINES

CLASSES = [NvidiaVariantPlugin, AMDVariantPlugin, IntelVariantPlugin, X8664Plugin, AArch64Plugin]
#: variantlib's ``PluginType`` members plus the early-2025 API's (``validate_property``, ``dynamic``).
PLUGIN_API = {
    "namespace",
    "is_aot_plugin",
    "is_build_plugin",
    "all_properties_compatible",
    "dynamic",
    "get_supported_configs",
    "get_all_configs",
    "validate_property",
}


@pytest.mark.parametrize(
    ("value", "seconds"),
    [(None, DEFAULT_PROBE_TIMEOUT), ("", DEFAULT_PROBE_TIMEOUT), ("2.5", 2.5), ("0", 0.1), ("soon", 15.0)],
)
def test_probe_timeout_reads_the_environment(value: str | None, seconds: float) -> None:
    assert probe_timeout({} if value is None else {"WHEELFIT_PROBE_TIMEOUT": value}) == seconds


class _Recorder:
    """A provider that keeps the System it was handed and reports one accelerator."""

    name = "recorder"

    def __init__(self) -> None:
        self.systems: list[System] = []

    def probe(self, system: System) -> ProviderResult:
        self.systems.append(system)
        return ProviderResult(accelerators=[{"vendor": "x"}], cpu={"arch": "riscv64"})


def test_detect_configs_probes_the_sysroot_the_environment_names(tmp_path: Path) -> None:
    recorder, seen = _Recorder(), []

    def pure(accelerators: Any, cpu: Any, environ: Any) -> list[Config]:
        seen.append((accelerators, cpu, dict(environ)))
        return [("f", ["v"], False)]

    environ = {"WHEELFIT_SYSROOT": str(tmp_path), "WHEELFIT_PROBE_TIMEOUT": "3", "X_FORCE": "1"}
    assert detect_configs(recorder, pure, environ) == [("f", ["v"], False)]
    (system,) = recorder.systems
    assert system.root == tmp_path.resolve() and system.command_timeout == 3.0
    assert dict(system.environ) == environ
    assert seen == [([{"vendor": "x"}], {"arch": "riscv64"}, environ)]  # the override variables reach the pure part


def test_the_plugin_class_bounds_a_hanging_tool_by_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """nvidia-smi never answers on this machine; WHEELFIT_PROBE_TIMEOUT=1 must reach the detector's deadline."""
    work = tmp_path / "root"
    shutil.copytree(MACHINES / "nvidia-smi-hangs" / "root", work, symlinks=True)
    for var in ("NV_VARIANT_PROVIDER_FORCE_CUDA_DRIVER_VERSION", "NV_VARIANT_PROVIDER_FORCE_SM_ARCH"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    monkeypatch.setenv("WHEELFIT_SYSROOT", str(work))
    monkeypatch.setenv("WHEELFIT_PROBE_TIMEOUT", "1")
    started = time.monotonic()
    configs = NvidiaVariantPlugin.get_supported_configs()
    assert time.monotonic() - started < DEFAULT_PROBE_TIMEOUT / 2  # the default deadline would take 15 s or more
    # The driver's CUDA 12.4 and the T4's sm_75 still come from procfs and the device table.
    assert [(c.name, c.values[0]) for c in configs] == [
        ("cuda_version_lower_bound", "12.4"),
        ("cuda_version_upper_bound", "15.20"),
        ("sm_arch", "75_real"),
    ]


@pytest.mark.parametrize("cls", CLASSES, ids=lambda c: str(c.namespace))
def test_the_classes_show_the_plugin_api_only(cls: Any) -> None:
    assert {name for name in dir(cls) if not name.startswith("_")} == PLUGIN_API
    assert not (cls.is_aot_plugin or cls.is_build_plugin or cls.all_properties_compatible or cls.dynamic)
