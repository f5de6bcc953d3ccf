"""Variant properties ``namespace :: feature :: value`` and the name rules they follow (PEP 825)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from .errors import VariantError

__all__ = [
    "FEATURE_RE",
    "LABEL_RE",
    "NAMESPACE_RE",
    "NULL_LABEL",
    "NULL_LABELS",
    "VALUE_RE",
    "VariantProperty",
    "feature_key",
    "is_null_label",
]

NAMESPACE_RE = re.compile(r"[a-z0-9_]+")
FEATURE_RE = re.compile(r"[a-z0-9_]+")
VALUE_RE = re.compile(r"[a-z0-9_.]+")
#: PEP 825 removed the 16-character cap; ``null`` is reserved for the null variant.
LABEL_RE = re.compile(r"[0-9a-z_.]+")
NULL_LABEL = "null"
#: ``00000000`` is the null label of the hash era; PyTorch 2.8.0 still publishes it.
NULL_LABELS = frozenset({NULL_LABEL, "00000000"})

_PROPERTY_RE = re.compile(r"\s*([a-z0-9_]+)\s*::\s*([a-z0-9_]+)\s*::\s*([a-z0-9_.]+)\s*")
_FEATURE_RE = re.compile(r"\s*([a-z0-9_]+)\s*::\s*([a-z0-9_]+)\s*")


def is_null_label(label: str) -> bool:
    return label in NULL_LABELS


@dataclass(frozen=True, order=True)
class VariantProperty:
    namespace: str
    feature: str
    value: str

    @classmethod
    def parse(cls, text: str) -> VariantProperty:
        """``"nvidia :: sm_arch :: 90_real"``; whitespace around ``::`` does not matter."""
        m = _PROPERTY_RE.fullmatch(text)
        if m is None:
            raise VariantError(f"{text!r} is not a variant property; write it as 'namespace :: feature :: value'")
        return cls(m[1], m[2], m[3])

    def __str__(self) -> str:
        return f"{self.namespace} :: {self.feature} :: {self.value}"


def feature_key(text: str) -> str:
    """Normalise ``"ns::f"`` to ``"ns :: f"``; raises on anything else."""
    m = _FEATURE_RE.fullmatch(text)
    if m is None:
        raise VariantError(f"{text!r} is not a variant feature; write it as 'namespace :: feature'")
    return f"{m[1]} :: {m[2]}"
