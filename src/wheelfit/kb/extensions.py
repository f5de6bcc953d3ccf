"""Extension sources as data (``data/extensions.json``): per package built against torch, where its wheels are
published and how a wheel says which torch, CUDA and C++ ABI it was built for. Adding a package is a data change.

Read with the knowledge base's JSON reader. Its shape is the schema beside it, to which the tests hold the packaged
file and :func:`parse` (and its siblings) a copy given as text; what a schema cannot say (sources named exist,
patterns compile and have the groups they must) is checked here."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from importlib.resources import files
from typing import Any

from ..kinds import Confidence
from .jsonfile import conform, load_json
from .matrix import KnowledgeError

__all__ = ["AbiRule", "CudaMajorRule", "Extension", "cuda_major_of", "cuda_major_rules", "cxx11_abi", "extensions"]

_PACKAGED = "wheelfit/kb/data/extensions.json"
_SCHEMA = "kb/data/extensions.schema.json"
_GROUPS = frozenset({"torch", "torch_major", "torch_minor", "cuda", "variant", "abi"})


@dataclass(frozen=True)
class Extension:
    name: str
    #: ``github-releases``, ``index`` (PEP 503/691), ``find-links``, ``pypi``; the URL, with ``{placeholders}``.
    where: str
    url: str
    #: Matched against a wheel's local label (case-insensitive); ``None``: the label says nothing.
    label: re.Pattern[str] | None
    #: The wheel's Requires-Dist pins one exact torch.
    torch_pin: bool
    confidence: Confidence
    source: str


@dataclass(frozen=True)
class CudaMajorRule:
    """A package whose name (or, with ``extra``, one of its extras) names the CUDA major it needs, as ``major``."""

    name: re.Pattern[str]
    extra: re.Pattern[str] | None
    source: str


@dataclass(frozen=True)
class AbiRule:
    """Which Linux torch builds use the C++11 ABI: every build from ``since`` on, and the listed variants of
    earlier series (2.6's CUDA 12.6, ROCm 6.2.4 and XPU builds); the rest the old ABI."""

    since: tuple[int, int]
    earlier: dict[str, frozenset[str]]
    source: str


@cache
def _packaged() -> tuple[dict[str, Extension], tuple[CudaMajorRule, ...], AbiRule]:
    try:
        text = files(__package__).joinpath("data/extensions.json").read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:  # a broken installation, not a user error
        raise KnowledgeError(f"{_PACKAGED}: cannot read the packaged extension table: {exc}") from exc
    doc: Any = load_json(text, _PACKAGED, error=KnowledgeError)  # parsed only: the tests hold it to the schema
    return _packages(doc, _PACKAGED), _cuda_majors(doc, _PACKAGED), _abi(doc, _PACKAGED)


def cxx11_abi(series: str, variant: str) -> bool:
    """Whether the Linux torch build of ``series`` (``2.9``) and ``variant`` (``cu128``) uses the C++11 ABI: what
    an extension's ``cxx11abiTRUE``/``FALSE`` label must agree with (else "undefined symbol" at import)."""
    rule = _packaged()[2]
    major, _, minor = series.partition(".")
    if (int(major), int(minor)) >= rule.since:
        return True
    return variant in rule.earlier.get(series, frozenset())


def parse_abi(text: str, name: str) -> AbiRule:
    return _abi(_checked(text, name), name)


def _abi(doc: dict[str, Any], name: str) -> AbiRule:
    item = doc["cxx11_abi"]
    major, _, minor = item["since"].partition(".")
    earlier = {series: frozenset(labels) for series, labels in item["earlier"].items()}
    return AbiRule((int(major), int(minor)), earlier, _source(doc, item, "cxx11_abi", name))


def extensions() -> dict[str, Extension]:
    """The packaged table, by canonical name."""
    return _packaged()[0]


def cuda_major_rules() -> tuple[CudaMajorRule, ...]:
    return _packaged()[1]


def cuda_major_of(name: str, extras: frozenset[str] = frozenset()) -> str | None:
    """The CUDA major a requirement's name or extra asks for (``cupy-cuda12x``, ``jax[cuda13]``), else ``None``."""
    canonical = name.lower().replace("_", "-").replace(".", "-")
    for rule in cuda_major_rules():
        m = rule.name.fullmatch(canonical)
        if m is None:
            continue
        if rule.extra is None:
            return m.group("major")
        for extra in extras:
            e = rule.extra.fullmatch(extra.lower())
            if e is not None:
                return e.group("major")
    return None


def parse_cuda_majors(text: str, name: str) -> tuple[CudaMajorRule, ...]:
    return _cuda_majors(_checked(text, name), name)


def _cuda_majors(doc: dict[str, Any], name: str) -> tuple[CudaMajorRule, ...]:
    rules: list[CudaMajorRule] = []
    for i, item in enumerate(doc["cuda_major"]):
        where = f"cuda_major[{i}]"
        named = _pattern(item["name_pattern"], f"{where}.name_pattern", name)
        extra = _pattern(item["extra_pattern"], f"{where}.extra_pattern", name) if "extra_pattern" in item else None
        if "major" not in (extra or named).groupindex:
            raise KnowledgeError(f"{name}: {where}: the name (or extra) pattern must have a group named major")
        rules.append(CudaMajorRule(named, extra, _source(doc, item, where, name)))
    return tuple(rules)


def parse(text: str, name: str) -> dict[str, Extension]:
    """The packages of an extension table given as text (a test's or the docs generator's copy)."""
    return _packages(_checked(text, name), name)


def _packages(doc: dict[str, Any], name: str) -> dict[str, Extension]:
    out: dict[str, Extension] = {}
    for pkg, item in doc["packages"].items():
        where = f"packages.{pkg}"
        label = None
        if "label_pattern" in item:
            label = _pattern(item["label_pattern"], f"{where}.label_pattern", name, re.IGNORECASE)
            unknown = set(label.groupindex) - _GROUPS
            if unknown:
                raise KnowledgeError(f"{name}: {where}.label_pattern: unknown groups {', '.join(sorted(unknown))}")
        out[pkg] = Extension(pkg, item["where"]["kind"], item["where"]["url"], label, item["torch_pin"],
                             Confidence(item["confidence"]), _source(doc, item, where, name))  # fmt: skip
    return out


def _checked(text: str, name: str) -> dict[str, Any]:
    return conform(load_json(text, name, error=KnowledgeError), _SCHEMA, name, error=KnowledgeError, reads="1")


def _source(doc: dict[str, Any], item: dict[str, Any], where: str, name: str) -> str:
    key: str = item["source"]
    if key not in doc["sources"]:
        raise KnowledgeError(f"{name}: {where}.source: source {key!r} is not a key of 'sources'")
    return key


def _pattern(text: str, where: str, name: str, flags: int = 0) -> re.Pattern[str]:
    try:
        return re.compile(text, flags)
    except re.error as exc:
        raise KnowledgeError(f"{name}: {where}: not a regular expression: {exc}") from None
