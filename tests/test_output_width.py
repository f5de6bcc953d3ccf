"""What people read, at 80 columns and piped into a log: wrapped at spaces with a hanging indent, no command,
``VAR=value`` or URL split across lines, no line wider than the terminal, no digits coloured one by one, and the
same plain table style the README shows."""

from __future__ import annotations

import re

from tests.support.inprocess import wheelfit_in_process

from .conftest import ROOT, hermetic_env

MACHINES = ROOT / "tests" / "machines"
ANSI = re.compile(r"\x1b\[[0-9;]*m")


def run(*args: str, **env: str) -> list[str]:
    done = wheelfit_in_process(args, hermetic_env(COLUMNS="80", **env))
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines()


def check_width(lines: list[str], tokens: tuple[str, ...]) -> None:
    """No line over 80 columns, and each token whole on one line as often as it is in the text at all."""
    assert lines, "no output"
    too_wide = [line for line in lines if len(line) > 80]
    assert too_wide == []
    joined = " ".join(line.strip() for line in lines)
    for token in tokens:
        assert token in joined, token
        assert sum(line.count(token) for line in lines) == joined.count(token), f"{token} is split across lines"


def test_detect_keeps_the_override_assignment_whole_and_indents_what_wraps() -> None:
    lines = run("detect", "--sysroot", str(MACHINES / "amd-hsa-override" / "root"))
    check_width(lines, ("HSA_OVERRIDE_GFX_VERSION=10.3.0", "avx512_bf16", "gfx1030"))
    # The Machine line (long: the sysroot path) continues under its text, not at column 0.
    first = next(i for i, line in enumerate(lines) if line.startswith("Machine  "))
    assert lines[first + 1].startswith(" " * 9) and lines[first + 1].strip().endswith("amd-hsa-override/root")
    # Plain columns as in the README: no box drawing; the note column's continuation lines start indented.
    assert not any(ch in line for line in lines for ch in "┃│━─┏└")
    head = next(i for i, line in enumerate(lines) if line.startswith("#  Device"))
    note_at = lines[head].index("What it means")
    row = lines[head + 1 :]
    assert row[0].startswith("0  AMD Radeon RX")
    assert all(line[:3] == "   " and line[note_at - 1] == " " for line in row[1:])  # the device name wraps too
    arch_at = lines[head].index("Architecture")
    assert " ".join(line[3:arch_at] for line in row).split() == ["AMD", "Radeon", "RX", "6700", "XT"]
    assert any("HSA_OVERRIDE_GFX_VERSION=10.3.0" in line[note_at:] for line in row)


def test_plan_warnings_and_the_rejected_table_wrap_with_a_hanging_indent() -> None:
    lines = run("plan", "torch", "--offline", "--sysroot", str(MACHINES / "nvidia-jetson-no-pci" / "root"))
    check_width(lines, ("https://developer.download.nvidia.com/compute/redist/jp/", "sm_53/62/72/87),"))
    warning = next(i for i, line in enumerate(lines) if line.startswith("! NVIDIA Jetson"))
    assert lines[warning + 1].startswith("  ") and lines[warning + 1][2] != " "  # under the text, after "! "

    lines = run(
        "plan", "torch", "--offline", "--explain", "--sysroot", str(MACHINES / "apple-intel-mojave-skylake" / "root")
    )
    check_width(lines, ("pytorch/pytorch#114602;", "x86_64"))
    reason = next(i for i, line in enumerate(lines) if line.startswith("  - torch 2.2.2 is the last release"))
    assert lines[reason + 1].startswith("    ") and lines[reason + 1][4] != " "  # under the text, after "  - "
    table = lines.index("Not chosen")
    assert lines[table + 1].split() == ["torch", "build", "why", "not"]
    why_at = lines[table + 1].index("why not")
    rows = lines[table + 2 :]
    assert rows[0].startswith(">2.2.2  *")
    assert len(rows) > 1 and all(row[:why_at].strip() == "" and row[why_at] != " " for row in rows[1:])


def test_versions_are_not_coloured_digit_by_digit_on_a_terminal() -> None:
    done = wheelfit_in_process(
        ["plan", "torch", "--offline", "--target", "cuda=6.1,driver=580.95.05"],
        hermetic_env(COLUMNS="80", FORCE_COLOR="1"),
    )
    assert done.returncode == 0, done.stderr
    assert ANSI.search(done.stdout)  # it is coloured: the title and the labels
    for line in done.stdout.splitlines():
        plain = ANSI.sub("", line)
        if plain.startswith(("  torch==", "  - ")):
            assert line == plain, repr(line)  # data lines carry no colour at all (rich would colour 2.14.1, 6.1)
