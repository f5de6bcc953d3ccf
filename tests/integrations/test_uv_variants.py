# ruff: noqa: F811 - the fixtures are imported, then named as parameters
"""``wheelfit env --format uv-variants`` makes real uv 0.13.9's wheel-variant preview choose the variant wheelfit
plans for a machine it is not running on; ``plan --variant-index`` says when that preview cannot install from
an index, in uv's words.

The variant index is loopback, in the ``peps/825/v0.1.1`` schema uv reads, with one real wheel per variant
built for this interpreter (uv installs it into a real venv); the index of ordinary packages is the shared
loopback default index, which also offers a squatted ``torch 99.0`` that must never win.
"""

from __future__ import annotations

import json
import shlex
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from packaging.tags import sys_tags

from tests.support.wheels import make_wheel
from wheelfit.install.uv import find_uv

from ..conftest import hermetic_env
from ..install.conftest import Index, caches, index, make_venv, run_wheelfit  # noqa: F401
from ..variants_mode.variant_index import add_variant_wheel, serve, write_page

SCHEMA = "https://variants-schema.wheelnext.dev/peps/825/v0.1.1.json"
#: The variants PyTorch publishes for 2.10.0 on Linux (wheelnext/variants-index), reduced to the properties that
#: decide between them here: CUDA 12.6 builds keep Pascal (sm_61) kernels, CUDA 13.0 builds start at Turing.
VARIANTS = {
    "null": {},
    "cuda12.6": {
        "nvidia": {
            "cuda_version_lower_bound": ["12.6"],
            "sm_arch": ["50_real", "60_real", "61_real", "70_real", "75_real", "80_real", "86_real", "90_real"],
        }
    },
    "cuda13.0": {
        "nvidia": {
            "cuda_version_lower_bound": ["13.0"],
            "sm_arch": ["75_real", "80_real", "86_real", "89_real", "90_real", "100_real", "120_real"],
        }
    },
}
METADATA = {
    "$schema": SCHEMA,
    "default-priorities": {"namespace": ["nvidia"]},
    "providers": {
        "nvidia": {
            "plugin-api": "nvidia_variant_provider.plugin:NvidiaVariantPlugin",
            "requires": ["nvidia-variant-provider>=0.0.1,<1.0.0"],
        }
    },
    "variants": VARIANTS,
}


def _here_tag() -> str:
    tag = next(iter(sys_tags()))
    return f"{tag.interpreter}-{tag.abi}-{tag.platform}"


@pytest.fixture(scope="module")
def variant_index(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The loopback variant index URL: ``torch-2.10.0-variants.json`` and one wheel per label, each carrying its
    own ``variant.json`` (uv refuses one without ``$schema``) and a ``label`` attribute the test reads back."""
    root = tmp_path_factory.mktemp("uv-variant-index")
    directory = root / "variant"
    directory.mkdir()
    (directory / "torch-2.10.0-variants.json").write_text(json.dumps(METADATA, indent=2), encoding="utf-8")
    for label, properties in VARIANTS.items():
        own = dict(METADATA, variants={label: properties})
        built = make_wheel(
            directory / ".build" / label,
            "torch",
            "2.10.0",
            requires=["smallnum>=1.0"],
            tag=_here_tag(),
            files={
                "torch/__init__.py": f"__version__ = '2.10.0'\nlabel = {label!r}\n",
                "torch-2.10.0.dist-info/variant.json": json.dumps(own),
            },
        )
        shutil.move(built, directory / built.name.replace(".whl", f"-{label}.whl"))
    write_page(directory)
    with serve(root) as url:
        yield f"{url}/variant"


def _exports(stdout: str) -> dict[str, str]:
    """The ``export NAME=VALUE`` lines, read as sh would."""
    found: dict[str, str] = {}
    for line in stdout.splitlines():
        words = shlex.split(line)
        assert words[0] == "export" and len(words) == 2, line
        name, _, value = words[1].partition("=")
        found[name] = value
    return found


def _uv_install(python: Path, variant_url: str, index: Index, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    args = [
        "pip",
        "install",
        "--python",
        str(python),
        "--index",
        variant_url,
        "--default-index",
        index.default,
        "torch",
    ]
    return subprocess.run([find_uv(), *args], env=env, capture_output=True, text=True, timeout=180, check=False)


def _label(python: Path) -> str:
    done = subprocess.run(
        [str(python), "-c", "import torch; print(torch.label)"],
        capture_output=True,
        text=True,
        check=True,
        env=hermetic_env(),
    )
    return done.stdout.strip()


@pytest.mark.parametrize(
    ("target", "expected"),
    [
        # GTX 1080: only the CUDA 12.6 build has sm_61 kernels, whatever the driver.
        ("cuda=6.1,driver=580.95.05", "cuda12.6"),
        # RTX 4090 on driver 580 (CUDA 13.0): the newest build.
        ("cuda=8.9,driver=580.95.05", "cuda13.0"),
        # RTX 4090 on driver 570 (CUDA 12.8): 13.0 builds would not load; uv must be told 12.8, not 13.0.
        ("cuda=8.9,driver=570.86.10", "cuda12.6"),
    ],
)
def test_uv_preview_installs_the_variant_wheelfit_plans_for_the_target(
    target: str, expected: str, variant_index: str, index: Index, caches: dict[str, str], tmp_path: Path
) -> None:
    env = hermetic_env(**caches)
    planned = run_wheelfit(["plan", "torch", "--target", target, "--variant-index", variant_index, "--json"], env)
    assert planned.returncode == 0, planned.stderr
    assert json.loads(planned.stdout)["variant"] == expected

    printed = run_wheelfit(
        ["env", "--format", "uv-variants", "--target", target, "--variant-index", variant_index], env
    )
    assert printed.returncode == 0, printed.stderr
    exports = _exports(printed.stdout)
    assert exports["UV_PREVIEW_FEATURES"] == "wheel-variants"
    assert exports["NV_VARIANT_PROVIDER_FORCE_SM_ARCH"] == target.split(",")[0].removeprefix("cuda=")

    python = make_venv(tmp_path / "venv")
    done = _uv_install(python, variant_index, index, {**env, **exports})
    assert done.returncode == 0, done.stderr
    assert _label(python) == expected


def test_without_the_variables_uv_detects_this_gpu_less_machine_and_installs_the_null_variant(
    variant_index: str, index: Index, caches: dict[str, str], tmp_path: Path
) -> None:
    """Why the variables are needed on a builder: uv's own detection (nvidia-smi) finds no GPU here."""
    if shutil.which("nvidia-smi"):
        pytest.skip("this machine has nvidia-smi: uv would detect its GPU")
    python = make_venv(tmp_path / "venv")
    done = _uv_install(python, variant_index, index, hermetic_env(**caches, UV_PREVIEW_FEATURES="wheel-variants"))
    assert done.returncode == 0, done.stderr
    assert _label(python) == "null"


def test_an_amd_target_is_told_uv_has_no_provider_for_it(variant_index: str, caches: dict[str, str]) -> None:
    printed = run_wheelfit(
        ["env", "--format", "uv-variants", "--target", "rocm=gfx942", "--variant-index", variant_index],
        hermetic_env(**caches),
    )
    assert printed.returncode == 0, printed.stderr
    assert "no provider for amd" in printed.stderr
    assert "wheelfit install --variant-index" in printed.stderr
    assert "NV_VARIANT_PROVIDER_FORCE_SM_ARCH" not in printed.stdout


def test_pytorchs_published_schema_is_refused_by_uv_and_plan_says_so_in_uvs_words(
    tmp_path: Path, realdata: Path, index: Index, caches: dict[str, str]
) -> None:
    """PyTorch's real ``torch-2.10.0-variants.json`` (schema v0.0.3): uv 0.13.9 stops with "Unknown variant
    metadata schema"; wheelfit's plan reads it, and says uv would not."""
    directory = tmp_path / "srv" / "whl" / "variant"
    directory.mkdir(parents=True)
    for label in ("null", "cuda12.6", "cuda13.0"):
        add_variant_wheel(directory, "2.10.0", label, tag=_here_tag())
    shutil.copy(realdata / "torch-2.10.0-variants.json", directory)
    write_page(directory)
    env = hermetic_env(**caches)
    with serve(tmp_path / "srv") as url:
        variant_url = f"{url}/whl/variant"
        planned = run_wheelfit(
            ["plan", "torch", "--target", "cuda=8.9,driver=580.95.05", "--variant-index", variant_url, "--json"], env
        )
        assert planned.returncode == 0, planned.stderr
        warnings = json.loads(planned.stdout)["warnings"]
        said = [w for w in warnings if "wheel-variant preview cannot install from" in w]
        assert said, warnings
        assert "Unknown variant metadata schema" in said[0]
        assert "wheelfit install --variant-index" in said[0]

        python = make_venv(tmp_path / "venv")
        forced = dict(
            env,
            UV_PREVIEW_FEATURES="wheel-variants",
            NV_VARIANT_PROVIDER_FORCE_SM_ARCH="8.9",
            NV_VARIANT_PROVIDER_FORCE_CUDA_DRIVER_VERSION="13.0",
        )
        done = _uv_install(python, variant_url, index, forced)
    assert done.returncode != 0
    assert "Unknown variant metadata schema" in done.stderr
