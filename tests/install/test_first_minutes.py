"""What a person sees first (issue 33): a plan short enough to read, everything behind ``--explain``, and a GPU
target that falls back to the CPU build made visible everywhere, or refused with ``--require-gpu``.

In process (``wheelfit.cli.app.run``), against the loopback PyTorch index of these tests or offline.
"""

from __future__ import annotations

import json
import os
import warnings
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import hermetic_env

from .conftest import Index, make_venv, tree

GTX_1080 = "cuda=6.1,driver=580.95.05"
#: torch 2.15 has no CUDA 12.6 build, the last with Pascal kernels (pytorch/pytorch RFC #190385): a GTX 1080
#: asking for it gets the CPU build.
TOO_NEW = "torch>=2.15"


@pytest.fixture(scope="module")
def run_cli() -> Callable[[list[str]], int]:
    with warnings.catch_warnings():  # typer 0.25 trips a click deprecation warning when imported under pytest
        warnings.simplefilter("ignore", DeprecationWarning)
        from wheelfit.cli.app import run
    return run


@pytest.fixture
def cli(
    run_cli: Callable[[list[str]], int], capsys: pytest.CaptureFixture[str]
) -> Callable[..., tuple[int, str, str]]:
    def call(args: list[str], **env: str) -> tuple[int, str, str]:
        with pytest.MonkeyPatch.context() as m:
            for name in list(os.environ):
                m.delenv(name)
            for name, value in {**hermetic_env(COLUMNS="80"), **env}.items():
                m.setenv(name, value)
            code = run_cli(args)
        out = capsys.readouterr()
        return code, out.out, out.err

    return call


def test_a_plan_fits_in_twelve_lines_and_explain_keeps_everything(
    cli: Callable[..., tuple[int, str, str]], index: Index, caches: dict[str, str]
) -> None:
    args = ["plan", "torch", "--target", GTX_1080, "--pytorch-index", index.pytorch]
    code, out, err = cli(args, **caches)
    assert code == 0, err
    lines = out.splitlines()
    assert len(lines) <= 12 and all(len(line) <= 80 for line in lines), out
    assert lines[0] == f"torch 2.14.1+cu126  from {index.pytorch}/cu126"
    said = " ".join(out.split())
    assert "Not chosen 3 not on the index (cu132, cu134); 2 without kernels for this GPU (cu130): `--explain`" in said
    assert f"Install wheelfit install torch --target {GTX_1080} --pytorch-index {index.pytorch}" in said
    code, full, err = cli([*args, "--explain"], **caches)
    assert code == 0, err
    assert "why not" in full and "cu130: no SASS for sm_61 (has sm_75-sm_120)" in full


def test_uncertain_facts_are_one_line_unless_explained(cli: Callable[..., tuple[int, str, str]]) -> None:
    args = ["plan", "torch", "--offline", "--target", "rocm=gfx942"]
    code, out, _ = cli(args)
    assert code == 0
    (line,) = [ln for ln in out.splitlines() if ln.startswith("Uncertain")]
    assert line.startswith("Uncertain  rests on ") and line.endswith("`--explain`")
    code, full, _ = cli([*args, "--explain"])
    assert "this plan rests on facts below primary or measured:" in full


def test_a_gpu_target_that_falls_back_to_the_cpu_build_says_so_everywhere(
    cli: Callable[..., tuple[int, str, str]], tmp_path: Path
) -> None:
    code, out, _ = cli(["plan", TOO_NEW, "--offline", "--target", GTX_1080, "--json"])
    assert code == 0
    why = json.loads(out)["gpu_fallback"]
    assert why.startswith("no PyTorch build matching torch>=2.15 has kernels for target GPU sm_61")

    code, out, err = cli(["env", TOO_NEW, "--offline", "--matrix", "--target", GTX_1080, "--target", "cuda=8.6"])
    assert code == 0, err
    fallback, fine = json.loads(out)["include"]
    assert (fallback["name"], fallback["fallback"], fallback["fallback-reason"]) == ("cpu", "cpu", why)
    assert (fine["fallback"], fine["fallback-reason"]) == ("", "")

    gh = {"GITHUB_OUTPUT": str(tmp_path / "out"), "GITHUB_STEP_SUMMARY": str(tmp_path / "summary")}
    code, out, _ = cli(["env", TOO_NEW, "--offline", "--format", "github", "--target", GTX_1080], **gh)
    assert code == 0
    assert any(ln.startswith("::warning title=") and ln.endswith(why) for ln in out.splitlines()), out


@pytest.mark.parametrize("command", [["plan"], ["env", "--matrix"], ["lock", "-o", "pylock.toml"], ["install"]])
def test_require_gpu_refuses_the_cpu_fallback_in_one_line(
    command: list[str], cli: Callable[..., tuple[int, str, str]], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    venv = {"VIRTUAL_ENV": str(make_venv(tmp_path / "venv").parent.parent)} if command == ["install"] else {}
    before = tree(tmp_path)
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    args = [command[0], TOO_NEW, *command[1:], "--target", GTX_1080, "--require-gpu"]
    code, out, err = cli(args, WHEELFIT_OFFLINE="1", **venv)
    assert code == 1, out + err
    assert err.splitlines() == [
        "wheelfit: error: no PyTorch build matching torch>=2.15 has kernels for target GPU sm_61 (compute capability "
        "6.1), and a GPU build is required"
    ], err
    assert list(work.iterdir()) == [] and tree(tmp_path) == before  # nothing written, nothing installed
    code, _, err = cli([command[0], TOO_NEW, *command[1:], "--target", GTX_1080], WHEELFIT_OFFLINE="1",
                       WHEELFIT_REQUIRE_GPU="1", **venv)  # fmt: skip
    assert code == 1 and "a GPU build is required" in err


def _with_cpu_torch(index: Index, tmp_path: Path, variant: str = "cpu", version: str = "2.15.0") -> Path:
    """A venv holding the index's torch of ``variant`` (its CPU torch 2.15.0 by default: what PyPI's CPU-only wheel
    or an earlier mistake leaves), installed by uv from the file."""
    import subprocess

    from wheelfit.install.uv import find_uv

    python = make_venv(tmp_path / "venv")
    cpu = index.root / f"pytorch/{variant}/torch/torch-{version}+{variant}-py3-none-any.whl"
    argv = [find_uv(), "pip", "install", "--python", str(python), "--no-index", "--no-deps", str(cpu)]
    subprocess.run(argv, check=True, capture_output=True, env=hermetic_env())
    return python


def test_an_installed_cpu_torch_on_a_gpu_machine_is_replaced_not_called_the_users_choice(
    cli: Callable[..., tuple[int, str, str]], index: Index, caches: dict[str, str], tmp_path: Path
) -> None:
    python = _with_cpu_torch(index, tmp_path)
    args = ["install", "torch", "--python", str(python), "--target", GTX_1080, "--dry-run", "--json"]
    code, out, err = cli([*args, "--pytorch-index", index.pytorch, "--index-url", index.default], **caches)
    assert code == 0, err
    data = json.loads(out)
    assert data["plan"]["variant"] == "cu126", data["plan"]
    said = " ".join([*data["plan"]["reasons"], *data.get("notes", []), *data["plan"]["warnings"], out])
    assert "chosen by the user" not in said
    assert "a CPU build on a machine with a GPU; replaced by this machine's build" in said


def test_an_index_url_naming_one_build_over_an_installed_other_is_not_called_two_choices(
    cli: Callable[..., tuple[int, str, str]], index: Index, caches: dict[str, str], tmp_path: Path
) -> None:
    """2.14.1+cu130 installed, and runs on an RTX 3090; the user asks for the cu126 build by its index URL."""
    python = _with_cpu_torch(index, tmp_path, "cu130", "2.14.1")
    args = ["install", "torch", "--python", str(python), "--target", "cuda=8.6,driver=580.95.05", "--dry-run", "--json"]
    urls = ["--index-url", f"{index.pytorch}/cu126", "--extra-index-url", index.default]
    code, out, err = cli([*args, *urls, "--pytorch-index", index.pytorch], **caches)
    assert code == 0, err
    assert "ask for one" not in out + err
    data = json.loads(out)
    assert data["plan"]["variant"] == "cu126"
    assert "torch 2.14.1+cu130 is installed; the build asked for replaces it" in out


def test_verify_for_a_target_suggests_a_fix_for_that_target(
    cli: Callable[..., tuple[int, str, str]], index: Index, tmp_path: Path
) -> None:
    python = _with_cpu_torch(index, tmp_path, "cu130", "2.14.1")  # 2.14.1+cu130: no kernels for sm_61; its cu126 has
    code, out, _ = cli(["verify", "--python", str(python), "--target", GTX_1080], WHEELFIT_OFFLINE="1")
    assert code == 1
    said = " ".join(out.split())
    assert f"(wheelfit install torch==2.14.1+cu126 --python {python} --target {GTX_1080})" in said, said


def test_json_means_errors_are_json_too(cli: Callable[..., tuple[int, str, str]]) -> None:
    code, out, err = cli(["plan", "torch==9.9", "--offline", "--target", GTX_1080, "--json"])
    assert code == 1 and err.startswith("wheelfit: error: no PyTorch release matches torch==9.9")
    assert json.loads(out)["error"]["kind"] == "failure" and json.loads(out)["error"]["exit_code"] == 1
    code, out, _ = cli(["plan", "torch", "--offline", "--target", "cuda=banana", "--json"])
    assert code == 2 and json.loads(out)["error"]["kind"] == "usage"


@pytest.mark.parametrize("other", ["cupy-cuda12x", "jax[cuda12]", "nvidia-cublas-cu12"])
def test_a_package_of_another_cuda_major_is_refused_before_anything_is_installed(
    other: str, cli: Callable[..., tuple[int, str, str]], index: Index, caches: dict[str, str], tmp_path: Path
) -> None:
    """torch 2.15.0+cu130 (CUDA 13) for an RTX 3090, with a package that names CUDA 12 (issue 32's one-major rule,
    from kb/data/extensions.json)."""
    python = make_venv(tmp_path / "venv")
    before = tree(tmp_path / "venv")
    args = ["install", "torch", other, "--python", str(python), "--target", "cuda=8.6,driver=580.95.05"]
    code, _, err = cli([*args, "--pytorch-index", index.pytorch, "--index-url", index.default], **caches)
    assert code == 1, err
    assert err.strip().splitlines()[-1] == (
        f"wheelfit: error: {other} (CUDA 12) beside torch 2.15.0+cu130 (CUDA 13): one process would load two CUDA "
        "runtimes; ask for the CUDA 13 build of each, or for a torch of their CUDA"
    )
    assert tree(tmp_path / "venv") == before


def test_the_cuda_major_of_a_requirement_is_read_from_the_data() -> None:
    from wheelfit.kb.extensions import cuda_major_of

    assert cuda_major_of("cupy-cuda13x") == "13" and cuda_major_of("CuPy_CUDA12x") == "12"
    assert cuda_major_of("jax", frozenset({"cuda13"})) == "13" and cuda_major_of("jax") is None
    assert cuda_major_of("nvidia-cudnn-cu12") == "12" and cuda_major_of("jax-cuda13-pjrt") == "13"
    assert cuda_major_of("cupy") is None and cuda_major_of("numpy") is None


def test_a_package_of_the_same_cuda_major_passes_the_rule(
    cli: Callable[..., tuple[int, str, str]], index: Index, caches: dict[str, str], tmp_path: Path
) -> None:
    python = make_venv(tmp_path / "venv")
    args = ["install", "torch", "cupy-cuda13x", "--python", str(python), "--target", "cuda=8.6,driver=580.95.05"]
    _, _, err = cli([*args, "--pytorch-index", index.pytorch, "--index-url", index.default, "--dry-run"], **caches)
    assert "two CUDA runtimes" not in err  # (the loopback default index has no cupy: uv says so, not this rule)
