"""The wheelfit command as a user runs it: a real process, real exit codes, no tracebacks."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

from wheelfit import __version__

from .conftest import hermetic_env

WHEELFIT = [sys.executable, "-m", "wheelfit"]


def wheelfit(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*WHEELFIT, *args], capture_output=True, text=True, env=hermetic_env(**env), timeout=120)


def sysroot_with_cpu(tmp_path: Path, realdata: Path, name: str) -> Path:
    root = tmp_path / "root"
    (root / "proc").mkdir(parents=True)
    shutil.copy(realdata / "cpu" / name, root / "proc" / "cpuinfo")
    return root


def test_version() -> None:
    for flag in ("--version", "-V"):
        r = wheelfit(flag)
        assert r.returncode == 0 and r.stdout == f"wheelfit {__version__}\n"


def test_detect_json_on_a_sysroot(tmp_path: Path, realdata: Path) -> None:
    root = sysroot_with_cpu(tmp_path, realdata, "linux-rhel9-neoverse_v2")
    r = wheelfit("detect", "--json", "--sysroot", str(root))
    assert r.returncode == 0, r.stderr
    rep = json.loads(r.stdout)
    assert rep["schema_version"] == "1.1"
    assert rep["sysroot"] == str(root.resolve())
    assert rep["platform"]["system"] == "Linux" and rep["platform"]["machine"] == "aarch64"
    assert rep["accelerators"] == []
    assert {p["provider"] for p in rep["probes"]} >= {"cpu"}


def test_sysroot_from_the_environment(tmp_path: Path, realdata: Path) -> None:
    root = sysroot_with_cpu(tmp_path, realdata, "linux-rhel9-neoverse_v2")
    r = wheelfit("detect", "--json", WHEELFIT_SYSROOT=str(root))
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["sysroot"] == str(root.resolve())


def test_human_output_names_the_machine(tmp_path: Path, realdata: Path) -> None:
    root = sysroot_with_cpu(tmp_path, realdata, "linux-rhel9-neoverse_v2")
    r = wheelfit("detect", "--sysroot", str(root), COLUMNS="120")
    assert r.returncode == 0, r.stderr
    assert "Linux aarch64" in r.stdout
    assert "CPU build" in r.stdout  # no GPU: says which build fits


def test_bad_sysroot_is_one_line_not_a_traceback(tmp_path: Path) -> None:
    r = wheelfit("detect", "--sysroot", str(tmp_path / "missing"))
    assert r.returncode == 2
    assert r.stderr.strip().splitlines() == [f"wheelfit: error: --sysroot {tmp_path / 'missing'} is not a directory"]


def test_unknown_option_is_a_usage_error() -> None:
    r = wheelfit("detect", "--bogus")
    assert r.returncode == 2 and "No such option" in r.stderr and "--bogus" in r.stderr
    assert "Traceback" not in r.stderr


def test_detect_on_this_machine_never_fails() -> None:
    r = wheelfit("detect", "--json")
    assert r.returncode == 0, r.stderr
    rep = json.loads(r.stdout)
    assert rep["sysroot"] is None and rep["platform"]["python"]


def test_fast_path_and_typer_path_print_the_same_report(tmp_path: Path) -> None:
    # `--sysroot DIR` takes the no-typer fast path; `--sysroot=DIR` goes through typer.
    from .conftest import MACHINES

    root = MACHINES / "nvidia-4090-plus-1080" / "root"
    fast = wheelfit("detect", "--json", "--sysroot", str(root), "--probe-timeout", "5")
    slow = wheelfit("detect", "--json", f"--sysroot={root}", "--probe-timeout=5")
    assert fast.returncode == slow.returncode == 0, (fast.stderr, slow.stderr)

    def stable(text: str) -> object:
        rep = json.loads(text)
        for p in rep["probes"]:
            p["ms"] = 0  # timings differ run to run
        return rep

    assert stable(fast.stdout) == stable(slow.stdout)
    assert [a["compute_capability"] for a in json.loads(fast.stdout)["accelerators"]] == ["8.9", "6.1"]


def test_fast_path_leaves_mistakes_to_typer() -> None:
    r = wheelfit("detect", "--json", "--probe-timeout", "0")
    assert r.returncode == 2 and "0.1" in r.stderr and "Traceback" not in r.stderr


def test_a_misspelt_disabled_provider_is_one_line_on_both_paths() -> None:
    for args in (("detect", "--json", "--disable-provider", "nvidai"), ("detect", "--disable-provider", "nvidai")):
        r = wheelfit(*args)
        assert r.returncode == 2, r.stdout
        assert r.stderr.strip() == (
            "wheelfit: error: --disable-provider nvidai: no detector plugin has that name "
            "(installed: amd, cpu, intel, nvidia)"
        )
