"""The RequirementSet the installer gets: the command line merged with files, names, the torch-family split,
markers evaluated for the target, and I/O only through the reader passed in."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from wheelfit.errors import UsageError
from wheelfit.family import is_torch_family
from wheelfit.requirements import MARKER_KEYS, MAX_FILE_BYTES, Origin, RequirementSet, read_requirements

from ..conftest import hermetic_env
from .conftest import read, refused, write

#: A CPython 3.11 Linux x86_64 marker environment (the target's, not this interpreter's).
PY311 = {
    "implementation_name": "cpython",
    "implementation_version": "3.11.7",
    "os_name": "posix",
    "platform_machine": "x86_64",
    "platform_python_implementation": "CPython",
    "platform_release": "6.8.0",
    "platform_system": "Linux",
    "platform_version": "#1 SMP",
    "python_full_version": "3.11.7",
    "python_version": "3.11",
    "sys_platform": "linux",
}
PY313_WIN = PY311 | {
    "python_full_version": "3.13.1",
    "python_version": "3.13",
    "sys_platform": "win32",
    "os_name": "nt",
}


def test_the_command_line_merged_with_files(tmp_path: Path) -> None:
    write(
        tmp_path,
        "r.txt",
        "--extra-index-url https://file-extra.example/simple\n-i https://file.example/simple\nnumpy\n",
    )
    write(tmp_path, "c.txt", "numpy<3\n")
    (tmp_path / "links").mkdir()
    result = read(
        tmp_path,
        ["r.txt"],
        ["c.txt"],
        specs=["torch==2.9.0", "torchvision"],
        index_url="https://typed.example/simple",
        extra_index_urls=["https://typed-extra.example/simple"],
        find_links=["links"],
        pre=True,
    )
    assert [(r.text, str(r.origin)) for r in result.requirements] == [
        ("torch==2.9.0", "command line"),
        ("torchvision", "command line"),
        ("numpy", "r.txt:3"),
    ]
    assert [c.text for c in result.constraints] == ["numpy<3"]
    assert result.index_url == "https://typed.example/simple"  # what was typed wins over the file (as in uv)
    assert result.extra_index_urls == ("https://file-extra.example/simple", "https://typed-extra.example/simple")
    assert result.find_links == (str(tmp_path / "links"),)
    assert (result.pre, result.no_index, result.sources) == (True, False, ("r.txt", "c.txt"))


def test_merge_adds_up_and_the_later_index_url_wins() -> None:
    first = RequirementSet(index_url="https://a.example", extra_index_urls=("x",), find_links=("f",), sources=("a",))
    second = RequirementSet(extra_index_urls=("x", "y"), no_index=True, sources=("b",))
    assert first.merge(second) == RequirementSet(
        index_url="https://a.example", extra_index_urls=("x", "y"), find_links=("f",), no_index=True, sources=("a", "b")
    )
    assert first.merge(RequirementSet(index_url="https://b.example")).index_url == "https://b.example"


def test_names_are_canonical_and_unique_in_order(tmp_path: Path) -> None:
    write(tmp_path, "r.txt", "PyYAML\nTorch>=2.8\ntorch<2.10\n./vendor/unnamed-project\n")
    result = read(tmp_path, ["r.txt"], specs=["Jinja2"])
    assert result.names() == ("jinja2", "pyyaml", "torch")


def test_split_by_the_torch_family(tmp_path: Path) -> None:
    write(
        tmp_path,
        "r.txt",
        "numpy\ntorchvision==0.24.0\npytorch_triton_rocm\n./torch-2.9.0-cp311-cp311-linux_x86_64.whl\n",
    )
    family, other = read(tmp_path, ["r.txt"]).split(is_torch_family)
    assert [r.name for r in family] == ["torchvision", "pytorch-triton-rocm", "torch"]
    assert [r.name for r in other] == ["numpy"]


def test_markers_are_evaluated_for_the_target_environment(tmp_path: Path) -> None:
    write(
        tmp_path,
        "r.txt",
        'numpy<2 ; python_version < "3.12"\nnumpy>=2 ; python_version >= "3.12"\n'
        'pywin32 ; sys_platform == "win32"\ntorch\n',
    )
    write(tmp_path, "c.txt", 'torch<2.9 ; python_version < "3.12"\n')
    result = read(tmp_path, ["r.txt"], ["c.txt"])
    linux = result.for_environment(PY311)
    assert [r.text for r in linux.requirements] == ['numpy<2 ; python_version < "3.12"', "torch"]
    assert [c.text for c in linux.constraints] == ['torch<2.9 ; python_version < "3.12"']
    windows = result.for_environment(PY313_WIN)
    assert [r.name for r in windows.requirements] == ["numpy", "pywin32", "torch"] and windows.constraints == ()
    assert result.requirements[3].applies_to(PY311)  # no marker: always


def test_a_partial_marker_environment_is_refused_not_filled_from_this_interpreter(tmp_path: Path) -> None:
    write(tmp_path, "r.txt", 'numpy ; python_version < "3.12"\n')
    result = read(tmp_path, ["r.txt"])
    with pytest.raises(ValueError, match="marker environment lacks implementation_name"):
        result.for_environment({"python_version": "3.11"})
    assert set(PY311) == set(MARKER_KEYS)


def test_a_marker_that_cannot_be_evaluated_names_its_line(tmp_path: Path) -> None:
    write(tmp_path, "r.txt", 'numpy ; python_version ~= "3"\n')  # ~= needs two release segments
    result = read(tmp_path, ["r.txt"])
    with pytest.raises(UsageError) as info:
        result.for_environment(PY311)
    assert str(info.value).startswith("r.txt:1: cannot evaluate the marker of 'numpy ; python_version ~= \"3\"'")


def test_a_command_line_requirement_that_cannot_be_read(tmp_path: Path) -> None:
    message = refused(tmp_path, specs=["torch==="])
    assert message.startswith("command line: cannot read the requirement 'torch===': ")


def test_files_are_read_only_through_the_reader_passed_in() -> None:
    files = {
        "/nowhere/proj/requirements.txt": b"-r ../common/base.txt\ntorch\n",
        "/nowhere/proj/../common/base.txt": b"numpy\n",  # as joined: the OS resolves `..` (symlinks)
    }
    calls: list[tuple[str, int]] = []

    def reader(path: str, limit: int) -> bytes:
        calls.append((path, limit))
        try:
            return files[path]
        except KeyError:
            raise FileNotFoundError(2, "No such file or directory", path) from None

    result = read_requirements(requirement_files=["requirements.txt"], reader=reader, cwd="/nowhere/proj", environ={})
    assert result.names() == ("numpy", "torch")
    assert calls == [
        ("/nowhere/proj/requirements.txt", MAX_FILE_BYTES + 1),
        ("/nowhere/proj/../common/base.txt", MAX_FILE_BYTES + 1),
    ]
    assert result.requirements[0].origin == Origin("../common/base.txt", 1)


def test_the_package_imports_nothing_that_does_io() -> None:
    script = "import json, sys, wheelfit.requirements\nprint(json.dumps(sorted(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=hermetic_env(), check=True)
    loaded = json.loads(out.stdout)
    leaked = [m for m in loaded if m.split(".")[0] in ("httpx", "rich", "typer", "click", "urllib3", "requests")]
    leaked += [
        m for m in loaded if m.startswith(("wheelfit.install", "wheelfit.api", "wheelfit.cli", "wheelfit.fetch"))
    ]
    assert "wheelfit.requirements.files" in loaded and leaked == []
