"""Variant metadata in every schema generation, and refusal of what cannot be read (always a VariantError)."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from wheelfit.variants import VariantError
from wheelfit.variants.metadata import loads, parse_dist_info, parse_variants_json

from .oracle import TORCH_FILES

V002 = "https://variants-schema.wheelnext.dev/v0.0.2.json"
V003 = "https://variants-schema.wheelnext.dev/v0.0.3.json"
V011 = "https://variants-schema.wheelnext.dev/peps/825/v0.1.1.json"
V020 = "https://variants-schema.wheelnext.dev/v0.2.0.json"


def test_torch_2_8_uses_the_hash_era_null_label(realdata: Path) -> None:
    meta = loads((realdata / "torch-2.8.0-variants.json").read_bytes(), "torch-2.8.0-variants.json")
    assert meta.generation == "0.0" and meta.schema_version == (0, 0, 3)
    assert set(meta.variants) == {"00000000", "cu126", "cu128", "cu129"}
    assert meta.variants["00000000"].is_null
    assert meta.variants["cu128"].features["nvidia"]["cuda_version_lower_bound"] == ("12.8",)
    assert "120_virtual" in meta.variants["cu129"].features["nvidia"]["sm_arch"]
    nvidia = meta.providers["nvidia"]
    assert nvidia.enable_if == "platform_system == 'Linux' or platform_system == 'Windows'"
    assert not nvidia.is_static and nvidia.requires == ("nvidia-variant-provider>=0.0.1,<1.0.0",)


@pytest.mark.parametrize("name", TORCH_FILES[1:])
def test_torch_2_9_and_later_rank_with_a_static_priority_namespace(realdata: Path, name: str) -> None:
    data = json.loads((realdata / name).read_text())
    meta = parse_variants_json(data, name)
    assert meta.namespace_order == ("nvidia", "intel", "amd", "priority")
    assert meta.providers["priority"].static_properties == {"order": ("1", "2", "3")}
    assert meta.providers["amd"].enable_if == "platform_system == 'Linux'"
    assert meta.variants["cuda12.8"].features["priority"] == {"order": ("2",)}
    assert meta.variants["null"].is_null
    assert set(meta.variants) == set(data["variants"])
    # 2.9 also lists the priority order in default-priorities.property; 2.10 dropped it.
    expected = {"priority": {"order": ("1", "2", "3")}} if name == "torch-2.9.0-variants.json" else {}
    assert meta.value_order == expected


def test_v002_plugin_less_namespace_takes_values_from_property_priorities() -> None:
    meta = parse_variants_json(
        {
            "$schema": V002,
            "default-priorities": {
                "namespace": ["nvidia", "priority"],
                "property": {"priority": {"order": ["1", "2"]}},
            },
            "providers": {
                "nvidia": {"requires": ["nvidia-variant-provider"], "plugin-use": "all"},
                "priority": {"plugin-use": "none"},
            },
            "variants": {"a": {"priority": {"order": ["2"]}}, "null": {}},
        }
    )
    assert meta.providers["priority"].static_properties == {"order": ("1", "2")}
    assert not meta.providers["nvidia"].is_static


def test_v003_static_features_follow_the_feature_priorities() -> None:
    """PEP 817: with several static features, default-priorities.feature orders them."""
    meta = parse_variants_json(
        {
            "$schema": V003,
            "default-priorities": {"namespace": ["blas_lapack"], "feature": {"blas_lapack": ["provider", "abi"]}},
            "providers": {"blas_lapack": {"install-time": False, "requires": ["blas-lapack-variant-provider"]}},
            "static-properties": {"blas_lapack": {"abi": ["lp64"], "provider": ["mkl", "openblas"]}},
            "variants": {"mkl": {"blas_lapack": {"provider": ["mkl"], "abi": ["lp64"]}}},
        }
    )
    assert list(meta.providers["blas_lapack"].static_properties or {}) == ["provider", "abi"]
    assert meta.feature_order == {"blas_lapack": ("provider", "abi")}


def test_pep825_example_has_no_providers() -> None:
    """The inline metadata of PEP 825's pylock.toml example."""
    meta = parse_variants_json(
        {
            "$schema": V011,
            "default-priorities": {"namespace": ["x86_64", "aarch64", "blas_lapack"]},
            "variants": {
                "null": {},
                "x86_64_v3_openblas": {"blas_lapack": {"library": ["openblas"]}, "x86_64": {"level": ["v3"]}},
            },
        }
    )
    assert meta.generation == "0.1" and meta.providers == {}
    assert meta.variants["x86_64_v3_openblas"].namespaces == ("blas_lapack", "x86_64")


MAKE_VARIANT_OUTPUT: dict[str, Any] = {  # variantlib 0.2.2 make-variant output, recorded from a run
    "$schema": V020,
    "default-priorities": {"namespace": ["nvidia", "priority"]},
    "providers": {
        "nvidia": {
            "plugin-api": "nvidia_variant_provider.plugin:NvidiaVariantPlugin",
            "requires": ["nvidia-variant-provider>=0.0.2,<1.0.0"],
        },
        "priority": {"static-properties": {"order": ["1", "2"]}},
    },
    "variants": {
        "cu128": {
            "nvidia": {"cuda_version_lower_bound": ["12.0"], "sm_arch": ["80_real", "90_real"]},
            "priority": {"order": ["2"]},
        }
    },
}


def test_v020_dist_info_variant_json() -> None:
    meta = parse_dist_info(json.dumps(MAKE_VARIANT_OUTPUT), "demo-1.0.dist-info/variant.json", label="cu128")
    assert meta.generation == "0.2"
    assert meta.providers["priority"].static_properties == {"order": ("1", "2")}
    assert meta.providers["nvidia"].plugin_api == "nvidia_variant_provider.plugin:NvidiaVariantPlugin"
    with pytest.raises(VariantError, match="filename says 'cu126'"):
        parse_dist_info(MAKE_VARIANT_OUTPUT, "variant.json", label="cu126")


def test_v020_feature_order_applies_to_static_features() -> None:
    data: dict[str, Any] = copy.deepcopy(MAKE_VARIANT_OUTPUT)
    data["providers"]["priority"] = {"static-properties": {"a": ["x"], "b": ["y"]}, "feature-order": ["b", "a"]}
    data["variants"]["cu128"]["priority"] = {"a": ["x"]}
    meta = parse_variants_json(data)
    assert list(meta.providers["priority"].static_properties or {}) == ["b", "a"]
    assert meta.feature_order["priority"] == ("b", "a")


def test_dist_info_with_several_variants_is_refused(realdata: Path) -> None:
    with pytest.raises(VariantError, match="exactly one variant, not 7"):
        parse_dist_info((realdata / "torch-2.9.0-variants.json").read_text())


def test_newer_minor_is_read_unknown_major_is_refused() -> None:
    newer = dict(MAKE_VARIANT_OUTPUT, **{"$schema": "https://variants-schema.wheelnext.dev/v0.3.0.json", "new-key": 1})
    assert parse_variants_json(newer).generation == "0.2"
    final = dict(
        MAKE_VARIANT_OUTPUT, **{"$schema": "https://packaging.python.org/en/latest/specifications/variants/v1.0.0.json"}
    )
    with pytest.raises(
        VariantError, match=r"schema version 1\.0\.0 is not supported \(this wheelfit reads 0\.x\); upgrade"
    ):
        parse_variants_json(final, "x-variants.json")


def _set(path: str, value: Any) -> Any:
    def mutate(data: dict[str, Any]) -> None:
        *parents, last = path.split("/")
        node: Any = data
        for key in parents:
            node = node[key]
        if value is _DELETE:
            del node[last]
        else:
            node[last] = value

    return mutate


_DELETE = object()


@pytest.mark.parametrize(
    ("mutation", "fragment"),
    [
        (_set("$schema", _DELETE), "missing '$schema'"),
        (_set("$schema", 3), "$schema: expected a string, got number 3"),
        (_set("$schema", "https://example.org/schema.json"), "'https://example.org/schema.json' does not match"),
        (_set("default-priorities", [1]), "default-priorities: expected an object, got a list"),
        (_set("default-priorities/namespace", _DELETE), "default-priorities: missing 'namespace'"),
        (_set("default-priorities/namespace", "nvidia"), "priorities.namespace: expected a list, got string 'nvidia'"),
        (
            _set("default-priorities/namespace", ["nvidia", "intel", "amd"]),
            "'priority' is missing from default-priorities.namespace",
        ),
        (_set("providers", _DELETE), "variants.json: missing 'providers'"),
        (
            _set("providers/nvidia/enable-if", True),
            "providers.nvidia.enable-if: expected a string, got boolean true",
        ),
        (_set("providers/nvidia/install-time", "yes"), "providers.nvidia.install-time: expected true or false"),
        (_set("providers/nvidia/requires", [None]), "providers.nvidia.requires[0]: expected a string, got null"),
        (_set("static-properties/priority/order", {"1": 1}), "static-properties.priority.order: expected a list"),
        (_set("variants", None), "variants: expected an object, got null"),
        (_set("variants/Cuda", {}), "variants: 'Cuda' does not match '^[0-9a-z_.]+$'"),
        (_set("variants/xpu", {}), "variants.xpu: has no properties"),
        (_set("variants/null", {"nvidia": {"sm_arch": ["90_real"]}}), "'null' is reserved for the null variant"),
        (_set("variants/xpu/intel/device_ip", []), "variants.xpu.intel.device_ip: [] should be non-empty"),
        (_set("variants/xpu/intel/device_ip", ["20.1.0", 5]), "device_ip[1]: expected a string, got number 5"),
        (_set("variants/xpu/intel/Device", ["1"]), "variants.xpu.intel: 'Device' does not match '^[a-z0-9_]+$'"),
        (_set("variants/xpu/intel/device_ip", ["20 1"]), "variants.xpu.intel.device_ip[0]: '20 1' does not match"),
        (_set("variants/xpu/intel", ["20.1.0"]), "variants.xpu.intel: expected an object, got a list"),
    ],
)
def test_malformed_files_give_one_line_errors(realdata: Path, mutation: Any, fragment: str) -> None:
    data = json.loads((realdata / "torch-2.9.0-variants.json").read_text())
    mutation(data)
    with pytest.raises(VariantError) as info:
        parse_variants_json(data, "torch-2.9.0-variants.json")
    message = str(info.value)
    assert fragment in message and message.startswith("torch-2.9.0-variants.json: ")
    assert "\n" not in message


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        (b"", "not valid JSON"),
        (b"\xff\xfe{", "not UTF-8"),
        (b"[" * 100000, "nested too deeply"),
        (b"[]", "^f.json: expected an object, got a list$"),
    ],
)
def test_undecodable_documents(text: bytes, fragment: str) -> None:
    with pytest.raises(VariantError, match=fragment):
        loads(text, "f.json")


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(cut=st.integers(min_value=0, max_value=4673))
def test_truncated_json_never_crashes(realdata: Path, cut: int) -> None:
    text = (realdata / "torch-2.9.0-variants.json").read_bytes()[:cut]
    with pytest.raises(VariantError):
        loads(text, "t.json")


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=8,
)


def _paths(node: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [prefix]
    if isinstance(node, dict):
        for k, v in node.items():
            out += _paths(v, (*prefix, k))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            out += _paths(v, (*prefix, i))
    return out


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_any_node_replaced_by_any_value_parses_or_is_a_variant_error(realdata: Path, data: st.DataObject) -> None:
    doc = json.loads((realdata / "torch-2.10.0-variants.json").read_text())
    paths = _paths(doc)[1:]
    path = data.draw(st.sampled_from(paths))
    node: Any = doc
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = data.draw(_JSON)
    try:
        parse_variants_json(doc)
    except VariantError as exc:
        assert "\n" not in str(exc)
