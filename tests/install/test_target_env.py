"""The target environment described by one standard-library child process: its wheel tags computed here are the
ones ``packaging.tags.sys_tags()`` gives inside it, its markers ``default_environment()``'s, its distributions
``importlib.metadata``'s; an interpreter of another platform is asked for its tags instead."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import packaging
import pytest

from tests.conftest import hermetic_env
from wheelfit.install.target_env import inspect_env, local_tags

from .conftest import make_venv

_SAME_AS_PACKAGING = """
import json, sys
sys.path.insert(0, sys.argv[1])
import importlib.metadata as md
dists = {d.metadata["Name"]: d.version for d in md.distributions() if not d._path.is_relative_to(sys.argv[1])}
from packaging import markers, tags
print(json.dumps([[str(t) for t in tags.sys_tags()], markers.default_environment(), dists]))
"""


def test_the_description_is_what_packaging_and_importlib_metadata_say_inside_the_interpreter(tmp_path: Path) -> None:
    python = make_venv(tmp_path / "venv", with_pip=True)
    lib = str(Path(packaging.__file__).resolve().parent.parent)
    out = subprocess.run([str(python), "-s", "-c", _SAME_AS_PACKAGING, lib], capture_output=True, text=True,
                         env=hermetic_env(), check=True)  # fmt: skip
    tags, markers, dists = json.loads(out.stdout)
    env = inspect_env(str(python), hermetic_env())
    assert list(env.tags) == tags and len(tags) > 100
    assert dict(env.markers) == markers
    assert dict(env.installed) == dists and "pip" in dists


def test_an_interpreter_of_another_platform_is_asked_for_its_tags() -> None:
    facts = {"implementation": "cpython", "version": [3, 11], "platform": "macosx-11.0-arm64", "bits": 64}
    assert local_tags(facts) is None
    assert local_tags({**facts, "implementation": "pypy"}) is None
    assert local_tags({**facts, "version": "3.11"}) is None


def test_start_up_noise_from_a_pth_file_does_not_break_the_description(tmp_path: Path) -> None:
    """A ``.pth`` line that prints at every start-up (a banner) once ended in an internal error (JSONDecodeError)."""
    python = make_venv(tmp_path / "venv")
    (site,) = (tmp_path / "venv").glob("lib/python3*/site-packages")
    (site / "banner.pth").write_text('import sys; print("Welcome to the lab environment {")\n')
    env = inspect_env(str(python), hermetic_env())
    assert env.prefix == tmp_path / "venv" and env.tags


def test_an_interpreter_that_prints_something_else_is_one_line() -> None:
    from wheelfit.install.errors import EnvironmentProbeError
    from wheelfit.install.target_env import _last_json

    for out in ("", "hello\n", '{"executable": 1}\n', "[1, 2]\n"):
        with pytest.raises(EnvironmentProbeError, match=r"^/opt/py/bin/python did not describe itself") as info:
            _last_json(out, "/opt/py/bin/python")
        assert "\n" not in str(info.value)
