"""Fuzz targets: PCI sysfs ``vendor``/``device``/``class``/``subsystem_*`` files (probekit's ``scan_pci``, which every
GPU provider reads), the Intel provider end to end on a sysroot of them, and the Level Zero child's JSON (issue 15).

Contract: ``parse_int`` never raises and reads only what the kernel writes (ASCII digits, hex with an optional
``0x``), so ``scan_pci`` gives 16-bit vendor, device and subsystem ids and a 24-bit class, or skips the function.
``parse_level_zero`` raises only ``ProbeError``, and the devices it returns have 32-bit fields whose ``device_ip``
formats. The Intel provider never raises and records no Python exception as a probe error.
"""

from __future__ import annotations

import re

from hypothesis import example, given
from hypothesis import strategies as st

from wheelfit_intel import PROVIDER
from wheelfit_intel.level_zero import parse_level_zero
from wheelfit_probekit import ProbeError, parse_int, scan_pci

from ..conftest import MACHINES
from .strategies import binary_text, junk, texts
from .sysroot import SLOW, assert_no_bug, tree


def _recorded(name: str) -> st.SearchStrategy[str]:
    """What sysfs holds in this file on the recorded machines (most examples), or a near miss."""
    seen = sorted({p.read_text() for p in MACHINES.glob(f"*/root/sys/devices/pci0000:00/*/{name}")})
    assert seen, name
    near = junk() | st.from_regex(r"\A(0x)?[0-9a-fA-F]{1,8}\n?\Z")
    return st.one_of(st.sampled_from(seen), st.sampled_from(seen), st.sampled_from(seen), near)


ID_FILE = _recorded("device")
DRIVERS = st.sampled_from(["i915", "xe", "i915", "xe", None, "amdgpu", "nvidia", "snd_hda_intel", "vfio-pci"])
#: Mostly Intel's vendor id, so the Intel provider gets past its first check.
VENDOR = st.one_of(st.just("0x8086\n"), st.just("0x8086\n"), _recorded("vendor"))
LEVEL_ZERO = [
    '{"ok": true, "devices": [{"type": 1, "vendor_id": 32902, "device_id": 57867, "flags": 0, '
    '"name": "Intel(R) Arc(TM) B580 Graphics", "ip_version": 83902464}, {"error": 2013265921}]}',
    '{"ok": false, "stage": "zeInit", "result": 2013265921}',
    '{"ok": false, "stage": "load", "error": "libze_loader.so.1: cannot open shared object file"}',
]


@given(ID_FILE | binary_text(), st.sampled_from([10, 16]))
@example("-1", 16)
@example("+7", 10)
@example("1_0", 16)
@example("٣", 10)
@example("0x-1", 16)
def test_parse_int_reads_only_plain_numbers(text: str, base: int) -> None:
    value = parse_int(text, base)
    if value is not None:
        digits = text.strip().lower().removeprefix("0x") if base == 16 else text.strip()
        assert value >= 0 and re.fullmatch(r"[0-9a-f]+", digits), (text, value)


@given(
    st.lists(
        st.tuples(VENDOR, ID_FILE, _recorded("class"), _recorded("vendor") | binary_text(), DRIVERS),
        min_size=1,
        max_size=3,
    )
)
@example([("0x8086\n", "-0x1\n", "0x030000\n", "0x8086\n", "i915")])
@example([("0x8086\n", "0x56a0\n", "0x1030000\n", "0x1_0\n", "i915")])
@SLOW
def test_pci_functions_have_pci_sized_ids(functions: list[tuple[str, str, str, str, str | None]]) -> None:
    with tree() as root:
        for i, (vendor, device, cls, subsystem, driver) in enumerate(functions):
            slot = f"sys/bus/pci/devices/0000:{i:02x}:00.0"
            for name, text in (("vendor", vendor), ("device", device), ("class", cls), ("subsystem_vendor", subsystem)):
                root.write(f"{slot}/{name}", text)
            if driver:
                root.link(f"{slot}/driver", f"../../../bus/pci/drivers/{driver}")
                root.write(f"{slot}/drm/renderD{128 + i}/dev", f"226:{128 + i}\n")
                root.write(f"dev/dri/renderD{128 + i}", "")
        system = root.system()
        found = scan_pci(system, gpus_only=False)
        result = PROVIDER.probe(system)
    for d in found:
        assert 0 <= d.vendor <= 0xFFFF and 0 <= d.device <= 0xFFFF and 0 <= d.pci_class <= 0xFFFFFF, d
        assert re.fullmatch(r"[0-9a-f]{4}:[0-9a-f]{4}", d.pci_id), d
        assert d.subsystem_vendor is None or 0 <= d.subsystem_vendor <= 0xFFFF, d
    assert_no_bug(result)
    for acc in result.accelerators:
        assert acc["vendor"] == "intel" and re.fullmatch(r"8086:[0-9a-f]{4}", acc["pci_id"]), acc
        assert acc["driver"] in ("i915", "xe"), acc


@given(texts(LEVEL_ZERO) | binary_text())
@example("[" * 5000)
@example('{"ok": true, "devices": [{"type": 1}]}')
@example('{"ok": true, "devices": [{"type": 1, "vendor_id": "x", "device_id": 1}]}')
@example('{"ok": true, "devices": [{"type": 1, "vendor_id": 32902, "device_id": 1, "ip_version": -1}]}')
@example('{"ok": true, "devices": 5}')
@example('{"ok": false, "stage": "zeInit", "result": "x"}')
def test_the_level_zero_json_gives_devices_or_a_probe_error(text: str) -> None:
    try:
        devices = parse_level_zero(text)
    except ProbeError as exc:
        assert str(exc)
        return
    for d in devices:
        assert 0 <= d.vendor_id <= 0xFFFFFFFF and 0 <= d.device_id <= 0xFFFFFFFF
        assert d.device_ip is None or re.fullmatch(r"\d+\.\d+\.\d+", d.device_ip)
