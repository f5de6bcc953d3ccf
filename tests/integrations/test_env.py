"""``wheelfit env``: shell lines a real ``sh`` evaluates, dotenv lines Docker reads, JSON, and the job matrix; each
checked against ``wheelfit plan --json`` for the same target (the plan is the oracle)."""

from __future__ import annotations

import json
import re
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.conftest import hermetic_env
from tests.install.conftest import Index, caches, env, error_line, index, run_wheelfit
from wheelfit.integrations.ci_env import PREFIX, dotenv_safe

__all__ = ["caches", "env", "index"]  # fixtures

ROOT = Path(__file__).resolve().parents[2]
PASCAL = "cuda=6.1,driver=580.95.05"
NEAR_MISS_AMD = "rocm=gfx1031"  # runs gfx1030 kernels only under HSA_OVERRIDE_GFX_VERSION=10.3.0


def _plan(args: list[str], environ: dict[str, str]) -> dict[str, Any]:
    done = run_wheelfit(["plan", "--json", *args], environ)
    assert done.returncode == 0, done.stderr
    data: dict[str, Any] = json.loads(done.stdout)
    return data


def _sh(script: str, environ: dict[str, str]) -> dict[str, str]:
    """Run ``script`` in a real POSIX sh; return the environment it ends with (``env -0``)."""
    done = subprocess.run(
        ["sh", "-c", script + "\nenv -0"], capture_output=True, text=True, env=environ, check=False, timeout=120
    )
    assert done.returncode == 0, done.stderr
    return dict(item.split("=", 1) for item in done.stdout.split("\0") if "=" in item)


def test_eval_of_the_shell_lines_sets_the_plans_values(index: Index, env: dict[str, str]) -> None:
    args = ["--target", PASCAL, "--pytorch-index", index.pytorch, "torch", "torchvision"]
    plan = _plan(args, env)
    assert plan["variant"] == "cu126"  # sm_61: no kernels in cu128+
    got = _sh(f'eval "$({_wheelfit()} env {" ".join(args)})"', env)
    assert got[f"{PREFIX}VARIANT"] == "cu126"
    assert got[f"{PREFIX}INDEX_URL"] == plan["index_url"] == f"{index.pytorch}/cu126"
    assert got[f"{PREFIX}REQUIREMENTS"].split() == [p["requirement"] for p in plan["packages"]]
    assert got[f"{PREFIX}REQUIREMENTS"] == "torch==2.14.1+cu126 torchvision==0.29.1+cu126"
    assert got[f"{PREFIX}UV_TORCH_BACKEND"] == "cu126"
    assert got[f"{PREFIX}TORCH_VERSION"] == "2.14.1"
    key = got[f"{PREFIX}CACHE_KEY"]
    assert re.fullmatch(r"wheelfit-cu126-linux_x86_64-py3\.\d+-torch2\.14\.1-[0-9a-f]{12}", key), key
    assert "UV_TORCH_BACKEND" not in got  # wheelfit reads it: not exported under that name


def test_multi_line_and_quoted_values_survive_eval(env: dict[str, str]) -> None:
    args = ["--offline", "--target", NEAR_MISS_AMD, "--allow-hsa-override"]
    plan = _plan(args, env)
    assert len(plan["warnings"]) >= 2 and "(not supported by AMD)" in plan["warnings"][-1]
    got = _sh(f'eval "$({_wheelfit()} env {" ".join(args)})"', env)
    assert got[f"{PREFIX}WARNINGS"] == "\n".join(plan["warnings"])
    assert got["HSA_OVERRIDE_GFX_VERSION"] == plan["env"]["HSA_OVERRIDE_GFX_VERSION"] == "10.3.0"


def test_exported_values_do_not_change_a_later_plan(env: dict[str, str]) -> None:
    """Evaluated on a CPU-only builder for a Pascal GPU box, the outputs leave the builder's own plan alone (an
    exported UV_TORCH_BACKEND=cu126 or WHEELFIT_TARGET would turn it into the GPU box's)."""
    here = ["--offline", "--sysroot", str(ROOT / "tests/machines/cpu-alderlake-v3/root")]
    alone = _plan(here, env)
    assert alone["variant"] == "cpu"
    script = (
        f'out="$({_wheelfit()} env --offline --target {PASCAL})" || exit 3\neval "$out"\n'
        f'echo "${PREFIX}VARIANT"\n{_wheelfit()} plan --json {" ".join(here)}'
    )
    done = subprocess.run(["sh", "-c", script], capture_output=True, text=True, env=env, check=False, timeout=120)
    assert done.returncode == 0, done.stderr
    variant, _, rest = done.stdout.partition("\n")
    assert variant == "cu126"  # the outputs are set in that shell
    after = json.loads(rest)
    assert (after["variant"], after["packages"], after["warnings"]) == (
        alone["variant"],
        alone["packages"],
        alone["warnings"],
    )


def test_no_output_name_is_a_variable_wheelfit_reads() -> None:
    names = set(re.findall(r"export (\w+)=", _shell_lines()))
    assert names and all(n.startswith(PREFIX) or n == "HSA_OVERRIDE_GFX_VERSION" for n in names)
    sources = [p for p in (ROOT / "src").rglob("*.py") if p.name not in ("ci_env.py", "github.py")]
    sources += list((ROOT / "providers").rglob("*.py"))
    assert not [p for p in sources if PREFIX in p.read_text(encoding="utf-8")]


def _shell_lines() -> str:
    done = run_wheelfit(["env", "--offline", "--target", NEAR_MISS_AMD, "--allow-hsa-override"], hermetic_env())
    assert done.returncode == 0, done.stderr
    return done.stdout


def _docker_env_file(text: str) -> dict[str, str]:
    """``docker run --env-file`` (docker/cli ``opts.ParseEnvFile``): a line's leading blanks are dropped, empty
    lines and ``#`` lines skipped, ``NAME=value`` split at the first ``=``, the value taken literally (quotes,
    blanks and ``#`` included); a name with a blank is an error."""
    out: dict[str, str] = {}
    for raw in text.splitlines():
        line = raw.lstrip()
        if not line or line.startswith("#"):
            continue
        name, sep, value = line.partition("=")
        assert sep and name and not re.search(r"\s", name), raw
        out[name] = value
    return out


def test_dotenv_round_trips_through_dockers_reading(env: dict[str, str]) -> None:
    args = ["--offline", "--target", NEAR_MISS_AMD, "--allow-hsa-override"]
    dotenv = run_wheelfit(["env", "--format", "dotenv", *args], env)
    shell = _sh(f'eval "$({_wheelfit()} env {" ".join(args)})"', env)
    assert dotenv.returncode == 0, dotenv.stderr
    read = _docker_env_file(dotenv.stdout)
    assert read == {k: shell[k] for k in read}
    assert read["HSA_OVERRIDE_GFX_VERSION"] == "10.3.0"
    assert set(read) == {k for k in shell if k.startswith(PREFIX)} - {f"{PREFIX}WARNINGS"} | {
        "HSA_OVERRIDE_GFX_VERSION"
    }
    assert all(dotenv_safe(v) for v in read.values())
    # The warnings (free text) go to stderr, one line each.
    assert "HSA_OVERRIDE_GFX_VERSION=10.3.0 set (not supported by AMD)" in dotenv.stderr


def test_dotenv_refuses_a_value_compose_would_read_differently(env: dict[str, str]) -> None:
    done = run_wheelfit(
        ["env", "--format", "dotenv", "--offline", "--target", "cpu=v3", "--pytorch-index", "https://m.example/$v/whl"],
        env,
    )
    assert done.returncode == 1
    assert "$v" in error_line(done.stderr) and "--format json" in error_line(done.stderr)


def test_dotenv_rules() -> None:
    assert dotenv_safe("torch==2.14.1+cu126 torchvision==0.29.1+cu126")
    assert dotenv_safe("https://h.example/whl/cu126#frag")  # '#' not after a blank: no comment for compose
    for bad in ("a $b", "x #c", " lead", "trail ", "'q'", '"q"', "two\nlines", "back\\slash"):
        assert not dotenv_safe(bad), bad


def test_json_is_one_object_and_a_list_for_several_targets(env: dict[str, str]) -> None:
    one = run_wheelfit(["env", "--format", "json", "--offline", "--target", PASCAL], env)
    assert one.returncode == 0, one.stderr
    data = json.loads(one.stdout)
    assert data["schema_version"] == "1" and data["variant"] == "cu126" and data["target"] == PASCAL
    assert data["requirements"] == ["torch==2.14.1+cu126"] and data["uv_torch_backend"] == "cu126"
    two = run_wheelfit(["env", "--format", "json", "--offline", "--target", PASCAL, "--target", "cpu=v3"], env)
    assert two.returncode == 0, two.stderr
    assert [d["variant"] for d in json.loads(two.stdout)] == ["cu126", "cpu"]


def test_shell_with_two_targets_is_a_usage_error(env: dict[str, str]) -> None:
    done = run_wheelfit(["env", "--format", "shell", "--offline", "--target", PASCAL, "--target", "cpu=v3"], env)
    assert done.returncode == 2
    assert "--matrix" in error_line(done.stderr)


def test_matrix_for_two_targets(index: Index, env: dict[str, str]) -> None:
    args = ["--pytorch-index", index.pytorch, "--target", PASCAL, "--target", "rocm=gfx942"]
    done = run_wheelfit(["env", "--matrix", *args], env)
    assert done.returncode == 0, done.stderr
    assert done.stdout.count("\n") == 1  # one line: `echo "matrix=$(wheelfit env --matrix ...)" >> $GITHUB_OUTPUT`
    include = json.loads(done.stdout)["include"]
    assert [(e["target"], e["name"], e["variant"]) for e in include] == [
        (PASCAL, "cu126", "cu126"),
        ("rocm=gfx942", "rocm7.14", "rocm7.14"),
    ]
    for entry, spec in zip(include, [PASCAL, "rocm=gfx942"], strict=True):
        plan = _plan(["--pytorch-index", index.pytorch, "--target", spec], env)
        assert entry["index-url"] == plan["index_url"] and entry["torch-version"] == plan["torch_version"]
        assert entry["requirements"] == " ".join(p["requirement"] for p in plan["packages"])
        assert entry["uv-torch-backend"] == plan["variant"]
        assert plan["variant"] in entry["cache-key"]
    assert include[0]["cache-key"] != include[1]["cache-key"]


def test_an_unknown_format_is_a_usage_error(env: dict[str, str]) -> None:
    done = run_wheelfit(["env", "--format", "yaml", "--offline"], env)
    assert done.returncode == 2
    assert "shell, dotenv, json, github" in error_line(done.stderr)


def _wheelfit() -> str:
    return f"{shlex.quote(sys.executable)} -m wheelfit"
