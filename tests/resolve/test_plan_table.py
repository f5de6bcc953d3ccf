"""`wheelfit plan` as a decision table: each row a machine, a requirement list and flags, with the
build the published facts call for (see cases.py), plus the plan's own invariants on every row."""

from __future__ import annotations

import json
import shutil
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from tests.support.inprocess import wheelfit_in_process
from wheelfit.kb.matrix import load_knowledge
from wheelfit.kb.overrides import rocm_known_broken, rocm_overrides
from wheelfit.probe import detect
from wheelfit.probe.target import apply_overrides, load_target
from wheelfit.report import HardwareReport
from wheelfit.resolve import Plan, Request, ResolveError
from wheelfit_probekit import System

from ..conftest import MACHINES, hermetic_env
from . import kb_plan
from .cases import CASES, D580, Case

PYTHON = "3.12.7"
_DETECTED: dict[str, HardwareReport] = {}


def detected(name: str, tmp_root: Path) -> HardwareReport:
    """A fixture machine's report, detected once per session from a copy of its sysroot."""
    if name not in _DETECTED:
        spec: dict[str, Any] = json.loads((MACHINES / name / "expected.json").read_text())
        env = {"PATH": "/usr/bin:/bin", **spec.get("env", {})}
        work = tmp_root / name
        shutil.copytree(MACHINES / name / "root", work, symlinks=True)
        timeout = float(env.get("WHEELFIT_PROBE_TIMEOUT", "10"))
        _DETECTED[name] = detect(System.from_sysroot(work, environ=env, command_timeout=timeout))
    return _DETECTED[name]


def machine(c: Case, tmp_root: Path) -> HardwareReport:
    kind, _, value = c.machine.partition(":")
    if kind == "target":
        report = load_target(value, host_python=PYTHON)
    else:
        report = detected(value, tmp_root)
        report = replace(report, platform=replace(report.platform, python=PYTHON))
    if c.platform:
        report = replace(report, platform=replace(report.platform, **c.platform))
    if c.env:
        report, notes = apply_overrides(report, c.env)
        assert len(notes) == len(c.env), notes
    return report


def plan_for(c: Case, tmp_root: Path) -> Plan:
    request = Request.parse(c.reqs, allow_cpu=c.allow_cpu, rocm_overrides=rocm_overrides(),
                            rocm_broken=rocm_known_broken())  # fmt: skip
    return kb_plan(machine(c, tmp_root), load_knowledge(), request)


def check_invariants(p: Plan) -> None:
    """What every plan promises, whatever the machine."""
    assert p.index_url == f"https://download.pytorch.org/whl/{p.variant}"
    torch = p.packages[0]
    assert (torch.name, torch.version) == ("torch", p.torch_version)
    local = "" if p.platform.startswith("macos") else f"+{p.variant}"  # macOS wheels carry no label
    assert torch.requirement == f"torch=={p.torch_version}{local}"
    for pin in p.packages[1:]:
        if pin.requirement.startswith(f"{pin.name}=="):
            assert pin.requirement == f"{pin.name}=={pin.version}{local}"
    # The chosen build is never among the rejected ones.
    assert not any(r.variant == p.variant and r.version == p.torch_version for r in p.rejected)
    # A plan is JSON with the documented keys.
    d = json.loads(json.dumps(p.to_dict()))
    assert {"torch_version", "variant", "index_url", "packages", "rejected", "warnings"} <= set(d)


@pytest.mark.parametrize("c", CASES)
def test_plan(c: Case, tmp_path_factory: pytest.TempPathFactory) -> None:
    p = plan_for(c, tmp_path_factory.getbasetemp())
    check_invariants(p)
    if c.torch.count(".") == 2:
        assert p.torch_version == c.torch
    else:
        assert p.torch_version.startswith(c.torch + "."), p.torch_version
    variants = (c.variant,) if isinstance(c.variant, str) else c.variant
    assert p.variant in variants, (p.variant, p.warnings, p.reasons)
    text = "\n".join([*p.reasons, *p.warnings, *(r.reason for r in p.rejected)])
    for s in c.says:
        assert s in text, (s, text)
    for s in c.warns:
        assert any(s in w for w in p.warnings), (s, p.warnings)
    for s in c.not_warns:
        assert not any(s in w for w in p.warnings), (s, p.warnings)
    for key, value in c.plan_env.items():
        assert p.env.get(key) == value, (key, dict(p.env), p.warnings)
    pins = {pin.name: pin.version for pin in p.packages}
    for name, version in c.packages.items():
        assert pins.get(name) == version, pins


@pytest.mark.parametrize(
    ("machine_", "reqs", "message"),
    [
        # macOS x86_64 wheels end with torch 2.2.2 (MAC-X86): nothing newer for an Intel Mac.
        pytest.param("fixture:apple-intel-mojave-skylake", ("torch>=2.3",), "no PyTorch release", id="intel-mac"),
        # /proc/cpuinfo is binary garbage and uname is not recorded: the architecture is unknown.
        pytest.param("fixture:cpu-garbage", ("torch",), "unknown architecture", id="arch-unknown"),
        # Python 3.15 wheels exist only for 2.15 (BM-7.2) and 2.13 (on the PyTorch index, TI-8263).
        pytest.param(
            f"target:cuda=8.6,driver={D580},python=3.15", ("torch<2.13",), "no PyTorch release", id="py315-old"
        ),
        # torchvision < 0.25 pins torch <= 2.9 (BM-7.3): no 2.12+ matches.
        pytest.param("target:cuda=8.6", ("torch>=2.12", "torchvision<0.25"), "no PyTorch release", id="tv-conflict"),
    ],
)
def test_no_plan(machine_: str, reqs: tuple[str, ...], message: str, tmp_path_factory: pytest.TempPathFactory) -> None:
    c = Case(machine_, reqs, "", "")
    with pytest.raises(ResolveError, match=message):
        plan_for(c, tmp_path_factory.getbasetemp())


def test_table_covers_every_fixture_machine() -> None:
    used = {c.machine.removeprefix("fixture:") for p in CASES for c in p.values if isinstance(c, Case)}  # type: ignore[attr-defined]
    used |= {"apple-intel-mojave-skylake", "cpu-garbage"}  # test_no_plan
    names = {d.name for d in MACHINES.iterdir() if (d / "expected.json").is_file()}
    assert not names - used, sorted(names - used)
    assert len(CASES) >= 45


# ---- the same decisions through the command line -------------------------------------------------


def wheelfit_plan(*args: str) -> dict[str, Any]:
    r = wheelfit_in_process(["plan", *args, "--json", "--offline"], hermetic_env())
    assert r.returncode == 0, r.stderr
    data: dict[str, Any] = json.loads(r.stdout)
    return data


def test_cli_gtx1080_target_gets_2_14_cu126_with_companion() -> None:
    # --offline: the default index is named, never read.
    d = wheelfit_plan(
        "torch", "torchvision", "--target", f"cuda=6.1,driver={D580},python=3.12",
        "--pytorch-index", "https://download.pytorch.org/whl",
    )  # fmt: skip
    assert (d["torch_version"], d["variant"]) == ("2.14.1", "cu126")
    assert d["index_url"] == "https://download.pytorch.org/whl/cu126"
    assert [p["requirement"] for p in d["packages"]] == ["torch==2.14.1+cu126", "torchvision==0.29.1+cu126"]
    assert any(r["version"] == "2.15.0" and "no SASS for sm_61" in r["reason"] for r in d["rejected"])


def test_cli_gtx1080_allow_cpu() -> None:
    d = wheelfit_plan("torch", "--allow-cpu", "--target", f"cuda=6.1,driver={D580},python=3.12")
    assert (d["torch_version"], d["variant"]) == ("2.15.0", "cpu")
    assert d["packages"][0]["requirement"] == "torch==2.15.0+cpu"
    assert any("--allow-cpu" in w for w in d["warnings"])


def test_cli_sysroot_rtx5090_on_r570(tmp_path: Path) -> None:
    root = tmp_path / "root"
    shutil.copytree(MACHINES / "nvidia-rtx5090" / "root", root, symlinks=True)
    # The host Python decides which releases have wheels; 2.11 has cp310-cp314.
    if not (3, 10) <= sys.version_info[:2] <= (3, 14):
        pytest.skip("the 2.11 answer assumes a host Python 3.10-3.14")
    d = wheelfit_plan("torch", "--sysroot", str(root))
    assert (d["torch_version"], d["variant"]) == ("2.11.0", "cu128")
