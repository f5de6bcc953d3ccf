"""The pip backend, end to end: same index, same guarantees as uv."""

from __future__ import annotations

import subprocess
from pathlib import Path

from .conftest import Index, installed, make_venv, run_wheelfit


def test_pip_installs_the_planned_variant_and_never_the_squatted_versions(
    index: Index, env: dict[str, str], tmp_path: Path
) -> None:
    python = make_venv(tmp_path / "venv")  # no pip inside: wheelfit drives its own pip with --python
    args = ["install", "torch", "torchvision", "--installer", "pip", "--target", "cuda=6.1,driver=580.95.05"]
    args += ["--python", str(python), "--pytorch-index", index.pytorch, "--index-url", index.default]
    done = run_wheelfit(args, env)
    assert done.returncode == 0, done.stderr
    have = installed(python, env)
    assert (have["torch"], have["torchvision"], have["triton"]) == ("2.14.1+cu126", "0.29.1+cu126", "3.5.1")
    script = "import torch; print(torch.__version__, torch.version.cuda)"
    out = subprocess.run([str(python), "-c", script], capture_output=True, text=True, env=env, check=True)
    assert out.stdout.split() == ["2.14.1+cu126", "12.6"]
    assert "verified" in done.stdout
