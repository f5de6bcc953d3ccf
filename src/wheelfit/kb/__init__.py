"""Knowledge base: versioned data files with sources, and their loaders."""

from .notes import device_note

__all__ = ["device_note"]
