"""Requirement files as pip reads them: includes, constraints, comments, continuations, encodings, options,
${VAR}, and hostile or unreadable files (each refused in one line that names the file)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from wheelfit.requirements import MAX_FILE_BYTES, Origin
from wheelfit.requirements.files import MAX_DEPTH, MAX_LINES

from .conftest import read, refused, write

SHA_A = "a" * 64
SHA_B = "b" * 64


def test_nested_requirement_files_are_relative_to_the_file_that_includes_them(tmp_path: Path) -> None:
    write(tmp_path, "app/requirements.txt", "-r ../base/base.txt\n--requirement=extra/more.txt\ntorch\n")
    write(tmp_path, "base/base.txt", "numpy\n-r common.txt\n")  # base/common.txt, not ./common.txt
    write(tmp_path, "base/common.txt", "packaging\n")
    write(tmp_path, "app/extra/more.txt", "rich\n")
    write(tmp_path, "common.txt", "wrong-file\n")
    result = read(tmp_path, ["app/requirements.txt"])
    assert result.names() == ("numpy", "packaging", "rich", "torch")
    assert result.sources == ("app/requirements.txt", "base/base.txt", "base/common.txt", "app/extra/more.txt")
    assert [str(r.origin) for r in result.requirements] == [
        "base/base.txt:1",
        "base/common.txt:1",
        "app/extra/more.txt:1",
        "app/requirements.txt:3",
    ]


def test_constraints_are_kept_apart_and_never_installed(tmp_path: Path) -> None:
    write(tmp_path, "requirements.txt", "torch\n-c pins/constraints.txt\n")
    write(tmp_path, "pins/constraints.txt", "numpy<2.3\ntorch==2.9.0 ; python_version >= '3.10'\n")
    write(tmp_path, "top-constraints.txt", "rich>=13\n")
    result = read(tmp_path, ["requirements.txt"], ["top-constraints.txt"])
    assert result.names() == ("torch",)
    assert [c.text for c in result.constraints] == ["numpy<2.3", "torch==2.9.0 ; python_version >= '3.10'", "rich>=13"]
    assert {c.kind for c in result.constraints} == {"named"}
    assert str(result.constraints[0].requirement.specifier) == "<2.3"  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("line", "why"),
    [
        ("torch @ https://example.org/torch-2.9.0-py3-none-any.whl", "is not a name"),
        ("./torch-2.9.0-py3-none-any.whl", "is not a name"),
        ("requests[socks]<3", "has extras"),
    ],
)
def test_a_constraint_is_a_name_and_versions(tmp_path: Path, line: str, why: str) -> None:
    write(tmp_path, "c.txt", f"numpy\n{line}\n")
    message = refused(tmp_path, constraints=["c.txt"])
    assert message.startswith("c.txt:2: constraint ") and why in message


def test_an_include_cycle_is_an_error_that_shows_the_loop(tmp_path: Path) -> None:
    write(tmp_path, "a.txt", "numpy\n-r sub/b.txt\n")
    write(tmp_path, "sub/b.txt", "# b\n-c ../a.txt\n")
    message = refused(tmp_path, ["a.txt"])
    assert message == (
        "sub/b.txt:2: -c ../a.txt: includes a file that is already being read (a.txt -> sub/b.txt -> a.txt); "
        "remove the cycle"
    )


def test_a_file_that_includes_itself_is_a_cycle(tmp_path: Path) -> None:
    write(tmp_path, "self.txt", "-r ./self.txt\n")
    assert "(self.txt -> self.txt)" in refused(tmp_path, ["self.txt"])


def test_the_same_file_twice_is_no_cycle(tmp_path: Path) -> None:
    write(tmp_path, "a.txt", "-r common.txt\n-c common.txt\n")
    write(tmp_path, "common.txt", "numpy<3\n")
    result = read(tmp_path, ["a.txt"])
    assert [r.text for r in result.requirements] == ["numpy<3"] and [c.text for c in result.constraints] == ["numpy<3"]


def test_includes_nested_too_deep_are_refused(tmp_path: Path) -> None:
    for n in range(MAX_DEPTH + 5):
        write(tmp_path, f"r{n}.txt", f"pkg{n}\n-r r{n + 1}.txt\n")
    write(tmp_path, f"r{MAX_DEPTH + 5}.txt", "last\n")
    message = refused(tmp_path, ["r0.txt"])
    assert message.startswith(f"r{MAX_DEPTH - 1}.txt:2: -r r{MAX_DEPTH}.txt: requirement files nested more than")


def test_markers_are_kept_on_the_requirement(tmp_path: Path) -> None:
    write(tmp_path, "r.txt", 'numpy<2 ; python_version < "3.12"\nnumpy>=2 ; python_version >= "3.12"\n')
    result = read(tmp_path, ["r.txt"])
    assert [str(r.marker) for r in result.requirements] == ['python_version < "3.12"', 'python_version >= "3.12"']


def test_continuation_lines_join_and_a_comment_line_ends_them(tmp_path: Path) -> None:
    text = (
        "torch==2.9.0 \\\n"
        f"    --hash=sha256:{SHA_A} \\\n"
        f"    --hash=sha256:{SHA_B} \\\n"
        "    # via -r requirements.in\n"  # pip-compile writes this: the comment line ends the continuation
        "# a comment that ends in a backslash \\\n"  # and a comment line continues nothing
        "num\\\n"
        "py\n"
        "rich\\\n"  # a continuation on the last line
    )
    write(tmp_path, "r.txt", text)
    result = read(tmp_path, ["r.txt"])
    torch, numpy, rich = result.requirements
    assert (torch.text, torch.hashes, torch.origin) == (
        "torch==2.9.0",
        (f"sha256:{SHA_A}", f"sha256:{SHA_B}"),
        Origin("r.txt", 1),
    )
    assert (numpy.text, numpy.origin.line) == ("numpy", 6)
    assert (rich.text, rich.origin.line) == ("rich", 8)


def test_comments_and_blank_lines(tmp_path: Path) -> None:
    text = (
        "# a comment line\n"
        "\n"
        "   \t\n"
        "numpy>=1.26   # why: the new ABI\n"
        f"foo @ https://example.org/foo-1.0-py3-none-any.whl#sha256={SHA_A}\n"
        "    # indented comment\n"
    )
    write(tmp_path, "r.txt", text)
    result = read(tmp_path, ["r.txt"], [], environ={})
    assert [r.origin.line for r in result.requirements] == [4, 5]
    assert result.requirements[0].text == "numpy>=1.26"
    assert result.requirements[1].hashes == (f"sha256:{SHA_A}",)


def test_a_hash_sign_without_space_before_it_is_no_comment(tmp_path: Path) -> None:
    write(tmp_path, "r.txt", "rich#frag\n")
    assert refused(tmp_path, ["r.txt"]).startswith("r.txt:1: cannot read the requirement 'rich#frag': ")


def test_index_options_inside_a_file(tmp_path: Path) -> None:
    (tmp_path / "deps" / "wheels").mkdir(parents=True)
    text = (
        "--index-url https://mirror.example/simple\n"
        "--extra-index-url=https://extra.example/simple\n"
        "-f wheels\n"  # relative to this file's directory: deps/wheels
        "--find-links https://example.org/links/\n"
        "--pre\n"
        "torch\n"
    )
    write(tmp_path, "deps/r.txt", text)
    result = read(tmp_path, ["deps/r.txt"])
    assert result.index_url == "https://mirror.example/simple"
    assert result.extra_index_urls == ("https://extra.example/simple",)
    assert result.find_links == (str(tmp_path / "deps" / "wheels"), "https://example.org/links/")
    assert result.pre is True and result.no_index is False


def test_short_and_abbreviated_options_as_optparse_reads_them(tmp_path: Path) -> None:
    write(tmp_path, "r.txt", "-ihttps://a.example/simple --extra-index https://b.example/simple --no-index\n")
    result = read(tmp_path, ["r.txt"])
    assert (result.index_url, result.extra_index_urls, result.no_index) == (
        "https://a.example/simple",
        ("https://b.example/simple",),
        True,
    )


def test_a_later_index_url_replaces_an_earlier_one_and_the_command_line_wins(tmp_path: Path) -> None:
    write(tmp_path, "a.txt", "-i https://first.example/simple\n-r b.txt\n")
    write(tmp_path, "b.txt", "-i https://second.example/simple\n")
    assert read(tmp_path, ["a.txt"]).index_url == "https://second.example/simple"
    typed = read(tmp_path, ["a.txt"], index_url="https://typed.example/simple")
    assert typed.index_url == "https://typed.example/simple"


def test_hashes_on_the_requirement_line(tmp_path: Path) -> None:
    write(tmp_path, "r.txt", f"torch==2.9.0 --hash=sha256:{SHA_A.upper()} --hash sha256:{SHA_B}\n")
    (torch,) = read(tmp_path, ["r.txt"]).requirements
    assert torch.text == "torch==2.9.0" and torch.hashes == (f"sha256:{SHA_A}", f"sha256:{SHA_B}")
    assert torch.line() == f"torch==2.9.0 --hash=sha256:{SHA_A} --hash=sha256:{SHA_B}"


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("torch --index-url https://x.example", "r.txt:1: --index-url applies to the whole file, not to 'torch'"),
        ("torch -r other.txt", "r.txt:1: --requirement applies to the whole file"),
        (f"--hash=sha256:{SHA_A}", "r.txt:1: --hash belongs to a requirement"),
        ("torch --hash=md5:abc", "r.txt:1: --hash=md5:abc is not ALGORITHM:HEXDIGEST"),
        ("torch --hash=sha256:xyz", "r.txt:1: --hash=sha256:xyz is not ALGORITHM:HEXDIGEST"),
        ("-e ./project", "r.txt:1: -e/--editable is not supported by wheelfit"),
        ("--editable=./project", "r.txt:1: -e/--editable is not supported by wheelfit"),
        ("--use-feature=truststore", "r.txt:1: --use-feature is not supported by wheelfit"),
        ("--trusted-host example.org", "r.txt:1: --trusted-host is not supported by wheelfit"),
        ("torch --config-settings=a=b", "r.txt:1: -C/--config-settings is not supported by wheelfit"),
        ("--frobnicate", "r.txt:1: --frobnicate is not an option of a requirements file"),
        ("--no-", "r.txt:1: --no- is ambiguous (--no-index, --no-binary)"),
        ("--index-url", "r.txt:1: --index-url needs a value"),
        ("--pre=yes", "r.txt:1: --pre takes no value"),
        ("--pre torch", "r.txt:1: 'torch' comes after the options"),
        ("--index-url 'https://x", "r.txt:1: cannot split the options"),
    ],
)
def test_options_wheelfit_does_not_take_are_refused_with_file_and_line(
    tmp_path: Path, line: str, expected: str
) -> None:
    write(tmp_path, "r.txt", line + "\n")
    assert refused(tmp_path, ["r.txt"]).startswith(expected)


def test_crlf_line_endings_and_a_utf8_bom(tmp_path: Path) -> None:
    text = (
        "\ufeff# Windows\r\n-i https://mirror.example/simple\r\ntorch==2.9.0 \\\r\n  --hash=sha256:"
        + SHA_A
        + "\r\nnumpy\r\n"
    )
    write(tmp_path, "r.txt", text.encode("utf-8"))
    result = read(tmp_path, ["r.txt"])
    assert result.index_url == "https://mirror.example/simple"
    assert [(r.text, r.hashes) for r in result.requirements] == [("torch==2.9.0", (f"sha256:{SHA_A}",)), ("numpy", ())]


def test_utf16_with_a_bom_and_a_pep263_coding_line(tmp_path: Path) -> None:
    write(tmp_path, "u16.txt", "torch\r\nnumpy\r\n".encode("utf-16"))  # Windows PowerShell's `>` writes this
    write(tmp_path, "latin.txt", "# -*- coding: latin-1 -*-\nr\xe9sum\xe9-pkg\n".encode("latin-1"))
    write(tmp_path, "latin-ok.txt", "# -*- coding: latin-1 -*-\nnumpy # caf\xe9\n".encode("latin-1"))
    assert read(tmp_path, ["u16.txt"]).names() == ("torch", "numpy")
    assert read(tmp_path, ["latin-ok.txt"]).names() == ("numpy",)
    assert "cannot read the requirement 'résumé-pkg'" in refused(tmp_path, ["latin.txt"])


def test_a_file_that_is_not_utf8_names_its_line(tmp_path: Path) -> None:
    write(tmp_path, "r.txt", b"numpy\n# caf\xe9\n")
    assert refused(tmp_path, ["r.txt"]) == "r.txt:2: not valid utf-8 (byte 0xe9); save the file as UTF-8"


def test_environment_variables_only_in_braces(tmp_path: Path) -> None:
    text = (
        "--index-url https://${USER_NAME}:${TOKEN}@mirror.example/simple\n"
        "-r ${SUBDIR}/more.txt\n"
        "numpy==${NUMPY_VERSION}\n"
    )
    write(tmp_path, "r.txt", text)
    write(tmp_path, "nested/more.txt", "rich $TOKEN_NOT_EXPANDED\n")
    environ = {"USER_NAME": "me", "TOKEN": "s3cret", "SUBDIR": "nested", "NUMPY_VERSION": "2.1.0"}
    message = refused(tmp_path, ["r.txt"], environ=environ)
    assert message.startswith("nested/more.txt:1: cannot read the requirement 'rich $TOKEN_NOT_EXPANDED'")
    write(tmp_path, "nested/more.txt", "rich\n")
    result = read(tmp_path, ["r.txt"], environ=environ)
    assert result.index_url == "https://me:s3cret@mirror.example/simple"
    assert [r.text for r in result.requirements] == ["rich", "numpy==2.1.0"]


def test_an_unset_or_lower_case_variable_stays_as_written(tmp_path: Path) -> None:
    write(tmp_path, "r.txt", "--extra-index-url https://x.example/${UNSET}/${lower}/${EMPTY}\n")
    result = read(tmp_path, ["r.txt"], environ={"lower": "no", "EMPTY": ""})
    assert result.extra_index_urls == ("https://x.example/${UNSET}/${lower}/${EMPTY}",)


def test_a_missing_file_is_one_line_with_its_path(tmp_path: Path) -> None:
    assert (
        refused(tmp_path, ["nope.txt"])
        == "-r nope.txt: cannot read nope.txt (No such file or directory); check the path"
    )


def test_a_missing_included_file_names_the_line_that_includes_it(tmp_path: Path) -> None:
    write(tmp_path, "sub/r.txt", "numpy\n\n-r ../gone.txt\n")
    assert refused(tmp_path, ["sub/r.txt"]) == (
        "sub/r.txt:3: -r ../gone.txt: cannot read gone.txt (No such file or directory); check the path"
    )


def test_a_directory_is_no_requirements_file(tmp_path: Path) -> None:
    (tmp_path / "reqs").mkdir()
    assert refused(tmp_path, constraints=["reqs"]) == "-c reqs: cannot read reqs (Is a directory); check the path"


def test_requirement_files_over_http_are_not_fetched(tmp_path: Path) -> None:
    write(tmp_path, "r.txt", "-r https://example.org/requirements.txt\n")
    assert refused(tmp_path, ["r.txt"]).startswith(
        "r.txt:1: -r https://example.org/requirements.txt: requirement files are read from disk only"
    )


def test_a_file_url_include(tmp_path: Path) -> None:
    write(tmp_path, "other dir/more.txt", "rich\n")
    write(tmp_path, "r.txt", f"-r {(tmp_path / 'other dir' / 'more.txt').as_uri()}\n")
    assert read(tmp_path, ["r.txt"]).names() == ("rich",)


def test_a_huge_file_is_refused_without_being_read_whole(tmp_path: Path) -> None:
    huge = tmp_path / "huge.txt"
    with huge.open("wb") as f:
        f.truncate(4 * 1024**3)  # a sparse 4 GiB file: reading it whole would exhaust the machine
    write(tmp_path, "r.txt", "numpy\n-r huge.txt\n")
    started = time.monotonic()
    message = refused(tmp_path, ["r.txt"])
    assert message == "r.txt:2: -r huge.txt: huge.txt is larger than 16 MiB; give a requirements file, not this"
    assert time.monotonic() - started < 5


def test_an_endless_file_is_refused(tmp_path: Path) -> None:
    assert refused(tmp_path, ["/dev/zero"]).startswith("-r /dev/zero: /dev/zero is larger than 16 MiB")


def test_a_file_just_under_the_cap_with_a_hostile_line_reads_in_linear_time(tmp_path: Path) -> None:
    # Megabytes of spaces then '#x' (a backtracking comment regex is quadratic here), and a long continuation.
    body = b"numpy" + b" " * (MAX_FILE_BYTES // 2) + b"#x\n" + b"rich \\\n" * 100_000 + b"\n"
    assert len(body) <= MAX_FILE_BYTES
    write(tmp_path, "r.txt", body)
    started = time.monotonic()
    message = refused(tmp_path, ["r.txt"])
    assert message.startswith("r.txt:2: cannot read the requirement 'rich rich rich")
    assert len(message) < 400  # the message quotes the line, but not all of it
    assert time.monotonic() - started < 10


def test_a_file_of_millions_of_short_lines_stops_at_the_line_cap(tmp_path: Path) -> None:
    write(tmp_path, "r.txt", b"--pre\n" * (MAX_FILE_BYTES // 6))  # 2.8 million lines, each one an option line
    started = time.monotonic()
    message = refused(tmp_path, ["r.txt"])
    assert message == f"r.txt:{MAX_LINES + 1}: more than {MAX_LINES} requirement lines in all; split the install"
    assert time.monotonic() - started < 10


def test_bad_bytes_after_a_bom_name_their_own_line(tmp_path: Path) -> None:
    write(tmp_path, "r.txt", b"\xef\xbb\xbfnumpy\nrich\n\xff\n")
    assert refused(tmp_path, ["r.txt"]) == "r.txt:3: not valid utf-8 (byte 0xff); save the file as UTF-8"
