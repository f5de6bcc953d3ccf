"""The resolver's decision table: machine x requirements x flags -> the build the facts call for.

Every expected answer is derived from the public sources that ``src/wheelfit/kb/data/pytorch.json``
names in ``sources``, cited here by their key (BM-1.x releases and variants, BM-2.x SASS lists, BM-3.x
driver floors, BM-4.1 ROCm gfx lists, BM-5.2 Intel AOT targets, BM-7.x Python tags and companions,
BM-12 PyTorch's own PRs), NVIDIA's same-major binary compatibility rule and the rules of the
`wheelfit plan` issue, not from running the code. Each row cites the facts it uses.

A machine is one of:

- ``target:<spec>``: a ``--target`` spec read by ``load_target`` (Python pinned to 3.12 unless
  the spec says ``python=``);
- ``fixture:<name>``: ``tests/machines/<name>/root`` detected as a sysroot (Python pinned to 3.12);
- either, plus ``env`` (override variables applied with ``apply_overrides``) and ``platform``
  fields replaced on the report (``release`` for a macOS version, ``libc`` for glibc).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import pytest

#: Linux driver branches (NVIDIA release notes Table 3 and Table 2: BM-3.1, BM-3.2).
D580 = "580.95.05"  # R580: CUDA 13.0 U2's own minimum; below 13.2's 595.45.04
D595 = "595.71.05"  # CUDA 13.2 U2's own minimum
D575 = "575.57.08"  # CUDA 12.9 U1's own minimum
D570 = "570.133.07"  # >= 12.8 GA/U1 (570.26 / 570.124.06), < 575 and < 580
D535 = "535.129.03"  # >= 525.60.13 (12.x minor-version floor), < every 12.x toolkit's own minimum
D470 = "470.182.03"  # < 525.60.13: no CUDA 12.x; >= 450.80.02 (11.x minor-version floor)
#: Windows driver numbering (Table 3 Windows column, BM-3.1; it prints "N/A" for 13.x: R580+ assumed).
W581 = "581.42"
W572 = "572.61"  # CUDA 12.8 U1's Windows minimum

MINOR = "minor-version compatibility"
#: torch 2.15 on Linux: cu132 is the one CUDA build the knowledge base is sure is published (measured, BM-2.1);
#: cu130 and cu134 are U (the 2.15 variant set is unverified, BM-1.2). With no index read to confirm them, a plan
#: takes cu132, through minor-version compatibility on an R580 driver, and says why cu130 was passed over.
SURE_215 = "cu132"
UNSURE_CU130 = "cu130: not known to exist (the knowledge base marks it U"
TO_CPU = "installing the CPU build"


@dataclass(frozen=True)
class Case:
    machine: str
    reqs: tuple[str, ...]
    #: The exact torch version (``2.14.1``) or just its series (``2.14``).
    torch: str
    #: The variant label, or the labels any of which the facts allow.
    variant: str | tuple[str, ...]
    allow_cpu: bool = False
    env: Mapping[str, str] = field(default_factory=dict)
    platform: Mapping[str, Any] = field(default_factory=dict)
    #: Substrings that must appear in the plan's reasons, warnings or rejection reasons.
    says: tuple[str, ...] = ()
    #: Substrings that must appear in the warnings.
    warns: tuple[str, ...] = ()
    #: Substrings no warning may contain.
    not_warns: tuple[str, ...] = ()
    #: The plan's run-time environment must contain these (``None``: must not contain the key).
    plan_env: Mapping[str, str | None] = field(default_factory=dict)
    #: Companion name -> exact version expected.
    packages: Mapping[str, str] = field(default_factory=dict)


def case(id: str, *args: object, bug: str | None = None, **kwargs: object) -> object:
    """A ``pytest.param`` of a ``Case``; ``bug`` marks a fact the code contradicts (strict xfail)."""
    marks = [pytest.mark.xfail(strict=True, reason=f"BUG: {bug}")] if bug else []
    return pytest.param(Case(*args, **kwargs), id=id, marks=marks)  # type: ignore[arg-type]


def t(spec: str, driver: str | None = D580) -> str:
    """A ``--target`` machine; NVIDIA targets get the given driver."""
    return f"target:{spec},driver={driver}" if driver and "cuda=" in spec else f"target:{spec}"


T = ("torch",)

CASES = [
    # ---- NVIDIA, every generation; Linux x86_64, R580 driver (BM-2.1, BM-2.2, BM-3.1) ----------
    # Maxwell/Pascal/Volta: no official wheels from 2.15 (BM-12: RFC #190385, test-infra#8739); cu126 has
    # sm_50/60/70 up to 2.14.
    case("sm50-maxwell", t("cuda=5.0"), T, "2.14.1", "cu126", says=("has no build with kernels for sm_50",)),
    case("sm52-maxwell-runs-sm50", t("cuda=5.2"), T, "2.14.1", "cu126", says=("no SASS for sm_52",)),
    case("sm60-p100", t("cuda=6.0"), T, "2.14.1", "cu126", says=("has no build with kernels for sm_60",)),
    case("sm61-gtx1080", t("cuda=6.1"), T, "2.14.1", "cu126", says=("has no build with kernels for sm_61",)),
    case("sm70-v100-latest", t("cuda=7.0"), T, "2.14.1", "cu126", says=("no SASS for sm_70",)),
    # Volta has cu128 (and cu129) kernels only in 2.8-2.10 (BM-12: #172598); R580 meets 12.8's own floor,
    # cu129 is built but not advertised in 2.9/2.10 (BM-1.2), cu130 has no sm_70.
    case(
        "sm70-pinned-2.8-2.10",
        t("cuda=7.0"),
        ("torch>=2.8,<2.11",),
        "2.10.0",
        "cu128",
        says=("cu128 has kernels for sm_70",),
    ),
    # 2.8 advertises cu129 with 7.0 (BM-2.2, BM-1.2) and R580 meets 12.9's own 575.57.08.
    case("sm70-pinned-2.8-cu129", t("cuda=7.0"), ("torch==2.8.*",), "2.8.0", "cu129"),
    # 2.11 removed Volta from cu128 (BM-12, pytorch/pytorch#172598).
    case("sm70-pinned-2.11", t("cuda=7.0"), ("torch==2.11.*",), "2.11.0", "cu126", says=("cu128: no SASS for sm_70",)),
    # R535 meets no 12.x toolkit's own floor: the lowest CUDA under minor-version compatibility.
    case("sm70-r535-pinned-2.8-2.10", t("cuda=7.0", D535), ("torch>=2.8,<2.11",), "2.10.0", "cu126", warns=(MINOR,)),
    case("sm75-t4", t("cuda=7.5"), T, "2.15.0", SURE_215, warns=(MINOR,), says=(UNSURE_CU130,)),
    case("sm80-a100-r595", t("cuda=8.0", D595), T, "2.15.0", "cu132", says=("CUDA 13.2's own minimum",)),
    case("sm86-rtx3090", t("cuda=8.6"), T, "2.15.0", SURE_215, warns=(MINOR,), says=(UNSURE_CU130,)),
    case("sm89-runs-sm86", t("cuda=8.9"), T, "2.15.0", SURE_215, says=("cu132 has kernels for sm_89",)),
    case("sm90-h100", t("cuda=9.0"), T, "2.15.0", SURE_215),
    case("sm100-b200", t("cuda=10.0"), T, "2.15.0", SURE_215),
    case("sm103-b300-runs-sm100", t("cuda=10.3"), T, "2.15.0", SURE_215),
    case("sm120-rtx5090", t("cuda=12.0"), T, "2.15.0", SURE_215),
    case("sm121-gb10-runs-sm120", t("cuda=12.1"), T, "2.15.0", SURE_215),
    # sm_110 is never in x86_64 builds (pytorch/pytorch#161257 added it to aarch64 cu130), and no PTX ships (BM-2.1).
    case("sm110-on-x86-has-nothing", t("cuda=11.0"), T, "2.15.0", "cpu", warns=(TO_CPU,)),
    case("sm110-thor-aarch64", t("cuda=11.0,arch=aarch64"), T, "2.15.0", SURE_215),
    case("sm90-gh200-aarch64", t("cuda=9.0,arch=aarch64"), T, "2.15.0", SURE_215, says=(UNSURE_CU130,)),
    case("sm86-aarch64-runs-sm80", t("cuda=8.6,arch=aarch64"), T, "2.15.0", SURE_215),
    # ---- NVIDIA drivers (BM-3.1, BM-3.2) -------------------------------------------------------
    # R470 < 525.60.13: no 12.x/13.x build runs; with torch>=2.8 there is no cu118 either (BM-1.2).
    case("r470-pinned-2.8+-cpu", t("cuda=8.6", D470), ("torch>=2.8",), "2.15.0", "cpu", warns=(TO_CPU,)),
    # cu118 (2.5-2.7) runs on >= 450.80.02 by minor-version compatibility (BM-3.2): the newest release with a build.
    case("fixture-driver470", "fixture:nvidia-driver470", T, "2.7.1", "cu118", warns=(MINOR,)),
    case(
        "fixture-h100-r535",
        "fixture:nvidia-h100",
        T,
        "2.14.1",
        "cu126",
        warns=(MINOR,),
        says=("torch 2.15.0 has no build that runs here",),
    ),
    case("fixture-v100-r535", "fixture:nvidia-v100", T, "2.14.1", "cu126", warns=(MINOR,)),
    # R570 (< 580) and sm_120: only 12.8+ has sm_120, and cu128 last ships in 2.11 (BM-12: #179155).
    case(
        "fixture-rtx5090-r570",
        "fixture:nvidia-rtx5090",
        T,
        "2.11.0",
        "cu128",
        says=("CUDA 12.8's own minimum",),
        not_warns=(MINOR,),
    ),
    case("sm120-r535-minor-compat", t("cuda=12.0", D535), T, "2.11.0", "cu128", warns=(MINOR,)),
    case("fixture-8x-a100-r570", "fixture:nvidia-8x-a100", T, "2.14.1", "cu126", not_warns=(MINOR,)),
    case(
        "fixture-a6000-r550-visible-devices",
        "fixture:nvidia-cuda-visible-devices",
        T,
        "2.14.1",
        "cu126",
        warns=(MINOR,),
    ),
    case("fixture-t4-smi-hangs-r550", "fixture:nvidia-smi-hangs", T, "2.14.1", "cu126", warns=(MINOR,)),
    case(
        "fixture-gtx1650-driver-unknown",
        "fixture:nvidia-garbage",
        T,
        "2.15.0",
        ("cu130", "cu132", "cu134"),
        warns=("driver version is unknown",),
    ),
    case("fixture-b200-r580", "fixture:nvidia-b200", T, "2.15.0", SURE_215, warns=(MINOR,)),
    case(
        "fixture-gtx1080", "fixture:nvidia-gtx1080", T, "2.14.1", "cu126", says=("has no build with kernels for sm_61",)
    ),
    case(
        "fixture-gtx1080-allow-cpu",
        "fixture:nvidia-gtx1080",
        T,
        "2.15.0",
        "cpu",
        allow_cpu=True,
        warns=("--allow-cpu",),
    ),
    # cu126 covers 8.9 (sm_86) and 6.1 (sm_60): both GPUs, 2.14.
    case(
        "fixture-4090-plus-1080-covers-both",
        "fixture:nvidia-4090-plus-1080",
        T,
        "2.14.1",
        "cu126",
        plan_env={"CUDA_VISIBLE_DEVICES": None},
    ),
    # No build has sm_120 and sm_61 (BM-2.2): the most capable GPU, the 1080 named and hidden.
    case(
        "mixed-5090-1080",
        t("cuda=12.0+6.1"),
        T,
        "2.15.0",
        SURE_215,
        warns=("no build has kernels for every GPU; not used by this build: target GPU sm_61",),
        plan_env={"CUDA_VISIBLE_DEVICES": "0"},
    ),
    case(
        "nvidia-plus-intel-igpu",
        t("cuda=8.6,xpu=8086:7d55"),
        T,
        "2.15.0",
        SURE_215,
        warns=("not used by this build", "Meteor Lake"),
    ),
    # WSL2 uses the Windows driver: 581.42 is R580+, which meets the 13.x minor-version floor (BM-3.2: 13.x needs
    # >= 580) but not 13.2's own; cu130, which it would meet, is not known to exist (SURE_215).
    case(
        "fixture-wsl2-rtx4070",
        "fixture:wsl2-rtx4070",
        T,
        "2.15.0",
        SURE_215,
        warns=(MINOR,),
    ),
    # ---- Windows (BM-2.2-WIN lists; ROCm is Linux only, BM-1.2) ---------------------------------
    case(
        "win-sm61-cu126",
        t("os=windows,cuda=6.1", W581),
        T,
        "2.14.1",
        "cu126",
        says=("has no build with kernels for sm_61",),
    ),
    case(
        "win-sm86",
        t("os=windows,cuda=8.6", W581),
        T,
        "2.15.0",
        "cu130",
        not_warns=(MINOR,),
    ),
    case("win-sm120-r572", t("os=windows,cuda=12.0", W572), T, "2.11.0", "cu128"),
    case("win-rocm-has-none", t("os=windows,rocm=gfx1100"), T, "2.15.0", "cpu", warns=(TO_CPU,)),
    case("win-xpu-bmg", t("os=windows,xpu=bmg"), T, "2.15.0", "xpu"),
    # ---- AMD (BM-4.1; no host ROCm known: the highest ROCm of the release) ----------------------
    case("gfx942-2.9", t("rocm=gfx942"), ("torch==2.9.*",), "2.9.1", "rocm6.4"),
    # gfx950 first ships with ROCm 7 wheels in 2.10: nothing in 2.9.
    case(
        "gfx950-2.9-cpu",
        t("rocm=gfx950"),
        ("torch==2.9.*",),
        "2.9.1",
        "cpu",
        warns=(TO_CPU,),
        says=("gfx950 is not in its gfx list",),
    ),
    case("gfx950-latest", t("rocm=gfx950"), T, "2.15.0", ("rocm7.2", "rocm7.14")),
    case("gfx90a-2.9", t("rocm=gfx90a"), ("torch==2.9.*",), "2.9.1", "rocm6.4"),
    case("gfx1100-2.9", t("rocm=gfx1100"), ("torch==2.9.*",), "2.9.1", "rocm6.4"),
    case("gfx1151-2.9-cpu", t("rocm=gfx1151"), ("torch==2.9.*",), "2.9.1", "cpu", warns=(TO_CPU,)),
    case("gfx1151-2.10", t("rocm=gfx1151"), ("torch==2.10.*",), "2.10.0", "rocm7.1"),
    # gfx1103 is native from 2.13; before that only as gfx1100 with HSA_OVERRIDE_GFX_VERSION=11.0.0, which has
    # caused GPU page faults and hard hangs (pytorch/pytorch#179653): not by default (issue 12), the CPU build, with
    # the override build offered (tests/resolve/test_hsa_default.py takes it).
    case(
        "gfx1103-2.10-no-override-by-default",
        t("rocm=gfx1103"),
        ("torch==2.10.*",),
        "2.10.0",
        "cpu",
        warns=(TO_CPU, "torch 2.10.0+rocm7.1 would run", "export HSA_OVERRIDE_GFX_VERSION=11.0.0"),
        plan_env={"HSA_OVERRIDE_GFX_VERSION": None},
    ),
    case(
        "gfx1103-2.12-no-override-by-default",
        t("rocm=gfx1103"),
        ("torch==2.12.*",),
        "2.12.1",
        "cpu",
        warns=("--allow-hsa-override",),
        plan_env={"HSA_OVERRIDE_GFX_VERSION": None},
    ),
    case(
        "gfx1103-latest-native",
        t("rocm=gfx1103"),
        T,
        "2.15.0",
        ("rocm7.2", "rocm7.14"),
        plan_env={"HSA_OVERRIDE_GFX_VERSION": None},
    ),
    case(
        "gfx1031-no-override-by-default",
        t("rocm=gfx1031"),
        T,
        "2.15.0",
        "cpu",
        warns=("export HSA_OVERRIDE_GFX_VERSION=10.3.0",),
        plan_env={"HSA_OVERRIDE_GFX_VERSION": None},
    ),
    case(
        "gfx1032-2.9-no-override-by-default",
        t("rocm=gfx1032"),
        ("torch==2.9.*",),
        "2.9.1",
        "cpu",
        warns=("torch 2.9.1+rocm6.4 would run",),
        plan_env={"HSA_OVERRIDE_GFX_VERSION": None},
    ),
    # rocm6.4+ and 7.x wheels fail on gfx906 (rocBLAS dropped it; unsloth #7354, ROCm/TheRock#1844);
    # rocm6.3 (torch <= 2.9) is the last index that works.
    case(
        "gfx906-mi50-last-working-rocm6.3",
        t("rocm=gfx906"),
        T,
        "2.9.1",
        "rocm6.3",
    ),
    # Fixtures: the host ROCm picks the closest build not newer than it; every 2.15 build is newer than 6.4 -> the
    # closest one, warned. 2.15 publishes rocm7.14 and (likely, not advertised) rocm10.0, no rocm7.2 (TI-8670).
    case(
        "fixture-8x-mi300x", "fixture:amd-8x-mi300x", T, "2.15.0", "rocm7.14", warns=("newer than the installed ROCm",)
    ),
    case(
        "fixture-8x-mi300x-2.9",
        "fixture:amd-8x-mi300x",
        ("torch==2.9.*",),
        "2.9.1",
        "rocm6.4",
        not_warns=("newer than",),
    ),
    case("fixture-mi300x-container", "fixture:amd-container-partial", T, "2.15.0", "rocm7.14"),
    case("fixture-mi355x", "fixture:amd-mi355x", T, "2.15.0", "rocm7.14"),
    # ROCm 7.2 installed: 2.15 no longer has a rocm7.2 build (TI-8670), rocm7.14 is the closest, warned.
    case("fixture-strix-halo", "fixture:amd-strix-halo", T, "2.15.0", "rocm7.14", warns=("newer than",)),
    case(
        "fixture-780m-gfx1103-native",
        "fixture:amd-radeon-780m",
        T,
        "2.15.0",
        "rocm7.14",
        plan_env={"HSA_OVERRIDE_GFX_VERSION": None},
    ),
    case("fixture-rx7600-no-rocm", "fixture:amd-hsa-override-invalid", T, "2.15.0", "rocm7.14"),
    case("fixture-rx7900-kfd-unreadable", "fixture:amd-kfd-unreadable", T, "2.15.0", "rocm7.14"),
    case(
        "fixture-rx7900xtx-igpu-set-aside",
        "fixture:amd-rx7900xtx",
        T,
        "2.15.0",
        "rocm7.14",
        warns=("not used by this build", "Raphael"),
    ),
    # gfx941 is in no build and has no known override.
    case("fixture-gfx941-cpu", "fixture:amd-rocminfo-only", T, "2.15.0", "cpu", warns=(TO_CPU,)),
    # The RX 6700 XT (gfx1031) runs gfx1030 kernels only while HSA_OVERRIDE_GFX_VERSION=10.3.0 is set
    # (rocm_overrides.json BM-4.3):
    # the plan must carry it, whether or not the detecting shell happened to have it.
    case(
        "fixture-rx6700xt-user-override",
        "fixture:amd-hsa-override",
        T,
        "2.15.0",
        "rocm7.14",
        plan_env={"HSA_OVERRIDE_GFX_VERSION": "10.3.0"},
    ),
    # ---- Intel (BM-5.2 AOT targets; PCI ids from Linux pciids.h) ----------------------------------
    case("fixture-arc-a770", "fixture:intel-arc-a770", T, "2.15.0", "xpu"),
    case("fixture-arc-b580", "fixture:intel-arc-b580", T, "2.15.0", "xpu"),
    case("fixture-lunar-lake", "fixture:intel-lunar-lake", T, "2.15.0", "xpu", not_warns=("JIT",)),
    case("fixture-max-1550", "fixture:intel-max-1550", T, "2.15.0", "xpu"),
    case("fixture-meteor-lake-h", "fixture:intel-meteor-lake", T, "2.15.0", "xpu", not_warns=("JIT",)),
    case("fixture-uhd630-cpu", "fixture:intel-uhd630", T, "2.15.0", "cpu", says=("no GPU usable",)),
    case("xpu-legacy-cpu", t("xpu=legacy"), T, "2.15.0", "cpu", says=("no GPU usable",)),
    case("xpu-pvc-2.5", t("xpu=pvc"), ("torch==2.5.*",), "2.5.1", "xpu"),
    # ARL-U (0x7D41) is not an AOT target; arl-h is: JIT with a warning.
    case("xpu-arl-u-jit", t("xpu=8086:7d41"), T, "2.15.0", "xpu", warns=("JIT-compiled",)),
    # Wildcat Lake is Xe but in no AOT list: JIT only, with a warning (BM-5.2: every build has generic SPIR-V).
    case(
        "xpu-wildcat-lake-jit",
        t("xpu=8086:fd80"),
        T,
        "2.15.0",
        "xpu",
        warns=("JIT",),
    ),
    # 2.6's Linux AOT list is pvc, xe-lpg, ats-m150: an Arc A770 runs the SPIR-V by JIT (BM-5.2).
    case(
        "xpu-dg2-2.6-jit",
        t("xpu=dg2"),
        ("torch==2.6.*",),
        "2.6.0",
        "xpu",
        warns=("JIT",),
    ),
    # ---- One driver table: a CUDA minor's floor is its GA row (NVIDIA Table 3: 12.6 GA needs 560.28.03; Update 3,
    # which the builds used, 560.35.05). A 560.30 driver runs cu126 natively, not by minor-version compatibility.
    case(
        "driver-12.6-ga",
        t("cuda=6.1", "560.30.01"),
        T,
        "2.14.1",
        "cu126",
        says=("CUDA 12.6's own minimum (560.28.03, 12.6 GA)",),
        not_warns=(MINOR,),
    ),
    # ---- PTX (the audit's corrections): a GPU of a newer major than any SASS runs only through PTX -------------
    # compute_120 PTX is in 2.7 cu128 (build list 12.0+PTX, stripped only from 2.8: PT-157516) and, per PyTorch's
    # variants.json (VJ), in 2.8 cu129 and 2.9/2.10 cu130; the release-only strip for CUDA 13.0 starts at 2.11
    # (#175567). A compute-capability-13.0 GPU therefore gets 2.10.0+cu130, not a CPU build.
    case("ptx-next-major", t("cuda=13.0"), T, "2.10.0", "cu130", says=("has no build with kernels for sm_130",)),
    case("ptx-next-major-2.7", t("cuda=13.0"), ("torch==2.7.*",), "2.7.1", "cu128", says=("compute_120",)),
    # ---- Apple (macOS arm64; MPS floors MPS-13/MPS-14: 13.0 for 2.5-2.8, 14.0 from 2.9; macosx_14_0 wheels from
    # 2.12, MAC-14) ----------------------------------------------------------------------------------------------
    case("fixture-m4-max-macos15", "fixture:apple-m4-max", T, "2.15.0", "cpu", says=("MPS needs macOS >= 14",)),
    case(
        "fixture-m1-monterey-macos12.6",
        "fixture:apple-m1-monterey",
        T,
        # MPS needs macOS 13 in every release (MPS-13): the CPU build of the newest release whose wheels install
        # on 12.6 (2.12+ are macosx_14_0, MAC-14).
        "2.11.0",
        "cpu",
        warns=("has MPS on macOS 12.6",),
    ),
    case("macos14-target", t("os=macos"), T, "2.15.0", "cpu"),
    case("macos13-target", t("os=macos"), T, "2.8.0", "cpu", platform={"release": "13.6"}),
    # 2.12+ wheels are macosx_14_0 (MAC-14): on macOS 13 --allow-cpu cannot install them.
    case(
        "macos13-allow-cpu",
        t("os=macos"),
        T,
        "2.11",
        "cpu",
        allow_cpu=True,
        platform={"release": "13.6"},
    ),
    # macOS 12.0 < 13.0: no MPS anywhere; the newest wheel that installs is not 2.12+ (macosx_14_0).
    case(
        "macos12.0-no-mps",
        t("os=macos"),
        T,
        "2.11",
        "cpu",
        platform={"release": "12.0"},
        warns=("MPS",),
    ),
    # ---- Python and glibc (BM-7.2, BM-7.1) --------------------------------------------------------
    case("py3.9-newest-is-2.8", t("cuda=8.6,python=3.9"), T, "2.8.0", "cu129", says=("no wheels for Python 3.9",)),
    case("py3.9-gtx1080", t("cuda=6.1,python=3.9"), T, "2.8.0", "cu126"),
    case("py3.15-only-2.15", t("cuda=8.6,python=3.15"), T, "2.15.0", SURE_215),
    # 2.13 has cp315 on the PyTorch index (TI-8263), and cu126 with sm_60 SASS: a GPU build, no longer the CPU one.
    case("py3.15-gtx1080", t("cuda=6.1,python=3.15"), T, "2.13.0", "cu126", says=("no wheels for Python 3.15",)),
    # 2.7+ x86_64 wheels are manylinux_2_28; 2.6 is manylinux1 (glibc 2.17 is enough).
    case(
        "glibc-2.17", t("cuda=8.6"), T, "2.6.0", "cu126", platform={"libc": "glibc 2.17"}, says=("needs glibc >= 2.28",)
    ),
    # ---- Companions (BM-7.3): same index, matching versions ------------------------------------------
    case(
        "torchvision-latest",
        t("cuda=8.6"),
        ("torch", "torchvision"),
        "2.15.0",
        SURE_215,
        packages={"torchvision": "0.29.2"},
    ),
    case(
        "torchvision-2.9",
        t("cuda=8.6"),
        ("torch==2.9.*", "torchvision"),
        "2.9.1",
        "cu130",
        packages={"torchvision": "0.24.1"},
    ),
    case(
        "torchvision-pinned-picks-torch",
        t("cuda=8.6"),
        ("torch", "torchvision==0.24.0"),
        "2.9.0",
        "cu130",
        packages={"torchvision": "0.24.0"},
    ),
    case(
        "torchaudio-2.9",
        t("cuda=8.6"),
        ("torch==2.9.*", "torchaudio"),
        "2.9.1",
        "cu130",
        packages={"torchaudio": "2.9.1"},
    ),
    case(
        "gtx1080-torchvision",
        "fixture:nvidia-gtx1080",
        ("torch", "torchvision"),
        "2.14.1",
        "cu126",
        packages={"torchvision": "0.29.1"},
    ),
    case(
        "gtx1080-torchvision-0.28",
        "fixture:nvidia-gtx1080",
        ("torch", "torchvision==0.28.0"),
        "2.13.0",
        "cu126",
        packages={"torchvision": "0.28.0"},
    ),
    # ---- Override variables (uv / WheelNext providers) on a GPU-less machine ------------------------
    case(
        "env-sm90-driver580",
        "fixture:cpu-zen4",
        T,
        "2.15.0",
        SURE_215,
        env={"NV_VARIANT_PROVIDER_FORCE_SM_ARCH": "9.0", "UV_CUDA_DRIVER_VERSION": D580},
    ),
    case(
        "env-sm120-cuda12.8",
        "fixture:cpu-zen4",
        T,
        "2.11.0",
        "cu128",
        env={"NV_VARIANT_PROVIDER_FORCE_SM_ARCH": "12.0", "NV_VARIANT_PROVIDER_FORCE_CUDA_DRIVER_VERSION": "12.8"},
    ),
    case(
        "env-gfx1031",
        "fixture:cpu-zen4",
        T,
        "2.15.0",
        "cpu",
        env={"AMD_VARIANT_PROVIDER_FORCE_GFX_ARCH": "gfx1031"},
        plan_env={"HSA_OVERRIDE_GFX_VERSION": None},
        warns=("export HSA_OVERRIDE_GFX_VERSION=10.3.0",),
    ),
    case(
        "env-intel-bmg-ip",
        "fixture:cpu-zen4",
        T,
        "2.15.0",
        "xpu",
        env={"INTEL_VARIANT_PROVIDER_FORCE_DEVICE_IP": "20.1.0"},
    ),
    case(
        "env-gtx1080-driver535",
        "fixture:nvidia-gtx1080",
        T,
        "2.14.1",
        "cu126",
        env={"UV_CUDA_DRIVER_VERSION": D535},
        warns=(MINOR,),
    ),
    # ---- A Jetson (Tegra, no PCI GPU): PyTorch's index has none of its CUDA builds (JETSON): the CPU build, warned
    case(
        "fixture-nvidia-jetson-no-pci-cpu",
        "fixture:nvidia-jetson-no-pci",
        T,
        "2.15.0",
        "cpu",
        warns=("no CUDA builds for Jetson", "developer.download.nvidia.com/compute/redist/jp/"),
    ),
    # ---- An Intel Mac: the last macOS x86_64 build, torch 2.2.2 (MAC-X86: PyTorch stopped after 2.2) -----------
    case(
        "fixture-intel-mac-mojave",
        "fixture:apple-intel-mojave-skylake",
        ("torch", "torchvision"),
        "2.2.2",
        "cpu",
        says=("last release built for macOS x86_64", "#114602"),
        packages={"torchvision": "0.17.2"},
    ),
    # ---- No usable GPU: the newest CPU build -------------------------------------------------------
    *(
        case(f"fixture-{name}-cpu", f"fixture:{name}", T, "2.15.0", "cpu", says=("no GPU usable",))
        for name in (
            "cpu-zen4",
            "cpu-alderlake-v3",
            "cpu-sapphire-rapids-amx",
            "cpu-grace",
            "cpu-graviton3",
            "container-leaked-sysfs",
            "leftover-nvidia-smi",
            "nvidia-smi-exit9",
            "amd-no-driver",
            "amd-container-no-kfd",
            "intel-no-render-node",
        )
    ),
]
