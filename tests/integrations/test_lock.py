# ruff: noqa: F811 - the fixtures are imported, then named as parameters
"""``wheelfit lock`` writes files that real uv 0.13.9 (``uv pip install -r pylock.toml``) and real pip (26.1 and
later read PEP 751 locks; ``pip install --require-hashes -r`` the requirements form) install unchanged from the
loopback indexes, and that each of them refuses once one hash is changed."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import tomlkit

from wheelfit.install.uv import find_uv

from ..install.conftest import Index, caches, env, error_line, index, installed, make_venv, run_wheelfit, tree  # noqa: F401
from .uv_helpers import ADA, PASCAL

#: What the tests lock: the family (torch's triton comes with it), an ordinary package, and one whose own
#: dependency is torch-family (needstriton requires triton, which the default index squats at 99.0).
REQUEST = ["torch", "torchvision", "smallnum", "needstriton"]
LOCKED = {
    "torch": "2.14.1+cu126",
    "torchvision": "0.29.1+cu126",
    "triton": "3.5.1",
    "smallnum": "1.0",
    "needstriton": "1.0",
}


def _lock(index: Index, env: dict[str, str], out: Path, *args: str) -> subprocess.CompletedProcess[str]:
    argv = ["lock", *REQUEST, "--pytorch-index", index.pytorch, "--index-url", index.default, "-o", str(out), *args]
    return run_wheelfit(argv, env)


def _uv_pip(python: Path, lock: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    argv = [find_uv(), "pip", "install", "--python", str(python), "-r", str(lock)]
    return subprocess.run(argv, env=env, capture_output=True, text=True, timeout=180, check=False)


def _pip(python: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    """The registry's pip (requirements-dev.txt: 26.1 or later), installing into another environment."""
    argv = [sys.executable, "-m", "pip", "--python", str(python), "install", "--no-cache-dir", *args]
    return subprocess.run(argv, env=env, capture_output=True, text=True, timeout=180, check=False)


def _tampered(lock: Path, sha256: str, tmp_path: Path) -> Path:
    """The same lock with one hash changed (its first hex digit)."""
    text = lock.read_text(encoding="utf-8")
    assert text.count(sha256) == 1
    changed = tmp_path / "tampered" / lock.name
    changed.parent.mkdir()
    changed.write_text(text.replace(sha256, f"{'0' if sha256[0] != '0' else '1'}{sha256[1:]}"), encoding="utf-8")
    return changed


def _site_packages(python: Path) -> Path:
    return next((python.parent.parent / "lib").glob("python*/site-packages"))


def test_pylock_installs_with_uv_pip_and_with_pip_and_a_changed_hash_is_refused_by_each(
    index: Index, caches: dict[str, str], env: dict[str, str], tmp_path: Path
) -> None:
    out = tmp_path / "pylock.toml"
    done = _lock(index, env, out, "--target", PASCAL)
    assert done.returncode == 0, done.stderr
    assert f"into {out}" in done.stdout
    data = tomlkit.parse(out.read_text(encoding="utf-8")).unwrap()
    assert data["lock-version"] == "1.0" and data["created-by"] == "wheelfit"
    packages = {p["name"]: p for p in data["packages"]}
    assert {name: p["version"] for name, p in packages.items()} == LOCKED
    for name in ("torch", "torchvision", "triton"):  # the family from the plan's index, even needstriton's triton
        assert packages[name]["index"] == f"{index.pytorch}/cu126"
        (wheel,) = packages[name]["wheels"]
        assert wheel["url"].startswith(f"{index.pytorch}/cu126/") and len(wheel["hashes"]["sha256"]) == 64
    for name in ("smallnum", "needstriton"):
        assert packages[name]["index"] == index.default
    assert data["tool"]["wheelfit"]["target"] == PASCAL and data["tool"]["wheelfit"]["variant"] == "cu126"

    by_uv = make_venv(tmp_path / "uv-venv")
    installed_by_uv = _uv_pip(by_uv, out, env)
    assert installed_by_uv.returncode == 0, installed_by_uv.stderr
    by_pip = make_venv(tmp_path / "pip-venv")
    installed_by_pip = _pip(by_pip, env, "-r", str(out))
    assert installed_by_pip.returncode == 0, installed_by_pip.stderr
    for python in (by_uv, by_pip):
        assert {k: v for k, v in installed(python, env).items() if k != "pip"} == LOCKED

    smallnum = packages["smallnum"]["wheels"][0]["hashes"]["sha256"]
    changed = _tampered(out, smallnum, tmp_path)
    for name, run in (("uv", _uv_pip), ("pip", lambda py, lock, e: _pip(py, e, "-r", str(lock)))):
        python = make_venv(tmp_path / f"{name}-refuses")
        before = tree(_site_packages(python))
        refused = run(python, changed, env)
        assert refused.returncode != 0, (name, refused.stdout)
        assert "hash" in refused.stderr.lower() and "smallnum" in refused.stderr, (name, refused.stderr)
        assert tree(_site_packages(python)) == before, name


def test_requirements_form_installs_with_pip_require_hashes_and_a_changed_hash_is_refused(
    index: Index, env: dict[str, str], tmp_path: Path
) -> None:
    out = tmp_path / "requirements.txt"
    done = _lock(index, env, out, "--target", PASCAL)
    assert done.returncode == 0, done.stderr
    lines = [ln for ln in out.read_text(encoding="utf-8").splitlines() if ln and not ln.startswith("#")]
    assert lines[0] == f"--index-url {index.default}"
    pins = {m[1]: m[2] for m in (re.fullmatch(r"([a-z0-9-]+)(.*)", ln) for ln in lines[1:]) if m}
    assert pins.keys() == LOCKED.keys()
    assert pins["torch"].startswith(f" @ {index.pytorch}/cu126/torch/torch-2.14.1+cu126-")
    assert all(" --hash=sha256:" in rest for rest in pins.values())

    python = make_venv(tmp_path / "venv")
    done = _pip(python, env, "--require-hashes", "-r", str(out))
    assert done.returncode == 0, done.stderr
    assert {k: v for k, v in installed(python, env).items() if k != "pip"} == LOCKED

    torch_hash = pins["torch"].rsplit("--hash=sha256:", 1)[1]
    changed = _tampered(out, torch_hash, tmp_path)
    fresh = make_venv(tmp_path / "refuses")
    before = tree(_site_packages(fresh))
    refused = _pip(fresh, env, "--require-hashes", "-r", str(changed))
    assert refused.returncode != 0
    assert "THESE PACKAGES DO NOT MATCH THE HASHES" in refused.stderr and "torch" in refused.stderr
    assert tree(_site_packages(fresh)) == before


def test_wheelfit_installs_the_requirements_file_its_own_lock_wrote_in_hash_checking_mode(
    index: Index, env: dict[str, str], tmp_path: Path
) -> None:
    """``wheelfit lock -o requirements.txt`` then ``wheelfit install -r requirements.txt``: every line hash-checked
    by the backend; the torch family's lines are the plan's files (their metadata read from the index, nothing
    downloaded by wheelfit); one changed hash is refused and nothing is installed."""
    out = tmp_path / "requirements.txt"
    assert _lock(index, env, out, "--target", PASCAL).returncode == 0
    python = make_venv(tmp_path / "venv")
    args = ["install", "-r", str(out), "--target", PASCAL, "--pytorch-index", index.pytorch, "--no-verify"]
    done = run_wheelfit([*args, "--python", str(python), "--json"], env)
    assert done.returncode == 0, done.stderr
    assert installed(python, env) == LOCKED
    assert not list(Path(env["WHEELFIT_CACHE_DIR"]).glob("by-sha256/*"))

    torch_line = next(ln for ln in out.read_text(encoding="utf-8").splitlines() if ln.startswith("torch @"))
    changed = _tampered(out, torch_line.rsplit("--hash=sha256:", 1)[1], tmp_path)
    fresh = make_venv(tmp_path / "refuses")
    before = tree(_site_packages(fresh))
    refused = run_wheelfit([*args[:1], "-r", str(changed), *args[3:], "--python", str(fresh)], env)
    assert refused.returncode == 1
    assert "sha256 mismatch: expected" in error_line(refused.stderr)  # read by wheelfit, not the index's file
    assert tree(_site_packages(fresh)) == before


def test_several_targets_give_one_lock_each_in_one_run(index: Index, env: dict[str, str], tmp_path: Path) -> None:
    done = _lock(index, env, tmp_path / "pylock.toml", "--target", PASCAL, "--target", ADA)
    assert done.returncode == 0, done.stderr
    assert not (tmp_path / "pylock.toml").exists()
    gtx = tomlkit.parse((tmp_path / "pylock.cu126.toml").read_text()).unwrap()
    rtx = tomlkit.parse((tmp_path / "pylock.cu130.toml").read_text()).unwrap()
    versions = [{p["name"]: p["version"] for p in lock["packages"]}["torch"] for lock in (gtx, rtx)]
    assert versions == ["2.14.1+cu126", "2.15.0+cu130"]
    assert [lock["tool"]["wheelfit"]["target"] for lock in (gtx, rtx)] == [PASCAL, ADA]

    python = make_venv(tmp_path / "venv")
    synced = _uv_pip(python, tmp_path / "pylock.cu130.toml", env)
    assert synced.returncode == 0, synced.stderr
    assert installed(python, env)["torch"] == "2.15.0+cu130"


def test_without_a_torch_family_request_the_lock_holds_only_what_the_rest_needs_from_the_plans_index(
    index: Index, env: dict[str, str], tmp_path: Path
) -> None:
    """``needstriton`` alone needs triton, which the default index squats at 99.0: the lock takes the planned
    build's Triton from the PyTorch index, and no torch; ``smallnum`` alone gets no torch-family file at all."""
    argv = ["--target", PASCAL, "--pytorch-index", index.pytorch, "--index-url", index.default]
    done = run_wheelfit(["lock", "needstriton", *argv, "-o", str(tmp_path / "a" / "pylock.toml")], env)
    assert done.returncode == 0, done.stderr
    assert "(cu126: triton 3.5.1)" in done.stdout
    data = tomlkit.parse((tmp_path / "a" / "pylock.toml").read_text()).unwrap()
    assert {p["name"]: (p["version"], p["index"]) for p in data["packages"]} == {
        "needstriton": ("1.0", index.default),
        "triton": ("3.5.1", f"{index.pytorch}/cu126"),
    }
    python = make_venv(tmp_path / "venv")
    synced = _uv_pip(python, tmp_path / "a" / "pylock.toml", env)
    assert synced.returncode == 0, synced.stderr
    assert installed(python, env) == {"needstriton": "1.0", "triton": "3.5.1"}

    done = run_wheelfit(["lock", "smallnum", *argv, "-o", str(tmp_path / "b" / "pylock.toml")], env)
    assert done.returncode == 0, done.stderr
    assert "Locked 1 package for cu126 (cu126: no torch-family package)" in done.stdout
    data = tomlkit.parse((tmp_path / "b" / "pylock.toml").read_text()).unwrap()
    assert [p["name"] for p in data["packages"]] == ["smallnum"]


def test_usage_errors_exit_2_and_write_nothing(index: Index, env: dict[str, str], tmp_path: Path) -> None:
    wrong_name = run_wheelfit(["lock", "torch", "--pytorch-index", index.pytorch, "-o", str(tmp_path / "x.toml")], env)
    assert wrong_name.returncode == 2
    assert "pylock.toml or pylock.<name>.toml" in error_line(wrong_name.stderr)
    direct = run_wheelfit(
        [
            "lock",
            f"torch @ {index.pytorch}/cu126/torch/torch-2.14.1+cu126-py3-none-any.whl",
            "-o",
            str(tmp_path / "pylock.toml"),
        ],
        env,
    )
    assert direct.returncode == 2
    assert "give torch by name and version" in error_line(direct.stderr)
    assert list(tmp_path.iterdir()) == []
