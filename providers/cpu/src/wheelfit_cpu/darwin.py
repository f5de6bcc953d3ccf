"""macOS: one ``sysctl`` answer -> CPU description, Rosetta state, macOS version, Apple GPU entry."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from .info import CpuInfo, load_data

__all__ = [
    "MPS_MIN_MACOS",
    "SYSCTL_ARGS",
    "apple_features",
    "apple_gpu",
    "darwin_x86_features",
    "info_from_sysctl",
    "parse_sysctl",
    "plist_version",
    "version_tuple",
]

#: One ``sysctl`` call answers everything: ``-i`` ignores names a Mac lacks (Intel keys on
#: Apple Silicon, ``sysctl.proc_translated`` before Big Sur); a node prints its whole subtree.
SYSCTL_ARGS = ("-i", "machdep.cpu", "hw.optional", "sysctl.proc_translated", "kern.osproductversion")

#: MPS needs macOS 12.3 (Apple's 2022 "Accelerated PyTorch training on Mac" page for PyTorch 1.12; the
#: Hugging Face MPS docs). Which torch release needs a newer macOS is the resolver's business.
MPS_MIN_MACOS = (12, 3)

BRAND = "machdep.cpu.brand_string"


def parse_sysctl(text: str) -> dict[str, str]:
    """``name: value`` lines (archspec splits on ``": "``; a valueless ``hw.osenvironment:`` is dropped)."""
    data: dict[str, str] = {}
    for line in text.splitlines():
        key, sep, value = line.partition(": ")
        if sep and key.strip():
            data[key.strip()] = value.strip()
    return data


def darwin_x86_features(data: Mapping[str, str], conversions: Mapping[str, str]) -> frozenset[str]:
    """Intel Mac feature names lowercased, plus their Linux spellings, exactly as archspec does.

    ``conversions`` is archspec's ``darwin_flags`` table (``"popcnt lzcnt": "abm"`` adds
    ``abm`` only when both are present). The Darwin names are kept, as in archspec.
    """
    raw = " ".join(
        data.get(k, "") for k in ("machdep.cpu.features", "machdep.cpu.leaf7_features", "machdep.cpu.extfeatures")
    )
    features = set(raw.lower().split())
    for darwin, linux in conversions.items():
        if all(x in features for x in darwin.split()):
            features.update(linux.split())
    return frozenset(features)


def apple_features(data: Mapping[str, str]) -> frozenset[str]:
    """Apple Silicon ``hw.optional.*`` flags set to 1, in Linux ``Features`` spelling."""
    table: dict[str, list[str]] = load_data("darwin_arm_features.json")["features"]
    out: set[str] = set()
    for key, names in table.items():
        if data.get(key, "").strip() == "1":
            out.update(names)
    return frozenset(out)


def is_apple_silicon(data: Mapping[str, str]) -> bool:
    # archspec's rule: the brand string names Apple even for an x86_64 Python under Rosetta.
    return "Apple" in data.get(BRAND, "") or data.get("hw.optional.arm64") == "1"


def info_from_sysctl(data: Mapping[str, str], conversions: Mapping[str, str]) -> CpuInfo:
    """The partial CPU description of a Mac; ``name`` is left for :func:`uarch.apple_model`."""
    brand = data.get(BRAND) or None
    if is_apple_silicon(data):
        return CpuInfo(arch="aarch64", os="Darwin", vendor="Apple", model=brand, features=apple_features(data))
    return CpuInfo(
        arch="x86_64",
        os="Darwin",
        vendor=data.get("machdep.cpu.vendor", "generic") or "generic",
        model=brand,
        features=darwin_x86_features(data, conversions),
    )


def plist_version(text: str) -> str | None:
    """``ProductVersion`` of the XML ``SystemVersion.plist`` (a regex fallback for a damaged file)."""
    import plistlib  # only macOS needs it; keep the package import cheap

    try:
        value = plistlib.loads(text.encode("utf-8")).get("ProductVersion")
    except Exception:  # noqa: BLE001 - any malformed plist means "unknown version"
        match = re.search(r"<key>ProductVersion</key>\s*<string>([^<]+)</string>", text)
        return match.group(1).strip() if match else None
    return value.strip() if isinstance(value, str) and value.strip() else None


def version_tuple(version: str | None) -> tuple[int, ...] | None:
    """``"12.6.1"`` -> ``(12, 6, 1)``; ``None`` for anything else."""
    if not version or not re.fullmatch(r"\d+(\.\d+)*", version.strip()):
        return None
    return tuple(int(p) for p in version.strip().split("."))


def apple_gpu(brand: str | None, macos: str | None, rosetta: bool) -> tuple[dict[str, Any], str | None]:
    """The Apple GPU accelerator entry and, when MPS is not usable, why (for the probe record)."""
    name = f"{brand} GPU" if brand and brand.startswith("Apple M") else "Apple GPU"
    ver = version_tuple(macos)
    why: str | None = None
    mps: bool | None
    if ver is None:
        mps, why = None, f"macOS version unknown ({macos!r}); MPS needs macOS {_dotted(MPS_MIN_MACOS)} or later"
    elif ver < MPS_MIN_MACOS:
        mps, why = False, f"macOS {macos} is older than {_dotted(MPS_MIN_MACOS)}, the first with MPS"
    elif rosetta:
        mps, why = False, "this Python is an x86_64 build running under Rosetta; MPS needs a native arm64 Python"
    else:
        mps = True
    entry: dict[str, Any] = {
        "vendor": "apple",
        "name": name,
        "pci_id": None,
        "source": "sysctl",
        "integrated": True,
        "mps": mps,
        "macos": macos,
    }
    if rosetta:
        entry["rosetta"] = True
    return entry, why


def _dotted(v: tuple[int, ...]) -> str:
    return ".".join(str(x) for x in v)
