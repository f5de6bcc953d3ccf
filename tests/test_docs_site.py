"""The documentation site's generated pages (docs/gen/docgen.py): support tables from the knowledge base, and the
command reference from the CLI.

The tables are the point of generating: change a knowledge-base entry and the page must change with it, never a
hand-kept copy that drifts. ``mkdocs build --strict`` itself runs in scripts/test, not here.
"""

from __future__ import annotations

import json
import sys
import warnings
from collections.abc import Callable
from importlib.resources import files
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "docs" / "gen"))
import docgen  # noqa: E402 - the generator lives beside the docs, outside the package


def table_cell(page: str, heading: str, row: str, column: str) -> str:
    """The cell of the first Markdown table under ``### heading`` whose first cell starts with ``row``."""
    lines = page.splitlines()
    at = lines.index(f"### {heading}")
    start = next(i for i in range(at + 1, len(lines)) if lines[i].startswith("|"))
    header = [c.strip() for c in lines[start].strip("|").split("|")]
    for line in lines[start + 2 :]:
        if not line.startswith("|"):
            break
        cells = [c.strip() for c in line.strip("|").split("|")]
        if cells[0].split()[0] == row:
            return cells[header.index(column)]
    raise AssertionError(f"no row {row!r} under {heading!r}")


@pytest.fixture(scope="module")
def packaged() -> dict[str, str]:
    return docgen.support_pages()


def edited_kb(tmp_path: Path, edit: Callable[[dict[str, Any]], None]) -> Path:
    """A copy of the packaged knowledge base with ``edit`` applied."""
    data = json.loads(files("wheelfit.kb").joinpath("data/pytorch.json").read_text(encoding="utf-8"))
    edit(data)
    path = tmp_path / "pytorch.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


# ---------------------------------------------------------------- the packaged knowledge base: known facts


def test_a_pascal_gpu_has_kernels_in_the_cu126_build_of_2_14_and_in_no_cuda_13_build(packaged: dict[str, str]) -> None:
    nvidia = packaged["support/nvidia.md"]
    # Linux cu126 lists sm_60 SASS, which runs on sm_61; the CUDA 13 builds start at sm_75
    assert table_cell(nvidia, "linux_x86_64", "sm_61", "2.14") == "cu126 P"
    assert table_cell(nvidia, "windows_amd64", "sm_61", "2.14") == "cu126 P"
    assert table_cell(nvidia, "linux_x86_64", "sm_61", "2.15") == "—"
    assert "cu130" not in table_cell(nvidia, "linux_x86_64", "sm_61", "2.9")
    assert table_cell(nvidia, "linux_x86_64", "sm_89", "2.14") == "cu126 P<br>cu130 M<br>cu132 P"
    assert "Pascal" in next(line for line in nvidia.splitlines() if line.startswith("| sm_61 "))


def test_blackwell_needs_cuda_12_8_and_a_build_only_some_patch_releases_publish_says_which(
    packaged: dict[str, str],
) -> None:
    nvidia = packaged["support/nvidia.md"]
    assert table_cell(nvidia, "linux_x86_64", "sm_120", "2.6") == "—"
    assert table_cell(nvidia, "linux_x86_64", "sm_120", "2.7") == "cu128 S"
    # cu129 came back for 2.12.1 only, built but not advertised
    assert "cu129 S* (2.12.1)" in table_cell(nvidia, "linux_x86_64", "sm_120", "2.12")


def test_the_rocm_xpu_and_floor_tables_carry_the_knowledge_bases_facts(packaged: dict[str, str]) -> None:
    rocm, xpu, floors = packaged["support/rocm.md"], packaged["support/xpu.md"], packaged["support/floors.md"]
    assert table_cell(rocm, "linux_x86_64", "gfx900", "2.14") == "rocm7.2 U"  # gone from rocm7.14
    assert table_cell(rocm, "linux_x86_64", "gfx1103", "2.12") == "—"  # in ROCm builds from 2.13
    assert table_cell(rocm, "linux_x86_64", "gfx1103", "2.13") == "rocm7.1 S<br>rocm7.2 S"
    assert table_cell(xpu, "linux_x86_64", "ptl-h", "2.10") == "xpu P"
    assert table_cell(xpu, "linux_x86_64", "ptl-h", "2.9") == "—"
    assert "| 12.6 | " in floors and "560.28.03 P" in floors  # CUDA 12.6's own driver minimum, Linux
    assert "| 2.14 | macos_arm64 | 14.0 | 14.0 | M | BM-7.1 |" in floors
    assert "| 2.2 | macos_x86_64 | 10.9 | no MPS |" in floors  # the platform PyTorch stopped building


def test_every_cited_source_key_is_listed_with_its_text(packaged: dict[str, str]) -> None:
    nvidia = packaged["support/nvidia.md"]
    sources = nvidia[nvidia.index("## Sources") :]
    for key in ("BM-2.1", "BM-2.2", "BM-2.2-WIN", "BM-2.2-SBSA"):
        assert f"- **{key}**: " in sources


# ---------------------------------------------------------------- a changed knowledge base changes the tables


def test_removing_sm_60_from_a_build_removes_it_from_the_pascal_rows(tmp_path: Path) -> None:
    def edit(data: dict[str, Any]) -> None:
        cu126 = data["releases"]["2.14"]["platforms"]["linux_x86_64"]["variants"]["cu126"]
        cu126["sass"].remove("60")
        cu126["confidence"] = "U"

    nvidia = docgen.support_pages(edited_kb(tmp_path, edit))["support/nvidia.md"]
    assert table_cell(nvidia, "linux_x86_64", "sm_61", "2.14") == "—"
    assert table_cell(nvidia, "linux_x86_64", "sm_60", "2.14") == "—"
    assert table_cell(nvidia, "linux_x86_64", "sm_50", "2.14") == "cu126 U"  # still listed, now uncertain
    assert table_cell(nvidia, "linux_x86_64", "sm_61", "2.13") == "cu126 P"  # other releases untouched
    assert table_cell(nvidia, "windows_amd64", "sm_61", "2.14") == "cu126 P"  # and other platforms


def test_a_gfx_target_added_to_a_build_appears_in_its_row(tmp_path: Path, packaged: dict[str, str]) -> None:
    def edit(data: dict[str, Any]) -> None:
        builds = data["releases"]["2.12"]["platforms"]["linux_x86_64"]["variants"]
        builds["rocm7.2"]["gfx"].append("gfx1103")
        builds["rocm7.1"]["gfx"].remove("gfx942")

    assert table_cell(packaged["support/rocm.md"], "linux_x86_64", "gfx1103", "2.12") == "—"
    rocm = docgen.support_pages(edited_kb(tmp_path, edit))["support/rocm.md"]
    assert table_cell(rocm, "linux_x86_64", "gfx1103", "2.12") == "rocm7.2 S"
    assert table_cell(rocm, "linux_x86_64", "gfx942", "2.12") == "rocm7.2 S"


def test_a_new_release_is_a_new_column(tmp_path: Path) -> None:
    def edit(data: dict[str, Any]) -> None:
        release = json.loads(json.dumps(data["releases"]["2.15"]))
        release["versions"] = ["2.18.0"]
        release["companions"] = {"2.18.0": release["companions"]["2.15.0"]}
        data["releases"]["2.18"] = release

    pages = docgen.support_pages(edited_kb(tmp_path, edit))
    assert "| 2.18 | 2.18.0 |" in pages["support/index.md"]
    assert table_cell(pages["support/nvidia.md"], "linux_x86_64", "sm_89", "2.18") == "cu130 U<br>cu132 M<br>cu134 U"


# ---------------------------------------------------------------- the command reference


def _click_tree() -> list[tuple[str, Any]]:
    """Every visible command, walked here rather than trusting the generator's own walk."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # typer's import of a deprecated click name
        import click
        import typer.main

        from wheelfit.cli.app import app

        root = typer.main.get_command(app)
    out: list[tuple[str, Any]] = []

    def walk(command: click.Command, path: str) -> None:
        out.append((path, command))
        if isinstance(command, click.Group):
            for name, sub in command.commands.items():
                if not sub.hidden:
                    walk(sub, f"{path} {name}")

    walk(root, "wheelfit")
    return out


def test_every_command_and_every_option_is_in_the_command_reference() -> None:
    page = docgen.cli_reference()
    tree = _click_tree()
    assert {"wheelfit plan", "wheelfit install", "wheelfit doctor", "wheelfit configure uv", "wheelfit kb show"} <= {
        path for path, _ in tree
    }
    sections = page.split("\n## ")
    for path, command in tree:
        section = next((s for s in sections if s.startswith(f"{path} {{#")), None)
        assert section is not None, f"{path} has no section"
        assert f"Usage: {path} " in section
        for param in command.params:
            for opt in param.opts:
                if opt.startswith("-") and not param.hidden:
                    assert opt in section, f"{path}: {opt} missing"
    assert page.count("\n## ") == len(tree)


def test_help_is_rendered_at_a_fixed_width_whatever_the_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "60")  # the site must not depend on the terminal it was built in
    widths = [max(len(line) for line in text.splitlines()) for _, text in docgen.cli_commands()]
    assert max(widths) > 80
    assert max(widths) <= docgen.HELP_WIDTH + 20  # a word longer than the space left may overhang, never more


# ---------------------------------------------------------------- hand-written pages


def test_the_doctor_page_names_every_finding() -> None:
    from wheelfit.doctor import Issue

    page = (ROOT / "docs" / "doctor.md").read_text(encoding="utf-8")
    missing = [issue.value for issue in Issue if f"| `{issue.value}` |" not in page]
    assert not missing, f"docs/doctor.md does not describe {missing}"
