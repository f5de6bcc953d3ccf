"""Probing: run the detector plugins against a machine (real, or a ``--sysroot`` tree). The names below load on
first use (PEP 562): a plan for a ``--target`` reads :mod:`.target` and runs no detector."""

from typing import TYPE_CHECKING

from ..lazy import lazy_attributes

if TYPE_CHECKING:
    from .runner import assemble, detect

__all__ = ["assemble", "detect"]

__getattr__ = lazy_attributes(__name__, dict.fromkeys(__all__, "runner"))
