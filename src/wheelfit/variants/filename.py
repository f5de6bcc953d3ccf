"""Variant wheel filenames: ``{name}-{version}(-{build})?-{py}-{abi}-{platform}(-{label})?.whl`` (PEP 825).

``packaging.utils.parse_wheel_filename`` rejects the label (pypa/packaging#1148), by design:
old installers must not pick variant wheels up. This parser reads both kinds.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from packaging.tags import Tag, parse_tag
from packaging.utils import NormalizedName, canonicalize_name
from packaging.version import Version

from .errors import VariantError
from .properties import LABEL_RE, is_null_label

__all__ = ["VariantWheelName", "parse_wheel_name"]

_NAME_RE = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9._]*[A-Za-z0-9])?")
#: PEP 427: the build tag starts with (ASCII) digits.
_BUILD_RE = re.compile(r"([0-9]+)(.*)")
#: int() refuses longer digit runs with a bare ValueError (CPython's 4300-digit limit); packaging too, so the
#: index's parser refuses such a name.
_MAX_DIGITS = 4300
_HASH_LABEL_RE = re.compile(r"[0-9a-f]{8}")


@dataclass(frozen=True)
class VariantWheelName:
    filename: str
    name: NormalizedName
    version: Version
    #: PyPI-style build tag: its leading number and the rest (``1abc`` -> ``(1, "abc")``).
    build: tuple[int, str] | None
    python_tag: str
    abi_tag: str
    platform_tag: str
    #: ``None`` for a non-variant wheel.
    label: str | None

    @property
    def is_variant(self) -> bool:
        return self.label is not None

    @property
    def is_null(self) -> bool:
        """The null variant: ``null``, or ``00000000`` from the hash-label era."""
        return self.label is not None and is_null_label(self.label)

    @property
    def is_hash_label(self) -> bool:
        """An 8-hex label as variantlib derives it from the properties when none is chosen."""
        return self.label is not None and _HASH_LABEL_RE.fullmatch(self.label) is not None

    @property
    def tags(self) -> frozenset[Tag]:
        return parse_tag(f"{self.python_tag}-{self.abi_tag}-{self.platform_tag}")


def parse_wheel_name(filename: str) -> VariantWheelName:
    """Split a wheel filename into its parts; raises :class:`VariantError` naming the bad part."""
    if not filename.endswith(".whl"):
        raise VariantError(f"{filename!r} is not a wheel filename (it must end in .whl)")
    parts = filename[: -len(".whl")].split("-")
    build: str | None = None
    label: str | None = None
    if len(parts) == 5:
        name, version, py, abi, plat = parts
    elif len(parts) == 6 and parts[2][:1].isdigit():
        name, version, build, py, abi, plat = parts
    elif len(parts) == 6:
        name, version, py, abi, plat, label = parts
    elif len(parts) == 7:
        name, version, build, py, abi, plat, label = parts
    else:
        raise VariantError(
            f"{filename!r} is not a wheel filename: expected name-version(-build)-python-abi-platform(-label).whl"
        )
    if not _NAME_RE.fullmatch(name):
        raise VariantError(f"{filename!r}: {name!r} is not a valid distribution name")
    try:
        parsed_version = Version(version)
    except ValueError:  # InvalidVersion, or a release number past int()'s 4300-digit limit
        raise VariantError(f"{filename!r}: {version!r} is not a valid version") from None
    parsed_build: tuple[int, str] | None = None
    if build is not None:
        m = _BUILD_RE.fullmatch(build)
        if m is None:
            raise VariantError(f"{filename!r}: build tag {build!r} must start with a digit")
        if len(m[1]) > _MAX_DIGITS:
            raise VariantError(f"{filename[:80]!r}...: build number has more than {_MAX_DIGITS} digits")
        parsed_build = (int(m[1]), m[2])
    if not all((py, abi, plat)):
        raise VariantError(f"{filename!r}: a compatibility tag is empty")
    if py[:1].isdigit():
        raise VariantError(f"{filename!r}: python tag {py!r} must not start with a digit")
    try:
        parse_tag(f"{py}-{abi}-{plat}")  # what .tags gives; packaging checks each tag's characters
    except ValueError as exc:  # InvalidTag
        raise VariantError(f"{filename!r}: {exc}") from None
    if label is not None and not LABEL_RE.fullmatch(label):
        raise VariantError(
            f"{filename!r}: variant label {label!r} may hold only lowercase letters, digits, '_' and '.'"
        )
    return VariantWheelName(
        filename=filename,
        name=canonicalize_name(name),
        version=parsed_version,
        build=parsed_build,
        python_tag=py,
        abi_tag=abi,
        platform_tag=plat,
        label=label,
    )
