"""The first minutes with the command line (issue 33): a typo gets one suggestion and exit 2, a requirement that
cannot exist is refused before anything is detected or fetched, ``--help`` says each command and argument whole,
and tables and the Mac report at 80 columns never show a token cut in two or a bare ``?``."""

from __future__ import annotations

import os
import sys
import warnings
from collections.abc import Callable
from pathlib import Path

import pytest

from .conftest import MACHINES, REALDATA, UNREACHABLE_INDEX

Cli = Callable[..., tuple[int, str]]
GTX_1080 = "cuda=6.1,driver=580.95.05"


def _nothing_here(*args: object, **kwargs: object) -> None:
    raise AssertionError("reached: a requirement that cannot exist must be refused before this")


@pytest.fixture
def cli(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> Cli:
    """``wheelfit ARGS`` in this process at 80 columns (``wheelfit.cli.app.run``): the exit status, and stdout
    plus stderr. No variable of the user's steers it; the PyTorch index is a port where nothing listens."""
    for name in list(os.environ):
        if name.startswith(("WHEELFIT_", "UV_", "PIP_", "CUDA_", "HSA_")):
            monkeypatch.delenv(name)
    monkeypatch.setenv("COLUMNS", "80")
    monkeypatch.setenv("WHEELFIT_PYTORCH_INDEX", UNREACHABLE_INDEX)
    monkeypatch.setenv("WHEELFIT_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("WHEELFIT_DATA_DIR", str(tmp_path / "data"))

    def call(args: list[str]) -> tuple[int, str]:
        with warnings.catch_warnings():  # typer 0.25 trips a click deprecation warning when imported under pytest
            warnings.simplefilter("ignore", DeprecationWarning)
            from wheelfit.cli.app import run
        code = run(args)
        out = capsys.readouterr()
        return code, out.out + out.err

    return call


@pytest.fixture
def no_detection_no_network(monkeypatch: pytest.MonkeyPatch) -> None:
    """Detecting the machine, reading an index or making an HTTP client fails the test (spies on the edges, not a
    stand-in for what is tested: the refusal comes before them)."""
    import wheelfit.api
    import wheelfit.fetch.http

    monkeypatch.setattr(wheelfit.api, "machine", _nothing_here)
    monkeypatch.setattr(wheelfit.api.Network, "prepare", _nothing_here)
    monkeypatch.setattr(wheelfit.fetch.http, "make_client", _nothing_here)


# 1. An unknown command: one suggestion, exit 2.


@pytest.mark.parametrize(("args", "meant"), [(["instal", "torch"], "install"), (["configure", "uvv"], "uv")])
def test_an_unknown_command_is_a_usage_error_with_one_suggestion(cli: Cli, args: list[str], meant: str) -> None:
    code, out = cli(args)
    assert code == 2, out
    assert out.count("Did you mean") == 1 and f"Did you mean '{meant}'?" in out


# 2. A torch-family name misspelt: a usage error naming the package meant, before detection and the network.


@pytest.mark.usefixtures("no_detection_no_network")
@pytest.mark.parametrize("command", ["plan", "install", "lock", "env"])
def test_a_misspelt_torch_is_refused_before_detection_or_network(cli: Cli, command: str) -> None:
    code, out = cli([command, "troch", *(["--dry-run", "--python", sys.executable] if command == "install" else [])])
    assert code == 2, out
    assert out.strip() == "wheelfit: error: troch is not a PyTorch package: did you mean torch?"


def test_env_refuses_a_misspelt_companion_as_a_usage_error(cli: Cli) -> None:
    code, out = cli(["env", "torch", "torchvison", "--target", GTX_1080, "--offline", "--format", "shell"])
    assert code == 2, out
    assert out.strip() == "wheelfit: error: torchvison is not a PyTorch package: did you mean torchvision?"


@pytest.mark.usefixtures("no_detection_no_network")
def test_a_misspelt_name_in_a_requirements_file_is_refused_at_its_line(cli: Cli, tmp_path: Path) -> None:
    listed = tmp_path / "requirements.txt"
    listed.write_text("requests\ntorch-audio>=2.8\n")
    code, out = cli(["install", "-r", str(listed), "--dry-run", "--python", sys.executable])
    assert code == 2, out
    assert out.strip() == f"wheelfit: error: {listed}:2: torch-audio is not a PyTorch package: did you mean torchaudio?"


def test_a_name_wheelfit_does_not_plan_and_is_no_typo_stays_a_refusal_to_plan(cli: Cli) -> None:
    code, out = cli(["plan", "torchao", "--offline", "--target", GTX_1080])
    assert code == 1, out
    assert "torchao is none of them" in out and "did you mean" not in out


@pytest.mark.parametrize(
    ("name", "meant"),
    [
        ("troch", "torch"), ("otrch", "torch"), ("torcch", "torch"), ("Torchh", "torch"), ("tirton", "triton"),
        ("torchvison", "torchvision"), ("torch_vision", "torchvision"), ("torchvisiom", "torchvision"),
        ("torchaudo", "torchaudio"), ("pytorch-triton-rcom", "pytorch-triton-rocm"),
        ("pytorch", "torch"),  # PyPI's pytorch is a stub that refuses to install and names torch
        # real packages (or likely ones) one letter from a short name, and names wheelfit plans: left alone
        ("torchx", None), ("touch", None), ("porch", None), ("torh", None), ("rtorch", None), ("torchao", None),
        ("torch", None), ("TorchVision", None), ("requests", None), ("numpy", None), ("triton-rocm", None),
    ],
)  # fmt: skip
def test_the_typo_rule(name: str, meant: str | None) -> None:
    from wheelfit.resolve.request import misspelt

    assert misspelt(name) == meant


def test_no_torch_family_name_is_ever_a_typo() -> None:
    from wheelfit.family import TORCH_FAMILY
    from wheelfit.resolve.request import misspelt

    assert [name for name in sorted(TORCH_FAMILY) if misspelt(name)] == []


def test_other_packages_and_direct_references_are_read_as_ever(tmp_path: Path) -> None:
    """``wheelfit install requests torch`` installs requests from the default index; a name with its own URL is
    that file, whatever it is called."""
    from wheelfit.requirements import read_file, read_requirements

    specs = ["requests", "torch", "torchx", "torchao", "troch @ https://example.com/troch-1.0-py3-none-any.whl"]
    got = read_requirements(specs, reader=read_file, cwd=str(tmp_path), environ={})
    assert [r.name for r in got.requirements] == ["requests", "torch", "torchx", "torchao", "troch"]


# 3. --help: each command's first sentence whole.


def test_help_lists_each_commands_first_sentence_whole_at_80_columns(cli: Cli) -> None:
    import typer.main

    from wheelfit.cli.app import app, first_sentence

    code, out = cli(["--help"])
    assert code == 0, out
    assert max(len(line) for line in out.splitlines()) <= 80
    listed = " ".join(out.split("Commands:", 1)[1].split())
    group = typer.main.get_command(app)
    assert isinstance(group, typer.core.TyperGroup)
    for name, command in group.commands.items():
        sentence = first_sentence(command.help or "")
        assert sentence.endswith(".") and f"{name} {sentence}" in listed, name
    assert "Did you mean" not in out and "what it means for PyTorch." in listed


def test_first_sentence_keeps_abbreviations_and_ellipses() -> None:
    from wheelfit.cli.app import first_sentence

    sentence = "Lists torch, ..., xpu (e.g. cu128) here."
    assert first_sentence(f"{sentence}\nMore.") == first_sentence(f"{sentence} More.") == sentence


# 4. The requirements argument is described, once.


@pytest.mark.parametrize(
    ("command", "says"),
    [
        ("plan", "Packages to plan, as pip takes them"),
        ("install", "What to install"),
        ("lock", "Requirements to lock"),
        ("env", "What to plan"),
    ],
)
def test_the_requirements_argument_is_described_once(cli: Cli, command: str, says: str) -> None:
    code, out = cli([command, "--help"])
    assert code == 0, out
    rows = [line for line in out.splitlines() if line.lstrip().startswith("[REQUIREMENTS]...")]
    assert len(rows) == 1 and rows[0].split("[REQUIREMENTS]...", 1)[1].strip(), out
    assert says in " ".join(out.split())


# 5. variants show: no requirement split inside at 80 columns.


def test_variants_show_never_splits_a_provider_requirement(cli: Cli) -> None:
    code, out = cli(["variants", "show", str(REALDATA / "torch-2.9.0-variants.json")])
    assert code == 0, out
    lines = out.splitlines()
    assert max(len(line) for line in lines) <= 80
    assert not any(ch in line for line in lines for ch in "┃│━─┏└")  # the plain table style of every renderer
    for vendor in ("amd", "intel", "nvidia"):
        assert sum(f"{vendor}-variant-provider>=0.0.2,<1.0.0" in line for line in lines) == 1, vendor
    for token in ("cuda_version_lower_bound", "120_virtual", "platform_system", "'Windows'"):
        joined = " ".join(line.strip() for line in lines)
        assert sum(line.count(token) for line in lines) == joined.count(token) > 0, token


# 6. detect on a Mac: the macOS version and the GPU's generation, never a bare "?".


@pytest.mark.parametrize(
    ("machine", "says"),
    [
        ("apple-m1-monterey", ("macOS 12.6 aarch64", "Apple M1 Pro GPU Apple M1 macOS 12.6")),
        ("apple-m4-max", ("macOS 15.3.1 aarch64", "Apple M4")),
        ("apple-intel-mojave-skylake", ("macOS 10.14.6 x86_64",)),
    ],
)
def test_detect_on_a_mac_names_macos_and_the_gpu_generation(cli: Cli, machine: str, says: tuple[str, ...]) -> None:
    code, out = cli(["detect", "--sysroot", str(MACHINES / machine / "root")])
    assert code == 0, out
    assert "?" not in out and "Darwin" not in out
    spaced = "\n".join(" ".join(line.split()) for line in out.splitlines())
    for text in says:
        assert text in spaced, text
