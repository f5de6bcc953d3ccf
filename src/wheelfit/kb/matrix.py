"""The PyTorch build matrix (``data/pytorch.json``): which wheels exist, and what each one has kernels for.

The data file is the single source of truth and is versioned, so adding a
PyTorch release is a data-only change. This module only reads and validates
it: a user may point ``--kb FILE`` at a newer file, and a broken file must fail
with one line naming the file and the entry, never with a stray ``KeyError``.
Pure and fast (json + packaging only): no network, no heavy imports.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from functools import cache
from importlib.resources import files
from pathlib import Path
from types import MappingProxyType
from typing import Any

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import Version

from ..errors import WheelfitError
from ..kinds import BuildKind, Confidence
from .overlay import EMPTY, Overlay

__all__ = [
    "CONFIDENCE",
    "KINDS",
    "SCHEMA_VERSION",
    "Companions",
    "DriverFloor",
    "DriverVersion",
    "Elsewhere",
    "Knowledge",
    "KnowledgeError",
    "PlatformBuilds",
    "PlatformEnd",
    "Release",
    "Variant",
    "load_knowledge",
]

#: The schema this loader understands. Another major is refused; a newer minor is read,
#: ignoring keys this version does not know (an older or equal minor must not have any).
#: 1.2 adds ``platform_ends`` (the last release of a platform PyTorch stopped building for) and ``elsewhere``
#: (hardware whose PyTorch builds another party publishes). 1.3 adds the ``test`` channel (release candidates).
#: 1.4 adds ``elsewhere.<key>.indexes`` (the indexes that party serves, by platform release: Jetson's per L4T).
SCHEMA_VERSION = "1.4"
#: The confidences a knowledge file may state (data/pytorch.json "about"): all but wheelfit's own ``inferred``.
CONFIDENCE = frozenset(c for c in Confidence if c is not Confidence.INFERRED)
#: The kinds of build a knowledge file lists (MPS is a kind of GPU, which the macOS CPU builds serve).
KINDS = frozenset(k for k in BuildKind if k is not BuildKind.MPS)
_DRIVER_OSES = ("linux", "windows")
_PACKAGED = "wheelfit/kb/data/pytorch.json"

_SERIES = re.compile(r"^\d+\.\d+$")
_PLATFORM = re.compile(r"^(linux|windows|macos)_[a-z0-9_]+$")
_CUDA = re.compile(r"^\d+\.\d+$")
_ROCM = re.compile(r"^\d+\.\d+(\.\d+)?$")
_SM = re.compile(r"^\d{2,3}$")
_GFX = re.compile(r"^gfx[0-9a-f]{3,4}$")
_TOKEN = re.compile(r"^[a-z0-9][a-z0-9.-]*$")
_PYTAG = re.compile(r"^cp3\d{1,2}t?$")
_WHEEL_PLATFORM = re.compile(r"^[a-z0-9_]+$")


class KnowledgeError(WheelfitError, ValueError):
    """The knowledge file cannot be read or does not follow the schema; the message names file and entry."""


@dataclass(frozen=True)
class Variant:
    """One build of a release for one platform: a ``download.pytorch.org/whl/<label>`` directory."""

    label: str
    kind: BuildKind
    confidence: Confidence
    source: str
    advertised: bool = True
    cuda: str | None = None
    sass: tuple[str, ...] = ()
    ptx: tuple[str, ...] = ()
    rocm: str | None = None
    gfx: tuple[str, ...] = ()
    aot: tuple[str, ...] = ()
    mps: bool = False
    note: str | None = None
    #: The patch releases that publish this build; ``None``: every version of the release (2.9.0 had a Windows
    #: cu129 build, 2.9.1 had not).
    versions: tuple[Version, ...] | None = None
    #: A patch release whose build differs (its arch lists, confidence, source): the variant as it is there.
    by_version: Mapping[Version, Variant] = field(default_factory=dict)

    def __str__(self) -> str:
        return self.label

    def in_version(self, version: Version) -> Variant | None:
        """The build as ``version`` publishes it, or ``None`` when that patch release does not publish it."""
        if self.versions is not None and version not in self.versions:
            return None
        return self.by_version.get(version, self)


@dataclass(frozen=True)
class PlatformBuilds:
    """What one release publishes for one platform (e.g. ``linux_x86_64``)."""

    name: str
    platform_tag: str | None
    min_glibc: Version | None
    min_macos: Version | None
    mps_min_macos: Version | None
    python_tags: tuple[str, ...] | None  # only when this platform differs from the release
    pypi_default: str
    pypi_default_confidence: Confidence
    pypi_default_note: str | None
    confidence: Confidence
    source: str
    note: str | None
    variants: Mapping[str, Variant]

    @property
    def os(self) -> str:
        """``linux``, ``windows`` or ``macos``: the key for driver tables."""
        return self.name.split("_", 1)[0]

    @property
    def default_variant(self) -> Variant:
        """The build ``pip install torch`` from PyPI gives on this platform."""
        return self.variants[self.pypi_default]

    def variant(self, label: str) -> Variant | None:
        return self.variants.get(label)

    def of_kind(self, kind: BuildKind | str) -> tuple[Variant, ...]:
        """The builds of ``kind`` (a member, or its word: the docs generator and tests name kinds so)."""
        want = BuildKind(kind)
        return tuple(v for v in self.variants.values() if v.kind is want)

    def variants_for(self, version: Version) -> tuple[Variant, ...]:
        """The builds one patch release publishes, as it publishes them (2.x.0's set is the default)."""
        found = (v.in_version(version) for v in self.variants.values())
        return tuple(v for v in found if v is not None)


@dataclass(frozen=True)
class Companions:
    """Pins for the packages that must match one torch version (install them from the same index)."""

    pins: Mapping[str, SpecifierSet]
    confidence: Confidence
    source: str
    note: str | None = None

    def requirement(self, package: str) -> str | None:
        """A pip requirement such as ``torchvision==0.29.0``, or None if the package has no pin."""
        spec = self.pins.get(package)
        return None if spec is None else f"{package}{spec}"


@dataclass(frozen=True)
class Release:
    """A PyTorch release series with its patch versions and per-platform builds."""

    name: str  # the series, "2.14"
    versions: tuple[Version, ...]  # ascending
    requires_python: SpecifierSet
    python_tags: tuple[str, ...]
    python_tags_by_version: Mapping[Version, tuple[str, ...]]
    companions: Mapping[Version, Companions]
    platforms: Mapping[str, PlatformBuilds]
    note: str | None = None
    #: Where its builds are: ``release`` (download.pytorch.org/whl/<variant>), ``test`` (whl/test/<variant>: the
    #: release candidates, versioned as the release will be) or ``nightly`` (whl/nightly/<variant>: X.Y.0.devDATE).
    #: Only ``release`` builds are planned from the knowledge base alone; the others only with --pre, from the index.
    channel: str = "release"

    @property
    def nightly(self) -> bool:
        return self.channel == "nightly"

    @property
    def prerelease(self) -> bool:
        """Not released yet: a test-channel (release candidates) or nightly line, planned only with --pre."""
        return self.channel != "release"

    def builds_version(self, version: Version) -> bool:
        """Whether a build versioned ``version`` belongs to this line: a nightly line's are dev releases of its
        versions (2.17.0.dev20261201), a release's or a test channel's are its versions themselves (2.16.0)."""
        if Version(version.base_version) not in self.versions:
            return False
        return version.is_devrelease == self.nightly

    @property
    def series_version(self) -> Version:
        return Version(self.name)

    @property
    def latest(self) -> Version:
        return self.versions[-1]

    def platform(self, name: str) -> PlatformBuilds | None:
        return self.platforms.get(name)

    def python_tags_for(self, version: Version | str | None = None, platform: str | None = None) -> tuple[str, ...]:
        """CPython tags with wheels: a version-specific list wins, then a platform-specific one."""
        v = self.latest if version is None else Version(str(version))
        if v in self.python_tags_by_version:
            return self.python_tags_by_version[v]
        builds = self.platforms.get(platform) if platform else None
        if builds is not None and builds.python_tags is not None:
            return builds.python_tags
        return self.python_tags


@dataclass(frozen=True, order=True)
class DriverVersion:
    """An NVIDIA driver version: compared by its numbers, printed as written (``560.35.05``, not ``560.35.5``)."""

    parts: tuple[int, ...]
    text: str = field(compare=False)

    @classmethod
    def parse(cls, text: str) -> DriverVersion:
        """``"580.65.06"`` -> DriverVersion; ValueError for anything that is not dotted numbers."""
        t = text.strip()
        pieces = t.split(".")
        if not t or not all(p.isdigit() for p in pieces):
            raise ValueError(f"not a driver version: {text!r}")
        return cls(tuple(int(p) for p in pieces), t)

    def __str__(self) -> str:
        return self.text


@dataclass(frozen=True)
class DriverFloor:
    """Minimum NVIDIA driver per OS (None: NVIDIA publishes none), with the confidence of each."""

    linux: DriverVersion | None
    windows: DriverVersion | None
    confidence: Mapping[str, Confidence]
    source: str
    note: str | None = None
    #: The NVIDIA release each OS's floor belongs to (``12.6 GA``).
    releases: Mapping[str, str] = field(default_factory=dict)

    def for_os(self, os: str) -> DriverVersion | None:
        key = _driver_os(os)
        if key == "linux":
            return self.linux
        if key == "windows":
            return self.windows
        return None


@dataclass(frozen=True)
class PlatformEnd:
    """A platform PyTorch stopped publishing builds for (macOS x86_64 after 2.2.2): why newer releases have none."""

    platform: str
    last_version: Version
    what: str
    note: str
    confidence: Confidence
    source: str
    #: The builds of the platform's last release series, published for that platform alone.
    release: Release | None = None


@dataclass(frozen=True)
class Elsewhere:
    """Hardware PyTorch's index has no builds for and another party publishes them (Jetson: NVIDIA's wheels)."""

    key: str
    what: str
    note: str
    url: str
    confidence: Confidence
    source: str
    #: The indexes that party serves, by the platform release each is for (Jetson: the L4T major, ``36``).
    indexes: Mapping[str, ElsewhereIndex] = field(default_factory=dict)


@dataclass(frozen=True)
class ElsewhereIndex:
    """A PEP 503 index another party serves for one platform release (Jetson AI Lab's ``jp6/cu126``): its torch
    builds are read from it, never assumed (its wheels rotate)."""

    what: str
    url: str
    #: The PyTorch variant its builds are (``cu126``): what verify expects of ``torch.version.cuda``.
    label: str
    confidence: Confidence
    source: str


@dataclass(frozen=True)
class Knowledge:
    """The whole matrix, loaded from one file."""

    path: str
    schema_version: str
    updated: str
    sources: Mapping[str, str]
    field_sources: Mapping[str, str]
    xpu_device_ips: Mapping[str, tuple[str, ...]]
    releases: Mapping[str, Release]
    platform_ends: Mapping[str, PlatformEnd] = field(default_factory=dict)
    elsewhere: Mapping[str, Elsewhere] = field(default_factory=dict)
    #: Builds measured on this machine (``verify``, ``doctor``): their facts replace the file's.
    measured: Overlay = EMPTY

    def releases_newest_first(self, *, pre: bool = False, nightly: bool = False) -> tuple[Release, ...]:
        """The releases, newest first; the test-channel and nightly lines too only when asked (``pre``, or its older
        name ``nightly``): they are not released, so the knowledge base alone never pins them."""
        found = (r for r in self.releases.values() if pre or nightly or not r.prerelease)
        return tuple(sorted(found, key=lambda r: r.series_version, reverse=True))

    def release(self, series: str) -> Release | None:
        return self.releases.get(series)

    def releases_for(self, platform: str) -> tuple[Release, ...]:
        """The releases with builds for ``platform``, newest first: the matrix's, and for a platform PyTorch
        stopped building for (macOS x86_64) its last series, which the matrix's releases do not list."""
        found = [r for r in self.releases_newest_first() if platform in r.platforms]
        end = self.platform_ends.get(platform)
        if end is not None and end.release is not None:
            found.append(end.release)
        return tuple(sorted(found, key=lambda r: r.series_version, reverse=True))

    @staticmethod
    def cuda_toolkit_driver(cuda: str, os: str) -> DriverVersion | None:
        """The driver the CUDA toolkit itself asks for (NVIDIA Table 3, the minor's GA); None if unknown or N/A.
        From the one driver table (:mod:`wheelfit.kb.drivers`), not this file."""
        from .drivers import toolkit_floor

        floor = toolkit_floor(cuda)
        return None if floor is None else floor.for_os(os)

    @staticmethod
    def minor_compat_floor(cuda_major: int, os: str) -> DriverVersion | None:
        """The lowest driver that runs SASS-only wheels of this CUDA major (NVIDIA Table 2)."""
        from .drivers import compat_floor

        floor = compat_floor(cuda_major)
        return None if floor is None else floor.for_os(os)

    @staticmethod
    def index_url(base: str, variant: Variant | str) -> str:
        """``https://download.pytorch.org/whl`` + ``cu130`` -> ``https://download.pytorch.org/whl/cu130``."""
        label = variant.label if isinstance(variant, Variant) else variant
        return f"{base.rstrip('/')}/{label}"


def _driver_os(os: str) -> str | None:
    """linux/windows for the driver tables, None for macOS (no CUDA); a typo is a programming error."""
    key = os.lower()
    if key.startswith("linux"):
        return "linux"
    if key.startswith(("windows", "win32")):
        return "windows"
    if key.startswith(("macos", "darwin")):
        return None
    raise ValueError(f"unknown OS {os!r}: expected linux, windows or macos")


# --------------------------------------------------------------------------- loading


def load_knowledge(path: str | Path | None = None) -> Knowledge:
    """Load and validate the matrix: the packaged file, or ``path`` (the user's ``--kb FILE``)."""
    if path is None:
        return _packaged()
    from .jsonfile import read_json_file

    name = str(path)
    return _Reader(name).knowledge(read_json_file(path, name, error=KnowledgeError))


@cache
def _packaged() -> Knowledge:
    try:
        text = files(__package__).joinpath("data/pytorch.json").read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:  # a broken installation, not a user error
        raise KnowledgeError(f"{_PACKAGED}: cannot read the packaged knowledge file: {exc}") from exc
    return _parse(text, _PACKAGED)


def _parse(text: str, name: str) -> Knowledge:
    from .jsonfile import load_json  # the one reader of hostile JSON: huge numbers, NaN, deep nesting, duplicates

    return _Reader(name).knowledge(load_json(text, name, error=KnowledgeError))


class _Reader:
    """Validates the raw JSON; every error message is ``<file>: <where>: <what>``."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.strict_keys = True
        self.sources: Mapping[str, str] = {}
        self.seen: dict[tuple[Any, ...], Variant] = {}

    def fail(self, where: str, what: str) -> KnowledgeError:
        return KnowledgeError(f"{self.name}: {where}: {what}" if where else f"{self.name}: {what}")

    # ---- primitives

    def obj(self, value: Any, where: str, allowed: frozenset[str] | None = None) -> dict[str, Any]:
        if value is None:
            raise self.fail(where, "missing")
        if not isinstance(value, dict):
            raise self.fail(where, f"expected an object, got {type(value).__name__}")
        if allowed is not None and self.strict_keys:
            unknown = sorted(set(value) - allowed)
            if unknown:
                raise self.fail(where, f"unknown key(s) {', '.join(map(repr, unknown))}")
        return value

    def str_(self, d: dict[str, Any], key: str, where: str, pattern: re.Pattern[str] | None = None) -> str:
        if key not in d:
            raise self.fail(where, f"missing {key!r}")
        value = d[key]
        if not isinstance(value, str) or not value:
            raise self.fail(where, f"{key!r} must be a non-empty string, got {value!r}")
        if pattern is not None and not pattern.fullmatch(value):
            raise self.fail(where, f"{key!r} is malformed: {value!r}")
        return value

    def opt_str(self, d: dict[str, Any], key: str, where: str, pattern: re.Pattern[str] | None = None) -> str | None:
        if d.get(key) is None:
            return None
        return self.str_(d, key, where, pattern)

    def bool_(self, d: dict[str, Any], key: str, where: str, default: bool) -> bool:
        value = d.get(key, default)
        if not isinstance(value, bool):
            raise self.fail(where, f"{key!r} must be true or false, got {value!r}")
        return value

    def strs(self, d: dict[str, Any], key: str, where: str, pattern: re.Pattern[str]) -> tuple[str, ...]:
        value = d.get(key, [])
        if not isinstance(value, list):
            raise self.fail(where, f"{key!r} must be a list of strings")
        for item in value:
            if not isinstance(item, str) or not pattern.fullmatch(item):
                raise self.fail(where, f"{key!r} has a malformed entry {item!r}")
        out = tuple(value)
        if len(set(out)) != len(out):
            raise self.fail(where, f"{key!r} has duplicate entries")
        return out

    def version(self, value: Any, where: str, what: str) -> Version:
        if not isinstance(value, str):
            raise self.fail(where, f"{what} must be a version string, got {value!r}")
        try:
            return Version(value)
        except ValueError:  # InvalidVersion, or a release number past int()'s 4300-digit limit
            raise self.fail(where, f"{what} is not a valid version: {value!r}") from None

    def opt_driver(self, d: dict[str, Any], key: str, where: str) -> DriverVersion | None:
        value = d.get(key)
        if value is None:
            return None
        try:
            return DriverVersion.parse(value if isinstance(value, str) else "")
        except ValueError:
            raise self.fail(f"{where}.{key}", f"{value!r} is not a driver version such as 580.65.06") from None

    def opt_version(self, d: dict[str, Any], key: str, where: str) -> Version | None:
        return None if d.get(key) is None else self.version(d[key], where, repr(key))

    def specifier(self, value: Any, where: str, what: str) -> SpecifierSet:
        if not isinstance(value, str) or not value:
            raise self.fail(where, f"{what} must be a version specifier such as '==0.29.0', got {value!r}")
        try:
            return SpecifierSet(value)
        except InvalidSpecifier:
            raise self.fail(where, f"{what} is not a valid version specifier: {value!r}") from None

    def confidence(self, value: Any, where: str) -> Confidence:
        if not isinstance(value, str) or value not in CONFIDENCE:
            raise self.fail(where, f"confidence must be one of P, M, S, U, got {value!r}")
        return Confidence(value)

    def source(self, d: dict[str, Any], where: str) -> str:
        key = self.str_(d, "source", where)
        if key not in self.sources:
            raise self.fail(where, f"source {key!r} is not a key of 'sources'")
        return key

    # ---- document

    def knowledge(self, raw: Any) -> Knowledge:
        top = self.obj(raw, "")
        schema = self.schema(top)
        top = self.obj(top, "", _TOP_KEYS)
        updated = self.str_(top, "updated", "")
        self.opt_str(top, "about", "")
        sources = self.obj(top.get("sources"), "sources")
        if not sources:
            raise self.fail("sources", "must name at least one source")
        for key, text in sources.items():
            if not isinstance(text, str) or not text:
                raise self.fail(f"sources.{key}", "must be a non-empty string")
        self.sources = sources
        field_sources = self.obj(top.get("field_sources", {}), "field_sources")
        for field_name, key in field_sources.items():
            if not isinstance(key, str) or key not in sources:
                raise self.fail(f"field_sources.{field_name}", f"source {key!r} is not a key of 'sources'")

        # Schema 1.0 files carried their own driver tables ('cuda_toolkits', 'minor_version_compat'): they are no
        # longer read; the one table is wheelfit_nvidia's (wheelfit.kb.drivers).
        toolkits: set[str] = set()  # not None: a CUDA variant's toolkit must be in that table

        ips = self.xpu_ips(top["xpu_device_ips"]) if "xpu_device_ips" in top else {}

        releases_raw = self.obj(top.get("releases"), "releases")
        if not releases_raw:
            raise self.fail("releases", "no releases")
        releases = {series: self.release(series, entry, toolkits) for series, entry in releases_raw.items()}
        return Knowledge(
            path=self.name,
            schema_version=schema,
            updated=updated,
            sources=MappingProxyType(dict(sources)),
            field_sources=MappingProxyType(dict(field_sources)),
            xpu_device_ips=MappingProxyType(ips),
            releases=MappingProxyType(releases),
            platform_ends=MappingProxyType(self.platform_ends(top.get("platform_ends", {}), toolkits, releases)),
            elsewhere=MappingProxyType(self.elsewhere(top.get("elsewhere", {}))),
        )

    def platform_ends(self, raw: Any, toolkits: set[str], releases: Mapping[str, Release]) -> dict[str, PlatformEnd]:
        """``{platform: {last_version, what, note, confidence, source, series?, release?}}``: ``release`` is the
        last series' entry (as under ``releases``), with that platform alone and ``last_version`` among its
        versions; no release of the matrix may publish the platform."""
        out: dict[str, PlatformEnd] = {}
        keys = frozenset({"last_version", "what", "note", "confidence", "source", "series", "release"})
        for name, entry in self.obj(raw, "platform_ends").items():
            where = f"platform_ends.{name}"
            if not _PLATFORM.fullmatch(name):
                raise self.fail(where, "platform names look like linux_x86_64, windows_amd64 or macos_x86_64")
            d = self.obj(entry, where, keys)
            last = self.version(d.get("last_version"), where, "'last_version'")
            later = [r.name for r in releases.values() if name in r.platforms]
            if later:
                raise self.fail(where, f"releases {', '.join(later)} publish {name}: it has not ended")
            release: Release | None = None
            if d.get("release") is not None:
                series = self.str_(d, "series", where, _SERIES)
                release = self.release(series, d["release"], toolkits)
                if set(release.platforms) != {name}:
                    raise self.fail(f"{where}.release", f"must list the platform {name} alone")
                if last not in release.versions:
                    raise self.fail(f"{where}.release", f"'last_version' {last} is not one of its versions")
            out[name] = PlatformEnd(
                platform=name,
                last_version=last,
                what=self.str_(d, "what", where),
                note=self.str_(d, "note", where),
                confidence=self.confidence(d.get("confidence"), where),
                source=self.source(d, where),
                release=release,
            )
        return out

    def elsewhere(self, raw: Any) -> dict[str, Elsewhere]:
        out: dict[str, Elsewhere] = {}
        for key, entry in self.obj(raw, "elsewhere").items():
            where = f"elsewhere.{key}"
            d = self.obj(entry, where, frozenset({"what", "note", "url", "confidence", "source", "indexes"}))
            out[key] = Elsewhere(
                key=key,
                what=self.str_(d, "what", where),
                note=self.str_(d, "note", where),
                url=self.https(d, where),
                confidence=self.confidence(d.get("confidence"), where),
                source=self.source(d, where),
                indexes={
                    release: self.elsewhere_index(raw_index, f"{where}.indexes.{release}")
                    for release, raw_index in self.obj(d.get("indexes", {}), f"{where}.indexes").items()
                },
            )
        return out

    def elsewhere_index(self, raw: Any, where: str) -> ElsewhereIndex:
        d = self.obj(raw, where, frozenset({"what", "url", "label", "confidence", "source"}))
        label = self.str_(d, "label", where)
        if not re.fullmatch(r"cu\d+", label):
            raise self.fail(where, f"'label' must be a CUDA variant such as cu126, got {label!r}")
        return ElsewhereIndex(self.str_(d, "what", where), self.https(d, where), label,
                              self.confidence(d.get("confidence"), where), self.source(d, where))  # fmt: skip

    def https(self, d: dict[str, Any], where: str) -> str:
        url = self.str_(d, "url", where)
        if not url.startswith("https://"):
            raise self.fail(where, f"'url' must be an https:// address, got {url!r}")
        return url

    def schema(self, top: dict[str, Any]) -> str:
        value = top.get("schema_version")
        if not isinstance(value, str) or not re.fullmatch(r"\d+\.\d+", value):
            raise self.fail("", f"schema_version must look like '1.0', got {value!r}")
        major, minor = (int(p) for p in value.split("."))
        ours_major, ours_minor = (int(p) for p in SCHEMA_VERSION.split("."))
        if major != ours_major:
            raise self.fail(
                "", f"schema_version {value} is not supported (this wheelfit reads {ours_major}.x): update wheelfit"
            )
        self.strict_keys = minor <= ours_minor
        return value

    def xpu_ips(self, raw: Any) -> dict[str, tuple[str, ...]]:
        where = "xpu_device_ips"
        d = self.obj(raw, where, frozenset({"map", "confidence", "source", "note"}))
        self.confidence(d.get("confidence"), where)
        self.source(d, where)
        self.opt_str(d, "note", where)
        out: dict[str, tuple[str, ...]] = {}
        for ip, targets in self.obj(d.get("map"), f"{where}.map").items():
            if not re.fullmatch(r"\d+\.\d+\.\d+", ip):
                raise self.fail(f"{where}.map", f"malformed device IP {ip!r}")
            out[ip] = self.strs({"targets": targets}, "targets", f"{where}.map.{ip}", _TOKEN)
            if not out[ip]:
                raise self.fail(f"{where}.map.{ip}", "no AOT target")
        return out

    def release(self, series: str, raw: Any, toolkits: set[str]) -> Release:
        where = f"release {series}"
        if not _SERIES.fullmatch(series):
            raise self.fail(where, "release keys must look like '2.14'")
        d = self.obj(raw, where, _RELEASE_KEYS)
        versions_raw = d.get("versions")
        if not isinstance(versions_raw, list) or not versions_raw:
            raise self.fail(where, "'versions' must be a non-empty list")
        versions = sorted(self.version(v, where, "version") for v in versions_raw)
        for v in versions:
            if f"{v.major}.{v.minor}" != series or v.local is not None or v.is_devrelease:
                raise self.fail(where, f"version {v} does not belong to release {series}")
        if len(set(versions)) != len(versions):
            raise self.fail(where, "duplicate versions")
        by_text = {str(v): v for v in versions}

        requires_python = self.specifier(d.get("requires_python"), where, "'requires_python'")
        python_tags = self.strs(d, "python_tags", where, _PYTAG)
        if not python_tags:
            raise self.fail(where, "'python_tags' is empty")
        tags_by_version: dict[Version, tuple[str, ...]] = {}
        for text, _ in self.obj(d.get("python_tags_by_version", {}), f"{where}.python_tags_by_version").items():
            if text not in by_text:
                raise self.fail(f"{where}.python_tags_by_version", f"{text!r} is not one of the release's versions")
            tags_by_version[by_text[text]] = self.strs(
                d["python_tags_by_version"], text, f"{where}.python_tags_by_version", _PYTAG
            )

        companions_raw = self.obj(d.get("companions"), f"{where}.companions")
        missing = sorted(set(by_text) - set(companions_raw))
        extra = sorted(set(companions_raw) - set(by_text))
        if missing or extra:
            raise self.fail(
                f"{where}.companions", f"must have exactly one entry per version (missing {missing}, extra {extra})"
            )
        companions = {by_text[t]: self.companions(c, f"{where}.companions.{t}") for t, c in companions_raw.items()}

        platforms_raw = self.obj(d.get("platforms"), f"{where}.platforms")
        if not platforms_raw:
            raise self.fail(where, "no platforms")
        platforms = {
            name: self.platform(name, entry, f"{where} / {name}", toolkits, by_text)
            for name, entry in platforms_raw.items()
        }
        channel = d.get("channel", "release")
        if channel not in CHANNELS:
            raise self.fail(where, f"'channel' must be one of {', '.join(sorted(CHANNELS))}, got {channel!r}")
        return Release(
            name=series,
            versions=tuple(versions),
            requires_python=requires_python,
            python_tags=python_tags,
            python_tags_by_version=MappingProxyType(tags_by_version),
            companions=MappingProxyType(companions),
            platforms=MappingProxyType(platforms),
            note=self.opt_str(d, "note", where),
            channel=channel,
        )

    def companions(self, raw: Any, where: str) -> Companions:
        d = self.obj(raw, where, frozenset({"packages", "confidence", "source", "note"}))
        packages = self.obj(d.get("packages"), f"{where}.packages")
        if not packages:
            raise self.fail(where, "'packages' is empty")
        pins = {pkg: self.specifier(spec, where, repr(pkg)) for pkg, spec in packages.items()}
        return Companions(
            pins=MappingProxyType(pins),
            confidence=self.confidence(d.get("confidence"), where),
            source=self.source(d, where),
            note=self.opt_str(d, "note", where),
        )

    def platform(
        self, name: str, raw: Any, where: str, toolkits: set[str], versions: Mapping[str, Version]
    ) -> PlatformBuilds:
        if not _PLATFORM.fullmatch(name):
            raise self.fail(where, "platform names look like linux_x86_64, windows_amd64 or macos_arm64")
        d = self.obj(raw, where, _PLATFORM_KEYS)
        variants_raw = self.obj(d.get("variants"), f"{where}.variants")
        if not variants_raw:
            raise self.fail(where, "no variants")
        variants = {
            label: self.patched(self.variant(label, entry, f"{where} / {label}", toolkits), entry, versions, where)
            for label, entry in variants_raw.items()
        }
        default = self.obj(
            d.get("pypi_default"), f"{where}.pypi_default", frozenset({"variant", "confidence", "source", "note"})
        )
        default_label = self.str_(default, "variant", f"{where}.pypi_default")
        if default_label not in variants:
            raise self.fail(f"{where}.pypi_default", f"variant {default_label!r} is not among the platform's variants")
        self.source(default, f"{where}.pypi_default")
        python_tags = self.strs(d, "python_tags", where, _PYTAG) if d.get("python_tags") is not None else None
        os = name.split("_", 1)[0]
        misplaced = [
            k for k in ("min_glibc", "min_macos", "mps_min_macos") if d.get(k) is not None and k not in _OS_KEYS[os]
        ]
        if misplaced:
            raise self.fail(where, f"{', '.join(map(repr, misplaced))} does not apply to {os}")
        if os != "macos" and any(v.mps for v in variants.values()):
            raise self.fail(where, "MPS exists only in macOS builds")
        return PlatformBuilds(
            name=name,
            platform_tag=self.opt_str(d, "platform_tag", where, _WHEEL_PLATFORM),
            min_glibc=self.opt_version(d, "min_glibc", where),
            min_macos=self.opt_version(d, "min_macos", where),
            mps_min_macos=self.opt_version(d, "mps_min_macos", where),
            python_tags=python_tags,
            pypi_default=default_label,
            pypi_default_confidence=self.confidence(default.get("confidence"), f"{where}.pypi_default"),
            pypi_default_note=self.opt_str(default, "note", f"{where}.pypi_default"),
            confidence=self.confidence(d.get("confidence"), where),
            source=self.source(d, where),
            note=self.opt_str(d, "note", where),
            variants=MappingProxyType(variants),
        )

    def patched(self, base: Variant, raw: Any, versions: Mapping[str, Version], where: str) -> Variant:
        """``versions`` (the patch releases that publish the build) and ``by_version`` (a patch release's own arch
        lists, confidence, source) of a variant entry."""
        where = f"{where} / {base.label}"
        listed: tuple[Version, ...] | None = None
        if raw.get("versions") is not None:
            names = self.strs(raw, "versions", where, _VERSION_TEXT)
            unknown = [v for v in names if v not in versions]
            if unknown or not names:
                raise self.fail(where, f"'versions' must name some of the release's versions, got {unknown or names}")
            listed = tuple(sorted(versions[v] for v in names))
        overrides: dict[Version, Variant] = {}
        for text, change in self.obj(raw.get("by_version", {}), f"{where}.by_version").items():
            if text not in versions or (listed is not None and versions[text] not in listed):
                raise self.fail(f"{where}.by_version", f"{text!r} is not a version that publishes this build")
            allowed = _KIND_KEYS[base.kind] - {"cuda", "rocm"} | {"confidence", "source", "note"}
            entry = self.obj(change, f"{where}.by_version.{text}", frozenset(allowed))
            merged = {k: v for k, v in _variant_fields(base).items() if k not in ("versions", "by_version")}
            merged.update(entry)
            overrides[versions[text]] = self.build_variant(base.label, merged, f"{where}.by_version.{text}", None)
        if listed is None and not overrides:
            return base
        return replace(base, versions=listed, by_version=MappingProxyType(overrides))

    def variant(self, label: str, raw: Any, where: str, toolkits: set[str]) -> Variant:
        # Half the entries repeat verbatim across releases and platforms (cpu, xpu, cu126 ...):
        # validating each distinct entry once keeps loading well under 10 ms.
        try:
            key = (label, *((k, tuple(v) if isinstance(v, list) else v) for k, v in raw.items()))
            hit = self.seen.get(key)
        except (AttributeError, TypeError):  # not an object, or a nested value: validation reports it
            return self.build_variant(label, raw, where, toolkits)
        if hit is None:
            hit = self.seen[key] = self.build_variant(label, raw, where, toolkits)
        return hit

    def build_variant(self, label: str, raw: Any, where: str, toolkits: set[str] | None) -> Variant:
        d = self.obj(raw, where, _VARIANT_KEYS)
        word = self.str_(d, "kind", where)
        if word not in KINDS:
            raise self.fail(where, f"unknown kind {word!r} (expected one of {', '.join(sorted(KINDS))})")
        kind = BuildKind(word)
        stray = sorted(k for k in _KIND_KEYS_ALL - _KIND_KEYS[kind] if k in d)
        if stray:
            raise self.fail(where, f"key(s) {', '.join(map(repr, stray))} do not apply to a {kind} variant")
        cuda: str | None = None
        rocm: str | None = None
        sass: tuple[str, ...] = ()
        ptx: tuple[str, ...] = ()
        gfx: tuple[str, ...] = ()
        aot: tuple[str, ...] = ()
        if kind is BuildKind.CUDA:
            cuda = self.str_(d, "cuda", where, _CUDA)
            if toolkits is not None and not _known_toolkit(cuda):
                raise self.fail(where, f"CUDA {cuda} is not in the NVIDIA driver table (wheelfit_nvidia cuda_drivers)")
            expected = "cu" + cuda.replace(".", "")
            sass = self.strs(d, "sass", where, _SM)
            ptx = self.strs(d, "ptx", where, _SM)
            if not sass and not ptx:
                raise self.fail(where, "a CUDA variant needs 'sass' or 'ptx' architectures")
        elif kind is BuildKind.ROCM:
            rocm = self.str_(d, "rocm", where, _ROCM)
            expected = "rocm" + rocm
            gfx = self.strs(d, "gfx", where, _GFX)
            if not gfx:
                raise self.fail(where, "a ROCm variant needs a 'gfx' list")
        elif kind is BuildKind.XPU:
            expected = "xpu"
            aot = self.strs(d, "aot", where, _TOKEN)
            if not aot:
                raise self.fail(where, "an XPU variant needs an 'aot' list")
        else:
            expected = "cpu"
        if label != expected:
            raise self.fail(where, f"the label of this {kind} variant must be {expected!r}")
        return Variant(
            label=label,
            kind=kind,
            confidence=self.confidence(d.get("confidence"), where),
            source=self.source(d, where),
            advertised=self.bool_(d, "advertised", where, True),
            cuda=cuda,
            sass=sass,
            ptx=ptx,
            rocm=rocm,
            gfx=gfx,
            aot=aot,
            mps=self.bool_(d, "mps", where, False),
            note=self.opt_str(d, "note", where),
        )


_TOP_KEYS = frozenset(
    {
        "schema_version",
        "updated",
        "about",
        "sources",
        "field_sources",
        "cuda_toolkits",
        "minor_version_compat",
        "xpu_device_ips",
        "platform_ends",
        "elsewhere",
        "releases",
    }
)
_RELEASE_KEYS = frozenset(
    {
        "versions",
        "requires_python",
        "python_tags",
        "python_tags_by_version",
        "companions",
        "platforms",
        "note",
        "channel",
    }
)
_PLATFORM_KEYS = frozenset(
    {
        "platform_tag",
        "min_glibc",
        "min_macos",
        "mps_min_macos",
        "python_tags",
        "confidence",
        "source",
        "note",
        "pypi_default",
        "variants",
    }
)
_OS_KEYS = {"linux": {"min_glibc"}, "windows": set(), "macos": {"min_macos", "mps_min_macos"}}
# The keys only a variant of that kind may carry (a ROCm entry with 'sass' is a mistake, not data).
_KIND_KEYS: dict[BuildKind, frozenset[str]] = {
    BuildKind.CUDA: frozenset({"cuda", "sass", "ptx"}),
    BuildKind.ROCM: frozenset({"rocm", "gfx"}),
    BuildKind.XPU: frozenset({"aot"}),
    BuildKind.CPU: frozenset({"mps"}),
}
_KIND_KEYS_ALL = frozenset(k for keys in _KIND_KEYS.values() for k in keys)
_VARIANT_KEYS = frozenset(
    {"kind", "advertised", "confidence", "source", "note", "versions", "by_version"} | _KIND_KEYS_ALL
)
CHANNELS = frozenset({"release", "test", "nightly"})
_VERSION_TEXT = re.compile(r"^\d+\.\d+\.\d+$")


def _known_toolkit(cuda: str) -> bool:
    from .drivers import toolkit_floor

    return toolkit_floor(cuda) is not None


def _variant_fields(v: Variant) -> dict[str, Any]:
    """A variant back as the raw entry it was read from (for a patch release's partial override)."""
    raw: dict[str, Any] = {
        "kind": v.kind.value, "confidence": v.confidence.value, "source": v.source, "advertised": v.advertised,
    }  # fmt: skip
    for key in _KIND_KEYS[v.kind]:
        value = getattr(v, key)
        raw[key] = list(value) if isinstance(value, tuple) else value
    if v.note is not None:
        raw["note"] = v.note
    return raw
