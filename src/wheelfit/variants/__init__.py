"""Wheel variants (PEP 817/825 and the WheelNext drafts): filenames, metadata, ranking, markers.

Everything here is pure: callers read files and probe hardware, then hand the results in.
"""

from __future__ import annotations

from .errors import VariantError

__all__ = ["VariantError"]
