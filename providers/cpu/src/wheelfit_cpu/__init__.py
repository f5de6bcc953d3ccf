"""wheelfit detector plugin: CPU ISA (x86-64 level, AVX-512/AMX, aarch64 features), microarchitecture, Apple MPS.

Importing this package is cheap: archspec is loaded inside ``probe()`` only.
"""

from __future__ import annotations

from .provider import CpuProvider

__all__ = ["PROVIDER"]

PROVIDER = CpuProvider()
