"""Knowledge base 1.2: ``platform_ends`` (macOS x86_64's last series, 2.2, from PyPI's wheel list and
pytorch/pytorch#114602) and ``elsewhere`` (Jetson: NVIDIA's wheels), read and checked by the loader."""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path
from typing import Any

import pytest
from packaging.version import Version

from wheelfit.kb.matrix import KnowledgeError, load_knowledge

from ..conftest import ROOT

DATA = ROOT / "src" / "wheelfit" / "kb" / "data" / "pytorch.json"


def test_macos_x86_64_ends_with_2_2_2_and_its_builds_are_the_pypi_wheels() -> None:
    kb = load_knowledge()
    end = kb.platform_ends["macos_x86_64"]
    assert end.last_version == Version("2.2.2") and end.source == "MAC-X86"
    assert "114602" in kb.sources[end.source]
    release = end.release
    assert release is not None and release.versions == tuple(Version(v) for v in ("2.2.0", "2.2.1", "2.2.2"))
    builds = release.platforms["macos_x86_64"]
    assert (builds.platform_tag, builds.min_macos, builds.mps_min_macos) == (
        "macosx_10_9_x86_64",
        Version("10.9"),
        None,
    )
    assert release.python_tags == ("cp38", "cp39", "cp310", "cp311", "cp312")
    assert release.companions[Version("2.2.2")].requirement("torchvision") == "torchvision==0.17.2"
    # The matrix's releases stay whole (every one publishes every platform); the last series is added per platform.
    assert "2.2" not in kb.releases
    assert [r.name for r in kb.releases_for("macos_x86_64")] == ["2.2"]
    assert "2.2" not in [r.name for r in kb.releases_for("linux_x86_64")]


def test_jetson_builds_are_elsewhere_with_a_public_source() -> None:
    kb = load_knowledge()
    jetson = kb.elsewhere["jetson"]
    assert jetson.url.startswith("https://docs.nvidia.com/") and "developer.download.nvidia.com" in jetson.note
    assert "install-pytorch-jetson-platform" in kb.sources[jetson.source]


def broken(tmp_path: Path, change: Any) -> Path:
    data = json.loads(DATA.read_text(encoding="utf-8"))
    edited = copy.deepcopy(data)
    change(edited)
    path = tmp_path / "pytorch.json"
    path.write_text(json.dumps(edited), encoding="utf-8")
    return path


def _other_platform(d: dict[str, Any]) -> None:
    rel = d["platform_ends"]["macos_x86_64"]["release"]
    rel["platforms"]["macos_arm64"] = d["releases"]["2.5"]["platforms"]["macos_arm64"]


def _last_not_listed(d: dict[str, Any]) -> None:
    d["platform_ends"]["macos_x86_64"]["last_version"] = "2.2.3"


def _not_ended(d: dict[str, Any]) -> None:
    d["releases"]["2.5"]["platforms"]["macos_x86_64"] = d["platform_ends"]["macos_x86_64"]["release"]["platforms"][
        "macos_x86_64"
    ]


def _plain_http(d: dict[str, Any]) -> None:
    d["elsewhere"]["jetson"]["url"] = "http://example.com/"


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (_other_platform, "platform_ends.macos_x86_64.release: must list the platform macos_x86_64 alone"),
        (_last_not_listed, "'last_version' 2.2.3 is not one of its versions"),
        (_not_ended, "releases 2.5 publish macos_x86_64: it has not ended"),
        (_plain_http, "elsewhere.jetson.url: 'http://example.com/' does not match '^https://'"),
    ],
)
def test_a_broken_entry_is_one_line_naming_it(tmp_path: Path, change: Any, message: str) -> None:
    with pytest.raises(KnowledgeError, match=re.escape(message)):
        load_knowledge(broken(tmp_path, change))
