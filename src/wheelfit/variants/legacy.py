"""PyTorch's variant labels and the per-variant index each was repacked from.

PyTorch builds its variant wheels by repacking the per-variant indexes' wheels (test-infra
``release/pypi/promote_wheel_variants.sh``: ``cu128|manylinux_2_28_x86_64|%2Bcu128`` -> label
``cuda12.8``; the per-variant directories are those of test-infra ``s3_management/manage.py``). The labels
used: 2.8 ``cu126``/``cu128``/``cu129`` and null ``00000000``; 2.9 and 2.10 ``cuda12.6``, ``cuda12.8``,
``cuda13.0``, ``rocm6.3``/``6.4``/``7.0``/``7.1``, ``xpu``, ``null``. Pure.
"""

from __future__ import annotations

import re

from .properties import is_null_label

__all__ = ["legacy_variant"]

_CUDA = re.compile(r"cuda(\d+)\.(\d)")
#: The per-variant index names PyTorch accepts (test-infra ``s3_management/manage.py``), minus ``cpu`` (null).
_LEGACY = re.compile(r"cu\d+|rocm\d+\.\d+(?:\.\d+)?|xpu")


def legacy_variant(label: str) -> str | None:
    """``cuda12.8`` -> ``cu128``, ``rocm7.1`` -> ``rocm7.1``, ``xpu`` -> ``xpu``, null -> ``cpu``; ``None`` for a
    label that is none of PyTorch's."""
    if is_null_label(label):
        return "cpu"
    cuda = _CUDA.fullmatch(label)
    if cuda:
        return f"cu{cuda[1]}{cuda[2]}"
    return label if _LEGACY.fullmatch(label) else None
