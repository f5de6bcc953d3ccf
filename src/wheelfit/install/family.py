"""Which packages are "torch-family": taken only from the chosen variant's PyTorch index, never the default index.

A fixed allowlist, not a guess from the index: an attacker who uploads ``torchtriton`` to PyPI must not be able to
make wheelfit route it anywhere (the December 2022 compromise, see the README; pytorch/pytorch#91539 renamed the
package to ``pytorch-triton``; PEP 708 cites the incident).
"""

from __future__ import annotations

from packaging.utils import canonicalize_name

__all__ = ["TORCH_FAMILY", "TORCH_FAMILY_PREFIXES", "is_torch_family"]

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
    }
)

#: Every ``pytorch-triton*`` name is the PyTorch index's own Triton build (``pytorch-triton-rocm``, ...).
TORCH_FAMILY_PREFIXES: tuple[str, ...] = ("pytorch-triton",)


def is_torch_family(name: str) -> bool:
    """True when ``name`` (any spelling) must come from the variant index only."""
    canonical = canonicalize_name(name)
    return canonical in TORCH_FAMILY or canonical.startswith(TORCH_FAMILY_PREFIXES)
