"""`wheelfit plan` as a user runs it: offline with no network at all, a user's --kb, --target, errors."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.support.inprocess import wheelfit_in_process
from wheelfit.kb.matrix import load_knowledge

from ..conftest import MACHINES, ROOT, hermetic_env


def plan(*args: str, prefix: tuple[str, ...] = (), **env: str) -> subprocess.CompletedProcess[str]:
    """``wheelfit plan --offline ARGS``: the knowledge base's decisions (no index page is cached here); in this
    process unless a ``prefix`` command (``unshare -n``) is to run it."""
    if not prefix:
        return wheelfit_in_process(["plan", "--offline", *args], hermetic_env(**env))
    return subprocess.run(
        [*prefix, sys.executable, "-m", "wheelfit", "plan", "--offline", *args],
        capture_output=True, text=True, env=hermetic_env(**env), timeout=120,
    )


def test_offline_plan_works_without_any_network() -> None:
    unshare = shutil.which("unshare")
    if unshare is None or subprocess.run([unshare, "-n", "true"], capture_output=True).returncode != 0:
        pytest.skip("cannot create a network namespace here (needs util-linux unshare and root)")
    r = plan("torch", "--json", "--target", "cuda=6.1,driver=580.95.05", prefix=(unshare, "-n"))
    assert r.returncode == 0, r.stderr
    d = json.loads(r.stdout)
    assert (d["torch_version"], d["variant"]) == ("2.14.1", "cu126")
    assert any("no build with kernels for sm_61" in reason for reason in d["reasons"])


def test_a_new_release_is_a_data_change(tmp_path: Path) -> None:
    data: dict[str, Any] = json.loads((ROOT / "src/wheelfit/kb/data/pytorch.json").read_text())
    new = json.loads(json.dumps(data["releases"]["2.15"]))
    new["versions"] = ["2.16.0"]
    new["companions"] = {"2.16.0": next(iter(new["companions"].values()))}
    new.pop("python_tags_by_version", None)
    data["releases"]["2.16"] = new
    kb = tmp_path / "kb.json"
    kb.write_text(json.dumps(data))
    assert load_knowledge(kb).releases_newest_first()[0].name == "2.16"
    r = plan("--json", "--kb", str(kb), "--target", "cuda=9.0,driver=595.71.05,python=3.12")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["torch_version"] == "2.16.0"


def test_broken_kb_file_is_one_line(tmp_path: Path) -> None:
    kb = tmp_path / "kb.json"
    kb.write_text('{"schema_version": "9.0"}')
    r = plan("--kb", str(kb), "--target", "cuda=9.0")
    assert r.returncode == 2  # a file the user named: a usage error, as a requirements file
    assert len(r.stderr.strip().splitlines()) == 1 and "schema" in r.stderr and "Traceback" not in r.stderr


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("cuda=sm61", "compute capabilities look like 8.6"),
        ("os=beos", "use linux, windows or macos"),
        ("gpu=8.6", "use key=value with keys"),
        ("xpu=10de:2684", "an Intel PCI id looks like 8086:e20b"),
        ("missing-file.json", "no such file"),
    ],
)
def test_bad_target_is_one_line(spec: str, message: str) -> None:
    r = plan("--target", spec)
    assert r.returncode == 2, r.stdout
    assert message in r.stderr and len(r.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize("requirement", ["torch>=", "torch[", "torch==2.9.*; python_version >"])
def test_unreadable_requirement_is_one_line(requirement: str) -> None:
    """packaging's parse errors draw the input with a caret under the fault; the message keeps only its reason."""
    r = plan(requirement, "--target", "cuda=8.6")
    assert r.returncode == 2, r.stdout
    assert f"cannot read the requirement {requirement!r}" in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1, r.stderr


def test_target_from_a_saved_report_equals_detecting_that_machine(tmp_path: Path) -> None:
    root = MACHINES / "amd-8x-mi300x" / "root"
    done = wheelfit_in_process(["detect", "--json", "--sysroot", str(root)], hermetic_env())
    assert done.returncode == 0, done.stderr
    detected = done.stdout
    saved = tmp_path / "mi300x.json"
    saved.write_text(detected)
    via_target = plan("--json", "--target", str(saved))
    via_sysroot = plan("--json", "--sysroot", str(root))
    assert via_target.returncode == via_sysroot.returncode == 0
    assert json.loads(via_target.stdout) == json.loads(via_sysroot.stdout)
    assert json.loads(via_target.stdout)["variant"].startswith("rocm")


def test_override_variables_steer_the_plan() -> None:
    r = plan("--json", "--target", "os=linux", NV_VARIANT_PROVIDER_FORCE_SM_ARCH="6.1",
             UV_CUDA_DRIVER_VERSION="580.95.05")
    assert r.returncode == 0, r.stderr
    d = json.loads(r.stdout)
    assert d["variant"] == "cu126"
    assert any("NV_VARIANT_PROVIDER_FORCE_SM_ARCH=6.1 overrides detection" in w for w in d["warnings"])


@pytest.mark.parametrize(
    ("args", "variables", "message"),
    [
        (("--target", "cuda=8.6,driver=abc"), {}, "--target driver=abc: an NVIDIA driver version looks like"),
        (("--target", "cuda=8.6"), {"UV_CUDA_DRIVER_VERSION": "latest"}, "UV_CUDA_DRIVER_VERSION=latest"),
        (
            ("--target", "cuda=8.6"),
            {"NV_VARIANT_PROVIDER_FORCE_CUDA_DRIVER_VERSION": "twelve"},
            "a CUDA driver version looks like 12.8",
        ),
    ],
)
def test_a_driver_that_is_not_a_version_is_one_line(
    args: tuple[str, ...], variables: dict[str, str], message: str
) -> None:
    r = wheelfit_in_process(["plan", *args], hermetic_env(**variables))
    assert r.returncode == 2, r.stdout
    assert message in r.stderr and len(r.stderr.strip().splitlines()) == 1


def test_a_forced_cuda_driver_version_is_read_as_the_variant_provider_reads_it() -> None:
    """``13`` is 13.0 and ``12.6.3`` is 12.6 for the NVIDIA variant provider; the planner agrees."""
    bare = plan("--json", "--target", "cuda=8.6", NV_VARIANT_PROVIDER_FORCE_CUDA_DRIVER_VERSION="13")
    dotted = plan("--json", "--target", "cuda=8.6", NV_VARIANT_PROVIDER_FORCE_CUDA_DRIVER_VERSION="13.0")
    prefixed = plan("--json", "--target", "cuda=8.6", NV_VARIANT_PROVIDER_FORCE_CUDA_DRIVER_VERSION="v13")
    assert bare.returncode == dotted.returncode == prefixed.returncode == 0, bare.stderr + dotted.stderr
    assert json.loads(bare.stdout)["variant"] == json.loads(dotted.stdout)["variant"]
    assert json.loads(prefixed.stdout)["variant"] == json.loads(dotted.stdout)["variant"]
    patch = plan("--json", "--target", "cuda=8.6", NV_VARIANT_PROVIDER_FORCE_CUDA_DRIVER_VERSION="12.6.3")
    assert patch.returncode == 0, patch.stderr
    assert json.loads(patch.stdout)["variant"] == json.loads(
        plan("--json", "--target", "cuda=8.6", NV_VARIANT_PROVIDER_FORCE_CUDA_DRIVER_VERSION="12.6").stdout
    )["variant"]


@pytest.mark.parametrize(
    ("body", "says"),
    [
        pytest.param(b'{"schema_version": "1.1", "updated": ' + b"9" * 5000 + b"}", "digits", id="huge-int"),
        pytest.param(b'{"schema_version": NaN}', "NaN", id="nan"),
        pytest.param(b"[" * 100_000 + b"]" * 100_000, "nested", id="deep"),
        pytest.param(b'{"schema_version": "1.1", "schema_version": "1.0"}', "schema_version", id="duplicate-key"),
        pytest.param(b'{"schema_version": "\xff"}', "UTF-8", id="not-utf8"),
        pytest.param(b'{"schema_version": "1.1", "releases": {"2.9": []}}', "kb.json", id="absurd-shape"),
    ],
)
def test_a_hostile_kb_file_is_one_line_naming_it(tmp_path: Path, body: bytes, says: str) -> None:
    kb = tmp_path / "kb.json"
    kb.write_bytes(body)
    r = plan("--kb", str(kb), "--target", "cuda=9.0")
    lines = r.stderr.strip().splitlines()
    assert r.returncode == 2 and len(lines) == 1, r.stderr  # the user's own file: usage (2)
    assert lines[0].startswith(f"wheelfit: error: {kb}: ") and says in lines[0], lines[0]
