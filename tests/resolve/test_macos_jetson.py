"""Macs and Jetsons: the plan says what PyTorch publishes for them and why, with the public source.

An Intel Mac gets torch 2.2.2, the last macOS x86_64 build (pytorch/pytorch#114602; PyPI's torch 2.2.2 files are
cp38-cp312 ``none-macosx_10_9_x86_64``), and the plan says why nothing newer; a Mac whose macOS is too old for the
newest wheels or MPS lists the releases it turned down with the macOS each needs; ``--target os=macos`` claims no
macOS version; a Jetson's plan says PyTorch's index has no Jetson CUDA builds and where NVIDIA's wheels are.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.support.inprocess import wheelfit_in_process

from ..conftest import ROOT, hermetic_env

MACHINES = ROOT / "tests" / "machines"


def plan(*args: str, offline: bool = True) -> dict[str, Any]:
    done = wheelfit_in_process(["plan", *args, *(["--offline"] if offline else []), "--json"], hermetic_env())
    assert done.returncode == 0, done.stderr
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def on(machine: str, *reqs: str, offline: bool = True) -> dict[str, Any]:
    return plan(*(reqs or ("torch",)), "--sysroot", str(MACHINES / machine / "root"), offline=offline)


def text(p: dict[str, Any]) -> str:
    return " | ".join([*p["reasons"], *p["warnings"], *(r["reason"] for r in p["rejected"])])


def test_an_intel_mac_gets_the_last_macos_x86_64_build_and_why() -> None:
    p = on("apple-intel-mojave-skylake", "torch", "torchvision")
    assert (p["torch_version"], p["variant"], p["platform"]) == ("2.2.2", "cpu", "macos_x86_64")
    assert [x["requirement"] for x in p["packages"]] == ["torch==2.2.2", "torchvision==0.17.2"]  # no local label
    assert "last release built for macOS x86_64" in p["reasons"][0] and "pytorch/pytorch#114602" in p["reasons"][0]
    (newer,) = p["rejected"]
    assert (newer["version"], newer["variant"], newer["judge"]) == (">2.2.2", "*", "platform")
    assert "stopped publishing macOS x86_64 wheels after 2.2.2" in newer["reason"]
    # The same for a spec: an Intel Mac is os=macos,arch=x86_64.
    assert plan("torch", "--target", "os=macos,arch=x86_64")["torch_version"] == "2.2.2"


def test_a_monterey_m1_lists_the_newer_releases_it_turned_down_with_the_macos_each_needs() -> None:
    p = on("apple-m1-monterey")
    assert (p["torch_version"], p["variant"]) == ("2.11.0", "cpu")
    newer = {(r["version"], r["reason"]) for r in p["rejected"]}
    for version in ("2.15.0", "2.14.1", "2.13.0", "2.12.1"):
        assert (version, "its wheels need macOS >= 14.0, this Mac has 12.6") in newer
    assert "torch 2.15.0 and the other releases listed below do not install on macOS 12.6" in p["reasons"][0]


def test_a_ventura_mac_gets_mps_of_an_older_release_and_is_told_what_newer_ones_need(tmp_path: Path) -> None:
    """macOS 13.5: MPS needs 13.0 up to 2.8 and 14.0 from 2.9 (MPS-13, MPS-14); wheels need 14.0 from 2.12."""
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "wheelfit",
            "detect",
            "--json",
            "--sysroot",
            str(MACHINES / "apple-m1-monterey" / "root"),
        ],
        capture_output=True,
        text=True,
        env=hermetic_env(),
        timeout=120,
    )
    report = json.loads(done.stdout)
    report["platform"]["release"] = "13.5"
    saved = tmp_path / "ventura.json"
    saved.write_text(json.dumps(report), encoding="utf-8")
    p = plan("torch", "--target", str(saved))
    assert (p["torch_version"], p["variant"]) == ("2.8.0", "cpu")
    assert any("MPS needs macOS >= 13.0, this Mac has 13.5" in r for r in p["reasons"])
    rows = {(r["version"], r["reason"]) for r in p["rejected"]}
    assert ("2.15.0", "its wheels need macOS >= 14.0, this Mac has 13.5") in rows
    assert ("2.11.0", "MPS needs macOS >= 14.0, this Mac has 13.5") in rows
    assert ("2.9.1", "MPS needs macOS >= 14.0, this Mac has 13.5") in rows


def test_a_mac_target_without_a_version_claims_none_and_says_what_the_build_needs() -> None:
    p = plan("torch", "--target", "os=macos")
    assert (p["torch_version"], p["platform"]) == ("2.15.0", "macos_arm64")
    assert "this Mac has" not in text(p)
    assert any("macOS version is not known" in w and "torch 2.15.0 needs macOS >= 14.0" in w for w in p["warnings"])


def test_a_jetson_is_told_pytorch_has_no_builds_for_its_gpu_and_where_nvidias_are() -> None:
    p = on("nvidia-jetson-no-pci")
    assert p["variant"] == "cpu"
    (warning,) = [w for w in p["warnings"] if "PyTorch's index has no CUDA builds for Jetson" in w]
    assert "https://developer.download.nvidia.com/compute/redist/jp/" in warning
    # offline, the Jetson AI Lab index for its L4T release (R36: JetPack 6) cannot be read: said, and why
    assert any("no torch for this Jetson from https://pypi.jetson-ai-lab.io/jp6/cu126 (offline" in w
               for w in p["warnings"])  # fmt: skip
    assert not any("no GPU usable" in r for r in p["reasons"])  # there is a GPU; PyTorch's builds do not serve it


def test_an_arm_linux_box_without_tegra_is_not_a_jetson() -> None:
    p = on("cpu-graviton3")
    assert not any("Jetson" in w for w in p["warnings"]) and "no GPU usable" in p["reasons"][0]


def test_with_the_index_read_the_macs_get_the_same_answers(tmp_path: Path) -> None:
    """A local copy of the CPU index page (file names as PyPI and download.pytorch.org list them): the Intel Mac
    takes 2.2.2's macosx_10_9_x86_64 wheel, and the Monterey Mac is told the macOS the newer wheels need."""
    page = tmp_path / "whl" / "cpu" / "torch"
    page.mkdir(parents=True)
    py = f"cp{sys.version_info.major}{sys.version_info.minor}"  # the fixtures report this interpreter's Python
    for name in (
        f"torch-2.2.2-{py}-none-macosx_10_9_x86_64.whl",
        f"torch-2.2.2-{py}-none-macosx_11_0_arm64.whl",
        f"torch-2.11.0-{py}-none-macosx_11_0_arm64.whl",
        f"torch-2.15.0-{py}-{py}-macosx_14_0_arm64.whl",
        f"torch-2.15.0+cpu-{py}-{py}-manylinux_2_28_x86_64.whl",
    ):
        (page / name).write_bytes(b"not a real wheel: the plan reads names only")
    index = (tmp_path / "whl").as_uri()
    intel = on("apple-intel-mojave-skylake", "torch", "--pytorch-index", index, offline=False)
    assert intel["torch_version"] == "2.2.2"
    assert intel["packages"][0]["filename"] == f"torch-2.2.2-{py}-none-macosx_10_9_x86_64.whl"
    m1 = on("apple-m1-monterey", "torch", "--pytorch-index", index, offline=False)
    assert m1["torch_version"] == "2.11.0"
    (newest,) = [r for r in m1["rejected"] if r["version"] == "2.15.0"]
    assert newest["reason"].endswith("its wheels need macOS >= 14.0, this Mac has 12.6")
