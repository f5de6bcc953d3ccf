"""gfx1250 (AMD Instinct MI450): pytorch/pytorch#196610 put it in the nightly wheel arch list before the 2.15 branch
cut, so the knowledge base lists it, uncertain (U), in the rocm7.14 and rocm10.0 builds of 2.15 and its later lines.
Before, ``--target rocm=gfx1250`` was refused as unknown and an MI450 could only have the CPU build."""

from __future__ import annotations

from wheelfit import api
from wheelfit.kb.notes import device_note
from wheelfit.probe.target import load_target

MI450 = "rocm=gfx1250,python=3.12"


def test_an_mi450_plans_a_rocm_build_offline() -> None:
    p = api.plan(["torch"], api.Target(load_target(MI450)), api.PlanOptions(), environ={}, network=None)
    assert (p.torch_version, p.variant) == ("2.15.0", "rocm7.14")  # rocm10.0 is not advertised for 2.15
    torch = p.packages[0]
    assert torch.confidence == "U"
    (kernels,) = [f for f in torch.uncertain if f.what.startswith("the kernels")]
    assert kernels.confidence == "U" and "PT-196610" in kernels.source and "gfx1250" in kernels.source
    assert any("gfx1250" in r for r in p.reasons)


def test_the_device_note_names_the_mi450() -> None:
    (gpu,) = load_target(MI450).accelerators
    note = device_note(gpu)
    assert note.startswith("gfx1250: AMD Instinct MI450") and "2.15" in note and "unverified" in note
