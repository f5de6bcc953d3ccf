"""Detector plugins that crash, hang, print, return garbage or fail to import (issue 15).

End to end: real plugin distributions (wheels registered in ``wheelfit.providers``, installed by pip) on the
``PYTHONPATH`` of a ``wheelfit`` subprocess probing a simulated GTX 1080. Each bad plugin is isolated, abandoned at
the deadline and named with its distribution; the real NVIDIA detector's findings are kept; ``--json`` stays
readable while plugins print; the plan says what it was made for instead. In process: every malformed shape a
plugin can hand back becomes a failure of kind ``invalid`` and never reaches the JSON report.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import MACHINES, hermetic_env
from tests.support.plugins import FAULTS, NVIDIA_NIGHTLY, install_plugins, plugin_wheel
from wheelfit.probe.registry import LoadedProvider
from wheelfit.probe.runner import assemble, run_providers
from wheelfit.report import Platform
from wheelfit_probekit import ProbeRecord, ProviderResult, System

GTX_1080 = MACHINES / "nvidia-gtx1080" / "root"
#: --probe-timeout: a provider is abandoned this plus 5 s (the runner's grace) after it starts.
TIMEOUT = 0.5
KINDS = {"crashy": "crash", "sleepy": "timeout", "chatty": "timeout", "liar": "invalid", "missing": "load",
         "stuckimport": "timeout"}  # fmt: skip


@pytest.fixture(scope="module")
def faulty(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Every plugin of :data:`FAULTS`, installed by pip into one directory."""
    root = tmp_path_factory.mktemp("plugins")
    wheels = [plugin_wheel(root / "wheels", dist, ver, name, src) for name, (dist, ver, src) in FAULTS.items()]
    return install_plugins(wheels, root / "site")


@pytest.fixture(scope="module")
def nvidia_fork(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """:data:`NVIDIA_NIGHTLY`, installed by pip."""
    root = tmp_path_factory.mktemp("fork")
    dist, version, source = NVIDIA_NIGHTLY
    return install_plugins([plugin_wheel(root / "wheels", dist, version, "nvidia", source)], root / "site")


def start(args: list[str], site: Path, **extra: str) -> subprocess.Popen[str]:
    env = hermetic_env(PYTHONPATH=str(site), COLUMNS="400", **extra)
    argv = [sys.executable, "-m", "wheelfit", *args, "--sysroot", str(GTX_1080), "--probe-timeout", str(TIMEOUT)]
    return subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)


def finish(proc: subprocess.Popen[str]) -> tuple[str, str]:
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    return out, err


def test_bad_plugins_are_named_abandoned_and_the_real_gpu_is_still_planned(faulty: Path, tmp_path: Path) -> None:
    began = time.monotonic()
    cache = {"WHEELFIT_CACHE_DIR": str(tmp_path / "cache")}
    procs = [start(["detect", "--json"], faulty), start(["plan", "torch", "--offline", "--json"], faulty, **cache)]
    (detect_out, detect_err), (plan_out, _) = map(finish, procs)
    # Three plugins never return (two in their probe, one in its import): all are abandoned at one deadline.
    assert time.monotonic() - began < TIMEOUT + 5 + 10

    report = json.loads(detect_out)  # whole and strict, although four plugins printed, one all the time
    assert [a["name"] for a in report["accelerators"]] == ["NVIDIA GeForce GTX 1080"]
    failed = {f["provider"]: f for f in report["failed_providers"]}
    assert {name: f["kind"] for name, f in failed.items()} == KINDS
    for name, (dist, version, _) in FAULTS.items():
        assert (failed[name]["distribution"], failed[name]["version"]) == (dist, version)
        said = [p for p in report["probes"] if p["provider"] == name and not p["ok"] and p["hint"]]
        assert said and said[0]["error"].startswith(f"detector '{name}' ({dist} {version}) "), said
        assert f"--disable-provider {name}" in said[0]["hint"]
    assert failed["crashy"]["error"] == "crashed: RuntimeError: kaboom in the plugin"
    assert failed["sleepy"]["error"].startswith("did not finish within 5.")
    assert failed["missing"]["error"].startswith("could not be loaded: ModuleNotFoundError")
    assert "a probe record is malformed" in failed["liar"]["error"]
    errors = " | ".join(p["error"] or "" for p in report["probes"])
    assert "'compute_capability' must be str" in errors and "rejected the cpu section" in errors
    assert "Out of range float values are not JSON compliant" in errors  # the NaN: refused, not written as NaN
    # What plugins printed is not lost: it went to stderr.
    assert "crashy was here" in detect_err and "liar says hello" in detect_err and '"chatty"' in detect_err

    plan = json.loads(plan_out)
    assert plan["variant"] == "cu126"  # the NVIDIA detector worked: sm_61's build (README)
    fell = {f["provider"]: f for f in plan["detector_failures"]}
    assert set(fell) == set(KINDS)
    assert {f["planned_for"] for f in fell.values()} == {"NVIDIA GeForce GTX 1080 (sm_61)"}
    assert fell["crashy"]["unknown"] == "what it would have found is unknown"
    assert fell["crashy"]["distribution"] == "wheelfit-crashy"


def test_a_crashed_nvidia_detector_plans_for_the_cpu_and_says_so(nvidia_fork: Path, tmp_path: Path) -> None:
    cache = {"WHEELFIT_CACHE_DIR": str(tmp_path / "cache")}
    human = start(["plan", "torch", "--offline"], nvidia_fork, **cache)
    as_json = start(["plan", "torch", "--offline", "--json"], nvidia_fork, **cache)
    skipped = start(["plan", "torch", "--offline", "--json", "--disable-provider", "nvidia"], nvidia_fork, **cache)
    (text, _), (data, _), (quiet, _) = finish(human), finish(as_json), finish(skipped)
    assert text.startswith("torch 2.15.0+cpu"), text
    said = (
        "! the nvidia detector (wheelfit-nvidia-nightly 0.3.0.dev1) crashed: RuntimeError: NVML symbol "
        "nvmlDeviceGetFoo not found; no NVIDIA GPU is known, so the plan is for what was detected: CPU\n"
        "  → to plan for an NVIDIA GPU, name it: --target cuda=<compute capability>,driver=<driver version>; "
        "or fix or uninstall wheelfit-nvidia-nightly 0.3.0.dev1, or skip it with --disable-provider nvidia\n"
    )
    assert said in text, text
    plan = json.loads(data)
    assert plan["variant"] == "cpu"
    assert [(f["provider"], f["kind"], f["unknown"], f["planned_for"]) for f in plan["detector_failures"]] == [
        ("nvidia", "crash", "no NVIDIA GPU is known", "CPU")
    ]
    # Skipping it on purpose: the same CPU plan, and nothing failed.
    assert json.loads(quiet)["detector_failures"] == [] and json.loads(quiet)["variant"] == "cpu"


# -- in process: every shape of garbage ------------------------------------------------------------------------


class Returns:
    def __init__(self, value: Any = None, exc: BaseException | None = None) -> None:
        self.name, self.value, self.exc = "odd", value, exc

    def probe(self, system: System) -> Any:
        if self.exc is not None:
            raise self.exc
        return self.value


class UnprintableError(Exception):
    def __str__(self) -> str:
        raise ValueError("no")


NVIDIA = {"vendor": "nvidia", "name": "GPU", "source": "x", "compute_capability": "8.6"}
GARBAGE = {
    "None": (Returns(None), "not a ProviderResult (NoneType)"),
    "dict": (Returns({"accelerators": []}), "not a ProviderResult (dict)"),
    "accelerators-int": (Returns(ProviderResult(accelerators=5)), "accelerators is a int, not a list"),  # type: ignore[arg-type]
    "entry-str": (Returns(ProviderResult(accelerators=["x"])), "accelerator entry is not an object"),  # type: ignore[list-item]
    "entry-set": (Returns(ProviderResult(accelerators=[{**NVIDIA, "uuids": {1}}])), "not JSON serializable"),
    "entry-inf": (Returns(ProviderResult(accelerators=[{**NVIDIA, "mem": float("inf")}])), "not JSON compliant"),
    "probe-str": (Returns(ProviderResult(probes=["x"])), "a probe record is malformed"),  # type: ignore[list-item]
    "probe-nan": (Returns(ProviderResult(probes=[ProbeRecord("odd", "s", True, float("nan"))])), "malformed"),
    "probe-obj": (Returns(ProviderResult(probes=[ProbeRecord("odd", "s", True, 1, detail=object())])), "malformed"),  # type: ignore[arg-type]
    "cpu-str": (Returns(ProviderResult(cpu="x")), "rejected the cpu section: it is a str"),  # type: ignore[arg-type]
    "cpu-features": (Returns(ProviderResult(cpu={"features": [1, "a"]})), "'features' must be a list of strings"),
    "cpu-arch": (Returns(ProviderResult(cpu={"arch": 64})), "'arch' must be a string or null"),
    "no-fields": (Returns(object.__new__(ProviderResult)), "cannot be read: 'ProviderResult' object has no attr"),
    "unprintable": (Returns(exc=UnprintableError()), "crashed: UnprintableError: <unprintable UnprintableError>"),
    "SystemExit": (Returns(exc=SystemExit(3)), "crashed: SystemExit: 3"),
}


@pytest.mark.parametrize("provider,said", GARBAGE.values(), ids=GARBAGE.keys())
def test_garbage_is_a_named_failure_and_never_reaches_the_report(tmp_path: Path, provider: Returns, said: str) -> None:
    system = System.from_sysroot(tmp_path, environ={}, command_timeout=5)
    plat = Platform(system="Linux", machine="x86_64", python="3.11.7")
    report = assemble(plat, run_providers(system, [LoadedProvider("odd", "acme-odd", provider, version="1.2")]))
    text = report.to_json()  # must not raise

    def refuse(constant: str) -> None:
        raise AssertionError(f"{constant} in the report")

    data = json.loads(text, parse_constant=refuse)
    (failure,) = data["failed_providers"]
    assert (failure["provider"], failure["distribution"], failure["version"]) == ("odd", "acme-odd", "1.2")
    assert said in failure["error"], failure
    assert data["accelerators"] == [] and data["cpu"]["arch"] == "x86_64"
    assert any(p["error"].startswith("detector 'odd' (acme-odd 1.2) ") for p in data["probes"] if p["error"])


def test_a_plugin_that_prints_writes_to_stderr_and_stdout_is_put_back(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    class Noisy:
        name = "noisy"

        def probe(self, system: System) -> ProviderResult:
            print("plugin noise")
            return ProviderResult()

    before = sys.stdout
    system = System.from_sysroot(tmp_path, environ={}, command_timeout=5)
    run_providers(system, [LoadedProvider("noisy", "acme-noisy", Noisy())])
    print("ours")
    assert sys.stdout is before  # the provider thread ended: nothing is left replaced
    out, err = capfd.readouterr()
    assert out == "ours\n" and err == "plugin noise\n"
