#!/usr/bin/env python3
"""Produce or check a PyTorch release's knowledge-base entry from the upstream files (issue 14; docs/releases.md).

Commands (stdlib + ``packaging`` only; run with ``.venv/bin/python scripts/kb_release.py``)::

    extract build-env FILE... [--origin TEXT]   the CUDA arch tables of build_env_setup.py files, as a digest (JSON)
    extract matrix FILE [--origin TEXT]         the release channel of generate_binary_build_matrix.py, as a digest
    produce --release 2.X SOURCES               the derivable part of the release entry, in pytorch.json's format
    check   --release 2.X SOURCES [--kb FILE]   each difference with the knowledge base; exit 1 if any, 0 if none

SOURCES (give at least one; every option takes the upstream file or the digest ``extract`` made of it):

``--build-env FILE`` (repeatable)
    pytorch/pytorch ``.ci/manywheel/build_env_setup.py`` (Linux) and ``.ci/pytorch/windows/build_env_setup.py``
    (Windows) at the release tag, told apart by the shape of their table. Gives sass/ptx per CUDA variant.
``--matrix FILE``
    pytorch/test-infra ``tools/scripts/generate_binary_build_matrix.py`` on ``release/X.Y``. Gives which variants
    each platform publishes (kind, CUDA/ROCm version) and the CPython tags.
``--index-page VARIANT=FILE`` (repeatable)
    a saved copy of ``https://download.pytorch.org/whl/<VARIANT>/torch/`` (PEP 503 HTML). Gives the versions of the
    series, the CPython and platform tags seen, and on which platforms the variant has wheels.
``--variants-json FILE``
    PyTorch's ``torch-<version>-variants.json`` (wheel-variant metadata; variant ``cuda13.0``, or ``cu129`` in 2.8).
    ``nvidia :: sm_arch`` ``NN_real`` is SASS, ``NN_virtual`` PTX; ``amd :: gfx_arch`` the gfx list. Taken to
    describe ``--variants-platform`` (default linux_x86_64). It does not say which variants exist, so it only fills
    in the lists of variants that another source (or the knowledge base, for ``check``) has.

The upstream Python files are code from elsewhere: they are parsed with ``ast`` and never executed or imported.
Only module-level assignments of literals (``NAME = ...`` / ``NAME: T = ...``) are read, by
``ast.literal_eval``; the last assignment of a name wins; anything else in the file is ignored.

Parsing rules (the tables below are the data; change them, not the code, when upstream renames something):

TORCH_CUDA_ARCH_LIST (``parse_arch_list``): entries are separated by ``;`` or blanks, as CMake reads them
(pytorch/pytorch ``cmake/Modules_CUDA_fix/upstream/FindCUDA/select_compute_arch.cmake``,
``CUDA_SELECT_NVCC_ARCH_FLAGS``, commit 189579e2; and the ``_get_cuda_arch_flags`` docstring in
``torch/utils/cpp_extension.py``):

* ``8.6``        -> SASS for sm_86 (``-gencode arch=compute_86,code=sm_86``); sass ``86``
* ``12.0+PTX``   -> SASS for sm_120 *and* PTX for compute_120 (``+PTX`` adds ``code=compute_120``, it does not
  replace the SASS); sass ``120``, ptx ``120``
* ``8.6(8.0)``   -> SASS for sm_86 built from compute_80; sass ``86`` (with ``+PTX``: ptx ``80``)
* named sets (``Ampere``...), arch-specific or family suffixes (``10.0a``, ``12.0f``): refused with an error,
  no release wheel list uses them; teach this table before trusting a list that does.

Linux ``build_env_setup.py`` (2.13+): ``TORCH_CUDA_ARCH_LIST_TABLE`` maps CUDA version -> host (``x86_64``,
``aarch64``) -> set of compute capabilities as ints (``86`` is 8.6). It is rendered as upstream's
``torch_cuda_arch_list()`` renders it, ``f"{cc // 10}.{cc % 10}"`` plus ``+PTX`` for the capabilities in
``_PTX_ARCHES``, then read by the rule above. If the file defines a function ``_ptx_arches`` (pytorch#188914,
cherry-picked to release/2.13 as #188925: release and RC builds drop ``+PTX``), release wheels get no PTX; without
it ``_PTX_ARCHES`` applies to release wheels too.

Windows ``build_env_setup.py``: ``TORCH_CUDA_ARCH_LIST_TABLE`` maps ``"126"`` (CUDA 12.6: the last digit is the
minor, as upstream's ``setup_cuda()`` reads it) -> a TORCH_CUDA_ARCH_LIST string.

``generate_binary_build_matrix.py``: the ``"release"`` entry of each ``*_DICT`` (a plain list when upstream dropped
the per-channel dict). Which platform gets which list mirrors ``generate_wheels_matrix()`` (re-read it when it
changes): see ``PLATFORM_RULES``. ``"3.14t"`` in ``PYTHON_ARCHES_DICT`` is the CPython tag ``cp314t``; the
torch-only ``PREVIEW_PYTHON_ARCHES_DICT`` versions (3.15 in 2.13) are added on Linux only, as upstream adds them
(``include_preview_python_versions and os in (LINUX, LINUX_AARCH64)``). Python tags are compared per platform.
``CURRENT_STABLE_VERSION`` is reported (a matrix whose stable version is another series is not at go-live).

Index pages: every ``<a>`` whose text (or href) is a ``torch-<version>[+<variant>]-...whl`` file of the series;
a wheel with a local label other than the page's variant is ignored. Free-threaded wheels (ABI ``cp314t``) count as
the tag ``cp314t``. Platform tags map to platforms by ``WHEEL_PLATFORMS``; pre- and dev releases are ignored.

``produce`` prints ``{"sources": {KEY: TEXT}, "releases": {"2.X": ENTRY}}``: pytorch.json's own shape, with
``confidence: "P"`` and ``source: KEY`` on every derived variant. The entry holds only what the files say;
requires_python, companions, pypi_default, platform confidence and sources, min_glibc, XPU AOT lists and ROCm gfx
lists (no input above has them, except a variants.json) are the maintainer's to add (docs/releases.md).

``check`` prints one line per difference, ``PLATFORM VARIANT FIELD kb=VALUE upstream=VALUE`` (``-`` for a release-
or platform-wide field), followed by the knowledge base entry's confidence and source when it has them. It compares
only what the given sources derive, and only the variants the knowledge base advertises (``advertised: false``
builds are not in the release matrix). Lists compare as sets. Exit 2: unreadable input.
"""

from __future__ import annotations

import argparse
import ast
import html.parser
import json
import re
import sys
import urllib.parse
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from packaging.utils import InvalidWheelFilename, parse_wheel_filename
from packaging.version import Version

CHANNEL = "release"
DEFAULT_KB = Path(__file__).resolve().parents[1] / "src" / "wheelfit" / "kb" / "data" / "pytorch.json"
DIGEST_BUILD_ENV = "kb_release build-env digest 1"
DIGEST_MATRIX = "kb_release matrix digest 1"

#: Linux build_env_setup.py: the table, the PTX set, and the function whose presence means "no PTX in releases".
ARCH_TABLE = "TORCH_CUDA_ARCH_LIST_TABLE"
PTX_SET = "_PTX_ARCHES"
RELEASE_DROPS_PTX = "_ptx_arches"
#: Host architecture in the Linux table -> platform.
LINUX_HOSTS = {"x86_64": "linux_x86_64", "aarch64": "linux_aarch64"}
WINDOWS = "windows_amd64"


@dataclass(frozen=True)
class PlatformRule:
    """Which release lists of generate_binary_build_matrix.py give a platform its variants."""

    cuda: tuple[str, ...] = ()  # names to try, first found wins: a per-channel dict or a plain list
    cuda_suffix: str = ""  # stripped from each entry ("12.6-aarch64")
    cuda_exclude: str | None = None  # a list of CUDA versions the platform does not build
    rocm: bool = False
    xpu: bool = False
    preview_python: bool = False  # also the torch-only preview CPython versions


#: Mirrors generate_wheels_matrix(): CUDA on linux and windows (aarch64 from its own list), ROCm on linux x86_64,
#: XPU on linux and windows, CPU everywhere; the preview CPython versions (3.15 in 2.13) on Linux only.
PLATFORM_RULES: dict[str, PlatformRule] = {
    "linux_x86_64": PlatformRule(cuda=("CUDA_ARCHES_DICT", "CUDA_ARCHES"), rocm=True, xpu=True, preview_python=True),
    "linux_aarch64": PlatformRule(
        cuda=("CUDA_AARCH64_ARCHES_DICT", "CUDA_AARCH64_ARCHES"), cuda_suffix="-aarch64", preview_python=True
    ),
    "windows_amd64": PlatformRule(
        cuda=("CUDA_ARCHES_DICT", "CUDA_ARCHES"), cuda_exclude="CUDA_ARCHES_NO_WINDOWS", xpu=True
    ),
    "macos_arm64": PlatformRule(),
}
ROCM_LISTS = ("ROCM_ARCHES_DICT", "ROCM_ARCHES")
PYTHON_LISTS = ("PYTHON_ARCHES_DICT", "PYTHON_ARCHES")
PREVIEW_PYTHON_LISTS = ("PREVIEW_PYTHON_ARCHES_DICT",)
STABLE = "CURRENT_STABLE_VERSION"

#: Wheel platform tag -> platform (first match wins); tags of other platforms are ignored.
WHEEL_PLATFORMS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"^(manylinux|musllinux)\w*_x86_64$"), "linux_x86_64"),
    (re.compile(r"^(manylinux|musllinux)\w*_aarch64$"), "linux_aarch64"),
    (re.compile(r"^win_amd64$"), "windows_amd64"),
    (re.compile(r"^macosx_\d+_\d+_arm64$"), "macos_arm64"),
)

_ARCH_ENTRY = re.compile(r"^(?P<bin>\d+\.\d+)(?:\((?P<virt>\d+\.\d+)\))?(?P<ptx>\+PTX)?$")


class UpstreamError(Exception):
    """An input cannot be read or does not have what the rules expect; the message names the file."""


# --------------------------------------------------------------------------- TORCH_CUDA_ARCH_LIST


def _sm(dotted: str) -> str:
    major, minor = dotted.split(".")
    return f"{int(major)}{int(minor)}"


def parse_arch_list(text: str) -> tuple[list[str], list[str]]:
    """``"7.5;8.0;12.0+PTX"`` -> (sass ``["75", "80", "120"]``, ptx ``["120"]``), by CMake's rules (module doc)."""
    sass: list[str] = []
    ptx: list[str] = []
    for entry in re.split(r"[;\s]+", text.strip()):
        if not entry:
            continue
        m = _ARCH_ENTRY.fullmatch(entry)
        if m is None:
            raise UpstreamError(f"TORCH_CUDA_ARCH_LIST entry {entry!r} is not NUM.NUM, NUM.NUM(NUM.NUM) or +PTX")
        binary = _sm(m["bin"])
        if binary not in sass:
            sass.append(binary)
        if m["ptx"]:
            virtual = _sm(m["virt"] or m["bin"])
            if virtual not in ptx:
                ptx.append(virtual)
    return sorted(sass, key=int), sorted(ptx, key=int)


def render_arch_list(capabilities: Iterable[int], ptx: Iterable[int]) -> str:
    """What upstream's torch_cuda_arch_list() makes of a set of ints: ``{86, 120}``, ``{120}`` -> ``8.6;12.0+PTX``."""
    with_ptx = set(ptx)
    return ";".join(f"{cc // 10}.{cc % 10}" + ("+PTX" if cc in with_ptx else "") for cc in sorted(capabilities))


# --------------------------------------------------------------------------- reading Python without running it


def module_literals(path: Path) -> tuple[dict[str, Any], set[str]]:
    """Module-level ``NAME = <literal>`` values and the names of module-level functions, by ``ast`` only."""
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    except (OSError, UnicodeDecodeError, SyntaxError, ValueError) as exc:
        raise UpstreamError(f"{path}: cannot parse: {exc}") from exc
    values: dict[str, Any] = {}
    functions: set[str] = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            functions.add(node.name)
            continue
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target, value = node.targets[0], node.value
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            target, value = node.target, node.value
        else:
            continue
        if not isinstance(target, ast.Name):
            continue
        try:
            values[target.id] = ast.literal_eval(value)
        except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
            continue  # not a literal (a comprehension, a lookup): not data these rules read
    return values, functions


def _is_str_list(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) for v in value)


def _channel_list(values: Mapping[str, Any], names: Sequence[str], path: Path) -> list[str] | None:
    """The release list of the first of ``names`` that exists: ``DICT["release"]`` or a plain list."""
    for name in names:
        if name not in values:
            continue
        value = values[name]
        if isinstance(value, dict):
            value = value.get(CHANNEL)
        if not _is_str_list(value):
            raise UpstreamError(f"{path}: {name} has no {CHANNEL!r} list of strings")
        return list(value)
    return None


# --------------------------------------------------------------------------- build_env_setup.py


def extract_build_env(paths: Sequence[Path], origin: str | None = None) -> dict[str, Any]:
    """The TORCH_CUDA_ARCH_LIST of each release build, per platform and CUDA version, from build_env_setup.py files."""
    lists: dict[str, dict[str, str]] = {}
    files: list[dict[str, Any]] = []
    for path in paths:
        values, functions = module_literals(path)
        table = values.get(ARCH_TABLE)
        if not isinstance(table, dict) or not table:
            raise UpstreamError(f"{path}: no literal {ARCH_TABLE}")
        shapes = {type(v) for v in table.values()}
        if shapes == {str}:  # Windows: "126" -> "5.0;6.0;..."
            for key, text in table.items():
                if not (isinstance(key, str) and key.isdigit() and len(key) >= 2):
                    raise UpstreamError(f"{path}: {ARCH_TABLE} key {key!r} is not a CUDA version such as '126'")
                lists.setdefault(WINDOWS, {})[f"{key[:-1]}.{key[-1]}"] = text
            files.append({"file": path.name, "table": "windows"})
        elif shapes == {dict}:  # Linux: "12.6" -> {"x86_64": {50, ...}}
            ptx_set = values.get(PTX_SET, set())
            if not isinstance(ptx_set, (set, frozenset)) or not all(isinstance(c, int) for c in ptx_set):
                raise UpstreamError(f"{path}: {PTX_SET} is not a set of ints")
            release_ptx: set[int] = set() if RELEASE_DROPS_PTX in functions else set(ptx_set)
            for cuda, hosts in table.items():
                for host, capabilities in hosts.items():
                    if host not in LINUX_HOSTS:
                        continue
                    if not isinstance(capabilities, (set, frozenset, list)) or not all(
                        isinstance(c, int) for c in capabilities
                    ):
                        raise UpstreamError(f"{path}: {ARCH_TABLE}[{cuda!r}][{host!r}] is not a set of ints")
                    lists.setdefault(LINUX_HOSTS[host], {})[cuda] = render_arch_list(capabilities, release_ptx)
            files.append(
                {
                    "file": path.name,
                    "table": "linux",
                    PTX_SET: sorted(ptx_set),
                    "release_drops_ptx": RELEASE_DROPS_PTX in functions,
                }
            )
        else:
            raise UpstreamError(f"{path}: {ARCH_TABLE} is neither Linux's nor Windows' shape")
        for per_cuda in lists.values():
            for cuda, text in per_cuda.items():
                try:
                    parse_arch_list(text)  # refuse now what the rules cannot read
                except UpstreamError as exc:
                    raise UpstreamError(f"{path}: CUDA {cuda}: {exc}") from exc
    digest: dict[str, Any] = {"digest": DIGEST_BUILD_ENV, "files": files, "TORCH_CUDA_ARCH_LIST": lists}
    if origin:
        digest["origin"] = origin
    return digest


# --------------------------------------------------------------------------- generate_binary_build_matrix.py


def extract_matrix(path: Path, origin: str | None = None) -> dict[str, Any]:
    """Which variants each platform's release channel builds, and the CPython versions, per PLATFORM_RULES."""
    values, _ = module_literals(path)
    python = _channel_list(values, PYTHON_LISTS, path)
    if python is None:
        raise UpstreamError(f"{path}: none of {', '.join(PYTHON_LISTS)}")
    rocm = _channel_list(values, ROCM_LISTS, path) or []
    preview = _channel_list(values, PREVIEW_PYTHON_LISTS, path) or []
    platforms: dict[str, dict[str, Any]] = {}
    for name, rule in PLATFORM_RULES.items():
        cuda: list[str] = []
        if rule.cuda:
            found = _channel_list(values, rule.cuda, path)
            if found is None:
                raise UpstreamError(f"{path}: none of {', '.join(rule.cuda)}")
            cuda = [c.removesuffix(rule.cuda_suffix) for c in found]
        if rule.cuda_exclude is not None and rule.cuda_exclude in values:
            excluded = values[rule.cuda_exclude]
            if not _is_str_list(excluded):
                raise UpstreamError(f"{path}: {rule.cuda_exclude} is not a list of strings")
            cuda = [c for c in cuda if c not in excluded]
        platforms[name] = {
            "cuda": cuda,
            "rocm": rocm if rule.rocm else [],
            "xpu": rule.xpu,
            "cpu": True,
            "python": python + [v for v in preview if v not in python] if rule.preview_python else python,
        }
    stable = values.get(STABLE)
    digest: dict[str, Any] = {
        "digest": DIGEST_MATRIX,
        "file": path.name,
        "channel": CHANNEL,
        "current_stable_version": stable if isinstance(stable, str) else None,
        "platforms": platforms,
    }
    if origin:
        digest["origin"] = origin
    return digest


def python_tag(version: str) -> str:
    """``"3.14t"`` -> ``"cp314t"``."""
    m = re.fullmatch(r"3\.(\d+)(t?)", version)
    if m is None:
        raise UpstreamError(f"Python version {version!r} is not 3.N or 3.Nt")
    return f"cp3{m[1]}{m[2]}"


# --------------------------------------------------------------------------- index pages, variants.json


class _Anchors(html.parser.HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.names: list[str] = []
        self._href: str | None = None
        self._text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "a":
            self._href = dict(attrs).get("href") or ""
            self._text = []

    def handle_data(self, data: str) -> None:
        if self._href is not None:
            self._text.append(data)

    def handle_endtag(self, tag: str) -> None:
        if tag == "a" and self._href is not None:
            text = "".join(self._text).strip()
            if not text.endswith(".whl"):
                path = urllib.parse.urlsplit(self._href).path
                text = urllib.parse.unquote(path.rsplit("/", 1)[-1])
            self.names.append(text)
            self._href = None


@dataclass
class PageFacts:
    versions: set[str] = field(default_factory=set)
    platform_tags: dict[str, set[str]] = field(default_factory=dict)  # platform -> wheel platform tags
    variants: dict[str, set[str]] = field(default_factory=dict)  # platform -> variant labels with wheels
    python_tags: dict[tuple[str, str], set[str]] = field(default_factory=dict)  # (version, platform) -> tags


def _platform_of(tag: str) -> str | None:
    for pattern, name in WHEEL_PLATFORMS:
        if pattern.fullmatch(tag):
            return name
    return None


def read_index_page(path: Path, variant: str, series: str, facts: PageFacts) -> None:
    """Add the torch wheels of ``series`` on one saved index page to ``facts``."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise UpstreamError(f"{path}: cannot read: {exc}") from exc
    anchors = _Anchors()
    anchors.feed(text)
    for name in anchors.names:
        try:
            project, version, _, tags = parse_wheel_filename(name)
        except InvalidWheelFilename:
            continue
        if project != "torch" or version.is_prerelease or version.is_devrelease:
            continue
        if f"{version.major}.{version.minor}" != series or version.local not in (None, variant):
            continue
        for tag in tags:
            platform = _platform_of(tag.platform)
            if platform is None:
                continue
            cpython = tag.abi if tag.abi.startswith("cp") and tag.abi.endswith("t") else tag.interpreter
            facts.versions.add(version.public)
            facts.platform_tags.setdefault(platform, set()).add(tag.platform)
            facts.variants.setdefault(platform, set()).add(variant)
            facts.python_tags.setdefault((version.public, platform), set()).add(cpython)


def read_variants_json(path: Path) -> dict[str, dict[str, Any]]:
    """Variant label -> derived fields, from a torch-<version>-variants.json (``NN_real`` SASS, ``NN_virtual`` PTX)."""
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise UpstreamError(f"{path}: cannot read: {exc}") from exc
    variants = raw.get("variants") if isinstance(raw, dict) else None
    if not isinstance(variants, dict):
        raise UpstreamError(f"{path}: no 'variants' object")
    out: dict[str, dict[str, Any]] = {}
    for key, props in variants.items():
        if not isinstance(props, dict):
            continue
        m = re.fullmatch(r"cuda(\d+)\.(\d+)", key) or re.fullmatch(r"cu(\d+)(\d)", key)  # 2.9+ / 2.8 labels
        if m is not None:
            arches = props.get("nvidia", {}).get("sm_arch", [])
            sass = sorted((a.split("_")[0] for a in arches if a.endswith("_real")), key=int)
            ptx = sorted((a.split("_")[0] for a in arches if a.endswith("_virtual")), key=int)
            out[f"cu{m[1]}{m[2]}"] = {"kind": "cuda", "cuda": f"{m[1]}.{m[2]}", "sass": sass, "ptx": ptx}
        elif key.startswith("rocm") and isinstance(props.get("amd"), dict):
            out[key] = {"kind": "rocm", "rocm": key.removeprefix("rocm"), "gfx": list(props["amd"].get("gfx_arch", []))}
        elif key == "xpu":
            out[key] = {"kind": "xpu"}  # device IPs, not AOT target names: nothing to compare
    return out


# --------------------------------------------------------------------------- deriving the entry


@dataclass
class Derived:
    """What the given upstream files say about one release."""

    release: str
    files: list[str] = field(default_factory=list)
    origins: list[str] = field(default_factory=list)
    #: platform -> label -> fields; ``platform_complete`` says the matrix listed the platform's variants.
    variants: dict[str, dict[str, dict[str, Any]]] = field(default_factory=dict)
    platform_complete: set[str] = field(default_factory=set)
    python_tags: list[str] | None = None  # the tags every platform has
    platform_python_tags: dict[str, list[str]] = field(default_factory=dict)
    pages: PageFacts | None = None
    stable_version: str | None = None


def _load_digest(path: Path, kind: str) -> dict[str, Any] | None:
    """The digest in ``path`` if it is one (a .json file), else None: then ``path`` is the upstream file."""
    if path.suffix != ".json":
        return None
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise UpstreamError(f"{path}: cannot read: {exc}") from exc
    if not isinstance(raw, dict) or raw.get("digest") != kind:
        raise UpstreamError(f"{path}: not a {kind!r} (make one with 'extract')")
    return raw


def derive(
    release: str,
    build_env: Sequence[Path] = (),
    matrix: Path | None = None,
    index_pages: Sequence[tuple[str, Path]] = (),
    variants_json: Path | None = None,
    variants_platform: str = "linux_x86_64",
) -> Derived:
    out = Derived(release)
    lists: dict[str, dict[str, str]] = {}
    for path in build_env:
        digest = _load_digest(path, DIGEST_BUILD_ENV) or extract_build_env([path])
        for platform, per_cuda in digest["TORCH_CUDA_ARCH_LIST"].items():
            lists.setdefault(platform, {}).update(per_cuda)
        out.files.extend(f["file"] for f in digest["files"])
        if digest.get("origin"):
            out.origins.append(digest["origin"])
    if matrix is not None:
        m = _load_digest(matrix, DIGEST_MATRIX) or extract_matrix(matrix)
        out.files.append(m["file"])
        if m.get("origin"):
            out.origins.append(m["origin"])
        out.stable_version = m.get("current_stable_version")
        for platform, spec in m["platforms"].items():
            found = out.variants.setdefault(platform, {})
            out.platform_complete.add(platform)
            out.platform_python_tags[platform] = _sorted_tags(python_tag(v) for v in spec["python"])
            for cuda in spec["cuda"]:
                found["cu" + cuda.replace(".", "")] = {"kind": "cuda", "cuda": cuda}
            for rocm in spec["rocm"]:
                found["rocm" + rocm] = {"kind": "rocm", "rocm": rocm}
            if spec["xpu"]:
                found["xpu"] = {"kind": "xpu"}
            if spec["cpu"]:
                found["cpu"] = {"kind": "cpu"}
    if out.platform_python_tags:
        common = set.intersection(*(set(tags) for tags in out.platform_python_tags.values()))
        out.python_tags = _sorted_tags(common)
    for platform, per_cuda in lists.items():
        for cuda, text in per_cuda.items():
            label = "cu" + cuda.replace(".", "")
            entry = out.variants.get(platform, {}).get(label)
            if entry is None and platform in out.platform_complete:
                continue  # built by the tables but not released on this platform (the matrix decides)
            sass, ptx = parse_arch_list(text)
            target = out.variants.setdefault(platform, {}).setdefault(label, {"kind": "cuda", "cuda": cuda})
            target.update(sass=sass, ptx=ptx)
    if variants_json is not None:
        out.files.append(variants_json.name)
        for label, fields in read_variants_json(variants_json).items():
            known = out.variants.get(variants_platform, {})
            if variants_platform in out.platform_complete and label not in known:
                continue
            out.variants.setdefault(variants_platform, {}).setdefault(label, {}).update(fields)
    if index_pages:
        facts = PageFacts()
        for variant, path in index_pages:
            read_index_page(path, variant, release, facts)
            out.files.append(f"whl/{variant}/torch/ ({path.name})")
        out.pages = facts
    return out


def _sorted_tags(tags: Iterable[str]) -> list[str]:
    """As pytorch.json lists them: ``cp310 ... cp315``, then the free-threaded ``cp314t cp315t``."""
    return sorted(set(tags), key=lambda t: (t.endswith("t"), int(re.sub(r"\D", "", t)), t))


def entry_of(derived: Derived, source_key: str) -> dict[str, Any]:
    """The release entry in pytorch.json's format (only the fields the files give)."""
    entry: dict[str, Any] = {}
    pages = derived.pages
    if pages is not None and pages.versions:
        entry["versions"] = sorted(pages.versions, key=Version)
    if derived.python_tags is not None:
        entry["python_tags"] = derived.python_tags
    elif pages is not None and pages.python_tags:
        entry["python_tags"] = _sorted_tags(set().union(*pages.python_tags.values()))
    platforms: dict[str, Any] = {}
    names = set(derived.variants) | (set(pages.variants) if pages else set())
    for platform in [p for p in PLATFORM_RULES if p in names] + sorted(names - set(PLATFORM_RULES)):
        body: dict[str, Any] = {}
        tags = pages.platform_tags.get(platform, set()) if pages else set()
        if len(tags) == 1:
            body["platform_tag"] = next(iter(tags))
        own = derived.platform_python_tags.get(platform)
        if own is not None and own != entry.get("python_tags"):
            body["python_tags"] = own
        variants: dict[str, Any] = {}
        labels = dict(derived.variants.get(platform, {}))
        for label in sorted(pages.variants.get(platform, set())) if pages else []:
            labels.setdefault(label, _kind_of(label))
        for label, fields in labels.items():
            variants[label] = {**fields, "confidence": "P", "source": source_key}
        body["variants"] = variants
        platforms[platform] = body
    entry["platforms"] = platforms
    return entry


def _kind_of(label: str) -> dict[str, Any]:
    m = re.fullmatch(r"cu(\d+)(\d)", label)
    if m is not None:
        return {"kind": "cuda", "cuda": f"{m[1]}.{m[2]}"}
    if label.startswith("rocm"):
        return {"kind": "rocm", "rocm": label.removeprefix("rocm")}
    return {"kind": label if label in ("xpu", "cpu") else "unknown"}


def source_text(derived: Derived) -> str:
    said = "; ".join(derived.origins) if derived.origins else ", ".join(derived.files)
    return f"kb_release.py produce from the upstream files of {derived.release}: {said}"


# --------------------------------------------------------------------------- check


@dataclass(frozen=True)
class Difference:
    platform: str
    variant: str
    field: str
    kb: Any
    upstream: Any
    kb_confidence: str | None = None
    kb_source: str | None = None

    def line(self) -> str:
        def show(value: Any) -> str:
            return json.dumps(value, separators=(",", ":"))

        text = f"{self.platform} {self.variant} {self.field} kb={show(self.kb)} upstream={show(self.upstream)}"
        if self.kb_confidence or self.kb_source:
            text += f" (kb confidence {self.kb_confidence or '-'}, source {self.kb_source or '-'})"
        return text


LIST_FIELDS = ("sass", "ptx", "gfx", "aot")
SCALAR_FIELDS = ("kind", "cuda", "rocm")


def _kb_python_tags(entry: Mapping[str, Any], version: str, platform: str) -> list[str]:
    by_version = entry.get("python_tags_by_version") or {}
    if version in by_version:
        return list(by_version[version])
    plat = (entry.get("platforms") or {}).get(platform) or {}
    if plat.get("python_tags") is not None:
        return list(plat["python_tags"])
    return list(entry.get("python_tags") or [])


def compare(derived: Derived, kb: Mapping[str, Any]) -> list[Difference]:
    """Every derived field that the knowledge base's entry for the release states otherwise."""
    entry = (kb.get("releases") or {}).get(derived.release)
    if entry is None:
        return [Difference("-", "-", "release", None, derived.release)]
    out: list[Difference] = []
    produced = entry_of(derived, "-")
    if "versions" in produced and set(produced["versions"]) != set(entry.get("versions") or []):
        out.append(Difference("-", "-", "versions", entry.get("versions"), produced["versions"]))
    kb_versions = sorted(entry.get("versions") or [], key=Version)
    latest = kb_versions[-1] if kb_versions else ""
    kb_platforms: Mapping[str, Any] = entry.get("platforms") or {}
    pages = derived.pages
    for platform, body in produced["platforms"].items():
        kb_plat = kb_platforms.get(platform)
        if kb_plat is None:
            out.append(Difference(platform, "-", "platform", None, sorted(body["variants"])))
            continue
        kb_variants: Mapping[str, Any] = kb_plat.get("variants") or {}
        advertised = {label for label, v in kb_variants.items() if v.get("advertised", True)}
        if platform in derived.platform_complete:
            upstream = set(derived.variants.get(platform, {}))
            if upstream != advertised:
                out.append(Difference(platform, "-", "variants", sorted(advertised), sorted(upstream)))
        if platform in derived.platform_python_tags:
            kb_tags = _kb_python_tags(entry, latest, platform)
            if set(kb_tags) != set(derived.platform_python_tags[platform]):
                out.append(Difference(platform, "-", "python_tags", kb_tags, derived.platform_python_tags[platform]))
        if pages is not None and platform in pages.platform_tags:
            tags = sorted(pages.platform_tags[platform])
            if [kb_plat.get("platform_tag")] != tags:
                out.append(Difference(platform, "-", "platform_tag", kb_plat.get("platform_tag"), tags))
        for label, fields in body["variants"].items():
            kb_var = kb_variants.get(label)
            if kb_var is None:
                if platform not in derived.platform_complete:  # else reported in "variants"
                    published = pages is not None and label in pages.variants.get(platform, set())
                    out.append(Difference(platform, label, "variant", None, "published" if published else "described"))
                continue
            conf, src = kb_var.get("confidence"), kb_var.get("source")
            for key in SCALAR_FIELDS:
                if key in fields and fields[key] != kb_var.get(key):
                    out.append(Difference(platform, label, key, kb_var.get(key), fields[key], conf, src))
            for key in LIST_FIELDS:
                if key in fields and set(fields[key]) != set(kb_var.get(key) or []):
                    out.append(Difference(platform, label, key, kb_var.get(key, []), fields[key], conf, src))
    if pages is not None:
        for (version, platform), seen in sorted(pages.python_tags.items()):
            if platform not in kb_platforms:
                continue
            expected = _kb_python_tags(entry, version, platform)
            if seen == set(derived.platform_python_tags.get(platform, ())) and version == latest:
                continue  # the page says what the matrix says: reported once, as the platform's python_tags
            if seen != set(expected):
                out.append(Difference(platform, "-", f"python_tags[{version}]", expected, _sorted_tags(seen)))
    return out


# --------------------------------------------------------------------------- command line


def _index_page(value: str) -> tuple[str, Path]:
    variant, sep, path = value.partition("=")
    if not sep or not variant or not path:
        raise argparse.ArgumentTypeError(f"expected VARIANT=FILE, got {value!r}")
    return variant, Path(path)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="kb_release.py", description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    extract = commands.add_parser("extract", help="digest upstream files into the JSON the other commands read")
    extract.add_argument("what", choices=("build-env", "matrix"))
    extract.add_argument("files", nargs="+", type=Path)
    extract.add_argument("--origin", help="where the files came from (repository, path, commit), kept in the digest")
    for name in ("produce", "check"):
        sub = commands.add_parser(name)
        sub.add_argument("--release", required=True, help="the series, e.g. 2.13")
        sub.add_argument("--build-env", type=Path, action="append", default=[], metavar="FILE")
        sub.add_argument("--matrix", type=Path, metavar="FILE")
        sub.add_argument("--index-page", type=_index_page, action="append", default=[], metavar="VARIANT=FILE")
        sub.add_argument("--variants-json", type=Path, metavar="FILE")
        sub.add_argument("--variants-platform", default="linux_x86_64", choices=sorted(PLATFORM_RULES))
        if name == "produce":
            sub.add_argument("--source-key", help="the key of 'sources' the entry cites (default UP-<release>)")
        else:
            sub.add_argument("--kb", type=Path, default=DEFAULT_KB, help="the knowledge base (default: the packaged)")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        if args.command == "extract":
            paths: list[Path] = args.files
            if args.what == "build-env":
                digest = extract_build_env(paths, args.origin)
            elif len(paths) != 1:
                raise UpstreamError("extract matrix takes one file")
            else:
                digest = extract_matrix(paths[0], args.origin)
            print(json.dumps(digest, indent=1))
            return 0
        if not re.fullmatch(r"\d+\.\d+", args.release):
            raise UpstreamError(f"--release must be a series such as 2.13, got {args.release!r}")
        if not (args.build_env or args.matrix or args.index_page or args.variants_json):
            raise UpstreamError("give at least one of --build-env, --matrix, --index-page, --variants-json")
        derived = derive(
            args.release, args.build_env, args.matrix, args.index_page, args.variants_json, args.variants_platform
        )
        if derived.stable_version and not derived.stable_version.startswith(args.release + "."):
            print(
                f"warning: the matrix's {STABLE} is {derived.stable_version}, not a {args.release} version: "
                "it is not the release branch at go-live",
                file=sys.stderr,
            )
        if args.command == "produce":
            key = args.source_key or f"UP-{args.release}"
            fragment = {"sources": {key: source_text(derived)}, "releases": {args.release: entry_of(derived, key)}}
            print(json.dumps(fragment, indent=1))
            return 0
        try:
            kb = json.loads(Path(args.kb).read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise UpstreamError(f"{args.kb}: cannot read the knowledge base: {exc}") from exc
        differences = compare(derived, kb)
        for difference in differences:
            print(difference.line())
        return 1 if differences else 0
    except UpstreamError as exc:
        print(f"kb_release.py: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
