"""Fuzz targets: simple-repository project pages, PEP 503 HTML and PEP 691 JSON (``wheelfit.simple.links``), and
the METADATA reader of the install set (``wheelfit.install.install_set.parse_metadata``) (issue 15).

Contract: ``parse_page``, ``parse_html`` and ``parse_json`` return a :class:`ProjectPage` or raise
``IndexPageError`` (a ``WheelfitError``), never anything else. Every link they return is safe to use: its file
name is one plain path component, its URL is http(s) without a fragment, its hashes are lower-case hex digests
of the length their algorithm gives, its size is not negative. ``parse_metadata`` returns a value or raises
one-line ``InstallError``.
"""

from __future__ import annotations

import hashlib
import json
from urllib.parse import urlsplit

from hypothesis import example, given
from hypothesis import strategies as st
from packaging.requirements import Requirement

from wheelfit.install.errors import InstallError
from wheelfit.install.install_set import parse_metadata
from wheelfit.simple import FileLink, IndexPageError, parse_html, parse_json
from wheelfit.simple.links import HTML_TYPES, JSON_TYPE, ProjectPage, parse_page

from .strategies import binary_text, mutated_json, near_valid, texts

PAGE = "https://download.pytorch.org/whl/cu128/torch/"
SHA = hashlib.sha256(b"wheel").hexdigest()
META = hashlib.sha256(b"metadata").hexdigest()
T28 = "torch-2.8.0%2Bcu128-cp312-cp312-manylinux_2_28_x86_64.whl"
#: As download.pytorch.org serves them (tests/index/test_links.py), and PyPI's PEP 691 form.
HTML = [
    f"""<!DOCTYPE html>
<html><head><meta name="pypi:repository-version" content="1.1"><base href="/whl/cu128/"></head>
<body><h1>Links for torch</h1>
<a href="/whl/cu128/{T28}#sha256={SHA}"
   data-dist-info-metadata="sha256={META}" data-core-metadata="sha256={META}">{T28}</a><br/>
<a href="https://download-r2.pytorch.org/whl/cu128/torch-2.11.0%2Bcu128-cp310-cp310-manylinux_2_28_x86_64.whl"
   data-core-metadata="true">torch-2.11.0</a><br/>
<a href="../networkx-3.3-py3-none-any.whl#egg=x" data-requires-python="&gt;=3.10"
   data-yanked="">networkx-3.3-py3-none-any.whl</a>
<a href="numpy-2.1.0.tar.gz#md5=0123456789abcdef0123456789abcdef" data-yanked="broken">numpy</a>
</body></html>
<!--TIMESTAMP 1700000000-->""",
]
JSON = [
    json.dumps(
        {
            "meta": {"api-version": "1.1", "_last-serial": 1},
            "name": "torch",
            "files": [
                {
                    "filename": "torch-2.8.0+cu128-cp312-cp312-manylinux_2_28_x86_64.whl",
                    "url": f"/whl/cu128/{T28}",
                    "hashes": {"sha256": SHA, "whirlpool": "00"},
                    "requires-python": ">=3.9",
                    "core-metadata": {"sha256": META},
                    "size": 900000000,
                    "yanked": False,
                },
                {
                    "filename": "torch-2.7.0-cp312-none-macosx_11_0_arm64.whl",
                    "url": "https://files.example/torch-2.7.0-cp312-none-macosx_11_0_arm64.whl#sha256=x",
                    "hashes": {},
                    "dist-info-metadata": True,
                    "yanked": "bad build",
                },
            ],
        },
        indent=1,
    )
]
CONTENT_TYPES = st.sampled_from(
    [JSON_TYPE, *HTML_TYPES, "text/html; charset=latin-1", "text/html; charset=utf-16", 'text/html; charset="x"', ""]
)


def _check(page: ProjectPage) -> None:
    assert page.url == PAGE and page.source in ("html", "json")
    for link in page.links:
        _check_link(link)


def _check_link(link: FileLink) -> None:
    name = link.filename
    assert name not in ("", ".", "..") and not any(c in name for c in "/\\%"), link
    assert not any(ord(c) < 32 or ord(c) == 127 for c in name), link
    parts = urlsplit(link.url)
    assert parts.scheme in ("http", "https") and parts.netloc and "#" not in link.url, link
    digests = [link.hashes, link.core_metadata if isinstance(link.core_metadata, dict) else {}]
    for hashes in digests:
        for algorithm, digest in hashes.items():
            size = hashlib.new(algorithm).digest_size * 2
            assert len(digest) == size and all(c in "0123456789abcdef" for c in digest), link
    assert link.size is None or link.size >= 0, link
    assert link.requires_python is None or isinstance(link.requires_python, str)


@given(texts(HTML) | binary_text())
@example("<![x[ ]]>")
@example("<A HREF=HTTP:0>")  # found by HYPOTHESIS_PROFILE=fuzz: a URL without a host
@example('<a href="http://[::1/x-1-py3-none-any.whl">x</a>')
@example('<base href="http://[x"><a href="x-1-py3-none-any.whl">x</a>')
@example('<a href="x.whl#sha256=%s">x</a>' % ("A" * 64))
def test_an_html_page_is_links_or_an_index_page_error(text: str) -> None:
    try:
        page = parse_html(text, PAGE)
    except IndexPageError as exc:
        assert str(exc).startswith(PAGE) and "\n" not in str(exc)
        return
    _check(page)


@given(mutated_json([json.loads(j) for j in JSON]) | texts(JSON) | binary_text())
@example("[" * 5000)
@example('{"meta": {"api-version": "1.0"}, "files": [{"filename": "a.whl", "url": "http://[x/a.whl", "hashes": {}}]}')
@example('{"meta": {"api-version": "1.0"}, "files": [], "x": 1%s}' % ("0" * 5000))
@example('{"meta": {"api-version": "1.0"}, "files": [{"filename": "a.whl", "url": "a.whl", "hashes": {"sha256": 1}}]}')
def test_a_json_page_is_links_or_an_index_page_error(text: str) -> None:
    try:
        page = parse_json(text, PAGE)
    except IndexPageError as exc:
        assert str(exc).startswith(PAGE) and "\n" not in str(exc)
        return
    _check(page)


@given(st.one_of(near_valid(HTML), near_valid(JSON)).map(str.encode) | st.binary(max_size=600), CONTENT_TYPES)
@example(b"\xff\xfe<\x00a\x00", "text/html; charset=utf-16")
@example(b"<a>", "text/html; charset=\x00")
def test_any_response_is_a_page_or_an_index_page_error(body: bytes, content_type: str) -> None:
    try:
        page = parse_page(body, content_type, PAGE)
    except IndexPageError:
        return
    _check(page)


METADATA = [
    "Metadata-Version: 2.1\nName: torch\nVersion: 2.8.0+cu128\nRequires-Python: >=3.9.0\n"
    'Requires-Dist: filelock\nRequires-Dist: nvidia-cuda-runtime-cu12==12.8.90; platform_system == "Linux"\n'
    'Requires-Dist: triton==3.4.0; platform_system == "Linux" and platform_machine == "x86_64"\n'
    'Provides-Extra: opt-einsum\nRequires-Dist: opt-einsum>=3.3; extra == "opt-einsum"\n\nThe description.\n',
]


@given(near_valid(METADATA).map(str.encode) | st.binary(max_size=400))
@example(b"Name: \xff\nVersion: \xfe\n")
@example(b"Name: torch\nVersion: 2.8.0\nRequires-Dist: \xff\xfe[\n")
@example(b"Name: torch\nVersion: 2.8.0\nProvides-Extra: \xe9\n")
@example(b"Name: torch\nVersion: 1" + b"0" * 5000 + b"\n")
def test_metadata_is_read_or_refused_in_one_line(raw: bytes) -> None:
    """The install set's reader of PEP 658 files and wheels' METADATA: a value, or one InstallError line."""
    link = FileLink("torch-2.8.0-py3-none-any.whl", "https://download.pytorch.org/whl/torch-2.8.0-py3-none-any.whl")
    try:
        meta = parse_metadata(raw, link)
    except InstallError as exc:
        assert "\n" not in str(exc) and len(str(exc)) < 600, str(exc)
        return
    assert meta.link == link and all(isinstance(r, Requirement) for r in meta.requires)
