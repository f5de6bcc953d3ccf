"""Every fixture machine under tests/machines is reported as its expected.json says.

A machine is ``tests/machines/<name>/root`` (a sysroot in real file formats,
fake tools as scripts) plus ``expected.json``:

- ``env``: environment variables the machine runs with (``WHEELFIT_PROBE_TIMEOUT``
  sets the per-tool deadline);
- ``platform`` / ``cpu``: keys that must equal the report's; ``cpu.features_include``
  lists features that must be present, ``cpu.features_exclude`` ones that must not;
- ``accelerators``: the exact list, in order, each entry's keys equal to the report's;
- ``failed_probes``: entries ``{provider, source, error_contains}`` that must appear
  among failed probes (``source`` and ``error_contains`` optional);
- ``hints_contain``: substrings some probe hint must contain.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.support.inprocess import wheelfit_in_process
from wheelfit.probe import detect
from wheelfit_probekit import System

from .conftest import MACHINES

NAMES = sorted(p.name for p in MACHINES.iterdir() if (p / "expected.json").is_file()) if MACHINES.is_dir() else []


def load_machine(name: str) -> tuple[Path, dict[str, Any]]:
    d = MACHINES / name
    return d / "root", json.loads((d / "expected.json").read_text())


def run_machine(name: str, tmp_path: Path) -> dict[str, Any]:
    root, spec = load_machine(name)
    env = {"PATH": "/usr/bin:/bin", **spec.get("env", {})}
    timeout = float(env.get("WHEELFIT_PROBE_TIMEOUT", "10"))
    # Copy: git does not keep empty directories or modes beyond +x, and tests must not touch the tree.
    work = tmp_path / "root"
    shutil.copytree(root, work, symlinks=True)
    report = detect(System.from_sysroot(work, environ=env, command_timeout=timeout))
    return report.to_dict()


def check(report: dict[str, Any], spec: dict[str, Any]) -> None:
    for section in ("platform",):
        for key, want in spec.get(section, {}).items():
            assert report[section][key] == want, f"{section}.{key}"
    cpu_spec = dict(spec.get("cpu", {}))
    include = cpu_spec.pop("features_include", [])
    exclude = cpu_spec.pop("features_exclude", [])
    for key, want in cpu_spec.items():
        assert report["cpu"][key] == want, f"cpu.{key}"
    assert not set(include) - set(report["cpu"]["features"]), "cpu features missing"
    assert not set(exclude) & set(report["cpu"]["features"]), "cpu features that must be absent"
    if "accelerators" in spec:
        got = report["accelerators"]
        assert len(got) == len(spec["accelerators"]), [a["name"] for a in got]
        for i, (g, w) in enumerate(zip(got, spec["accelerators"], strict=True)):
            for key, want in w.items():
                assert g.get(key) == want, f"accelerators[{i}].{key}: {g}"
    failed = [p for p in report["probes"] if not p["ok"]]
    for want in spec.get("failed_probes", []):
        assert any(
            p["provider"] == want["provider"]
            and want.get("source", p["source"]) == p["source"]
            and want.get("error_contains", "") in (p["error"] or "")
            for p in failed
        ), f"no failed probe like {want}; failed: {failed}"
    hints = [p["hint"] or "" for p in report["probes"]]
    for text in spec.get("hints_contain", []):
        assert any(text in h for h in hints), f"no hint contains {text!r}: {hints}"


def test_fixture_library_is_large_enough() -> None:
    assert len(NAMES) >= 25, NAMES


@pytest.mark.parametrize("name", NAMES)
def test_machine(name: str, tmp_path: Path) -> None:
    _, spec = load_machine(name)
    check(run_machine(name, tmp_path), spec)


@pytest.mark.parametrize("name", NAMES)
def test_machine_through_the_command(name: str, tmp_path: Path) -> None:
    """What a person sees: `wheelfit detect --sysroot` renders every machine, names each GPU, prints its hints."""

    from .conftest import hermetic_env

    root, spec = load_machine(name)
    work = tmp_path / "root"
    shutil.copytree(root, work, symlinks=True)
    env = hermetic_env(COLUMNS="200", **spec.get("env", {}))
    r = wheelfit_in_process(["detect", "--sysroot", str(work)], env)
    assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr
    for accel in spec.get("accelerators", []):
        if "name" in accel:
            assert accel["name"] in r.stdout
    for hint in spec.get("hints_contain", []):
        assert hint in " ".join(r.stdout.split()), hint
