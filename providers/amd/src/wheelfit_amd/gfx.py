"""gfx target names: KFD's decimal ``gfx_target_version`` and ``HSA_OVERRIDE_GFX_VERSION``.

Both encode major, minor and stepping as decimal numbers; the ISA name prints the
major in decimal and minor/stepping in hex (ROCm/rocminfo ``rocm_agent_enumerator`` ``readFromKFD``;
ROCm/ROCR-Runtime ``libhsakmt/src/topology.c``), so 90010 and
"9.0.10" are both gfx90a.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

__all__ = ["OVERRIDE_VAR", "Override", "decode_target_version", "gfx_name", "hsa_override", "parse_override"]

OVERRIDE_VAR = "HSA_OVERRIDE_GFX_VERSION"

_OVERRIDE_RE = re.compile(r"\s*(\d+)\.(\d+)\.(\d+)", re.ASCII)  # %u reads ASCII digits only


def gfx_name(major: int, minor: int, step: int) -> str:
    """``(9, 4, 2)`` -> ``gfx942``; ``(11, 5, 1)`` -> ``gfx1151`` (rocm_agent_enumerator's rendering)."""
    return f"gfx{major:d}{minor:x}{step:x}"


def decode_target_version(value: int) -> str | None:
    """KFD ``gfx_target_version`` (decimal ``MMmmss``) -> ``gfxNNN``; ``None`` for 0 (a CPU node)."""
    if value <= 0:
        return None
    return gfx_name((value // 10000) % 100, (value // 100) % 100, value % 100)


def parse_override(value: str) -> str:
    """``"11.0.0"`` -> ``gfx1100``; raises ValueError on what libhsakmt rejects.

    libhsakmt reads ``%u.%u.%u%c`` and requires exactly three fields with
    major <= 63 and minor, stepping <= 255 (ROCm/ROCR-Runtime ``libhsakmt/src/topology.c`` @ c7785a6).
    """
    m = _OVERRIDE_RE.fullmatch(value)
    if m is None:
        raise ValueError(f"{value!r} is not major.minor.stepping")
    major, minor, step = (int(g) for g in m.groups())
    if major > 63 or minor > 255 or step > 255:
        raise ValueError(f"{value!r} is out of range (major <= 63, minor and stepping <= 255)")
    return gfx_name(major, minor, step)


@dataclass(frozen=True)
class Override:
    """The override that applies to one KFD node: which variable set it and what it decodes to."""

    variable: str
    value: str
    #: ``None`` when the value is invalid: libhsakmt then fails the topology read
    #: (``HSAKMT_STATUS_ERROR``), so the runtime finds no GPU at all.
    gfx: str | None
    error: str | None = None


def hsa_override(environ: Mapping[str, str], node: int | None) -> Override | None:
    """The override for a KFD node: ``HSA_OVERRIDE_GFX_VERSION_<node>`` wins over the global one.

    Like libhsakmt, a set per-node variable is used even when it is invalid (the
    global one is then not consulted). ``node=None`` (node unknown) sees only the
    global variable.
    """
    names = ([f"{OVERRIDE_VAR}_{node}"] if node is not None else []) + [OVERRIDE_VAR]
    for name in names:
        value = environ.get(name)
        if value is None:
            continue
        try:
            return Override(name, value, parse_override(value))
        except ValueError as exc:
            return Override(name, value, None, f"{name} is invalid: {exc}")
    return None
