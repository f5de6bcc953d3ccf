"""Fuzz targets: ``*-variants.json`` and ``variant.json`` (every schema generation), variant properties, wheel file
names (with and without a variant label), ``*-variants.json`` file names, dependency markers with the variant
variables, and a variant wheel's ``Requires-Dist`` (issue 15).

Contract (wheelfit.variants, wheelfit.simple.filenames): ``loads``, ``parse_dist_info``, ``VariantProperty.parse``,
``feature_key``, ``parse_wheel_name`` (variants), ``requirement_applies``, ``evaluate_marker``, ``reduce_marker`` and
``dependencies`` return a value or raise ``VariantError`` (a ``WheelfitError``), never anything else; the index's
``parse_wheel_name``, ``metadata_file_version`` and ``legacy_variant`` never raise. What they return holds: labels,
namespaces, features and values follow PEP 825's character rules and every property reads back as itself, a
version round-trips through its string, and two parsers that both read a wheel name agree on its name and version.
"""

from __future__ import annotations

import json

from hypothesis import example, given
from hypothesis import strategies as st
from packaging.version import Version

from wheelfit.candidates.variants import dependencies, metadata_file_version
from wheelfit.simple.filenames import parse_wheel_name as parse_index_wheel_name
from wheelfit.variants import VariantError
from wheelfit.variants.filename import parse_wheel_name
from wheelfit.variants.legacy import legacy_variant
from wheelfit.variants.markers import VariantEnvironment, evaluate_marker, reduce_marker, requirement_applies
from wheelfit.variants.metadata import VariantsMetadata, loads, parse_dist_info
from wheelfit.variants.properties import LABEL_RE, NAMESPACE_RE, VariantProperty, feature_key

from ..conftest import REALDATA
from .strategies import binary_text, junk, mutated_json, near_valid, texts

VARIANTS_FILES = sorted(REALDATA.glob("torch-*-variants.json"))
VARIANTS_TEXT = [p.read_text(encoding="utf-8") for p in VARIANTS_FILES]
VARIANTS = [json.loads(t) for t in VARIANTS_TEXT]
#: A PEP 825 (0.1) and a providers-draft (0.2) document, so every generation is mutated.
VARIANTS += [
    {
        "$schema": "https://variants-schema.wheelnext.dev/peps/825/v0.1.0.json",
        "default-priorities": {"namespace": ["nvidia"]},
        "variants": {"cu128": {"nvidia": {"cuda_version_lower_bound": ["12.8"], "sm_arch": ["90_real"]}}, "null": {}},
    },
    {
        "$schema": "https://variants-schema.wheelnext.dev/v0.2.0.json",
        "default-priorities": {"namespace": ["x86_64", "nvidia"]},
        "providers": {
            "x86_64": {"requires": ["provider-x86-64"], "static-properties": {"level": ["v3", "v2"]}},
            "nvidia": {"requires": ["nvidia-variant-provider"], "plugin-api": "nvidia_variant_provider.plugin:Plugin"},
        },
        "variants": {"v3": {"x86_64": {"level": ["v3"]}}, "null": {}},
    },
]
WHEELS = [
    "torch-2.9.0-cp312-cp312-manylinux_2_28_x86_64-cuda12.8.whl",
    "torch-2.8.0-cp312-cp312-manylinux_2_28_x86_64-00000000.whl",
    "torch-2.10.0-3-cp312-cp312-manylinux_2_28_x86_64.whl",
    "torch-2.8.0+cu126-cp312-cp312-win_amd64.whl",
    "numpy-2.1.0-cp312-cp312-macosx_14_0_arm64.whl",
    "nvidia_cublas-12.8.4.1-py3-none-manylinux_2_27_x86_64.manylinux_2_28_x86_64.whl",
]
REQUIREMENTS = [
    "nvidia-cublas==12.8.4.1; platform_system == 'Linux' and variant_label == 'cuda12.8'",
    "nvidia-nccl==2.27.5; platform_system == 'Linux' and 'nvidia :: cuda_version_lower_bound :: 12.0' in "
    "variant_properties",
    "triton==3.5.0; platform_system == 'Linux' and 'nvidia' in variant_namespaces",
    'pytorch-triton-rocm==3.5.0; platform_system == "Linux" and "amd" in variant_namespaces',
    "intel-sycl-rt; 'intel' in variant_namespaces or ('nvidia::sm_arch' not in variant_features)",
    "demo @ https://example.org/demo.whl#sha256=ab;c ; 'x' in variant_namespaces",
    "filelock",
]
LINUX = {
    "platform_system": "Linux",
    "platform_machine": "x86_64",
    "sys_platform": "linux",
    "python_version": "3.12",
    "python_full_version": "3.12.4",
    "os_name": "posix",
    "implementation_name": "cpython",
}
CUDA = VariantEnvironment.from_properties(
    "cuda12.8", ["nvidia :: cuda_version_lower_bound :: 12.0", "nvidia :: sm_arch :: 90_real"]
)
ENVIRONMENTS = st.sampled_from([VariantEnvironment(), CUDA, VariantEnvironment.from_properties("null", [])])


def _check(meta: VariantsMetadata) -> None:
    assert meta.schema_version[0] == 0 and meta.generation in ("0.0", "0.1", "0.2")
    assert len(set(meta.namespace_order)) == len(meta.namespace_order)
    assert all(NAMESPACE_RE.fullmatch(ns) for ns in meta.namespace_order)
    for label, variant in meta.variants.items():
        assert label == variant.label and LABEL_RE.fullmatch(label), label
        assert all(ns in meta.namespace_order for ns in variant.namespaces), variant
        for prop in variant.properties():
            assert VariantProperty.parse(str(prop)) == prop, prop
    for provider in meta.providers.values():
        for values in (provider.static_properties or {}).values():
            assert len(set(values)) == len(values)


@given(mutated_json(VARIANTS) | texts(VARIANTS_TEXT) | binary_text())
@example("[" * 5000)
@example('{"$schema": "https://x/v0.0.3.json", "default-priorities": {"namespace": ["a"]}, "providers": {"a": 1}}')
def test_a_variants_json_is_metadata_or_a_variant_error(text: str) -> None:
    try:
        meta = loads(text, "torch-2.9.0-variants.json")
    except VariantError as exc:
        assert str(exc).startswith("torch-2.9.0-variants.json") and "\n" not in str(exc)
        return
    _check(meta)


@given(mutated_json(VARIANTS), st.none() | st.sampled_from(["null", "cu128", "v3", "cuda12.8"]))
def test_a_dist_info_variant_json_is_one_variant_or_a_variant_error(text: str, label: str | None) -> None:
    try:
        meta = parse_dist_info(text, "variant.json", label)
    except VariantError:
        return
    _check(meta)
    assert len(meta.variants) == 1 and (label is None or label in meta.variants)


PROPERTY_PARTS = st.sampled_from(["nvidia", "sm_arch", "90_real", "12.0", "x86_64", "::", " :: "]) | junk()


@given(st.lists(PROPERTY_PARTS, max_size=6).map("".join) | st.text(max_size=40))
@example("nvidia :: sm_arch :: 90_real\n")
@example("a::b::c")
def test_a_property_or_feature_reads_back_as_itself(text: str) -> None:
    try:
        prop = VariantProperty.parse(text)
    except VariantError:
        pass
    else:
        assert VariantProperty.parse(str(prop)) == prop
    try:
        key = feature_key(text)
    except VariantError:
        return
    assert feature_key(key) == key


@given(near_valid(WHEELS) | st.text(max_size=80) | st.sampled_from(WHEELS).map(lambda w: w.replace("-", "--", 1)))
@example("torch-2.9.0-cp312-cp312-manylinux_2_28_x86_64-CUDA.whl")
@example("é-1.0-py3-none-any.whl")
@example("torch-1..0-py3-none-any.whl")
@example("torch-1.0-" + "9" * 5000 + "-py3-none-any.whl")
@example("torch-" + "9" * 5000 + "-py3-none-any.whl")
@example("torch-1.0-\u0663-py3-none-any.whl")
@example("torch-2.9.0- cp312-cp312-manylinux_2_28_x86_64-cuda12.8.whl")  # found by HYPOTHESIS_PROFILE=fuzz
def test_a_wheel_name_parses_the_same_in_both_parsers_or_is_refused(filename: str) -> None:
    try:
        variant = parse_wheel_name(filename)
    except VariantError as exc:
        assert "\n" not in str(exc)
        variant = None
    plain = parse_index_wheel_name(filename)
    for parsed in (variant, plain):
        if parsed is not None:
            assert Version(str(parsed.version)) == parsed.version
            assert parsed.tags
    if variant is not None:
        assert variant.label is None or LABEL_RE.fullmatch(variant.label)
        assert variant.build is None or variant.build[0] >= 0
        if variant.label is not None:
            assert variant.is_null == (variant.label in ("null", "00000000"))
            legacy = legacy_variant(variant.label)
            assert legacy is None or legacy == "cpu" or legacy.startswith(("cu", "rocm", "xpu"))
    if variant is not None and plain is not None:
        assert (variant.name, variant.version, variant.tags) == (plain.name, plain.version, plain.tags), filename
    if variant is not None and variant.label is None:  # a plain wheel name: packaging must read it too
        assert plain is not None, filename


@given(
    near_valid(["torch-2.10.0-variants.json", "torch_vision-0.25.0.dev1-variants.json"]),
    st.sampled_from(["torch", "torch-vision"]),
)
@example("torch-" + "9" * 5000 + "-variants.json", "torch")
def test_a_variants_file_name_gives_its_version_or_none(filename: str, project: str) -> None:
    version = metadata_file_version(filename, project)
    assert version is None or (filename.endswith("-variants.json") and Version(str(version)) == version)


@given(near_valid(REQUIREMENTS) | st.sampled_from(REQUIREMENTS).map(lambda r: r + " and (" * 3), ENVIRONMENTS)
@example("a; " + "(" * 1000 + "variant_label == ''" + ")" * 1000, VariantEnvironment())
@example("a; 'x' in variant_namespaces and " + "(" * 1000, VariantEnvironment())
@example("a; variant_label == 'x' or python_version ~= 'x'", VariantEnvironment())
@example("demo @ https://example.org/demo.whl#sha256=ab;c ; 'x' in v", VariantEnvironment())  # HYPOTHESIS_PROFILE=fuzz
def test_a_requirement_with_variant_markers_applies_or_is_refused(line: str, env: VariantEnvironment) -> None:
    try:
        req, applies = requirement_applies(line, LINUX, env)
    except VariantError as exc:
        assert "\n" not in str(exc)
        return
    assert req.name
    marker = line.partition(";")[2]
    if marker.strip() and "@" not in line:
        assert evaluate_marker(marker, LINUX, env) is applies
        reduced = reduce_marker(marker, env)
        assert isinstance(reduced, (bool, str))


METADATA = [
    "Metadata-Version: 2.1\nName: torch\nVersion: 2.9.0\n"
    + "".join(f"Requires-Dist: {r}\n" for r in REQUIREMENTS)
    + "Variant-Label: cuda12.8\n\n",
]


@given(near_valid(METADATA).map(str.encode) | st.binary(max_size=400), ENVIRONMENTS)
@example(b"Requires-Dist: \xff\xfe; variant_label == ''\n", VariantEnvironment())
def test_a_wheel_s_dependencies_are_requirements_or_a_variant_error(metadata: bytes, env: VariantEnvironment) -> None:
    try:
        deps = dependencies(metadata, LINUX, env, "torch-2.9.0.metadata")
    except VariantError as exc:
        assert str(exc).startswith("torch-2.9.0.metadata")
        return
    assert all(";" not in d or "@" in d for d in deps)
