"""The repository is self-contained: no tracked file reads or cites a file beside it.

A fresh ``git clone`` has nothing beside it: recorded test data lives in ``tests/data/realdata`` and
citations name the public upstream source (a URL, an upstream file at a commit, an issue or PR number).
"""

from __future__ import annotations

import re
import shutil
import subprocess

import pytest

from .conftest import REALDATA, ROOT

#: What a citation of, or a path into, the folder beside the repository looks like. Built from parts so that
#: this file does not match itself.
OUTSIDE = re.compile(
    "|".join(
        re.escape(p)
        for p in (
            "../" + "shared",
            "shared/" + "reference",
            "shared/" + "realdata",
            # the reference files by name, wherever they are said to be
            *(f"{stem}.md" for stem in ("pytorch-build-" + "matrix", "hardware-" + "detection", "wheel-" + "variants")),
            "style-and-security-" + "anchors",
            "kb-" + "audit-2026",
        )
    )
)

#: Files allowed to mention it: none (the test fails while a listed file no longer needs the exception).
ALLOWED: frozenset[str] = frozenset()


def tracked_files() -> list[str]:
    git = shutil.which("git")
    if git is None or not (ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    out = subprocess.run([git, "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
    return [name for name in out.decode("utf-8").split("\0") if name]


def offenders(names: list[str]) -> dict[str, list[int]]:
    """Tracked text files that mention the outside folder, with the line numbers."""
    found: dict[str, list[int]] = {}
    for name in names:
        path = ROOT / name
        if not path.is_file():  # deleted in the working tree, not yet committed
            continue
        data = path.read_bytes()
        if b"\0" in data:
            continue
        text = data.decode("utf-8", errors="replace")
        lines = [n for n, line in enumerate(text.splitlines(), 1) if OUTSIDE.search(line)]
        if lines:
            found[name] = lines
    return found


def test_no_tracked_file_mentions_the_folder_beside_the_repository() -> None:
    found = offenders(tracked_files())
    unexpected = {name: lines for name, lines in found.items() if name not in ALLOWED}
    assert not unexpected, f"cite the public source, not the folder beside the repository (file: lines): {unexpected}"
    fixed = sorted(ALLOWED - set(found))
    assert not fixed, f"these no longer mention it, so remove them from ALLOWED: {fixed}"


def test_the_check_sees_a_citation() -> None:
    assert OUTSIDE.search("see " + "../" + "shared" + "/reference/pytorch-build-" + "matrix.md §5.2")
    assert OUTSIDE.search("data in shared/" + "realdata")
    assert OUTSIDE.search("(wheel-" + "variants.md §2.9)")
    assert not OUTSIDE.search("a cache shared by all environments")


def test_recorded_real_data_is_inside_the_repository() -> None:
    assert REALDATA.resolve().is_relative_to(ROOT.resolve())
    assert (REALDATA / "README.md").is_file()
    assert (REALDATA / "cpu" / "LICENSE-MIT").is_file()
