"""Indexes on disk (air-gapped mirrors): ``--pytorch-index`` / ``--index-url`` as a directory or ``file://`` URL,
read without any network, and how a local default index is handed to uv and pip."""

from __future__ import annotations

import hashlib
import json
import subprocess
from pathlib import Path

import pytest

from tests.conftest import hermetic_env
from tests.support.inprocess import wheelfit_in_process
from tests.support.wheels import make_torch_like, make_wheel
from wheelfit.errors import UsageError
from wheelfit.fetch.cache import Cache
from wheelfit.index.client import IndexClient
from wheelfit.index.config import IndexConfigError, resolve_index_config
from wheelfit.index.local import BackendIndex, backend_index, resolve_find_links
from wheelfit.simple.errors import IndexPageError, ProjectNotFoundError

RTX_4090 = "cuda=8.9,driver=580.95.05"
GTX_1080 = "cuda=6.1,driver=580.95.05"


def _mirror(root: Path) -> Path:
    """``<root>/<variant>/<project>/*.whl`` as download.pytorch.org lays it out: plain files, no index.html."""
    for variant, versions in {"cu126": ["2.14.1"], "cu130": ["2.14.1", "2.15.0"], "cpu": ["2.15.0"]}.items():
        for version in versions:
            make_torch_like(root / variant / "torch", version, variant)
    return root


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _snapshot(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): _sha256(p) if p.is_file() else "dir" for p in sorted(root.rglob("*"))}


def _plan(args: list[str], cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return wheelfit_in_process(["plan", "torch", *args], hermetic_env(), cwd=cwd)


def _offline_client(tmp_path: Path) -> IndexClient:
    """An offline client: whatever it reads comes from disk, never from a network."""
    return IndexClient(None, Cache(tmp_path / "cache"), offline=True)


def test_a_project_directory_is_its_page(tmp_path: Path) -> None:
    mirror = _mirror(tmp_path / "mirror")
    (mirror / "cu130" / "torch" / "notes.txt").write_text("not a distribution")
    page = _offline_client(tmp_path).project_page(mirror.as_uri() + "/cu130", "torch")
    assert [link.filename for link in page.links] == [
        "torch-2.14.1+cu130-py3-none-any.whl",
        "torch-2.15.0+cu130-py3-none-any.whl",
    ]
    assert page.links[0].url == (mirror / "cu130/torch/torch-2.14.1+cu130-py3-none-any.whl").as_uri()
    assert page.links[0].hashes == {}  # computed when installing
    with pytest.raises(ProjectNotFoundError):
        _offline_client(tmp_path).project_page(mirror.as_uri() + "/cu999", "torch")


def test_an_index_html_in_a_project_directory_is_read_as_pep_503(tmp_path: Path) -> None:
    mirror = _mirror(tmp_path / "mirror")
    project = mirror / "cu130" / "torch"
    wheel = project / "torch-2.14.1+cu130-py3-none-any.whl"
    href = "torch-2.14.1%2Bcu130-py3-none-any.whl"
    (project / "index.html").write_text(f'<html><body><a href="{href}#sha256={_sha256(wheel)}">x</a></body></html>')
    page = _offline_client(tmp_path).project_page(mirror.as_uri() + "/cu130", "torch")
    assert [(link.filename, link.url, dict(link.hashes)) for link in page.links] == [
        (wheel.name, wheel.as_uri(), {"sha256": _sha256(wheel)})
    ]
    # A file: link inside a local page is refused as on any index page: relative links (or http) only.
    (project / "index.html").write_text(f'<a href="{wheel.as_uri()}">x</a>')
    with pytest.raises(IndexPageError, match="not an http"):
        _offline_client(tmp_path).project_page(mirror.as_uri() + "/cu130", "torch")


def test_index_options_take_directories_and_file_urls(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    mirror = _mirror(tmp_path / "mirror")
    (tmp_path / "wheels").mkdir()
    monkeypatch.chdir(tmp_path)
    config = resolve_index_config({"WHEELFIT_PYTORCH_INDEX": "mirror"}, index_url=str(tmp_path / "wheels") + "/")
    assert config.pytorch_base == mirror.resolve().as_uri()
    assert config.default_index == (tmp_path / "wheels").resolve().as_uri()
    assert resolve_index_config({}, pytorch_index=mirror.as_uri() + "/").pytorch_base == mirror.as_uri()
    with pytest.raises(IndexConfigError, match=r"--pytorch-index='/nowhere/whl': no such directory"):
        resolve_index_config({}, pytorch_index="/nowhere/whl")
    with pytest.raises(UsageError, match="another host"):
        resolve_index_config({}, pytorch_index="file://fileserver/whl")


def test_a_local_default_index_is_handed_to_the_backends_as_they_read_it(tmp_path: Path) -> None:
    flat = tmp_path / "flat"
    make_wheel(flat, "smallnum", "1.0")
    tree = tmp_path / "tree"
    make_wheel(tree / "smallnum", "smallnum", "1.0")
    make_wheel(tree / "other", "other", "1.0")
    assert backend_index(flat.as_uri(), ["/more"]) == BackendIndex(flat.as_uri(), True, ("/more", str(flat)))
    # uv and pip read a file:// index only through <project>/index.html: a tree of plain files goes as find-links.
    plain = backend_index(tree.as_uri())
    assert (plain.no_index, plain.find_links) == (True, (str(tree / "other"), str(tree / "smallnum")))
    for project in ("smallnum", "other"):
        (tree / project / "index.html").write_text("<html></html>")
    pages = backend_index(tree.as_uri())
    assert (pages.index_url, pages.no_index, pages.find_links) == (tree.as_uri(), False, ())
    remote = backend_index("https://pypi.org/simple", ["/w"])
    assert (remote.index_url, remote.no_index, remote.find_links) == ("https://pypi.org/simple", False, ("/w",))


def test_find_links_from_the_option_then_uv_then_pip_variables(tmp_path: Path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    b.mkdir()
    env = {"UV_FIND_LINKS": f"{a},{b}", "PIP_FIND_LINKS": f"{b} {a}"}
    assert resolve_find_links(env, [str(b)]) == (str(b),)
    assert resolve_find_links(env) == (str(a), str(b))
    assert resolve_find_links({"PIP_FIND_LINKS": f"{b} {a} https://w.example/links"}) == (
        str(b),
        str(a),
        "https://w.example/links",
    )
    assert resolve_find_links({}) == ()
    with pytest.raises(UsageError, match=r"--find-links='/nowhere': no such directory"):
        resolve_find_links({}, ["/nowhere"])


@pytest.mark.parametrize("form", ["file-url", "directory"])
def test_plan_from_a_mirror_on_disk(tmp_path: Path, form: str) -> None:
    mirror = _mirror(tmp_path / "mirror")
    before = _snapshot(mirror)
    given = mirror.as_uri() if form == "file-url" else "mirror"
    done = _plan(["--target", GTX_1080, "--pytorch-index", given, "--json"], cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    plan = json.loads(done.stdout)
    assert (plan["torch_version"], plan["variant"]) == ("2.14.1", "cu126")
    assert plan["index_url"] == f"{mirror.as_uri()}/cu126"
    assert plan["packages"][0]["url"] == (mirror / "cu126/torch/torch-2.14.1+cu126-py3-none-any.whl").as_uri()
    # A variant directory that is not there is a build that is not on the index, as a 404 is.
    absent = [r for r in plan["rejected"] if r["judge"] == "absent"]
    assert absent and all(f"not on the index ({mirror.as_uri()}/" in r["reason"] for r in absent)
    assert not any("knowledge base alone" in w for w in plan["warnings"])
    assert _snapshot(mirror) == before


def test_plan_follows_a_local_index_html(tmp_path: Path) -> None:
    """cu130 holds 2.15.0 too, but its index.html lists 2.14.1 only: the page is what the index has."""
    mirror = _mirror(tmp_path / "mirror")
    assert (
        json.loads(_plan(["--target", RTX_4090, "--pytorch-index", str(mirror), "--json"]).stdout)["torch_version"]
        == "2.15.0"
    )
    project = mirror / "cu130" / "torch"
    (project / "index.html").write_text('<a href="torch-2.14.1%2Bcu130-py3-none-any.whl">torch</a>\n')
    (mirror / "cpu" / "torch" / "index.html").write_text("<html></html>\n")
    done = _plan(["--target", RTX_4090, "--pytorch-index", str(mirror), "--json"])
    assert done.returncode == 0, done.stderr
    plan = json.loads(done.stdout)
    assert (plan["torch_version"], plan["variant"]) == ("2.14.1", "cu130")


def test_a_missing_mirror_directory_is_a_usage_error(tmp_path: Path) -> None:
    done = _plan(["--target", GTX_1080, "--pytorch-index", str(tmp_path / "nowhere")])
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        f"wheelfit: error: --pytorch-index='{tmp_path / 'nowhere'}': no such directory; give a directory laid out "
        "as an index, a file:// URL of one, or an http(s) URL"
    ]
