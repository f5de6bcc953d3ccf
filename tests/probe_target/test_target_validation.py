"""``--target`` values that name nothing wheelfit knows are usage errors (exit 2) naming what it knows, not a
quiet CPU plan; and the reference providers' override variables behave as the reference providers do."""

from __future__ import annotations

import json
import subprocess

import pytest

from tests.support.inprocess import wheelfit_in_process
from wheelfit.probe.target import TargetError, apply_overrides, load_target

from ..conftest import ROOT, hermetic_env

MACHINES = ROOT / "tests" / "machines"


def wheelfit(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return wheelfit_in_process(args, hermetic_env(**env))


@pytest.mark.parametrize(
    ("spec", "names"),
    [
        ("rocm=gfx9999", ("gfx942", "gfx1100", "rocminfo")),  # an unknown gfx target: the known ones, and how to look
        ("cuda=9.9", ("8.9", "12.0", "future GPU")),  # inside the known range, never shipped: a typo
        ("cuda=8.6,driver=abc", ("580.95.05", "580")),
        ("xpu=foo", ("bmg", "dg2", "8086:e20b")),
        ("xpu=8086:1234", ("not in wheelfit's Intel device table", "bmg")),
        ("cpu=v5", ("v1..v4",)),
        ("arch=riscv64", ("x86_64", "aarch64")),
        ("python=three", ("3.12",)),
    ],
)
def test_a_value_nothing_knows_is_a_usage_error_naming_what_is_known(spec: str, names: tuple[str, ...]) -> None:
    done = wheelfit("plan", "torch", "--offline", "--target", spec)
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert done.stdout == "" and "Traceback" not in done.stderr
    message = done.stderr.strip().splitlines()[-1]
    for name in names:
        assert name in message, message
    with pytest.raises(TargetError):
        load_target(spec, host_python="3.12")


def test_a_gpu_newer_than_the_tables_is_still_planned() -> None:
    """cuda=13.0 is past the newest compute capability the tables know: PTX may serve it, so it is planned."""
    done = wheelfit("plan", "torch", "--offline", "--json", "--target", "cuda=13.0,driver=580.95.05")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["variant"] == "cu130"


def test_a_bare_driver_branch_is_read_as_its_first_release() -> None:
    """driver=580: the R580 branch, whose first release (580.65.06) is CUDA 13.0's minimum: every R580 driver runs
    CUDA 13.0, so the plan is the same as with a full version of that branch."""
    gpu = load_target("cuda=8.6,driver=580", host_python="3.12").accelerators[0]
    assert (gpu.driver_version, gpu.cuda_driver_version) == ("580.65.06", "13.0")
    short = wheelfit("plan", "torch", "--offline", "--json", "--target", "cuda=8.6,driver=580")
    full = wheelfit("plan", "torch", "--offline", "--json", "--target", "cuda=8.6,driver=580.95.05")
    assert short.returncode == full.returncode == 0, short.stderr
    assert json.loads(short.stdout)["variant"] == json.loads(full.stdout)["variant"]
    said = [w.replace("580.65.06", "580.95.05") for w in json.loads(short.stdout)["warnings"]]
    assert said == json.loads(full.stdout)["warnings"]  # the same driver judgement, of the branch's first release


def test_known_values_are_read() -> None:
    report = load_target("xpu=12.55.8+bmg,rocm=gfx942,cpu=x86-64-v3", host_python="3.12")
    intel = [a for a in report.accelerators if a.vendor == "intel"]
    assert [(a.family, a.device_ip) for a in intel] == [("dg2", "12.55.8"), ("bmg", None)]
    assert [a.gfx for a in report.accelerators if a.vendor == "amd"] == ["gfx942"]


def test_os_macos_invents_no_macos_version() -> None:
    assert load_target("os=macos", host_python="3.12").platform.release is None


def test_a_forced_intel_device_ip_no_xpu_build_targets_plans_as_the_reference_does() -> None:
    """12.70.4 (mtl-u, arl-u): the reference Intel provider reports it, but no PyTorch xpu variant targets it, so
    the reference ranking takes no xpu variant. wheelfit plans the same, as if there were no Intel GPU, with a
    warning, where it once exited 2: a CI job written for the reference provider keeps working."""
    root = MACHINES / "intel-arc-b580" / "root"
    done = wheelfit(
        "plan", "torch", "--offline", "--json", "--sysroot", str(root), INTEL_VARIANT_PROVIDER_FORCE_DEVICE_IP="12.70.4"
    )
    assert done.returncode == 0, done.stderr
    plan = json.loads(done.stdout)
    assert plan["variant"] == "cpu"
    assert any("12.70.4: no PyTorch XPU build targets this device IP" in w for w in plan["warnings"])
    report, notes = apply_overrides(
        load_target("xpu=bmg", host_python="3.12"), {"INTEL_VARIANT_PROVIDER_FORCE_DEVICE_IP": "99.1.0"}
    )
    assert [a for a in report.accelerators if a.vendor == "intel"] == []
    assert any("as if there were no Intel GPU" in n for n in notes)


def test_a_forced_intel_device_ip_runs_through_its_base_platform_ip() -> None:
    """20.2.0 (bmg-g31) runs the code of its base IP 20.1.0 (bmg), as the reference provider expands it."""
    report, _ = apply_overrides(
        load_target("os=linux", host_python="3.12"), {"INTEL_VARIANT_PROVIDER_FORCE_DEVICE_IP": "20.2.0"}
    )
    (gpu,) = report.accelerators
    assert (gpu.family, gpu.device_ip) == ("bmg", "20.1.0")
