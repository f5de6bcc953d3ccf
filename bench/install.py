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
  --variant-index` (which installs its plain copy) against uv installing the original wheel (pip left out);
- cuda-shaped: shaped like a CUDA install (issue 12): one 800 MB torch wheel on the cu130 index whose
  Requires-Dist names ten 150-400 MB ``nvidia-*`` wheels (2.95 GB) on the default index; synthetic, incompressible
  (random bytes, stored), generated once into bench/.data/ (git-ignored). wheelfit (uv backend) against uv given
  both indexes as a user would (``--index-url <cu130> --extra-index-url <default>``); pip left out. Also
  ``wheelfit-no658``: the same install from a second index serving the same files without PEP 658 metadata, where
  wheelfit must download torch itself to read its dependencies (uv then installs that very file).

The index-mode scenarios are served as PyPI and download.pytorch.org serve them: PEP 658 metadata beside each wheel,
files sent with sendfile (tests/install/pep658_index.py). `wheelfit install` runs with --no-verify (verification
imports torch: timed separately as `wheelfit verify`); `wheelfit plan --json` for the same request is timed after
each warm install, and then each tool's no-op re-run into the same environment. Targets (issue 28, every
scenario): `wheelfit install` time minus `uv pip install` time at most 1.1x the plan's own time, cold and warm;
a no-op re-run at most uv's no-op time plus the plan's. Each target is printed as met or not.

``--rate MB`` caps the loopback index at MB/s shared by all files, as one network link: an install from the
internet, where the download and not the disk is what takes the time.

    .venv/bin/python bench/install.py [--rounds 3] [--only small|large|variant|cuda-shaped] [--rate MB] [--json]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import zipfile
from base64 import urlsafe_b64encode
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.install.pep658_index import serve_pep658  # noqa: E402 - the repository root must be on sys.path first
from tests.support.wheels import make_torch_like, make_wheel  # noqa: E402
from tests.variants_mode.variant_index import serve as serve_static  # noqa: E402
from tests.variants_mode.variant_index import write_page  # noqa: E402

from wheelfit.install.plain_wheel import record_with, rewrite_wheel  # noqa: E402

BIG_WHEEL = Path("/opt/wheels/torch-2.13.0+cpu-cp311-cp311-manylinux_2_28_x86_64.whl")
BIG_DEPS = ["filelock", "typing-extensions>=4.10.0", "setuptools>=77.0.3", "sympy>=1.13.3", "networkx>=2.5.1",
            "jinja2", "fsspec>=0.8.5"]  # fmt: skip
DEPS_CACHE = Path.home() / ".cache" / "wheelfit-bench" / "deps"
TOOLS = ("wheelfit", "uv", "pip")
CUDA_DATA = ROOT / "bench" / ".data" / "cuda-shaped"
#: The second index (same files, no PEP 658 metadata) for ``wheelfit-no658``: wheelfit as it was before the warm-up.
NO658_URL = [""]
CUDA_TORCH_MB = 800
#: (name, MB): the shape of torch 2.9's cu13 dependencies, sizes rounded (2.95 GB in all).
CUDA_DEPS = (("nvidia-cublas-cu13", 400), ("nvidia-cudnn-cu13", 400), ("nvidia-cusparse-cu13", 350),
             ("nvidia-nccl-cu13", 350), ("nvidia-cufft-cu13", 300), ("nvidia-cusolver-cu13", 300),
             ("nvidia-cusparselt-cu13", 250), ("nvidia-curand-cu13", 250), ("nvidia-nvshmem-cu13", 200),
             ("nvidia-cuda-nvrtc-cu13", 150))  # fmt: skip
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


@dataclass(frozen=True)
class Scenario:
    """What each tool is asked for: wheelfit plans ``plan_req`` for ``target``; uv and pip get ``exact``."""

    plan_req: str
    exact: str
    variant: str = "cpu"
    target: str = "os=linux"
    #: uv's indexes as a user gives them for a CUDA build: the variant index first, the default one as extra.
    variant_first: bool = False
    tools: tuple[str, ...] = TOOLS


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


def _big_wheel(directory: Path, name: str, version: str, mb: int, requires: Sequence[str] = ()) -> Path:
    """A wheel of ``mb`` MB of random bytes in 32 MB stored members, with a correct RECORD; written once."""
    escaped = name.replace("-", "_")
    path = directory / f"{escaped}-{version}-py3-none-any.whl"
    if path.is_file():
        return path
    directory.mkdir(parents=True, exist_ok=True)
    part = path.with_suffix(".part")
    dist = f"{escaped}-{version}.dist-info"
    record: list[str] = []
    with zipfile.ZipFile(part, "w", zipfile.ZIP_STORED) as zf:

        def put(member: str, data: bytes) -> None:
            zf.writestr(zipfile.ZipInfo(member, date_time=(2020, 1, 1, 0, 0, 0)), data)
            digest = urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
            record.append(f"{member},sha256={digest},{len(data)}")

        put(f"{escaped}/__init__.py", f'__version__ = "{version}"\n'.encode())
        for i in range(max(1, mb // 32)):
            put(f"{escaped}/lib/lib{i:02d}.so", os.urandom((mb << 20) // max(1, mb // 32)))
        meta = ["Metadata-Version: 2.1", f"Name: {name}", f"Version: {version}"]
        put(f"{dist}/METADATA", ("\n".join([*meta, *(f"Requires-Dist: {r}" for r in requires)]) + "\n\n").encode())
        put(
            f"{dist}/WHEEL",
            b"Wheel-Version: 1.0\nGenerator: wheelfit-bench\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
        )
        zf.writestr(f"{dist}/RECORD", "\n".join([*record, f"{dist}/RECORD,,"]) + "\n")
    part.replace(path)
    return path


def _cuda_shaped(root: Path) -> Scenario:
    """The generated wheels (bench/.data/cuda-shaped, reused across runs) linked into the loopback index."""
    if not all((CUDA_DATA / "default").glob(f"{n.replace('-', '_')}-*.whl") for n, _mb in CUDA_DEPS):
        print(f"generating the cuda-shaped wheels once into {CUDA_DATA} (3.75 GB) ...", file=sys.stderr)
    deps = [_big_wheel(CUDA_DATA / "default", name, "13.0.0", mb) for name, mb in CUDA_DEPS]
    requires = [f"{n}==13.0.0; platform_system == 'Linux'" for n, _mb in CUDA_DEPS]
    torch = _big_wheel(CUDA_DATA / "pytorch", "torch", "2.15.0+cu130", CUDA_TORCH_MB, requires)
    _put(root, "pytorch/cu130", torch)
    for wheel in deps:
        _put(root, "default/simple", wheel)
    tools = ("wheelfit", "uv", "wheelfit-no658")
    return Scenario("torch==2.15.0", "torch==2.15.0+cu130", "cu130", "cuda=8.6,driver=580.95.05", True, tools)


def _command(tool: str, url: str, python: Path, sc: Scenario, variant_index: str | None) -> list[str]:
    if tool == "wheelfit-no658":  # the same files from an index without PEP 658 metadata: no warm-up
        tool, url = "wheelfit", NO658_URL[0]
    default, variant = f"{url}/default/simple", f"{url}/pytorch/{sc.variant}"
    if tool == "wheelfit":
        mode = ["--variant-index", variant_index] if variant_index else []
        return [str(ROOT / ".venv" / "bin" / "wheelfit"), "install", sc.plan_req, "--target", sc.target,
                "--python", str(python), "--pytorch-index", f"{url}/pytorch", "--index-url", default,
                "--no-verify", *mode]  # fmt: skip
    first, extra = (variant, default) if sc.variant_first else (default, variant)
    if tool == "uv":
        from uv import find_uv_bin

        return [str(find_uv_bin()), "pip", "install", "--python", str(python), "--index-url", first,
                "--extra-index-url", extra, sc.exact]  # fmt: skip
    return [sys.executable, "-m", "pip", "--python", str(python), "install", "--index-url", first,
            "--extra-index-url", extra, sc.exact]  # fmt: skip


def _plan_command(url: str, sc: Scenario, variant_index: str | None) -> list[str]:
    mode = ["--variant-index", variant_index] if variant_index else []
    return [str(ROOT / ".venv" / "bin" / "wheelfit"), "plan", sc.plan_req, "--target", sc.target,
            "--pytorch-index", f"{url}/pytorch", "--json", *mode]  # fmt: skip


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
    name: str, url: str, sc: Scenario, rounds: int, work: Path, variant_index: str | None = None
) -> dict[str, object]:
    tools = TOOLS[:2] if variant_index else sc.tools
    times: dict[str, list[float]] = {f"{t} {c}": [] for t in tools for c in ("cold", "warm", "noop")}
    times["wheelfit verify"] = []
    times["wheelfit plan"] = []
    for r in range(rounds):
        for tool in tools[r % len(tools) :] + tools[: r % len(tools)]:  # each tool goes first in some round
            caches = Path(tempfile.mkdtemp(dir=work))
            env = _hermetic(UV_CACHE_DIR=str(caches / "uv"), WHEELFIT_CACHE_DIR=str(caches / "wf"),
                            PIP_CACHE_DIR=str(caches / "pip"))  # fmt: skip
            for state in ("cold", "warm"):
                with _venv(work) as python:
                    times[f"{tool} {state}"].append(_run(_command(tool, url, python, sc, variant_index), env))
                    if state == "warm" and tool in ("wheelfit", "uv"):  # everything installed already: a no-op
                        times[f"{tool} noop"].append(_run(_command(tool, url, python, sc, variant_index), env))
                    if tool == "wheelfit" and state == "warm":
                        times["wheelfit plan"].append(_run(_plan_command(url, sc, variant_index), env))
                        if sc.variant == "cpu":  # the synthetic CUDA wheel has no torch package to import
                            verify = [str(ROOT / ".venv" / "bin" / "wheelfit"), "verify", "--python", str(python),
                                      "--target", sc.target, "--pytorch-index", f"{url}/pytorch",
                                      *(["--variant-index", variant_index] if variant_index else [])]  # fmt: skip
                            times["wheelfit verify"].append(_run(verify, env))
            shutil.rmtree(caches, ignore_errors=True)
    times = {k: v for k, v in times.items() if v}
    med = {k: statistics.median(v) for k, v in times.items()}
    ratios = {
        "wheelfit/uv cold": med["wheelfit cold"] / med["uv cold"],
        "wheelfit/uv warm": med["wheelfit warm"] / med["uv warm"],
    }
    if "wheelfit-no658 cold" in med:  # the same wheelfit without the warm-up (no PEP 658 metadata to start it)
        ratios["no658/uv cold"] = med["wheelfit-no658 cold"] / med["uv cold"]
        ratios["wheelfit/no658 cold"] = med["wheelfit cold"] / med["wheelfit-no658 cold"]
    if "pip cold" in med:
        ratios["pip/wheelfit cold"] = med["pip cold"] / med["wheelfit cold"]
        ratios["pip/wheelfit warm"] = med["pip warm"] / med["wheelfit warm"]
    return {"scenario": name, "rounds": rounds, "median_s": med, "min_s": {k: min(v) for k, v in times.items()},
            "ratios": ratios, "targets": _targets(name, med)}  # fmt: skip


def _targets(name: str, med: dict[str, float]) -> dict[str, dict[str, object]]:
    """Issue 28's targets, for every scenario: wheelfit's time beyond uv's, cold and warm, at most 1.1x what
    ``wheelfit plan --json`` alone takes for the same request; a no-op re-run at most uv's no-op plus the plan."""
    del name
    out: dict[str, dict[str, object]] = {}
    plan = med["wheelfit plan"]
    for state in ("cold", "warm"):
        extra, allowed = med[f"wheelfit {state}"] - med[f"uv {state}"], 1.1 * plan
        out[f"{state} (wheelfit - uv) <= 1.1x plan"] = {
            "value": f"{extra:.2f} s vs {allowed:.2f} s", "met": extra <= allowed
        }  # fmt: skip
    if "wheelfit noop" in med and "uv noop" in med:
        noop, allowed = med["wheelfit noop"], med["uv noop"] + plan
        out["no-op <= uv no-op + plan"] = {"value": f"{noop:.2f} s vs {allowed:.2f} s", "met": noop <= allowed}
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--only", choices=("small", "large", "variant", "cuda-shaped"))
    ap.add_argument("--rate", type=float, help="cap the index at this many MB/s for all files together")
    ap.add_argument("--json", action="store_true", help="print the result as JSON")
    args = ap.parse_args()
    wanted = {args.only} if args.only else {"small", "large", "variant", "cuda-shaped"}
    results: list[dict[str, object]] = []
    with tempfile.TemporaryDirectory(prefix="wheelfit-bench-") as tmp:
        root, static, work = Path(tmp) / "index", Path(tmp) / "static", Path(tmp) / "work"
        work.mkdir()
        scenarios: dict[str, Scenario | None] = {"small": Scenario(*_small(root)) if "small" in wanted else None}
        if wanted & {"large", "variant"}:
            large = _large(root)
            if large is None:
                print(f"SKIPPED the large and variant scenarios: {BIG_WHEEL} is not here", file=sys.stderr)
            scenarios["large"] = Scenario(*large) if large is not None and "large" in wanted else None
            variant = _variant(static) if large is not None and "variant" in wanted else None
            scenarios["variant"] = Scenario(*large) if large is not None and variant is not None else None
        scenarios["cuda-shaped"] = _cuda_shaped(root) if "cuda-shaped" in wanted else None
        rate = args.rate * 1e6 if args.rate else None
        with (
            serve_pep658(root, rate=rate) as served,
            serve_pep658(root, rate=rate, metadata=False) as no658,
            serve_static(static) as static_url,
        ):
            NO658_URL[0] = no658.url
            for name, sc in scenarios.items():
                if sc is not None:
                    where = f"{static_url}/whl/variant" if name == "variant" else None
                    results.append(_scenario(name, served.url, sc, args.rounds, work, where))
    if args.json:
        print(json.dumps(results, indent=2))
        return 0
    for r in results:
        print(f"\n## {r['scenario']} ({r['rounds']} rounds, median s)")
        med, low, ratios, targets = r["median_s"], r["min_s"], r["ratios"], r["targets"]
        if not (isinstance(med, dict) and isinstance(low, dict) and isinstance(ratios, dict)):
            raise TypeError("malformed result")
        if not isinstance(targets, dict):
            raise TypeError("malformed result")
        for key in med:
            print(f"  {key:18} {med[key]:7.2f}   (min {low[key]:.2f})")
        for key, value in ratios.items():
            print(f"  {key:18} {value:5.2f}x")
        for key, t in targets.items():
            print(f"  target {key}: {t['value']} -> {'MET' if t['met'] else 'NOT MET'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
