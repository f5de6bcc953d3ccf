"""Dependency markers with the variant variables (PEP 817 §Environment markers, PEP 825).

``variant_label`` is a string (``""`` for a non-variant wheel); ``variant_namespaces``,
``variant_features`` (``"ns :: f"``) and ``variant_properties`` (``"ns :: f :: v"``) are
sets tested with ``in`` / ``not in``, whitespace around ``::`` insignificant. PEP 825
narrows them to the values the machine supports: pass the variant from
:class:`~wheelfit.variants.ranking.RankedVariant`, which is already narrowed.

``packaging`` does not know these names, so this module parses the marker grammar
(PEP 508) itself and hands every other comparison to ``packaging.markers.Marker``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from packaging.markers import InvalidMarker, Marker, UndefinedComparison, UndefinedEnvironmentName
from packaging.requirements import InvalidRequirement, Requirement

from ..errors import first_line
from .errors import VariantError
from .metadata import Variant
from .properties import VariantProperty, feature_key

__all__ = ["VariantEnvironment", "evaluate_marker", "plain_requirement", "reduce_marker", "requirement_applies"]

_SET_NAMES = ("variant_namespaces", "variant_features", "variant_properties")
#: Parentheses nested deeper are refused: the parser recurses per level (RecursionError past ~300), and no real
#: marker nests more than a few.
MAX_NESTING = 64
_VARIANT_NAMES = re.compile(r"\bvariant_(?:label|namespaces|features|properties)\b")

#: A marker partly evaluated: ``True``/``False``, or the text of what is left and whether that text is an ``or``
#: at its top level (it needs parentheses inside an ``and``).
_Residual = bool | tuple[str, bool]
_TOKEN_RE = re.compile(
    r"""\s*(?:(?P<str>'[^']*'|"[^"]*")|(?P<op>===|==|!=|<=|>=|~=|<|>)|(?P<paren>[()])|(?P<word>[A-Za-z_][A-Za-z0-9_.]*))"""
)


@dataclass(frozen=True)
class VariantEnvironment:
    label: str = ""
    namespaces: frozenset[str] = frozenset()
    features: frozenset[str] = frozenset()
    properties: frozenset[str] = frozenset()

    @classmethod
    def of(cls, variant: Variant | None) -> VariantEnvironment:
        """The variables for a wheel: its (narrowed) variant, or ``None`` for a non-variant wheel."""
        if variant is None:
            return cls()
        return cls.from_properties(variant.label, variant.properties())

    @classmethod
    def from_properties(cls, label: str, properties: Iterable[VariantProperty | str]) -> VariantEnvironment:
        """The variables for ``label`` with these (narrowed) properties, e.g. as a plan records them."""
        props = [p if isinstance(p, VariantProperty) else VariantProperty.parse(p) for p in properties]
        return cls(
            label=label,
            namespaces=frozenset(p.namespace for p in props),
            features=frozenset(f"{p.namespace} :: {p.feature}" for p in props),
            properties=frozenset(str(p) for p in props),
        )


def requirement_applies(
    requirement: str, environment: Mapping[str, str], variant: VariantEnvironment
) -> tuple[Requirement, bool]:
    """Split ``name[extras] spec ; marker`` and say whether its marker holds."""
    head, marker = _split(requirement)
    try:
        req = Requirement(head)
    except InvalidRequirement as exc:
        raise VariantError(f"requirement {requirement!r} is not valid ({first_line(exc)})") from None
    return req, (True if marker is None else evaluate_marker(marker, environment, variant))


def reduce_marker(marker: str, variant: VariantEnvironment) -> bool | str:
    """Evaluate only the variant comparisons of ``marker``: ``True``/``False`` when that decides it, else the
    marker that is left (every other comparison kept for the installer to evaluate).

    PEP 825 (Backwards Compatibility) suggests exactly this partial evaluation for wheels meant for installers
    that do not know the variant variables."""
    result = _Parser(marker, {}, variant, residual=True).parse_residual()
    return result if isinstance(result, bool) else result[0]


def plain_requirement(requirement: str, variant: VariantEnvironment) -> str | None:
    """``requirement`` with its variant comparisons evaluated for ``variant``; ``None`` when they rule it out.

    A requirement whose marker uses no variant variable is returned unchanged, byte for byte."""
    head, marker = _split(requirement)
    if marker is None or not _VARIANT_NAMES.search(marker):
        return requirement
    rest = reduce_marker(marker, variant)
    if rest is False:
        return None
    if rest is True:
        return head
    return f"{head} ; {rest}" if "@" in head else f"{head}; {rest}"


def _split(requirement: str) -> tuple[str, str | None]:
    if "@" in requirement.partition(";")[0]:
        # URL requirements: the marker separator must follow whitespace (PEP 508).
        m = re.search(r"\s;", requirement)
        if m is None:
            return requirement.strip(), None
        return requirement[: m.start()].strip(), requirement[m.end() :].strip()
    head, sep, marker = requirement.partition(";")
    return head.strip(), (marker.strip() if sep else None)


def evaluate_marker(marker: str, environment: Mapping[str, str], variant: VariantEnvironment) -> bool:
    """Evaluate a PEP 508 marker that may use the variant variables."""
    return _Parser(marker, environment, variant).parse()


class _Parser:
    """Recursive descent over PEP 508's marker grammar. With ``residual`` it evaluates the variant comparisons
    only and returns the rest as text (:data:`_Residual`); otherwise every comparison, to a bool."""

    def __init__(
        self, text: str, environment: Mapping[str, str], variant: VariantEnvironment, *, residual: bool = False
    ) -> None:
        self.text = text
        self.env = {"extra": "", **environment}
        self.variant = variant
        self.residual = residual
        self.tokens = self._tokenize(text)
        self.pos = 0
        self.depth = 0

    def fail(self, problem: str) -> VariantError:
        return VariantError(f"marker {self.text!r}: {problem}")

    def _tokenize(self, text: str) -> list[tuple[str, str]]:
        out: list[tuple[str, str]] = []
        pos = 0
        while pos < len(text):
            if text[pos:].strip() == "":
                break
            m = _TOKEN_RE.match(text, pos)
            if m is None or m.end() == pos:
                raise self.fail(f"cannot read it at {text[pos : pos + 20]!r}")
            kind = m.lastgroup or ""
            out.append((kind, m[kind]))
            pos = m.end()
        return out

    def peek(self) -> tuple[str, str] | None:
        return self.tokens[self.pos] if self.pos < len(self.tokens) else None

    def take(self) -> tuple[str, str]:
        tok = self.peek()
        if tok is None:
            raise self.fail("ends too early")
        self.pos += 1
        return tok

    def parse(self) -> bool:
        result = self.parse_residual()
        if not isinstance(result, bool):  # only a parser made with residual=True leaves text
            raise TypeError("parse() of a residual parser: call parse_residual()")
        return result

    def parse_residual(self) -> _Residual:
        result = self.parse_or()
        if self.peek() is not None:
            raise self.fail(f"unexpected {self.peek()[1]!r}")  # type: ignore[index]
        return result

    def parse_or(self) -> _Residual:
        result = self.parse_and()
        while self.peek() == ("word", "or"):
            self.take()
            result = _or(result, self.parse_and())
        return result

    def parse_and(self) -> _Residual:
        result = self.parse_atom()
        while self.peek() == ("word", "and"):
            self.take()
            result = _and(result, self.parse_atom())
        return result

    def parse_atom(self) -> _Residual:
        if self.peek() == ("paren", "("):
            self.take()
            self.depth += 1
            if self.depth > MAX_NESTING:
                raise self.fail(f"parentheses nested deeper than {MAX_NESTING}")
            result = self.parse_or()
            self.depth -= 1
            if self.peek() != ("paren", ")"):
                raise self.fail("missing ')'")
            self.take()
            return result
        lhs = self.operand()
        op = self.operator()
        rhs = self.operand()
        return self.compare(lhs, op, rhs)

    def operand(self) -> tuple[str, str]:
        kind, value = self.take()
        if kind == "str":
            return ("str", value[1:-1])
        if kind == "word" and value not in ("and", "or", "in", "not"):
            return ("var", value)
        raise self.fail(f"expected a variable or a quoted string, found {value!r}")

    def operator(self) -> str:
        kind, value = self.take()
        if kind == "op" or value == "in":
            return value
        if value == "not" and self.take() == ("word", "in"):
            return "not in"
        raise self.fail(f"expected a comparison operator, found {value!r}")

    def compare(self, lhs: tuple[str, str], op: str, rhs: tuple[str, str]) -> _Residual:
        names = {lhs[1] if lhs[0] == "var" else None, rhs[1] if rhs[0] == "var" else None}
        if "variant_label" in names or names & set(_SET_NAMES):
            return self.compare_variant(lhs, op, rhs)
        expr = f"{_render(lhs)} {op} {_render(rhs)}"
        if self.residual:
            return (expr, False)
        try:
            return Marker(expr).evaluate(self.env)
        except (InvalidMarker, UndefinedComparison, UndefinedEnvironmentName) as exc:
            raise self.fail(f"{expr!r} cannot be evaluated ({first_line(exc)})") from None

    def compare_variant(self, lhs: tuple[str, str], op: str, rhs: tuple[str, str]) -> bool:
        if lhs[0] == "var" and rhs[0] == "var":
            raise self.fail("compare a variant variable with a quoted string")
        if rhs[0] == "var" and rhs[1] in _SET_NAMES:
            if op not in ("in", "not in"):
                raise self.fail(f"{rhs[1]} is a set: use 'in' or 'not in'")
            found = _normal(rhs[1], lhs[1]) in self.set_value(rhs[1])
            return found if op == "in" else not found
        if lhs[0] == "var" and lhs[1] in _SET_NAMES:
            raise self.fail(f"{lhs[1]} is a set: write '\"value\" in {lhs[1]}'")
        label = self.variant.label
        left, right = (label, rhs[1]) if lhs[0] == "var" else (lhs[1], label)
        if op == "==":
            return left == right
        if op == "!=":
            return left != right
        if op == "in":
            return left in right
        if op == "not in":
            return left not in right
        raise self.fail(f"variant_label supports ==, !=, in and not in, not {op!r}")

    def set_value(self, name: str) -> frozenset[str]:
        if name == "variant_namespaces":
            return self.variant.namespaces
        if name == "variant_features":
            return self.variant.features
        return self.variant.properties


def _and(left: _Residual, right: _Residual) -> _Residual:
    if left is False or right is False:
        return False
    if left is True:
        return right
    if right is True:
        return left
    return (f"{_grouped(left)} and {_grouped(right)}", False)


def _or(left: _Residual, right: _Residual) -> _Residual:
    if left is True or right is True:
        return True
    if left is False:
        return right
    if right is False:
        return left
    return (f"{left[0]} or {right[0]}", True)


def _grouped(part: tuple[str, bool]) -> str:
    text, is_or = part
    return f"({text})" if is_or else text


def _normal(name: str, literal: str) -> str:
    """Whitespace around ``::`` is insignificant; a literal that is no feature/property matches nothing."""
    try:
        if name == "variant_features":
            return feature_key(literal)
        if name == "variant_properties":
            return str(VariantProperty.parse(literal))
    except VariantError:
        return literal
    return literal.strip()


def _render(operand: tuple[str, str]) -> str:
    kind, value = operand
    if kind == "var":
        return value
    return f'"{value}"' if "'" in value else f"'{value}'"
