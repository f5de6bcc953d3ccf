"""Extension sources as data (``data/extensions.json``): per package built against torch, where its wheels are
published and how a wheel says which torch, CUDA and C++ ABI it was built for. Adding a package is a data change.

Read with the knowledge base's JSON reader and checked the way its other files are; the schema file beside it is
what the tests hold the data to."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from importlib.resources import files
from typing import Any

from ..kinds import Confidence
from .jsonfile import Fields, load_json
from .matrix import KnowledgeError

__all__ = ["AbiRule", "CudaMajorRule", "Extension", "cuda_major_of", "cuda_major_rules", "cxx11_abi", "extensions"]

_PACKAGED = "wheelfit/kb/data/extensions.json"
_KINDS = frozenset({"github-releases", "index", "find-links", "pypi"})
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
    return parse(text, _PACKAGED), parse_cuda_majors(text, _PACKAGED), parse_abi(text, _PACKAGED)


def cxx11_abi(series: str, variant: str) -> bool:
    """Whether the Linux torch build of ``series`` (``2.9``) and ``variant`` (``cu128``) uses the C++11 ABI: what
    an extension's ``cxx11abiTRUE``/``FALSE`` label must agree with (else "undefined symbol" at import)."""
    rule = _packaged()[2]
    major, _, minor = series.partition(".")
    if (int(major), int(minor)) >= rule.since:
        return True
    return variant in rule.earlier.get(series, frozenset())


def parse_abi(text: str, name: str) -> AbiRule:
    f = Fields(name, KnowledgeError)
    doc = f.mapping(load_json(text, name, error=KnowledgeError), "")
    sources = f.sources(doc.get("sources"))
    item = f.obj(doc.get("cxx11_abi"), "cxx11_abi", ("since", "earlier", "confidence", "source"))
    since = f.text(item["since"], "cxx11_abi.since")
    major, dot, minor = since.partition(".")
    if not (dot and major.isdigit() and minor.isdigit()):
        raise f.fail("cxx11_abi.since", "a series such as 2.7")
    earlier = {
        series: frozenset(f.texts(raw, f.at("cxx11_abi.earlier", series)))
        for series, raw in f.mapping(item["earlier"], "cxx11_abi.earlier").items()
    }
    return AbiRule((int(major), int(minor)), earlier, f.source(item["source"], "cxx11_abi.source", sources))


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
    f = Fields(name, KnowledgeError)
    doc = f.mapping(load_json(text, name, error=KnowledgeError), "")
    sources = f.sources(doc.get("sources"))
    rules: list[CudaMajorRule] = []
    for i, raw in enumerate(f.items(doc.get("cuda_major"), "cuda_major")):
        where = f.at("cuda_major", i)
        item = f.obj(raw, where, ("name_pattern", "confidence", "source"), ("extra_pattern",))
        patterns = [_pattern(f, item.get(key), f.at(where, key)) for key in ("name_pattern", "extra_pattern")]
        named, extra = patterns
        if named is None or "major" not in (extra or named).groupindex:
            raise f.fail(where, "the name pattern (or the extra pattern) must have a group named major")
        rules.append(CudaMajorRule(named, extra, f.source(item["source"], f.at(where, "source"), sources)))
    return tuple(rules)


def _confidence(f: Fields, value: object, where: str) -> Confidence:
    text = f.text(value, where)
    if text not in ("P", "M", "S", "U"):
        raise f.fail(where, "one of P, M, S, U")
    return Confidence(text)


def _pattern(f: Fields, value: object, where: str) -> re.Pattern[str] | None:
    text = f.opt_text(value, where)
    if text is None:
        return None
    try:
        return re.compile(text)
    except re.error as exc:
        raise f.fail(where, f"not a regular expression: {exc}") from None


def parse(text: str, name: str) -> dict[str, Extension]:
    f = Fields(name, KnowledgeError)
    required = ("schema_version", "updated", "about", "sources", "packages")
    doc = f.obj(load_json(text, name, error=KnowledgeError), "", required, ("cuda_major", "cxx11_abi"))
    f.schema_version(doc["schema_version"], 1)
    sources = f.sources(doc["sources"])
    out: dict[str, Extension] = {}
    for pkg, raw in f.mapping(doc["packages"], "packages").items():
        where = f.at("packages", pkg)
        item: dict[str, Any] = f.obj(raw, where, ("where", "torch_pin", "confidence", "source"),
                                     ("label_pattern", "note"))  # fmt: skip
        place = f.obj(item["where"], f.at(where, "where"), ("kind", "url"))
        kind = f.text(place["kind"], f.at(where, "where.kind"))
        if kind not in _KINDS:
            raise f.fail(f.at(where, "where.kind"), f"one of {', '.join(sorted(_KINDS))}")
        pattern = f.opt_text(item.get("label_pattern"), f.at(where, "label_pattern"))
        label = None
        if pattern is not None:
            try:
                label = re.compile(pattern, re.IGNORECASE)
            except re.error as exc:
                raise f.fail(f.at(where, "label_pattern"), f"not a regular expression: {exc}") from None
            unknown = set(label.groupindex) - _GROUPS
            if unknown:
                raise f.fail(f.at(where, "label_pattern"), f"unknown groups {', '.join(sorted(unknown))}")
        if not isinstance(item["torch_pin"], bool):
            raise f.fail(f.at(where, "torch_pin"), "expected true or false")
        out[pkg] = Extension(
            pkg, kind, f.text(place["url"], f.at(where, "where.url")), label, item["torch_pin"],
            _confidence(f, item["confidence"], f.at(where, "confidence")),
            f.source(item["source"], f.at(where, "source"), sources),
        )  # fmt: skip
    return out
