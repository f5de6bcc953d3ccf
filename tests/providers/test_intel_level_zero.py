"""Level Zero: IP-version formatting, the child's JSON parser, and the child itself.

The child runs for real: against the absent loader on this GPU-less machine, and
against a small C stand-in for ``libze_loader.so.1`` (compiled here, found via
``LD_LIBRARY_PATH``) whose struct layout is the C compiler's, not ours.
"""

from __future__ import annotations

import ctypes.util
import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from wheelfit_intel.level_zero import ZeDevice, format_ip_version, parse_level_zero, query_level_zero
from wheelfit_intel.provider import apply_level_zero
from wheelfit_probekit import ProbeError, System

BMG = (20 << 22) | (1 << 14) | 0  # 20.1.0
DG2 = (12 << 22) | (55 << 14) | 8  # 12.55.8


@pytest.mark.parametrize(
    ("value", "dotted"),
    [
        (0x05004000, "20.1.0"),  # BMG, as in wheelnext/variant-repack configs/torch-2.9 (xpu device_ip)
        (DG2, "12.55.8"),
        ((12 << 22) | (60 << 14) | 7, "12.60.7"),  # PVC
        ((12 << 22) | (71 << 14) | 4, "12.71.4"),  # MTL-H
        ((20 << 22) | (4 << 14) | 4, "20.4.4"),  # LNL-M
        ((30 << 22) | (1 << 14) | 0, "30.1.0"),  # PTL-U
        ((30 << 22) | (0 << 14) | 4 | (0xFF << 6), "30.0.4"),  # reserved bits 6..13 are ignored
        (0xFFFFFFFF, "1023.255.63"),
    ],
)
def test_format_ip_version(value: int, dotted: str) -> None:
    assert format_ip_version(value) == dotted


@pytest.mark.parametrize("value", [-1, 1 << 32])
def test_format_ip_version_rejects_non_uint32(value: int) -> None:
    with pytest.raises(ValueError):
        format_ip_version(value)


def test_parse_devices() -> None:
    text = json.dumps(
        {
            "ok": True,
            "devices": [
                {
                    "type": 1,
                    "vendor_id": 0x8086,
                    "device_id": 0xE20B,
                    "flags": 0,
                    "name": "Intel(R) Arc(TM) B580 Graphics",
                    "ip_version": BMG,
                },
                {
                    "type": 1,
                    "vendor_id": 0x8086,
                    "device_id": 0x4680,
                    "flags": 1,
                    "name": "Intel(R) UHD Graphics 770",
                    "ip_version": 0,
                },
                {"type": 2, "vendor_id": 0x8086, "device_id": 0, "flags": 0, "name": "cpu", "ip_version": 0},
                {"error": 0x78000001},
            ],
        }
    )
    devs = parse_level_zero(text)
    assert devs == [
        ZeDevice(0x8086, 0xE20B, "Intel(R) Arc(TM) B580 Graphics", BMG, integrated=False, subdevice=False),
        ZeDevice(0x8086, 0x4680, "Intel(R) UHD Graphics 770", None, integrated=True, subdevice=False),
    ]
    assert [d.device_ip for d in devs] == ["20.1.0", None]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            '{"ok": false, "stage": "load", "error": "libze_loader.so.1: cannot open shared object file"}',
            "Level Zero loader not available: libze_loader.so.1",
        ),
        ('{"ok": false, "stage": "zeInit", "result": 2013265921}', "zeInit failed with ZE_RESULT_ERROR_UNINITIALIZED"),
        ('{"ok": false, "stage": "zeDriverGet", "result": 5}', "zeDriverGet failed with 0x5"),
        ('{"ok": false, "stage": "symbols", "error": "undefined symbol: zeInit"}', "symbols failed: undefined symbol"),
        ("Segmentation fault", "printed no JSON"),
        ("[1, 2]", "not an object"),
    ],
)
def test_parse_failures(text: str, message: str) -> None:
    with pytest.raises(ProbeError, match=message):
        parse_level_zero(text)


def test_absent_loader_on_this_machine_is_a_probe_error() -> None:
    if ctypes.util.find_library("ze_loader"):
        pytest.skip("this machine has a Level Zero loader")
    with pytest.raises(ProbeError, match="Level Zero loader not available"):
        query_level_zero(System(environ={"PATH": os.environ.get("PATH", "")}))


def test_never_loads_native_code_under_a_sysroot(tmp_path: Path) -> None:
    with pytest.raises(ProbeError, match="sysroot"):
        query_level_zero(System.from_sysroot(tmp_path, environ={}))


def _accel(pci_id: str) -> dict[str, Any]:
    return {"pci_id": pci_id, "source": "pci-sysfs", "device_ip": None, "xpu_capable": True}


def test_apply_matches_by_device_id_and_keeps_unmatched() -> None:
    accs = [_accel("8086:0bd5"), _accel("8086:0bd5"), _accel("8086:56a0")]
    pvc_ip = (12 << 22) | (60 << 14) | 7
    stacks = [ZeDevice(0x8086, 0x0BD5, "Intel(R) Data Center GPU Max 1550", pvc_ip, False, True)] * 4
    detail = apply_level_zero(accs, stacks)
    assert [(a["source"], a["device_ip"]) for a in accs] == [
        ("level-zero", "12.60.7"),
        ("level-zero", "12.60.7"),
        ("pci-sysfs", None),
    ]
    assert "2 of 3 matched" in detail


# -- the child process against a compiled stand-in loader ------------------------------------

FAKE_LOADER = r"""
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct { uint32_t stype; void *pNext; uint32_t ipVersion; } ip_ext_t;
typedef struct {
    uint32_t stype; void *pNext; uint32_t type, vendorId, deviceId, flags, subdeviceId, coreClockRate;
    uint64_t maxMemAllocSize;
    uint32_t maxHardwareContexts, maxCommandQueuePriority, numThreadsPerEU, physicalEUSimdWidth;
    uint32_t numEUsPerSubslice, numSubslicesPerSlice, numSlices;
    uint64_t timerResolution; uint32_t timestampValidBits, kernelTimestampValidBits;
    uint8_t uuid[16]; char name[256];
} props_t;

static int inited;
static char drv_token, dev_tokens[2];

uint32_t zeInit(uint32_t flags) {
    const char *rc = getenv("FAKE_ZE_INIT_RESULT");
    if (getenv("FAKE_ZE_CRASH")) abort();
    if (rc) return (uint32_t)strtoul(rc, NULL, 0);
    if (flags != 1) return 0x78000004;
    inited = 1;
    return 0;
}
uint32_t zeDriverGet(uint32_t *count, void **drivers) {
    if (!inited) return 0x78000001;
    if (drivers) drivers[0] = &drv_token;
    *count = 1;
    return 0;
}
uint32_t zeDeviceGet(void *drv, uint32_t *count, void **devs) {
    if (drv != &drv_token) return 0x78000005;
    if (devs) { devs[0] = &dev_tokens[0]; devs[1] = &dev_tokens[1]; }
    *count = 2;
    return 0;
}
uint32_t zeDeviceGetProperties(void *dev, props_t *p) {
    if (p->stype != 3) return 0x78000004;
    int igpu = dev == &dev_tokens[1];
    p->type = 1; p->vendorId = 0x8086;
    p->deviceId = igpu ? 0x4680 : 0x56a0;
    p->flags = igpu ? 1 : 0;
    strcpy(p->name, igpu ? "Intel(R) UHD Graphics 770" : "Intel(R) Arc(TM) A770 Graphics");
    for (ip_ext_t *e = p->pNext; e; e = e->pNext)
        if (e->stype == 0x1000f && !igpu) e->ipVersion = (12u << 22) | (55u << 14) | 8u;
    return 0;
}
"""


@pytest.fixture(scope="module")
def fake_loader_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        pytest.skip("no C compiler to build the stand-in Level Zero loader")
    d = tmp_path_factory.mktemp("ze")
    (d / "fake_ze.c").write_text(FAKE_LOADER)
    subprocess.run([cc, "-shared", "-fPIC", "-o", str(d / "libze_loader.so.1"), str(d / "fake_ze.c")], check=True)
    return d


def _native(loader_dir: Path, **extra: str) -> System:
    return System(environ={"PATH": os.environ.get("PATH", ""), "LD_LIBRARY_PATH": str(loader_dir), **extra})


def test_child_reads_devices_and_ip_versions(fake_loader_dir: Path) -> None:
    devs = query_level_zero(_native(fake_loader_dir))
    assert [(d.device_id, d.name, d.device_ip, d.integrated) for d in devs] == [
        (0x56A0, "Intel(R) Arc(TM) A770 Graphics", "12.55.8", False),
        (0x4680, "Intel(R) UHD Graphics 770", None, True),
    ]


def test_child_reports_a_failing_init(fake_loader_dir: Path) -> None:
    with pytest.raises(ProbeError, match="zeInit failed with ZE_RESULT_ERROR_UNINITIALIZED"):
        query_level_zero(_native(fake_loader_dir, FAKE_ZE_INIT_RESULT="0x78000001"))


def test_a_crashing_driver_is_a_probe_error_not_a_crash(fake_loader_dir: Path) -> None:
    with pytest.raises(ProbeError, match="exited with status"):
        query_level_zero(_native(fake_loader_dir, FAKE_ZE_CRASH="1"))
