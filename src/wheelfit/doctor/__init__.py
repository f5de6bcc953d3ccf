"""``wheelfit doctor``: what is wrong with the torch an environment has, and the one step that fixes it."""

from .extensions import names as extension_names
from .findings import diagnose
from .model import Diagnosis, Finding, Fix, FixKind, Issue

__all__ = ["Diagnosis", "Finding", "Fix", "FixKind", "Issue", "diagnose", "extension_names"]
