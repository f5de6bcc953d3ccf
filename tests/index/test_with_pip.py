"""The loopback index and the test wheels are real: pip resolves and installs from them."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import hermetic_env
from tests.support import StartServer
from tests.support.wheels import make_torch_like, make_wheel, torch_version_attrs

SHOW = "import torch, demo; print(torch.__version__, torch.version.cuda, torch.version.hip, demo.__version__)"


@pytest.mark.parametrize("json", [True, False])
def test_pip_installs_a_torch_like_build_from_the_loopback_index(
    tmp_path: Path, index_server: StartServer, json: bool
) -> None:
    index = tmp_path / "idx" / "whl" / "cu126"
    make_torch_like(index, "2.8.0", "cu126", requires=["demo>=1.0"])
    make_torch_like(index, "2.9.0", "cu126")
    make_wheel(index, "demo", "1.0")
    make_wheel(index, "demo", "1.1", requires_python=">=99")  # pip must skip it via data-requires-python
    server = index_server(tmp_path / "idx", json=json)
    target = tmp_path / "target"
    pip = [sys.executable, "-m", "pip", "install", "--no-cache-dir", "--disable-pip-version-check", "-q"]
    subprocess.run(
        [*pip, "--target", str(target), "--index-url", server.index_url("whl/cu126"), "torch==2.8.0+cu126"],
        check=True,
        env=hermetic_env(),
        capture_output=True,
        timeout=120,
    )
    out = subprocess.run(
        [sys.executable, "-c", SHOW], env=hermetic_env(PYTHONPATH=str(target)), capture_output=True, text=True
    )
    assert out.stdout.split() == ["2.8.0+cu126", "12.6", "None", "1.0"], out.stderr
    accepts = {r.headers.get("accept", "") for r in server.requests_for("/torch/")}
    assert any("application/vnd.pypi.simple.v1+json" in a for a in accepts)  # pip negotiated like we do


def test_torch_version_attributes_follow_the_variant() -> None:
    assert torch_version_attrs("cu126") == {"cuda": "12.6", "hip": None, "xpu": None}
    assert torch_version_attrs("cu130")["cuda"] == "13.0"
    assert torch_version_attrs("cu118")["cuda"] == "11.8"
    hip = torch_version_attrs("rocm7.1")["hip"]
    assert hip is not None and hip.startswith("7.1.")
    assert torch_version_attrs("rocm6.2.4")["hip"] is not None
    assert torch_version_attrs("xpu")["xpu"] is not None and torch_version_attrs("cpu")["cuda"] is None
    with pytest.raises(ValueError, match="unknown"):
        torch_version_attrs("tpu")
