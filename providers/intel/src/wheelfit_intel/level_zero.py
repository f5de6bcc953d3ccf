"""Level Zero device IP version, read in a child interpreter.

The ctypes code runs in ``System.run_python`` so a crashing or hanging GPU
driver costs a failed probe, not wheelfit. The child prints one JSON object;
:func:`parse_level_zero` turns it into data and is tested on recorded strings.

Facts used (checked against Intel's own code):

- ``ze_device_properties_t`` layout: Level Zero ``ze_api.h`` and the Level Zero API subset header
  of LLVM's offload Level Zero plugin ("Based on Intel Level Zero API v1.13").
- ``ZE_STRUCTURE_TYPE_DEVICE_IP_VERSION_EXT`` is ``0x1000f`` in Level Zero's ``ze_api.h``
  (v1.7) and in wheelnext/intel-variant-provider ``ze.py``; the ``0x00020001`` once quoted
  for it from the LLVM offload subset header is ``..._RELAXED_ALLOCATION_LIMITS_EXP_DESC``
  in ``ze_api.h``.
- ipVersion bit layout ``architecture:10 | release:8 | reserved:8 | revision:6`` (high to
  low): intel/compute-runtime ``shared/source/helpers/hw_ip_version.h``; printed
  ``arch.release.revision`` as in wheelnext/intel-variant-provider ``devices.py``
  (``20.1.0`` = BMG, ``12.55.8`` = DG2, as PyTorch's xpu variant lists them in wheelnext/variant-repack
  ``configs/torch-2.9`` and ``configs/torch-2.10``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from wheelfit_probekit import ProbeError, System

__all__ = ["ZeDevice", "format_ip_version", "loader_name", "parse_level_zero", "probe_code", "query_level_zero"]

#: ``ze_result_t`` values worth naming in an error message (Level Zero ``ze_api.h``).
ZE_RESULTS = {
    0x70000001: "ZE_RESULT_ERROR_DEVICE_LOST",
    0x70010000: "ZE_RESULT_ERROR_INSUFFICIENT_PERMISSIONS",
    0x70020000: "ZE_RESULT_ERROR_DEPENDENCY_UNAVAILABLE",
    0x78000001: "ZE_RESULT_ERROR_UNINITIALIZED",
    0x78000002: "ZE_RESULT_ERROR_UNSUPPORTED_VERSION",
    0x7FFFFFFE: "ZE_RESULT_ERROR_UNKNOWN",
}


@dataclass(frozen=True)
class ZeDevice:
    """One Level Zero GPU device."""

    vendor_id: int
    device_id: int
    name: str
    #: Raw ``ipVersion``; None when the driver does not implement the extension (it leaves 0).
    ip_version: int | None
    integrated: bool
    subdevice: bool

    @property
    def device_ip(self) -> str | None:
        return None if self.ip_version is None else format_ip_version(self.ip_version)


def format_ip_version(value: int) -> str:
    """``ipVersion`` -> ``arch.release.revision`` (``0x05004000`` -> ``20.1.0``)."""
    if not 0 <= value <= 0xFFFFFFFF:
        raise ValueError(f"ipVersion {value} is not a uint32")
    return f"{value >> 22}.{(value >> 14) & 0xFF}.{value & 0x3F}"


def loader_name(os_name: str) -> str:
    """The Level Zero loader's file name (the Windows name ``ze_loader.dll`` is assumed, not confirmed)."""
    return "ze_loader.dll" if os_name == "Windows" else "libze_loader.so.1"


# Runs in the child: stdlib only, prints exactly one JSON object, never raises for a
# missing loader or a failing call. Struct layout: ``ze_api.h`` field order, natural alignment (on x86-64
# the name is at offset 112 and the struct is 368 bytes).
_CHILD = r"""
import ctypes, json, sys

def done(**obj):
    sys.stdout.write(json.dumps(obj))
    sys.stdout.flush()
    raise SystemExit(0)

try:
    lib = ctypes.CDLL(LIBRARY)
except OSError as exc:
    done(ok=False, stage="load", error=str(exc))

class Props(ctypes.Structure):
    _fields_ = [
        ("stype", ctypes.c_uint32), ("pNext", ctypes.c_void_p), ("type", ctypes.c_uint32),
        ("vendorId", ctypes.c_uint32), ("deviceId", ctypes.c_uint32), ("flags", ctypes.c_uint32),
        ("subdeviceId", ctypes.c_uint32), ("coreClockRate", ctypes.c_uint32),
        ("maxMemAllocSize", ctypes.c_uint64), ("maxHardwareContexts", ctypes.c_uint32),
        ("maxCommandQueuePriority", ctypes.c_uint32), ("numThreadsPerEU", ctypes.c_uint32),
        ("physicalEUSimdWidth", ctypes.c_uint32), ("numEUsPerSubslice", ctypes.c_uint32),
        ("numSubslicesPerSlice", ctypes.c_uint32), ("numSlices", ctypes.c_uint32),
        ("timerResolution", ctypes.c_uint64), ("timestampValidBits", ctypes.c_uint32),
        ("kernelTimestampValidBits", ctypes.c_uint32), ("uuid", ctypes.c_uint8 * 16),
        ("name", ctypes.c_char * 256),
    ]

class IpVersion(ctypes.Structure):
    _fields_ = [("stype", ctypes.c_uint32), ("pNext", ctypes.c_void_p), ("ipVersion", ctypes.c_uint32)]

try:
    zeInit, zeDriverGet = lib.zeInit, lib.zeDriverGet
    zeDeviceGet, zeDeviceGetProperties = lib.zeDeviceGet, lib.zeDeviceGetProperties
except AttributeError as exc:
    done(ok=False, stage="symbols", error=str(exc))
for fn in (zeInit, zeDriverGet, zeDeviceGet, zeDeviceGetProperties):
    fn.restype = ctypes.c_uint32
zeInit.argtypes = [ctypes.c_uint32]
zeDriverGet.argtypes = [ctypes.POINTER(ctypes.c_uint32), ctypes.c_void_p]
zeDeviceGet.argtypes = [ctypes.c_void_p, ctypes.POINTER(ctypes.c_uint32), ctypes.c_void_p]
zeDeviceGetProperties.argtypes = [ctypes.c_void_p, ctypes.POINTER(Props)]

rc = zeInit(1)  # ZE_INIT_FLAG_GPU_ONLY
if rc:
    done(ok=False, stage="zeInit", result=rc)
count = ctypes.c_uint32(0)
rc = zeDriverGet(ctypes.byref(count), None)
if rc:
    done(ok=False, stage="zeDriverGet", result=rc)
drivers = (ctypes.c_void_p * count.value)()
if count.value:
    rc = zeDriverGet(ctypes.byref(count), drivers)
    if rc:
        done(ok=False, stage="zeDriverGet", result=rc)
devices = []
for drv in drivers[: count.value]:
    n = ctypes.c_uint32(0)
    if zeDeviceGet(drv, ctypes.byref(n), None) or not n.value:
        continue
    handles = (ctypes.c_void_p * n.value)()
    if zeDeviceGet(drv, ctypes.byref(n), handles):
        continue
    for dev in handles[: n.value]:
        ip = IpVersion(stype=0x1000F)  # ZE_STRUCTURE_TYPE_DEVICE_IP_VERSION_EXT
        props = Props(stype=0x3)  # ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES
        props.pNext = ctypes.cast(ctypes.pointer(ip), ctypes.c_void_p)
        rc = zeDeviceGetProperties(dev, ctypes.byref(props))
        if rc:
            devices.append({"error": rc})
            continue
        devices.append({
            "type": props.type, "vendor_id": props.vendorId, "device_id": props.deviceId,
            "flags": props.flags, "name": props.name.decode("utf-8", "replace"),
            "ip_version": ip.ipVersion,
        })
done(ok=True, devices=devices)
"""


def probe_code(library: str) -> str:
    """The child's source, with the loader name baked in as a literal."""
    return f"LIBRARY = {json.dumps(library)}\n{_CHILD}"


def parse_level_zero(text: str) -> list[ZeDevice]:
    """The child's JSON -> GPU devices; a reported failure raises :class:`ProbeError`.

    Non-GPU devices (``type`` != 1) and devices whose properties call failed are
    dropped; an ``ipVersion`` of 0 means the extension was not filled in.
    """
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):
        raise ProbeError(f"Level Zero probe printed no JSON: {text.strip()[:120]!r}") from None
    if not isinstance(data, dict):
        raise ProbeError("Level Zero probe printed JSON that is not an object")
    if not data.get("ok"):
        stage = data.get("stage", "?")
        if stage == "load":
            raise ProbeError(f"Level Zero loader not available: {data.get('error', '')}")
        if "result" in data:
            code = _u32(data["result"], "result")
            raise ProbeError(f"{stage} failed with {ZE_RESULTS.get(code, hex(code))}")
        raise ProbeError(f"Level Zero {stage} failed: {data.get('error', '')}")
    found: list[ZeDevice] = []
    devices = data.get("devices", [])
    for raw in devices if isinstance(devices, list) else []:
        if not isinstance(raw, dict) or "error" in raw or raw.get("type") != 1:
            continue
        flags = _u32(raw.get("flags", 0), "flags")
        ip = _u32(raw.get("ip_version") or 0, "ip_version")
        found.append(
            ZeDevice(
                vendor_id=_u32(raw.get("vendor_id"), "vendor_id"),
                device_id=_u32(raw.get("device_id"), "device_id"),
                name=str(raw.get("name", "")).strip(),
                ip_version=ip or None,
                integrated=bool(flags & 1),  # ZE_DEVICE_PROPERTY_FLAG_INTEGRATED
                subdevice=bool(flags & 2),  # ZE_DEVICE_PROPERTY_FLAG_SUBDEVICE
            )
        )
    return found


def _u32(value: object, what: str) -> int:
    """A ``uint32_t`` the child printed; anything else means its output is not what it writes."""
    if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value <= 0xFFFFFFFF:
        raise ProbeError(f"Level Zero probe printed a {what} that is not a 32-bit number: {value!r:.40}")
    return value


def query_level_zero(system: System) -> list[ZeDevice]:
    """Ask the Level Zero loader for GPUs; only on the real machine (``system.native``)."""
    if not system.native:
        raise ProbeError("native libraries are not loaded under a sysroot")
    result = system.run_python(probe_code(loader_name(system.os_name)))
    if result.returncode != 0:
        raise ProbeError(f"Level Zero probe exited with status {result.returncode}: {result.first_line()[:160]}")
    return parse_level_zero(result.stdout)
