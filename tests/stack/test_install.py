"""``wheelfit install`` of torch and its extensions into a real venv with real uv (issue 32's done-when): the files
the joint plan chose, each pinned by its sha256, and nothing in the stack able to replace the planned torch."""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path
from urllib.parse import quote

from tests.conftest import hermetic_env
from tests.install.conftest import installed, make_venv
from tests.support.wheels import make_wheel

from .conftest import AMPERE, FLASH, SCATTER, World

Cli = Callable[..., tuple[int, str, str]]


def test_install_puts_the_planned_torch_and_the_extension_files_built_for_it(
    cli: Cli, world: World, tmp_path: Path
) -> None:
    python = make_venv(tmp_path / "venv")
    code, out, err = cli(["install", "torch", "flash-attn", "torch-scatter", "--python", str(python), "--target",
                          AMPERE, "--pytorch-index", world.pytorch, "--index-url", world.default, "--find-links",
                          str(world.wheels), "--no-verify"])  # fmt: skip
    assert code == 0, err
    got = installed(python, hermetic_env())
    assert got == {"torch": "2.9.0+cu128", "flash-attn": "2.8.3+cu12torch2.9cxx11abiTRUE",
                   "torch-scatter": "2.1.2+pt29cu128", "einops": "0.8.1"}  # fmt: skip
    said = " ".join(out.split())
    assert "torch 2.10.0+cu128: flash-attn has no wheel built for torch 2.10" in said
    script = "import flash_attn, torch_scatter; print(flash_attn.__version__, torch_scatter.__version__)"
    ran = subprocess.run([str(python), "-c", script], capture_output=True, text=True, env=hermetic_env(), check=True)
    assert ran.stdout.split() == ["2.8.3+cu12torch2.9cxx11abiTRUE", "2.1.2+pt29cu128"]


def test_a_dependency_that_pins_another_torch_cannot_replace_the_planned_one(
    cli: Cli, world: World, tmp_path: Path
) -> None:
    """The requirement-file failure people hit most: a package whose dependency would replace the planned torch.
    The planned torch is a hash-pinned file, so the backend takes the release of that package that agrees with it
    (``agrees`` 1.0, not 2.0), and refuses, naming it, one that has none (``needsnewtorch``); the environment is
    left as it was."""
    from tests.install.loopback import serve

    default = tmp_path / "default"
    wheels: dict[str, list[tuple[str, str | None]]] = {
        "agrees": [("1.0", "torch==2.9.0"), ("2.0", "torch==2.10.0")],
        "needsnewtorch": [("1.0", "torch>=2.10")],
        "einops": [("0.8.1", None)],
    }
    for name, releases in wheels.items():
        (default / name).mkdir(parents=True)
        for version, torch in releases:
            make_wheel(default / name, name, version, requires=[torch] if torch else [])
    python = make_venv(tmp_path / "venv")
    args = ["--python", str(python), "--target", AMPERE, "--pytorch-index", world.pytorch, "--find-links",
            str(world.wheels), "--no-verify"]  # fmt: skip
    with serve(default) as url:
        code, _, err = cli(["install", "torch", "flash-attn", "agrees", "--index-url", url, *args])
        assert code == 0, err
        assert installed(python, hermetic_env())["agrees"] == "1.0"
        before = sorted(str(p) for p in python.parent.parent.rglob("*") if "__pycache__" not in str(p))
        code, out, err = cli(["install", "torch", "flash-attn", "needsnewtorch", "--index-url", url, *args])
    assert code == 1, out
    assert "the environment was left as it was" in err and "needsnewtorch" in err and len(err.splitlines()) == 1
    assert sorted(str(p) for p in python.parent.parent.rglob("*") if "__pycache__" not in str(p)) == before


def test_a_lock_pins_the_extension_files_at_their_published_urls_and_hashes(
    cli: Cli, world: World, tmp_path: Path
) -> None:
    """flash-attn's GitHub asset has no digest here: it is downloaded once to be hashed, and the lock keeps the
    published URL with that sha256 (uv checks it on install); PyG's page gives no hash either."""
    import hashlib

    import tomlkit

    out_file = tmp_path / "pylock.toml"
    code, _, err = cli(["lock", "torch", "flash-attn", "torch-scatter", "--target", AMPERE, "--pytorch-index",
                          world.pytorch, "--index-url", world.default, "-o", str(out_file)],
                         WHEELFIT_MIRROR=world.mirrors)  # fmt: skip
    assert code == 0, err
    packages = {p["name"]: p for p in tomlkit.parse(out_file.read_text()).unwrap()["packages"]}
    assert packages["torch"]["version"] == "2.9.0+cu128"
    (flash,) = packages["flash-attn"]["wheels"]
    assert flash["url"] == f"{world.url}/github/download/{quote(FLASH)}"
    published = (world.root / "github/download" / FLASH).read_bytes()
    assert flash["hashes"]["sha256"] == hashlib.sha256(published).hexdigest()
    (scatter,) = packages["torch-scatter"]["wheels"]
    assert scatter["url"].startswith(f"{world.url}/pyg/cu128/") and scatter["name"] == SCATTER["2.9"]
    assert set(packages) == {"torch", "flash-attn", "torch-scatter", "einops"}


def test_xformers_installs_from_the_plans_index_beside_the_torch_it_pins(
    cli: Cli, world: World, tmp_path: Path
) -> None:
    python = make_venv(tmp_path / "venv")
    code, _, err = cli(["install", "torch", "xformers", "--python", str(python), "--target", AMPERE,
                        "--pytorch-index", world.pytorch, "--index-url", world.default, "--no-verify"])  # fmt: skip
    assert code == 0, err
    assert installed(python, hermetic_env()) == {"torch": "2.10.0+cu128", "xformers": "0.0.33"}
