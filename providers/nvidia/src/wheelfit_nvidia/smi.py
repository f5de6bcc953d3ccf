"""``nvidia-smi --query-gpu`` in CSV mode: the argv, the line parser and the known failure texts.

Only the query mode is used (its format is stable; the banner's layout is not).
On 470-era drivers ``compute_cap`` is not a valid field: the caller retries
without it and takes the capability from the PCI ID table.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from wheelfit_probekit.drivers import is_driver_version

from .procfs import normalize_bus_id

__all__ = [
    "FIELDS",
    "FIELDS_NO_CC",
    "MAX_GPUS",
    "SmiFailure",
    "SmiGpu",
    "classify_failure",
    "parse_query",
    "query_args",
]

FIELDS = ("index", "name", "pci.bus_id", "compute_cap", "driver_version", "uuid")
#: GPU indices at or above this are garbage, not a machine: NVML numbers GPUs 0..count-1 and the largest hosts
#: have 16. The provider sizes a per-index table by the highest index, so an unbounded one could exhaust memory.
MAX_GPUS = 1024
FIELDS_NO_CC = tuple(f for f in FIELDS if f != "compute_cap")

_CC_RE = re.compile(r"^\d{1,2}\.\d{1,2}$", re.ASCII)
_INDEX_RE = re.compile(r"[0-9]{1,4}")
_UUID_RE = re.compile(r"^GPU-[0-9a-fA-F-]+$")


def query_args(with_compute_cap: bool = True) -> tuple[str, ...]:
    fields = FIELDS if with_compute_cap else FIELDS_NO_CC
    return (f"--query-gpu={','.join(fields)}", "--format=csv,noheader")


@dataclass(frozen=True)
class SmiGpu:
    index: int
    name: str
    bus_id: str
    compute_capability: str | None
    driver_version: str | None
    uuid: str | None


def parse_query(stdout: str, with_compute_cap: bool = True) -> tuple[list[SmiGpu], list[str]]:
    """One GPU per line, fields separated by ``", "``; returns (GPUs, lines that did not parse).

    A name may itself contain ``", "``: the fixed fields are taken from both ends.
    ``[N/A]``-style values become ``None``; a line without a valid index and bus id
    is rejected as a whole.
    """
    n_tail = 4 if with_compute_cap else 3
    gpus: list[SmiGpu] = []
    bad: list[str] = []
    for raw in stdout.splitlines():
        line = raw.strip()
        if not line:
            continue
        parts = [p.strip() for p in line.split(", ")]
        if len(parts) < 2 + n_tail:
            bad.append(line)
            continue
        index, name, tail = parts[0], ", ".join(parts[1:-n_tail]), parts[-n_tail:]
        bus_id = normalize_bus_id(tail[0])
        if not _INDEX_RE.fullmatch(index) or int(index) >= MAX_GPUS or bus_id is None or not name or name[0] == "[":
            bad.append(line)
            continue
        cc = tail[1] if with_compute_cap else None
        driver, uuid = tail[-2], tail[-1]
        gpus.append(
            SmiGpu(
                index=int(index),
                name=name,
                bus_id=bus_id,
                compute_capability=cc if cc and _CC_RE.match(cc) else None,
                driver_version=driver if is_driver_version(driver) else None,
                uuid=uuid if _UUID_RE.match(uuid) else None,
            )
        )
    return gpus, bad


@dataclass(frozen=True)
class SmiFailure:
    error: str
    hint: str | None
    #: ``compute_cap`` rejected: retry the query without it.
    retry_without_compute_cap: bool = False


_NO_CC_FIELD = 'Field "compute_cap" is not a valid field to query.'
_NO_DRIVER = "couldn't communicate with the NVIDIA driver"
_NVML_INIT = "Failed to initialize NVML"

HINT_NO_DRIVER = "no NVIDIA driver is loaded: install the NVIDIA driver (or load its kernel module) and retry"
HINT_NVML_INIT = (
    "NVML could not initialise: reboot after a driver update (kernel module and libraries must match), "
    "or restart the container with its GPUs"
)


def classify_failure(returncode: int, stdout: str, stderr: str) -> SmiFailure:
    """Turn a non-zero exit into a one-line error and a hint a person can act on."""
    text = f"{stdout}\n{stderr}"
    first = next((ln.strip() for ln in text.splitlines() if ln.strip()), "")
    if _NO_CC_FIELD in text:
        error = f"this driver's nvidia-smi has no compute_cap field (exit {returncode})"
        return SmiFailure(error, None, retry_without_compute_cap=True)
    if _NO_DRIVER in text:
        return SmiFailure(f"exit {returncode}: nvidia-smi {_NO_DRIVER}", HINT_NO_DRIVER)
    if _NVML_INIT in text:
        return SmiFailure(f"exit {returncode}: {first}", HINT_NVML_INIT)
    return SmiFailure(f"exit {returncode}: {first[:160] or 'no output'}", None)
