"""``wheelfit install --variant-index``: PyTorch-style variant wheels (dependencies gated on variant markers)
from a loopback variant index, installed by real uv and pip into real virtual environments.

Neither uv 0.13 nor pip 23 can install such a wheel as published; wheelfit installs a plain copy of it with the
variant markers evaluated for the chosen variant. Its torch-family dependencies come from the variant index, or
from the PyTorch index its label was built from, never from the default index, which holds squatted copies.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass, replace
from email.parser import BytesHeaderParser
from functools import partial
from pathlib import Path

import pytest

from tests.conftest import hermetic_env
from tests.install.conftest import Index, error_line, import_torch, installed, make_venv, run_wheelfit, tree
from tests.install.loopback import serve as serve_index
from tests.support.wheels import make_wheel
from wheelfit.probe.target import load_target

from .variant_index import add_torch_variant_wheel, serve, write_page

VERSION = "2.10.0"
PY = f"cp{sys.version_info[0]}{sys.version_info[1]}"
TAG = f"{PY}-{PY}-manylinux_2_28_x86_64"
#: In PyTorch's style (wheelnext/variant-repack configs/torch-2.9 deps_add_list): one list for every variant, the
#: markers decide.
REQUIRES = (
    "smallnum>=1.0",
    "nvidia-rt-cu12==1.0; platform_system == 'Linux' and variant_label == 'cuda12.6'",
    "nvidia-rt-cu13==1.0; platform_system == 'Linux' and variant_label == 'cuda13.0'",
    "triton==3.5.0; platform_system == 'Linux' and 'nvidia' in variant_namespaces",
    'pytorch-triton-rocm==3.5.0; platform_system == "Linux" and "amd" in variant_namespaces',
    "kernels-sm86==1.0; 'nvidia :: sm_arch :: 86_real' in variant_properties",
    "kernels-sm90==1.0; 'nvidia :: sm_arch :: 90_real' in variant_properties",
    "sympy; extra == 'opt'",
)
RTX_3090 = "cuda=8.6,driver=580.95.05"


@dataclass(frozen=True)
class World:
    variant_index: str
    legacy: Index

    def args(self, python: Path, target: str, *more: str) -> list[str]:
        return [
            "install",
            "torch",
            "--variant-index",
            self.variant_index,
            "--pytorch-index",
            self.legacy.pytorch,
            "--index-url",
            self.legacy.default,
            "--target",
            target,
            "--python",
            str(python),
            *more,
        ]


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory, realdata: Path) -> Iterator[World]:
    root = tmp_path_factory.mktemp("variant-world")
    variant = root / "srv" / "whl" / "variant"
    variant.mkdir(parents=True)
    for label in ("cuda12.6", "cuda13.0", "rocm7.1", "null"):
        add_torch_variant_wheel(variant, VERSION, label, tag=TAG, requires=REQUIRES)
    (variant / f"torch-{VERSION}-variants.json").write_bytes((realdata / "torch-2.10.0-variants.json").read_bytes())
    make_wheel(variant, "triton", "3.5.0")  # NVIDIA's Triton: on the variant index
    write_page(variant)
    write_page(variant, "triton")

    legacy = Index(root / "legacy", "")
    # The ROCm Triton is only on the per-variant index the rocm7.1 label was built from.
    legacy.put("pytorch/rocm7.1", partial(make_wheel, name="pytorch-triton-rocm", version="3.5.0"))
    for name in ("smallnum", "nvidia-rt-cu12", "nvidia-rt-cu13", "kernels-sm86", "kernels-sm90", "sympy"):
        legacy.put("default/simple", partial(make_wheel, name=name, version="1.0"))
    for name in ("torch", "triton", "pytorch-triton-rocm"):  # squatters: higher versions on the default index
        evil = {f"{name.replace('-', '_')}/__init__.py": "raise ImportError('the squatted copy')\n"}
        legacy.put("default/simple", partial(make_wheel, name=name, version="99.0", files=evil))
    with serve(root / "srv") as url, serve_index(root / "legacy") as legacy_url:
        yield World(f"{url}/whl/variant", Index(root / "legacy", legacy_url))


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """Hermetic, with caches of this module's own (shared by its tests: the warm path is exercised too)."""
    root = tmp_path_factory.mktemp("caches")
    return hermetic_env(UV_CACHE_DIR=str(root / "uv"), WHEELFIT_CACHE_DIR=str(root / "wheelfit"), PIP_NO_CACHE_DIR="1")


def _requires(python: Path, env: dict[str, str]) -> list[str]:
    script = "import importlib.metadata as m, json; print(json.dumps(m.requires('torch')))"
    out = subprocess.run([str(python), "-c", script], capture_output=True, text=True, env=env, check=True)
    return list(json.loads(out.stdout))


def test_uv_installs_the_chosen_variant_with_its_dependencies(
    world: World, env: dict[str, str], tmp_path: Path
) -> None:
    python = make_venv(tmp_path / "venv")
    done = run_wheelfit([*world.args(python, RTX_3090), "--json"], env)
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    # A 580 driver runs CUDA 13.0, and the 2.10.0 metadata's priority namespace puts cuda13.0 first.
    assert (out["plan"]["mode"], out["plan"]["variant"]) == ("variant", "cuda13.0")
    assert "nvidia :: sm_arch :: 86_real" in out["plan"]["variant_properties"]
    family = {w["name"]: w for w in out["torch_family"]}
    assert family["triton"]["url"] == f"{world.variant_index}/triton-3.5.0-py3-none-any.whl"
    # The variant wheel, downloaded and checked once, is installed as its plain copy (neither uv nor pip installs
    # variant wheels), pinned at the copy's own sha256, which uv checks.
    plain = Path(family["torch"]["url"].removeprefix("file://"))
    assert plain.name == f"torch-{VERSION}-{TAG}.whl"
    assert family["torch"]["sha256"] == hashlib.sha256(plain.read_bytes()).hexdigest()
    assert out["verify"]["ok"] is True, out["verify"]
    have = installed(python, env)
    # cuda13.0's runtime, NVIDIA's Triton from the variant index (not the default index's 99.0), the kernels of
    # the sm_86 the machine has (PEP 825 narrowing); nothing of cuda12.6, ROCm or the extra.
    assert {k: v for k, v in have.items() if k != "torch"} == {
        "smallnum": "1.0",
        "nvidia-rt-cu13": "1.0",
        "triton": "3.5.0",
        "kernels-sm86": "1.0",
    }
    assert have["torch"] == VERSION
    assert import_torch(python, env) == [f"{VERSION}+cu130", "13.0", "None"]
    # The installed METADATA is plain: any later pip or uv resolve can read it.
    assert _requires(python, env) == [
        "smallnum>=1.0",
        "nvidia-rt-cu13==1.0; platform_system == 'Linux'",
        "triton==3.5.0; platform_system == 'Linux'",
        "kernels-sm86==1.0",
        "sympy; extra == 'opt'",
    ]
    check = run_wheelfit(
        ["verify", "--python", str(python), "--target", RTX_3090, "--variant-index", world.variant_index], env
    )
    assert check.returncode == 0, check.stdout + check.stderr
    assert f"torch {VERSION}+cu130" in check.stdout and "torch.version.cuda = 13.0" in check.stdout
    # The same environment is not what a machine that needs cuda12.6 should have.
    target = ["--target", "cuda=6.1,driver=580.95.05", "--variant-index", world.variant_index]
    wrong = run_wheelfit(
        ["verify", "--python", str(python), *target, "--json"],
        env,
    )
    assert wrong.returncode == 1, wrong.stderr
    result = json.loads(wrong.stdout)
    assert result["plan"]["variant"] == "cuda12.6" and result["ok"] is False
    failed = [c["detail"] for c in result["checks"] if c["ok"] is False]
    assert len(failed) == 1 and "no kernels for sm_61" in failed[0], failed  # what fails is the kernels, named


def test_pip_installs_rocm_with_the_rocm_triton_from_pytorchs_index(
    world: World, env: dict[str, str], tmp_path: Path
) -> None:
    target = load_target("rocm=gfx942")
    report = replace(target, accelerators=tuple(replace(a, rocm_version="7.1.2") for a in target.accelerators))
    saved = tmp_path / "mi300.json"
    saved.write_text(report.to_json())
    python = make_venv(tmp_path / "venv", with_pip=True)
    done = run_wheelfit([*world.args(python, str(saved)), "--installer", "pip", "--json"], env)
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out["plan"]["variant"] == "rocm7.1" and out["verify"]["ok"] is True
    family = {w["name"]: w["url"] for w in out["torch_family"]}
    assert family["pytorch-triton-rocm"] == (
        f"{world.legacy.pytorch}/rocm7.1/pytorch-triton-rocm/pytorch_triton_rocm-3.5.0-py3-none-any.whl"
    )
    have = installed(python, env)
    assert have["pytorch-triton-rocm"] == "3.5.0" and "triton" not in have and "nvidia-rt-cu13" not in have
    assert import_torch(python, env)[1:] == ["None", "7.1.00000-0000000000"]
    # pip itself accepts what was installed: no unknown marker variables, no missing dependency.
    check = subprocess.run([str(python), "-m", "pip", "check"], capture_output=True, text=True, env=env)
    assert check.returncode == 0, check.stdout + check.stderr


def test_cpu_machine_gets_the_null_variant_and_dry_run_changes_nothing(
    world: World, env: dict[str, str], tmp_path: Path
) -> None:
    python = make_venv(tmp_path / "venv")
    before = tree(tmp_path / "venv")
    done = run_wheelfit([*world.args(python, "os=linux"), "--dry-run"], env)
    assert done.returncode == 0, done.stderr
    assert f"Would install torch {VERSION}+null" not in done.stdout  # a label is not a local version
    assert f"Would install torch {VERSION} (variant null)" in done.stdout
    assert "smallnum" in done.stdout and "triton" not in done.stdout
    assert tree(tmp_path / "venv") == before

    done = run_wheelfit([*world.args(python, "os=linux"), "--json"], env)
    assert done.returncode == 0, done.stderr
    assert set(installed(python, env)) == {"torch", "smallnum"}
    assert import_torch(python, env) == [f"{VERSION}+cpu", "None", "None"]

    # A re-run changes nothing: the torch installed from the plain copy is kept
    # (tests/install/test_air_gapped.py: the same build from another URL is kept too)
    before = tree(tmp_path / "venv")
    again = run_wheelfit([*world.args(python, "os=linux"), "--json"], env)
    assert again.returncode == 0, again.stderr
    assert (json.loads(again.stdout)["installs"], json.loads(again.stdout)["removes"]) == ([], [])
    assert tree(tmp_path / "venv") == before


def test_a_torch_family_dependency_on_neither_pytorch_index_is_a_clear_error(
    world: World, env: dict[str, str], tmp_path: Path
) -> None:
    """The ROCm Triton is only on the per-variant index; point --pytorch-index elsewhere and it is nowhere
    wheelfit may take it from (the default index's copy does not count)."""
    target = load_target("rocm=gfx942")
    report = replace(target, accelerators=tuple(replace(a, rocm_version="7.1.2") for a in target.accelerators))
    saved = tmp_path / "mi300.json"
    saved.write_text(report.to_json())
    python = make_venv(tmp_path / "venv")
    before = tree(tmp_path / "venv")
    elsewhere = f"{world.legacy.url}/nothing"
    done = run_wheelfit([*world.args(python, str(saved)), "--pytorch-index", elsewhere], env)
    assert done.returncode == 1
    line = error_line(done.stderr)
    assert 'pytorch-triton-rocm==3.5.0; platform_system == "Linux" (needed by torch 2.10.0)' in line
    assert f"is not on it ({world.variant_index}, then {elsewhere}/rocm7.1" in line, line
    assert tree(tmp_path / "venv") == before


def test_installed_metadata_records_no_variant_markers(world: World, env: dict[str, str], tmp_path: Path) -> None:
    """The wheel uv was handed: plain name, RECORD consistent with what it holds."""
    python = make_venv(tmp_path / "venv")
    done = run_wheelfit([*world.args(python, RTX_3090), "--json"], env)
    assert done.returncode == 0, done.stderr
    site = next((tmp_path / "venv" / "lib").glob("python*/site-packages"))
    dist = next(site.glob("torch-*.dist-info"))
    meta = BytesHeaderParser().parsebytes((dist / "METADATA").read_bytes())
    assert not any("variant_" in r for r in meta.get_all("Requires-Dist") or [])
    # What was installed still says which variant it is.
    assert json.loads((dist / "variant.json").read_text())["variants"] == {"cuda13.0": {}}
    assert (site / "torch" / "version.py").is_file()
