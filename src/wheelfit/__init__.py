"""wheelfit: install the PyTorch build that has kernels for this machine."""

from __future__ import annotations

__version__ = "0.1.0"
__all__ = ["__version__"]
