"""Which extension wheel was built for which torch build (:mod:`wheelfit.stack.match`), and reading the listings
(:mod:`wheelfit.stack.sources`): pure, from wheel names as the projects publish them.

The names follow each project's own scheme: flash-attn's publish workflow renames its wheels
``+cu{12,13}torch{M.m}cxx11abi{TRUE,FALSE}`` (Dao-AILab/flash-attention .github/workflows/_build.yml,
``tmpname=cu${WHEEL_CUDA_VERSION}torch${MATRIX_TORCH_VERSION}cxx11abi${{ inputs.cxx11_abi }}``); PyG's are
``+pt{MM}cu{XYZ}`` (data.pyg.org/whl/torch-2.9.0+cu128.html).
"""

from __future__ import annotations

import json
import re
from typing import cast

import pytest
from packaging.requirements import Requirement
from packaging.tags import Tag, cpython_tags
from packaging.version import Version

from wheelfit.errors import UsageError
from wheelfit.index.client import IndexClient
from wheelfit.kb.extensions import extensions
from wheelfit.simple.errors import IndexPageError, ProjectNotFoundError
from wheelfit.simple.links import FileLink, ProjectPage
from wheelfit.stack.match import Fit, Listing, Miss, TorchBuild, pick
from wheelfit.stack.sources import ExtensionSources, read_github_releases, read_mirrors

TAGS: list[Tag] = list(cpython_tags((3, 12), ["cp312"], ["manylinux_2_28_x86_64", "linux_x86_64"]))
LINUX = "cp312-cp312-linux_x86_64"


def links(*names: str) -> Listing:
    return Listing(tuple(FileLink(n, f"https://example.invalid/{n}") for n in names), "a folder")


def build(version: str, variant: str = "cu128", platform: str = "linux_x86_64") -> TorchBuild:
    return TorchBuild(Version(version), variant, platform)


def fa(torch: str, cuda: str = "12", abi: str = "TRUE", version: str = "2.8.3", tag: str = LINUX) -> str:
    return f"flash_attn-{version}+cu{cuda}torch{torch}cxx11abi{abi}-{tag}.whl"


FLASH = links(fa("2.9"), fa("2.9", cuda="13"), fa("2.8"), fa("2.6", abi="FALSE"), fa("2.6", abi="TRUE"),
              fa("2.9", version="2.8.2"), fa("2.9", tag="cp311-cp311-linux_x86_64"))  # fmt: skip


def choose(name: str, listing: Listing, torch: TorchBuild, requirement: str | None = None) -> Fit | Miss:
    return pick(extensions()[name], Requirement(requirement or name), listing, torch, TAGS, "3.12")


def test_flash_attn_takes_the_wheel_of_its_torch_series_cuda_major_abi_and_python() -> None:
    found = choose("flash-attn", FLASH, build("2.9.0"))
    assert isinstance(found, Fit)
    assert found.link.filename == fa("2.9")  # not CUDA 13, not 2.8.2, not cp311
    assert found.built_for == "torch 2.9, CUDA 12, C++11 ABI"
    thirteen = choose("flash-attn", FLASH, build("2.9.1", "cu130"))
    assert isinstance(thirteen, Fit) and thirteen.link.filename == fa("2.9", cuda="13")


def test_the_cxx11_abi_follows_the_torch_build() -> None:
    """2.7 on, every Linux build uses the C++11 ABI; in 2.6 only CUDA 12.6, ROCm 6.2.4 and XPU did."""
    old = choose("flash-attn", FLASH, build("2.6.0", "cu124"))
    new = choose("flash-attn", FLASH, build("2.6.0", "cu126"))
    assert isinstance(old, Fit) and old.link.filename == fa("2.6", abi="FALSE")
    assert isinstance(new, Fit) and new.link.filename == fa("2.6", abi="TRUE")
    assert build("2.8.0").cxx11_abi is True and build("2.8.0", platform="windows_amd64").cxx11_abi is None


def test_no_wheel_for_the_torch_says_which_series_have_one() -> None:
    missed = choose("flash-attn", FLASH, build("2.10.0"))
    assert isinstance(missed, Miss)
    assert missed.series == ("2.9", "2.8", "2.6")
    assert missed.why == (
        "flash-attn has no wheel built for torch 2.10 (cu128: CUDA 12, C++11 ABI, cp312, linux_x86_64); "
        "it has wheels for torch 2.9, 2.8, 2.6"
    )


def test_a_build_without_cuda_has_no_flash_attn_wheel_and_no_series_to_back_off_to() -> None:
    missed = choose("flash-attn", FLASH, build("2.9.0", "rocm6.4"))
    assert isinstance(missed, Miss) and missed.series == ()


def test_the_requirement_narrows_the_versions() -> None:
    found = choose("flash-attn", FLASH, build("2.9.0"), "flash-attn==2.8.2")
    assert isinstance(found, Fit) and found.version == Version("2.8.2+cu12torch2.9cxx11abitrue")
    assert isinstance(choose("flash-attn", FLASH, build("2.9.0"), "flash-attn>=3"), Miss)


def test_pyg_wheels_need_the_exact_variant() -> None:
    pyg = links(f"torch_scatter-2.1.2+pt29cu128-{LINUX}.whl", f"torch_scatter-2.1.2+pt29cu126-{LINUX}.whl",
                f"torch_scatter-2.1.2+pt29cpu-{LINUX}.whl", f"torch_scatter-2.1.2+pt210cu128-{LINUX}.whl")  # fmt: skip
    for variant in ("cu128", "cu126", "cpu"):
        found = choose("torch-scatter", pyg, build("2.9.0", variant))
        assert isinstance(found, Fit) and found.link.filename == f"torch_scatter-2.1.2+pt29{variant}-{LINUX}.whl"
    ten = choose("torch-scatter", pyg, build("2.10.0"))
    assert isinstance(ten, Fit) and "+pt210cu128" in ten.link.filename
    assert choose("torch-scatter", pyg, build("2.9.0", "cu130")) == Miss(
        "torch-scatter", "torch-scatter has no wheel built for torch 2.9 (cu130: CUDA 13, C++11 ABI, cp312, "
        "linux_x86_64)", ()
    )  # every wheel is a CUDA 12 or CPU build: no series has one for CUDA 13
    newer = choose("torch-scatter", pyg, build("2.11.0"))
    assert isinstance(newer, Miss) and newer.series == ("2.10", "2.9")


def test_a_wheel_whose_name_says_nothing_is_taken_only_from_a_page_made_for_the_build() -> None:
    plain = f"mmcv-2.2.0-{LINUX}.whl"
    assert isinstance(choose("mmcv", links(plain), build("2.9.0")), Miss)
    page = Listing(links(plain).links, "https://mirror.invalid/cu128/torch2.9/index.html", per_build=True)
    found = choose("mmcv", page, build("2.9.0"))
    assert isinstance(found, Fit) and found.built_for == "listed for torch 2.9.0+cu128"


def test_yanked_and_other_python_files_are_not_taken() -> None:
    yanked = Listing((FileLink(fa("2.9"), "https://example.invalid/a.whl", yanked=""),), "a page")
    assert isinstance(choose("flash-attn", yanked, build("2.9.0")), Miss)
    old_python = Listing((FileLink(fa("2.9"), "https://example.invalid/a.whl", requires_python=">=3.13"),), "a page")
    assert isinstance(choose("flash-attn", old_python, build("2.9.0")), Miss)


def _release(*assets: dict[str, object], draft: bool = False) -> dict[str, object]:
    return {"tag_name": "v2.8.3", "draft": draft, "assets": list(assets)}


def _asset(name: str, digest: str | None = "sha256:" + "ab" * 32) -> dict[str, object]:
    url = f"https://github.com/Dao-AILab/flash-attention/releases/download/v2.8.3/{name.replace('+', '%2B')}"
    return {"name": name, "browser_download_url": url, "digest": digest, "size": 10}


def test_github_releases_give_wheel_assets_with_their_digest() -> None:
    body = json.dumps([
        _release(_asset(fa("2.9")), _asset("flash_attn-2.8.3.tar.gz"), _asset(fa("2.8"), digest=None)),
        _release(_asset(fa("2.7")), draft=True),
    ]).encode()  # fmt: skip
    found = read_github_releases(body, "https://api.github.com/repos/Dao-AILab/flash-attention/releases")
    assert [(f.filename, dict(f.hashes)) for f in found] == [(fa("2.9"), {"sha256": "ab" * 32}), (fa("2.8"), {})]
    assert found[0].url.endswith("/v2.8.3/flash_attn-2.8.3%2Bcu12torch2.9cxx11abiTRUE-cp312-cp312-linux_x86_64.whl")


@pytest.mark.parametrize(
    ("body", "said"),
    [
        (b"{", "not the GitHub releases API's JSON"),
        (b'{"message": "API rate limit exceeded"}', "expected a list of releases"),
        (b'[{"assets": 3}]', "a release without an assets list"),
        (json.dumps([_release({"name": fa("2.9")})]).encode(), "without a name or browser_download_url"),
        (json.dumps([_release(_asset(fa("2.9"), digest="sha256:zz"))]).encode(), "is not a sha256"),
        (json.dumps([_release({**_asset(fa("2.9")), "browser_download_url": "https://x.invalid/evil.whl"})]).encode(),
         "downloads as another file"),
        (json.dumps([_release({**_asset(fa("2.9")), "browser_download_url": "file:///etc/passwd"})]).encode(),
         "is not an http(s) URL"),
    ],
)  # fmt: skip
def test_a_listing_of_another_shape_is_refused_naming_it(body: bytes, said: str) -> None:
    with pytest.raises(IndexPageError, match=re.escape("https://api.github.com/x")) as caught:
        read_github_releases(body, "https://api.github.com/x")
    assert said in str(caught.value)


def test_mirrors_are_prefix_pairs_of_http_urls() -> None:
    value = "https://data.pyg.org/whl=http://127.0.0.1:9/pyg https://api.github.com=https://gh.mirror.invalid"
    assert read_mirrors(value, "WHEELFIT_MIRROR") == {
        "https://data.pyg.org/whl": "http://127.0.0.1:9/pyg", "https://api.github.com": "https://gh.mirror.invalid"
    }  # fmt: skip
    for bad in ("https://data.pyg.org", "data.pyg.org=http://x", "https://a.b=file:///srv/mirror"):
        with pytest.raises(UsageError, match="WHEELFIT_MIRROR"):
            read_mirrors(bad, "WHEELFIT_MIRROR")


class _Pages:
    """An index client that has find-links pages for some URLs only (what ExtensionSources asks of one)."""

    def __init__(self, pages: dict[str, tuple[str, ...]]) -> None:
        self.pages = pages
        self.asked: list[str] = []

    def find_links_page(self, url: str) -> ProjectPage:
        self.asked.append(url)
        if url not in self.pages:
            raise ProjectNotFoundError(f"{url}: not found")
        return ProjectPage(url, tuple(FileLink(n, f"{url}/{n}") for n in self.pages[url]), "1.0", "html")


def test_a_patch_release_without_a_page_of_its_own_is_read_from_its_series_first_page() -> None:
    scatter = f"torch_scatter-2.1.2+pt29cu128-{LINUX}.whl"
    pages = _Pages({"https://data.pyg.org/whl/torch-2.9.0+cu128.html": (scatter,)})
    sources = ExtensionSources(cast(IndexClient, pages))
    listing = sources.listing(extensions()["torch-scatter"], build("2.9.1"))
    assert listing.where == "https://data.pyg.org/whl/torch-2.9.0+cu128.html" and listing.per_build
    assert [link.filename for link in listing.links] == [scatter]
    assert pages.asked == ["https://data.pyg.org/whl/torch-2.9.1+cu128.html", listing.where]
    mirrored = ExtensionSources(cast(IndexClient, pages), mirrors={"https://data.pyg.org/whl": "https://m.invalid"})
    assert mirrored.listing(extensions()["torch-scatter"], build("2.9.0")).links == ()  # the mirror has no page
    assert pages.asked[-1] == "https://m.invalid/torch-2.9.0+cu128.html"
