# ruff: noqa: F811 - the fixtures are imported, then named as parameters
"""The Docker recipe (``docs/recipes/Dockerfile``), built here as far as a machine without a Docker engine allows.

A small reader takes the Dockerfile as BuildKit does (line continuations, the parser directive, ``ARG`` before and
inside ``FROM``, ``--build-arg``) and carries out each stage's instructions on the host: ``RUN`` in ``sh -e`` with
the stage's variables (its ``--mount=type=cache`` targets are where the tools already keep their caches, under
``HOME=/root``), ``ENV``, ``WORKDIR``, ``COPY`` (from the build context or ``--from`` a stage), and the final
stage's ``CMD``. Absolute paths of the image (``/opt/venv``, ``/src``, ``/root``) are placed under one directory per
image. What stands in for the image ``python:3.12-slim`` is a fresh venv that has only pip, first on ``PATH``.

The build context is a uv project configured by ``wheelfit configure uv`` for two machines and locked by real uv.
As in the GitHub Actions recipe's test, the loopback indexes are given through the environment only
(``PIP_FIND_LINKS`` for the wheels built from this repository, ``UV_DEFAULT_INDEX``), so the file runs as written.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests.conftest import ROOT, hermetic_env

from ..install.conftest import Index, caches, index, make_venv, run_wheelfit  # noqa: F401
from .test_bare_python import pip_cache, wheelhouse
from .uv_helpers import ADA, PASCAL, configure, project, uv, uv_env

RECIPE = ROOT / "docs" / "recipes" / "Dockerfile"
#: The image paths placed under the image's directory.
IMAGE_PATHS = ("/opt/", "/src", "/root")
VARIABLE = re.compile(r"\$(?:\{([A-Za-z_][A-Za-z0-9_]*)\}|([A-Za-z_][A-Za-z0-9_]*))")


def instructions(text: str) -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) in order: comments and the parser directive dropped, continuations joined."""
    out: list[tuple[str, str]] = []
    pending = ""
    for raw in text.splitlines():
        line = raw.strip()
        if not pending and (not line or line.startswith("#")):
            continue
        if line.endswith("\\"):
            pending += line[:-1] + " "
            continue
        word, _, rest = (pending + line).partition(" ")
        out.append((word.upper(), rest.strip()))
        pending = ""
    assert not pending, "a continuation at the end of the file"
    return out


@dataclass
class Stage:
    name: str
    root: Path
    env: dict[str, str]
    args: dict[str, str] = field(default_factory=dict)
    workdir: str = "/"
    cmd: list[str] = field(default_factory=list)

    def expand(self, text: str) -> str:
        values = {**self.env, **self.args}
        return VARIABLE.sub(lambda m: values.get(m.group(1) or m.group(2), ""), text)

    def host(self, path: str) -> Path:
        path = path if path.startswith("/") else f"{self.workdir.rstrip('/')}/{path}"
        return self.root / path.lstrip("/")


def image_value(value: str, root: Path) -> str:
    """An ``ENV`` value with the image's absolute paths placed under ``root`` (each ``:``-separated part)."""
    return ":".join(str(root / p.lstrip("/")) if p.startswith(IMAGE_PATHS) else p for p in value.split(":"))


def build(text: str, build_args: dict[str, str], context: Path, base_env: dict[str, str], out: Path) -> Stage:
    """Carry out every stage; the last one is returned (its ``cmd`` is what ``docker run`` would start)."""
    global_args: dict[str, str] = {}
    stages: dict[str, Stage] = {}
    stage: Stage | None = None
    for number, (word, rest) in enumerate(instructions(text)):
        if word == "ARG":
            name, _, default = rest.partition("=")
            value = build_args.get(name, default)
            if stage is None:
                global_args[name] = value
            else:
                stage.args[name] = build_args.get(name, global_args.get(name, default))
        elif word == "FROM":
            image, _, name = rest.partition(" AS ")
            assert image.startswith("python:") and stage_image(image, global_args) == "python:3.12-slim", image
            root = out / f"stage-{number}"
            (root / "root").mkdir(parents=True)
            stage = Stage(name or f"stage-{number}", root, {**base_env, "HOME": str(root / "root")})
            stages[stage.name] = stage
        else:
            assert stage is not None, f"{word} before FROM"
            carry_out(stage, word, rest, context, stages)
    assert stage is not None
    return stage


def stage_image(image: str, args: dict[str, str]) -> str:
    return VARIABLE.sub(lambda m: args[m.group(1) or m.group(2)], image)


def carry_out(stage: Stage, word: str, rest: str, context: Path, stages: dict[str, Stage]) -> None:
    if word == "ENV":
        for pair in shlex.split(rest):
            name, _, value = pair.partition("=")
            stage.env[name] = stage.expand(image_value(value, stage.root))
    elif word == "WORKDIR":
        stage.workdir = rest
        stage.host(rest).mkdir(parents=True, exist_ok=True)
    elif word == "COPY":
        words = shlex.split(rest)
        origin = context
        if words[0].startswith("--from="):
            origin = stages[words.pop(0).removeprefix("--from=")].root
        *sources, target = words
        dst = stage.host(target)
        for source in sources:
            src = origin / source.lstrip("/")
            if src.is_dir():  # as Docker: the directory's contents
                shutil.copytree(src, dst, symlinks=True, dirs_exist_ok=True)
            else:
                into = dst / src.name if target.endswith("/") or dst.is_dir() else dst
                into.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(src, into)
    elif word == "RUN":
        while rest.startswith("--mount="):
            mount, _, rest = rest.partition(" ")
            options = dict(kv.partition("=")[::2] for kv in mount.removeprefix("--mount=").split(","))
            assert options["type"] == "cache", mount
            # The tools' own cache directories for root, so the mount is what they use.
            assert options["target"] in ("/root/.cache/pip", "/root/.cache/uv"), mount
        done = subprocess.run(
            ["sh", "-e", "-c", rest],
            cwd=stage.host(stage.workdir),
            env={**stage.env, **stage.args},
            capture_output=True,
            text=True,
            timeout=600,
        )
        if done.returncode != 0:
            raise BuildError(rest, done.returncode, done.stderr)
    elif word == "CMD":
        stage.cmd = json.loads(rest)
    else:
        pytest.fail(f"the recipe uses {word}, which this reader does not carry out")


class BuildError(Exception):
    def __init__(self, command: str, status: int, stderr: str) -> None:
        super().__init__(f"RUN {command} exited {status}\n{stderr}")
        self.status, self.stderr = status, stderr


@pytest.fixture(scope="module")
def context(index: Index, caches: dict[str, str], tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The build context: the project, configured for a GTX 1080 and an RTX 4090, and locked by real uv."""
    tmp = tmp_path_factory.mktemp("docker-context")
    root = project(tmp)
    env = uv_env(index, caches)
    done = run_wheelfit(configure(root, index, "--target", PASCAL, "--target", ADA), env)
    assert done.returncode == 0, done.stderr
    locked = uv(["lock"], root, env)
    assert locked.returncode == 0, locked.stderr
    (root / "app.py").write_text("import torch\n")
    return root


def base_env(index: Index, tmp_path_factory: pytest.TempPathFactory, tmp: Path) -> dict[str, str]:
    """The stand-in for ``python:3.12-slim``: a fresh venv with only pip, first on PATH."""
    python = make_venv(tmp / "image-python", with_pip=True)
    env = hermetic_env(
        PATH=f"{python.parent}{os.pathsep}{os.environ['PATH']}",
        PIP_FIND_LINKS=str(wheelhouse(tmp_path_factory)),
        PIP_CACHE_DIR=pip_cache(tmp_path_factory),
        UV_DEFAULT_INDEX=index.default,
    )
    env.pop("VIRTUAL_ENV", None)
    return env


def test_the_recipe_is_multi_stage_with_a_target_argument_a_cache_mount_and_a_locked_sync() -> None:
    steps = instructions(RECIPE.read_text())
    froms = [rest for word, rest in steps if word == "FROM"]
    assert len(froms) == 2 and froms[0].endswith(" AS builder")
    assert ("ARG", "WHEELFIT_TARGET") in steps
    runs = [rest for word, rest in steps if word == "RUN"]
    assert all(r.startswith("--mount=type=cache,target=/root/.cache/") for r in runs)
    syncs = [r for r in runs if "wheelfit sync" in r]
    assert syncs and all('--target "$WHEELFIT_TARGET" --locked' in r for r in syncs)
    # The image that ships has no build tools: only the venv and the source come from the builder.
    final = steps[[w for w, _ in steps].index("FROM", 3) :]
    assert [rest for word, rest in final if word == "COPY"] == [
        "--from=builder /opt/venv /opt/venv",
        "--from=builder /src /src",
    ]


def test_the_project_records_a_build_per_target(context: Path) -> None:
    """What ``wheelfit sync --target`` chooses in the image, per target: the image below is built for one of them;
    the other's build is the lock's other extra (the same steps, another build argument)."""
    from wheelfit.integrations.uv_project import read_builds

    _, _, builds = read_builds(context)
    assert {b.target: (b.torch, b.variant) for b in builds} == {PASCAL: ("2.14.1", "cu126"), ADA: ("2.15.0", "cu130")}
    assert len({b.extra for b in builds}) == 2


def test_a_target_builds_an_image_with_its_build(
    context: Path, index: Index, tmp_path_factory: pytest.TempPathFactory, tmp_path: Path
) -> None:
    target, expected = PASCAL, "2.14.1+cu126"
    env = base_env(index, tmp_path_factory, tmp_path)
    image = build(RECIPE.read_text(), {"WHEELFIT_TARGET": target}, context, env, tmp_path / "image")
    ran = subprocess.run(
        image.cmd, cwd=image.host(image.workdir), env=image.env, capture_output=True, text=True, timeout=60
    )
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.strip() == expected
    # The venv the image runs is the one uv synced from the lock: no squatted 99.0, no package from elsewhere.
    assert shutil.which("python", path=image.env["PATH"]) == str(image.root / "opt" / "venv" / "bin" / "python")


def test_without_the_target_the_build_stops_with_what_to_set(
    context: Path, index: Index, tmp_path_factory: pytest.TempPathFactory, tmp_path: Path
) -> None:
    env = base_env(index, tmp_path_factory, tmp_path)
    with pytest.raises(BuildError) as failed:
        build(RECIPE.read_text(), {}, context, env, tmp_path / "image")
    assert failed.value.status == 2
    assert "set --build-arg WHEELFIT_TARGET" in failed.value.stderr
    assert not list((tmp_path / "image").glob("*/opt/venv"))
