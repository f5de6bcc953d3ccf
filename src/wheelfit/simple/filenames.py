"""Wheel file names (PEP 427 / binary distribution format): name, version, build tag, tags.

PyTorch publishes build-tagged wheels (``torch-2.10.0-3-cp312-...whl``) and local
versions (``torch-2.8.0+cu126-...``); both must parse, and a higher build tag
wins among otherwise equal files. Pure: no I/O.
"""

from __future__ import annotations

from dataclasses import dataclass

from packaging.tags import Tag
from packaging.utils import (
    BuildTag,
    NormalizedName,
    parse_wheel_filename,
)
from packaging.version import Version

__all__ = ["WheelName", "parse_wheel_name"]


@dataclass(frozen=True)
class WheelName:
    filename: str
    name: NormalizedName
    version: Version
    #: ``()`` when absent, else ``(3, "")``; tuples compare so a higher build number wins.
    build: BuildTag
    tags: frozenset[Tag]

    @property
    def local(self) -> str | None:
        """The local version label, e.g. ``cu126`` for ``2.8.0+cu126``: the PyTorch variant."""
        return self.version.local


def parse_wheel_name(filename: str) -> WheelName | None:
    """Parse a wheel file name; ``None`` for anything that is not a valid wheel name (an sdist, a typo)."""
    try:
        name, version, build, tags = parse_wheel_filename(filename)
    except ValueError:  # InvalidWheelFilename, or a number past int()'s 4300-digit limit (notatallshaw/nab#652)
        return None
    return WheelName(filename=filename, name=name, version=version, build=build, tags=tags)
