"""Start-up: a command imports and builds what it runs, nothing more (issue 29). What each costs is measured in
bench/startup.py; here only what is imported, and that the lazy parts behave as the eager ones did."""

from __future__ import annotations

import subprocess
import sys
import warnings
from pathlib import Path
from types import ModuleType

import pytest

from wheelfit.lazy import LazyMapping

from .conftest import ROOT, hermetic_env

CLI = ROOT / "src" / "wheelfit" / "cli"


def _modules_after(args: list[str]) -> set[str]:
    """The modules a ``wheelfit ARGS`` process holds when its command is done."""
    script = (
        "import contextlib, io, sys\n"
        "from wheelfit.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    status = main(sys.argv[1:])\n"
        "print(status, *sorted(sys.modules))"
    )
    env = hermetic_env()
    done = subprocess.run([sys.executable, "-c", script, *args], capture_output=True, text=True, env=env, check=True)
    status, *modules = done.stdout.split()
    assert status == "0", done.stderr
    return set(modules)


def test_version_alone_is_answered_without_the_parser() -> None:
    assert not {"typer", "click", "wheelfit.cli.app"} & _modules_after(["--version"])


def test_version_alone_and_through_typer_print_the_same() -> None:
    def run(*args: str) -> str:
        done = subprocess.run(
            [sys.executable, "-m", "wheelfit", *args], capture_output=True, text=True, env=hermetic_env(), check=True
        )
        return done.stdout

    assert run("--version") == run("-V") == run("--version", "detect") == run("-V", "--help")


def _cli_app() -> ModuleType:
    with warnings.catch_warnings():  # typer 0.25 trips a click deprecation warning when imported under pytest
        warnings.simplefilter("ignore", DeprecationWarning)
        import typer.main  # noqa: F401

        from wheelfit.cli import app

    return app


def test_a_command_imports_no_other_commands_module() -> None:
    ELSEWHERE = _cli_app().ELSEWHERE  # noqa: N806

    loaded = _modules_after(["detect", "--json"])
    assert "wheelfit.cli.app" in loaded
    assert not {f"wheelfit.cli.{module}" for module in ELSEWHERE.values()} & loaded
    assert "rich" not in loaded  # what the other commands render with
    assert not {"wheelfit.app.install", "wheelfit.app.plan", "wheelfit.app.verify", "wheelfit.resolve"} & loaded


def test_the_api_facade_names_load_on_first_use() -> None:
    """``wheelfit.api`` imports none of the flows until a name is asked for, and then gives the flow's own
    object, as the eager re-exports did."""
    import importlib

    script = "import sys, wheelfit.api; print(*sorted(m for m in sys.modules if m.startswith('wheelfit.app')))"
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=hermetic_env())
    assert done.returncode == 0 and done.stdout.split() == [], done.stderr
    from wheelfit import api

    for name in api.__all__:
        module = importlib.import_module(f"wheelfit.{api._WHERE[name]}")
        assert getattr(api, name) is getattr(module, name)
    with pytest.raises(AttributeError, match=r"'wheelfit\.api' has no attribute 'nothing'"):
        api.nothing  # noqa: B018


def test_a_plan_for_a_target_does_not_load_the_nvidia_detector() -> None:
    """The driver table (probekit's, not the plugin's) is read for ``driver=``; the detector is not needed to plan."""
    loaded = _modules_after(["plan", "torch", "--offline", "--json", "--target", "cuda=8.6,driver=580.95.05"])
    assert "wheelfit_probekit.drivers" in loaded and "wheelfit_nvidia.detect" not in loaded


def test_every_command_module_is_in_the_table_and_registers_its_command() -> None:
    """``ELSEWHERE`` names every ``*_cmd`` module (``configure``'s subcommands come with their group), and the
    module each name points at registers a command or group of that name."""
    import typer.main

    cli_app = _cli_app()
    subcommands = {"configure_pip_cmd", "configure_uv_cmd"}
    on_disk = {p.stem for p in CLI.glob("*_cmd.py")} - subcommands
    assert set(cli_app.ELSEWHERE.values()) == on_disk
    root = typer.main.get_command(cli_app.app)
    assert isinstance(root, typer.core.TyperGroup)
    listed = list(root.commands)
    assert listed == ["detect", "plan", *cli_app.ELSEWHERE]  # the order --help lists them in
    assert root.commands["configure"].commands.keys() >= {"pip", "uv"}  # type: ignore[attr-defined]


def test_a_group_is_whole_whichever_of_its_modules_came_first() -> None:
    """``sync`` imports ``configure uv``'s module for an option; ``configure pip`` must still be there after."""
    script = (
        "import contextlib, io\n"
        "from wheelfit.cli.app import run\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    first = run(['sync', '--help'])\n"
        "    second = run(['configure', 'pip', '--help'])\n"
        "print(first, second)"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=hermetic_env())
    assert done.stdout.split() == ["0", "0"], done.stderr


def test_an_unknown_command_is_a_usage_error_with_a_suggestion() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "wheelfit", "instal"], capture_output=True, text=True, env=hermetic_env()
    )
    assert done.returncode == 2 and "No such command 'instal'. Did you mean 'install'?" in done.stderr


# wheelfit.lazy.LazyMapping


def _lazy(made: list[str]) -> LazyMapping[str]:
    def make(name: str) -> str:
        made.append(name)
        return name.upper()

    return LazyMapping({"a": "A", "b": "B"}, ["c", "b", "d"], make)


def test_a_lookup_makes_that_entry_alone_and_once() -> None:
    made: list[str] = []
    m = _lazy(made)
    assert m["d"] == "D" and m.get("d") == "D" and m.get("zzz") is None
    assert "c" in m and "zzz" not in m
    assert made == ["d"]
    with pytest.raises(KeyError):
        m["zzz"]


def test_iterating_makes_every_entry_in_a_fixed_order() -> None:
    made: list[str] = []
    m = _lazy(made)
    m["d"]
    assert list(m) == ["a", "c", "b", "d"]  # made's own first, then later's, whichever was made first
    assert len(m) == 4 and dict(m.items()) == {"a": "A", "c": "C", "b": "B", "d": "D"}
    assert sorted(made) == ["c", "d"]  # b was made already


def test_a_deleted_entry_stays_deleted_and_a_set_one_is_kept() -> None:
    made: list[str] = []
    m = _lazy(made)
    del m["c"]
    m["e"] = "E"
    assert list(m) == ["a", "e", "b", "d"] and "c" not in m and made == ["d"]



def test_reading_an_index_does_not_load_the_httpx_command_line(tmp_path: Path) -> None:
    """The ``wheelfit`` process makes httpx take the stub it has for its command line (rich, pygments: ~100 ms);
    the plan still reads the index over HTTP, and a library caller's httpx keeps its ``main``."""
    from tests.install.loopback import serve
    from tests.support.wheels import make_torch_like

    page = tmp_path / "index" / "cu130" / "torch"
    page.mkdir(parents=True)
    wheel = make_torch_like(tmp_path / "build", "2.15.0", "cu130")
    wheel.rename(page / wheel.name)
    script = (
        "import contextlib, io, sys\n"
        "from wheelfit.cli import main\n"
        "sys.argv[1:] = sys.argv[2:]\n"  # what the `wheelfit` script sees
        "with contextlib.redirect_stdout(io.StringIO()) as out:\n"
        "    status = main()\n"
        "print(status, 'httpx' in sys.modules, 'pygments' in sys.modules, out.getvalue().count('cu130'))"
    )
    env = hermetic_env(WHEELFIT_CACHE_DIR=str(tmp_path / "cache"))
    with serve(tmp_path / "index") as url:
        argv = ["plan", "torch", "--json", "--target", "cuda=8.6,driver=580.95.05", "--pytorch-index", url]
        done = subprocess.run(
            [sys.executable, "-c", script, "wheelfit", *argv], capture_output=True, text=True, env=env, check=False
        )
    status, read_index, pygments, said = done.stdout.split()
    assert (status, read_index, pygments) == ("0", "True", "False"), done.stderr
    assert int(said) > 0
    library = subprocess.run(
        [sys.executable, "-c", "import sys, wheelfit.cli, httpx; print(sys.modules['httpx._main'] is not None)"],
        capture_output=True, text=True, env=hermetic_env(), check=True,
    )  # fmt: skip
    assert library.stdout.strip() == "True"
