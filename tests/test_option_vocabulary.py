"""One vocabulary of options for every command that plans (issue 33): the same names, short forms, environment
variables, defaults and help, from one definition (the ``*Opt`` types of ``wheelfit.cli.app``), checked on the
commands as click sees them."""

from __future__ import annotations

import warnings
from collections.abc import Iterator

import click
import pytest

#: The commands that plan a build for a machine, and those that judge one (they plan to compare).
PLANNING = ("plan", "install", "lock", "configure uv", "configure pip", "sync", "env")
JUDGING = ("doctor", "verify")
#: What every planning command takes: the machine, the knowledge, the index, the choice of build, the network.
VOCABULARY = (
    "--target", "--sysroot", "--probe-timeout", "--kb", "--offline", "--pytorch-index", "--torch-backend", "--pre",
    "--allow-cpu", "--require-gpu", "--timeout", "--cert",
)  # fmt: skip
#: What the judging commands take of it (they never choose a build, so no backend, --pre, --allow-cpu).
JUDGING_VOCABULARY = ("--target", "--sysroot", "--probe-timeout", "--kb", "--offline", "--pytorch-index", "--timeout",
                      "--cert", "--variant-index")  # fmt: skip


def _commands() -> dict[str, click.Command]:
    with warnings.catch_warnings():  # typer 0.25 trips a click deprecation warning when imported under pytest
        warnings.simplefilter("ignore", DeprecationWarning)
        import typer.main

        from wheelfit.cli.app import app

        root = typer.main.get_command(app)

    def walk(cmd: click.Command, path: tuple[str, ...]) -> Iterator[tuple[str, click.Command]]:
        if isinstance(cmd, click.Group):
            for name, sub in cmd.commands.items():
                yield from walk(sub, (*path, name))
        else:
            yield " ".join(path), cmd

    return dict(walk(root, ()))


COMMANDS = _commands()


def _option(command: str, name: str) -> click.Option | None:
    return next((p for p in COMMANDS[command].params if isinstance(p, click.Option) and name in p.opts), None)


def _spelling(opt: click.Option) -> tuple[object, ...]:
    """Everything a user meets of an option, but whether one command takes it several times (``--target``)."""
    default = tuple(opt.default) if isinstance(opt.default, list) else opt.default
    envvar = tuple(opt.envvar) if isinstance(opt.envvar, list) else opt.envvar
    return (tuple(opt.opts), tuple(opt.secondary_opts), envvar, default, opt.is_flag, opt.metavar)


@pytest.mark.parametrize("name", VOCABULARY)
def test_every_planning_command_takes_the_option_spelled_alike(name: str) -> None:
    found = {command: _option(command, name) for command in PLANNING}
    missing = [command for command, opt in found.items() if opt is None]
    assert missing == [], f"{name} is missing from {missing}"
    spellings = {command: _spelling(opt) for command, opt in found.items() if opt is not None}
    assert len(set(spellings.values())) == 1, spellings


@pytest.mark.parametrize("name", JUDGING_VOCABULARY)
def test_the_judging_commands_take_their_part_of_it_alike(name: str) -> None:
    found = {command: _option(command, name) for command in (*JUDGING, "plan")}
    assert all(opt is not None for opt in found.values()), found
    assert len({_spelling(opt) for opt in found.values() if opt is not None}) == 1


def test_an_option_two_commands_share_means_the_same_everywhere() -> None:
    """Any option that appears in two commands has one spelling, variable, default and help; ``--target`` may be
    taken several times where a command makes one output per target, ``--format``/``--output``/``--json`` differ
    in what they write, and are not compared."""
    per_name: dict[str, dict[str, tuple[object, ...]]] = {}
    for command, cmd in COMMANDS.items():
        for p in cmd.params:
            if isinstance(p, click.Option) and p.opts[0] not in ("--target", "--format", "--output", "--json",
                                                                 "--help", "--dry-run", "--requirement"):  # fmt: skip
                per_name.setdefault(p.opts[0], {})[command] = (*_spelling(p), p.help)
    differ = {name: uses for name, uses in per_name.items() if len(set(uses.values())) > 1}
    assert differ == {}


def test_index_url_has_the_short_form_pip_users_type() -> None:
    assert {tuple(_option(c, "--index-url").opts) for c in ("install", "lock")} == {("--index-url", "-i")}  # type: ignore[union-attr]
