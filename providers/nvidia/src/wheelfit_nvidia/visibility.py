"""Which physical GPUs ``CUDA_VISIBLE_DEVICES`` leaves visible, per NVIDIA's rules.

All physical GPUs are reported (the installer decides for the machine); this only
marks each one ``visible``. Semantics (CUDA programming guide, "Environment Variables", as
re-implemented by torch's NVML path, ``torch/cuda/__init__.py`` ``_parse_visible_devices``): unset -> all;
empty -> none; comma list of indices or ``GPU-`` UUID prefixes; parsing stops
at the first invalid entry; a repeated device makes the list empty.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["Visibility", "parse_visible_devices"]

#: ASCII digits, as CUDA's strtoul reads them.
_LEADING_DIGITS = re.compile(r"^\d+", re.ASCII)


@dataclass(frozen=True)
class Visibility:
    #: Physical indices that CUDA will enumerate, in CUDA ordinal order.
    visible: tuple[int, ...]
    #: Why parsing stopped early, if it did.
    note: str | None = None


def _match_uuid(token: str, uuids: Sequence[str | None]) -> int | str:
    hits = [i for i, u in enumerate(uuids) if u and u.lower().startswith(token.lower())]
    if len(hits) == 1:
        return hits[0]
    return f"{token!r} matches {'no' if not hits else 'more than one'} GPU UUID"


def parse_visible_devices(value: str | None, uuids: Sequence[str | None]) -> Visibility:
    """``uuids[i]`` is physical GPU ``i``'s UUID (``None`` when unknown)."""
    count = len(uuids)
    if value is None:
        return Visibility(tuple(range(count)))
    if not value.strip():
        return Visibility((), "the variable is empty, which hides every GPU")
    chosen: list[int] = []
    note: str | None = None
    for raw in value.split(","):
        token = raw.strip()
        found: int | str
        if token.startswith("MIG-GPU-"):
            # Legacy MIG form MIG-<GPU-UUID>/<GI>/<CI>: the parent GPU is visible (as a MIG slice).
            found = _match_uuid(token[4:].split("/", 1)[0], uuids)
        elif token.startswith("MIG-"):
            found = f"{token!r} is a MIG instance UUID, which cannot be resolved without NVML"
        elif token.startswith("GPU-"):
            found = _match_uuid(token, uuids)
        else:
            digits = _LEADING_DIGITS.match(token)
            if digits is None:
                found = f"{token!r} is not a device index"
            elif len(digits.group()) > 9 or int(digits.group()) >= count:  # int() refuses > 4300 digits
                found = f"index {digits.group()[:12]} is out of range ({count} GPUs)"
            else:
                found = int(digits.group())
        if isinstance(found, str):
            note = f"stopped at {found}"
            break
        if found in chosen:
            return Visibility((), f"GPU {found} is listed twice, which hides every GPU")
        chosen.append(found)
    return Visibility(tuple(chosen), note)
