"""Interoperability: variantlib from PyPI discovers wheelfit's providers and reports what wheelfit computes.

A real virtual environment gets ``variantlib`` (PyPI) and the five wheelfit
distributions (built from this tree). A script run there uses variantlib's own
loaders: discovery through the ``variant_plugins`` entry points, then each plugin
loaded again by its ``plugin-api`` string. Both run the plugin in variantlib's
subprocess and validate the configs with variantlib's models.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import venv
from pathlib import Path
from typing import Any

import pytest

from wheelfit.probe import detect
from wheelfit_amd.variant_plugin import VARIANT_NAMESPACES as AMD_NAMESPACES
from wheelfit_amd.variant_plugin import amd_all_configs
from wheelfit_cpu.variant_plugin import VARIANT_NAMESPACES as CPU_NAMESPACES
from wheelfit_cpu.variant_plugin import aarch64_all_configs, x86_64_all_configs
from wheelfit_intel.variant_plugin import VARIANT_NAMESPACES as INTEL_NAMESPACES
from wheelfit_intel.variant_plugin import intel_all_configs
from wheelfit_nvidia.variant_plugin import VARIANT_NAMESPACES as NVIDIA_NAMESPACES
from wheelfit_nvidia.variant_plugin import nvidia_all_configs
from wheelfit_probekit import System

from ..conftest import MACHINES, ROOT, hermetic_env

PURE = {**NVIDIA_NAMESPACES, **AMD_NAMESPACES, **INTEL_NAMESPACES, **CPU_NAMESPACES}
ALL = {
    "nvidia": nvidia_all_configs(),
    "amd": amd_all_configs(),
    "intel": intel_all_configs(),
    "x86_64": x86_64_all_configs(),
    "aarch64": aarch64_all_configs(),
}
API = {
    "nvidia": "wheelfit_nvidia.variant_plugin:NvidiaVariantPlugin",
    "amd": "wheelfit_amd.variant_plugin:AMDVariantPlugin",
    "intel": "wheelfit_intel.variant_plugin:IntelVariantPlugin",
    "x86_64": "wheelfit_cpu.variant_plugin:X8664Plugin",
    "aarch64": "wheelfit_cpu.variant_plugin:AArch64Plugin",
}
AMD_ROCM = "AMD_VARIANT_PROVIDER_FORCE_ROCM_VERSION"
#: Fixture machines, with the reference override variables some of them run under.
MACHINE_RUNS: list[tuple[str, dict[str, str]]] = [
    ("nvidia-4090-plus-1080", {}),
    ("nvidia-4090-plus-1080", {"NV_VARIANT_PROVIDER_FORCE_SM_ARCH": "12.0"}),
    ("amd-8x-mi300x", {}),
    ("amd-8x-mi300x", {"AMD_VARIANT_PROVIDER_FORCE_GFX_ARCH": "gfx1100", AMD_ROCM: "7.1.0"}),
    ("intel-arc-b580", {"INTEL_VARIANT_PROVIDER_FORCE_DEVICE_IP": "20.4.4"}),
    ("cpu-sapphire-rapids-amx", {}),
    ("cpu-graviton3", {}),
]

#: Runs inside the test venv; only variantlib's public loaders and API, output as JSON.
SCRIPT = r"""
import json, sys
from variantlib.plugins.loader import DictPluginLoader, EntryPointPluginLoader

def plain(provider_configs):
    return {ns: [[c.name, list(c.values), c.multi_value] for c in cfg.configs]
            for ns, cfg in provider_configs.items()}

out = {}
with EntryPointPluginLoader() as loader:
    out["discovered"] = loader.plugin_api_values
    out["supported"] = plain(loader.get_supported_configs())
    out["all"] = plain(loader.get_all_configs())
out["by_api"] = {}
for namespace, api in sorted(out["discovered"].items()):
    with DictPluginLoader({namespace: api}) as one:
        out["by_api"][namespace] = plain(one.get_supported_configs()).get(namespace, [])
json.dump(out, sys.stdout)
"""


def _env(**extra: str) -> dict[str, str]:
    """Hermetic, and without this shell's override variables: only ``extra`` steers the plugins."""
    env = hermetic_env()
    for key in list(env):
        if key.startswith(("NV_VARIANT_", "AMD_VARIANT_", "INTEL_VARIANT_", "VIRTUAL_ENV")):
            del env[key]
    return {**env, **extra}


def _pip(python: Path, *args: str) -> None:
    proc = subprocess.run(
        [str(python), "-m", "pip", "install", "--disable-pip-version-check", "--no-input", "-q", *args],
        env=_env(),
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    if proc.returncode != 0:
        pytest.fail(f"pip install {' '.join(args)} failed:\n{proc.stderr[-3000:]}")


@pytest.fixture(scope="module")
def venv_python(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One venv per test session: variantlib from PyPI, then probekit, then the providers (no deps)."""
    home = tmp_path_factory.mktemp("variantlib-venv")
    venv.EnvBuilder(with_pip=True).create(home)
    python = home / ("Scripts/python.exe" if sys.platform == "win32" else "bin/python")
    # archspec: wheelfit-cpu's one dependency, which --no-deps below leaves out; hatchling: the providers'
    # build backend, installed once instead of once per isolated build
    _pip(python, "variantlib", "archspec>=0.2.5", "hatchling>=1.25")
    providers = ROOT / "providers"
    local = ("--no-deps", "--no-build-isolation")
    _pip(python, *local, str(providers / "probekit"))
    _pip(python, *local, *(str(providers / name) for name in ("nvidia", "amd", "intel", "cpu")))
    return python


def _run(python: Path, sysroot: Path, overrides: dict[str, str]) -> dict[str, Any]:
    proc = subprocess.run(
        [str(python), "-c", SCRIPT],
        env=_env(WHEELFIT_SYSROOT=str(sysroot), PATH="/usr/bin:/bin", **overrides),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    result: dict[str, Any] = json.loads(proc.stdout)
    return result


def _expected(sysroot: Path, overrides: dict[str, str]) -> dict[str, list[list[Any]]]:
    """What wheelfit itself computes: its report of the machine through the pure functions."""
    report = detect(System.from_sysroot(sysroot, environ={"PATH": "/usr/bin:/bin"})).to_dict()
    out: dict[str, list[list[Any]]] = {}
    for namespace, function in PURE.items():
        configs = function(report["accelerators"], report["cpu"], overrides)
        if configs:  # variantlib leaves a namespace with no supported configs out
            out[namespace] = [[name, values, multi] for name, values, multi in configs]
    return out


@pytest.mark.parametrize(("name", "overrides"), MACHINE_RUNS)
def test_variantlib_reports_what_wheelfit_computes(
    venv_python: Path, tmp_path: Path, name: str, overrides: dict[str, str]
) -> None:
    sysroot = tmp_path / "root"
    shutil.copytree(MACHINES / name / "root", sysroot, symlinks=True)
    got = _run(venv_python, sysroot, overrides)
    assert got["discovered"] == API  # entry-point name = namespace, value = plugin-api string
    want = _expected(sysroot, overrides)
    assert want, f"{name}: wheelfit finds nothing to compare"
    assert got["supported"] == want
    assert got["by_api"] == {ns: want.get(ns, []) for ns in API}
    assert got["all"] == {ns: [[n, v, m] for n, v, m in configs] for ns, configs in ALL.items()}
