"""Fuzz targets: KFD topology ``properties``, rocminfo, rocm_agent_enumerator, ROCm's version file, the HSA
override, and the AMD provider end to end on a sysroot built from them (issue 15).

Contract (wheelfit_amd): ``parse_properties``, ``node_from_properties``, ``parse_rocminfo``,
``parse_agent_enumerator`` and ``parse_version_file`` never raise; ``parse_override`` raises only ``ValueError``.
What they return holds: a gfx name is ``gfx`` and hex digits, a PCI id is ``1002:`` and four hex digits, a slot
is ``dddd:bb:dd.f``, a rocminfo agent's ``bus_devfn`` is ``bb:dd.f``. The provider never raises and records no
Python exception as a probe error, whatever the KFD, PCI and version files hold.
"""

from __future__ import annotations

import re

from hypothesis import example, given
from hypothesis import strategies as st

from wheelfit_amd import PROVIDER
from wheelfit_amd.gfx import decode_target_version, hsa_override, parse_override
from wheelfit_amd.kfd import KFD_NODES, node_from_properties, parse_properties
from wheelfit_amd.rocm_tools import parse_agent_enumerator, parse_rocminfo
from wheelfit_amd.rocm_version import parse_version_file

from .strategies import binary_text, junk, near_valid, samples, texts
from .sysroot import SLOW, assert_no_bug, tree

PROPERTIES = samples("amd-*/root/sys/class/kfd/kfd/topology/nodes/*/properties", limit=40)
ROCMINFO = samples("amd-*/root/opt/rocm/bin/rocminfo.out")
VERSIONS = samples("amd-*/root/opt/rocm/.info/version")
ENUMERATOR = ["gfx000\ngfx942\ngfx942\n", "gfx1100\n", "gfx000\ngfx90a\ngfx1151\n"]

GFX = re.compile(r"gfx[0-9]{1,2}[0-9a-f]{2,4}")
PCI_ID = re.compile(r"1002:[0-9a-f]{4}")
SLOT = re.compile(r"[0-9a-f]{4,8}:[0-9a-f]{2}:[01][0-9a-f]\.[0-7]")
BUS_DEVFN = re.compile(r"[0-9a-f]{2}:[01][0-9a-f]\.[0-7]")


@given(texts(PROPERTIES) | binary_text(), st.integers(0, 1 << 20))
@example("gfx_target_version 90402\nvendor_id 4098\ndevice_id -5\nlocation_id -1\n", 1)
@example("gfx_target_version 90402\nvendor_id 4098\ndevice_id 99999999\nlocation_id 99999999\n", 1)
@example("gfx_target_version 90402\nvendor_id 4098\ndevice_id ٣\nlocation_id +7\ndomain -1\n", 1)
def test_a_kfd_node_is_an_amd_gpu_or_none(text: str, node: int) -> None:
    props = parse_properties(text)
    assert all(k and not any(c.isspace() for c in k) and v == v.strip() for k, v in props.items())
    gpu = node_from_properties(node, props)
    if gpu is None:
        return
    assert gpu.node == node and GFX.fullmatch(gpu.gfx), gpu
    assert PCI_ID.fullmatch(gpu.pci_id), gpu
    assert gpu.slot is None or SLOT.fullmatch(gpu.slot), gpu
    assert gpu.render_minor is None or gpu.render_minor > 0
    assert gpu.compute_units is None or gpu.compute_units >= 0


@given(st.integers(-(10**12), 10**12))
def test_a_target_version_decodes_to_a_gfx_name_or_none(value: int) -> None:
    gfx = decode_target_version(value)
    assert (gfx is None) is (value <= 0)
    assert gfx is None or GFX.fullmatch(gfx)


@given(texts(ROCMINFO) | binary_text())
@example("Agent 1\n  Name: gfx942\n  Device Type: GPU\n  BDFID: -1\n")
@example("Agent 1\n  Name: gfx942\n  Device Type: GPU\n  BDFID: 999999\n  Node: ²\n")
def test_rocminfo_gives_gpu_agents(text: str) -> None:
    for agent in parse_rocminfo(text):
        assert re.fullmatch(r"gfx[0-9a-f]+", agent.gfx), agent
        assert agent.bus_devfn is None or BUS_DEVFN.fullmatch(agent.bus_devfn), agent
        assert agent.marketing_name is None or agent.marketing_name.strip()


@given(texts(ENUMERATOR) | binary_text())
def test_the_agent_enumerator_gives_gfx_names(text: str) -> None:
    assert all(re.fullmatch(r"gfx[0-9a-f]+", g) and g != "gfx000" for g in parse_agent_enumerator(text))


@given(texts(VERSIONS) | binary_text())
@example("0.\u0660")  # found by HYPOTHESIS_PROFILE=fuzz: Arabic-Indic zero
def test_the_rocm_version_file_gives_a_version_or_none(text: str) -> None:
    version = parse_version_file(text)
    assert version is None or re.fullmatch(r"\d+\.\d+(\.\d+)?", version, re.ASCII), version


@given(st.one_of(junk(), st.from_regex(r"\A\s?\d{1,4}\.\d{1,4}\.\d{1,4}\s?\Z")), st.none() | st.integers(0, 9))
@example("9.4.2", 0)
@example("٩.٤.٢", None)
def test_an_hsa_override_is_a_gfx_name_or_an_error_saying_so(value: str, node: int | None) -> None:
    try:
        gfx = parse_override(value)
    except ValueError:
        gfx = None
    assert gfx is None or (GFX.fullmatch(gfx) and value.isascii()), gfx  # libhsakmt's %u reads ASCII digits
    override = hsa_override({"HSA_OVERRIDE_GFX_VERSION": value}, node)
    assert override is not None and override.gfx == gfx
    assert (override.error is None) is (gfx is not None)


NODE = near_valid(PROPERTIES) | binary_text()
PCI_FILE = st.sampled_from(["0x1002\n", "0x744c\n", "0x030000\n", "0x120000\n", "0x74a1\n"]) | junk()


@given(
    st.lists(NODE, min_size=1, max_size=3),
    st.lists(st.tuples(PCI_FILE, PCI_FILE, PCI_FILE), max_size=2),
    near_valid(VERSIONS) | junk(),
    st.sampled_from([{}, {"HSA_OVERRIDE_GFX_VERSION": "11.0.0"}, {"HSA_OVERRIDE_GFX_VERSION_1": "x"}]),
)
@SLOW
def test_the_provider_reports_gpus_or_failed_probes(
    nodes: list[str], pci: list[tuple[str, str, str]], version: str, environ: dict[str, str]
) -> None:
    with tree() as root:
        root.write(f"{KFD_NODES}/0/properties", PROPERTIES[0])
        for i, text in enumerate(nodes, 1):
            root.write(f"{KFD_NODES}/{i}/properties", text)
        for i, (vendor, device, cls) in enumerate(pci):
            slot = f"sys/bus/pci/devices/0000:{0x40 + i:02x}:00.0"
            root.write(f"{slot}/vendor", vendor)
            root.write(f"{slot}/device", device)
            root.write(f"{slot}/class", cls)
        root.write("opt/rocm/.info/version", version)
        root.write("dev/kfd", "")
        root.write("dev/dri/renderD128", "")
        result = PROVIDER.probe(root.system(environ))
    assert_no_bug(result)
    for acc in result.accelerators:
        assert acc["vendor"] == "amd" and acc["name"]
        assert acc["pci_id"] is None or PCI_ID.fullmatch(acc["pci_id"]), acc
        assert acc["gfx"] is None or GFX.fullmatch(acc["gfx"]), acc
        assert acc["slot"] is None or SLOT.fullmatch(acc["slot"]), acc
