"""``wheelfit install`` on a GTX 1080 whose NVIDIA detector crashes (a nightly plugin, a real distribution on
``PYTHONPATH``): it installs the CPU build, which is all it can know to fit, and says which detector failed, that
the plan is for the CPU because of it, and how to plan for the GPU (issue 15)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.conftest import MACHINES
from tests.support.plugins import NVIDIA_NIGHTLY, install_plugins, plugin_wheel

from .conftest import Index, make_venv

GTX_1080 = MACHINES / "nvidia-gtx1080" / "root"


def run_wheelfit(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """A real process: the plugin is a distribution on its ``PYTHONPATH``, found as the interpreter starts."""
    argv = [sys.executable, "-m", "wheelfit", *args]
    return subprocess.run(argv, capture_output=True, text=True, env=env, timeout=120, check=False)


def test_install_says_the_nvidia_detector_failed_and_what_it_installed_instead(
    index: Index, env: dict[str, str], tmp_path: Path
) -> None:
    dist, version, source = NVIDIA_NIGHTLY
    site = install_plugins([plugin_wheel(tmp_path / "wheels", dist, version, "nvidia", source)], tmp_path / "site")
    env = {**env, "PYTHONPATH": str(site), "COLUMNS": "400"}
    python = make_venv(tmp_path / "venv")
    args = ["install", "torch", "--python", str(python), "--sysroot", str(GTX_1080), "--no-verify"]
    args += ["--pytorch-index", index.pytorch, "--index-url", index.default]

    done = run_wheelfit([*args, "--dry-run"], env)
    assert done.returncode == 0, done.stderr
    assert "Would install torch 2.15.0+cpu" in done.stdout, done.stdout
    assert (
        f"! the nvidia detector ({dist} {version}) crashed: RuntimeError: NVML symbol nvmlDeviceGetFoo not found; "
        "no NVIDIA GPU is known, so the plan is for what was detected: CPU\n"
        "  → to plan for an NVIDIA GPU, name it: --target cuda=<compute capability>,driver=<driver version>; "
        f"or fix or uninstall {dist} {version}, or skip it with --disable-provider nvidia\n"
    ) in done.stdout, done.stdout

    done = run_wheelfit([*args, "--json"], env)
    assert done.returncode == 0, done.stderr
    plan = json.loads(done.stdout)["plan"]
    assert plan["variant"] == "cpu"
    (failed,) = plan["detector_failures"]
    assert (failed["provider"], failed["distribution"], failed["version"], failed["kind"]) == (
        "nvidia", dist, version, "crash",
    )  # fmt: skip
    assert (failed["unknown"], failed["planned_for"]) == ("no NVIDIA GPU is known", "CPU")
