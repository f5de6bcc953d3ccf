"""wheelfit detector plugin: Intel GPUs, their family and whether PyTorch XPU can use them."""

from __future__ import annotations

from .provider import IntelProvider

__all__ = ["PROVIDER"]

PROVIDER = IntelProvider()
