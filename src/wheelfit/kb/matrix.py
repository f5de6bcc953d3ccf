"""The PyTorch build matrix (``data/pytorch.json``): which wheels exist, and what each one has kernels for.

The data file is the single source of truth and is versioned, so adding a PyTorch release is a data-only change.
Its shape is ``data/pytorch.schema.json``: a user's ``--kb FILE`` is held to it at run time (``jsonschema``, loaded
only then), the packaged file by the tests; this module then checks the rules a schema cannot state and builds the
model. A broken file fails with one line naming the file and the entry, never with a stray ``KeyError``.
Pure and fast (json + packaging only for the packaged file): no network, no heavy imports.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from functools import cache
from importlib.resources import files
from pathlib import Path
from types import MappingProxyType
from typing import Any, cast

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import Version

from ..builds import Build, BuildT, CpuBuild, CudaBuild, MpsBuild, RocmBuild, XpuBuild
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
_PACKAGED = "wheelfit/kb/data/pytorch.json"


class KnowledgeError(WheelfitError, ValueError):
    """The knowledge file cannot be read, does not follow its schema or breaks a rule the schema cannot state; the
    message names file and entry."""


@dataclass(frozen=True)
class Variant:
    """One build of a release for one platform: a ``download.pytorch.org/whl/<label>`` directory, and what its
    kernels are for (:mod:`wheelfit.builds`)."""

    label: str
    build: Build
    confidence: Confidence
    source: str
    advertised: bool = True
    note: str | None = None
    #: The patch releases that publish this build; ``None``: every version of the release (2.9.0 had a Windows
    #: cu129 build, 2.9.1 had not).
    versions: tuple[Version, ...] | None = None
    #: A patch release whose build differs (its arch lists, confidence, source): the variant as it is there.
    by_version: Mapping[Version, Variant] = field(default_factory=dict)

    def __str__(self) -> str:
        return self.label

    @property
    def kind(self) -> BuildKind:
        return self.build.kind

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

    def builds_of(self, kind: type[BuildT]) -> tuple[tuple[Variant, BuildT], ...]:
        """The variants whose build is a ``kind`` (:class:`~wheelfit.builds.CudaBuild` ...), each with its build."""
        return tuple((v, v.build) for v in self.variants.values() if isinstance(v.build, kind))

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
    """The matrix: the packaged file (parsed only; the tests hold it to its schema), or ``path``, the user's
    ``--kb FILE``, held to ``pytorch.schema.json`` first."""
    if path is None:
        return _packaged()
    from .jsonfile import conform, read_json_file

    name = str(path)
    doc = read_json_file(path, name, error=KnowledgeError)
    return _Builder(name).knowledge(conform(doc, _SCHEMA, name, error=KnowledgeError, reads=SCHEMA_VERSION))


@cache
def _packaged() -> Knowledge:
    from .jsonfile import load_json  # the one reader of hostile JSON: huge numbers, NaN, deep nesting, duplicates

    try:
        text = files(__package__).joinpath("data/pytorch.json").read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:  # a broken installation, not a user error
        raise KnowledgeError(f"{_PACKAGED}: cannot read the packaged knowledge file: {exc}") from exc
    doc = cast("dict[str, Any]", load_json(text, _PACKAGED, error=KnowledgeError))  # the tests hold it to the schema
    return _Builder(_PACKAGED).knowledge(doc)


class _Builder:
    """The model from a document that follows the schema, checking what a JSON Schema cannot say: cross-references
    (sources, versions, variants named elsewhere), labels against their kind and version, CUDA versions against
    the NVIDIA driver table. Every error is ``<file>: <JSON path>: <what>``."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.sources: Mapping[str, str] = {}
        self.seen: dict[tuple[Any, ...], Variant] = {}

    def fail(self, where: str, what: str) -> KnowledgeError:
        return KnowledgeError(f"{self.name}: {where}: {what}")

    def source(self, d: dict[str, Any], where: str) -> str:
        key: str = d["source"]
        if key not in self.sources:
            raise self.fail(f"{where}.source", f"source {key!r} is not a key of 'sources'")
        return key

    def specifier(self, text: str, where: str) -> SpecifierSet:
        try:
            return SpecifierSet(text)
        except (InvalidSpecifier, ValueError):  # ValueError: a number past int()'s 4300-digit limit
            raise self.fail(where, f"not a version specifier such as '==0.29.0': {text[:60]!r}") from None

    def version(self, text: str, where: str) -> Version:
        """The schema's pattern makes ``text`` a version, but int() refuses a number of over 4300 digits."""
        try:
            return Version(text)
        except ValueError:
            raise self.fail(where, f"not a version: {text[:60]!r}") from None

    def opt_version(self, d: dict[str, Any], key: str, where: str) -> Version | None:
        return None if d.get(key) is None else self.version(d[key], f"{where}.{key}")

    def knowledge(self, top: dict[str, Any]) -> Knowledge:
        self.sources = top["sources"]
        field_sources = top.get("field_sources", {})
        for field_name, key in field_sources.items():
            if key not in self.sources:
                raise self.fail(f"field_sources.{field_name}", f"source {key!r} is not a key of 'sources'")
        ips: dict[str, tuple[str, ...]] = {}
        if "xpu_device_ips" in top:
            self.source(top["xpu_device_ips"], "xpu_device_ips")
            ips = {ip: tuple(targets) for ip, targets in top["xpu_device_ips"]["map"].items()}
        releases = {series: self.release(series, d, f"releases.{series}") for series, d in top["releases"].items()}
        return Knowledge(
            path=self.name,
            schema_version=top["schema_version"],
            updated=top["updated"],
            sources=MappingProxyType(dict(self.sources)),
            field_sources=MappingProxyType(dict(field_sources)),
            xpu_device_ips=MappingProxyType(ips),
            releases=MappingProxyType(releases),
            platform_ends=MappingProxyType(self.platform_ends(top.get("platform_ends", {}), releases)),
            elsewhere=MappingProxyType(self.elsewhere(top.get("elsewhere", {}))),
        )

    def platform_ends(self, raw: dict[str, Any], releases: Mapping[str, Release]) -> dict[str, PlatformEnd]:
        """A platform no release of the matrix publishes; ``release``, its last series' entry, lists that platform
        alone and ``last_version`` among its versions."""
        out: dict[str, PlatformEnd] = {}
        for name, d in raw.items():
            where = f"platform_ends.{name}"
            last = self.version(d["last_version"], f"{where}.last_version")
            later = [r.name for r in releases.values() if name in r.platforms]
            if later:
                raise self.fail(where, f"releases {', '.join(later)} publish {name}: it has not ended")
            release: Release | None = None
            if d.get("release") is not None:
                release = self.release(d["series"], d["release"], f"{where}.release")
                if set(release.platforms) != {name}:
                    raise self.fail(f"{where}.release", f"must list the platform {name} alone")
                if last not in release.versions:
                    raise self.fail(f"{where}.release", f"'last_version' {last} is not one of its versions")
            out[name] = PlatformEnd(name, last, d["what"], d["note"], Confidence(d["confidence"]),
                                    self.source(d, where), release)  # fmt: skip
        return out

    def elsewhere(self, raw: dict[str, Any]) -> dict[str, Elsewhere]:
        out: dict[str, Elsewhere] = {}
        for key, d in raw.items():
            where = f"elsewhere.{key}"
            indexes = {
                release: ElsewhereIndex(
                    i["what"], i["url"], i["label"], Confidence(i["confidence"]),
                    self.source(i, f"{where}.indexes.{release}"),
                )
                for release, i in d.get("indexes", {}).items()
            }
            out[key] = Elsewhere(key, d["what"], d["note"], d["url"], Confidence(d["confidence"]),
                                 self.source(d, where), indexes)  # fmt: skip
        return out

    def release(self, series: str, d: dict[str, Any], where: str) -> Release:
        versions = sorted(self.version(v, f"{where}.versions") for v in d["versions"])
        for v in versions:
            if f"{v.major}.{v.minor}" != series:
                raise self.fail(f"{where}.versions", f"version {v} does not belong to release {series}")
        if len(set(versions)) != len(versions):
            raise self.fail(f"{where}.versions", "duplicate versions")
        by_text = {str(v): v for v in versions}
        tags_by_version: dict[Version, tuple[str, ...]] = {}
        for text, tags in d.get("python_tags_by_version", {}).items():
            if text not in by_text:
                raise self.fail(f"{where}.python_tags_by_version.{text}", "not one of the release's versions")
            tags_by_version[by_text[text]] = tuple(tags)
        missing = sorted(set(by_text) - set(d["companions"]))
        extra = sorted(set(d["companions"]) - set(by_text))
        if missing or extra:
            raise self.fail(
                f"{where}.companions", f"must have exactly one entry per version (missing {missing}, extra {extra})"
            )
        companions = {by_text[t]: self.companions(c, f"{where}.companions.{t}") for t, c in d["companions"].items()}
        platforms = {
            name: self.platform(entry, f"{where}.platforms.{name}", name, by_text)
            for name, entry in d["platforms"].items()
        }
        return Release(
            name=series,
            versions=tuple(versions),
            requires_python=self.specifier(d["requires_python"], f"{where}.requires_python"),
            python_tags=tuple(d["python_tags"]),
            python_tags_by_version=MappingProxyType(tags_by_version),
            companions=MappingProxyType(companions),
            platforms=MappingProxyType(platforms),
            note=d.get("note"),
            channel=d.get("channel", "release"),
        )

    def companions(self, d: dict[str, Any], where: str) -> Companions:
        pins = {pkg: self.specifier(spec, f"{where}.packages.{pkg}") for pkg, spec in d["packages"].items()}
        return Companions(MappingProxyType(pins), Confidence(d["confidence"]), self.source(d, where), d.get("note"))

    def platform(self, d: dict[str, Any], where: str, name: str, versions: Mapping[str, Version]) -> PlatformBuilds:
        variants = {
            label: self.patched(self.variant(label, entry, f"{where}.variants.{label}"), entry, versions, where)
            for label, entry in d["variants"].items()
        }
        default = d["pypi_default"]
        if default["variant"] not in variants:
            raise self.fail(
                f"{where}.pypi_default", f"variant {default['variant']!r} is not among the platform's variants"
            )
        self.source(default, f"{where}.pypi_default")
        return PlatformBuilds(
            name=name,
            platform_tag=d.get("platform_tag"),
            min_glibc=self.opt_version(d, "min_glibc", where),
            min_macos=self.opt_version(d, "min_macos", where),
            mps_min_macos=self.opt_version(d, "mps_min_macos", where),
            python_tags=tuple(d["python_tags"]) if d.get("python_tags") is not None else None,
            pypi_default=default["variant"],
            pypi_default_confidence=Confidence(default["confidence"]),
            pypi_default_note=default.get("note"),
            confidence=Confidence(d["confidence"]),
            source=self.source(d, where),
            note=d.get("note"),
            variants=MappingProxyType(variants),
        )

    def patched(self, base: Variant, raw: dict[str, Any], versions: Mapping[str, Version], where: str) -> Variant:
        """``versions`` (the patch releases that publish the build) and ``by_version`` (a patch release's own arch
        lists, confidence, source) of a variant entry."""
        where = f"{where}.variants.{base.label}"
        listed: tuple[Version, ...] | None = None
        if raw.get("versions") is not None:
            unknown = [v for v in raw["versions"] if v not in versions]
            if unknown:
                raise self.fail(f"{where}.versions", f"{unknown} are not versions of the release")
            listed = tuple(sorted(versions[v] for v in raw["versions"]))
        overrides: dict[Version, Variant] = {}
        for text, change in raw.get("by_version", {}).items():
            at = f"{where}.by_version.{text}"
            if text not in versions or (listed is not None and versions[text] not in listed):
                raise self.fail(at, "not a version that publishes this build")
            merged = {k: v for k, v in _variant_fields(base).items() if k not in ("versions", "by_version")} | change
            if base.kind is BuildKind.CUDA and not (merged.get("sass") or merged.get("ptx")):
                raise self.fail(at, "a CUDA variant needs 'sass' or 'ptx' architectures")
            overrides[versions[text]] = self.build_variant(base.label, merged, at)
        if listed is None and not overrides:
            return base
        return replace(base, versions=listed, by_version=MappingProxyType(overrides))

    def variant(self, label: str, raw: dict[str, Any], where: str) -> Variant:
        # Half the entries repeat verbatim across releases and platforms (cpu, xpu, cu126 ...): each distinct one
        # is built once.
        key = (label, *((k, tuple(v) if isinstance(v, list) else v) for k, v in raw.items() if k != "by_version"))
        hit = self.seen.get(key)
        if hit is None:
            hit = self.seen[key] = self.build_variant(label, raw, where)
        return hit

    def build_variant(self, label: str, d: dict[str, Any], where: str) -> Variant:
        build = _build(d)
        if isinstance(build, CudaBuild) and not _known_toolkit(build.cuda):
            what = f"CUDA {build.cuda} is not in the NVIDIA driver table (wheelfit_probekit cuda_drivers)"
            raise self.fail(f"{where}.cuda", what)
        if label != build.label:
            raise self.fail(where, f"the label of this {build.kind} variant must be {build.label!r}")
        return Variant(
            label=label,
            build=build,
            confidence=Confidence(d["confidence"]),
            source=self.source(d, where),
            advertised=d.get("advertised", True),
            note=d.get("note"),
        )


_SCHEMA = "kb/data/pytorch.schema.json"
def _known_toolkit(cuda: str) -> bool:
    from .drivers import toolkit_floor

    return toolkit_floor(cuda) is not None


def _build(d: Mapping[str, Any]) -> Build:
    """A variant entry's build, from the keys its kind carries (the schema refuses the others)."""
    kind = BuildKind(d["kind"])
    if kind is BuildKind.CUDA:
        return CudaBuild(d["cuda"], tuple(d.get("sass", ())), tuple(d.get("ptx", ())))
    if kind is BuildKind.ROCM:
        return RocmBuild(d["rocm"], tuple(d.get("gfx", ())))
    if kind is BuildKind.XPU:
        return XpuBuild(tuple(d.get("aot", ())))
    return MpsBuild() if d.get("mps", False) else CpuBuild()


def _build_fields(build: Build) -> dict[str, Any]:
    """A build back as the keys of the entry it was read from."""
    if isinstance(build, CudaBuild):
        return {"cuda": build.cuda, "sass": list(build.sass), "ptx": list(build.ptx)}
    if isinstance(build, RocmBuild):
        return {"rocm": build.rocm, "gfx": list(build.gfx)}
    if isinstance(build, XpuBuild):
        return {"aot": list(build.aot)}
    return {"mps": isinstance(build, MpsBuild)}


def _variant_fields(v: Variant) -> dict[str, Any]:
    """A variant back as the raw entry it was read from (for a patch release's partial override)."""
    raw: dict[str, Any] = {
        "kind": v.kind.value, "confidence": v.confidence.value, "source": v.source, "advertised": v.advertised,
    }  # fmt: skip
    raw |= _build_fields(v.build)
    if v.note is not None:
        raw["note"] = v.note
    return raw
