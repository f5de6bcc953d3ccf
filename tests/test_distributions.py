"""The six distributions as a user on another machine gets them: built wheels, installed from a folder of wheels.

Every wheel is built into one folder; none may name another by path (``name @ file:...`` installs on the
building machine only and no index accepts it), and the core must name each provider by version range. A fresh
venv then installs ``wheelfit`` from that folder (the package registry supplies the third-party dependencies)
and runs ``detect`` and an offline ``plan``: the entry points, the provider plugins and the knowledge base
all have to be in the wheels.
"""

from __future__ import annotations

import email
import json
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Any

from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name
from packaging.version import Version

from wheelfit import __version__

from .conftest import ROOT, hermetic_env

PROVIDERS = ["probekit", "cpu", "nvidia", "amd", "intel"]
PROJECTS = {f"wheelfit-{p}": ROOT / "providers" / p for p in PROVIDERS} | {"wheelfit": ROOT}
PROVIDER_RANGE = SpecifierSet(">=0.2,<0.3")
#: What the detector plugins need of probekit: 0.2.1 added ``wheelfit_probekit.variant_plugin``, their shared
#: ``variant_plugins`` API, so 0.2.0 would install beside them and fail on import.
PROBEKIT_RANGE = SpecifierSet(">=0.2.1,<0.3")
#: What the NVIDIA plugin and the core need of probekit: 0.2.2 added ``wheelfit_probekit.drivers``, the NVIDIA
#: driver-floor table both read (it was the plugin's before), so 0.2.1 would install beside them and fail on import.
PROBEKIT_DRIVERS_RANGE = SpecifierSet(">=0.2.2,<0.3")


def run(argv: list[str], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    r = subprocess.run(argv, capture_output=True, text=True, env=env, cwd=cwd, timeout=300, check=False)
    assert r.returncode == 0, f"{argv} exited {r.returncode}\n{r.stdout}\n{r.stderr}"
    return r


def metadata(wheel: Path) -> email.message.Message:
    with zipfile.ZipFile(wheel) as zf:
        (name,) = [n for n in zf.namelist() if n.endswith(".dist-info/METADATA") and n.count("/") == 1]
        return email.message_from_bytes(zf.read(name))


def requires(meta: email.message.Message) -> dict[str, Requirement]:
    return {str(canonicalize_name(r.name)): r for r in map(Requirement, meta.get_all("Requires-Dist") or [])}


def test_wheels_install_from_a_folder_and_run(tmp_path: Path) -> None:
    wheels, venv, cwd = tmp_path / "wheels", tmp_path / "venv", tmp_path / "cwd"
    cwd.mkdir()
    env = hermetic_env(WHEELFIT_CACHE_DIR=str(tmp_path / "cache"))
    pip = ["-m", "pip", "--disable-pip-version-check"]
    # One pip process builds all six (each in its own isolated build environment, as any installer would).
    run([sys.executable, *pip, "wheel", "-q", "--no-deps", "-w", str(wheels), *map(str, PROJECTS.values())], env, cwd)

    built: dict[str, email.message.Message] = {}
    for wheel in sorted(wheels.glob("*.whl")):
        meta = metadata(wheel)
        built[canonicalize_name(meta["Name"])] = meta
    assert sorted(built) == sorted(PROJECTS)
    assert built["wheelfit"]["Version"] == __version__  # hatch's dynamic version: wheelfit.__version__
    for name, meta in built.items():
        direct = [r for r in meta.get_all("Requires-Dist") or [] if "@ file:" in r or Requirement(r).url]
        assert not direct, f"{name} names a distribution by path or URL: {direct}"
        if name != "wheelfit":
            assert Version(meta["Version"]) in PROVIDER_RANGE, f"{name} {meta['Version']} is outside the core's range"
        if name not in ("wheelfit", "wheelfit-probekit"):
            wanted = PROBEKIT_DRIVERS_RANGE if name == "wheelfit-nvidia" else PROBEKIT_RANGE
            assert requires(meta)["wheelfit-probekit"].specifier == wanted, f"{name} needs probekit {wanted}"
    core = requires(built["wheelfit"])
    for provider in PROJECTS.keys() - {"wheelfit"}:
        wanted = PROBEKIT_DRIVERS_RANGE if provider == "wheelfit-probekit" else PROVIDER_RANGE
        assert core[provider].specifier == wanted, f"the core requires {core[provider]}"

    run([sys.executable, "-m", "venv", str(venv)], env, cwd)
    report = tmp_path / "report.json"
    install = [str(venv / "bin" / "python"), *pip, "install", "-q", "--find-links", str(wheels)]
    run([*install, "--report", str(report), "wheelfit"], env, cwd)
    # Every wheelfit distribution came from the folder, none from an index that happens to know the name.
    origin = {
        canonicalize_name(item["metadata"]["name"]): item["download_info"]["url"]
        for item in json.loads(report.read_text())["install"]
    }
    ours = {name: url for name, url in origin.items() if name.startswith("wheelfit")}
    assert sorted(ours) == sorted(PROJECTS)
    assert all(url.startswith(wheels.as_uri() + "/") for url in ours.values()), ours

    wheelfit = str(venv / "bin" / "wheelfit")
    rep: dict[str, Any] = json.loads(run([wheelfit, "detect", "--json"], env, cwd).stdout)
    assert rep["schema_version"] == "1.1"
    assert rep["platform"]["system"] and rep["platform"]["machine"]
    # Every detector plugin loads from its installed wheel (entry points), and each probed something.
    assert {p["provider"] for p in rep["probes"]} == {"cpu", "nvidia", "amd", "intel"}
    # --offline and --target: planned from the knowledge base in the wheel, download.pytorch.org never contacted.
    argv = [wheelfit, "plan", "torch", "--offline", "--target", "cuda=8.6,driver=580.95.05", "--json"]
    plan: dict[str, Any] = json.loads(run(argv, env, cwd).stdout)
    assert plan["torch_version"]
    assert str(plan["variant"]).startswith("cu"), plan["variant"]
