"""`wheelfit variants rank|show` as a user runs them: real files, a real loopback HTTP server,
``--target`` and the reference providers' override variables; the order checked against variantlib."""

from __future__ import annotations

import http.server
import json
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.inprocess import wheelfit_in_process

from ..conftest import hermetic_env
from .oracle import nvidia, raw, variantlib_order

TORCH_29 = "torch-2.9.0-variants.json"


def wheelfit(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return wheelfit_in_process(["variants", *args], hermetic_env(**env))


def rank_json(*args: str, **env: str) -> dict[str, object]:
    r = wheelfit("rank", *args, "--json", **env)
    assert r.returncode == 0, r.stderr
    data: dict[str, object] = json.loads(r.stdout)
    return data


def test_rank_for_a_target_matches_variantlib(realdata: Path) -> None:
    """Driver 580 runs CUDA 13.0; an sm_86 GPU: all three CUDA builds, 13.0 first."""
    d = rank_json(str(realdata / TORCH_29), "--target", "cuda=8.6,driver=580.95.05,os=linux")
    expected = variantlib_order(raw(realdata, TORCH_29), {"nvidia": nvidia((13, 0), (8, 6))})
    assert d["compatible"] == expected == ["cuda13.0", "cuda12.8", "cuda12.6", "null"]
    reasons = {e["label"]: e["reason"] for e in d["incompatible"]}  # type: ignore[attr-defined]
    assert set(reasons) == {"rocm6.3", "rocm6.4", "xpu"}
    assert "amd" in reasons["rocm6.3"] and "intel" in reasons["xpu"]


def test_rank_with_the_reference_override_variables(realdata: Path) -> None:
    d = rank_json(
        str(realdata / TORCH_29),
        "--target",
        "os=linux",
        NV_VARIANT_PROVIDER_FORCE_CUDA_DRIVER_VERSION="12.9",
        NV_VARIANT_PROVIDER_FORCE_SM_ARCH="10.0",
    )
    expected = variantlib_order(raw(realdata, TORCH_29), {"nvidia": nvidia((12, 9), (10, 0))})
    assert d["compatible"] == expected == ["cuda12.8", "null"]
    reasons = {e["label"]: e["reason"] for e in d["incompatible"]}  # type: ignore[attr-defined]
    assert reasons["cuda13.0"].startswith("nvidia :: cuda_version_lower_bound :: 13.0 not supported here")
    assert reasons["cuda12.6"].startswith("nvidia :: sm_arch :: 50_real | 60_real")


def test_windows_target_disables_amd(realdata: Path) -> None:
    d = rank_json(str(realdata / "torch-2.10.0-variants.json"), "--target", "os=windows,rocm=gfx942")
    assert d["compatible"] == ["null"]
    reasons = {e["label"]: e["reason"] for e in d["incompatible"]}  # type: ignore[attr-defined]
    assert reasons["rocm7.1"] == "provider 'amd' is disabled here (enable-if: platform_system == 'Linux')"


def test_torch_2_8_keeps_its_old_null_label(realdata: Path) -> None:
    d = rank_json(str(realdata / "torch-2.8.0-variants.json"), "--target", "cuda=9.0,driver=570.86.10")
    assert d["compatible"] == ["cu128", "cu126", "00000000"]


@pytest.fixture
def server(realdata: Path) -> Iterator[str]:
    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, format: str, *args: object) -> None:
            pass  # the command runs in this process: its stderr is what the test reads

    handler = lambda *a: Quiet(*a, directory=str(realdata))  # noqa: E731
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()


def test_rank_a_url_equals_the_file(realdata: Path, server: str) -> None:
    target = ("--target", "cuda=12.0,driver=580.95.05")
    assert rank_json(f"{server}/{TORCH_29}", *target) == rank_json(str(realdata / TORCH_29), *target)
    missing = wheelfit("rank", f"{server}/torch-9.9.9-variants.json", *target)
    assert missing.returncode == 1
    expected = f"{server}/torch-9.9.9-variants.json: HTTP 404 File not found; check the URL or try again later"
    assert missing.stderr.strip() == f"wheelfit: error: {expected}"


def test_bad_files_are_one_line_errors(tmp_path: Path) -> None:
    bad = tmp_path / "bad-variants.json"
    bad.write_text('{"$schema": "https://variants-schema.wheelnext.dev/v1.0.0.json"')
    r = wheelfit("rank", str(bad), "--target", "os=linux")
    # a file the user named that cannot be read: a usage error (2), as a requirements file
    assert r.returncode == 2 and r.stderr.startswith("wheelfit: error: bad-variants.json: not valid JSON")
    bad.write_text(json.dumps({"$schema": "https://variants-schema.wheelnext.dev/v1.0.0.json"}))
    r = wheelfit("show", str(bad))
    assert r.returncode == 2 and "schema version 1.0.0 is not supported" in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1
    r = wheelfit("show", str(tmp_path / "nope.json"))
    assert r.returncode == 2 and "no such file" in r.stderr


def test_show_prints_every_variant_and_provider(realdata: Path) -> None:
    r = wheelfit_in_process(
        ["variants", "show", str(realdata / "torch-2.8.0-variants.json")], hermetic_env(COLUMNS="200")
    )
    assert r.returncode == 0, r.stderr
    for text in (
        "cu126",
        "cu128",
        "cu129",
        "00000000",
        "null variant",
        "nvidia-variant-provider>=0.0.1,<1.0.0",
        "schema 0.0.3",
        "120_virtual",
    ):
        assert text in r.stdout
    human = wheelfit("rank", str(realdata / TORCH_29), "--target", "cuda=8.6,driver=580.95.05", COLUMNS="200")
    assert human.returncode == 0, human.stderr
    assert "4 of 7 variants run here" in human.stdout
