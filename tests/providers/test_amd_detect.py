"""The AMD provider end to end on small sysroot trees: fallbacks, gating and overrides.

Each test builds the machine it needs (sysfs files in their real format, fake
ROCm tools as shell scripts) and runs the provider unchanged.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from wheelfit_amd import PROVIDER
from wheelfit_probekit import ProviderResult, System

from .test_amd_parsers import MI300X_NODE


class Tree:
    def __init__(self, root: Path) -> None:
        self.root = root

    def write(self, rel: str, text: str, exe: bool = False) -> None:
        p = self.root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
        if exe:
            p.chmod(0o755)

    def tool(self, rel: str, body: str) -> None:
        self.write(rel, "#!/bin/sh\n" + body, exe=True)

    def pci(self, slot: str, device: int, driver: str | None = "amdgpu", render: int | None = None) -> None:
        base = f"sys/bus/pci/devices/{slot}"
        self.write(f"{base}/vendor", "0x1002\n")
        self.write(f"{base}/device", f"0x{device:04x}\n")
        self.write(f"{base}/class", "0x030000\n" if device < 0x74A0 else "0x120000\n")
        if driver:
            (self.root / f"sys/bus/pci/drivers/{driver}").mkdir(parents=True, exist_ok=True)
            os.symlink(f"../../drivers/{driver}", self.root / base / "driver")
        if render is not None:
            self.write(f"{base}/drm/renderD{render}/dev", f"226:{render}\n")
            self.write(f"dev/dri/renderD{render}", "")

    def kfd(self) -> None:
        self.write("dev/kfd", "")

    def probe(self, env: dict[str, str] | None = None, timeout: float = 10.0) -> ProviderResult:
        system = System.from_sysroot(
            self.root, environ={"PATH": "/usr/bin:/bin", **(env or {})}, command_timeout=timeout
        )
        return PROVIDER.probe(system)


def failed(result: ProviderResult) -> list[tuple[str, str, str]]:
    return [(r.source, r.error or "", r.hint or "") for r in result.probes if not r.ok]


def only(result: ProviderResult) -> dict[str, Any]:
    assert len(result.accelerators) == 1, result.accelerators
    return result.accelerators[0]


def rocminfo_agent(gfx: str, name: str, chip: int, bdfid: int) -> str:
    return f"""*******
Agent 2
*******
  Name:                    {gfx}
  Marketing Name:          {name}
  Node:                    1
  Device Type:             GPU
  Chip ID:                 {chip}(0x{chip:x})
  BDFID:                   {bdfid}
  Compute Unit:            40
"""


def test_rocminfo_is_run_without_the_override_so_gfx_stays_physical(tmp_path: Path) -> None:
    t = Tree(tmp_path)
    t.pci("0000:0b:00.0", 0x73DF, render=128)
    t.kfd()
    t.write("opt/rocm/.info/version", "6.3.3\n")
    # Like the runtime: with the variable set, the agent reports the override's ISA.
    t.write("opt/rocm/bin/physical.out", rocminfo_agent("gfx1031", "AMD Radeon RX 6700 XT", 0x73DF, 0x0B00))
    t.tool(
        "opt/rocm/bin/rocminfo",
        'if [ -n "$HSA_OVERRIDE_GFX_VERSION" ]; then\n'
        '  sed s/gfx1031/gfx1030/ "$(dirname "$0")/physical.out"; exit 0\n'
        "fi\n"
        'exec cat "$(dirname "$0")/physical.out"\n',
    )
    result = t.probe({"HSA_OVERRIDE_GFX_VERSION": "10.3.0"})
    acc = only(result)
    assert (acc["source"], acc["gfx"], acc["effective_gfx"]) == ("rocminfo", "gfx1031", "gfx1030")
    assert (acc["name"], acc["slot"], acc["node"], acc["rocm_version"]) == (
        "AMD Radeon RX 6700 XT",
        "0000:0b:00.0",
        1,
        "6.3.3",
    )
    details = [r.detail or "" for r in result.probes if r.source == "hsa-override" and r.ok]
    assert details and "gfx1031 runs as gfx1030" in details[0]


def test_agent_enumerator_fallback_keeps_one_entry_per_gpu(tmp_path: Path) -> None:
    t = Tree(tmp_path)
    t.pci("0000:05:00.0", 0x74A1, render=128)
    t.pci("0000:26:00.0", 0x74A1, render=129)
    t.kfd()
    t.write("target.lst", "gfx90a\n")
    # The real script prints a target.lst named by ROCM_TARGET_LST instead of detecting.
    t.tool(
        "opt/rocm/bin/rocm_agent_enumerator",
        'if [ -n "$ROCM_TARGET_LST" ]; then echo gfx000; cat "$ROCM_TARGET_LST"; exit 0; fi\n'
        "printf 'gfx000\\ngfx942\\ngfx942\\n'\n",
    )
    result = t.probe({"ROCM_TARGET_LST": str(tmp_path / "target.lst")})
    assert [(a["source"], a["gfx"], a["slot"], a["name"]) for a in result.accelerators] == [
        ("rocm_agent_enumerator", "gfx942", "0000:05:00.0", "AMD Instinct MI300X"),
        ("rocm_agent_enumerator", "gfx942", "0000:26:00.0", "AMD Instinct MI300X"),
    ]
    assert all(a["rocm_version"] is None for a in result.accelerators)


def test_rocm_path_moves_version_file_and_tools(tmp_path: Path) -> None:
    t = Tree(tmp_path)
    t.pci("0000:c5:00.0", 0x1586, render=128)
    t.kfd()
    t.write("srv/rocm-7.2/.info/version-rocm", "7.2.1-81\n")  # only the -rocm variant exists
    t.write("srv/rocm-7.2/bin/out", rocminfo_agent("gfx1151", "AMD Radeon Graphics", 0x1586, 0xC500))
    t.tool("srv/rocm-7.2/bin/rocminfo", 'exec cat "$(dirname "$0")/out"\n')
    acc = only(t.probe({"ROCM_PATH": "/srv/rocm-7.2"}))
    assert (acc["rocm_version"], acc["source"], acc["gfx"], acc["integrated"]) == ("7.2.1", "rocminfo", "gfx1151", True)
    # rocminfo's generic name loses to the device table's.
    assert acc["name"] == "AMD Radeon 8060S / 8050S (Strix Halo)"


def test_hung_rocminfo_is_stopped_and_pci_answers(tmp_path: Path) -> None:
    t = Tree(tmp_path)
    t.pci("0000:03:00.0", 0x744C, render=128)
    t.kfd()
    t.tool("opt/rocm/bin/rocminfo", "sleep 30\n")
    t.tool("opt/rocm/bin/rocm_agent_enumerator", "echo gfx1100\n")
    result = t.probe(timeout=1.0)
    acc = only(result)
    assert (acc["source"], acc["gfx"], acc["pci_id"]) == ("pci-sysfs", "gfx1100", "1002:744c")
    assert any(s == "rocminfo" and "did not answer" in e for s, e, _ in failed(result))
    # After a timeout the enumerator (which may call rocminfo itself) is not tried.
    assert not any(r.source == "rocm_agent_enumerator" for r in result.probes)


def test_failing_rocminfo_does_not_hide_kfd(tmp_path: Path) -> None:
    t = Tree(tmp_path)
    t.write("sys/class/kfd/kfd/topology/nodes/1/properties", MI300X_NODE)
    t.pci("0000:47:00.0", 0x74A1, render=128)
    t.kfd()
    t.tool("opt/rocm/bin/rocminfo", 'echo "HSA_STATUS_ERROR_OUT_OF_RESOURCES"; exit 1\n')
    result = t.probe()
    acc = only(result)
    assert (acc["source"], acc["name"], acc["slot"], acc["compute_units"]) == (
        "kfd",
        "AMD Instinct MI300X",
        "0000:47:00.0",
        304,
    )
    assert ("rocminfo", "rocminfo exited with 1: HSA_STATUS_ERROR_OUT_OF_RESOURCES", "") in failed(result)


def test_gpu_missing_from_a_complete_kfd_topology_is_not_guessed(tmp_path: Path) -> None:
    t = Tree(tmp_path)
    t.write("sys/class/kfd/kfd/topology/nodes/1/properties", MI300X_NODE)
    t.pci("0000:47:00.0", 0x74A1, render=128)
    t.pci("0000:0a:00.0", 0x6860, render=129)  # a Vega 10 amdgpu drives, but KFD does not list
    t.kfd()
    result = t.probe()
    assert only(result)["slot"] == "0000:47:00.0"
    assert any("0000:0a:00.0" in e and "not in the KFD topology" in e for _, e, _ in failed(result))


def test_gpu_bound_to_another_driver_is_not_listed(tmp_path: Path) -> None:
    t = Tree(tmp_path)
    t.pci("0000:47:00.0", 0x74A1, driver="vfio-pci")
    t.kfd()
    result = t.probe()
    assert result.accelerators == []
    assert any(
        s == "pci-sysfs" and "bound to vfio-pci" in e and "amdgpu driver is not loaded" in h
        for s, e, h in failed(result)
    )


def test_per_node_override_changes_only_its_node(tmp_path: Path) -> None:
    t = Tree(tmp_path)
    nav31 = MI300X_NODE.replace("90402", "110000").replace("29857", "29772")
    t.write("sys/class/kfd/kfd/topology/nodes/1/properties", nav31)
    t.write(
        "sys/class/kfd/kfd/topology/nodes/2/properties",
        nav31.replace("location_id 18176", "location_id 18432").replace("drm_render_minor 128", "drm_render_minor 129"),
    )
    t.pci("0000:47:00.0", 0x744C, render=128)
    t.pci("0000:48:00.0", 0x744C, render=129)
    t.kfd()
    result = t.probe({"HSA_OVERRIDE_GFX_VERSION_2": "11.0.1"})
    assert [(a["node"], a["gfx"], a["effective_gfx"]) for a in result.accelerators] == [
        (1, "gfx1100", "gfx1100"),
        (2, "gfx1100", "gfx1101"),
    ]


def test_not_linux_is_skipped(tmp_path: Path) -> None:
    t = Tree(tmp_path)
    (tmp_path / "Windows/System32").mkdir(parents=True)
    result = t.probe()
    assert result.accelerators == []
    assert [(r.source, r.ok) for r in result.probes] == [("kfd", True)]
    assert "Linux only" in (result.probes[0].detail or "")


def test_no_amd_hardware_runs_no_tool(tmp_path: Path) -> None:
    t = Tree(tmp_path)
    t.tool("opt/rocm/bin/rocminfo", "echo should-not-run >&2; exit 3\n")
    result = t.probe()
    assert result.accelerators == []
    assert failed(result) == []
    assert not any(r.source == "rocminfo" for r in result.probes)


def test_a_rocminfo_that_repeats_its_agent_gives_one_gpu_and_says_so(tmp_path: Path) -> None:
    t = Tree(tmp_path)
    t.pci("0000:0b:00.0", 0x744C, render=128)
    t.kfd()
    t.write("opt/rocm/bin/out", rocminfo_agent("gfx1100", "AMD Radeon RX 7900 XTX", 0x744C, 0x0B00) * 5000)
    t.tool("opt/rocm/bin/rocminfo", 'exec cat "$(dirname "$0")/out"\n')
    result = t.probe()
    acc = only(result)
    assert (acc["source"], acc["gfx"], acc["slot"]) == ("rocminfo", "gfx1100", "0000:0b:00.0")
    (record,) = [r for r in result.probes if r.source == "rocminfo"]
    assert record.detail == (
        "gfx1100 AMD Radeon RX 7900 XTX; 4999 repeated agent(s) discarded (one GPU per KFD node and PCI address)"
    )
