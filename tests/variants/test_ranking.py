"""Ranking semantics on small hand-written metadata: compatibility, priorities, tie-breaks, providers' state."""

from __future__ import annotations

from typing import Any

import pytest

from wheelfit.variants import VariantError
from wheelfit.variants.metadata import parse_variants_json
from wheelfit.variants.ranking import FeatureConfig, rank_variants

LINUX = {"platform_system": "Linux"}


def meta(variants: dict[str, Any], namespaces: list[str], providers: dict[str, Any] | None = None, **prio: Any) -> Any:
    return parse_variants_json(
        {
            "$schema": "https://variants-schema.wheelnext.dev/v0.0.3.json",
            "default-priorities": {"namespace": namespaces, **prio},
            "providers": providers or {ns: {"requires": [f"{ns}-provider"]} for ns in namespaces},
            "variants": variants,
        }
    )


HW = {"hw": [("arch", ["b", "a"], True), ("ver", ["2", "1"], False)]}


def test_and_across_features_or_across_values() -> None:
    m = meta(
        {
            "both": {"hw": {"arch": ["a", "z"], "ver": ["1"]}},
            "bad_ver": {"hw": {"arch": ["a"], "ver": ["3"]}},
            "bad_arch": {"hw": {"arch": ["y", "z"], "ver": ["2"]}},
            "null": {},
        },
        ["hw"],
    )
    r = rank_variants(m, HW, environment=LINUX)
    assert r.labels == ["both", "null"]
    reasons = {e.label: e.reason for e in r.incompatible}
    assert reasons["bad_ver"].startswith("hw :: ver :: 3 not supported here (supports 2, 1)")
    assert reasons["bad_arch"].startswith("hw :: arch :: y | z not supported here")


def test_value_then_feature_priority_and_more_properties_wins() -> None:
    m = meta(
        {
            "a1": {"hw": {"arch": ["a"], "ver": ["1"]}},
            "b1": {"hw": {"arch": ["b"], "ver": ["1"]}},
            "b2": {"hw": {"arch": ["b"], "ver": ["2"]}},
            "b": {"hw": {"arch": ["b"]}},
            "ab": {"hw": {"arch": ["a", "b"]}},  # best value counts: ties with "b", label breaks the tie
            "v2": {"hw": {"ver": ["2"]}},
            "null": {},
        },
        ["hw"],
    )
    assert rank_variants(m, HW, environment=LINUX).labels == ["b2", "b1", "ab", "b", "a1", "v2", "null"]


def test_explicit_feature_and_value_priorities_come_before_the_providers() -> None:
    m = meta(
        {
            "a1": {"hw": {"arch": ["a"], "ver": ["1"]}},
            "b1": {"hw": {"arch": ["b"], "ver": ["1"]}},
            "a2": {"hw": {"arch": ["a"], "ver": ["2"]}},
        },
        ["hw"],
        feature={"hw": ["ver"]},
        property={"hw": {"arch": ["a"]}},
    )
    assert rank_variants(m, HW, environment=LINUX).labels == ["a2", "a1", "b1"]


def test_namespace_priority_and_the_null_variant_between_variants_and_nothing() -> None:
    m = meta({"x": {"two": {"f": ["v"]}}, "y": {"one": {"f": ["v"]}}, "null": {}}, ["one", "two"])
    configs = {"one": [FeatureConfig("f", ("v",))], "two": [FeatureConfig("f", ("v",))]}
    ranking = rank_variants(m, configs, environment=LINUX)
    assert ranking.labels == ["y", "x", "null"]
    assert ranking.compatible[-1].is_null
    assert rank_variants(m, {}, environment=LINUX).labels == ["null"]


def test_compatible_variants_are_narrowed_to_supported_values() -> None:
    m = meta({"gpu": {"hw": {"arch": ["a", "c", "b"], "ver": ["1"]}}}, ["hw"])
    (ranked,) = rank_variants(m, HW, environment=LINUX).compatible
    assert ranked.variant.features == {"hw": {"arch": ("a", "b"), "ver": ("1",)}}


def test_disabled_optional_and_untrusted_providers() -> None:
    providers = {
        "linux_only": {"requires": ["p"], "enable-if": "platform_system == 'Linux'"},
        "opt": {"requires": ["p"], "optional": True},
        "ext": {"requires": ["p"]},
        "fixed": {"install-time": False},
    }
    m = parse_variants_json(
        {
            "$schema": "https://variants-schema.wheelnext.dev/v0.0.3.json",
            "default-priorities": {"namespace": list(providers)},
            "providers": providers,
            "static-properties": {"fixed": {"f": ["v"]}},
            "variants": {n: {n: {"f": ["v"]}} for n in providers},
        }
    )
    configs = {n: [("f", ["v"], False)] for n in ("linux_only", "opt", "ext")}
    everything = rank_variants(m, configs, environment=LINUX, enable_optional=True)
    assert everything.labels == ["linux_only", "opt", "ext", "fixed"]
    r = rank_variants(m, configs, environment={"platform_system": "Windows"}, untrusted={"ext", "fixed"})
    assert r.labels == ["fixed"]  # static properties need no provider, trusted or not
    assert {e.label: e.reason for e in r.incompatible} == {
        "linux_only": "provider 'linux_only' is disabled here (enable-if: platform_system == 'Linux')",
        "opt": "provider 'opt' is optional and not enabled",
        "ext": "provider 'ext' is not trusted",
    }
    assert rank_variants(m, configs, environment=LINUX, enable_optional=["opt"]).labels == [
        "linux_only",
        "opt",
        "ext",
        "fixed",
    ]
    missing = rank_variants(m, {}, environment=LINUX)
    assert {e.label: e.reason for e in missing.incompatible}["ext"] == "no 'ext' provider is available on this machine"


def test_bad_enable_if_and_bad_provider_output_are_variant_errors() -> None:
    m = meta(
        {"x": {"hw": {"arch": ["a"]}}},
        ["hw"],
        providers={"hw": {"requires": ["p"], "enable-if": "platform_system ==="}},
    )
    with pytest.raises(VariantError, match="not a valid environment marker"):
        rank_variants(m, HW, environment=LINUX)
    ok = meta({"x": {"hw": {"arch": ["a"]}}}, ["hw"])
    with pytest.raises(VariantError, match="provider output for namespace 'hw' is malformed"):
        rank_variants(ok, {"hw": [("arch", [1], True)]}, environment=LINUX)  # type: ignore[list-item]


def test_to_dict_is_the_json_contract() -> None:
    m = meta({"good": {"hw": {"arch": ["a"]}}, "bad": {"hw": {"arch": ["q"]}}, "null": {}}, ["hw"])
    d = rank_variants(m, HW, environment=LINUX).to_dict()
    assert d["compatible"] == ["good", "null"]
    assert d["incompatible"] == [{"label": "bad", "reason": "hw :: arch :: q not supported here (supports b, a)"}]


def test_reserved_abi_dependency_namespace_ranks_last_and_needs_an_installer() -> None:
    m = meta({"x": {"hw": {"arch": ["a"]}, "abi_dependency": {"torch": ["2.9"]}}, "y": {"hw": {"arch": ["a"]}}}, ["hw"])
    assert m.namespace_order == ("hw", "abi_dependency")
    r = rank_variants(m, HW, environment=LINUX)
    assert r.labels == ["y"]
    assert rank_variants(m, {**HW, "abi_dependency": [("torch", ["2.9", "2"], False)]}, environment=LINUX).labels == [
        "x",
        "y",
    ]
