"""Each requirement classified: named, direct reference, local wheel or source; names and versions from wheel
file names; paths absolute; the text as written kept, and a spec the backend can install from anywhere."""

from __future__ import annotations

from pathlib import Path

import pytest
from packaging.version import Version

from wheelfit.family import is_torch_family
from wheelfit.requirements import Origin

from .conftest import read, refused, write

TORCH_WHEEL = "torch-2.9.0+cu128-cp311-cp311-manylinux_2_28_x86_64.whl"
SHA = "0123456789abcdef" * 4


def test_a_named_requirement_keeps_its_extras_and_marker(tmp_path: Path) -> None:
    (req,) = read(tmp_path, specs=['Torch[Opt_Einsum]>=2.8 ; sys_platform == "linux"']).requirements
    assert (req.kind, req.name, req.extras, str(req.marker)) == (
        "named",
        "torch",
        frozenset({"opt-einsum"}),
        'sys_platform == "linux"',
    )
    assert req.text == req.spec == 'Torch[Opt_Einsum]>=2.8 ; sys_platform == "linux"'
    assert str(req.requirement.specifier) == ">=2.8"  # type: ignore[union-attr]
    assert req.origin == Origin() and str(req.origin) == "command line"


def test_a_direct_reference_to_a_wheel_url(tmp_path: Path) -> None:
    url = f"https://download.example/whl/cu128/torchvision-0.24.0%2Bcu128-cp311-cp311-manylinux_2_28_x86_64.whl#sha256={SHA}"
    (req,) = read(tmp_path, specs=[f"torchvision[x] @ {url}"]).requirements
    assert (req.kind, req.name, req.archive, req.version) == ("direct", "torchvision", "wheel", Version("0.24.0+cu128"))
    assert (req.url, req.path, req.hashes, req.extras) == (url, None, (f"sha256:{SHA}",), frozenset({"x"}))
    assert req.spec == f"torchvision[x] @ {url}"


def test_a_direct_reference_to_a_local_file_url(tmp_path: Path) -> None:
    wheel = tmp_path / "w" / TORCH_WHEEL
    (req,) = read(tmp_path, specs=[f"torch @ {wheel.as_uri()}"]).requirements
    assert (req.kind, req.path, req.version, req.archive) == ("direct", str(wheel), Version("2.9.0+cu128"), "wheel")


def test_a_wheel_that_is_another_package_is_refused(tmp_path: Path) -> None:
    message = refused(tmp_path, specs=[f"torchvision @ https://example.org/{TORCH_WHEEL}"])
    assert message.startswith("command line: cannot read the requirement 'torchvision @ https://example.org/torch-")
    assert message.endswith(f"the wheel {TORCH_WHEEL} is torch, not torchvision; fix the name or the URL")


def test_a_bare_relative_wheel_path_on_the_command_line(tmp_path: Path) -> None:
    (req,) = read(tmp_path, specs=[f"./{TORCH_WHEEL}"]).requirements
    path = tmp_path / TORCH_WHEEL
    assert (req.kind, req.name, req.version, req.archive) == ("local", "torch", Version("2.9.0+cu128"), "wheel")
    assert (req.text, req.path, req.url) == (f"./{TORCH_WHEEL}", str(path), path.as_uri())
    assert req.spec == f"torch @ {path.as_uri()}"


def test_a_bare_path_in_a_file_is_relative_to_the_working_directory_as_in_pip(tmp_path: Path) -> None:
    # pip and uv read paths in requirement files against the working directory (pypa/pip#8765), -r against the
    # file: the same file must not install a different wheel under wheelfit.
    write(tmp_path, "deps/r.txt", f"wheels/{TORCH_WHEEL}\n")
    (req,) = read(tmp_path, ["deps/r.txt"]).requirements
    assert req.path == str(tmp_path / "wheels" / TORCH_WHEEL)


@pytest.mark.parametrize("form", ["absolute", "file-url", "file-localhost"])
def test_absolute_wheel_paths_and_file_urls_given_bare(tmp_path: Path, form: str) -> None:
    path = tmp_path / "some dir" / TORCH_WHEEL
    text = {"absolute": str(path), "file-url": path.as_uri(), "file-localhost": f"file://localhost{path}"}[form]
    write(tmp_path, "r.txt", text + ' ; python_version < "3.13"\n')
    (req,) = read(tmp_path, ["r.txt"]).requirements
    assert (req.kind, req.name, req.path, str(req.marker)) == ("local", "torch", str(path), 'python_version < "3.13"')
    assert req.spec == f'torch @ {path.as_uri()} ; python_version < "3.13"'


def test_a_local_wheel_keeps_its_extras_and_marker(tmp_path: Path) -> None:
    (req,) = read(tmp_path, specs=[f'./{TORCH_WHEEL}[opt-einsum] ; python_version < "3.13"']).requirements
    assert req.extras == {"opt-einsum"}
    assert req.spec == f'torch[opt-einsum] @ {(tmp_path / TORCH_WHEEL).as_uri()} ; python_version < "3.13"'


def test_a_bare_wheel_url(tmp_path: Path) -> None:
    url = "https://example.org/wheels/numpy-2.1.0-cp311-cp311-manylinux_2_17_x86_64.whl"
    (req,) = read(tmp_path, specs=[url]).requirements
    assert (req.kind, req.name, req.version, req.url, req.spec) == ("direct", "numpy", Version("2.1.0"), url, url)
    assert (req.requirement.name, req.requirement.url) == ("numpy", url)  # type: ignore[union-attr]


def test_a_wheel_file_name_that_is_not_one_is_refused(tmp_path: Path) -> None:
    write(tmp_path, "r.txt", "numpy\n./torch-latest.whl\n")
    message = refused(tmp_path, ["r.txt"])
    assert message.startswith("r.txt:2: cannot read the requirement './torch-latest.whl': ")
    assert message.endswith("; rename the file as the wheel spec says")


@pytest.mark.parametrize(
    ("text", "kind", "name", "archive"),
    [
        ("./numpy-2.0.0.tar.gz", "local", "numpy", "sdist"),
        ("./vendor/myproject", "local", None, "directory"),
        ("./vendor/myproject[extra]", "local", None, "directory"),
        ("foo @ file:///src/foo", "direct", "foo", "directory"),
        ("git+https://github.com/org/foo#egg=foo", "direct", "foo", "other"),
        ("git+https://github.com/org/foo", "direct", None, "other"),
        ("https://example.org/foo-1.0.tar.gz", "direct", "foo", "sdist"),
    ],
)
def test_sources_of_other_packages_pass_through(
    tmp_path: Path, text: str, kind: str, name: str | None, archive: str
) -> None:
    result = read(tmp_path, specs=[text])
    (req,) = result.requirements
    assert (req.kind, req.name, req.archive) == (kind, name, archive)
    family, other = result.split(is_torch_family)
    assert family == () and other == (req,)


def test_a_local_source_directory_is_given_absolute(tmp_path: Path) -> None:
    (req,) = read(tmp_path, specs=['./vendor/myproject[extra] ; os_name == "posix"']).requirements
    assert req.spec == f'{tmp_path / "vendor" / "myproject"}[extra] ; os_name == "posix"'


@pytest.mark.parametrize(
    ("text", "what"),
    [
        ("./torch-2.9.0.tar.gz", "a source archive"),
        ("torch @ file:///src/pytorch", "a directory"),
        ("torchvision @ https://github.com/pytorch/vision/archive/v0.24.0.zip", "a source archive"),
        ("git+https://github.com/pytorch/vision#egg=torchvision", "not a wheel"),
    ],
)
def test_a_torch_family_source_is_refused_wheelfit_needs_the_wheel(tmp_path: Path, text: str, what: str) -> None:
    write(tmp_path, "r.txt", f"numpy\n{text}\n")
    result = read(tmp_path, ["r.txt"])
    with pytest.raises(Exception, match="only from a built wheel") as info:
        result.split(is_torch_family)
    assert str(info.value).startswith(f"r.txt:2: {text!r} is {what}; wheelfit installs ")
    assert str(info.value).endswith("only from a built wheel: give the .whl file or just the name")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("torch>=>2", "command line: cannot read the requirement 'torch>=>2': "),
        ('torch ; python_version <<< "3"', "command line: cannot read the requirement 'torch ; python_version"),
        ('./x-1.0-py3-none-any.whl ; python_version <<< "3"', "command line: cannot read the requirement './x-1.0"),
        (
            f"foo @ https://example.org/foo-1.0-py3-none-any.whl#sha256=zz{SHA}",
            "#sha256= must be followed by a hex digest",
        ),
        ("foo @ file://server/share/foo-1.0-py3-none-any.whl", "a file: URL on host 'server' is not a local path"),
    ],
)
def test_unreadable_requirements_are_one_line(tmp_path: Path, text: str, expected: str) -> None:
    assert expected in refused(tmp_path, specs=[text])


@pytest.mark.parametrize("reference", ["./w/x-1.0-py3-none-any.whl", "file:./w/x-1.0-py3-none-any.whl"])
def test_a_relative_direct_reference_is_given_to_the_backend_absolute(tmp_path: Path, reference: str) -> None:
    (req,) = read(tmp_path, specs=[f"x[b,a] @ {reference}#sha256={SHA} ; os_name == 'nt'"]).requirements
    wheel = tmp_path / "w" / "x-1.0-py3-none-any.whl"
    assert (req.kind, req.path, req.hashes) == ("direct", str(wheel), (f"sha256:{SHA}",))
    assert req.spec == f'x[a,b] @ {wheel.as_uri()}#sha256={SHA} ; os_name == "nt"'
    assert req.text == f"x[b,a] @ {reference}#sha256={SHA} ; os_name == 'nt'"
