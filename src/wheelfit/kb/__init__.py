"""Knowledge base: versioned data files with sources, and their loaders."""

from .jsonfile import DataFileError, load_json, read_json_file
from .notes import device_note

__all__ = ["DataFileError", "device_note", "load_json", "read_json_file"]
