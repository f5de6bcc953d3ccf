"""Comparing a PEP 658 metadata file with the METADATA inside the wheel it describes.

The resolver trusts the ``.metadata`` file to avoid downloading multi-GB
wheels; if the wheel then says something else, the plan was made on false
data. pip 26.2 (#13983) fails on differences in these fields; so do we. Pure.
"""

from __future__ import annotations

from email.message import Message
from email.parser import BytesParser

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

__all__ = ["COMPARED_FIELDS", "metadata_differences"]

COMPARED_FIELDS = ("Name", "Version", "Requires-Dist", "Requires-Python", "Provides-Extra")


def metadata_differences(advertised: bytes, in_wheel: bytes) -> list[str]:
    """Fields that differ, as ``"Version: '1.0' != '1.1'"``; empty when the two agree."""
    a, b = _fields(advertised), _fields(in_wheel)
    return [f"{name}: {a[name]!r} != {b[name]!r}" for name in COMPARED_FIELDS if a[name] != b[name]]


def _fields(raw: bytes) -> dict[str, object]:
    # str(): a header holding bytes that are not UTF-8 comes back as an email.header.Header, not a str.
    msg: Message = BytesParser().parsebytes(raw, headersonly=True)
    name = str(msg.get("Name", ""))
    version = str(msg.get("Version", ""))
    try:
        version_key: object = Version(version)
    except ValueError:  # InvalidVersion, or a release number past int()'s 4300-digit limit
        version_key = version
    return {
        "Name": canonicalize_name(name),
        "Version": version_key,
        "Requires-Dist": frozenset(_requirement(str(r)) for r in msg.get_all("Requires-Dist") or []),
        "Requires-Python": str(msg.get("Requires-Python") or "").replace(" ", ""),
        "Provides-Extra": frozenset(canonicalize_name(str(e)) for e in msg.get_all("Provides-Extra") or []),
    }


def _requirement(text: str) -> str:
    try:
        return str(Requirement(text))
    except InvalidRequirement:
        return text.strip()
