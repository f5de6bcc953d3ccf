"""The one exception the variant core raises."""

from __future__ import annotations

from ..errors import WheelfitError

__all__ = ["VariantError"]


class VariantError(WheelfitError, ValueError):
    """A variant filename, metadata file or marker cannot be used; the message says why."""
