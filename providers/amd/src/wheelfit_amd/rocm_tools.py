"""``rocminfo`` and ``rocm_agent_enumerator``: the ROCm runtime's own view of the GPUs.

Both apply ``HSA_OVERRIDE_GFX_VERSION`` (rocminfo through the HSA runtime, ``rocm_agent_enumerator`` on its
KFD path; ROCm/rocminfo @ c6f7a17), so they are run
with the override variables removed: what they print is then the physical
target, and the override is decoded separately like for KFD.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass
from pathlib import Path

from wheelfit_probekit import CommandResult, System

from .gfx import OVERRIDE_VAR

__all__ = ["RocmAgent", "find_tool", "parse_agent_enumerator", "parse_rocminfo", "run_rocm_tool", "tool_environ"]

_AGENT_RE = re.compile(r"^\s*Agent\s+\d+\s*$")
_GFX_NAME_RE = re.compile(r"^\s+Name:\s+(gfx[0-9a-f]+)\s*$")
_FIELD_RE = re.compile(r"^\s+([A-Za-z][A-Za-z ]*?):\s*(.*?)\s*$")
_CHIP_RE = re.compile(r"^(\d+)(?:\(0x[0-9a-fA-F]+\))?$")
_ENUM_RE = re.compile(r"gfx[0-9a-fA-F]+")


@dataclass(frozen=True)
class RocmAgent:
    """A GPU agent from rocminfo."""

    gfx: str
    marketing_name: str | None
    node: int | None
    chip_id: int | None
    compute_units: int | None
    #: ``BDFID``: PCI bus << 8 | devfn, like KFD's ``location_id`` (no domain).
    bdfid: int | None = None

    @property
    def bus_devfn(self) -> str | None:
        """``bb:dd.f`` of the PCI address, to match a PCI slot."""
        if self.bdfid is None:
            return None
        bus, devfn = self.bdfid >> 8, self.bdfid & 0xFF
        return f"{bus:02x}:{devfn >> 3:02x}.{devfn & 7:x}"


def parse_rocminfo(text: str) -> list[RocmAgent]:
    """GPU agents in output order.

    The agent's own ``Name: gfxNNNN`` is the first bare gfx name in its block;
    ISA lines (``amdgcn-amd-amdhsa--gfx942:sramecc+:xnack-``,
    ``…--gfx11-generic``) never match it.
    """
    blocks: list[list[str]] = []
    for line in text.splitlines():
        if _AGENT_RE.match(line):
            blocks.append([])
        elif blocks:
            blocks[-1].append(line)
    agents: list[RocmAgent] = []
    for block in blocks:
        gfx = next((m.group(1) for m in map(_GFX_NAME_RE.match, block) if m), None)
        fields: dict[str, str] = {}
        for line in block:
            m = _FIELD_RE.match(line)
            if m and m.group(1) not in fields:
                fields[m.group(1)] = m.group(2)
        if fields.get("Device Type") != "GPU" or gfx is None:
            continue
        chip = _CHIP_RE.match(fields.get("Chip ID", ""))
        agents.append(
            RocmAgent(
                gfx=gfx,
                marketing_name=fields.get("Marketing Name") or None,
                node=_to_int(fields.get("Node")),
                chip_id=int(chip.group(1)) if chip else None,
                compute_units=_to_int(fields.get("Compute Unit")),
                bdfid=_to_int(fields.get("BDFID"), 0xFFFF),
            )
        )
    return agents


def parse_agent_enumerator(text: str) -> list[str]:
    """One gfx per GPU (duplicates kept: one line per device); the CPU's ``gfx000`` is dropped."""
    out: list[str] = []
    for line in text.splitlines():
        m = _ENUM_RE.match(line.strip())
        if m and m.group(0).lower() != "gfx000":
            out.append(m.group(0).lower())
    return out


def _to_int(value: str | None, limit: int | None = None) -> int | None:
    """An unsigned decimal as rocminfo prints it, at most ``limit``; ``None`` for anything else (``int`` alone
    takes ``-1`` and non-ASCII digits, which would make a ``bus_devfn`` such as ``-1:1f.7``)."""
    if value is None or not (value.isascii() and value.isdigit()):
        return None
    number = int(value)
    return number if limit is None or number <= limit else None


def tool_environ(system: System) -> System:
    """The same machine with the variables that make ROCm tools report something else removed.

    ``HSA_OVERRIDE_GFX_VERSION[_N]`` changes the reported ISA; ``ROCM_TARGET_LST``
    makes rocm_agent_enumerator print a file instead of detecting.
    """
    env = {k: v for k, v in system.environ.items() if not k.startswith(OVERRIDE_VAR) and k != "ROCM_TARGET_LST"}
    return dataclasses.replace(system, environ=env)


def run_rocm_tool(system: System, rocm_root: str | None, tool: str) -> CommandResult:
    """Run a ROCm tool from ``$ROCM_PATH/bin`` when set (inside the sysroot), else from the usual places."""
    clean = tool_environ(system)
    if rocm_root:
        exe = system.path(f"{rocm_root}/bin/{tool}")
        if exe.is_file():
            return clean.run_path(exe, timeout=system.command_timeout, display=tool)
    return clean.run(tool, timeout=system.command_timeout)


def find_tool(system: System, rocm_root: str | None, tool: str) -> Path | None:
    if rocm_root:
        exe = system.path(f"{rocm_root}/bin/{tool}")
        if exe.is_file():
            return exe
    return system.which(tool)
