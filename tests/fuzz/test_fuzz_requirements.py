"""Fuzz target: requirements files and command-line requirements as pip and uv take them
(``wheelfit.requirements.read_requirements``) (issue 15).

Contract: ``read_requirements`` returns a ``RequirementSet`` or raises ``UsageError`` (a ``WheelfitError``) with a
one-line message, never anything else, whatever the files hold; it reads files only through the ``reader`` it is
given (here a dict: no disk), and every requirement it returns has a canonical name or a path or URL, and hashes
written ``algorithm:hexdigest``.
"""

from __future__ import annotations

from hypothesis import example, given
from hypothesis import strategies as st
from packaging.utils import canonicalize_name

from wheelfit.errors import UsageError
from wheelfit.requirements import read_requirements

from .strategies import binary_text, near_valid

CWD = "/work/project"
LINES = [
    """# pinned by pip-compile
--index-url https://download.pytorch.org/whl/cu128
--extra-index-url https://pypi.org/simple
-f ./wheels
--pre
torch==2.8.0+cu128 ; platform_system == "Linux" \\
    --hash=sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef
torchvision>=0.23; python_version >= '3.10'
numpy[extra1,extra2]~=2.1
./wheels/torch-2.9.0-cp312-cp312-manylinux_2_28_x86_64.whl
demo @ https://example.org/demo-1.0-py3-none-any.whl#sha256=abcdef
https://example.org/pkg-1.0.tar.gz#egg=pkg
file:///opt/wheels/numpy-2.1.0-cp312-cp312-linux_x86_64.whl
-c constraints.txt
-r more.txt
${WHEEL_DIR}/x-1.0-py3-none-any.whl
""",
]
FILES = {
    "constraints.txt": "numpy<2.3\ntorch==2.8.0 ; python_version >= '3.10'\n",
    "more.txt": "rich>=13\n-r constraints.txt\n",
}


def _reader(files: dict[str, bytes]) -> object:
    def read(path: str, limit: int) -> bytes:
        name = path.rsplit("/", 1)[-1]
        if not path.startswith(CWD) or name not in files:
            raise FileNotFoundError(path)
        return files[name][:limit]

    return read


#: One to four of the sample's lines, each mutated: a whole file fails at its first bad line.
SHORT = st.lists(near_valid(LINES[0].splitlines()), min_size=1, max_size=4).map("\n".join)


@given(
    (near_valid(LINES) | SHORT).map(str.encode) | binary_text().map(lambda t: t.encode("utf-8", "surrogateescape")),
    st.lists(near_valid(LINES[0].splitlines()), max_size=2),
)
@example(b"torch==2.8.0\n", ["demo @ http://[::1/x.whl"])
@example(b"http://[::1/demo-1.0-py3-none-any.whl\n", [])
@example(b"./torch-1.0-" + b"9" * 5000 + b"-py3-none-any.whl\n", [])
@example(b"./torch-" + b"9" * 5000 + b".tar.gz\n", [])
@example(b"demo @ file://[x/demo-1.0-py3-none-any.whl\n", [])
@example(b"a; " + b"(" * 1000 + b"python_version > '1'" + b")" * 1000 + b"\n", [])
def test_requirements_are_read_or_refused_in_one_line(text: bytes, specs: list[str]) -> None:
    files = {"requirements.txt": text, **{k: v.encode() for k, v in FILES.items()}}
    try:
        result = read_requirements(
            specs,
            ["requirements.txt"],
            reader=_reader(files),  # type: ignore[arg-type]
            cwd=CWD,
            environ={"WHEEL_DIR": "/opt/wheels"},
        )
    except UsageError as exc:
        message = str(exc)
        assert message and "\n" not in message and "\r" not in message, message
        return
    for req in (*result.requirements, *result.constraints):
        assert req.name is None or req.name == canonicalize_name(req.name), req
        assert req.name is not None or req.path is not None or req.url is not None, req
        for h in req.hashes:
            algorithm, _, digest = h.partition(":")
            assert algorithm and digest and all(c in "0123456789abcdef" for c in digest), req
