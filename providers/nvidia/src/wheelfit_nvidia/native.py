"""NVML (then libcuda) through ctypes, in a child interpreter, and the parser for its JSON answer.

A crashing or hanging driver library must not take wheelfit down, so the ctypes
code runs via ``System.run_python`` (own process, deadline) and prints one JSON
object; :func:`parse_native` turns that into data and is tested on its own.
Symbols and constants: NVML as nvidia-ml-py 13.615.71 ``pynvml.py`` calls it, and the
CUDA driver API (``cuda.h``; conda's ``conda/plugins/virtual_packages/cuda.py`` probe).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from wheelfit_probekit.drivers import cuda_from_int, is_driver_version

from .procfs import normalize_bus_id
from .smi import MAX_GPUS

__all__ = ["CHILD_CODE", "NativeGpu", "NativeReport", "parse_native"]

CHILD_CODE = r"""
import ctypes, json, os, sys
os.environ.pop("CUDA_VISIBLE_DEVICES", None)   # NVML ignores it; libcuda would hide GPUs
os.environ["CUDA_DEVICE_ORDER"] = "PCI_BUS_ID"  # libcuda ordinals = nvidia-smi/NVML indices
B = ctypes.byref

def load(names):
    err = None
    for n in names:
        try:
            return ctypes.CDLL(n), None
        except OSError as e:
            err = str(e)
    return None, err

def text(buf):
    return buf.value.decode("utf-8", "replace")

class Pci(ctypes.Structure):  # nvmlPciInfo_t (v3), padded in case the struct grew
    _fields_ = [("legacy", ctypes.c_char * 16), ("domain", ctypes.c_uint), ("bus", ctypes.c_uint),
                ("device", ctypes.c_uint), ("pci_device_id", ctypes.c_uint),
                ("subsystem", ctypes.c_uint), ("bus_id", ctypes.c_char * 32), ("pad", ctypes.c_char * 64)]

def nvml():
    if sys.platform == "win32":
        w = os.environ.get("WINDIR", r"C:\Windows")
        pf = os.environ.get("ProgramFiles", r"C:\Program Files")
        names = [w + r"\System32\nvml.dll", pf + r"\NVIDIA Corporation\NVSMI\nvml.dll"]
    else:
        names = ["libnvidia-ml.so.1", "/usr/lib/wsl/lib/libnvidia-ml.so.1"]
    lib, err = load(names)
    if lib is None:
        return {"error": "library not found: " + str(err), "missing": True}
    lib.nvmlErrorString.restype = ctypes.c_char_p
    def why(rc):
        return "NVML error %d (%s)" % (rc, (lib.nvmlErrorString(rc) or b"").decode("utf-8", "replace"))
    init = getattr(lib, "nvmlInit_v2", None) or lib.nvmlInit
    rc = init()
    if rc:
        return {"error": "nvmlInit: " + why(rc)}
    out = {"devices": []}
    try:
        buf = ctypes.create_string_buffer(96)
        if lib.nvmlSystemGetDriverVersion(buf, 80) == 0:
            out["driver"] = text(buf)
        v = ctypes.c_int()
        fn = getattr(lib, "nvmlSystemGetCudaDriverVersion_v2", None)
        if fn is not None and fn(B(v)) == 0:
            out["cuda"] = v.value
        n = ctypes.c_uint()
        rc = lib.nvmlDeviceGetCount_v2(B(n))
        if rc:
            out["error"] = "nvmlDeviceGetCount: " + why(rc)
            return out
        for i in range(n.value):
            h = ctypes.c_void_p()
            d = {"index": i}
            out["devices"].append(d)
            rc = lib.nvmlDeviceGetHandleByIndex_v2(i, B(h))
            if rc:
                d["error"] = why(rc)
                continue
            if lib.nvmlDeviceGetName(h, buf, 96) == 0:
                d["name"] = text(buf)
            if lib.nvmlDeviceGetUUID(h, buf, 96) == 0:
                d["uuid"] = text(buf)
            ma, mi = ctypes.c_int(), ctypes.c_int()
            if lib.nvmlDeviceGetCudaComputeCapability(h, B(ma), B(mi)) == 0:
                d["cc"] = [ma.value, mi.value]
            pci = Pci()
            get_pci = getattr(lib, "nvmlDeviceGetPciInfo_v3", None)
            if get_pci is not None and get_pci(h, B(pci)) == 0:
                d["bus_id"] = pci.bus_id.decode("ascii", "replace")
                d["pci_device_id"] = pci.pci_device_id
    finally:
        lib.nvmlShutdown()
    return out

def cuda():
    if sys.platform == "win32":
        names = ["nvcuda.dll"]
    else:
        names = ["libcuda.so.1", "libcuda.so", "/usr/lib/wsl/lib/libcuda.so.1"]
    lib, err = load(names)
    if lib is None:
        return {"error": "library not found: " + str(err), "missing": True}
    out = {"devices": []}
    v = ctypes.c_int()
    if lib.cuDriverGetVersion(B(v)) == 0:
        out["cuda"] = v.value
    rc = lib.cuInit(0)
    if rc:
        out["error"] = "cuInit: CUresult %d" % rc
        return out
    n = ctypes.c_int()
    if lib.cuDeviceGetCount(B(n)):
        out["error"] = "cuDeviceGetCount failed"
        return out
    buf = ctypes.create_string_buffer(96)
    for i in range(n.value):
        dev = ctypes.c_int()
        d = {"index": i}
        out["devices"].append(d)
        if lib.cuDeviceGet(B(dev), i):
            d["error"] = "cuDeviceGet failed"
            continue
        if lib.cuDeviceGetName(buf, 96, dev) == 0:
            d["name"] = text(buf)
        ma, mi = ctypes.c_int(), ctypes.c_int()
        if lib.cuDeviceGetAttribute(B(ma), 75, dev) == 0 and lib.cuDeviceGetAttribute(B(mi), 76, dev) == 0:
            d["cc"] = [ma.value, mi.value]
        get_bus = getattr(lib, "cuDeviceGetPCIBusId", None)
        if get_bus is not None and get_bus(buf, 96, dev) == 0:
            d["bus_id"] = text(buf)
    return out

report = {"nvml": None, "cuda": None}
try:
    report["nvml"] = nvml()
except Exception as e:
    report["nvml"] = {"error": "%s: %s" % (type(e).__name__, e)}
if report["nvml"].get("error") or not report["nvml"].get("devices"):
    try:
        report["cuda"] = cuda()
    except Exception as e:
        report["cuda"] = {"error": "%s: %s" % (type(e).__name__, e)}
print(json.dumps(report))
"""


@dataclass(frozen=True)
class NativeGpu:
    index: int
    name: str | None
    compute_capability: str | None
    bus_id: str | None
    uuid: str | None
    #: ``10de:2684`` when NVML's PCI info answered with NVIDIA's vendor id.
    pci_id: str | None


@dataclass
class NativeReport:
    """What the child found: devices from the first library that answered, and why the others did not."""

    source: str | None = None
    driver_version: str | None = None
    cuda_driver_version: str | None = None
    gpus: list[NativeGpu] = field(default_factory=list)
    #: ``{"nvml": "library not found: ...", "libcuda": ...}``
    errors: dict[str, str] = field(default_factory=dict)
    #: The libraries whose error is that they are not installed (the child says so with ``"missing": true``).
    missing: set[str] = field(default_factory=set)

    @property
    def library_missing(self) -> bool:
        return bool(self.errors) and set(self.errors) <= self.missing


def _cc(value: Any) -> str | None:
    if isinstance(value, list) and len(value) == 2 and all(isinstance(x, int) and 0 <= x < 100 for x in value):
        return f"{value[0]}.{value[1]}"
    return None


def _str(value: Any) -> str | None:
    if not isinstance(value, str):
        return None
    return value.strip() or None


def _pci_id(value: Any) -> str | None:
    # nvmlPciInfo_t.pciDeviceId packs device << 16 | vendor.
    if isinstance(value, int) and value & 0xFFFF == 0x10DE:
        return f"10de:{(value >> 16) & 0xFFFF:04x}"
    return None


def _gpus(section: dict[str, Any]) -> list[NativeGpu]:
    gpus: list[NativeGpu] = []
    devices = section.get("devices")
    for d in devices if isinstance(devices, list) else []:
        index = d.get("index") if isinstance(d, dict) else None
        if not isinstance(index, int) or isinstance(index, bool) or not 0 <= index < MAX_GPUS or d.get("error"):
            continue
        uuid = _str(d.get("uuid"))
        gpus.append(
            NativeGpu(
                index=index,
                name=_str(d.get("name")),
                compute_capability=_cc(d.get("cc")),
                bus_id=normalize_bus_id(d["bus_id"]) if isinstance(d.get("bus_id"), str) else None,
                uuid=uuid if uuid and uuid.startswith("GPU-") else None,
                pci_id=_pci_id(d.get("pci_device_id")),
            )
        )
    return gpus


def parse_native(stdout: str) -> NativeReport:
    """Parse the child's JSON; raises ``ValueError`` when it is not the expected object."""
    try:
        data = json.loads(stdout.strip().splitlines()[-1] if stdout.strip() else "")
    except RecursionError:  # nesting deeper than the interpreter's limit: not the child's one flat object
        raise ValueError("the native probe printed JSON nested too deeply") from None
    if not isinstance(data, dict):
        raise ValueError("the native probe printed something other than a JSON object")
    report = NativeReport()
    for key, label in (("nvml", "nvml"), ("cuda", "libcuda")):
        section = data.get(key)
        if not isinstance(section, dict):
            continue
        if isinstance(section.get("error"), str):
            report.errors[label] = section["error"]
            if section.get("missing") is True:
                report.missing.add(label)
        driver = _str(section.get("driver"))
        if driver and is_driver_version(driver) and report.driver_version is None:
            report.driver_version = driver
        cuda = section.get("cuda")
        if isinstance(cuda, int) and report.cuda_driver_version is None:
            report.cuda_driver_version = cuda_from_int(cuda)
        gpus = _gpus(section)
        if gpus and report.source is None:
            report.source, report.gpus = label, gpus
    return report
