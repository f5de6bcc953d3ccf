"""Probing: run the detector plugins against a machine (real, or a ``--sysroot`` tree)."""

from .runner import assemble, detect

__all__ = ["assemble", "detect"]
