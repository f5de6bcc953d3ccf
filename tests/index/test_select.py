"""Choosing the file for a requirement: yanked, requires-python, tags, build tags, local variants, ranges."""

from __future__ import annotations

from pathlib import Path

import pytest
from packaging.tags import Tag, parse_tag

from tests.support import StartServer
from tests.support.wheels import make_torch_like, make_wheel
from wheelfit.fetch import make_client
from wheelfit.index.client import IndexClient
from wheelfit.simple import FileLink, NoMatchingFileError, parse_wheel_name, select_wheel

#: A CPython 3.12 Linux x86_64 machine, most preferred first (a short version of packaging.tags.sys_tags()).
TAGS: list[Tag] = [
    *parse_tag("cp312-cp312-manylinux_2_28_x86_64"),
    *parse_tag("cp312-abi3-manylinux_2_28_x86_64"),
    *parse_tag("cp312-none-any"),
    *parse_tag("py3-none-any"),
]


def link(filename: str, **kwargs: object) -> FileLink:
    return FileLink(filename=filename, url=f"https://example.invalid/{filename}", **kwargs)  # type: ignore[arg-type]


def test_higher_build_tag_wins_and_build_tags_parse() -> None:
    files = [
        link("torch-2.10.0-cp312-cp312-manylinux_2_28_x86_64.whl"),
        link("torch-2.10.0-3-cp312-cp312-manylinux_2_28_x86_64.whl"),
        link("torch-2.10.0-2-cp312-cp312-manylinux_2_28_x86_64.whl"),
    ]
    chosen = select_wheel(files, "torch==2.10.0", tags=TAGS, python_version="3.12.4")
    assert chosen.link.filename == "torch-2.10.0-3-cp312-cp312-manylinux_2_28_x86_64.whl"
    assert chosen.wheel.build == (3, "")
    assert {r.filename for r in chosen.rejected} == {files[0].filename, files[2].filename}


def test_wheel_names_with_local_versions_and_build_tags() -> None:
    name = parse_wheel_name("torch-2.8.0+cu126-cp312-cp312-manylinux_2_28_x86_64.whl")
    assert name is not None
    assert (name.name, str(name.version), name.local, name.build) == ("torch", "2.8.0+cu126", "cu126", ())
    tagged = parse_wheel_name("torch-2.10.0-2-cp312-none-macosx_11_0_arm64.whl")
    assert tagged is not None and tagged.build == (2, "") and tagged.local is None
    assert parse_wheel_name("torch-2.10.0.tar.gz") is None
    assert parse_wheel_name("torch-2.10.0-x-cp312-none-any.whl") is None  # a build tag must start with a digit


def test_most_preferred_tag_wins_and_foreign_tags_are_explained() -> None:
    files = [
        link("numpy-2.1.0-py3-none-any.whl"),
        link("numpy-2.1.0-cp312-cp312-manylinux_2_28_x86_64.whl"),
        link("numpy-2.1.0-cp312-cp312-win_amd64.whl"),
    ]
    chosen = select_wheel(files, "numpy==2.1.0", tags=TAGS, python_version="3.12.0")
    assert chosen.link.filename == "numpy-2.1.0-cp312-cp312-manylinux_2_28_x86_64.whl"
    reasons = {r.filename: r.reason for r in chosen.rejected}
    assert "do not fit" in reasons["numpy-2.1.0-cp312-cp312-win_amd64.whl"]


def test_local_variant_pin_picks_that_variant_from_a_flat_page() -> None:
    files = [link(f"torch-2.8.0+{v}-cp312-cp312-manylinux_2_28_x86_64.whl") for v in ("cpu", "cu126", "cu128")]
    chosen = select_wheel(files, "torch==2.8.0+cu126", tags=TAGS, python_version="3.12.0")
    assert chosen.wheel.local == "cu126"


def test_yanked_file_loses_to_any_other_fit_even_with_a_better_tag() -> None:
    files = [
        link("demo-1.0-cp312-cp312-manylinux_2_28_x86_64.whl", yanked="bad build"),
        link("demo-1.0-py3-none-any.whl"),
    ]
    chosen = select_wheel(files, "demo==1.0", tags=TAGS, python_version="3.12.0")
    assert chosen.link.filename == "demo-1.0-py3-none-any.whl" and chosen.warnings == ()
    assert [(r.filename, r.reason) for r in chosen.rejected] == [(files[0].filename, "yanked")]


def test_yanked_file_is_used_for_an_exact_pin_only_with_a_warning() -> None:
    files = [link("demo-1.0-py3-none-any.whl", yanked="broken on 3.12"), link("demo-1.1-py3-none-any.whl")]
    chosen = select_wheel(files, "demo==1.0", tags=TAGS, python_version="3.12.0")
    assert chosen.link.filename == "demo-1.0-py3-none-any.whl"
    assert "yanked: broken on 3.12" in chosen.warnings[0]


def test_requires_python_excludes_files_and_the_error_says_why() -> None:
    files = [
        link("demo-1.0-py3-none-any.whl", requires_python=">=3.13"),
        link("demo-1.0-cp312-none-any.whl", requires_python=">=3.5.*"),  # invalid specifier: never trusted
    ]
    with pytest.raises(NoMatchingFileError) as info:
        select_wheel(files, "demo==1.0", tags=TAGS, python_version="3.12.4")
    message = str(info.value)
    assert "requires Python >=3.13 (target is 3.12.4)" in message and "not a valid specifier" in message
    assert "\n" not in message
    ok = select_wheel(files[:1], "demo==1.0", tags=TAGS, python_version="3.13.0")
    assert ok.link is files[0]


def test_a_range_takes_the_newest_fit_and_never_a_yanked_file() -> None:
    """A torch wheel's METADATA asks for ``triton~=3.9.0``: the newest fitting release that is not yanked."""
    files = [
        link("triton-3.9.0-py3-none-any.whl"),
        link("triton-3.9.3-py3-none-any.whl", yanked=""),
        link("triton-3.9.2-py3-none-any.whl", requires_python=">=3.13"),
        link("triton-3.9.1-cp312-cp312-manylinux_2_28_x86_64.whl"),
        link("triton-3.9.1-py3-none-any.whl"),
        link("triton-3.10.0-py3-none-any.whl"),
    ]
    chosen = select_wheel(files, "triton~=3.9.0", tags=TAGS, python_version="3.12.4")
    assert chosen.link.filename == "triton-3.9.1-cp312-cp312-manylinux_2_28_x86_64.whl" and chosen.warnings == ()
    reasons = {r.filename: r.reason for r in chosen.rejected}
    assert reasons["triton-3.9.3-py3-none-any.whl"].startswith("yanked")
    assert "requires Python >=3.13" in reasons["triton-3.9.2-py3-none-any.whl"]
    assert "triton-3.10.0-py3-none-any.whl" not in reasons  # outside the range: not a candidate at all
    with pytest.raises(NoMatchingFileError, match="yanked"):
        select_wheel(files[1:2], "triton>=3.9.3", tags=TAGS, python_version="3.12.4")


def test_selection_from_a_served_page(tmp_path: Path, index_server: StartServer) -> None:
    root = tmp_path / "idx"
    make_torch_like(root / "whl" / "cu126", "2.8.0", "cu126")
    old = make_torch_like(root / "whl" / "cu126", "2.7.1", "cu126")
    make_wheel(root / "whl" / "cu126", "torch", "2.8.0+cu126", build="1", requires_python=">=3.13")
    server = index_server(root, json=False, yanked={old.name: ""})
    with make_client() as http:
        page = IndexClient(http).project_page(server.index_url("whl/cu126"), "torch")
    chosen = select_wheel(page.links, "torch==2.8.0+cu126", tags=TAGS, python_version="3.12.1")
    # The build-tagged file would win, but its Requires-Python (read from the page) excludes 3.12.
    assert chosen.link.filename == "torch-2.8.0+cu126-py3-none-any.whl"
    assert any("requires Python >=3.13" in r.reason for r in chosen.rejected)
    with pytest.raises(NoMatchingFileError):
        select_wheel(page.links, "torch==2.8.0+cu128", tags=TAGS, python_version="3.12.1")
    assert "yanked" in select_wheel(page.links, "torch==2.7.1+cu126", tags=TAGS, python_version="3.12.1").warnings[0]
