"""scripts/kb_release.py: the 2.13 entry derived from its recorded upstream files, against the knowledge base.

The recorded inputs are in ``tests/data/upstream/2.13`` (origin of each in its README.md). Where those files and
pytorch.json disagree, the data is left as it is and the difference is asserted here, with the reason, so that it
stays visible: ``KNOWN_2_13`` below.
"""

from __future__ import annotations

import copy
import importlib.util
import json
import subprocess
import sys
from functools import cache
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from packaging.version import Version

from wheelfit.builds import CudaBuild, RocmBuild
from wheelfit.kb.matrix import Knowledge, load_knowledge

from ..conftest import REALDATA, ROOT

SCRIPT = ROOT / "scripts" / "kb_release.py"
UPSTREAM = Path(__file__).resolve().parents[1] / "data" / "upstream" / "2.13"
PACKAGED = ROOT / "src" / "wheelfit" / "kb" / "data" / "pytorch.json"
SOURCES = [
    "--release",
    "2.13",
    "--build-env",
    str(UPSTREAM / "build-env.json"),
    "--matrix",
    str(UPSTREAM / "matrix.json"),
    "--index-page",
    f"cu130={UPSTREAM / 'whl-cu130-torch.html'}",
]
BASE_TAGS = ["cp310", "cp311", "cp312", "cp313", "cp314", "cp314t"]
PREVIEW_TAGS = ["cp315", "cp315t"]
#: The Linux list as pytorch.json orders tags: plain ones, then free-threaded ones.
LINUX_TAGS = ["cp310", "cp311", "cp312", "cp313", "cp314", "cp315", "cp314t", "cp315t"]

#: Where the recorded upstream files and the knowledge base disagree: (platform, variant, field) -> (kb, upstream).
KNOWN_2_13: dict[tuple[str, str, str], tuple[list[str], list[str]]] = {
    # PTX. The recorded .ci/manywheel/build_env_setup.py (00505f29) emits 12.0+PTX for every CUDA 13 build: its
    # _PTX_ARCHES applies to release wheels too. pytorch/pytorch#188914 (cherry-picked to release/2.13 as #188925,
    # 2026-07-03, before the 2.13 go-live of 2026-07-08) added _ptx_arches(), which drops +PTX from release/RC
    # builds; the recorded version predates it. pytorch.json says no PTX: measured in the 2.13.0 wheel for cu130
    # (M, BM-2.1, which wins), and assumed for cu132 (P, BM-2.2). Primary source for what shipped: the wheel.
    ("linux_x86_64", "cu130", "ptx"): ([], ["120"]),
    ("linux_x86_64", "cu132", "ptx"): ([], ["120"]),
    ("linux_aarch64", "cu130", "ptx"): ([], ["120"]),
    ("linux_aarch64", "cu132", "ptx"): ([], ["120"]),
    # (CPython 3.15: test-infra release/2.13 adds 3.15/3.15t on Linux x86_64 and aarch64 only; pytorch.json now
    # says so too, per platform, so it is no longer a difference.)
}


def run(*args: str, check: int | None = None) -> subprocess.CompletedProcess[str]:
    done = subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True, timeout=60)
    if check is not None:
        assert done.returncode == check, (done.returncode, done.stdout, done.stderr)
    return done


@cache
def load_script() -> ModuleType:
    """The script as a module (scripts/ is not a package), for its rule functions."""
    spec = importlib.util.spec_from_file_location("kb_release", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["kb_release"] = module  # dataclasses look their module up while the class is made
    spec.loader.exec_module(module)
    return module


def difference_line(key: tuple[str, str, str], kb: list[str], upstream: list[str]) -> str:
    def show(value: list[str]) -> str:
        return json.dumps(value, separators=(",", ":"))

    return f"{key[0]} {key[1]} {key[2]} kb={show(kb)} upstream={show(upstream)}"


@pytest.fixture(scope="module")
def kb() -> Knowledge:
    return load_knowledge()


@pytest.fixture(scope="module")
def produced() -> dict[str, Any]:
    fragment: dict[str, Any] = json.loads(run("produce", *SOURCES, check=0).stdout)
    assert set(fragment) == {"sources", "releases"}
    assert set(fragment["releases"]) == {"2.13"}
    entry: dict[str, Any] = fragment["releases"]["2.13"]
    return entry


def test_the_produced_entry_is_pytorch_json_shaped_and_cites_its_files() -> None:
    fragment = json.loads(run("produce", *SOURCES, "--source-key", "UP-2.13", check=0).stdout)
    text = fragment["sources"]["UP-2.13"]
    for origin in ("00505f2920c03ce9ef5407faf4981f3e7288da88", "80178294ea678651dbe5b28b3770ee9b0e1d6521"):
        assert origin in text
    for body in fragment["releases"]["2.13"]["platforms"].values():
        for variant in body["variants"].values():
            assert (variant["confidence"], variant["source"]) == ("P", "UP-2.13")


def test_the_variants_of_each_platform_are_the_knowledge_bases(kb: Knowledge, produced: dict[str, Any]) -> None:
    release = kb.release("2.13")
    assert release is not None
    assert set(produced["platforms"]) == set(release.platforms)
    for name, builds in release.platforms.items():
        advertised = {label for label, v in builds.variants.items() if v.advertised}
        assert set(produced["platforms"][name]["variants"]) == advertised, name


def test_kinds_versions_and_kernel_lists_equal_the_knowledge_base(kb: Knowledge, produced: dict[str, Any]) -> None:
    release = kb.release("2.13")
    assert release is not None
    assert produced["versions"] == [str(v) for v in release.versions] == ["2.13.0"]
    compared = 0
    for name, body in produced["platforms"].items():
        builds = release.platforms[name]
        if "platform_tag" in body:
            assert body["platform_tag"] == builds.platform_tag, name
        for label, derived in body["variants"].items():
            variant = builds.variants[label]
            build = variant.build
            assert derived["kind"] == variant.kind
            assert derived.get("cuda", derived.get("rocm")) == build.toolkit  # the kind already compared
            if not isinstance(build, CudaBuild) or name == "macos_arm64":
                continue
            assert derived["sass"] == sorted(build.sass, key=int), (name, label)
            known = KNOWN_2_13.get((name, label, "ptx"))
            if known is None:
                assert derived["ptx"] == list(build.ptx), (name, label)
            else:  # see KNOWN_2_13: the recorded build file still emits +PTX, the wheel has none
                assert (list(build.ptx), derived["ptx"]) == known, (name, label)
            compared += 1
    assert compared == 9  # cu126, cu130, cu132 on linux_x86_64, linux_aarch64 and windows_amd64


def test_python_tags_per_platform(kb: Knowledge, produced: dict[str, Any]) -> None:
    release = kb.release("2.13")
    assert release is not None
    assert produced["python_tags"] == BASE_TAGS  # every platform
    for name in release.platforms:
        derived = produced["platforms"][name].get("python_tags", produced["python_tags"])
        expected = LINUX_TAGS if name.startswith("linux") else BASE_TAGS
        assert derived == expected, name  # what the matrix says
        known = KNOWN_2_13.get((name, "-", "python_tags"))
        kb_tags = list(release.python_tags_for(release.latest, name))
        if known is None:
            assert set(derived) == set(kb_tags), name
        else:  # see KNOWN_2_13: cp315/cp315t are Linux-only upstream
            assert (kb_tags, derived) == known, name


def test_check_reports_exactly_the_known_differences() -> None:
    done = run("check", *SOURCES, check=1)
    lines = [line.split(" (kb confidence")[0] for line in done.stdout.splitlines()]
    assert sorted(lines) == sorted(difference_line(k, *v) for k, v in KNOWN_2_13.items())
    assert "linux_x86_64 cu130 ptx kb=[] upstream=[\"120\"] (kb confidence M, source BM-2.1)" in done.stdout


def settled_copy(tmp_path: Path) -> tuple[Path, dict[str, Any]]:
    """A copy of the knowledge base with the known differences set to the upstream values."""
    raw: dict[str, Any] = json.loads(PACKAGED.read_text(encoding="utf-8"))
    settled = copy.deepcopy(raw)
    entry = settled["releases"]["2.13"]
    for (platform, variant, field), (_, upstream) in KNOWN_2_13.items():
        target = entry["platforms"][platform]
        if variant != "-":
            target = target["variants"][variant]
        target[field] = upstream
    path = tmp_path / "pytorch.json"
    path.write_text(json.dumps(settled), encoding="utf-8")
    return path, settled


def test_check_exits_0_when_the_knowledge_base_says_what_the_files_say(tmp_path: Path) -> None:
    path, _ = settled_copy(tmp_path)
    done = run("check", *SOURCES, "--kb", str(path), check=0)
    assert done.stdout == ""


def test_check_exits_1_and_names_the_field_when_a_sass_list_differs(tmp_path: Path) -> None:
    path, settled = settled_copy(tmp_path)
    settled["releases"]["2.13"]["platforms"]["linux_aarch64"]["variants"]["cu132"]["sass"] = ["80", "90", "100"]
    path.write_text(json.dumps(settled), encoding="utf-8")
    done = run("check", *SOURCES, "--kb", str(path), check=1)
    assert done.stdout.splitlines() == [
        'linux_aarch64 cu132 sass kb=["80","90","100"] upstream=["80","90","100","110","120"]'
        " (kb confidence P, source BM-2.2-SBSA)"
    ]


def test_a_variant_missing_from_the_knowledge_base_is_a_difference(tmp_path: Path) -> None:
    path, settled = settled_copy(tmp_path)
    del settled["releases"]["2.13"]["platforms"]["windows_amd64"]["variants"]["cu132"]
    path.write_text(json.dumps(settled), encoding="utf-8")
    done = run("check", *SOURCES, "--kb", str(path), check=1)
    assert done.stdout.splitlines() == [
        'windows_amd64 - variants kb=["cpu","cu126","cu130","xpu"] upstream=["cpu","cu126","cu130","cu132","xpu"]'
    ]


@pytest.mark.parametrize("version", ["2.8", "2.9", "2.10"])
def test_published_variants_json_agrees_with_the_knowledge_base(version: str) -> None:
    done = run("check", "--release", version, "--variants-json", str(REALDATA / f"torch-{version}.0-variants.json"))
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")


def test_variants_json_lists(kb: Knowledge) -> None:
    out = json.loads(
        run("produce", "--release", "2.10", "--variants-json", str(REALDATA / "torch-2.10.0-variants.json")).stdout
    )
    variants = out["releases"]["2.10"]["platforms"]["linux_x86_64"]["variants"]
    assert variants["cu130"]["sass"] == ["75", "80", "86", "90", "100", "120"]
    assert variants["cu130"]["ptx"] == ["120"]  # 120_virtual
    rocm = kb.release("2.10")
    assert rocm is not None
    built = rocm.platforms["linux_x86_64"].variants["rocm7.1"].build
    assert isinstance(built, RocmBuild) and set(variants["rocm7.1"]["gfx"]) == set(built.gfx)


# --------------------------------------------------------------------------- the parsing rules


def test_torch_cuda_arch_list_rules() -> None:
    kr = load_script()
    assert kr.parse_arch_list("7.5;8.0;8.6;9.0;10.0;12.0+PTX") == (["75", "80", "86", "90", "100", "120"], ["120"])
    assert kr.parse_arch_list("3.7+PTX 5.0") == (["37", "50"], ["37"])  # blanks separate too, as in CMake
    assert kr.parse_arch_list("8.6(8.0)+PTX") == (["86"], ["80"])  # SASS sm_86 from compute_80, PTX compute_80
    for refused in ("10.0a", "12.0f", "Ampere", "8.6+ptx"):
        with pytest.raises(kr.UpstreamError):
            kr.parse_arch_list(refused)
    assert kr.render_arch_list({120, 86, 75}, {120}) == "7.5;8.6;12.0+PTX"


LINUX_FILE = """
TORCH_CUDA_ARCH_LIST_TABLE: dict[str, dict[str, set[int]]] = {
    "13.0": {"x86_64": {120, 75}, "aarch64": {110, 80}, "s390x": {1}},
}
_PTX_ARCHES: set[int] = {120}
"""
WINDOWS_FILE = 'TORCH_CUDA_ARCH_LIST_TABLE: dict[str, str] = {"126": "5.0;6.1;9.0", "132": "7.5;12.0"}\n'


def test_build_env_tables_and_the_release_ptx_rule(tmp_path: Path) -> None:
    kr = load_script()
    linux, windows = tmp_path / "linux.py", tmp_path / "windows.py"
    linux.write_text(LINUX_FILE, encoding="utf-8")
    windows.write_text(WINDOWS_FILE, encoding="utf-8")
    lists = kr.extract_build_env([linux, windows])["TORCH_CUDA_ARCH_LIST"]
    assert lists == {
        "linux_x86_64": {"13.0": "7.5;12.0+PTX"},
        "linux_aarch64": {"13.0": "8.0;11.0"},
        "windows_amd64": {"12.6": "5.0;6.1;9.0", "13.2": "7.5;12.0"},
    }
    # With _ptx_arches() (pytorch#188914), release builds drop +PTX.
    linux.write_text(LINUX_FILE + "\n\ndef _ptx_arches():\n    return set()\n", encoding="utf-8")
    assert kr.extract_build_env([linux])["TORCH_CUDA_ARCH_LIST"]["linux_x86_64"] == {"13.0": "7.5;12.0"}


def test_upstream_files_are_parsed_never_run(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    hostile = tmp_path / "build_env_setup.py"
    hostile.write_text(
        f"from pathlib import Path\nPath({str(marker)!r}).write_text('x')\n"
        "raise SystemExit(3)\n" + LINUX_FILE + "TORCH_CUDA_ARCH_LIST_TABLE['13.0'] = {}\n",
        encoding="utf-8",
    )
    out = json.loads(run("extract", "build-env", str(hostile), check=0).stdout)
    assert out["TORCH_CUDA_ARCH_LIST"]["linux_x86_64"] == {"13.0": "7.5;12.0+PTX"}
    assert not marker.exists()


def test_the_matrix_rules(tmp_path: Path) -> None:
    matrix = tmp_path / "generate_binary_build_matrix.py"
    matrix.write_text(
        """
PYTHON_ARCHES_DICT = {"nightly": ["3.11"], "release": ["3.10", "3.14t"]}
PREVIEW_PYTHON_ARCHES_DICT = {"release": ["3.15"]}
CUDA_ARCHES_DICT = {"nightly": ["13.4"], "release": ["12.6", "13.0"]}
ROCM_ARCHES_DICT = {"release": ["7.2"]}
CUDA_AARCH64_ARCHES = ["13.0-aarch64"]
CUDA_ARCHES_NO_WINDOWS: list[str] = ["12.6"]
CURRENT_STABLE_VERSION = "2.12.1"
CUDA_ARCHES = CUDA_ARCHES_DICT["nightly"]
""",
        encoding="utf-8",
    )
    done = run("produce", "--release", "2.13", "--matrix", str(matrix), check=0)
    assert "not the release branch at go-live" in done.stderr  # CURRENT_STABLE_VERSION is 2.12.1
    entry = json.loads(done.stdout)["releases"]["2.13"]
    variants = {name: sorted(body["variants"]) for name, body in entry["platforms"].items()}
    assert variants == {
        "linux_x86_64": ["cpu", "cu126", "cu130", "rocm7.2", "xpu"],
        "linux_aarch64": ["cpu", "cu130"],
        "windows_amd64": ["cpu", "cu130", "xpu"],
        "macos_arm64": ["cpu"],
    }
    assert entry["python_tags"] == ["cp310", "cp314t"]
    assert entry["platforms"]["linux_aarch64"]["python_tags"] == ["cp310", "cp315", "cp314t"]


def test_index_page_rules() -> None:
    kr = load_script()
    facts = kr.PageFacts()
    kr.read_index_page(UPSTREAM / "whl-cu130-torch.html", "cu130", "2.13", facts)
    assert facts.versions == {"2.13.0"}  # 2.12.1 is another series
    assert facts.platform_tags == {
        "linux_x86_64": {"manylinux_2_28_x86_64"},
        "linux_aarch64": {"manylinux_2_28_aarch64"},
        "windows_amd64": {"win_amd64"},
    }
    assert facts.python_tags[("2.13.0", "windows_amd64")] == set(BASE_TAGS)  # cp314-cp314t counts as cp314t
    assert facts.python_tags[("2.13.0", "linux_x86_64")] == set(BASE_TAGS + PREVIEW_TAGS)
    other = kr.PageFacts()
    kr.read_index_page(UPSTREAM / "whl-cu130-torch.html", "cu132", "2.13", other)
    assert other.versions == set()  # +cu130 wheels are not the cu132 page's


def test_errors_exit_2(tmp_path: Path) -> None:
    broken = tmp_path / "build_env_setup.py"
    broken.write_text("TORCH_CUDA_ARCH_LIST_TABLE = {'126': '5.0;Ampere'}\n", encoding="utf-8")
    done = run("extract", "build-env", str(broken), check=2)
    assert "Ampere" in done.stderr and str(broken) in done.stderr and done.stdout == ""
    assert run("produce", "--release", "2.13", check=2).stderr.startswith("kb_release.py: give at least one")


def test_the_recorded_digests_name_their_origin() -> None:
    build_env = json.loads((UPSTREAM / "build-env.json").read_text(encoding="utf-8"))
    matrix = json.loads((UPSTREAM / "matrix.json").read_text(encoding="utf-8"))
    assert "00505f2920c03ce9ef5407faf4981f3e7288da88" in build_env["origin"]
    assert "80178294ea678651dbe5b28b3770ee9b0e1d6521" in matrix["origin"]
    assert matrix["current_stable_version"] == "2.13.0"
    assert Version(matrix["current_stable_version"]).release[:2] == (2, 13)
    readme = (UPSTREAM / "README.md").read_text(encoding="utf-8")
    for name in ("build-env.json", "matrix.json", "whl-cu130-torch.html", "BSD-3-Clause"):
        assert name in readme
