"""Benchmark start-up and planning (issue 29): four figures as ratios to `python -c pass`, measured in one run.

Each command is a fresh process (the venv's `wheelfit` entry point; the same Python for `python -c pass`); the
rounds are interleaved, the command that goes first rotating, so machine load affects every figure alike. Targets:

- `wheelfit detect --json` at most 8x `python -c pass`;
- `wheelfit --version` at most 3x;
- `wheelfit plan torch --offline --json --target cuda=8.6,driver=580.95.05` at most 8x, with an empty cache (so
  planned from the knowledge base alone);
- the same plan reading a loopback PyTorch-shaped index (tests/install/loopback.py, wheels from
  tests/support/wheels.py) with an empty cache: at most 0.15 s more than the offline plan.

Two floors are timed in the same rounds (bench/floor_app.py): a one-command typer app, and the same app importing
packaging's requirement and tag modules, which any plan reads its request and the target's wheel tags with.

Hermetic: no pip or uv configuration, a fresh WHEELFIT_CACHE_DIR for every plan and a WHEELFIT_DATA_DIR of its
own, bytecode written as on a user's machine; every proxy variable points at a closed loopback port (loopback
itself excepted), so a request for any other host fails instead of leaving the machine.

    .venv/bin/python bench/startup.py [--rounds 15] [--markdown]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from detect import _summary, _timed
from tests.install.loopback import serve
from tests.support.wheels import make_torch_like

from install import _hermetic

HERE = Path(__file__).resolve().parent
TARGET = "cuda=8.6,driver=580.95.05"
#: The PyTorch index as download.pytorch.org lays it out: one index per build, torch's page in each.
VARIANTS = ("cpu", "cu118", "cu121", "cu124", "cu126", "cu128", "cu129", "cu130", "cu132")
VERSIONS = ("2.13.0", "2.14.0", "2.15.0")
#: Any host but loopback goes through this proxy, which refuses (port 9, discard: nothing listens).
_NOWHERE = "http://127.0.0.1:9"
PYTHON = "python -c pass"
#: The design card's parser alone (bench/floor_app.py), and with what a plan must import to read a requirement and
#: the target's wheel tags: no target can be met below these.
FLOOR = "floor: a one-command typer app --json"
PLAN_FLOOR = "floor: the same app importing packaging's requirements and tags"
DETECT = "wheelfit detect --json"
VERSION = "wheelfit --version"
OFFLINE = f"wheelfit plan torch --offline --json --target {TARGET}"
LOOPBACK = f"wheelfit plan torch --json --target {TARGET} --pytorch-index <loopback>"


def _index(root: Path) -> None:
    """``root/pytorch/<variant>/torch/``: torch ``VERSIONS`` for each of ``VARIANTS``."""
    build = root / ".build"
    for variant in VARIANTS:
        page = root / "pytorch" / variant / "torch"
        page.mkdir(parents=True)
        for version in VERSIONS:
            wheel = make_torch_like(build, version, variant)
            wheel.rename(page / wheel.name)
    shutil.rmtree(build)


def _env(work: Path) -> dict[str, str]:
    """The hermetic environment with a fresh, empty cache directory."""
    cache = Path(tempfile.mkdtemp(dir=work))
    proxies = dict.fromkeys(("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy"), _NOWHERE)
    env = _hermetic(WHEELFIT_CACHE_DIR=str(cache), WHEELFIT_DATA_DIR=str(work / "data"), **proxies)
    env.pop("all_proxy", None)
    env["NO_PROXY"] = env["no_proxy"] = "127.0.0.1,localhost"
    return env


def _checked_plan(argv: list[str], env: dict[str, str], index_url: str | None) -> dict[str, object]:
    """Run a plan once, untimed, and check it planned what the figure is meant to measure."""
    done = subprocess.run(argv, capture_output=True, text=True, env=env, check=False)
    if done.returncode != 0:
        raise SystemExit(f"bench: {' '.join(argv)} failed:\n{done.stderr[-2000:]}")
    plan: dict[str, object] = json.loads(done.stdout)
    where = str(plan.get("index_url", ""))
    warnings = plan.get("warnings")
    alone = isinstance(warnings, list) and any("knowledge base alone" in str(w) for w in warnings)
    if index_url is None and not alone:
        raise SystemExit(f"bench: the offline plan did not plan from the knowledge base alone:\n{done.stdout}")
    if index_url is not None and not where.startswith(index_url):
        raise SystemExit(f"bench: the loopback plan chose {where}, not the loopback index:\n{done.stdout}")
    return plan


@dataclass(frozen=True)
class Figures:
    """One run's figures: per command its median, p90 and min ms and the median's ratio to ``python -c pass``."""

    results: dict[str, dict[str, float]]
    #: What the offline plan chose (``torch 2.15.0 cu132``) and the loopback one (``cu130``, pages read).
    offline_plan: str
    loopback_plan: str

    @property
    def extra_ms(self) -> float:
        """The loopback plan's median beyond the offline plan's."""
        return round(self.results[LOOPBACK]["median_ms"] - self.results[OFFLINE]["median_ms"], 1)

    def targets(self) -> dict[str, bool]:
        ratio = {name: r["ratio_to_python"] for name, r in self.results.items()}
        return {
            f"{DETECT} <= 8x": ratio[DETECT] <= 8,
            f"{VERSION} <= 3x": ratio[VERSION] <= 3,
            "plan --offline (empty cache) <= 8x": ratio[OFFLINE] <= 8,
            "plan from loopback (empty cache) - offline <= 150 ms": self.extra_ms <= 150,
        }


def measure(rounds: int) -> Figures:
    """Median and min ms of every command over ``rounds`` interleaved rounds."""
    exe = shutil.which("wheelfit", path=str(Path(sys.executable).parent))
    if exe is None:
        raise SystemExit("bench: `wheelfit` is not installed beside this Python")
    requests: list[tuple[str, dict[str, str]]] = []
    with tempfile.TemporaryDirectory(prefix="wheelfit-startup-") as tmp:
        work = Path(tmp)
        _index(work / "index")
        with serve(work / "index", request_log=requests) as url:
            commands = {
                PYTHON: [sys.executable, "-c", "pass"],
                FLOOR: [sys.executable, str(HERE / "floor_app.py"), "--json"],
                PLAN_FLOOR: [sys.executable, str(HERE / "floor_app.py"), "--json", "--with-packaging"],
                DETECT: [exe, "detect", "--json"],
                VERSION: [exe, "--version"],
                OFFLINE: [exe, "plan", "torch", "--offline", "--json", "--target", TARGET],
                LOOPBACK: [exe, "plan", "torch", "--json", "--target", TARGET, "--pytorch-index", f"{url}/pytorch"],
            }
            chosen = _checked_plan(commands[OFFLINE], _env(work), None)
            loop = _checked_plan(commands[LOOPBACK], _env(work), f"{url}/pytorch/")
            pages = len(requests)
            for argv in commands.values():  # the page cache and .pyc files warm, each command's first run untimed
                for _ in range(2):
                    _timed(argv, _env(work))
            samples: dict[str, list[float]] = {name: [] for name in commands}
            names = list(commands)
            for i in range(rounds):
                for name in names[i % len(names) :] + names[: i % len(names)]:
                    samples[name].append(_timed(commands[name], _env(work)))
    results = {name: _summary(s) for name, s in samples.items()}
    base = results[PYTHON]["median_ms"]
    for r in results.values():
        r["ratio_to_python"] = round(r["median_ms"] / base, 2)
    offline = f"torch {chosen['torch_version']} {chosen['variant']}"
    return Figures(results, offline, f"{loop['variant']}, {pages} page requests")


def main() -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--markdown", action="store_true", help="print the rows for docs/benchmarks.md")
    args = ap.parse_args()
    load_before = os.getloadavg()
    out = measure(args.rounds)
    load = "/".join(f"{x:.2f}" for x in load_before)
    sys.stdout.write(
        f"{args.rounds} interleaved rounds, {os.cpu_count()} CPUs, Python {sys.version.split()[0]}, load average "
        f"{load} before; offline plan: {out.offline_plan} from the knowledge base alone; loopback plan: "
        f"{out.loopback_plan}\n\n"
    )
    if args.markdown:
        sys.stdout.write("| command | median ms | min ms | x `python -c pass` (median) |\n|---|---|---|---|\n")
        for name, r in out.results.items():
            sys.stdout.write(f"| `{name}` | {r['median_ms']:.0f} | {r['min_ms']:.0f} | {r['ratio_to_python']:.1f} |\n")
        sys.stdout.write(f"| loopback plan - offline plan | {out.extra_ms:.0f} | | |\n")
    else:
        width = max(map(len, out.results))
        sys.stdout.write(f"{'command':<{width}}  median ms  min ms  x python\n")
        for name, r in out.results.items():
            ms = f"{r['median_ms']:9.1f}  {r['min_ms']:6.1f}"
            sys.stdout.write(f"{name:<{width}}  {ms}  {r['ratio_to_python']:8.2f}\n")
        sys.stdout.write(f"{'loopback plan - offline plan':<{width}}  {out.extra_ms:9.1f}\n")
    sys.stdout.write("\n")
    for what, met in out.targets().items():
        sys.stdout.write(f"{'met    ' if met else 'MISSED '} {what}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
