"""The pure judgement behind ``wheelfit verify``: what torch says (facts) against a ``--target`` machine and the
knowledge base, for each kind of build. The end-to-end cases (real venvs, uv) are in test_verify_runs_here.py."""

from __future__ import annotations

import pytest

from wheelfit.install.runs_here import judge
from wheelfit.install.verify import Companion, TorchFacts
from wheelfit.kb.matrix import load_knowledge
from wheelfit.probe.target import load_target
from wheelfit.resolve import Machine
from wheelfit.resolve.plan import PackagePin, Plan


def _machine(spec: str) -> Machine:
    return Machine.from_report(load_target(spec, host_python="3.12"))


def _failed(facts: TorchFacts, spec: str) -> list[str]:
    result = judge(facts, _machine(spec), load_knowledge(), machine_from=f"--target {spec}")
    return [c.detail.rsplit(": ", 1)[-1] if c.name == "kernels" else c.detail for c in result.checks if c.ok is False]


ROCM_64 = TorchFacts("2.9.0+rocm6.4", hip="6.4.43484-123eb5128")


@pytest.mark.parametrize(
    ("facts", "spec", "failed"),
    [
        # torch 2.9 rocm6.4 lists gfx942 (MI300) and not gfx1031 (pytorch/pytorch .ci/docker/manywheel, BM-4.1).
        (ROCM_64, "rocm=gfx942", []),
        (ROCM_64, "rocm=gfx1151", ["no kernels for gfx1151 (has gfx900, gfx906, gfx908, gfx90a, gfx942, gfx1030, "
                                   "gfx1100, gfx1101, gfx1102, gfx1200, gfx1201; from the knowledge base's list for "
                                   "torch 2.9.0 rocm6.4 (linux_x86_64))"]),
        # A CPU build beside an NVIDIA GPU has no kernels for it; on a machine without GPUs it is fine.
        (TorchFacts("2.9.0+cpu"), "cuda=8.6,driver=580.95.05", ["a CPU build has no kernels for sm_86 GPUs"]),
        (TorchFacts("2.9.0+cpu"), "os=linux", []),
        # A ROCm build on an NVIDIA machine: the kind of GPU decides before any arch list.
        (ROCM_64, "cuda=8.6,driver=580.95.05", ["a ROCm build has no kernels for sm_86 GPUs"]),
    ],
)  # fmt: skip
def test_kernels_by_kind(facts: TorchFacts, spec: str, failed: list[str]) -> None:
    assert _failed(facts, spec) == failed


def test_torchaudio_is_checked_like_torchvision() -> None:
    facts = TorchFacts(
        "2.9.0+cu128",
        cuda="12.8",
        companions=(
            Companion("torchvision", "0.24.0+cu128", ("torch==2.9.0",)),
            Companion("torchaudio", "2.8.0+cu128", ("torch==2.8.0",)),
        ),
    )
    assert _failed(facts, "cuda=8.6,driver=580.95.05") == [
        "torchaudio 2.8.0+cu128: needs torch==2.8.0, torch is 2.9.0+cu128: install the torchaudio of torch "
        "2.9.0+cu128 (`wheelfit install torch torchaudio`)"
    ]


def test_a_companion_without_a_pin_is_judged_by_the_knowledge_bases_pairing() -> None:
    # torch 2.9.0 pairs with torchvision 0.24.0 (pytorch/pytorch RELEASE.md release compatibility matrix, BM-7.3).
    facts = TorchFacts("2.9.0+cu128", cuda="12.8", companions=(Companion("torchvision", "0.23.0+cu128"),))
    assert _failed(facts, "cuda=8.6,driver=580.95.05") == [
        "torchvision 0.23.0+cu128: torch 2.9.0 pairs with torchvision==0.24.0 (knowledge base): install the "
        "torchvision of torch 2.9.0+cu128 (`wheelfit install torch torchvision`)"
    ]


def test_the_plan_is_a_note_and_a_match_says_so() -> None:
    facts = TorchFacts("2.9.0+cu128", cuda="12.8")
    machine = _machine("cuda=8.6,driver=580.95.05")
    pin = (PackagePin("torch", "2.9.0", "torch==2.9.0+cu128"),)
    same = judge(facts, machine, load_knowledge(), plan=Plan("2.9.0", "cu128", "u", pin, (), platform="linux_x86_64"))
    other = judge(facts, machine, load_knowledge(), plan=Plan("2.9.0", "cu130", "u", pin, (), platform="linux_x86_64"))
    assert (same.ok, same.planned, other.ok, other.planned) == (True, True, True, False)
    assert other.checks[-1].ok is None and "the plan for this machine is torch 2.9.0+cu130" in other.checks[-1].detail
