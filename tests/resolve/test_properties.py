"""Properties of the resolver over generated hardware (hypothesis).

For any machine: the chosen build satisfies every hard constraint, and no
candidate the rules prefer over it was valid. The oracle here is a brute-force
walk over the knowledge base, written from the rules, not from the resolver.
"""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from packaging.requirements import Requirement
from packaging.version import Version

from wheelfit.builds import CudaBuild, RocmBuild
from wheelfit.kb.matrix import DriverVersion, Knowledge, load_knowledge
from wheelfit.kb.overrides import rocm_known_broken, rocm_overrides
from wheelfit.probe.target import load_target
from wheelfit.resolve import Plan, Request, ResolveError

from . import kb_plan

KB = load_knowledge()
CCS = ["5.0", "5.2", "6.0", "6.1", "7.0", "7.5", "8.0", "8.6", "8.9", "9.0", "10.0", "10.3", "11.0", "12.0", "12.1"]
DRIVERS = ["470.256.02", "525.60.13", "535.54.03", "550.144.03", "570.133.07", "580.95.05", "595.71.05"]
GFX = ["gfx900", "gfx906", "gfx90a", "gfx942", "gfx950", "gfx1030", "gfx1031", "gfx1100", "gfx1103", "gfx1151"]
SPECS = ["torch", "torch>=2.6", "torch==2.9.*", "torch<2.12", "torch>=2.10,<2.14", "torch==2.7.1"]
PLATFORMS = [("linux", "x86_64"), ("linux", "aarch64"), ("windows", "x86_64")]
PYTHONS = ["3.9", "3.10", "3.11", "3.12", "3.13", "3.14", "3.15"]


def sm(cc: str) -> tuple[int, int]:
    major, minor = cc.split(".")
    return int(major), int(minor)


def sass_runs(cc: str, sass: tuple[str, ...], ptx: tuple[str, ...]) -> bool:
    m, n = sm(cc)
    arch = [(int(s[:-1]), int(s[-1])) for s in sass]
    virt = [(int(s[:-1]), int(s[-1])) for s in ptx]
    return any(a == m and b <= n for a, b in arch) or any((a, b) <= (m, n) for a, b in virt)


def platform_key(os_name: str, arch: str) -> str:
    return {"linux": f"linux_{arch}", "windows": "windows_amd64"}[os_name]


def valid_cuda(
    kb: Knowledge, key: str, py: str, spec: str, ccs: list[str], driver: str
) -> list[tuple[Version, str, bool]]:
    """Every (torch version, variant) that satisfies the hard constraints for these GPUs."""
    req = Requirement(spec)
    out = []
    drv = DriverVersion.parse(driver)
    os_name = "windows" if key.startswith("windows") else "linux"
    for rel in kb.releases_newest_first():
        builds = rel.platform(key)
        if builds is None:
            continue
        for v in rel.versions:
            if not req.specifier.contains(v, prereleases=True):
                continue
            if f"cp{py.replace('.', '')}" not in rel.python_tags_for(v, key):
                continue
            for var, build in builds.builds_of(CudaBuild):
                floor = kb.minor_compat_floor(Version(build.cuda).major, os_name)
                if floor is not None and drv < floor:
                    continue
                if all(sass_runs(cc, build.sass, build.ptx) for cc in ccs):
                    out.append((v, var.label, var.advertised))
    return out


def used_ccs(plan: Plan, ccs: list[str]) -> list[str]:
    visible = plan.env.get("CUDA_VISIBLE_DEVICES")
    if visible is None:
        return ccs
    return [ccs[int(i)] for i in visible.split(",")]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    plat=st.sampled_from(PLATFORMS),
    py=st.sampled_from(PYTHONS),
    spec=st.sampled_from(SPECS),
    ccs=st.lists(st.sampled_from(CCS), min_size=1, max_size=3),
    driver=st.sampled_from(DRIVERS),
)
def test_nvidia_choice_is_valid_and_nothing_preferred_was(
    plat: tuple[str, str], py: str, spec: str, ccs: list[str], driver: str
) -> None:
    os_name, arch = plat
    report = load_target(f"os={os_name},arch={arch},python={py},cuda={'+'.join(ccs)},driver={driver}")
    key = platform_key(os_name, arch)
    try:
        plan = kb_plan(report, KB, Request.parse([spec]))
    except ResolveError:
        # Only when no release publishes anything for this platform, Python and requirement.
        assert not any(
            (b := r.platform(key)) is not None and "cpu" in b.variants
            and any(Requirement(spec).specifier.contains(v) and f"cp{py.replace('.', '')}" in r.python_tags_for(v, key)
                    for v in r.versions)
            for r in KB.releases_newest_first()
        )
        return
    chosen = Version(plan.torch_version)
    assert Requirement(spec).specifier.contains(chosen, prereleases=True)
    release = KB.release(f"{chosen.major}.{chosen.minor}")
    assert release is not None
    builds = release.platform(key)
    assert builds is not None and plan.variant in builds.variants
    assert f"cp{py.replace('.', '')}" in release.python_tags_for(chosen, key)
    everything = valid_cuda(KB, key, py, spec, ccs, driver)
    variant = builds.variants[plan.variant]
    if isinstance(variant.build, CudaBuild):
        used = used_ccs(plan, ccs)
        # Hard constraints on the chosen build.
        assert all(sass_runs(cc, variant.build.sass, variant.build.ptx) for cc in used)
        driver_os = "windows" if os_name == "windows" else "linux"
        floor = KB.minor_compat_floor(Version(variant.build.cuda).major, driver_os)
        assert floor is None or DriverVersion.parse(driver) >= floor
        if len(used) == len(ccs):
            # No newer release had a valid build for all GPUs among the builds of the same standing
            # (advertised ones are searched first; unadvertised only when no advertised one fits anywhere).
            newer = [v for v, _, adv in everything if v.release[:2] > chosen.release[:2] and adv == variant.advertised]
            assert not newer, f"torch {newer[0]} had a valid build, {chosen} was chosen"
            if not variant.advertised:
                assert not [e for e in everything if e[2]], "an advertised build fitted, an unadvertised was chosen"
        else:
            assert not everything, "a build covering every GPU existed, yet some GPUs were left out"
    else:
        assert variant.kind == "cpu"
        assert not everything, f"CPU chosen, yet {everything[:3]} had kernels for {ccs} with driver {driver}"
        assert any("CPU build" in w for w in plan.warnings)


@settings(max_examples=150, deadline=None)
@given(
    py=st.sampled_from(PYTHONS[1:6]),
    spec=st.sampled_from(SPECS),
    gfx=st.lists(st.sampled_from(GFX), min_size=1, max_size=2),
)
def test_amd_choice_lists_every_gpu_or_says_how_to_override(py: str, spec: str, gfx: list[str]) -> None:
    report = load_target(f"os=linux,python={py},rocm={'+'.join(gfx)}")
    overrides = rocm_overrides()
    broken = rocm_known_broken()
    try:
        plan = kb_plan(report, KB, Request.parse([spec], rocm_overrides=overrides))
    except ResolveError:
        return
    chosen = Version(plan.torch_version)
    release = KB.release(f"{chosen.major}.{chosen.minor}")
    assert release is not None
    builds = release.platform("linux_x86_64")
    assert builds is not None
    variant = builds.variants[plan.variant]
    if isinstance(variant.build, RocmBuild):
        # HSA_OVERRIDE_GFX_VERSION is never the default (it has hung GPUs, pytorch/pytorch#179653): native only.
        assert all(g in variant.build.gfx for g in gfx)
        assert "HSA_OVERRIDE_GFX_VERSION" not in plan.env
    else:
        assert variant.kind == "cpu"
        assert any("CPU build" in w for w in plan.warnings)
        # No release matching the requirement lists these targets natively; one that runs them through an
        # override is offered, with how to take it.
        for rel in KB.releases_newest_first():
            b = rel.platform("linux_x86_64")
            if b is None or not any(Requirement(spec).specifier.contains(v) for v in rel.versions):
                continue
            if f"cp{py.replace('.', '')}" not in rel.python_tags_for(None, "linux_x86_64"):
                continue
            for _, rocm in b.builds_of(RocmBuild):
                if any(g in broken and Version(rocm.rocm) >= Version(broken[g][0]) for g in gfx):
                    continue  # listed, but its libraries lack the kernels (known broken)
                assert not all(g in rocm.gfx for g in gfx)
                runs = all(g in rocm.gfx or (g in overrides and overrides[g][0] in rocm.gfx) for g in gfx)
                # HSA_OVERRIDE_GFX_VERSION is process-wide: two near-miss GPUs needing different values can't share.
                values = {overrides[g][1] for g in gfx if g not in rocm.gfx and g in overrides}
                if runs and len(values) == 1:
                    assert any("--allow-hsa-override" in w for w in plan.warnings), plan.warnings


def test_plan_json_contract() -> None:
    plan = kb_plan(load_target("cuda=6.1,driver=580.95.05,python=3.12"), KB, Request.parse(["torch", "torchvision"]))
    d: dict[str, Any] = plan.to_dict()
    # The keys of schema 1.0 keep their meaning; 1.1, 1.2 and 1.3 only add keys.
    assert d["schema_version"] == "1.4"
    assert d["gpu_fallback"] is None
    assert {"torch_version", "variant", "index_url", "mode", "packages", "reasons", "rejected", "warnings"} <= set(d)
    assert "env" in d
    assert [p["name"] for p in d["packages"]] == ["torch", "torchvision"]
    assert all({"name", "version", "requirement", "confidence", "uncertain"} <= set(p) for p in d["packages"])
    assert all({"variant", "version", "reason", "judge"} == set(r) for r in d["rejected"])
    assert {r["judge"] for r in d["rejected"]} == {"kernels"}  # sm_61: only cu126 has kernels for it
