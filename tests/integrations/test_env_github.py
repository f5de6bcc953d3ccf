"""``wheelfit env --format github``: the files ``$GITHUB_OUTPUT`` and ``$GITHUB_STEP_SUMMARY`` and the annotations
on stdout, read back by parsers written to GitHub's documented syntax ("Workflow commands for GitHub Actions": the
``name<<DELIMITER`` multi-line form, the ``::command key=value,...::message`` form with ``%``/CR/LF escaped in
the message and also ``:``/``,`` in property values), as the runner reads them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.install.conftest import Index, caches, env, error_line, index, run_wheelfit
from wheelfit.integrations.github import annotation, output_block

__all__ = ["caches", "env", "index"]  # fixtures

PASCAL = "cuda=6.1,driver=580.95.05"
NEAR_MISS_AMD = "rocm=gfx1031"


def parse_output_file(text: str) -> dict[str, str]:
    """The runner's reading of ``$GITHUB_OUTPUT``: per line, ``name=value`` when ``=`` comes before any ``<<``,
    else ``name<<DELIMITER`` then the value's lines up to a line that is exactly the delimiter (missing: an
    error); empty lines skipped; anything else "Invalid format". A later name replaces an earlier one."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    out: dict[str, str] = {}
    i = 0
    while i < len(lines):
        line = lines[i].removesuffix("\r")
        i += 1
        if not line:
            continue
        eq, heredoc = line.find("="), line.find("<<")
        if eq >= 0 and (heredoc < 0 or eq < heredoc):
            name, value = line[:eq], line[eq + 1 :]
        elif heredoc >= 0:
            name, delimiter = line[:heredoc], line[heredoc + 2 :]
            assert delimiter, f"Invalid value: no delimiter in {line!r}"
            body: list[str] = []
            while True:
                assert i < len(lines), f"Matching delimiter not found {delimiter!r}"
                nxt = lines[i].removesuffix("\r")
                i += 1
                if nxt == delimiter:
                    break
                body.append(nxt)
            value = "\n".join(body)
        else:
            raise AssertionError(f"Invalid format {line!r}")
        assert name, f"Invalid format {line!r}"
        out[name] = value
    return out


def _unescape_data(text: str) -> str:
    return text.replace("%0D", "\r").replace("%0A", "\n").replace("%25", "%")


def _unescape_property(text: str) -> str:
    return text.replace("%0D", "\r").replace("%0A", "\n").replace("%3A", ":").replace("%2C", ",").replace("%25", "%")


def parse_command(line: str) -> tuple[str, dict[str, str], str]:
    """A workflow command line ``::name k=v,k=v::message`` as the runner splits and unescapes it."""
    assert line.startswith("::"), line
    end = line.index("::", 2)
    info, message = line[2:end], line[end + 2 :]
    name, _, props = info.partition(" ")
    properties: dict[str, str] = {}
    for prop in filter(None, props.split(",")):
        key, sep, value = prop.partition("=")
        assert sep and key, line
        properties[key] = _unescape_property(value)
    return name, properties, _unescape_data(message)


def _plan(args: list[str], environ: dict[str, str]) -> dict[str, Any]:
    done = run_wheelfit(["plan", "--json", *args], environ)
    assert done.returncode == 0, done.stderr
    data: dict[str, Any] = json.loads(done.stdout)
    return data


def test_outputs_and_summary_append_to_files_that_have_content(
    index: Index, env: dict[str, str], tmp_path: Path
) -> None:
    out, summary = tmp_path / "output", tmp_path / "summary"
    earlier = "earlier=1\nnotes<<EOF\nfrom an earlier step\nEOF\n"
    out.write_text(earlier, encoding="utf-8")
    summary.write_text("# Build\n\n", encoding="utf-8")
    base = ["--pytorch-index", index.pytorch, "--allow-hsa-override"]
    # GITHUB_ACTIONS=true: github is the default format.
    environ = {**env, "GITHUB_ACTIONS": "true", "GITHUB_OUTPUT": str(out), "GITHUB_STEP_SUMMARY": str(summary)}
    done = run_wheelfit(["env", *base, "--target", PASCAL, "--target", NEAR_MISS_AMD], environ)
    assert done.returncode == 0, done.stderr
    text = out.read_text(encoding="utf-8")
    assert text.startswith(earlier)
    got = parse_output_file(text)
    assert got["earlier"] == "1" and got["notes"] == "from an earlier step"
    pascal, amd = _plan([*base, "--target", PASCAL], env), _plan([*base, "--target", NEAR_MISS_AMD], env)
    assert got["cu126-variant"] == "cu126" == pascal["variant"]
    assert got["cu126-index-url"] == pascal["index_url"]
    assert got["cu126-requirements"] == " ".join(p["requirement"] for p in pascal["packages"])
    assert got["cu126-uv-torch-backend"] == "cu126"
    assert got["cu126-target"] == PASCAL
    name = amd["variant"].replace(".", "_")
    assert got[f"{name}-variant"] == amd["variant"]
    assert got[f"{name}-env"] == "HSA_OVERRIDE_GFX_VERSION=10.3.0"
    assert got[f"{name}-warnings"] == "\n".join(amd["warnings"]) and "\n" not in amd["warnings"][0]
    assert len(amd["warnings"]) >= 1
    include = json.loads(got["matrix"])["include"]
    assert [e["variant"] for e in include] == ["cu126", amd["variant"]]
    assert got["cu126-cache-key"] == include[0]["cache-key"] != include[1]["cache-key"]

    md = summary.read_text(encoding="utf-8")
    assert md.startswith("# Build\n\n")
    assert f"### wheelfit: torch {pascal['torch_version']} (cu126) for `{PASCAL}`" in md
    assert pascal["rejected"], "sm_61: cu128+ builds are turned down"
    for r in pascal["rejected"]:
        assert f"| {r['variant']} | {r['version']} | {r['reason']} |" in md
    assert "`HSA_OVERRIDE_GFX_VERSION=10.3.0`" in md

    # The warnings are annotations, one per line, titled with the target.
    commands = [parse_command(line) for line in done.stdout.splitlines()]
    assert commands == [
        ("warning", {"title": f"wheelfit: {amd['variant']} ({NEAR_MISS_AMD})"}, w) for w in amd["warnings"]
    ]


def test_one_target_gives_plain_names_and_escaped_annotations(env: dict[str, str], tmp_path: Path) -> None:
    """A ``%`` in a warning and ``:``/``,`` in its title (the target spec) are escaped so they read back whole."""
    out = tmp_path / "output"
    odd = "http://127.0.0.1:9/a%25b,c"
    args = ["--offline", "--pytorch-index", odd, "--target", PASCAL]
    environ = {**env, "GITHUB_OUTPUT": str(out)}  # no GITHUB_STEP_SUMMARY: no summary, no error
    done = run_wheelfit(["env", "--format", "github", *args], environ)
    assert done.returncode == 0, done.stderr
    got = parse_output_file(out.read_text(encoding="utf-8"))
    assert got["variant"] == "cu126" and got["index-url"] == f"{odd}/cu126"
    plan = _plan(args, env)
    assert got["warnings"] == "\n".join(plan["warnings"]) and odd in got["warnings"]
    lines = done.stdout.splitlines()
    assert lines and all(line.startswith("::warning title=wheelfit%3A cu126 (cuda=6.1%2Cdriver=") for line in lines)
    assert "%2525b" in lines[0]  # '%' escaped, not read as an escape
    assert [parse_command(line) for line in lines] == [
        ("warning", {"title": f"wheelfit: cu126 ({PASCAL})"}, w) for w in plan["warnings"]
    ]


def test_matrix_under_github_is_the_matrix_output(env: dict[str, str], tmp_path: Path) -> None:
    out = tmp_path / "output"
    environ = {**env, "GITHUB_ACTIONS": "true", "GITHUB_OUTPUT": str(out)}
    done = run_wheelfit(["env", "--matrix", "--offline", "--target", PASCAL, "--target", "cpu=v3"], environ)
    assert done.returncode == 0, done.stderr
    include = json.loads(parse_output_file(out.read_text(encoding="utf-8"))["matrix"])["include"]
    assert [(e["target"], e["variant"]) for e in include] == [(PASCAL, "cu126"), ("cpu=v3", "cpu")]


def test_github_without_github_output_is_one_usage_error(env: dict[str, str], tmp_path: Path) -> None:
    """Said before anything is planned: the missing target file is never read."""
    done = run_wheelfit(["env", "--format", "github", "--offline", "--target", str(tmp_path / "absent.json")], env)
    assert done.returncode == 2
    assert "$GITHUB_OUTPUT" in error_line(done.stderr)
    assert done.stdout == ""


@pytest.mark.parametrize(
    "value",
    ["one line", "two\nlines", "", "ends with a newline\n", "EOF\nghadelimiter_\nname<<x", "a=b<<c\nd=e"],
)
def test_any_value_reads_back_whole(value: str) -> None:
    assert parse_output_file("x=1\n" + output_block("name", value)) == {"x": "1", "name": value}


def test_a_value_that_holds_the_delimiter_cannot_end_the_block() -> None:
    first = output_block("name", "v").split("\n")[0].split("<<")[1]
    for tricky in (f"before\n{first}\nafter", f"{first}\n{first}_\n{first}__"):
        block = output_block("name", tricky)
        assert parse_output_file(block) == {"name": tricky}
        assert block.split("\n")[0].split("<<")[1] not in tricky


def test_annotation_escaping() -> None:
    line = annotation("warning", "50% done\r\nnext: a,b", title="t: x,y %")
    assert line == "::warning title=t%3A x%2Cy %25::50%25 done%0D%0Anext: a,b"
    assert parse_command(line) == ("warning", {"title": "t: x,y %"}, "50% done\r\nnext: a,b")
