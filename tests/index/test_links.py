"""Parsing project pages: PEP 503 HTML and PEP 691 JSON give the same links; malformed pages fail clearly."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from tests.support import StartServer
from tests.support.index_server import Faults
from tests.support.wheels import make_torch_like, make_wheel
from wheelfit.fetch import Cache, make_client
from wheelfit.index.client import IndexClient
from wheelfit.simple import FileLink, IndexPageError, OfflineError, parse_html, parse_json

PAGE = "https://download.pytorch.org/whl/cu128/torch/"
SHA = "a" * 64
META = "b" * 64


def _tree(root: Path) -> dict[str, Path]:
    return {
        "cu126": make_torch_like(root / "pytorch" / "cu126", "2.8.0", "cu126"),
        "old": make_torch_like(root / "pytorch" / "cu126", "2.7.1", "cu126"),
        "demo": make_wheel(root / "pytorch" / "cu126", "demo", "1.0", requires_python=">=3.9,<4"),
    }


def _comparable(link: FileLink) -> tuple[object, ...]:
    return (link.filename, link.url, dict(link.hashes), link.requires_python, link.yanked, link.core_metadata)


def test_html_and_json_pages_give_the_same_links(tmp_path: Path, index_server: StartServer) -> None:
    wheels = _tree(tmp_path / "idx")
    yanked = {wheels["old"].name: "broken CUDA libs"}
    both = index_server(tmp_path / "idx", yanked=yanked)
    html_only = index_server(tmp_path / "idx", json=False, yanked=yanked)
    with make_client() as http:
        client = IndexClient(http)
        as_json = client.project_page(both.index_url("pytorch/cu126"), "torch")
        as_html = client.project_page(html_only.index_url("pytorch/cu126"), "torch")
        demo = client.project_page(html_only.index_url("pytorch/cu126"), "demo")

    assert (as_json.source, as_html.source) == ("json", "html")
    # Same files, same attributes; only the host:port differs between the two servers.
    strip = {both.url: "", html_only.url: ""}
    norm = [tuple(_replace_all(str(v), strip) for v in _comparable(link)) for link in as_json.links]
    assert norm == [tuple(_replace_all(str(v), strip) for v in _comparable(link)) for link in as_html.links]

    by_name = {link.filename: link for link in as_html.links}
    assert set(by_name) == {wheels["cu126"].name, wheels["old"].name}
    cu126 = by_name[wheels["cu126"].name]
    assert cu126.hashes == {"sha256": hashlib.sha256(wheels["cu126"].read_bytes()).hexdigest()}
    assert "%2B" in cu126.url and cu126.filename == "torch-2.8.0+cu126-py3-none-any.whl"
    assert by_name[wheels["old"].name].yanked == "broken CUDA libs"
    assert cu126.yanked is None
    assert isinstance(cu126.core_metadata, dict) and set(cu126.core_metadata) == {"sha256"}
    assert demo.links[0].requires_python == ">=3.9,<4"  # HTML-escaped on the page, unescaped here
    assert [link.size for link in as_json.links] == [wheels[k].stat().st_size for k in ("old", "cu126")]


def _replace_all(text: str, mapping: dict[str, str]) -> str:
    for old, new in mapping.items():
        text = text.replace(old, new)
    return text


def test_content_negotiation_prefers_json_and_falls_back_to_html(tmp_path: Path, index_server: StartServer) -> None:
    _tree(tmp_path / "idx")
    servers = {
        "both": index_server(tmp_path / "idx"),
        "html": index_server(tmp_path / "idx", json=False),
        "json": index_server(tmp_path / "idx", html=False),
    }
    with make_client() as http:
        client = IndexClient(http)
        sources = {k: client.project_page(s.index_url("pytorch/cu126"), "torch").source for k, s in servers.items()}
        raw = http.get(servers["json"].index_url("pytorch/cu126") + "/torch/", headers={"Accept": "text/html"})
    assert sources == {"both": "json", "html": "html", "json": "json"}
    accept = servers["both"].requests[0].headers["accept"]
    assert accept.startswith("application/vnd.pypi.simple.v1+json")
    assert raw.status_code == 406  # the server really negotiates, so the client's header is what decided


def test_pytorch_style_page_with_cross_host_links_and_missing_fragments() -> None:
    t28 = "torch-2.8.0+cu128-cp312-cp312-manylinux_2_28_x86_64.whl"
    t211 = "torch-2.11.0+cu128-cp310-cp310-manylinux_2_28_x86_64.whl"
    html = f"""<!DOCTYPE html>
<html><body><h1>Links for torch</h1>
<a href="/whl/cu128/{t28.replace("+", "%2B")}#sha256={SHA}"
   data-dist-info-metadata="sha256={META}" data-core-metadata="sha256={META}">{t28}</a><br/>
<a href="https://download-r2.pytorch.org/whl/cu128/{t211.replace("+", "%2B")}"
   data-core-metadata="sha256={META}">{t211}</a><br/>
<a href="../networkx-3.3-py3-none-any.whl#egg=x" data-requires-python="&gt;=3.10"
   data-yanked="">networkx-3.3-py3-none-any.whl</a>
</body></html>
<!--TIMESTAMP 1700000000-->"""
    page = parse_html(html, PAGE)
    first, second, third = page.links
    assert first == FileLink(
        filename="torch-2.8.0+cu128-cp312-cp312-manylinux_2_28_x86_64.whl",
        url="https://download.pytorch.org/whl/cu128/torch-2.8.0%2Bcu128-cp312-cp312-manylinux_2_28_x86_64.whl",
        hashes={"sha256": SHA},
        core_metadata={"sha256": META},
    )
    assert second.url.startswith("https://download-r2.pytorch.org/") and second.hashes == {}
    assert third.url == "https://download.pytorch.org/whl/cu128/networkx-3.3-py3-none-any.whl"
    assert (third.hashes, third.requires_python, third.yanked, third.core_metadata) == ({}, ">=3.10", "", False)
    assert page.api_version == "1.0" and page.warnings == ()


def test_legacy_dist_info_metadata_key_is_a_fallback_only() -> None:
    html = f'<a href="a-1-py3-none-any.whl" data-dist-info-metadata="sha256={META}">a</a>'
    both = f'<a href="a-1-py3-none-any.whl" data-dist-info-metadata="true" data-core-metadata="sha256={SHA}">a</a>'
    assert parse_html(html, PAGE).links[0].core_metadata == {"sha256": META}
    assert parse_html(both, PAGE).links[0].core_metadata == {"sha256": SHA}
    entry = {"filename": "a-1.whl", "url": "a-1.whl", "hashes": {}, "dist-info-metadata": True, "yanked": True}
    data = {"meta": {"api-version": "1.0"}, "files": [entry]}
    link = parse_json(json.dumps(data), PAGE).links[0]
    assert (link.core_metadata, link.yanked, link.hashes) == (True, "", {})


@pytest.mark.parametrize(
    ("html", "message"),
    [
        ('<a href="x-1-py3-none-any.whl#sha256=nothex">x</a>', "not a 64-digit hex digest"),
        ("<a>x-1-py3-none-any.whl</a>", "has no href"),
        ('<a href="x-1-py3-none-any.whl#sha256=' + SHA, "ends inside a tag"),
        ('<a href="..%2F..%2Fevil.whl">x</a>', "not a single safe path component"),
        ('<a href="%252e%252e%252fevil.whl">x</a>', "not a single safe path component"),
        ('<a href="javascript:alert(1)">x</a>', r"not an http\(s\) URL"),
        ('<a href="x.whl" data-core-metadata="sha256">x</a>', "neither 'true' nor"),
        ('<meta name="pypi:repository-version" content="2.0"><a href="x.whl">x</a>', "not supported"),
    ],
)
def test_malformed_html_is_a_one_line_error_naming_the_page(html: str, message: str) -> None:
    with pytest.raises(IndexPageError, match=message) as info:
        parse_html(html, PAGE)
    assert PAGE in str(info.value) and "\n" not in str(info.value)


def test_newer_minor_api_version_only_warns() -> None:
    page = parse_html('<meta name="pypi:repository-version" content="1.99"><a href="x.whl">x</a>', PAGE)
    assert len(page.links) == 1 and "1.99" in page.warnings[0]


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("{not json", "not valid JSON"),
        ('{"files": []}', "no meta.api-version"),
        ('{"meta": {"api-version": "1.0"}}', "no 'files' list"),
        ('{"meta": {"api-version": "1.0"}, "files": [{"filename": "a.whl", "url": "a.whl"}]}', "'hashes' object"),
        (
            '{"meta": {"api-version": "1.0"}, "files": [{"filename": "a.whl", "url": "a.whl", "hashes": {}, '
            '"size": "12"}]}',
            "'size' is not",
        ),
        (
            '{"meta": {"api-version": "1.0"}, "files": [{"filename": "../a.whl", "url": "a.whl", "hashes": {}}]}',
            "safe path",
        ),
    ],
)
def test_malformed_json_is_a_one_line_error(body: str, message: str) -> None:
    with pytest.raises(IndexPageError, match=message):
        parse_json(body, PAGE)


@pytest.mark.parametrize("html", [True, False])
def test_malformed_page_from_the_server_fails_and_is_not_cached(
    tmp_path: Path, index_server: StartServer, html: bool
) -> None:
    _tree(tmp_path / "idx")
    server = index_server(tmp_path / "idx", json=not html, faults=Faults(malformed={"torch"}))
    cache = Cache(tmp_path / "cache")
    with make_client() as http:
        with pytest.raises(IndexPageError, match="truncated or malformed" if html else "not valid JSON"):
            IndexClient(http, cache).project_page(server.index_url("pytorch/cu126"), "torch")
        with pytest.raises(OfflineError):
            IndexClient(http, cache, offline=True).project_page(server.index_url("pytorch/cu126"), "torch")
        server.faults.malformed = ()
        page = IndexClient(http, cache).project_page(server.index_url("pytorch/cu126"), "torch")
    assert len(page.links) == 2


def test_the_digest_lengths_are_hashlibs() -> None:
    """Pages are checked without loading OpenSSL, against lengths written out; they are hashlib's guaranteed
    algorithms (the fixed-length ones) and their digest sizes."""
    from wheelfit.simple.links import HEX_DIGITS

    fixed = set(hashlib.algorithms_guaranteed) - {"shake_128", "shake_256"}
    assert {name: hashlib.new(name).digest_size * 2 for name in fixed} == HEX_DIGITS
