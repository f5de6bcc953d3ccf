"""``wheelfit doctor``: the diagnosis and the one command that fixes it, for each kind of trouble (issue 31).

Real venvs holding fake torches (``tests/support/wheels.make_torch_like``: ``torch.version`` and, where asked,
``torch.cuda`` answer as the real build's would), installed by real uv; machines are ``--target`` specs or the
recorded sysroot trees. The command runs in this process (``wheelfit.cli.app.run``); its child, which imports
torch, is the venv's real interpreter. Every JSON answer is checked against the shipped schema.
"""

from __future__ import annotations

import json
import os
import subprocess
import warnings
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from tests.conftest import MACHINES, ROOT, hermetic_env
from tests.support.wheels import make_torch_like, make_wheel
from wheelfit.install.uv import find_uv

from .conftest import Index, make_venv, tree

GTX_1080 = "cuda=6.1,driver=580.95.05"
#: The R470 branch (CUDA 11.4): below the 525.60.13 every CUDA 12.x build needs (NVIDIA's minor-version
#: compatibility table).
OLD_DRIVER = "cuda=8.6,driver=470.57.02"
SCHEMA = json.loads((ROOT / "src/wheelfit/schemas/doctor.schema.json").read_text(encoding="utf-8"))
Draft202012Validator.check_schema(SCHEMA)

Maker = Callable[[Path], Path]
TORCH_CU126 = partial(make_torch_like, version="2.9.0", variant="cu126", requires=["triton==3.5.0"])
VISION_CU126 = partial(make_wheel, name="torchvision", version="0.24.0+cu126", requires=["torch==2.9.0"])
TRITON = partial(make_wheel, name="triton", version="3.5.0")


@pytest.fixture(scope="module")
def run_cli() -> Callable[[list[str]], int]:
    with warnings.catch_warnings():  # typer 0.25 trips a click deprecation warning when imported under pytest
        warnings.simplefilter("ignore", DeprecationWarning)
        from wheelfit.cli.app import run
    return run


class Doctor:
    def __init__(
        self, run: Callable[[list[str]], int], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
    ) -> None:
        self.run, self.monkeypatch, self.capsys = run, monkeypatch, capsys

    def __call__(self, args: list[str], **env: str) -> tuple[int, str]:
        with self.monkeypatch.context() as m:
            for name in list(os.environ):
                m.delenv(name)
            for name, value in {**hermetic_env(WHEELFIT_OFFLINE="1"), **env}.items():
                m.setenv(name, value)
            code = self.run(["doctor", *args])
        out = self.capsys.readouterr()
        return code, out.out + out.err

    def json(self, args: list[str], **env: str) -> dict[str, Any]:
        code, out = self([*args, "--json"], **env)
        data = json.loads(out)
        Draft202012Validator(SCHEMA).validate(data)
        assert code == (0 if data["healthy"] else 1), out
        assert isinstance(data, dict)
        return data


@pytest.fixture
def doctor(
    run_cli: Callable[[list[str]], int], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> Doctor:
    return Doctor(run_cli, monkeypatch, capsys)


def _venv(tmp_path: Path, *makers: Maker) -> Path:
    """A fresh venv with ``makers``' wheels installed by uv (no index: only these files)."""
    python = make_venv(tmp_path / "venv")
    wheels = [str(make(tmp_path / "wheels")) for make in makers]
    if wheels:
        argv = [find_uv(), "pip", "install", "--python", str(python), "--no-index", "--no-deps", *wheels]
        done = subprocess.run(argv, capture_output=True, text=True, env=hermetic_env(), timeout=120, check=False)
        assert done.returncode == 0, done.stderr
    return python


def _issues(data: dict[str, Any]) -> list[str]:
    return [f["issue"] for f in data["findings"]]


def _fix(data: dict[str, Any], issue: str) -> str:
    finding = next(f for f in data["findings"] if f["issue"] == issue)
    return str(finding["fixes"][0]["command"])


def test_a_cpu_build_on_a_gpu_machine_gets_the_gpu_build_of_its_version(tmp_path: Path, doctor: Doctor) -> None:
    cpu = partial(make_torch_like, version="2.9.0", variant="cpu")
    vision = partial(make_wheel, name="torchvision", version="0.24.0+cpu", requires=["torch==2.9.0"])
    python = _venv(tmp_path, cpu, vision)
    before = tree(tmp_path / "venv")
    code, out = doctor(["--python", str(python), "--target", GTX_1080])
    assert code == 1
    text = " ".join(out.split())  # wrapped at 80 columns
    assert "torch is a CPU build: it cannot use this machine's GPU; torch 2.9.0+cu126 can." in text
    assert "sm_61" in text
    assert f"fix: wheelfit install torch==2.9.0+cu126 torchvision --python {python} --target {GTX_1080}" in text
    data = doctor.json(["--python", str(python), "--target", GTX_1080])
    assert _issues(data) == ["cpu-build-on-gpu"]
    fix = data["findings"][0]["fixes"][0]
    assert (fix["kind"], fix["requirements"]) == ("install", ["torch==2.9.0+cu126", "torchvision"])
    assert data["fix_plan"]["variant"] == "cu126"
    assert tree(tmp_path / "venv") == before  # the doctor changes nothing


def test_a_build_without_kernels_for_the_gpu_names_the_gpu_and_the_arch(tmp_path: Path, doctor: Doctor) -> None:
    # PyPI's torch 2.9.0: a CUDA 12.8 build with SASS for sm_70-sm_120 (pytorch/pytorch .ci/manywheel/build_cuda.sh)
    python = _venv(tmp_path, partial(make_torch_like, version="2.9.0", variant="cu128", local=False))
    data = doctor.json(["--python", str(python), "--target", GTX_1080])
    assert _issues(data) == ["no-kernels"]
    finding = data["findings"][0]
    assert "no kernel image is available" in finding["summary"] and "torch 2.9.0+cu126 has" in finding["summary"]
    assert "no kernels for sm_61 (has sm_70-sm_120" in finding["evidence"]
    assert _fix(data, "no-kernels").startswith("wheelfit install torch==2.9.0+cu126 --python ")


def test_a_driver_too_old_names_the_driver_and_the_build_that_runs_on_it(tmp_path: Path, doctor: Doctor) -> None:
    python = _venv(tmp_path, partial(make_torch_like, version="2.9.0", variant="cu128"))
    data = doctor.json(["--python", str(python), "--target", OLD_DRIVER])
    assert _issues(data) == ["driver-too-old"]
    finding = data["findings"][0]
    assert "470.57.02 is below 525.60.13" in finding["evidence"]
    install, driver = finding["fixes"]
    # No torch 2.9 build runs on R470: the newest torch whose CUDA 11.8 build does (CUDA 11.8: driver >= 450.80.02)
    assert install["requirements"][0].startswith("torch==") and install["requirements"][0].endswith("+cu118")
    assert install["requirements"][0].partition("==")[2] in finding["summary"]
    assert (driver["kind"], driver["name"]) == ("driver", "525.60.13")
    assert driver["command"] == "update the NVIDIA driver to 525.60.13 or newer"


def test_companions_of_another_build_or_version_are_named(tmp_path: Path, doctor: Doctor) -> None:
    vision = partial(make_wheel, name="torchvision", version="0.24.0+cpu", requires=["torch==2.9.0"])
    triton = partial(make_wheel, name="triton", version="3.4.0")
    python = _venv(tmp_path, TORCH_CU126, vision, triton)
    data = doctor.json(["--python", str(python), "--target", GTX_1080])
    assert _issues(data) == ["companion", "triton"]
    assert "a CPU build, torch is cu126" in data["findings"][0]["evidence"]
    assert data["findings"][1]["evidence"] == "torch requires triton==3.5.0"
    assert data["findings"][0]["fixes"][0]["requirements"] == ["torch==2.9.0+cu126", "torchvision"]


def test_a_rocm_build_without_the_gfx_says_whether_an_override_would_run_it(tmp_path: Path, doctor: Doctor) -> None:
    python = _venv(tmp_path, partial(make_torch_like, version="2.9.0", variant="rocm6.4"))
    data = doctor.json(["--python", str(python), "--target", "rocm=gfx1031"])
    assert _issues(data) == ["no-kernels"]
    evidence = data["findings"][0]["evidence"]
    assert "no kernels for gfx1031" in evidence
    assert "HSA_OVERRIDE_GFX_VERSION=10.3.0 would run gfx1030's kernels on this gfx1031" in evidence


def test_an_xpu_build_on_an_intel_gpu_that_is_not_xe(tmp_path: Path, doctor: Doctor) -> None:
    python = _venv(tmp_path, partial(make_torch_like, version="2.9.0", variant="xpu"))
    data = doctor.json(["--python", str(python), "--sysroot", str(MACHINES / "intel-uhd630" / "root")])
    assert _issues(data) == ["xpu-not-xe"]
    assert "not an Intel Xe GPU" in data["findings"][0]["summary"]
    assert data["findings"][0]["fixes"][0]["requirements"] == ["torch==2.9.0+cpu"]


def test_cuda_visible_devices_hiding_every_gpu(tmp_path: Path, doctor: Doctor) -> None:
    python = _venv(tmp_path, partial(make_torch_like, version="2.9.0", variant="cu126", arch_list=["sm_61"]))
    sysroot = str(MACHINES / "nvidia-gtx1080" / "root")
    data = doctor.json(["--python", str(python), "--sysroot", sysroot], CUDA_VISIBLE_DEVICES="-1")
    assert _issues(data) == ["gpus-hidden"]
    assert data["findings"][0]["evidence"] == "CUDA_VISIBLE_DEVICES='-1'"
    assert _fix(data, "gpus-hidden") == "unset CUDA_VISIBLE_DEVICES"
    seen = {"CUDA_VISIBLE_DEVICES": "0", "WHEELFIT_FAKE_TORCH_GPUS": "NVIDIA GeForce GTX 1080=6.1"}
    assert doctor.json(["--python", str(python), "--sysroot", sysroot], **seen)["healthy"]


def test_a_gpu_build_that_sees_no_gpu_says_what_torch_cuda_init_says(tmp_path: Path, doctor: Doctor) -> None:
    torch = partial(make_torch_like, version="2.9.0", variant="cu126", arch_list=["sm_61", "sm_70"])
    python = _venv(tmp_path, torch)
    sysroot = str(MACHINES / "nvidia-gtx1080" / "root")
    error = "The NVIDIA driver on your system is too old (found version 11040)."
    data = doctor.json(["--python", str(python), "--sysroot", sysroot], WHEELFIT_FAKE_TORCH_CUDA_ERROR=error)
    assert _issues(data) == ["no-gpu-visible"]
    assert "torch.cuda.is_available() is False" in data["findings"][0]["summary"]
    assert data["findings"][0]["evidence"] == f"RuntimeError: {error}"
    seen = doctor.json(["--python", str(python), "--sysroot", sysroot], WHEELFIT_FAKE_TORCH_GPUS="GTX 1080=6.1")
    assert seen["healthy"], seen["findings"]


def test_a_torch_on_pythonpath_shadowing_the_environments_own(tmp_path: Path, doctor: Doctor) -> None:
    python = _venv(tmp_path, TORCH_CU126, TRITON)
    other = tmp_path / "other"
    shadow = partial(make_torch_like, version="2.9.0", variant="cpu")
    done = subprocess.run(
        [find_uv(), "pip", "install", "--target", str(other), "--no-index", "--no-deps", str(shadow(tmp_path / "w"))],
        capture_output=True, text=True, env=hermetic_env(), timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    data = doctor.json(["--python", str(python), "--target", GTX_1080], PYTHONPATH=str(other))
    assert _issues(data)[0] == "shadowed"
    assert "outside this environment" in data["findings"][0]["summary"]
    assert str(other) in data["findings"][0]["evidence"] and "torch 2.9.0+cu126 in" in data["findings"][0]["evidence"]
    assert _fix(data, "shadowed") == f"take {other} off PYTHONPATH (or out of the .pth file that adds it)"
    assert "cpu-build-on-gpu" in _issues(data)  # the torch imported is judged too


def test_files_changed_since_install_are_found_and_reinstalled(tmp_path: Path, doctor: Doctor) -> None:
    python = _venv(tmp_path, TORCH_CU126, TRITON)
    init = next((tmp_path / "venv").glob("lib/python*/site-packages/torch/__init__.py"))
    init.write_text(init.read_text(encoding="utf-8") + "# patched\n", encoding="utf-8")
    data = doctor.json(["--python", str(python), "--target", GTX_1080])
    assert _issues(data) == ["files-changed"]
    assert _fix(data, "files-changed").endswith("--reinstall")
    assert data["findings"][0]["fixes"][0]["requirements"] == ["torch"]


def test_extensions_built_for_another_torch(tmp_path: Path, doctor: Doctor) -> None:
    # flash-attn's release wheels carry their build in the label (Dao-AILab/flash-attention publish.yml);
    # xformers pins one exact torch (facebookresearch/xformers setup.py).
    flash = partial(make_wheel, name="flash-attn", version="2.7.4.post1+cu12torch2.6cxx11abiFALSE")
    xformers = partial(make_wheel, name="xformers", version="0.0.32", requires=["torch==2.8.0"])
    scatter = partial(make_wheel, name="torch-scatter", version="2.1.2+pt29cu126")
    python = _venv(tmp_path, TORCH_CU126, TRITON, flash, xformers, scatter)
    data = doctor.json(["--python", str(python), "--target", GTX_1080])
    assert _issues(data) == ["extension", "extension"]
    assert data["findings"][0]["evidence"] == "flash-attn: built for torch 2.6, torch is 2.9"
    assert data["findings"][1]["evidence"] == "xformers: requires torch==2.8.0, torch is 2.9.0"


def test_all_good_says_so_with_the_evidence_and_exits_0(tmp_path: Path, doctor: Doctor) -> None:
    python = _venv(tmp_path, TORCH_CU126, VISION_CU126, TRITON)
    code, out = doctor(["--python", str(python), "--target", GTX_1080])
    assert code == 0, out
    text = " ".join(out.split())
    assert "All good torch 2.9.0+cu126 (CUDA 12.6) runs here." in text
    assert "the build has kernels for it" in text and "torchvision 0.24.0+cu126" in text
    data = doctor.json(["--python", str(python), "--target", GTX_1080])
    assert data["findings"] == [] and data["good"]


def test_no_torch_is_a_finding_and_a_bad_target_a_usage_error(tmp_path: Path, doctor: Doctor) -> None:
    python = _venv(tmp_path)
    data = doctor.json(["--python", str(python), "--target", GTX_1080])
    assert _issues(data) == ["not-installed"]
    assert _fix(data, "not-installed").startswith("wheelfit install torch --python")
    code, out = doctor(["--python", str(python), "--target", "cuda=banana"])
    assert code == 2 and out.count("\n") == 1, out


def test_the_fix_command_fixes_it(tmp_path: Path, doctor: Doctor, index: Index, env: dict[str, str]) -> None:
    """On a loopback PyTorch index: a CPU torch 2.15 on a GTX 1080; 2.15 has no build for sm_61 (no cu126), so
    the fix is the newest torch that has one; run as printed, the doctor then finds nothing."""
    cpu = next((index.root / "pytorch/cpu/torch").glob("*.whl"))
    python = make_venv(tmp_path / "venv")
    subprocess.run(
        [find_uv(), "pip", "install", "--python", str(python), "--no-index", "--no-deps", str(cpu)],
        check=True, capture_output=True, env=hermetic_env(),
    )  # fmt: skip
    online = {**env, "WHEELFIT_OFFLINE": ""}
    args = ["--python", str(python), "--target", GTX_1080, "--pytorch-index", index.pytorch]
    data = doctor.json(args, **online)
    assert _issues(data) == ["cpu-build-on-gpu"]
    command = _fix(data, "cpu-build-on-gpu").split()
    assert command[:3] == ["wheelfit", "install", "torch==2.14.1+cu126"]
    assert command[-2:] == ["--pytorch-index", index.pytorch]
    with pytest.MonkeyPatch.context() as m:
        for name in list(os.environ):
            m.delenv(name)
        for name, value in online.items():
            m.setenv(name, value)
        done = doctor.run([*command[1:], "--index-url", index.default])
    assert done == 0, doctor.capsys.readouterr()
    doctor.capsys.readouterr()
    after = doctor.json(args, **online)
    assert after["healthy"], after["findings"]
    assert after["torch"]["version"] == "2.14.1+cu126"


def test_two_torch_installs_in_one_environment(tmp_path: Path, doctor: Doctor) -> None:
    """A torch dist-info left behind beside the installed one (an interrupted or hand-made install)."""
    python = _venv(tmp_path, TORCH_CU126, TRITON)
    site = next((tmp_path / "venv").glob("lib/python*/site-packages"))
    stale = site / "torch-2.8.0+cpu.dist-info"
    stale.mkdir()
    (stale / "METADATA").write_text("Metadata-Version: 2.1\nName: torch\nVersion: 2.8.0+cpu\n", encoding="utf-8")
    data = doctor.json(["--python", str(python), "--target", GTX_1080])
    assert _issues(data) == ["shadowed"]
    assert data["findings"][0]["evidence"].startswith("2 torch installs: ")
    assert "torch 2.8.0+cpu in" in data["findings"][0]["evidence"]
    assert _fix(data, "shadowed").endswith("--reinstall")


def test_a_user_site_torch_in_front_of_the_environments_is_uninstalled_first() -> None:
    """An interpreter that is not a venv reads the user site before its own site-packages (site.py): the copy
    there is the one imported. Pure: a venv cannot show it (it reads the user site after its own, if at all)."""
    from wheelfit.doctor import FixKind, Issue, diagnose
    from wheelfit.install.verify import TorchFacts, TorchInstall, Verification

    user = "/home/me/.local/lib/python3.12/site-packages"
    facts = TorchFacts(
        "2.9.0+cpu", location=user, user_site=user,
        installs=(TorchInstall("2.9.0+cpu", user), TorchInstall("2.9.0+cu126", "/usr/lib/python3/dist-packages")),
    )  # fmt: skip
    found = diagnose(Verification(facts), None, plan=None, environ={}, install_dirs=["/usr/lib/python3/dist-packages"],
                     detected=False)  # fmt: skip
    (finding,) = found.findings
    assert finding.issue is Issue.SHADOWED and "the user site" in finding.summary
    assert [f.kind for f in finding.fixes] == [FixKind.UNINSTALL_FIRST]
    # the same copy behind the environment's own (a venv's order) is never imported: no finding
    behind = TorchFacts("2.9.0+cu126", location="/venv/lib/python3.12/site-packages", user_site=user,
                        installs=(TorchInstall("2.9.0+cu126", "/venv/lib/python3.12/site-packages"),
                                  TorchInstall("2.9.0+cpu", user)))  # fmt: skip
    assert diagnose(Verification(behind), None, plan=None, environ={},
                    install_dirs=["/venv/lib/python3.12/site-packages"], detected=False).healthy  # fmt: skip


def test_what_the_interpreter_says_is_checked_before_use() -> None:
    """The child's JSON is the user's interpreter talking: a value of the wrong type is dropped, never used."""
    from wheelfit.install.verify import TorchFacts

    facts = TorchFacts.from_dict({
        "version": ["2.9.0"], "cuda": {"x": 1}, "gpus": "GTX", "arch_list": [1, "sm_80", None],
        "companions": [{"name": 1, "version": "0.24.0"}, {"name": "torchvision", "version": "0.24.0", "url": 7},
                       "triton"],
        "installs": [{"version": "2.9.0", "path": 3}, {"version": "2.9.0", "path": "/site"}],
        "missing": "yes", "cxx11abi": "true", "requires": "torch", "location": True,
    })  # fmt: skip
    assert (facts.version, facts.cuda, facts.gpus, facts.arch_list) == ("", None, (), ("sm_80",))
    assert [(c.name, c.url) for c in facts.companions] == [("torchvision", None)]
    assert [i.path for i in facts.installs] == ["/site"]
    assert (facts.missing, facts.cxx11abi, facts.requires, facts.location) == (False, None, (), None)


def test_a_visibility_variable_of_this_shell_is_not_held_against_another_machine() -> None:
    """``--target rocm=gfx942`` from a shell with ``HIP_VISIBLE_DEVICES=-1``: the variable hides nothing there."""
    from wheelfit.doctor import Issue, diagnose
    from wheelfit.install.verify import TorchFacts, Verification
    from wheelfit.probe.target import load_target

    report = load_target("rocm=gfx942")
    facts = TorchFacts("2.9.0+rocm6.4", hip="6.4.43484-123eb5128")
    hidden = {"HIP_VISIBLE_DEVICES": "-1"}
    here = diagnose(Verification(facts), report, plan=None, environ=hidden, install_dirs=[], detected=True)
    there = diagnose(Verification(facts), report, plan=None, environ=hidden, install_dirs=[], detected=False)
    assert [f.issue for f in here.findings] == [Issue.GPUS_HIDDEN]
    assert there.healthy
