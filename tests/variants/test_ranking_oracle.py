"""The heart: on PyTorch's published metadata, wheelfit's order equals variantlib's for the same hardware.

A grid of machines (NVIDIA driver x compute capability, AMD gfx x ROCm, Intel device
IPs, none, and mixes) is described as the reference providers would report it; the
same configs go to variantlib 0.2.2's sort/filter API and to wheelfit's ranking.

By default a fixed sample of the grid runs (:data:`SAMPLE`: the cases named in :data:`ALWAYS` and a seeded
``random.Random(0)`` draw of eight of the rest), and a test checks that the sample still meets every kind of answer
the oracle gives. The whole grid (about 460 tests) is marked ``full_grid`` and runs with
``pytest --full-grid`` (or ``pytest --full-grid -m full_grid`` for only the cases the sample leaves out).
"""

from __future__ import annotations

import itertools
import random
from pathlib import Path

import pytest

from wheelfit.variants.metadata import parse_variants_json
from wheelfit.variants.ranking import rank_variants

from .oracle import TORCH_FILES, Configs, amd, intel, nvidia, raw, variantlib_order

LINUX = {"platform_system": "Linux", "platform_machine": "x86_64", "sys_platform": "linux", "os_name": "posix"}
WINDOWS = {"platform_system": "Windows", "platform_machine": "AMD64", "sys_platform": "win32", "os_name": "nt"}
DARWIN = {"platform_system": "Darwin", "platform_machine": "arm64", "sys_platform": "darwin", "os_name": "posix"}

DRIVERS = [(11, 8), (12, 0), (12, 4), (12, 6), (12, 8), (12, 9), (13, 0), (13, 1), (15, 20)]
CCS = [(3, 7), (5, 0), (6, 1), (7, 0), (7, 5), (8, 0), (8, 6), (8, 9), (9, 0), (10, 0), (12, 0)]
AMDS = [
    (["gfx942"], "7.1"),
    (["gfx942"], "6.4"),
    (["gfx90a", "gfx942"], "7.0"),
    (["gfx950"], "7.1"),
    (["gfx1151"], "7.0"),
    (["gfx1100"], "6.3"),
    (["gfx803"], "7.1"),
    (["gfx1201", "gfx1100"], "7.2"),
]
INTELS = [["20.1.0"], ["12.55.8"], ["30.0.4"], ["20.4.4", "20.1.0"], ["12.10.0"]]


def _grid() -> list[tuple[str, Configs]]:
    cases: list[tuple[str, Configs]] = [("no accelerator", {})]
    cases += [(f"nvidia umd={d} cc={c}", {"nvidia": nvidia(d, c)}) for d, c in itertools.product(DRIVERS, CCS)]
    cases += [(f"amd {g} rocm {r}", {"amd": amd(g, r)}) for g, r in AMDS]
    cases += [(f"intel {ips}", {"intel": intel(ips)}) for ips in INTELS]
    # Mixed machines: every namespace pair, a few representatives each.
    for d, c in [((13, 0), (9, 0)), ((12, 4), (8, 6)), ((12, 9), (12, 0))]:
        for g, r in AMDS[:3]:
            cases.append((f"nvidia {d}/{c} + amd {g}/{r}", {"nvidia": nvidia(d, c), "amd": amd(g, r)}))
        for ips in INTELS[:2]:
            cases.append((f"nvidia {d}/{c} + intel {ips}", {"nvidia": nvidia(d, c), "intel": intel(ips)}))
    cases.append(
        ("all three", {"nvidia": nvidia((13, 0), (8, 9)), "amd": amd(["gfx942"], "7.1"), "intel": intel(["20.1.0"])})
    )
    # A provider that ran and found nothing, as the reference does without a GPU.
    cases.append(("nvidia empty", {"nvidia": []}))
    return cases


GRID = _grid()
#: Always in the sample: for each metadata file, on Linux and on Windows, one machine per distinct answer of the
#: oracle (the first in grid order; ``test_the_sample_meets_every_answer_of_the_grid`` checks it under
#: ``--full-grid``), and the edges: a provider that found nothing, the oldest and newest driver and GPU, Intel and
#: AMD GPUs no build supports.
ALWAYS = (
    "no accelerator",
    "nvidia empty",
    "all three",
    "nvidia umd=(11, 8) cc=(3, 7)",
    "nvidia umd=(12, 0) cc=(5, 0)",
    "nvidia umd=(12, 0) cc=(7, 0)",
    "nvidia umd=(12, 0) cc=(10, 0)",
    "nvidia umd=(12, 8) cc=(7, 0)",
    "nvidia umd=(12, 8) cc=(10, 0)",
    "nvidia umd=(12, 9) cc=(7, 0)",
    "nvidia umd=(12, 9) cc=(10, 0)",
    "nvidia umd=(13, 0) cc=(7, 5)",
    "nvidia umd=(13, 0) cc=(10, 0)",
    "nvidia umd=(15, 20) cc=(12, 0)",
    "amd ['gfx942'] rocm 7.1",
    "amd ['gfx942'] rocm 6.4",
    "amd ['gfx90a', 'gfx942'] rocm 7.0",
    "amd ['gfx1100'] rocm 6.3",
    "amd ['gfx803'] rocm 7.1",
    "intel ['20.1.0']",
    "intel ['30.0.4']",
    "nvidia (13, 0)/(9, 0) + amd ['gfx942']/7.1",
    "nvidia (13, 0)/(9, 0) + amd ['gfx942']/6.4",
    "nvidia (13, 0)/(9, 0) + amd ['gfx90a', 'gfx942']/7.0",
    "nvidia (13, 0)/(9, 0) + intel ['20.1.0']",
    "nvidia (12, 4)/(8, 6) + amd ['gfx942']/7.1",
    "nvidia (12, 4)/(8, 6) + amd ['gfx942']/6.4",
    "nvidia (12, 4)/(8, 6) + amd ['gfx90a', 'gfx942']/7.0",
    "nvidia (12, 4)/(8, 6) + intel ['20.1.0']",
    "nvidia (12, 9)/(12, 0) + amd ['gfx942']/7.1",
    "nvidia (12, 9)/(12, 0) + amd ['gfx942']/6.4",
    "nvidia (12, 9)/(12, 0) + amd ['gfx90a', 'gfx942']/7.0",
    "nvidia (12, 9)/(12, 0) + intel ['20.1.0']",
)
_DRAWN = set(random.Random(0).sample(sorted(c for c, _ in GRID if c not in ALWAYS), 8))  # noqa: S311 - a fixed draw
SAMPLE = [(c, configs) for c, configs in GRID if c in ALWAYS or c in _DRAWN]
assert {c for c, _ in SAMPLE} >= set(ALWAYS)


def _cases(grid: list[tuple[str, Configs]]) -> list[object]:
    """The grid as parameters: the cases outside :data:`SAMPLE` marked ``full_grid`` (run with ``--full-grid``)."""
    sample = {c for c, _ in SAMPLE}
    return [pytest.param(c, configs, id=c, marks=() if c in sample else pytest.mark.full_grid) for c, configs in grid]


def _ours(realdata: Path, name: str, configs: Configs, env: dict[str, str]) -> list[str]:
    meta = parse_variants_json(raw(realdata, name), name)
    ranking = rank_variants(meta, configs, environment=env)
    assert {r.label for r in ranking.compatible} | {e.label for e in ranking.incompatible} == set(meta.variants)
    return ["null" if label == "00000000" else label for label in ranking.labels]


@pytest.mark.parametrize("name", TORCH_FILES)
@pytest.mark.parametrize(("case", "configs"), _cases(GRID))
def test_order_equals_variantlib_on_linux(realdata: Path, name: str, case: str, configs: Configs) -> None:
    expected = variantlib_order(raw(realdata, name), configs)
    assert _ours(realdata, name, configs, LINUX) == expected, case


WINDOWS_GRID = [case for case in GRID if "amd" in case[1] or case[0] in ("all three", "no accelerator")]


@pytest.mark.parametrize("name", TORCH_FILES)
@pytest.mark.parametrize(("case", "configs"), _cases(WINDOWS_GRID))
def test_enable_if_disables_amd_on_windows(realdata: Path, name: str, case: str, configs: Configs) -> None:
    """``amd`` is enabled only on Linux: on Windows its namespace counts as unsupported whatever the GPU."""
    expected = variantlib_order(raw(realdata, name), configs, disabled=frozenset({"amd"}))
    assert _ours(realdata, name, configs, WINDOWS) == expected, case
    assert not any(label.startswith("rocm") for label in expected)


@pytest.mark.parametrize("name", TORCH_FILES)
def test_macos_gets_only_the_null_variant(realdata: Path, name: str) -> None:
    configs = {"nvidia": nvidia((13, 0), (9, 0)), "amd": amd(["gfx942"], "7.1"), "intel": intel(["20.1.0"])}
    assert _ours(realdata, name, configs, DARWIN) == ["null"]


@pytest.mark.parametrize("grid", [SAMPLE, pytest.param(GRID, marks=pytest.mark.full_grid)], ids=["sample", "grid"])
def test_grid_exercises_every_kind_of_outcome(realdata: Path, grid: list[tuple[str, Configs]]) -> None:
    """The grid, and the sample of it that runs by default, are only worth something if the oracle's answers
    differ: GPU labels first, ties, null alone."""
    data = raw(realdata, "torch-2.9.0-variants.json")
    answers = {tuple(variantlib_order(data, configs)) for _, configs in grid}
    assert ("null",) in answers
    assert ("cuda13.0", "cuda12.8", "cuda12.6", "null") in answers
    assert ("cuda12.8", "cuda12.6", "null") in answers  # the priority namespace breaks the 12.0 tie
    assert any(a[0].startswith("rocm") for a in answers)
    assert any(a[0] == "xpu" for a in answers)
    assert len(answers) >= 8


@pytest.mark.full_grid
@pytest.mark.parametrize("name", TORCH_FILES)
def test_the_sample_meets_every_answer_of_the_grid(realdata: Path, name: str) -> None:
    """The sample that runs by default loses no kind of answer: on Linux and on Windows, every ranking the oracle
    gives some machine of the grid, it gives some machine of the sample."""
    data = raw(realdata, name)
    for grid, disabled in ((GRID, frozenset[str]()), (WINDOWS_GRID, frozenset({"amd"}))):
        sample = [case for case in grid if case in SAMPLE]
        answers = {tuple(variantlib_order(data, configs, disabled=disabled)): case for case, configs in grid}
        met = {tuple(variantlib_order(data, configs, disabled=disabled)) for _, configs in sample}
        assert set(answers) == met, {answer: case for answer, case in answers.items() if answer not in met}


@pytest.mark.parametrize(
    ("name", "configs", "expected"),
    [
        # Worked results recorded by running variantlib 0.0.3 (wheelnext/variantlib @ c3f54f3) with the real plugins.
        ("torch-2.9.0-variants.json", {"nvidia": nvidia((12, 8), (9, 0))}, ["cuda12.8", "cuda12.6", "null"]),
        (
            "torch-2.9.0-variants.json",
            {"nvidia": nvidia((13, 0), (9, 0))},
            ["cuda13.0", "cuda12.8", "cuda12.6", "null"],
        ),
        ("torch-2.9.0-variants.json", {"nvidia": nvidia((12, 4), (8, 6))}, ["cuda12.8", "cuda12.6", "null"]),
        ("torch-2.9.0-variants.json", {"nvidia": nvidia((13, 1), (12, 0))}, ["cuda13.0", "cuda12.8", "null"]),
        ("torch-2.9.0-variants.json", {"nvidia": nvidia((12, 9), (10, 0))}, ["cuda12.8", "null"]),
        ("torch-2.9.0-variants.json", {"nvidia": nvidia((11, 8), (8, 0))}, ["null"]),
        ("torch-2.10.0-variants.json", {"amd": amd(["gfx942"], "7.1")}, ["rocm7.1", "null"]),
        ("torch-2.10.0-variants.json", {"intel": intel(["20.1.0"])}, ["xpu", "null"]),
        (
            "torch-2.10.0-variants.json",
            {"nvidia": nvidia((13, 0), (9, 0)), "amd": amd(["gfx942"], "7.1")},
            ["cuda13.0", "cuda12.8", "cuda12.6", "rocm7.1", "null"],
        ),
    ],
)
def test_reference_worked_results(realdata: Path, name: str, configs: Configs, expected: list[str]) -> None:
    assert _ours(realdata, name, configs, LINUX) == expected
