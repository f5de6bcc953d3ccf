"""Shared, stdlib-only toolkit for wheelfit detector plugins.

Detectors import this and nothing heavy: variant-aware installers load them in
isolated environments where only their declared dependencies exist.
"""

from .datafile import DataFileError, Table, load_table
from .pci import PciDevice, scan_pci
from .platform import normalize_arch, platform_info
from .records import PROVIDER_API, Probe, ProbeLog, ProbeRecord, Provider, ProviderResult
from .system import CommandResult, ProbeError, ProbeTimeout, System, parse_int, split_kv

__all__ = [
    "PROVIDER_API",
    "CommandResult",
    "DataFileError",
    "PciDevice",
    "Probe",
    "ProbeError",
    "ProbeLog",
    "ProbeRecord",
    "ProbeTimeout",
    "Provider",
    "ProviderResult",
    "System",
    "Table",
    "load_table",
    "normalize_arch",
    "parse_int",
    "platform_info",
    "scan_pci",
    "split_kv",
]
