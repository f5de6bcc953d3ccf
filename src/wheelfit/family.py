"""Which packages are "torch-family": taken only from the chosen variant's PyTorch index, never the default index.

A fixed allowlist, not a guess from the index: an attacker who uploads ``torchtriton`` to PyPI must not be able to
make wheelfit route it anywhere (the December 2022 compromise, see the README; pytorch/pytorch#91539 renamed the
package to ``pytorch-triton``; PEP 708 cites the incident).
"""

from __future__ import annotations

from packaging.utils import canonicalize_name

__all__ = ["TORCH_FAMILY", "TORCH_FAMILY_PREFIXES", "is_torch_family"]

#: The gfx targets of the ``rocm-sdk-device-gfx*`` packages the PyTorch index serves for rocm7.14 (test-infra#8445).
_ROCM_DEVICES = (
    "908", "90a", "942", "950", "1010", "1011", "1012", "1030", "1031", "1032", "1033", "1034", "1035", "1036",
    "1100", "1101", "1102", "1103", "1150", "1151", "1152", "1153", "1200", "1201", "1250",
)  # fmt: skip

#: Source: uv ``crates/uv-torch/src/backend.rs::applies_to`` (the 22 "PyTorch source" names), astral-sh/uv at
#: 26a9dd4b; plus ``torchtriton``, the pre-2023 name of ``pytorch-triton``, so that a
#: squatted copy can never come from the default index.
TORCH_FAMILY: frozenset[str] = frozenset(
    {
        "fbgemm-gpu",
        "fbgemm-gpu-genai",
        "pytorch-triton",
        "pytorch-triton-rocm",
        "pytorch-triton-xpu",
        "torch",
        "torch-tensorrt",
        "torchao",
        "torcharrow",
        "torchaudio",
        "torchcodec",
        "torchcsprng",
        "torchdistx",
        "torchrec",
        "torchserve",
        "torchtext",
        "torchtune",
        "torchvision",
        "triton",
        "triton-rocm",
        "triton-xpu",
        "xformers",
        "torchtriton",
        # ROCm 7.14+ torch wheels no longer bundle ROCm: their METADATA requires
        # ``rocm[device-all,libraries]==7.14.*`` (RFC pytorch/pytorch#191688), and ``rocm`` requires
        # ``rocm-sdk-core``, its extras ``rocm-sdk-libraries`` and ``rocm-sdk-device-<gfx>`` (ROCm/TheRock at
        # 89553ce3: build_tools/packaging/python/templates/rocm/src/rocm_sdk/_dist_info.py; the multi-arch
        # layout's arch-neutral libraries name in build_tools/_therock_utils/py_packaging.py). The PyTorch index
        # serves exactly these 28 names under whl/rocm7.14/ (pages whose links point at AMD's
        # repo.amd.com/rocm/whl-multi-arch/ files): pytorch/test-infra s3_management/update_dependencies.py
        # PACKAGES_PER_PROJECT, project "torch_rocm" (#8436, 0be39b58; manage_v2.py PACKAGE_LINKS_ALLOW_LIST,
        # #8445). Not ``rocm-sdk-devel`` or ``rocm-profiler`` (the ``devel``/``profiler`` extras, which torch does
        # not ask for): only AMD's index has them, so the variant index could never give them.
        "rocm",
        "rocm-sdk-core",
        "rocm-sdk-libraries",
        *(f"rocm-sdk-device-gfx{gfx}" for gfx in _ROCM_DEVICES),
    }
)

#: Every ``pytorch-triton*`` name is the PyTorch index's own Triton build (``pytorch-triton-rocm``, ...); every
#: ``rocm-sdk-device-*`` one is a ROCm device-code package, one per gfx target, of which the PyTorch index
#: mirrors all AMD publishes (test-infra#8436), so a gfx added later is routed too.
TORCH_FAMILY_PREFIXES: tuple[str, ...] = ("pytorch-triton", "rocm-sdk-device-")


def is_torch_family(name: str) -> bool:
    """True when ``name`` (any spelling) must come from the variant index only."""
    canonical = canonicalize_name(name)
    return canonical in TORCH_FAMILY or canonical.startswith(TORCH_FAMILY_PREFIXES)
