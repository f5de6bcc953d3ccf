"""Benchmark `wheelfit detect --json` as a whole process next to `python -c pass`, in one run.

Runs are interleaved so machine load drifts affect both sides alike. The target
(issue 2) is a median under 150 ms on a 2-core machine with no GPU.

    .venv/bin/python bench/detect.py [--runs 41] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path


def _timed(argv: list[str], env: dict[str, str]) -> float:
    start = time.perf_counter()
    subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, check=True)
    return (time.perf_counter() - start) * 1000


def _summary(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)
    return {
        "median_ms": round(statistics.median(ordered), 1),
        "p90_ms": round(ordered[int(0.9 * (len(ordered) - 1))], 1),
        "min_ms": round(ordered[0], 1),
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=41)
    ap.add_argument("--json", action="store_true", help="print the result as JSON")
    args = ap.parse_args()

    exe = shutil.which("wheelfit", path=str(Path(sys.executable).parent)) or shutil.which("wheelfit")
    if exe is None:
        sys.stderr.write("bench: `wheelfit` is not installed in this environment\n")
        return 2
    # PYTHONDONTWRITEBYTECODE (set on these build machines) would make every run compile wheelfit's sources
    # again; a user's Python writes the bytecode on first use (or pip at install time), so it is dropped.
    env = {k: v for k, v in os.environ.items() if not k.startswith("WHEELFIT_") and k != "PYTHONDONTWRITEBYTECODE"}
    commands = {
        "python -c pass": [sys.executable, "-c", "pass"],
        "wheelfit detect --json": [exe, "detect", "--json"],
        "wheelfit --version": [exe, "--version"],
    }
    for argv in commands.values():  # warm the page cache and .pyc files
        for _ in range(3):
            _timed(argv, env)
    samples: dict[str, list[float]] = {name: [] for name in commands}
    for _ in range(args.runs):
        for name, argv in commands.items():
            samples[name].append(_timed(argv, env))
    results = {name: _summary(s) for name, s in samples.items()}
    base = results["python -c pass"]["median_ms"]
    for r in results.values():
        r["ratio_to_python"] = round(r["median_ms"] / base, 2)
    result = {"runs": args.runs, "cpus": os.cpu_count(), "python": sys.version.split()[0], "results": results}
    if args.json:
        sys.stdout.write(json.dumps(result, indent=2) + "\n")
    else:
        sys.stdout.write(f"{args.runs} interleaved runs, {os.cpu_count()} CPUs, Python {result['python']}\n\n")
        sys.stdout.write("| command | median ms | p90 ms | min ms | x python -c pass |\n|---|---|---|---|---|\n")
        for name, r in results.items():
            sys.stdout.write(
                f"| `{name}` | {r['median_ms']} | {r['p90_ms']} | {r['min_ms']} | {r['ratio_to_python']} |\n"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
