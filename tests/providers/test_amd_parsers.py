"""AMD parsers on recorded formats: KFD properties, rocminfo, rocm_agent_enumerator, overrides, versions."""

from __future__ import annotations

from pathlib import Path

import pytest

from wheelfit_amd.devices import fallback_name, lookup
from wheelfit_amd.gfx import decode_target_version, hsa_override, parse_override
from wheelfit_amd.kfd import node_from_properties, parse_properties
from wheelfit_amd.rocm_tools import parse_agent_enumerator, parse_rocminfo
from wheelfit_amd.rocm_version import parse_version_file, rocm_root

MACHINES = Path(__file__).resolve().parent.parent / "machines"

# A real MI300X GPU node, from the gpuq project's test mock (verbatim).
MI300X_NODE = """cpu_cores_count 0
simd_count 1216
mem_banks_count 1
caches_count 626
io_links_count 7
p2p_links_count 1
cpu_core_id_base 0
simd_id_base 2147487784
max_waves_per_simd 8
lds_size_in_kb 64
gds_size_in_kb 0
num_gws 64
wave_front_size 64
array_count 32
simd_arrays_per_engine 1
cu_per_simd_array 10
simd_per_cu 4
max_slots_scratch_cu 32
gfx_target_version 90402
vendor_id 4098
device_id 29857
location_id 18176
domain 0
drm_render_minor 128
hive_id 10631624818852212319
num_sdma_engines 2
num_sdma_xgmi_engines 14
num_sdma_queues_per_engine 8
num_cp_queues 24
max_engine_clk_fcompute 2100
local_mem_size 0
fw_version 166
capability 746037888
debug_prop 1511
sdma_fw_version 22
unique_id 4376936076086227261
num_xcc 8
max_engine_clk_ccompute 2400
"""

# The CPU node of the same mock (first lines; the rest are zeros too).
CPU_NODE = """cpu_cores_count 96
simd_count 0
mem_banks_count 1
caches_count 0
io_links_count 5
p2p_links_count 3
gfx_target_version 0
vendor_id 0
device_id 0
location_id 0
domain 0
drm_render_minor 0
max_engine_clk_ccompute 2400
"""


# -- gfx_target_version ------------------------------------------------------------------

# gfx_target_version values and their names, as ROCm/rocminfo rocm_agent_enumerator (readFromKFD) decodes them.
DECODE_TABLE = {
    90000: "gfx900",
    90006: "gfx906",
    90008: "gfx908",
    90010: "gfx90a",
    90012: "gfx90c",
    90400: "gfx940",
    90401: "gfx941",
    90402: "gfx942",
    90500: "gfx950",
    100300: "gfx1030",
    100305: "gfx1035",
    110000: "gfx1100",
    110001: "gfx1101",
    110002: "gfx1102",
    110003: "gfx1103",
    110500: "gfx1150",
    110501: "gfx1151",
    120000: "gfx1200",
    120001: "gfx1201",
}


@pytest.mark.parametrize(("value", "gfx"), sorted(DECODE_TABLE.items()))
def test_decode_target_version_matches_reference_table(value: int, gfx: str) -> None:
    assert decode_target_version(value) == gfx


def test_decode_target_version_cpu_node_is_none() -> None:
    assert decode_target_version(0) is None


# -- KFD properties ----------------------------------------------------------------------


def test_properties_parser_reads_every_line_as_raw_text() -> None:
    props = parse_properties(MI300X_NODE)
    assert len(props) == 38
    assert props["gfx_target_version"] == "90402"
    assert props["hive_id"] == "10631624818852212319"  # 64-bit values stay exact


def test_mi300x_node_decodes_to_slot_render_node_and_compute_units() -> None:
    node = node_from_properties(1, parse_properties(MI300X_NODE))
    assert node is not None
    assert node.gfx == "gfx942"
    assert node.pci_id == "1002:74a1"  # device_id 29857
    assert node.slot == "0000:47:00.0"  # location_id 18176 = 0x4700, domain 0
    assert node.render_minor == 128
    assert node.compute_units == 304  # 1216 SIMDs / 4 per CU, rocminfo's "Compute Unit: 304"
    assert node.gpu_family is None


def test_cpu_node_and_other_vendor_are_not_gpus() -> None:
    assert node_from_properties(0, parse_properties(CPU_NODE)) is None
    # A public KFD test fixture has an NVIDIA KFD-like node (vendor_id 4318).
    nvidia = MI300X_NODE.replace("vendor_id 4098", "vendor_id 4318")
    assert node_from_properties(2, parse_properties(nvidia)) is None


def test_optional_gpu_family_domain_and_devfn() -> None:
    text = (
        MI300X_NODE.replace("gfx_target_version 90402", "gfx_target_version 110501")
        .replace("domain 0", "domain 1")
        .replace("location_id 18176", "location_id 50450")  # 0xc512: bus c5, dev 2, fn 2
        + "gpu_family gfx115X\n"
    )
    node = node_from_properties(3, parse_properties(text))
    assert node is not None
    assert (node.gfx, node.slot, node.gpu_family) == ("gfx1151", "0001:c5:02.2", "gfx115X")


# -- rocminfo --------------------------------------------------------------------------------


def test_rocminfo_docs_sample_gives_one_gpu_agent() -> None:
    text = (MACHINES / "amd-rocminfo-only/root/opt/rocm/bin/rocminfo.out").read_text()
    agents = parse_rocminfo(text)
    assert len(agents) == 1  # the CPU agent is dropped
    a = agents[0]
    assert (a.gfx, a.marketing_name, a.node, a.chip_id, a.compute_units) == (
        "gfx941",
        "AMD Instinct MI300X",
        1,
        0x74A1,
        304,
    )
    assert a.bus_devfn == "03:00.0"  # BDFID 768


def test_rocminfo_generic_isa_lines_do_not_replace_the_agent_name() -> None:
    # Newer ROCm's rocminfo lists a generic ISA (amdgcn-amd-amdhsa--gfx11-generic) after the specific one.
    text = """*******
Agent 2
*******
  Name:                    gfx1151
  Marketing Name:          AMD Radeon Graphics
  Device Type:             GPU
  ISA Info:
    ISA 1
      Name:                    amdgcn-amd-amdhsa--gfx1151
    ISA 2
      Name:                    amdgcn-amd-amdhsa--gfx11-generic
*******
Agent 3
*******
  Name:                    gfx1201
  Device Type:             GPU
  ISA Info:
    ISA 1
      Name:                    amdgcn-amd-amdhsa--gfx1201
    ISA 2
      Name:                    amdgcn-amd-amdhsa--gfx12-generic
"""
    agents = parse_rocminfo(text)
    assert [a.gfx for a in agents] == ["gfx1151", "gfx1201"]
    assert agents[0].marketing_name == "AMD Radeon Graphics"
    assert agents[1].marketing_name is None
    assert agents[1].node is None and agents[1].chip_id is None


def test_rocminfo_error_output_has_no_agents() -> None:
    assert parse_rocminfo("ROCk module is NOT loaded, possibly no GPU devices\n") == []


# -- rocm_agent_enumerator ------------------------------------------------------------------


def test_enumerator_drops_gfx000_and_keeps_one_line_per_gpu() -> None:
    # Old output (ROCm/rocminfo docs still show the CPU's gfx000 line) with one line per MI300X.
    assert parse_agent_enumerator("gfx000\ngfx942\ngfx942\n") == ["gfx942", "gfx942"]
    assert parse_agent_enumerator("gfx1100\n") == ["gfx1100"]
    assert parse_agent_enumerator("gfx000\n") == []


# -- HSA_OVERRIDE_GFX_VERSION -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "gfx"),
    [("11.0.0", "gfx1100"), ("10.3.0", "gfx1030"), ("9.0.10", "gfx90a"), ("12.0.1", "gfx1201"), ("9.0.0", "gfx900")],
)
def test_override_renders_like_kfd(value: str, gfx: str) -> None:
    assert parse_override(value) == gfx


@pytest.mark.parametrize(
    "value", ["", "11.0", "11.0.0.1", "11.0.0 ", "gfx1100", "64.0.0", "11.256.0", "11.0.256", "-1.0.0"]
)
def test_override_rejects_what_libhsakmt_rejects(value: str) -> None:
    with pytest.raises(ValueError):
        parse_override(value)


def test_per_node_override_wins_and_applies_to_its_node_only() -> None:
    env = {"HSA_OVERRIDE_GFX_VERSION": "11.0.0", "HSA_OVERRIDE_GFX_VERSION_2": "10.3.0"}
    two, one = hsa_override(env, 2), hsa_override(env, 1)
    assert two is not None and (two.variable, two.gfx) == ("HSA_OVERRIDE_GFX_VERSION_2", "gfx1030")
    assert one is not None and (one.variable, one.gfx) == ("HSA_OVERRIDE_GFX_VERSION", "gfx1100")
    unknown = hsa_override(env, None)
    assert unknown is not None and unknown.gfx == "gfx1100"
    assert hsa_override({}, 1) is None


def test_invalid_per_node_override_is_reported_not_replaced_by_the_global_one() -> None:
    env = {"HSA_OVERRIDE_GFX_VERSION": "11.0.0", "HSA_OVERRIDE_GFX_VERSION_1": "eleven"}
    o = hsa_override(env, 1)
    assert o is not None and o.gfx is None
    assert o.error is not None and "HSA_OVERRIDE_GFX_VERSION_1 is invalid" in o.error


# -- ROCm version ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "version"),
    [("6.4.0-47\n", "6.4.0"), ("7.1.1\n", "7.1.1"), ("7.2.4", "7.2.4"), ("\n", None), ("unknown\n", None)],
)
def test_version_file(text: str, version: str | None) -> None:
    assert parse_version_file(text) == version


def test_rocm_root_honours_rocm_path_then_rocm_home() -> None:
    assert rocm_root({}) == "/opt/rocm"
    assert rocm_root({"ROCM_HOME": "/usr/local/rocm/"}) == "/usr/local/rocm"
    assert rocm_root({"ROCM_PATH": "/opt/rocm-7.1.1", "ROCM_HOME": "/x"}) == "/opt/rocm-7.1.1"


# -- device table ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("device", "gfx", "integrated", "name_part"),
    [
        (0x74A1, "gfx942", False, "MI300X"),
        (0x75A3, "gfx950", False, "MI355X"),
        (0x75A0, "gfx950", False, "MI350X"),
        (0x744C, "gfx1100", False, "Navi 31"),
        (0x1586, "gfx1151", True, "Strix Halo"),
        (0x150E, "gfx1150", True, "Strix"),
        (0x15BF, "gfx1103", True, "Phoenix1"),
        (0x1900, "gfx1103", True, "Phoenix3"),
        (0x73DF, "gfx1031", False, "Navi 22"),
        (0x73AF, "gfx1030", False, "Navi 21"),  # inside the 0x73a0-0x73bf range
        (0x66AF, "gfx906", False, "Vega 20"),
        (0x7550, "gfx1201", False, "9070"),
    ],
)
def test_device_table(device: int, gfx: str, integrated: bool, name_part: str) -> None:
    info = lookup(device)
    assert info is not None
    assert (info.gfx, info.integrated) == (gfx, integrated)
    assert name_part in info.name
    assert any(upstream in info.source for upstream in ("torchruntime", "rocminfo", "amd-smi"))  # a public source


def test_unknown_device() -> None:
    assert lookup(0x73C2) is None  # not in the enumerator's gfx1031 list
    assert lookup(0x2684) is None
    assert fallback_name(0x7FFF) == "AMD GPU 1002:7fff"
