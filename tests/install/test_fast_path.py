"""``wheelfit install``'s start-up fast path (no typer) answers exactly as the typer command does.

Each case runs twice against the same environment: once spelled plainly (the fast path takes it) and once with
``--index-url=URL``, a spelling the fast path leaves to typer. Exit status, stdout and stderr must be equal.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import PROGRESS, Index, make_venv, run_wheelfit, tree

GTX_1080 = "cuda=6.1,driver=580.95.05"


def _both(args: list[str], index: Index, env: dict[str, str]) -> tuple[subprocess.CompletedProcess[str], ...]:
    run_wheelfit([*args, "--pytorch-index", index.pytorch, "--index-url", index.default], env)  # fills the caches
    plain = run_wheelfit([*args, "--pytorch-index", index.pytorch, "--index-url", index.default], env)
    typer = run_wheelfit([*args, "--pytorch-index", index.pytorch, f"--index-url={index.default}"], env)
    return plain, typer


def _outcome(done: subprocess.CompletedProcess[str]) -> tuple[int, str, str, list[str]]:
    """Exit status, stdout, stderr without progress lines, and the progress lines in any order (concurrent)."""
    lines = done.stderr.splitlines(keepends=True)
    progress = sorted(ln for ln in lines if ln.startswith(PROGRESS))
    return done.returncode, done.stdout, "".join(ln for ln in lines if not ln.startswith(PROGRESS)), progress


@pytest.mark.parametrize(
    "extra",
    [
        pytest.param(["torch", "torchvision", "--dry-run"], id="dry-run"),
        pytest.param(["torch", "--dry-run", "--json", "--no-verify"], id="dry-run-json"),
        pytest.param(["torch", "--installer", "pip2"], id="bad-installer"),
        pytest.param(["torch", "needstriton"], id="refused-dependency"),
        pytest.param(["torch", "--dry-run", "--kb", "/nonexistent/kb.json"], id="missing-kb"),
    ],
)
def test_fast_path_answers_as_typer_does(index: Index, env: dict[str, str], tmp_path: Path, extra: list[str]) -> None:
    python = make_venv(tmp_path / "venv")
    before = tree(tmp_path / "venv")
    plain, typer = _both(["install", "--target", "os=linux", "--python", str(python), *extra], index, env)
    assert _outcome(plain) == _outcome(typer)
    assert tree(tmp_path / "venv") == before  # every case is a dry run or fails before any change


def test_an_install_through_the_fast_path_imports_neither_typer_nor_click(
    index: Index, env: dict[str, str], tmp_path: Path
) -> None:
    python = make_venv(tmp_path / "venv")
    script = (
        "import sys; from wheelfit.cli import main; rc = main(); print(sorted({'typer', 'click'} & set(sys.modules)))"
    )
    args = ["install", "torch", "--target", "os=linux", "--python", str(python), "--no-verify"]
    args += ["--pytorch-index", index.pytorch, "--index-url", index.default, "--json"]
    done = subprocess.run([sys.executable, "-c", script, *args], capture_output=True, text=True, env=env, check=True)
    assert done.stdout.strip().splitlines()[-1] == "[]", done.stderr
    fallback = subprocess.run(
        [sys.executable, "-c", script, *args, "--probe-timeout", "1e1"], capture_output=True, text=True, env=env
    )  # a spelling left to typer
    assert fallback.stdout.strip().splitlines()[-1] == "['click', 'typer']", fallback.stderr


@pytest.mark.filterwarnings("ignore:'click.utils.get_.*_stream' is deprecated:DeprecationWarning")
def test_the_fast_path_knows_exactly_the_options_the_typer_command_declares() -> None:
    """An option added to ``install`` but not to the fast path's tables would be refused there, silently sent to
    typer; one the fast path knows but typer does not would be accepted without a usage error."""
    import click
    import typer.main

    from wheelfit.cli import _INSTALL_ENVVARS, _INSTALL_FLAGS, _INSTALL_VALUES
    from wheelfit.cli.app import app

    group = typer.main.get_command(app)
    assert isinstance(group, click.Group)
    command = group.commands["install"]
    options = [p for p in command.params if isinstance(p, click.Option) and p.name != "help"]
    declared_values = {o for p in options if not p.is_flag for o in p.opts}
    declared_flags = {o for p in options if p.is_flag for o in p.opts}
    assert declared_values == set(_INSTALL_VALUES)
    assert declared_flags == set(_INSTALL_FLAGS)
    envvars = {p.envvar for p in options if isinstance(p.envvar, str)}
    assert envvars <= set(_INSTALL_ENVVARS)
