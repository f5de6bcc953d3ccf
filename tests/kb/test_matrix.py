"""The PyTorch build matrix: facts its public sources state, and strict validation of broken files."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from packaging.specifiers import SpecifierSet
from packaging.version import Version

from wheelfit.builds import BuildT, CudaBuild, MpsBuild, RocmBuild, XpuBuild
from wheelfit.errors import WheelfitError
from wheelfit.kb.matrix import CONFIDENCE, DriverVersion, Knowledge, KnowledgeError, Release, Variant, load_knowledge

PACKAGED = Path(__file__).resolve().parents[2] / "src" / "wheelfit" / "kb" / "data" / "pytorch.json"
PLATFORMS = ("linux_x86_64", "linux_aarch64", "windows_amd64", "macos_arm64")


@pytest.fixture(scope="module")
def kb() -> Knowledge:
    return load_knowledge()


def rel(kb: Knowledge, series: str) -> Release:
    release = kb.release(series)
    assert release is not None, series
    return release


def var(kb: Knowledge, series: str, platform: str, label: str) -> Variant | None:
    builds = rel(kb, series).platform(platform)
    assert builds is not None, (series, platform)
    return builds.variant(label)


def must(kb: Knowledge, series: str, platform: str, label: str) -> Variant:
    found = var(kb, series, platform, label)
    assert found is not None, (series, platform, label)
    return found


def built(v: Variant, kind: type[BuildT]) -> BuildT:
    """``v``'s build, which must be a ``kind``."""
    assert isinstance(v.build, kind), (v.label, v.build)
    return v.build


def cuda(kb: Knowledge, series: str, platform: str, label: str) -> CudaBuild:
    return built(must(kb, series, platform, label), CudaBuild)


def rocm(kb: Knowledge, series: str, platform: str, label: str) -> RocmBuild:
    return built(must(kb, series, platform, label), RocmBuild)


def xpu(kb: Knowledge, series: str, platform: str, label: str) -> XpuBuild:
    return built(must(kb, series, platform, label), XpuBuild)


def all_variants(kb: Knowledge) -> list[tuple[str, str, Variant]]:
    return [
        (r.name, p.name, v)
        for r in kb.releases_newest_first()
        for p in r.platforms.values()
        for v in p.variants.values()
    ]


def raw() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(PACKAGED.read_text(encoding="utf-8"))
    return data


def write(tmp_path: Path, data: dict[str, Any] | str) -> Path:
    path = tmp_path / "kb.json"
    path.write_text(data if isinstance(data, str) else json.dumps(data), encoding="utf-8")
    return path


# --------------------------------------------------------------------------- coverage and shape


def test_releases_2_5_to_2_15_newest_first(kb: Knowledge) -> None:
    series = [r.name for r in kb.releases_newest_first()]
    assert series == ["2.15", "2.14", "2.13", "2.12", "2.11", "2.10", "2.9", "2.8", "2.7", "2.6", "2.5"]


def test_2_16_is_release_candidates_and_2_17_the_nightly_line(kb: Knowledge) -> None:
    """pytorch#196028: 2.16 branched on 30 Nov 2026, release 22 Dec 2026; since the cut its release candidates are
    on the test channel and the nightly channel builds 2.17.0.dev. Neither is released, so neither is planned from
    the knowledge base alone (only with --pre, from the index)."""
    lines = {r.name: r for r in kb.releases_newest_first(pre=True) if r.prerelease}
    assert {name: r.channel for name, r in lines.items()} == {"2.16": "test", "2.17": "nightly"}
    assert kb.releases_newest_first(nightly=True) == kb.releases_newest_first(pre=True)  # the older keyword
    rc, nightly = lines["2.16"], lines["2.17"]
    assert rc.note is not None and "22 Dec 2026" in rc.note and "whl/test" in rc.note
    assert "22 Dec 2026" in kb.sources["PT-196028"] and "30 Nov 2026" in kb.sources["PT-196028"]
    # Release candidates carry the release's version (2.16.0); the nightly line's builds are dev releases.
    assert rc.builds_version(Version("2.16.0")) and not rc.builds_version(Version("2.16.0.dev20261101"))
    assert nightly.builds_version(Version("2.17.0.dev20261201")) and not nightly.builds_version(Version("2.17.0"))
    # Every fact of both lines is uncertain; 2.17's variants are 2.16's.
    for line in (rc, nightly):
        for builds in line.platforms.values():
            assert builds.confidence == "U" and all(v.confidence == "U" for v in builds.variants.values())
    for name, builds in rc.platforms.items():
        assert set(builds.variants) == set(nightly.platforms[name].variants), name
    assert "cu134" not in rc.platforms["windows_amd64"].variants  # CUDA_ARCHES_NO_WINDOWS = ['13.4']
    # 2.16.0's torchvision is not known: no pin, so that the index decides on every platform.
    assert dict(rc.companions[Version("2.16.0")].pins) == {"triton": SpecifierSet("~=3.9.0")}
    assert nightly.companions[Version("2.17.0")].confidence == "U"


def test_versions_are_sorted_version_objects(kb: Knowledge) -> None:
    assert rel(kb, "2.14").versions == (Version("2.14.0"), Version("2.14.1"))
    assert rel(kb, "2.12").latest == Version("2.12.1")
    for release in kb.releases_newest_first():
        assert list(release.versions) == sorted(release.versions)


def test_every_release_has_all_platforms_and_a_linux_cpu_build(kb: Knowledge) -> None:
    for release in kb.releases_newest_first():
        assert set(release.platforms) == set(PLATFORMS), release.name
        linux = release.platform("linux_x86_64")
        assert linux is not None
        cpu = linux.variant("cpu")
        assert cpu is not None and cpu.kind == "cpu"
    assert rel(kb, "2.14").platform("windows_arm64") is None


def test_every_variant_cites_a_known_source_and_confidence(kb: Knowledge) -> None:
    entries = all_variants(kb)
    assert len(entries) > 150
    for series, platform, v in entries:
        assert v.source in kb.sources, (series, platform, v.label)
        assert v.confidence in CONFIDENCE, (series, platform, v.label)
    for key in kb.field_sources.values():
        assert key in kb.sources


def test_variant_labels_follow_the_index_directories(kb: Knowledge) -> None:
    assert cuda(kb, "2.14", "linux_x86_64", "cu126").cuda == "12.6"
    assert rocm(kb, "2.6", "linux_x86_64", "rocm6.2.4").rocm == "6.2.4"
    assert str(must(kb, "2.14", "linux_x86_64", "rocm7.14")) == "rocm7.14"
    assert kb.index_url("https://download.pytorch.org/whl/", must(kb, "2.14", "linux_x86_64", "cu130")) == (
        "https://download.pytorch.org/whl/cu130"
    )
    assert kb.index_url("https://mirror.example/whl", "cpu") == "https://mirror.example/whl/cpu"


# --------------------------------------------------------------------------- CUDA facts (BM-2.x, BM-12)


@pytest.mark.parametrize("series", ["2.8", "2.9", "2.10"])
def test_volta_in_cu128_only_for_2_8_to_2_10(kb: Knowledge, series: str) -> None:
    assert "70" in cuda(kb, series, "linux_x86_64", "cu128").sass


@pytest.mark.parametrize("series", ["2.7", "2.11"])
def test_cu128_starts_at_turing_in_2_7_and_2_11(kb: Knowledge, series: str) -> None:
    sass = cuda(kb, series, "linux_x86_64", "cu128").sass
    assert "70" not in sass
    assert min(sass, key=int) == "75"


def test_cu126_from_2_6_to_2_14_and_gone_in_2_15(kb: Knowledge) -> None:
    for release in kb.releases_newest_first():
        has = var(kb, release.name, "linux_x86_64", "cu126") is not None
        assert has == (Version("2.6") <= release.series_version <= Version("2.14")), release.name
    for platform in PLATFORMS:
        assert var(kb, "2.15", platform, "cu126") is None
    assert cuda(kb, "2.14", "linux_x86_64", "cu126").sass[:2] == ("50", "60")


def labels_in(kb: Knowledge, series: str, platform: str, version: str) -> set[str]:
    builds = rel(kb, series).platform(platform)
    assert builds is not None
    return {v.label for v in builds.variants_for(Version(version))}


def test_cu128_and_cu129_gone_from_2_12_0_and_cu129_back_for_2_12_1(kb: Knowledge) -> None:
    for platform in PLATFORMS:
        assert var(kb, "2.12", platform, "cu128") is None
        assert "cu129" not in labels_in(kb, "2.12", platform, "2.12.0")
    # test-infra release/2.12 (#8164): cu129 re-added for 2.12.1, Linux only.
    for platform in ("linux_x86_64", "linux_aarch64"):
        assert "cu129" in labels_in(kb, "2.12", platform, "2.12.1")
    assert "cu129" not in labels_in(kb, "2.12", "windows_amd64", "2.12.1")
    for series, _, v in all_variants(kb):
        if Version(series) >= Version("2.12") and v.label in ("cu128", "cu129"):
            assert (series, v.label, v.advertised) in {("2.12", "cu129", False), ("2.13", "cu129", False)}


def test_windows_cu126_adds_sm_61(kb: Knowledge) -> None:
    for release in kb.releases_newest_first():
        win = var(kb, release.name, "windows_amd64", "cu126")
        if win is not None:
            assert "61" in built(win, CudaBuild).sass, release.name
            assert "61" not in cuda(kb, release.name, "linux_x86_64", "cu126").sass


def test_windows_cu132_of_2_14_rests_on_the_windows_build_script(kb: Knowledge) -> None:
    """.ci/wheel/windows/build_env_setup.py (main @5666f546): '132': '7.5;8.0;8.6;9.0;10.0;12.0', the Linux list.
    Read on main, it makes 2.14 primary; 2.12 and 2.13 cite it but stay uncertain (their own copies unread)."""
    win = must(kb, "2.14", "windows_amd64", "cu132")
    assert (built(win, CudaBuild).sass, built(win, CudaBuild).ptx) == (("75", "80", "86", "90", "100", "120"), ())
    assert (win.confidence, win.source) == ("P", "BES-WIN")
    assert "5666f546" in kb.sources["BES-WIN"] and "build_env_setup.py" in kb.sources["BES-WIN"]
    assert built(win, CudaBuild).sass == cuda(kb, "2.14", "linux_x86_64", "cu132").sass
    for series in ("2.12", "2.13"):
        older = must(kb, series, "windows_amd64", "cu132")
        assert (older.confidence, older.source) == ("U", "BES-WIN"), series


def test_aarch64_lists(kb: Knowledge) -> None:
    assert cuda(kb, "2.12", "linux_aarch64", "cu126").sass == ("80", "90")
    for series in ("2.9", "2.11", "2.14"):
        assert cuda(kb, series, "linux_aarch64", "cu130").sass == ("80", "90", "100", "110", "120")
    # sm_110 (Jetson Thor) is never in an x86_64 build
    for _, platform, v in all_variants(kb):
        if platform != "linux_aarch64" and isinstance(v.build, CudaBuild):
            assert "110" not in v.build.sass
    assert [v.label for v in rel(kb, "2.6").platforms["linux_aarch64"].of_kind("cuda")] == []


def test_ptx_only_where_a_source_states_it(kb: Knowledge) -> None:
    """Release wheels carry no PTX unless measured or stated: the 2.7 build list (12.0+PTX, stripped only from 2.8),
    PyTorch's variants.json (120_virtual for 2.8 cu129, 2.9/2.10 cu130), Windows cu118 (3.7+PTX)."""
    with_ptx = {
        (series, platform, v.label, v.build.ptx)
        for series, platform, v in all_variants(kb)
        if isinstance(v.build, CudaBuild) and v.build.ptx
    }
    assert with_ptx == {
        ("2.7", "linux_x86_64", "cu128", ("120",)),
        ("2.8", "linux_x86_64", "cu129", ("120",)),
        ("2.9", "linux_x86_64", "cu130", ("120",)),
        ("2.10", "linux_x86_64", "cu130", ("120",)),
        ("2.8", "windows_amd64", "cu129", ("120",)),
        ("2.5", "windows_amd64", "cu118", ("37",)),
        ("2.6", "windows_amd64", "cu118", ("37",)),
        ("2.7", "windows_amd64", "cu118", ("37",)),
    }
    assert cuda(kb, "2.11", "linux_x86_64", "cu130").ptx == ()  # the release-only strip (#175567)


def test_built_but_not_advertised_variants_are_flagged(kb: Knowledge) -> None:
    cu129 = must(kb, "2.10", "linux_x86_64", "cu129")
    assert cu129.advertised is False and cu129.confidence == "U"
    # test-infra release/2.14, PR #8601: CUDA 13.4 did not ship in 2.14.
    assert all(var(kb, "2.14", platform, "cu134") is None for platform in PLATFORMS)
    # BM-12: PR #172598 excluded Volta from 12.9 builds as well in 2.11
    assert "70" not in cuda(kb, "2.11", "linux_x86_64", "cu129").sass
    # cu129 for aarch64 was built for 2.9-2.11 (test-infra #7364) and is in 2.13's test channel (#8215).
    for series in ("2.9", "2.10", "2.11", "2.13"):
        aarch = must(kb, series, "linux_aarch64", "cu129")
        assert (built(aarch, CudaBuild).sass, aarch.advertised) == (("80", "90", "100", "120"), False)


def test_windows_cu129_by_patch_release(kb: Knowledge) -> None:
    """2.8 has Windows cu129; 2.9.0 has it, 2.9.1 (through 2.11) not: a variant set that differs by patch."""
    assert cuda(kb, "2.8", "windows_amd64", "cu129").sass == ("75", "80", "86", "90", "100", "120")
    assert "cu129" in labels_in(kb, "2.9", "windows_amd64", "2.9.0")
    assert "cu129" not in labels_in(kb, "2.9", "windows_amd64", "2.9.1")
    assert var(kb, "2.10", "windows_amd64", "cu129") is None


def test_older_windows_lists_have_sm_61(kb: Knowledge) -> None:
    """.ci/pytorch/windows/cuda118.bat, cuda121.bat, cuda124.bat list 6.1, unlike Linux."""
    for series in ("2.5", "2.6", "2.7"):
        assert "61" in cuda(kb, series, "windows_amd64", "cu118").sass
    assert "61" in cuda(kb, "2.5", "windows_amd64", "cu121").sass
    for series in ("2.5", "2.6"):
        assert "61" in cuda(kb, series, "windows_amd64", "cu124").sass


def test_2_15_only_the_pypi_build_is_verified(kb: Knowledge) -> None:
    linux = rel(kb, "2.15").platforms["linux_x86_64"]
    # test-infra #8670: the nightly moved to rocm7.14 + rocm10.0 before 2.15 branched; rocm10.0 is likely, not
    # advertised, so that the index decides.
    assert set(linux.variants) == {"cu130", "cu132", "cu134", "rocm7.14", "rocm10.0", "xpu", "cpu"}
    assert linux.variants["rocm10.0"].advertised is False
    assert linux.variants["cu132"].confidence == "M"
    for label in ("cu130", "cu134", "rocm7.14", "rocm10.0", "xpu"):
        assert linux.variants[label].confidence == "U"
        assert linux.variants[label].note
    assert rel(kb, "2.15").requires_python.contains("3.11") and not rel(kb, "2.15").requires_python.contains("3.10")


def test_aarch64_cu128_of_2_7(kb: Knowledge) -> None:
    """pytorch#146378 and aarch64_ci_build.sh at v2.7.0: 12.8 -> 9.0;10.0;12.0."""
    v = must(kb, "2.7", "linux_aarch64", "cu128")
    assert (built(v, CudaBuild).sass, v.confidence) == (("90", "100", "120"), "P")


def test_mps_floors_and_macos_wheels(kb: Knowledge) -> None:
    """MPS needs macOS 13 in 2.5-2.8 (#139425, #141182; 2.8 uncertain: #173149 says 14), 14 from 2.9 (#162921);
    the wheels are macosx_14_0 from 2.12 (#177303)."""
    mac = {r.name: r.platforms["macos_arm64"] for r in kb.releases_newest_first() if "macos_arm64" in r.platforms}
    assert {s for s, b in mac.items() if b.mps_min_macos == Version("13.0")} == {"2.5", "2.6", "2.7", "2.8"}
    assert mac["2.8"].confidence == "U"
    for series in ("2.12", "2.13", "2.14", "2.15"):
        assert (mac[series].platform_tag, mac[series].min_macos) == ("macosx_14_0_arm64", Version("14.0"))


def test_cp315_of_2_13(kb: Knowledge) -> None:
    """test-infra release/2.13 (#8263): cp315/cp315t built for Linux only, on the PyTorch index only."""
    release = rel(kb, "2.13")
    for platform in ("linux_x86_64", "linux_aarch64"):
        assert {"cp315", "cp315t"} <= set(release.python_tags_for(release.latest, platform))
    for platform in ("windows_amd64", "macos_arm64"):
        assert "cp315" not in release.python_tags_for(release.latest, platform)


# --------------------------------------------------------------------------- ROCm, XPU, macOS (BM-4.1, BM-5.2, BM-7.x)


def gfx_releases(kb: Knowledge, gfx: str) -> list[str]:
    return [
        r.name
        for r in reversed(kb.releases_newest_first())
        if any(gfx in b.gfx for _, b in r.platforms["linux_x86_64"].builds_of(RocmBuild))
    ]


def test_gfx_first_releases(kb: Knowledge) -> None:
    assert gfx_releases(kb, "gfx950")[0] == "2.10"
    assert gfx_releases(kb, "gfx1151")[0] == "2.10"
    assert gfx_releases(kb, "gfx1101")[0] == "2.6"
    assert gfx_releases(kb, "gfx1201")[0] == "2.7"
    assert gfx_releases(kb, "gfx1103") == ["2.13", "2.14", "2.15"]
    assert gfx_releases(kb, "gfx1031") == []


def test_gfx1250_from_2_15_as_uncertain_as_its_source(kb: Knowledge) -> None:
    """pytorch#196610 added gfx1250 (MI450) to the nightly wheel arch list before the 2.15 cut: the ROCm builds of
    2.15 and of the lines after it list it, all U, none before."""
    assert gfx_releases(kb, "gfx1250") == ["2.15"]
    assert "#196610" in kb.sources["PT-196610"]
    for series in ("2.15", "2.16", "2.17"):
        for label in ("rocm7.14", "rocm10.0"):
            v = must(kb, series, "linux_x86_64", label)
            assert "gfx1250" in built(v, RocmBuild).gfx and v.confidence == "U", (series, label)
            assert v.note is not None and "PT-196610" in v.note, (series, label)


def test_rocm7_14_drops_gfx900_and_gfx906(kb: Knowledge) -> None:
    therock = rocm(kb, "2.14", "linux_x86_64", "rocm7.14")
    legacy = rocm(kb, "2.14", "linux_x86_64", "rocm7.2")
    assert "gfx906" not in therock.gfx and "gfx900" not in therock.gfx
    assert set(legacy.gfx) - set(therock.gfx) == {"gfx900", "gfx906"}


def test_rocm_is_linux_x86_64_only_and_macos_is_cpu_with_mps(kb: Knowledge) -> None:
    for release in kb.releases_newest_first():
        for name in ("windows_amd64", "linux_aarch64", "macos_arm64"):
            assert release.platforms[name].of_kind("rocm") == ()
        mac = release.platforms["macos_arm64"]
        assert list(mac.variants) == ["cpu"] and isinstance(mac.variants["cpu"].build, MpsBuild)
        assert mac.variants["cpu"].kind == "cpu" and mac.of_kind("cpu") == (mac.variants["cpu"],)
        assert mac.mps_min_macos is not None
    assert rel(kb, "2.14").platforms["macos_arm64"].platform_tag == "macosx_14_0_arm64"
    assert rel(kb, "2.8").platforms["macos_arm64"].platform_tag == "macosx_11_0_arm64"
    assert rel(kb, "2.9").platforms["macos_arm64"].mps_min_macos == Version("14.0")
    mps_8 = rel(kb, "2.8").platforms["macos_arm64"].mps_min_macos
    assert mps_8 is not None and mps_8 < Version("14.0")


def test_xpu_aot_targets_per_release_and_os(kb: Knowledge) -> None:
    assert xpu(kb, "2.5", "linux_x86_64", "xpu").aot == ("pvc", "xe-lpg", "ats-m150")
    assert "ptl-h" not in xpu(kb, "2.9", "linux_x86_64", "xpu").aot
    assert {"ptl-h", "ptl-u"} <= set(xpu(kb, "2.10", "linux_x86_64", "xpu").aot)
    assert "ptl" in xpu(kb, "2.14", "windows_amd64", "xpu").aot
    assert var(kb, "2.14", "linux_aarch64", "xpu") is None
    assert kb.xpu_device_ips["20.1.0"] == ("bmg",)
    assert kb.xpu_device_ips["30.0.4"] == ("ptl", "ptl-h")


# --------------------------------------------------------------------------- PyPI, Python, glibc, companions


def test_pypi_defaults(kb: Knowledge) -> None:
    expected_linux = {"2.5": "cu124", "2.7": "cu126", "2.8": "cu128", "2.10": "cu128", "2.11": "cu130", "2.15": "cu132"}
    for series, label in expected_linux.items():
        assert rel(kb, series).platforms["linux_x86_64"].default_variant.label == label
    linux_214 = rel(kb, "2.14").platforms["linux_x86_64"]
    assert linux_214.pypi_default == "cu130"
    assert linux_214.pypi_default_note is not None and "disputed" in linux_214.pypi_default_note
    assert rel(kb, "2.10").platforms["linux_aarch64"].pypi_default == "cpu"
    assert rel(kb, "2.11").platforms["linux_aarch64"].pypi_default == "cu130"
    for release in kb.releases_newest_first():
        assert release.platforms["windows_amd64"].pypi_default == "cpu"


def test_python_tags(kb: Knowledge) -> None:
    assert rel(kb, "2.5").python_tags_for() == ("cp39", "cp310", "cp311", "cp312", "cp313")
    assert "cp313t" in rel(kb, "2.12").python_tags_for("2.12.0")
    assert "cp313t" not in rel(kb, "2.12").python_tags_for("2.12.1")
    assert "cp313t" in rel(kb, "2.6").python_tags_for(platform="macos_arm64")
    assert "cp313t" not in rel(kb, "2.6").python_tags_for(platform="linux_x86_64")
    tags_215 = rel(kb, "2.15").python_tags_for()
    assert "cp310" not in tags_215 and {"cp315", "cp315t", "cp314t"} <= set(tags_215)


def test_glibc_floor(kb: Knowledge) -> None:
    for release in kb.releases_newest_first():
        x86 = release.platforms["linux_x86_64"]
        if release.series_version >= Version("2.7"):
            assert (x86.platform_tag, x86.min_glibc) == ("manylinux_2_28_x86_64", Version("2.28"))
    assert rel(kb, "2.6").platforms["linux_aarch64"].min_glibc == Version("2.28")
    assert rel(kb, "2.5").platforms["linux_aarch64"].min_glibc == Version("2.17")
    assert rel(kb, "2.14").platforms["windows_amd64"].min_glibc is None


def test_companions_for_every_version(kb: Knowledge) -> None:
    for release in kb.releases_newest_first():
        assert set(release.companions) == set(release.versions), release.name
        for version, comp in release.companions.items():
            assert {"torchvision", "torchaudio", "triton"} <= set(comp.pins), version
            if release.series_version >= Version("2.12"):
                assert comp.pins["torchaudio"].contains("2.11.1")
                assert not comp.pins["torchaudio"].contains(str(version))
    assert rel(kb, "2.14").companions[Version("2.14.1")].requirement("torchvision") == "torchvision==0.29.1"
    assert rel(kb, "2.14").companions[Version("2.14.0")].requirement("torchvision") == "torchvision==0.29.0"
    assert rel(kb, "2.8").companions[Version("2.8.0")].requirement("torchaudio") == "torchaudio==2.8.0"
    assert rel(kb, "2.8").companions[Version("2.8.0")].requirement("torchtext") is None


# --------------------------------------------------------------------------- NVIDIA driver tables (BM-3.1, BM-3.2)


def test_driver_floors_come_from_the_one_driver_table(kb: Knowledge) -> None:
    """NVIDIA Table 3: the floor of a CUDA minor is its GA row (12.6 GA: 560.28.03, not Update 3's 560.35.05), from
    wheelfit_probekit's cuda_drivers.json, which the detector reads too; Table 2 for minor-version compatibility."""
    from wheelfit.kb.drivers import compat_floor, toolkit_floor
    from wheelfit_probekit.drivers import max_cuda_for_driver

    assert kb.cuda_toolkit_driver("12.6", "linux") == DriverVersion.parse("560.28.03")
    assert kb.cuda_toolkit_driver("12.6", "windows") == DriverVersion.parse("560.76")
    assert toolkit_floor("12.6") is not None and toolkit_floor("12.6").releases["linux"] == "12.6 GA"  # type: ignore[union-attr]
    assert max_cuda_for_driver("560.28.03") == "12.6"  # the detector's answer for the same driver agrees
    assert kb.cuda_toolkit_driver("13.0", "linux") == DriverVersion.parse("580.65.06")
    assert kb.cuda_toolkit_driver("13.2", "windows") is None  # NVIDIA prints N/A
    assert kb.cuda_toolkit_driver("9.9", "linux") is None
    assert kb.minor_compat_floor(12, "linux") == DriverVersion.parse("525.60.13")
    assert kb.minor_compat_floor(12, "windows") == DriverVersion.parse("527.41")
    assert kb.minor_compat_floor(11, "linux") == DriverVersion.parse("450.80.02")
    assert str(kb.cuda_toolkit_driver("12.6", "linux")) == "560.28.03"  # printed as NVIDIA writes it
    assert kb.minor_compat_floor(13, "linux") == DriverVersion.parse("580.65.06")
    assert kb.minor_compat_floor(13, "windows_amd64") is not None
    assert kb.minor_compat_floor(13, "macos") is None
    floor = compat_floor(13)
    assert floor is not None and floor.confidence["windows"] == "U"
    with pytest.raises(ValueError, match="unknown OS"):
        kb.minor_compat_floor(12, "linx")


def test_every_cuda_variant_is_in_the_driver_table(kb: Knowledge) -> None:
    from wheelfit.kb.drivers import toolkit_floor

    for _, _, v in all_variants(kb):
        if isinstance(v.build, CudaBuild):
            assert toolkit_floor(v.build.cuda) is not None, v


# --------------------------------------------------------------------------- loading and validation


def test_user_file_loads_like_the_packaged_one(tmp_path: Path, kb: Knowledge) -> None:
    path = write(tmp_path, raw())
    user = load_knowledge(path)
    assert user.path == str(path)
    assert user.releases.keys() == kb.releases.keys()
    assert user.release("2.10") == kb.release("2.10")
    assert load_knowledge() is kb  # the packaged file is read once


def expect_error(tmp_path: Path, data: dict[str, Any] | str, *fragments: str) -> KnowledgeError:
    path = write(tmp_path, data)
    with pytest.raises(KnowledgeError) as info:
        load_knowledge(path)
    message = str(info.value)
    assert message.startswith(str(path)), message
    assert "\n" not in message
    for fragment in fragments:
        assert fragment in message, message
    assert isinstance(info.value, WheelfitError)
    return info.value


def test_unknown_schema_major(tmp_path: Path) -> None:
    data = raw()
    data["schema_version"] = "2.0"
    data["releases"] = "the shape changed in 2.0"
    expect_error(tmp_path, data, "schema_version: 2.0 is not supported (this wheelfit reads 1.x)")


def test_newer_minor_tolerates_new_keys_same_minor_rejects_them(tmp_path: Path) -> None:
    data = raw()
    data["releases"]["2.14"]["platforms"]["linux_x86_64"]["variants"]["cu126"]["advertized"] = False
    expect_error(tmp_path, data, "releases.2.14.platforms.linux_x86_64.variants.cu126: unknown key 'advertized'")
    data["schema_version"] = "1.7"
    assert load_knowledge(write(tmp_path, data)).schema_version == "1.7"


def test_unknown_source(tmp_path: Path) -> None:
    data = raw()
    data["releases"]["2.14"]["platforms"]["linux_x86_64"]["variants"]["cu130"]["source"] = "BM-99"
    expect_error(
        tmp_path, data, "releases.2.14.platforms.linux_x86_64.variants.cu130.source: source 'BM-99' is not a key of"
    )


def test_missing_source(tmp_path: Path) -> None:
    data = raw()
    del data["releases"]["2.9"]["platforms"]["windows_amd64"]["variants"]["xpu"]["source"]
    expect_error(tmp_path, data, "releases.2.9.platforms.windows_amd64.variants.xpu: missing 'source'")


def test_unknown_kind(tmp_path: Path) -> None:
    data = raw()
    data["releases"]["2.13"]["platforms"]["linux_x86_64"]["variants"]["cpu"]["kind"] = "tpu"
    expect_error(tmp_path, data, "releases.2.13.platforms.linux_x86_64.variants.cpu.kind: 'tpu' is not one of")


def test_malformed_json(tmp_path: Path) -> None:
    text = PACKAGED.read_text(encoding="utf-8")
    expect_error(tmp_path, text[: len(text) // 2], "not valid JSON", "line ")


def test_missing_file(tmp_path: Path) -> None:
    path = tmp_path / "nope.json"
    with pytest.raises(KnowledgeError, match=r"nope\.json: no such file$"):
        load_knowledge(path)


def test_malformed_version(tmp_path: Path) -> None:
    data = raw()
    data["releases"]["2.11"]["versions"] = ["2.11.0", "2.11.x"]
    expect_error(tmp_path, data, r"releases.2.11.versions[1]: '2.11.x' does not match '^\d+\.\d+\.\d+$'")


def test_version_of_another_release(tmp_path: Path) -> None:
    data = raw()
    data["releases"]["2.11"]["versions"] = ["2.11.0", "2.12.0"]
    expect_error(tmp_path, data, "releases.2.11.versions: version 2.12.0 does not belong to release 2.11")


def test_label_must_match_the_cuda_version(tmp_path: Path) -> None:
    data = raw()
    data["releases"]["2.14"]["platforms"]["linux_x86_64"]["variants"]["cu126"]["cuda"] = "12.8"
    expect_error(tmp_path, data, "variants.cu126: the label of this cuda variant must be 'cu128'")


def test_cuda_version_must_be_in_the_driver_table(tmp_path: Path) -> None:
    data = raw()
    variants = data["releases"]["2.14"]["platforms"]["linux_x86_64"]["variants"]
    variants["cu177"] = dict(variants["cu126"], cuda="17.7")
    expect_error(tmp_path, data, "linux_x86_64.variants.cu177.cuda: CUDA 17.7 is not in the NVIDIA driver table")


def test_keys_of_another_kind(tmp_path: Path) -> None:
    data = raw()
    data["releases"]["2.14"]["platforms"]["linux_x86_64"]["variants"]["rocm7.2"]["sass"] = ["90"]
    expect_error(tmp_path, data, "variants.rocm7.2.sass: does not apply to a rocm variant")


def test_pypi_default_must_be_a_variant(tmp_path: Path) -> None:
    data = raw()
    data["releases"]["2.12"]["platforms"]["linux_aarch64"]["pypi_default"]["variant"] = "cu128"
    expect_error(tmp_path, data, "releases.2.12.platforms.linux_aarch64.pypi_default: variant 'cu128' is not among")


def test_companions_must_cover_every_version(tmp_path: Path) -> None:
    data = raw()
    del data["releases"]["2.14"]["companions"]["2.14.1"]
    expect_error(tmp_path, data, "releases.2.14.companions: must have exactly one entry", "missing ['2.14.1']")


def test_bad_confidence_and_sass(tmp_path: Path) -> None:
    data = raw()
    data["releases"]["2.8"]["platforms"]["linux_x86_64"]["variants"]["cu128"]["confidence"] = "likely"
    expect_error(tmp_path, data, "2.8.platforms.linux_x86_64.variants.cu128.confidence: 'likely' is not one of")
    data = raw()
    data["releases"]["2.8"]["platforms"]["linux_x86_64"]["variants"]["cu128"]["sass"] = ["sm_70"]
    expect_error(tmp_path, data, "releases.2.8.platforms.linux_x86_64.variants.cu128.sass[0]: 'sm_70' does not match")


def paths(node: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found = [prefix] if prefix else []
    if isinstance(node, dict):
        for key, value in node.items():
            found += paths(value, (*prefix, key))
    elif isinstance(node, list):
        for i, value in enumerate(node):
            found += paths(value, (*prefix, i))
    return found


def test_any_corruption_is_a_knowledge_error(tmp_path: Path) -> None:
    """Replace values anywhere in a small valid file with wrong types: only KnowledgeError may escape."""
    small = raw()
    small["releases"] = {"2.14": small["releases"]["2.14"]}
    path = write(tmp_path, small)
    load_knowledge(path)  # the trimmed file itself is valid
    bad_values: list[Any] = [None, 7, -1.5, True, "", "x", [], [None], {}, {"k": [1]}]
    rejected = 0
    all_paths = paths(small)
    for i, target in enumerate(all_paths):  # every path, the bad values taken in turn
        data = copy.deepcopy(small)
        node = data
        for key in target[:-1]:
            node = node[key]
        node[target[-1]] = bad_values[i % len(bad_values)]
        path.write_text(json.dumps(data), encoding="utf-8")
        try:
            load_knowledge(path)
        except KnowledgeError as exc:
            assert "\n" not in str(exc)
            rejected += 1
    assert rejected > len(all_paths) * 3 // 4  # most corruptions are caught, not silently loaded


def test_os_specific_fields_stay_on_their_os(tmp_path: Path) -> None:
    data = raw()
    data["releases"]["2.14"]["platforms"]["windows_amd64"]["min_glibc"] = "2.28"
    expect_error(tmp_path, data, "releases.2.14.platforms.windows_amd64.min_glibc: does not apply to windows")
    data = raw()
    data["releases"]["2.14"]["platforms"]["linux_x86_64"]["variants"]["cpu"]["mps"] = True
    expect_error(tmp_path, data, "2.14.platforms.linux_x86_64.variants.cpu.mps: MPS exists only in macOS builds")


def test_values_with_trailing_newlines_are_malformed(tmp_path: Path) -> None:
    data = raw()
    data["releases"]["2.14"]["platforms"]["linux_x86_64"]["variants"]["rocm7.2"]["gfx"][0] = "gfx900\n"
    expect_error(tmp_path, data, "variants.rocm7.2.gfx[0]: 'gfx900\\n' does not match")
