"""The probe runner: a provider that crashes, hangs or lies cannot take detection down."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from wheelfit.errors import UsageError
from wheelfit.probe.registry import GROUP, LoadedProvider, discover, load
from wheelfit.probe.runner import assemble, detect, run_providers
from wheelfit.report import Platform
from wheelfit_probekit import ProbeLog, ProviderResult, System


class Fixed:
    def __init__(self, name: str, result: Any = None, sleep: float = 0.0, exc: BaseException | None = None) -> None:
        self.name, self.result, self.sleep, self.exc = name, result, sleep, exc

    def probe(self, system: System) -> Any:
        time.sleep(self.sleep)
        if self.exc is not None:
            raise self.exc
        return self.result


def run(tmp_path: Path, *providers: Fixed, timeout: float = 10.0) -> dict[str, Any]:
    system = System.from_sysroot(tmp_path, environ={}, command_timeout=timeout)
    loaded = [LoadedProvider(p.name, "test", p) for p in providers]
    plat = Platform(system="Linux", machine="x86_64", python="3.11.7")
    return assemble(plat, run_providers(system, loaded)).to_dict()


def good(name: str = "good") -> Fixed:
    log = ProbeLog(name)
    with log.probe("kfd") as p:
        p.detail = "1 GPU"
    accel = {"vendor": "amd", "name": "AMD Instinct MI300X", "pci_id": "1002:74a1", "source": "kfd", "gfx": "gfx942"}
    return Fixed(name, ProviderResult(accelerators=[accel], probes=log.records))


def test_crashing_provider_is_a_failed_probe_and_others_still_report(tmp_path: Path) -> None:
    rep = run(tmp_path, good(), Fixed("broken", exc=RuntimeError("segfault-ish")))
    assert [a["gfx"] for a in rep["accelerators"]] == ["gfx942"]
    failed = [p for p in rep["probes"] if not p["ok"]]
    assert failed[0]["provider"] == "broken"
    assert "crashed: RuntimeError: segfault-ish" in failed[0]["error"]


def test_hanging_provider_is_abandoned_at_the_deadline(tmp_path: Path) -> None:
    start = time.monotonic()
    # deadline = tool timeout + grace (5 s); the provider sleeps far longer
    rep = run(tmp_path, good(), Fixed("stuck", sleep=60), timeout=0.1)
    assert time.monotonic() - start < 15
    stuck = [p for p in rep["probes"] if p["provider"] == "stuck"]
    assert stuck and "did not finish" in stuck[0]["error"]
    assert len(rep["accelerators"]) == 1


def test_provider_returning_the_wrong_type_is_reported(tmp_path: Path) -> None:
    rep = run(tmp_path, Fixed("liar", result={"accelerators": []}))
    assert "not a ProviderResult" in rep["probes"][0]["error"]


def test_invalid_accelerator_entries_are_rejected_not_trusted(tmp_path: Path) -> None:
    bad = ProviderResult(
        accelerators=[
            {"vendor": "nvidia", "name": "GPU", "source": "x", "compute_capability": 8.6},
            {"vendor": "matrox", "name": "G200", "source": "x"},
        ]
    )
    rep = run(tmp_path, Fixed("sloppy", result=bad))
    assert rep["accelerators"] == []
    errors = [p["error"] for p in rep["probes"]]
    assert any("'compute_capability' must be str" in e for e in errors)
    assert any("unknown vendor 'matrox'" in e for e in errors)


def test_the_four_providers_are_registered_and_load() -> None:
    eps = {ep.name: ep for ep in discover()}
    assert {"nvidia", "amd", "intel", "cpu"} <= set(eps), GROUP
    for name in ("nvidia", "amd", "intel", "cpu"):
        lp = load(eps[name])
        assert lp.error is None and lp.provider is not None
        assert lp.distribution == f"wheelfit-{name}"


def test_disabled_providers_are_not_discovered() -> None:
    assert "nvidia" not in {ep.name for ep in discover(disabled=["nvidia"])}


def test_discovery_agrees_with_importlib_metadata() -> None:
    from importlib.metadata import entry_points

    ours = {(e.name, e.value) for e in discover()}
    stdlib = {(e.name, e.value) for e in entry_points(group=GROUP)}
    assert ours == stdlib and len(ours) >= 4


def test_discovery_rules_on_a_made_up_path(tmp_path: Path) -> None:
    first, second = tmp_path / "a", tmp_path / "b"
    for base, dist, body in [
        (first, "acme_npu-1.0.dist-info", "[wheelfit.providers]\nnpu = acme_npu.plugin:PROVIDER\n"),
        (second, "acme_npu-0.9.dist-info", "[wheelfit.providers]\nnpu = old_acme:PROVIDER\n"),  # shadowed
        (second, "other-2.0.dist-info", "[console_scripts]\nx = y:z\n[wheelfit.providers]\ntpu = tpu_mod\n"),
    ]:
        (base / dist).mkdir(parents=True)
        (base / dist / "entry_points.txt").write_text(body)
    found = discover(path=[str(first), str(second), str(tmp_path / "missing")])
    assert [(e.name, e.value, e.distribution) for e in found] == [
        ("npu", "acme_npu.plugin:PROVIDER", "acme-npu"),
        ("tpu", "tpu_mod", "other"),
    ]
    assert [e.name for e in discover(disabled=["npu"], path=[str(first), str(second)])] == ["tpu"]
    typo = r"--disable-provider tpuu: no detector plugin has that name \(installed: npu, tpu\)"
    with pytest.raises(UsageError, match=typo):  # a typo on the command line: exit 2
        discover(disabled=["tpuu"], path=[str(first), str(second)])
    broken = load(found[0])  # the module does not exist: reported with the distribution's name
    assert broken.provider is None and "could not load provider 'npu' from acme-npu" in (broken.error or "")


class HungMount(System):
    """A machine whose kernel-release file never answers, as a file on a dead network mount does."""

    released = threading.Event()

    def read_text(self, relative: str, limit: int = 1 << 22) -> str | None:
        if relative == "/proc/sys/kernel/osrelease":
            self.released.wait(60)
        return super().read_text(relative, limit)


def test_a_platform_read_that_hangs_is_abandoned_and_said(tmp_path: Path) -> None:
    (tmp_path / "sys/module/nvidia").mkdir(parents=True)
    (tmp_path / "sys/module/nvidia/version").write_text("580.95.05\n")
    system = HungMount.from_sysroot(tmp_path, environ={}, command_timeout=0.2)
    start = time.monotonic()
    try:
        rep = detect(system).to_dict()
    finally:
        HungMount.released.set()
    assert time.monotonic() - start < 10  # the deadline is the tool timeout + 5 s grace, not the read's 60 s
    failed = [p for p in rep["probes"] if p["provider"] == "platform"]
    assert failed and not failed[0]["ok"]
    assert "did not finish" in failed[0]["error"] and "left unknown" in failed[0]["error"]
    assert rep["platform"]["system"] == "unknown"
    assert any(p["provider"] == "nvidia" for p in rep["probes"])  # the providers' findings are kept


def test_a_fifo_in_sysfs_does_not_hold_detection(tmp_path: Path) -> None:
    # A FIFO where the NVIDIA driver's version attribute should be: opening it for reading would block forever.
    (tmp_path / "sys/module/nvidia").mkdir(parents=True)
    os.mkfifo(tmp_path / "sys/module/nvidia/version")
    start = time.monotonic()
    rep = detect(System.from_sysroot(tmp_path, environ={}, command_timeout=2)).to_dict()
    assert time.monotonic() - start < 5
    named = [p for p in rep["probes"] if "it is a FIFO, not a regular file" in (p.get("error") or "")]
    assert named and "/sys/module/nvidia/version" in named[0]["error"]
