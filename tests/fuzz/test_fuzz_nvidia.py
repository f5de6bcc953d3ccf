"""Fuzz targets: ``nvidia-smi --query-gpu`` CSV, ``/proc/driver/nvidia/version``, ``/sys/module/nvidia/version``,
``/proc/driver/nvidia/gpus/*/information``, PCI bus ids, ``CUDA_VISIBLE_DEVICES``, the native probe's JSON, and
the NVIDIA provider end to end on a sysroot built from them (issue 15).

Contract (wheelfit_nvidia): ``parse_query``, ``parse_nvrm``, ``parse_module_version``, ``parse_information``,
``normalize_bus_id``, ``parse_visible_devices`` and ``classify_failure`` never raise; ``parse_native`` raises
only ``ValueError``. What they return holds: a GPU index is a small non-negative int, a bus id is
``dddd:bb:dd.f`` in lower case, a compute capability is two small ASCII numbers, a driver version two or three
ASCII numbers, visible GPUs are distinct physical indices. The provider never raises, records no Python
exception as a probe error, and reports one GPU per bus id with those invariants, whatever the files and
nvidia-smi hold.
"""

from __future__ import annotations

import json
import re

from hypothesis import example, given
from hypothesis import strategies as st

from wheelfit_nvidia import PROVIDER
from wheelfit_nvidia.kernel import parse_module_version, parse_nvrm
from wheelfit_nvidia.native import parse_native
from wheelfit_nvidia.procfs import normalize_bus_id, parse_information
from wheelfit_nvidia.smi import MAX_GPUS, classify_failure, parse_query
from wheelfit_nvidia.visibility import parse_visible_devices
from wheelfit_probekit.drivers import cuda_major_minor, is_driver_version, version_key

from ..conftest import MACHINES
from .strategies import arabic, binary_text, junk, near_valid, samples, texts
from .sysroot import SLOW, assert_no_bug, tree

#: The lines the recorded fake nvidia-smi scripts print (``echo '...'``).
SMI = sorted(
    {
        "\n".join(re.findall(r"echo '(\d+, [^']*)'", p.read_text()))
        for p in MACHINES.glob("*/root/usr/bin/nvidia-smi")
        if "echo '0, " in p.read_text()
    }
)
NVRM = samples("*/root/proc/driver/nvidia/version")
MODULE = samples("*/root/sys/module/nvidia/version")
INFORMATION = samples("*/root/proc/driver/nvidia/gpus/*/information", limit=40)
NATIVE = [
    '{"nvml": {"driver": "580.95.05", "cuda": 13000, "devices": [{"index": 0, "name": "NVIDIA H100", "cc": [9, 0],'
    ' "bus_id": "00000000:62:00.0", "uuid": "GPU-9221d5d1", "pci_device_id": 590418142}]}}',
    '{"nvml": {"error": "library not found: libnvidia-ml.so.1"}, "cuda": {"error": "library not found"}}',
]
VISIBLE = ["0", "1,0", "GPU-9221", "MIG-GPU-9221d5d1/1/0", "", "0,0", "2,x,1", " 1 , 0 "]

BUS = re.compile(r"[0-9a-f]{4,8}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]")
CC = re.compile(r"[0-9]{1,2}\.[0-9]{1,2}")
DRIVER = re.compile(r"[0-9]{2,4}(\.[0-9]{1,4}){1,2}")


def _check_driver(version: str | None) -> None:
    assert version is None or DRIVER.fullmatch(version), version


@given(texts(SMI) | binary_text(), st.booleans())
@example("², NVIDIA GeForce RTX 4090, 00000000:01:00.0, 8.9, 580.95.05, GPU-00000ffa\n", True)
@example("99999999999, NVIDIA GeForce RTX 4090, 00000000:01:00.0, 8.9, 580.95.05, GPU-00000ffa\n", True)
@example(f"0, NVIDIA GeForce RTX 4090, 00000000:01:00.0, {arabic('8.9, 580.95.05')}, GPU-00000ffa\n", True)
def test_nvidia_smi_csv_gives_gpus_and_the_lines_it_refused(text: str, with_cc: bool) -> None:
    gpus, bad = parse_query(text, with_compute_cap=with_cc)
    assert all(line == line.strip() and line for line in bad)
    for gpu in gpus:
        assert 0 <= gpu.index < MAX_GPUS
        assert BUS.fullmatch(gpu.bus_id) and gpu.name and gpu.name == gpu.name.strip(), gpu
        assert gpu.compute_capability is None or (with_cc and CC.fullmatch(gpu.compute_capability)), gpu
        _check_driver(gpu.driver_version)
        assert gpu.uuid is None or gpu.uuid.startswith("GPU-")


@given(st.integers(-1, 255), texts(["NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver"]))
def test_an_nvidia_smi_failure_is_one_line(returncode: int, text: str) -> None:
    failure = classify_failure(returncode, text, text[::-1])
    assert failure.error.startswith(f"{'this driver' if failure.retry_without_compute_cap else 'exit'}")
    assert len(failure.error.splitlines()) == 1


@given(junk() | st.from_regex(r"\A\s?v?\d{1,12}(\.\d{1,12}){0,3}\s?\Z") | st.text(max_size=40))
@example("1" * 5000)
@example("1" * 5000 + ".0")
@example(arabic("12.8"))
def test_driver_and_cuda_versions_parse_or_are_refused(text: str) -> None:
    if is_driver_version(text):
        assert DRIVER.fullmatch(text) and len(version_key(text)) in (2, 3)
    pair = cuda_major_minor(text)
    assert pair is None or (text.strip().lstrip("v").split(".")[0].isascii() and all(n >= 0 for n in pair))


@given(texts(NVRM) | binary_text())
@example(f"NVRM version: NVIDIA UNIX x86_64 Kernel Module  {arabic('580.95.05')}  Release Build\n")
def test_the_nvrm_banner_gives_a_driver_version_or_none(text: str) -> None:
    nvrm = parse_nvrm(text)
    if nvrm is not None:
        _check_driver(nvrm.version)
        assert nvrm.kernel_module in (None, "open", "proprietary")


@given(texts(MODULE) | binary_text())
@example("580.95.05\n\n")
@example(arabic("580.95\n"))
def test_the_module_version_is_a_driver_version_or_none(text: str) -> None:
    _check_driver(parse_module_version(text))


@given(texts(INFORMATION) | binary_text())
@example("Model: \t NVIDIA H100\nDevice Minor: \t ²\n")
@example("Bus Location: \t 0000:62:00.0\nDevice Minor: \t 99999999999999999999\n")
def test_gpu_information_never_raises(text: str) -> None:
    info = parse_information(text)
    assert info.bus_id is None or BUS.fullmatch(info.bus_id)
    assert info.uuid is None or info.uuid.startswith("GPU-")
    assert info.minor is None or 0 <= info.minor < 1 << 20


@given(junk() | st.from_regex(r"\A[0-9a-fA-F]{1,9}:[0-9a-fA-F]{1,3}:[0-9a-fA-F]{1,3}\.[0-9]\s?\Z"))
@example("0000:01:00.0\n")
def test_a_bus_id_is_normalised_or_none(text: str) -> None:
    bus = normalize_bus_id(text)
    assert bus is None or (BUS.fullmatch(bus) and normalize_bus_id(bus) == bus)


@given(
    st.none()
    | texts(VISIBLE)
    | st.lists(st.sampled_from(["0", "1", "7", "GPU-", "GPU-9", "MIG-", "-1", "x"])).map(",".join),
    st.lists(st.none() | st.sampled_from(["GPU-9221d5d1", "GPU-9222", "GPU-0000"]), max_size=4),
)
@example("0," + "9" * 5000, ["GPU-1", None])
def test_visible_devices_are_distinct_physical_indices(value: str | None, uuids: list[str | None]) -> None:
    vis = parse_visible_devices(value, uuids)
    assert len(set(vis.visible)) == len(vis.visible)
    assert all(0 <= i < len(uuids) for i in vis.visible)
    if value is None:
        assert vis.visible == tuple(range(len(uuids)))


@given(texts(NATIVE) | binary_text())
@example("[" * 5000)
@example('{"nvml": {"devices": 5}}')
@example('{"nvml": {"devices": [{"index": 99999999999, "bus_id": "0000:01:00.0"}]}}')
@example(json.dumps({"nvml": {"devices": [{"index": -1}], "driver": arabic("580.95")}}, ensure_ascii=False))
def test_the_native_probe_json_gives_a_report_or_a_value_error(text: str) -> None:
    try:
        report = parse_native(text)
    except ValueError:
        return
    _check_driver(report.driver_version)
    for gpu in report.gpus:
        assert 0 <= gpu.index < MAX_GPUS
        assert gpu.bus_id is None or BUS.fullmatch(gpu.bus_id)
        assert gpu.compute_capability is None or CC.fullmatch(gpu.compute_capability)


SMI_SCRIPT = '#!/bin/sh\ncd "$(dirname "$0")"\ncat smi.out\ncat smi.err >&2\nexit "$(cat smi.rc)"\n'
#: Two GPUs at one index (a CUDA ordinal names one GPU): found by this target, the first is kept.
SAME_INDEX = "0, A, 00000000:01:00.0, 6.1, 580.95.05, GPU-1\n0, B, 00000000:07:00.0, 8.0, 580.95.05, GPU-2"
PCI_FILE = st.sampled_from(["0x10de\n", "0x2684\n", "0x1b80\n", "0x030000\n", "0x030200\n"]) | junk()


@given(
    near_valid(SMI) | binary_text(),
    st.sampled_from([0, 0, 0, 2, 9]),
    near_valid(NVRM) | junk(),
    near_valid(MODULE) | junk(),
    st.lists(st.tuples(near_valid(INFORMATION), PCI_FILE, PCI_FILE, PCI_FILE), max_size=2),
    st.none() | st.sampled_from(VISIBLE) | junk().filter(lambda v: "\x00" not in v),  # no NUL in a real environ
)
@example("99999999, NVIDIA GeForce RTX 4090, 00000000:01:00.0, 8.9, 580.95.05, GPU-00000ffa\n", 0, "", "", [], None)
@example(SAME_INDEX, 0, "", "", [], None)
@SLOW
def test_the_provider_reports_one_gpu_per_bus_id_or_failed_probes(
    smi: str,
    returncode: int,
    nvrm: str,
    module: str,
    gpus: list[tuple[str, str, str, str]],
    visible: str | None,
) -> None:
    with tree() as root:
        root.write("usr/bin/nvidia-smi", SMI_SCRIPT, exe=True)
        root.write("usr/bin/smi.out", smi)
        root.write("usr/bin/smi.err", 'Field "compute_cap" is not a valid field to query.\n' if returncode == 2 else "")
        root.write("usr/bin/smi.rc", str(returncode))
        root.write("proc/driver/nvidia/version", nvrm)
        root.write("sys/module/nvidia/version", module)
        root.write("dev/nvidiactl", "")
        root.write("dev/nvidia0", "")
        for i, (information, vendor, device, cls) in enumerate(gpus):
            slot = f"0000:{i + 1:02x}:00.0"
            root.write(f"proc/driver/nvidia/gpus/{slot}/information", information)
            root.write(f"sys/bus/pci/devices/{slot}/vendor", vendor)
            root.write(f"sys/bus/pci/devices/{slot}/device", device)
            root.write(f"sys/bus/pci/devices/{slot}/class", cls)
        environ = {} if visible is None else {"CUDA_VISIBLE_DEVICES": visible}
        result = PROVIDER.probe(root.system(environ))
    assert_no_bug(result)
    indices = [acc["index"] for acc in result.accelerators]
    assert len(set(indices)) == len(indices), result.accelerators
    for acc in result.accelerators:
        assert acc["vendor"] == "nvidia" and acc["name"]
        assert acc["compute_capability"] is None or CC.fullmatch(acc["compute_capability"]), acc
        _check_driver(acc["driver_version"])
        assert acc["pci_id"] is None or re.fullmatch(r"10de:[0-9a-f]{4}", acc["pci_id"]), acc
        assert 0 <= acc["index"] < MAX_GPUS
