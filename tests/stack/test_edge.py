"""Edge machines (issue 32): a Jetson gets torch from the Jetson AI Lab index for its L4T release, never the SBSA
aarch64 builds meant for Grace servers; a GH200 (SBSA aarch64) gets the PyTorch index's aarch64 CUDA build. The
Jetson index is a loopback copy reached through ``WHEELFIT_MIRROR``; its file names are those the index serves
(``torch-2.8.0-cp310-cp310-linux_aarch64.whl`` under ``/jp6/cu126/``)."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.install.loopback import serve
from tests.support.wheels import make_wheel

from .conftest import PY

Cli = Callable[..., tuple[int, str, str]]
JETSON_ROOT = Path(__file__).parents[1] / "machines/nvidia-jetson-no-pci/root"
AARCH64 = f"{PY}-{PY}-linux_aarch64"


@pytest.fixture(scope="module")
def jetson_index(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    root = tmp_path_factory.mktemp("jetson")
    for name, versions in (("torch", ("2.7.0", "2.8.0")), ("torchvision", ("0.22.0", "0.23.0", "0.24.0"))):
        for version in versions:
            make_wheel(root / "jp6/cu126" / name, name, version, tag=AARCH64)
    with serve(root) as url:
        yield url


def test_a_jetson_gets_torch_from_the_index_of_its_l4t_release(cli: Cli, jetson_index: str) -> None:
    code, out, err = cli(["plan", "torch", "torchvision", "--sysroot", str(JETSON_ROOT), "--json"],
                         WHEELFIT_MIRROR=f"https://pypi.jetson-ai-lab.io={jetson_index}")  # fmt: skip
    assert code == 0, err
    plan = json.loads(out)
    assert (plan["torch_version"], plan["variant"]) == ("2.8.0", "cu126")
    assert plan["index_url"] == f"{jetson_index}/jp6/cu126"
    assert [p["requirement"] for p in plan["packages"]] == ["torch==2.8.0", "torchvision==0.23.0"]  # 2.8.0's pin
    assert plan["packages"][0]["filename"] == f"torch-2.8.0-{AARCH64}.whl" and plan["packages"][0]["sha256"]
    assert "L4T 36.4.7" in plan["reasons"][0] and "SBSA" in plan["reasons"][0]
    assert plan["gpu_fallback"] is None and plan["packages"][0]["confidence"] == "S"


def test_a_jetson_target_spec_plans_the_same_without_the_board(cli: Cli, jetson_index: str) -> None:
    code, out, err = cli(["plan", "torch", "--target", f"l4t=36.4,python={PY[2]}.{PY[3:]}", "--json"],
                         WHEELFIT_MIRROR=f"https://pypi.jetson-ai-lab.io={jetson_index}")  # fmt: skip
    assert code == 0, err
    assert json.loads(out)["index_url"] == f"{jetson_index}/jp6/cu126"


def test_a_jetson_whose_index_cannot_be_read_gets_the_cpu_build_and_is_told_why(cli: Cli) -> None:
    code, out, err = cli(["plan", "torch", "--target", "l4t=36.4", "--offline"])
    assert code == 0, err
    said = " ".join(out.split())
    assert said.startswith("torch ") and "+cpu" in said.split()[1]
    assert "JetPack 6 (L4T R36), CUDA 12.6: no torch for this Jetson from https://pypi.jetson-ai-lab.io/jp6/cu126 " \
           "(offline: no cached copy" in said and "this is the CPU build" in said  # fmt: skip


def test_an_older_l4t_release_without_an_index_gets_the_cpu_build_with_nvidia_s_page(cli: Cli) -> None:
    code, out, _ = cli(["plan", "torch", "--target", "l4t=35.6", "--offline"])
    assert code == 0 and "developer.download.nvidia.com/compute/redist/jp/" in " ".join(out.split())


def test_a_grace_server_gets_the_pytorch_index_s_aarch64_cuda_build(cli: Cli) -> None:
    code, out, err = cli(["plan", "torch", "--target", "cuda=9.0,driver=580.95.05,arch=aarch64", "--offline",
                          "--json"])  # fmt: skip
    assert code == 0, err
    plan = json.loads(out)
    assert plan["platform"] == "linux_aarch64" and plan["variant"].startswith("cu")
    assert plan["index_url"].endswith(f"/whl/{plan['variant']}")  # the PyTorch index's (the tests' unreachable one)


def test_l4t_is_for_an_aarch64_machine_without_a_discrete_gpu(cli: Cli) -> None:
    for spec in ("l4t=36.4,arch=x86_64", "l4t=36.4,cuda=8.7", "l4t=R36"):
        code, _, err = cli(["plan", "torch", "--target", spec, "--offline"])
        assert code == 2 and "--target l4t=" in err, (spec, err)
