"""Air-gapped installs, end to end with uv and pip: the PyTorch index as a directory or ``file://`` URL, the default
index as a directory (PEP 503 tree or flat wheelhouse), and ``--find-links`` wheelhouses.

The install fixtures' index tree (``tests/install/conftest.py``) is on disk as well as served: ``<root>/pytorch``
is laid out as download.pytorch.org (``<variant>/<project>/*.whl``) and ``<root>/default/simple`` is a PEP 503
tree of plain files that holds squatted 99.0 copies of torch-family names.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from functools import partial
from pathlib import Path

import pytest

from tests.support.wheels import make_torch_like, make_wheel

from .conftest import Index, error_line, import_torch, installed, make_venv, run_wheelfit, tree

GTX_1080 = "cuda=6.1,driver=580.95.05"
TORCH = "torch-2.14.1+cu126-py3-none-any.whl"


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _files(root: Path) -> dict[str, str]:
    """Every file under ``root`` with its sha256: the mirror is never written to."""
    return {str(p.relative_to(root)): _sha256(p) for p in sorted(root.rglob("*")) if p.is_file()}


def _wheelhouse(directory: Path, *makers: partial[Path]) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    for make in makers:
        make(directory)
    return directory


def _install(python: Path, env: dict[str, str], *args: str) -> dict[str, object]:
    argv = ["install", "torch", "--target", GTX_1080, "--python", str(python), "--json", *args]
    done = run_wheelfit(argv, env)
    assert done.returncode == 0, done.stderr
    report: dict[str, object] = json.loads(done.stdout)
    return report


def _family(report: dict[str, object]) -> dict[str, dict[str, str]]:
    entries = report["torch_family"]
    assert isinstance(entries, list)
    return {w["name"]: w for w in entries}


def test_uv_installs_from_a_file_url_mirror_and_a_flat_wheelhouse(
    index: Index, env: dict[str, str], tmp_path: Path
) -> None:
    mirror = index.root / "pytorch"
    before = _files(mirror)
    flat = _wheelhouse(tmp_path / "flat", partial(make_wheel, name="smallnum", version="1.0"))
    python = make_venv(tmp_path / "venv")
    report = _install(python, env, "torchvision", "--pytorch-index", mirror.as_uri(), "--index-url", str(flat))
    have = installed(python, env)
    assert (have["torch"], have["torchvision"], have["triton"], have["smallnum"]) == (
        "2.14.1+cu126", "0.29.1+cu126", "3.5.1", "1.0",
    )  # fmt: skip
    assert import_torch(python, env) == ["2.14.1+cu126", "12.6", "None"]
    family = _family(report)
    wheel = mirror / "cu126" / "torch" / TORCH
    assert family["torch"]["url"] == wheel.as_uri()
    assert not family["torch"]["sha256"]  # a plain directory gives no hash, and nothing is downloaded
    assert family["triton"]["url"] == (mirror / "cu126/triton/triton-3.5.1-py3-none-any.whl").as_uri()
    # No copy: the backend reads the mirror's file in place, and nothing was written into the mirror.
    assert not list(Path(env["WHEELFIT_CACHE_DIR"]).rglob(TORCH))
    assert _files(mirror) == before


def test_pip_installs_from_a_bare_directory_mirror_and_a_pep_503_tree(
    index: Index, env: dict[str, str], tmp_path: Path
) -> None:
    """The default index as a tree of plain files, with squatted torch/triton 99.0 in it: they never win."""
    python = make_venv(tmp_path / "venv")
    args = ["--installer", "pip", "--pytorch-index", str(index.root / "pytorch")]
    report = _install(python, env, *args, "--index-url", str(index.root / "default" / "simple"))
    have = installed(python, env)
    assert (have["torch"], have["triton"], have["smallnum"]) == ("2.14.1+cu126", "3.5.1", "1.0")
    assert import_torch(python, env) == ["2.14.1+cu126", "12.6", "None"]
    assert _family(report)["torch"]["url"] == (index.root / "pytorch" / "cu126" / "torch" / TORCH).as_uri()


@pytest.mark.parametrize("installer", ["uv", "pip"])
def test_find_links_supplies_a_default_index_dependency_and_the_planned_torch_wheel(
    index: Index, env: dict[str, str], tmp_path: Path, installer: str
) -> None:
    """The plan is read from the (served) PyTorch index; the wheelhouse has the very file it chose, and smallnum,
    which the (empty) default index does not."""
    house = _wheelhouse(tmp_path / "house", partial(make_wheel, name="smallnum", version="1.0"))
    shutil.copy2(index.root / "pytorch" / "cu126" / "torch" / TORCH, house / TORCH)
    (tmp_path / "empty").mkdir()
    python = make_venv(tmp_path / "venv")
    args = ["--installer", installer, "--pytorch-index", index.pytorch, "--index-url", str(tmp_path / "empty")]
    report = _install(python, env, *args, "--find-links", str(house))
    have = installed(python, env)
    assert (have["torch"], have["triton"], have["smallnum"]) == ("2.14.1+cu126", "3.5.1", "1.0")
    family = _family(report)
    assert family["torch"]["url"] == (house / TORCH).as_uri()
    assert family["triton"]["url"] == f"{index.pytorch}/cu126/triton/triton-3.5.1-py3-none-any.whl"
    notes = report["notes"]
    assert isinstance(notes, list)
    assert [n for n in notes if "wheelhouse" in n] == [
        f"{TORCH}: taken from the wheelhouse {house} (the planned file; the backend checks its sha256)"
    ]


def test_find_links_from_pip_find_links_too(index: Index, env: dict[str, str], tmp_path: Path) -> None:
    house = _wheelhouse(tmp_path / "house", partial(make_wheel, name="smallnum", version="1.0"))
    (tmp_path / "empty").mkdir()
    python = make_venv(tmp_path / "venv")
    args = ["--pytorch-index", str(index.root / "pytorch"), "--index-url", str(tmp_path / "empty")]
    _install(python, {**env, "PIP_FIND_LINKS": str(house)}, *args)
    assert installed(python, env)["smallnum"] == "1.0"


def test_a_torch_wheel_under_another_file_name_in_the_wheelhouse_is_not_used(
    index: Index, env: dict[str, str], tmp_path: Path
) -> None:
    """Same version, another file name (a build tag): not the file the plan chose, so never installed."""
    evil = {"torch/__init__.py": "raise ImportError('the wheelhouse copy')\n"}
    house = _wheelhouse(
        tmp_path / "house",
        partial(make_wheel, name="torch", version="2.14.1+cu126", build="1", files=evil),
        partial(make_wheel, name="torch", version="2.15.0+cu126", files=evil),
        partial(make_wheel, name="triton", version="3.5.1", build="1", files={"triton/__init__.py": "raise 1\n"}),
    )
    python = make_venv(tmp_path / "venv")
    args = ["--pytorch-index", index.pytorch, "--index-url", index.default, "--find-links", str(house)]
    report = _install(python, env, *args)
    family = _family(report)
    assert family["torch"]["url"] == f"{index.pytorch}/cu126/torch/{TORCH}"
    notes = report["notes"]
    assert isinstance(notes, list) and not any("wheelhouse" in n for n in notes)
    assert import_torch(python, env) == ["2.14.1+cu126", "12.6", "None"]
    assert installed(python, env)["torch"] == "2.14.1+cu126"


def _mirror_with_page(index: Index, root: Path, sha256: str) -> Path:
    """cu126 of the fixture index, with an index.html for torch that gives ``sha256``."""
    shutil.copytree(index.root / "pytorch" / "cu126", root / "cu126")
    href = TORCH.replace("+", "%2B")
    (root / "cu126" / "torch" / "index.html").write_text(f'<a href="{href}#sha256={sha256}">{TORCH}</a>\n')
    return root


def test_a_mirror_wheel_whose_hash_is_not_the_index_html_one_is_refused(
    index: Index, env: dict[str, str], tmp_path: Path
) -> None:
    wrong = hashlib.sha256(b"another file").hexdigest()
    mirror = _mirror_with_page(index, tmp_path / "mirror", wrong)
    before = _files(mirror)
    python = make_venv(tmp_path / "venv")
    env_before = tree(python.parent.parent)
    argv = ["install", "torch", "--target", GTX_1080, "--python", str(python), "--pytorch-index", str(mirror)]
    done = run_wheelfit([*argv, "--index-url", index.default], env)
    assert done.returncode == 1, done.stderr
    line = error_line(done.stderr)
    got = _sha256(mirror / "cu126" / "torch" / TORCH)
    # uv checks the index page's sha256 and refuses the file; the environment is as it was
    assert line.startswith("wheelfit: error: uv failed; the environment was left as it was (error: Failed to read")
    assert "Hash mismatch" in line and wrong in line and got in line
    assert tree(python.parent.parent) == env_before
    assert _files(mirror) == before


def test_a_mirror_wheel_that_matches_its_index_html_is_installed(
    index: Index, env: dict[str, str], tmp_path: Path
) -> None:
    mirror = _mirror_with_page(index, tmp_path / "mirror", _sha256(index.root / "pytorch" / "cu126" / "torch" / TORCH))
    python = make_venv(tmp_path / "venv")
    report = _install(python, env, "--pytorch-index", str(mirror), "--index-url", index.default)
    assert _family(report)["torch"]["url"] == (mirror / "cu126" / "torch" / TORCH).as_uri()
    assert installed(python, env)["torch"] == "2.14.1+cu126"


def test_a_wheelhouse_file_that_is_not_the_indexed_file_is_refused(
    index: Index, env: dict[str, str], tmp_path: Path
) -> None:
    """The planned name, other bytes than the index's sha256 says: refused, nothing installed."""
    house = _wheelhouse(
        tmp_path / "house", partial(make_torch_like, version="2.14.1", variant="cu126", requires=["smallnum"])
    )
    python = make_venv(tmp_path / "venv")
    env_before = tree(python.parent.parent)
    argv = ["install", "torch", "--target", GTX_1080, "--python", str(python), "--pytorch-index", index.pytorch]
    done = run_wheelfit([*argv, "--index-url", index.default, "-f", str(house)], env)
    assert done.returncode == 1, done.stderr
    line = error_line(done.stderr)
    assert line.startswith("wheelfit: error: uv failed; the environment was left as it was (error: Failed to read")
    assert "Hash mismatch" in line and TORCH in line
    assert tree(python.parent.parent) == env_before


def test_the_planned_torch_installed_from_a_mirror_is_kept_when_the_index_serves_the_same_build(
    index: Index, env: dict[str, str], tmp_path: Path
) -> None:
    """Installed from a mirror on disk, then planned again from the http index: the same build (name, version,
    label) is kept as it is, not downloaded and reinstalled because its URL differs."""
    python = make_venv(tmp_path / "venv")
    _install(python, env, "--pytorch-index", (index.root / "pytorch").as_uri(), "--index-url", index.default)
    before = tree(tmp_path / "venv")
    report = _install(python, env, "--pytorch-index", index.pytorch, "--index-url", index.default)
    assert (report["installs"], report["removes"]) == ([], [])
    assert "torch" not in _family(report)
    assert tree(tmp_path / "venv") == before
