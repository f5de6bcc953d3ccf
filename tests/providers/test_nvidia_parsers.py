"""NVIDIA text parsers against recorded strings: published nvidia-smi and /proc/driver/nvidia output, uv's fixtures."""

from __future__ import annotations

import pytest

from wheelfit_nvidia.kernel import is_tegra_numbering, parse_module_version, parse_nvrm
from wheelfit_nvidia.procfs import normalize_bus_id, parse_information
from wheelfit_nvidia.smi import classify_failure, parse_query, query_args

# --- /proc/driver/nvidia/version ------------------------------------------------------------------

UV_FIXTURE = (
    "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  550.144.03  Release Build  "
    "(dvs-builder@U16-I3-D08-1-2)  Mon Dec 30 17:26:13 UTC 2024\n"
    "GCC version:  gcc version 12.3.0 (Ubuntu 12.3.0-1ubuntu1~22.04)\n"
)
SPARK = (
    "NVRM version: NVIDIA UNIX Open Kernel Module for aarch64  580.126.09  Release Build  "
    "(dvs-builder@U22-I3-AF04-07-5)  Wed Jan  7 22:35:57 UTC 2026\n"
    "GCC version:  gcc version 13.3.0 (Ubuntu 13.3.0-6ubuntu2~24.04.1)\n"
)
JETSON = (
    "NVRM version: NVIDIA UNIX Open Kernel Module for aarch64  540.4.0  Release Build  "
    "(buildbrain@mobile-u64-6336-d8000)  Tue Jan  7 17:35:12 PST 2025\n"
    "GCC version:  collect2: error: ld returned 1 exit status\n"
)


@pytest.mark.parametrize(
    ("text", "version", "module", "arch"),
    [
        (UV_FIXTURE, "550.144.03", "open", "x86_64"),
        (
            "NVRM version: NVIDIA UNIX x86_64 Kernel Module  375.74  Wed Jun 14 01:39:39 PDT 2017\n",
            "375.74",
            "proprietary",
            "x86_64",
        ),
        (
            "NVRM version: NVIDIA UNIX x86_64 Kernel Module  570.86.15  Wed Jan 22 2025\n",
            "570.86.15",
            "proprietary",
            "x86_64",
        ),
        (
            "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  595.84  Release Build\n",
            "595.84",
            "open",
            "x86_64",
        ),
        (SPARK, "580.126.09", "open", "aarch64"),
        (JETSON, "540.4.0", "open", "aarch64"),
        # single-space copy of the line (uv's double-space split fails here; the regex does not)
        (
            "NVRM version: NVIDIA UNIX Open Kernel Module for aarch64 540.5.0 Release Build",
            "540.5.0",
            "open",
            "aarch64",
        ),
    ],
)
def test_nvrm_variants(text: str, version: str, module: str, arch: str) -> None:
    info = parse_nvrm(text)
    assert info is not None
    assert (info.version, info.kernel_module, info.arch) == (version, module, arch)


def test_nvrm_ignores_version_like_numbers_on_the_gcc_line() -> None:
    assert parse_nvrm("GCC version:  gcc version 12.3.0 (Ubuntu 12.3.0-1ubuntu1~22.04)\n") is None
    assert parse_nvrm("\x00\xffNRVM vers\ufffdion 55.1\nGCC version:  collect2: error 12.3.0\n") is None
    assert parse_nvrm("") is None


def test_jetson_numbering_is_recognised_only_on_aarch64_540() -> None:
    assert is_tegra_numbering("540.4.0", "aarch64")
    assert not is_tegra_numbering("580.126.09", "aarch64")
    assert not is_tegra_numbering("540.4.0", "x86_64")


@pytest.mark.parametrize(
    ("text", "want"),
    [
        ("550.144.03\n", "550.144.03"),
        ("580.95.05", "580.95.05"),
        ("595.84\n", "595.84"),
        ("\ufffd\x00garbage\n", None),
        ("", None),
        ("550\n", None),
        ("1.2.3.4\n", None),
    ],
)
def test_module_version(text: str, want: str | None) -> None:
    assert parse_module_version(text) == want


# --- nvidia-smi --query-gpu ------------------------------------------------------------------------


def test_query_argv_never_asks_for_the_banner() -> None:
    assert query_args() == (
        "--query-gpu=index,name,pci.bus_id,compute_cap,driver_version,uuid",
        "--format=csv,noheader",
    )
    assert query_args(with_compute_cap=False)[0] == "--query-gpu=index,name,pci.bus_id,driver_version,uuid"


def test_query_multi_gpu_lines() -> None:
    out = (
        "0, NVIDIA GeForce RTX 4090, 00000000:01:00.0, 8.9, 580.95.05, GPU-12345678-90ab-cdef-1234-567890abcdef\n"
        "1, Quadro P620, 00000000:3B:00.0, 6.1, 580.95.05, GPU-f75045e8-4d87-49d1-2eb9-39ec2baddf9b\n"
    )
    gpus, bad = parse_query(out)
    assert bad == []
    assert [(g.index, g.name, g.bus_id, g.compute_capability) for g in gpus] == [
        (0, "NVIDIA GeForce RTX 4090", "0000:01:00.0", "8.9"),
        (1, "Quadro P620", "0000:3b:00.0", "6.1"),
    ]
    assert gpus[1].uuid == "GPU-f75045e8-4d87-49d1-2eb9-39ec2baddf9b"
    assert gpus[0].driver_version == "580.95.05"


def test_query_without_compute_cap_and_odd_values() -> None:
    gpus, _ = parse_query("0, NVIDIA GeForce RTX 3090, 00000000:0A:00.0, 470.182.03, GPU-aa\n", with_compute_cap=False)
    assert gpus[0].compute_capability is None
    assert gpus[0].driver_version == "470.182.03"
    gpus, _ = parse_query("0, NVIDIA GB10, 0000000F:01:00.0, [N/A], ERR!, [N/A]\n")
    assert (gpus[0].bus_id, gpus[0].compute_capability, gpus[0].driver_version, gpus[0].uuid) == (
        "000f:01:00.0",
        None,
        None,
        None,
    )


def test_query_name_with_the_separator_inside() -> None:
    gpus, _ = parse_query("0, Odd, Name, 00000000:01:00.0, 8.9, 572.60, GPU-1\n")
    assert gpus[0].name == "Odd, Name"


@pytest.mark.parametrize(
    "out",
    [
        "572.60\n572.60\n",  # the driver-only query uv runs: not our format
        "name, compute_cap, driver_version\nNVIDIA GB10, 12.1, 580.159.03\n",  # header + other fields
        "\ufffd\ufffd\x00\x1b[31m?? ,, 0x1f\n\x01\x02 random ,  bytes\n",
        "",
    ],
)
def test_query_garbage_gives_no_gpu(out: str) -> None:
    gpus, _ = parse_query(out)
    assert gpus == []


def test_failure_texts() -> None:
    f = classify_failure(2, 'Field "compute_cap" is not a valid field to query.\n', "")
    assert f.retry_without_compute_cap
    f = classify_failure(
        9,
        "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure that the latest "
        "NVIDIA driver is installed and running.\n",
        "",
    )
    assert not f.retry_without_compute_cap
    assert "exit 9" in f.error
    assert f.hint is not None and "install the NVIDIA driver" in f.hint
    f = classify_failure(255, "Failed to initialize NVML: Unknown Error\n", "")
    assert f.error == "exit 255: Failed to initialize NVML: Unknown Error"
    assert f.hint is not None and "reboot" in f.hint
    f = classify_failure(4, "", "")
    assert f.error == "exit 4: no output" and f.hint is None


# --- /proc/driver/nvidia/gpus/<bus>/information (open-gpu-kernel-modules nv-procfs.c) ---------------


def test_information_tab_padded() -> None:
    text = (
        "Model: \t\t NVIDIA GeForce RTX 4090\nIRQ:   \t\t 185\nGPU UUID: \t GPU-12345678-90ab-cdef-1234-567890abcdef\n"
        "Video BIOS: \t 12.34.56.78.aa\nBus Type: \t PCIe\nDMA Size: \t 47 bits\nDMA Mask: \t 0x7fffffffffff\n"
        "Bus Location: \t 0000:01:00.0\nDevice Minor: \t 0\nGPU Firmware: \t 580.95.05\nGPU Excluded:\t No\n"
    )
    info = parse_information(text)
    assert info.model == "NVIDIA GeForce RTX 4090"
    assert info.uuid == "GPU-12345678-90ab-cdef-1234-567890abcdef"
    assert (info.bus_id, info.minor) == ("0000:01:00.0", 0)


def test_information_space_padded_sample() -> None:
    text = (
        "Model:           NVIDIA H100 80GB HBM3\nIRQ:             10\n"
        "GPU UUID:        GPU-9221d5d1-b60b-a624-bf14-0a1819cfda3b\nBus Location:    0000:62:00.0\n"
        "Device Minor:    5\nGPU Firmware:    535.129.03\nGPU Excluded:    No\n"
    )
    info = parse_information(text)
    assert (info.model, info.minor, info.bus_id) == ("NVIDIA H100 80GB HBM3", 5, "0000:62:00.0")


def test_information_garbage() -> None:
    info = parse_information("\x00\xff nonsense\nDevice Minor: x\n")
    assert (info.model, info.uuid, info.bus_id, info.minor) == (None, None, None, None)


@pytest.mark.parametrize(
    ("text", "want"),
    [
        ("00000000:3B:00.0", "0000:3b:00.0"),
        ("0000:01:00.0", "0000:01:00.0"),
        ("10000:e1:00.1", "10000:e1:00.1"),
        ("01:00.0", None),
        ("GPU-1", None),
        ("", None),
    ],
)
def test_bus_id_spellings(text: str, want: str | None) -> None:
    assert normalize_bus_id(text) == want
