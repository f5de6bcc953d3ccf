"""Benchmark `wheelfit install` against `uv pip install` and `pip install`, cold and warm cache, in one run.

Every tool installs the same wheels from the same loopback index into a fresh virtual environment: torch (the
CPU build) from a PyTorch-style variant index, its dependencies from a separate default index. Runs are
interleaved (round by round, the tool that goes first rotating) so machine load affects every tool alike, and
the disk is synced before each timed run so one run's writes are not flushed during the next. Two scenarios:

- small: a tiny torch-like wheel, torchvision and one dependency (the tools' own overhead);
- large: the real PyTorch CPU wheel from /opt/wheels (190 MB) with its real dependencies, fetched once from
  PyPI into ~/.cache/wheelfit-bench with pip; skipped, and said so, when the wheel is not on this machine;
- variant: the same real wheel as a PyTorch-style variant wheel (label ``null``, Requires-Dist with variant
  markers, PyTorch's real torch-2.10.0-variants.json) on a loopback variant index: `wheelfit install
  --variant-index` (which installs its plain copy) against uv installing the original wheel (pip left out).

`wheelfit install` runs with --no-verify (verification imports torch: timed separately as `wheelfit verify`).
Targets (issue 5): within 1.15x of uv cold and 1.25x warm, at least 2x faster than pip.

    .venv/bin/python bench/install.py [--rounds 3] [--only small|large|variant] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.install.loopback import serve  # noqa: E402 - the repository root must be on sys.path first
from tests.support.wheels import make_torch_like, make_wheel  # noqa: E402
from tests.variants_mode.variant_index import serve as serve_static  # noqa: E402
from tests.variants_mode.variant_index import write_page  # noqa: E402

from wheelfit.install.plain_wheel import record_with, rewrite_wheel  # noqa: E402

BIG_WHEEL = Path("/opt/wheels/torch-2.13.0+cpu-cp311-cp311-manylinux_2_28_x86_64.whl")
BIG_DEPS = ["filelock", "typing-extensions>=4.10.0", "setuptools>=77.0.3", "sympy>=1.13.3", "networkx>=2.5.1",
            "jinja2", "fsspec>=0.8.5"]  # fmt: skip
DEPS_CACHE = Path.home() / ".cache" / "wheelfit-bench" / "deps"
TOOLS = ("wheelfit", "uv", "pip")
REALDATA = ROOT / "tests" / "data" / "realdata"
#: Injected into the real wheel's METADATA, in PyTorch's style; none holds for the null label.
VARIANT_DEPS = (
    "nvidia-cublas==13.0.0.19; platform_system == 'Linux' and variant_label == 'cuda13.0'",
    "triton==3.5.0; platform_system == 'Linux' and 'nvidia' in variant_namespaces",
)


def _hermetic(**extra: str) -> dict[str, str]:
    """No pip/uv configuration from the machine; bytecode written as on a user's machine (these build machines
    set PYTHONDONTWRITEBYTECODE, which would make every wheelfit and pip run compile its sources again)."""
    skip = ("PIP_", "UV_", "WHEELFIT_", "VIRTUAL_ENV", "PYTHONDONTWRITEBYTECODE")
    env = {k: v for k, v in os.environ.items() if not k.startswith(skip)}
    env.update(PIP_CONFIG_FILE=os.devnull, UV_NO_CONFIG="1", PIP_DISABLE_PIP_VERSION_CHECK="1", **extra)
    return env


def _put(root: Path, index: str, wheel: Path) -> None:
    project = wheel.name.split("-")[0].replace("_", "-").lower()
    dest = root / index / project / wheel.name
    dest.parent.mkdir(parents=True, exist_ok=True)
    if not dest.exists():
        os.link(wheel, dest) if wheel.stat().st_dev == dest.parent.stat().st_dev else shutil.copy2(wheel, dest)


def _small(root: Path) -> tuple[str, str]:
    tmp = root / ".build"
    _put(root, "pytorch/cpu", make_torch_like(tmp, "2.15.0", "cpu", requires=["smallnum>=1.0"]))
    _put(root, "pytorch/cpu", make_wheel(tmp, "torchvision", "0.29.2+cpu", requires=["torch==2.15.0"]))
    _put(root, "default/simple", make_wheel(tmp, "smallnum", "1.0"))
    return "torch==2.15.0", "torch==2.15.0+cpu"


def _large(root: Path) -> tuple[str, str] | None:
    if not BIG_WHEEL.is_file():
        return None
    if not any(DEPS_CACHE.glob("*.whl")):
        DEPS_CACHE.mkdir(parents=True, exist_ok=True)
        print(f"fetching torch's dependencies from PyPI once into {DEPS_CACHE} ...", file=sys.stderr)
        cmd = [sys.executable, "-m", "pip", "download", "--only-binary", ":all:", "-d", str(DEPS_CACHE), *BIG_DEPS]
        subprocess.run(cmd, check=True, env=_hermetic(), stdout=subprocess.DEVNULL)
    _put(root, "pytorch/cpu", BIG_WHEEL)
    for wheel in DEPS_CACHE.glob("*.whl"):
        _put(root, "default/simple", wheel)
    return "torch==2.13.0", "torch==2.13.0+cpu"


def _variant(static: Path) -> Path | None:
    """``static/whl/variant``: the real wheel as the null variant wheel of torch 2.13.0, markers added."""
    variants_json = REALDATA / "torch-2.10.0-variants.json"
    if not BIG_WHEEL.is_file() or not variants_json.is_file():
        return None
    index = static / "whl" / "variant"
    index.mkdir(parents=True, exist_ok=True)
    dist = "torch-2.13.0+cpu.dist-info"
    with zipfile.ZipFile(BIG_WHEEL) as zf:
        head, sep, body = zf.read(f"{dist}/METADATA").decode().partition("\n\n")
        record = zf.read(f"{dist}/RECORD")
    metadata = (head + "".join(f"\nRequires-Dist: {d}" for d in VARIANT_DEPS) + sep + body).encode()
    replace = {f"{dist}/METADATA": metadata, f"{dist}/RECORD": record_with(record, f"{dist}/METADATA", metadata)}
    rewrite_wheel(BIG_WHEEL, index / BIG_WHEEL.name.replace(".whl", "-null.whl"), replace)
    shutil.copy(variants_json, index / "torch-2.13.0-variants.json")  # the real file, as this version's
    write_page(index)
    return index


def _command(tool: str, url: str, python: Path, plan_req: str, exact: str, variant_index: str | None) -> list[str]:
    default, variant = f"{url}/default/simple", f"{url}/pytorch/cpu"
    if tool == "wheelfit":
        mode = ["--variant-index", variant_index] if variant_index else []
        return [str(ROOT / ".venv" / "bin" / "wheelfit"), "install", plan_req, "--target", "os=linux",
                "--python", str(python), "--pytorch-index", f"{url}/pytorch", "--index-url", default,
                "--no-verify", *mode]  # fmt: skip
    if tool == "uv":
        from uv import find_uv_bin

        return [str(find_uv_bin()), "pip", "install", "--python", str(python), "--index-url", default,
                "--extra-index-url", variant, exact]  # fmt: skip
    return [sys.executable, "-m", "pip", "--python", str(python), "install", "--index-url", default,
            "--extra-index-url", variant, exact]  # fmt: skip


@contextmanager
def _venv(parent: Path) -> Iterator[Path]:
    path = Path(tempfile.mkdtemp(dir=parent))
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(path / "v")], check=True)
    try:
        yield path / "v" / "bin" / "python"
    finally:
        shutil.rmtree(path, ignore_errors=True)


def _run(argv: list[str], env: dict[str, str]) -> float:
    os.sync()  # the previous run's writes (a GB when cold) are flushed before, not during, this one
    start = time.perf_counter()
    done = subprocess.run(argv, capture_output=True, text=True, env=env, check=False)
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"benchmark command failed: {' '.join(argv)}\n{done.stderr[-2000:]}")
    return elapsed


def _scenario(
    name: str, url: str, reqs: tuple[str, str], rounds: int, work: Path, variant_index: str | None = None
) -> dict[str, object]:
    tools = TOOLS[:2] if variant_index else TOOLS
    times: dict[str, list[float]] = {f"{t} {c}": [] for t in tools for c in ("cold", "warm")}
    times["wheelfit verify"] = []
    for r in range(rounds):
        for tool in tools[r % len(tools) :] + tools[: r % len(tools)]:  # each tool goes first in some round
            caches = Path(tempfile.mkdtemp(dir=work))
            env = _hermetic(UV_CACHE_DIR=str(caches / "uv"), WHEELFIT_CACHE_DIR=str(caches / "wf"),
                            PIP_CACHE_DIR=str(caches / "pip"))  # fmt: skip
            for state in ("cold", "warm"):
                with _venv(work) as python:
                    times[f"{tool} {state}"].append(_run(_command(tool, url, python, *reqs, variant_index), env))
                    if tool == "wheelfit" and state == "warm":
                        verify = [str(ROOT / ".venv" / "bin" / "wheelfit"), "verify", "--python", str(python),
                                  "--target", "os=linux", "--pytorch-index", f"{url}/pytorch",
                                  *(["--variant-index", variant_index] if variant_index else [])]  # fmt: skip
                        times["wheelfit verify"].append(_run(verify, env))
            shutil.rmtree(caches, ignore_errors=True)
    med = {k: statistics.median(v) for k, v in times.items()}
    ratios = {
        "wheelfit/uv cold": med["wheelfit cold"] / med["uv cold"],
        "wheelfit/uv warm": med["wheelfit warm"] / med["uv warm"],
    }
    if "pip cold" in med:
        ratios["pip/wheelfit cold"] = med["pip cold"] / med["wheelfit cold"]
        ratios["pip/wheelfit warm"] = med["pip warm"] / med["wheelfit warm"]
    return {"scenario": name, "rounds": rounds, "median_s": med, "min_s": {k: min(v) for k, v in times.items()},
            "ratios": ratios}  # fmt: skip


def main() -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--only", choices=("small", "large", "variant"))
    ap.add_argument("--json", action="store_true", help="print the result as JSON")
    args = ap.parse_args()
    wanted = {args.only} if args.only else {"small", "large", "variant"}
    results: list[dict[str, object]] = []
    with tempfile.TemporaryDirectory(prefix="wheelfit-bench-") as tmp:
        root, static, work = Path(tmp) / "index", Path(tmp) / "static", Path(tmp) / "work"
        work.mkdir()
        scenarios = {"small": _small(root) if "small" in wanted else None}
        if wanted & {"large", "variant"}:
            large = _large(root)
            if large is None:
                print(f"SKIPPED the large and variant scenarios: {BIG_WHEEL} is not here", file=sys.stderr)
            scenarios["large"] = large if "large" in wanted else None
            variant = _variant(static) if large is not None and "variant" in wanted else None
            scenarios["variant"] = large if variant is not None else None
        with serve(root) as url, serve_static(static) as static_url:
            for name, reqs in scenarios.items():
                if reqs is not None:
                    where = f"{static_url}/whl/variant" if name == "variant" else None
                    results.append(_scenario(name, url, reqs, args.rounds, work, where))
    if args.json:
        print(json.dumps(results, indent=2))
        return 0
    for r in results:
        print(f"\n## {r['scenario']} ({r['rounds']} rounds, median s)")
        med, low, ratios = r["median_s"], r["min_s"], r["ratios"]
        if not (isinstance(med, dict) and isinstance(low, dict) and isinstance(ratios, dict)):
            raise TypeError("malformed result")
        for key in med:
            print(f"  {key:18} {med[key]:7.2f}   (min {low[key]:.2f})")
        for key, value in ratios.items():
            print(f"  {key:18} {value:5.2f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
