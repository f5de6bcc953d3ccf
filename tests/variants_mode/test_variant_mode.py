"""Variant mode of ``wheelfit plan``: a loopback variant index serving real wheels and PyTorch's real
``torch-2.10.0-variants.json``, read through the real index client, ranked, and planned by the one resolver
(``wheelfit.api.plan`` with ``variant_index``). Beside it, a per-variant ``cpu`` index for the fallback."""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import httpx
import pytest

from tests.support.inprocess import wheelfit_in_process
from tests.support.wheels import make_wheel
from wheelfit import api
from wheelfit.fetch import Cache, make_client
from wheelfit.index.variant_index import VariantIndexError
from wheelfit.probe.target import load_target
from wheelfit.report import HardwareReport
from wheelfit.resolve.plan import Plan
from wheelfit.variants.errors import VariantError
from wheelfit.variants.machine import marker_environment, supported_configs
from wheelfit.variants.metadata import loads
from wheelfit.variants.ranking import rank_variants

from ..conftest import hermetic_env
from .variant_index import add_variant_wheel, serve, write_page

#: What the 2.10.0 variant index publishes for Linux x86_64 (wheelnext/variants-index gh-pages 291c782), plus cuda12.8.
LINUX_LABELS = ("cuda12.6", "cuda12.8", "cuda13.0", "rocm7.0", "rocm7.1", "null")


def build_index(root: Path, realdata: Path, *, variants_json: bytes | None = None, **page: object) -> Path:
    index = root / "whl" / "variant"
    index.mkdir(parents=True)
    for label in LINUX_LABELS:
        add_variant_wheel(index, "2.10.0", label)
    add_variant_wheel(index, "2.10.0", "xpu", tag="cp312-cp312-linux_x86_64")
    add_variant_wheel(index, "2.10.0", "cuda13.0", tag="cp312-cp312-win_amd64")  # another platform: never chosen
    if variants_json is None:
        variants_json = (realdata / "torch-2.10.0-variants.json").read_bytes()
    if variants_json:
        (index / "torch-2.10.0-variants.json").write_bytes(variants_json)
    write_page(index, **page)  # type: ignore[arg-type]
    cpu = root / "whl" / "cpu"  # the per-variant index a fallback plans from
    for version in ("2.9.0", "2.10.0"):
        make_wheel(cpu, "torch", f"{version}+cpu", tag="cp312-cp312-manylinux_2_28_x86_64")
    write_page(cpu)
    return index


@pytest.fixture
def variant_root(tmp_path: Path, realdata: Path) -> Path:
    build_index(tmp_path / "srv", realdata)
    return tmp_path / "srv"


@pytest.fixture
def http() -> Iterator[httpx.Client]:
    with make_client(trust_env=False) as client:
        yield client


def plan_for(report: HardwareReport, url: str, http: httpx.Client, tmp_path: Path, spec: str = "") -> Plan:
    net = api.Network(http, Cache(tmp_path / "cache"))
    return api.plan([f"torch{spec}"], api.Target(report),
        api.PlanOptions(variant_index=f"{url}/whl/variant", pytorch_index=f"{url}/whl"),
        environ={}, network=net)


def fell_back(plan: Plan, url: str) -> bool:
    """Planned from the per-variant indexes, saying why."""
    why = f"no variants metadata at {url}: planned from the per-variant indexes"
    return plan.mode == "index" and why in plan.warnings


def reference_order(report: HardwareReport, realdata: Path) -> list[str]:
    meta = loads((realdata / "torch-2.10.0-variants.json").read_bytes())
    return rank_variants(meta, supported_configs(report, {}), environment=marker_environment(report)).labels


def test_rtx_3090_gets_the_label_the_reference_ranking_prefers(
    variant_root: Path, realdata: Path, http: httpx.Client, tmp_path: Path
) -> None:
    report = load_target("cuda=8.6,driver=580.95.05,python=3.12")
    with serve(variant_root) as url:
        plan = plan_for(report, url, http, tmp_path)
    # A 580 driver runs CUDA 13.0, so the priority namespace puts cuda13.0 first (priority::order in the 2.10.0 JSON).
    assert reference_order(report, realdata)[0] == "cuda13.0"
    assert (plan.mode, plan.variant, plan.torch_version) == ("variant", "cuda13.0", "2.10.0")
    assert plan.index_url == f"{url}/whl/variant"
    pin = plan.packages[0]
    assert pin.requirement == "torch==2.10.0"
    assert pin.filename == "torch-2.10.0-cp312-cp312-manylinux_2_28_x86_64-cuda13.0.whl"
    assert pin.url == f"{url}/whl/variant/{pin.filename}"
    assert plan.reasons[0] == f"variant mode: {url}/whl/variant/torch/ serves torch-2.10.0-variants.json"
    # Variant markers: cuda13.0's runtime, triton; no ROCm or Intel runtime; no extra-only requirement.
    # sm_arch is narrowed to what an sm_86 GPU supports (PEP 825): 86_real stays, 90_real goes.
    assert set(plan.dependencies) == {
        "filelock",
        "nvidia-cublas==13.0.0.19",
        "nvidia-nccl-cu13==2.27.7",
        "triton==3.5.0",
        "kernels-sm86==1.0",
    }
    rejected = {r.variant: r.reason for r in plan.rejected}
    assert "amd" in rejected["rocm7.1"] and "intel" in rejected["xpu"]
    out = plan.to_dict()
    assert out["mode"] == "variant" and out["dependencies"] == list(plan.dependencies)
    assert out["packages"][0]["filename"] == pin.filename


def test_1080_plus_3090_is_not_given_a_label_without_sm61_kernels(
    variant_root: Path, realdata: Path, http: httpx.Client, tmp_path: Path
) -> None:
    report = load_target("cuda=6.1+8.6,driver=580.95.05,python=3.12")
    # The reference providers look at the 3090 only and would take cuda13.0 (sm_75 and up).
    assert reference_order(report, realdata)[0] == "cuda13.0"
    with serve(variant_root) as url:
        plan = plan_for(report, url, http, tmp_path)
    # cuda12.6 is the only 2.10.0 label with sm_60 SASS, which runs on compute capability 6.1.
    assert plan.variant == "cuda12.6"
    rejected = {r.variant: r.reason for r in plan.rejected}
    for label in ("cuda13.0", "cuda12.8"):
        assert "compute capability 6.1" in rejected[label] and "sm_arch" in rejected[label]
    assert any("cuda13.0" in r and "compute capability 6.1" in r for r in plan.reasons)
    assert "nvidia-cublas-cu12==12.6.4.1" in plan.dependencies and "triton==3.5.0" in plan.dependencies
    assert not any(d.startswith(("nvidia-cublas==", "nvidia-nccl-cu13")) for d in plan.dependencies)


def test_mi300_gets_rocm_and_the_rocm_triton(variant_root: Path, http: httpx.Client, tmp_path: Path) -> None:
    target = load_target("rocm=gfx942,python=3.12")
    report = replace(target, accelerators=tuple(replace(a, rocm_version="7.1.2") for a in target.accelerators))
    with serve(variant_root) as url:
        plan = plan_for(report, url, http, tmp_path)
    assert plan.variant == "rocm7.1"
    assert "pytorch-triton-rocm==3.5.0" in plan.dependencies
    assert not any(d.startswith(("triton", "nvidia-")) for d in plan.dependencies)
    assert "rocm_version" in {r.variant: r.reason for r in plan.rejected}["rocm7.0"]


def test_cpu_only_machine_gets_the_null_variant(variant_root: Path, http: httpx.Client, tmp_path: Path) -> None:
    with serve(variant_root) as url:
        plan = plan_for(load_target("os=linux,python=3.12"), url, http, tmp_path)
    assert plan.variant == "null" and plan.mode == "variant"
    assert plan.packages[0].filename == "torch-2.10.0-cp312-cp312-manylinux_2_28_x86_64-null.whl"
    assert plan.dependencies == ("filelock",)
    # The one warning: PyTorch's schema v0.0.3 is one uv's preview cannot read (tests/integrations/test_uv_variants.py).
    assert [w for w in plan.warnings if "wheel-variant preview cannot install" not in w] == []


def test_a_label_without_a_wheel_for_the_platform_is_skipped(
    tmp_path: Path, realdata: Path, http: httpx.Client
) -> None:
    index = build_index(tmp_path / "srv", realdata)
    (index / "torch-2.10.0-cp312-cp312-manylinux_2_28_x86_64-cuda13.0.whl").unlink()
    write_page(index, pep658=False)  # and the dependencies come from the downloaded wheel
    with serve(tmp_path / "srv") as url:
        plan = plan_for(load_target("cuda=8.6,driver=580.95.05,python=3.12"), url, http, tmp_path)
    assert plan.variant == "cuda12.8"
    assert "no wheel" in {r.variant: r.reason for r in plan.rejected}["cuda13.0"]
    assert "nvidia-cublas==12.8.4.1" in plan.dependencies


def test_specifier_excluding_every_metadata_version_falls_back(
    variant_root: Path, http: httpx.Client, tmp_path: Path
) -> None:
    with serve(variant_root) as url:
        plan = plan_for(load_target("os=linux,python=3.12"), url, http, tmp_path, "<2.10")
    assert fell_back(plan, f"{url}/whl/variant") and plan.torch_version == "2.9.0"


def test_index_without_variants_json_falls_back(tmp_path: Path, realdata: Path, http: httpx.Client) -> None:
    build_index(tmp_path / "srv", realdata, variants_json=b"")
    with serve(tmp_path / "srv") as url:
        plan = plan_for(load_target("os=linux,python=3.12"), url, http, tmp_path)
        assert fell_back(plan, f"{url}/whl/variant") and (plan.torch_version, plan.variant) == ("2.10.0", "cpu")
        # Not even a project page (404) on the variant index: the same fallback.
        net = api.Network(http, Cache(tmp_path / "cache"))
        plan = api.plan(["torch"], api.Target(load_target("os=linux,python=3.12")),
            api.PlanOptions(variant_index=f"{url}/elsewhere", pytorch_index=f"{url}/whl"),
            environ={}, network=net)  # fmt: skip
        assert fell_back(plan, f"{url}/elsewhere")


def test_hash_mismatch_is_refused(tmp_path: Path, realdata: Path, http: httpx.Client) -> None:
    build_index(tmp_path / "srv", realdata, wrong_hash=["torch-2.10.0-variants.json"])
    with serve(tmp_path / "srv") as url, pytest.raises(VariantIndexError, match="sha256 mismatch"):
        plan_for(load_target("os=linux,python=3.12"), url, http, tmp_path)


def test_malformed_variants_json_is_one_clear_error(tmp_path: Path, realdata: Path, http: httpx.Client) -> None:
    text = (realdata / "torch-2.10.0-variants.json").read_bytes()
    build_index(tmp_path / "srv", realdata, variants_json=text[: len(text) // 2])
    with (
        serve(tmp_path / "srv") as url,
        pytest.raises(VariantError, match=r"torch-2\.10\.0-variants\.json: not valid JSON"),
    ):
        plan_for(load_target("os=linux,python=3.12"), url, http, tmp_path)


# -- the command, as a user runs it -------------------------------------------------------------


def wheelfit(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = hermetic_env(WHEELFIT_CACHE_DIR=str(tmp_path / "cli-cache"), NO_PROXY="127.0.0.1", COLUMNS="200")
    return wheelfit_in_process(["plan", *args], env)


def test_cli_variant_mode_and_fallback(tmp_path: Path, realdata: Path) -> None:
    build_index(tmp_path / "srv", realdata)
    plain = tmp_path / "plain" / "whl" / "variant"
    plain.mkdir(parents=True)
    shutil.copy(next((tmp_path / "srv" / "whl" / "variant").glob("*-null.whl")), plain)
    write_page(plain)
    target = "--target=cuda=6.1+8.6,driver=580.95.05,python=3.12"
    with serve(tmp_path / "srv") as url, serve(tmp_path / "plain") as plain_url:
        r = wheelfit(tmp_path, target, "--json", "--variant-index", f"{url}/whl/variant")
        assert r.returncode == 0, r.stderr
        out = json.loads(r.stdout)
        assert (out["mode"], out["variant"]) == ("variant", "cuda12.6")
        assert "triton==3.5.0" in out["dependencies"]

        r = wheelfit(tmp_path, target, "--json", "--variant-index", f"{plain_url}/whl/variant")
        assert r.returncode == 0, r.stderr
        out = json.loads(r.stdout)
        assert out["mode"] == "index" and "dependencies" not in out
        assert (
            f"no variants metadata at {plain_url}/whl/variant: planned from the per-variant indexes" in out["warnings"]
        )

        human = wheelfit(tmp_path, target, "--variant-index", f"{url}/whl/variant")
        assert human.returncode == 0, human.stderr
        assert "variant cuda12.6" in human.stdout and "requires triton==3.5.0" in human.stdout
        assert "+cuda12.6" not in human.stdout  # a variant label is not a local version


def test_cli_malformed_variants_json(tmp_path: Path, realdata: Path) -> None:
    build_index(
        tmp_path / "srv", realdata, variants_json=b'{"$schema": "https://variants-schema.wheelnext.dev/v0.0.3.json"}'
    )
    with serve(tmp_path / "srv") as url:
        r = wheelfit(tmp_path, "--target=os=linux,python=3.12", "--variant-index", f"{url}/whl/variant")
    assert r.returncode == 1 and r.stdout == ""
    lines = r.stderr.splitlines()
    assert len(lines) == 1
    assert lines[0].startswith("wheelfit: error: torch-2.10.0-variants.json: missing 'default-priorities'")


def test_when_no_label_serves_every_gpu_the_most_capable_ones_are_served(
    variant_root: Path, http: httpx.Client, tmp_path: Path
) -> None:
    # sm_50 SASS is only in cuda12.6, sm_120 only in cuda12.8 and cuda13.0: no label serves a Maxwell and a 5090.
    report = load_target("cuda=5.0+12.0,driver=580.95.05,python=3.12")
    with serve(variant_root) as url:
        plan = plan_for(report, url, http, tmp_path)
    assert plan.variant == "cuda13.0"
    mine = [w for w in plan.warnings if "wheel-variant preview cannot install" not in w]
    assert len(mine) == 1 and "not used by this build: target GPU sm_50" in mine[0]


def test_yanked_wheels_only_for_an_exact_pin(tmp_path: Path, realdata: Path, http: httpx.Client) -> None:
    """PEP 592, as for the per-variant indexes: a range skips a yanked file, an exact pin takes it and warns."""
    cuda13 = "torch-2.10.0-cp312-cp312-manylinux_2_28_x86_64-cuda13.0.whl"
    build_index(tmp_path / "srv", realdata, yanked=[cuda13])
    report = load_target("cuda=8.6,driver=580.95.05,python=3.12")
    with serve(tmp_path / "srv") as url:
        ranged = plan_for(report, url, http, tmp_path)
        pinned = plan_for(report, url, http, tmp_path, "==2.10.0")
    assert ranged.variant == "cuda12.8"
    assert "only yanked ones" in {r.variant: r.reason for r in ranged.rejected}["cuda13.0"]
    assert pinned.variant == "cuda13.0" and pinned.packages[0].filename == cuda13
    assert any(w.startswith(f"{cuda13} is yanked: broken build") for w in pinned.warnings)


def test_allow_cpu_holds_in_variant_mode(tmp_path: Path, realdata: Path, http: httpx.Client) -> None:
    """torch 2.10.0 has only its null wheel here, 2.9.0 a cuda12.8 one: the GPU build of the older release, or
    with --allow-cpu the newest release's CPU build (the rule of the per-variant indexes)."""
    index = build_index(tmp_path / "srv", realdata)
    for label in LINUX_LABELS[:-1]:
        (index / f"torch-2.10.0-cp312-cp312-manylinux_2_28_x86_64-{label}.whl").unlink()
    add_variant_wheel(index, "2.9.0", "cuda12.8")
    (index / "torch-2.9.0-variants.json").write_bytes((realdata / "torch-2.9.0-variants.json").read_bytes())
    write_page(index)
    report = load_target("cuda=8.6,driver=580.95.05,python=3.12")
    with serve(tmp_path / "srv") as url:
        gpu = plan_for(report, url, http, tmp_path)
        net = api.Network(http, Cache(tmp_path / "cache"))
        cpu = api.plan(["torch"], api.Target(report),
            api.PlanOptions(variant_index=f"{url}/whl/variant", pytorch_index=f"{url}/whl", allow_cpu=True),
            environ={}, network=net)  # fmt: skip
    assert (gpu.mode, gpu.torch_version, gpu.variant) == ("variant", "2.9.0", "cuda12.8")
    assert "torch 2.9.0 is the newest release that has one (cuda12.8)" in gpu.reasons[1]
    assert (cpu.mode, cpu.torch_version, cpu.variant) == ("variant", "2.10.0", "null")
    assert any(w.startswith("--allow-cpu: torch 2.10.0 has no cuda build") for w in cpu.warnings)
