"""One plan for torch and the extensions built against it (issue 32): the torch every requested extension has a
wheel for, each extension's file built for exactly that torch, and what was passed over and why; refusals that
name the extension that blocks. In process, against the loopback world of ``conftest``."""

from __future__ import annotations

import json
from collections.abc import Callable

from .conftest import AMPERE, FLASH, SCATTER, TAG, World

Cli = Callable[..., tuple[int, str, str]]


def test_the_plan_backs_off_to_the_newest_torch_every_extension_has_a_wheel_for(cli: Cli, world: World) -> None:
    code, out, err = cli(["plan", "torch", "flash-attn", "torch-scatter", "--target", AMPERE, "--pytorch-index",
                          world.pytorch, "--find-links", str(world.wheels), "--json"])  # fmt: skip
    assert code == 0, err
    plan = json.loads(out)
    assert plan["schema_version"] == "1.4"
    assert (plan["torch_version"], plan["variant"]) == ("2.9.0", "cu128")
    assert [p["requirement"] for p in plan["packages"]] == ["torch==2.9.0+cu128"]
    pins = {p["name"]: p for p in plan["extensions"]}
    assert pins["flash-attn"]["filename"] == FLASH and pins["flash-attn"]["version"].endswith("cxx11abiTRUE")
    assert pins["torch-scatter"]["filename"] == SCATTER["2.9"]
    assert pins["flash-attn"]["url"] == (world.wheels / FLASH).as_uri()
    assert pins["flash-attn"]["confidence"] == "S"  # the wheel-name scheme is the knowledge base's S fact
    passed = [r for r in plan["rejected"] if r["judge"] == "extensions"]
    assert [(r["version"], r["variant"]) for r in passed] == [("2.10.0", "cu128")]
    assert passed[0]["reason"].startswith("flash-attn has no wheel built for torch 2.10 (cu128: CUDA 12, C++11 ABI")
    assert plan["reasons"][0] == (
        f"torch 2.10.0+cu128: {passed[0]['reason']}; torch 2.9.0+cu128 has wheels for all of torch, flash-attn, "
        "torch-scatter"
    )


def test_the_short_plan_lists_the_files_and_says_why_the_newest_torch_was_passed_over(cli: Cli, world: World) -> None:
    args = ["plan", "flash-attn", "torch-scatter", "--target", AMPERE, "--pytorch-index", world.pytorch, "-f",
            str(world.wheels)]  # fmt: skip
    code, out, err = cli(args)
    assert code == 0, err
    lines = out.splitlines()
    assert lines[:4] == [f"torch 2.9.0+cu128  from {world.pytorch}/cu128", "  torch==2.9.0+cu128", f"  {FLASH}",
                         f"  {SCATTER['2.9']}"]  # fmt: skip
    said = " ".join(out.split())
    assert "torch 2.10.0+cu128: flash-attn has no wheel built for torch 2.10" in said
    assert f"--find-links {world.wheels}" in said.split("Install ")[1]  # the install line reads the same folder


def test_a_pinned_torch_is_never_swapped_the_extension_that_blocks_is_named(cli: Cli, world: World) -> None:
    code, out, err = cli(["plan", "torch==2.10.0", "flash-attn", "torch-scatter", "--target", AMPERE,
                          "--pytorch-index", world.pytorch, "--find-links", str(world.wheels)])  # fmt: skip
    assert code == 1 and out == ""
    (line,) = err.splitlines()
    assert line == (
        "wheelfit: error: torch 2.10.0+cu128: flash-attn has no wheel built for torch 2.10 (cu128: CUDA 12, C++11 "
        f"ABI, {TAG.split('-')[0]}, linux_x86_64); it has wheels for torch 2.9, and no older torch that the request "
        "allows runs on this machine: ask for a torch they have wheels for (torch==2.9.*), or build flash-attn from "
        "source (the CUDA 12 toolkit (nvcc) and torch 2.10.0+cu128 installed first, then pip install flash-attn "
        "--no-build-isolation)"
    )


def test_no_combination_on_a_machine_the_extension_has_no_build_for(cli: Cli, world: World) -> None:
    """flash-attn publishes CUDA wheels only: on a CPU plan no torch series has one, and the plan says so."""
    code, _, err = cli(["plan", "torch", "flash-attn", "--target", "os=linux,arch=x86_64", "--pytorch-index",
                        world.pytorch, "--find-links", str(world.wheels), "--offline"])  # fmt: skip
    assert code == 1
    assert "flash-attn has no wheel built for torch" in err and "no older torch series has wheels of all" in err
    assert "pip install flash-attn --no-build-isolation" in err and len(err.splitlines()) == 1


def test_the_published_sources_are_read_where_each_project_publishes(cli: Cli, world: World) -> None:
    """Without --find-links: PyG's find-links page for each torch build, flash-attn's GitHub releases, each
    redirected to loopback by WHEELFIT_MIRROR; the asset without a digest keeps its URL for the install to pin."""
    code, out, err = cli(["plan", "torch", "flash-attn", "torch-scatter", "--target", AMPERE, "--pytorch-index",
                          world.pytorch, "--json"], WHEELFIT_MIRROR=world.mirrors)  # fmt: skip
    assert code == 0, err
    plan = json.loads(out)
    assert plan["torch_version"] == "2.9.0"
    pins = {p["name"]: p for p in plan["extensions"]}
    assert pins["torch-scatter"]["url"].startswith(f"{world.url}/pyg/cu128/torch_scatter-2.1.2%2Bpt29cu128")
    assert pins["flash-attn"]["url"].startswith(f"{world.url}/github/download/") and "sha256" not in pins["flash-attn"]
    assert f"from {world.url}/github/repos/Dao-AILab/flash-attention/releases" in " ".join(plan["reasons"])


def test_an_unreadable_published_source_is_one_line_naming_it(cli: Cli, world: World) -> None:
    code, _, err = cli(["plan", "torch", "flash-attn", "--target", AMPERE, "--pytorch-index", world.pytorch],
                       WHEELFIT_MIRROR=f"https://api.github.com={world.url}/nothing-here")  # fmt: skip
    assert code == 1 and len(err.splitlines()) == 1
    assert f"{world.url}/nothing-here/repos/Dao-AILab/flash-attention/releases" in err


def test_ci_values_carry_each_extension_as_the_file_built_for_the_torch(cli: Cli, world: World) -> None:
    code, out, err = cli(["env", "torch", "flash-attn", "torch-scatter", "--target", AMPERE, "--pytorch-index",
                          world.pytorch, "--find-links", str(world.wheels), "--format", "json"])  # fmt: skip
    assert code == 0, err
    values = json.loads(out)
    assert values["requirements"] == [
        "torch==2.9.0+cu128", f"flash-attn @ {(world.wheels / FLASH).as_uri()}",
        f"torch-scatter @ {(world.wheels / SCATTER['2.9']).as_uri()}",
    ]  # fmt: skip


def test_xformers_is_the_release_on_the_plans_index_that_pins_the_planned_torch(cli: Cli, world: World) -> None:
    """xformers names no build in its file name: its metadata pins the torch it was built with (read from the
    index's PEP 658 file), and it comes from the plan's own index, as every torch-family package."""
    base = ["plan", "torch", "xformers", "--target", AMPERE, "--pytorch-index", world.pytorch, "--json"]
    code, out, err = cli(base)
    assert code == 0, err
    plan = json.loads(out)
    assert plan["torch_version"] == "2.10.0"
    (pin,) = plan["extensions"]
    assert (pin["name"], pin["version"]) == ("xformers", "0.0.33") and pin["url"].startswith(f"{world.pytorch}/cu128/")
    code, out, err = cli([*base, "flash-attn", "--find-links", str(world.wheels)])
    assert code == 0, err
    plan = json.loads(out)  # flash-attn has no wheel for 2.10: the plan backs off, and xformers with it
    assert plan["torch_version"] == "2.9.0"
    assert {p["name"]: p["version"] for p in plan["extensions"]}["xformers"] == "0.0.32.post2"
