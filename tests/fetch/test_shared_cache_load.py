"""Eight processes downloading the same and overlapping files into one cache, one of them killed (SIGKILL) in the
middle of a download (issue 15: load). The seven others finish with the right files; afterwards every file under
its final name in the cache is whole and matches the sha256 recorded for it, and a ninth run takes everything from
the cache without a request. The 2-process version is ``test_download.py::test_two_processes_share_the_cache_safely``.
"""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from tests.conftest import ROOT, hermetic_env
from tests.support.static import serve_directory

#: Bytes per second the server sends each body at: the big file takes ~1.5 s, long enough to be killed midway.
RATE = 1_000_000
SIZES = {"big-1.0-py3-none-any.whl": 1_500_000, **{f"f{c}-1.0-py3-none-any.whl": 300_000 for c in "abc"}}
#: What each surviving process fetches, in this order (overlapping; ``*`` first: on 4 threads at once).
PLANS = [["big", "fa"], ["fa", "fb"], ["*", "fb", "fc", "big"], ["fc", "big"], ["fa", "fb", "fc"], ["big"],
         ["*", "fc", "fa"]]  # fmt: skip

SCRIPT = """
import json, sys
from pathlib import Path
from wheelfit.fetch import Cache, Downloader, DownloadRequest, make_client
cache, parallel, files = Path(sys.argv[1]), sys.argv[2] == "*", json.loads(sys.argv[3])
requests = [DownloadRequest(url, name, {"sha256": sha}) for url, name, sha in files]
with make_client() as http:
    downloader = Downloader(http, Cache(cache))
    results = downloader.fetch_all(requests, max_workers=4) if parallel else [downloader.fetch(r) for r in requests]
print(json.dumps([[r.request.filename, r.from_cache, r.sha256] for r in results]))
"""


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def start(cache: Path, files: list[tuple[str, str, str]], parallel: bool = False) -> subprocess.Popen[str]:
    argv = [sys.executable, "-c", SCRIPT, str(cache), "*" if parallel else "-", json.dumps(files)]
    env = hermetic_env(PYTHONPATH=str(ROOT / "src"))
    return subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def finish(proc: subprocess.Popen[str]) -> list[list[object]]:
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    return list(json.loads(out))


def cache_problems(cache: Path, expected: dict[str, str]) -> list[str]:
    """Every file of the cache that a reader could take for a finished one and is not: a file under a wheel's own
    name whose bytes are not that wheel's or not what its ``info.json`` recorded, a content link whose bytes do not
    hash to its name; and every ``.part`` or ``partial.json`` left although each download was finished."""
    problems = []
    for entry in sorted(p for p in cache.glob("wheels/*/*") if p.is_dir()):
        info = json.loads((entry / "info.json").read_bytes()) if (entry / "info.json").is_file() else {}
        recorded = (info.get("hashes") or {}).get("sha256") or info.get("sha256")
        for path in sorted(entry.iterdir()):
            if path.name in expected:
                actual = sha256(path)
                if actual != expected[path.name] or actual != recorded:
                    problems.append(f"{path}: sha256 {actual}, expected {expected[path.name]}, recorded {recorded}")
            elif path.suffix == ".part" or path.name == "partial.json":
                problems.append(f"{path} is left over")
            elif path.name not in (".lock", "info.json") and not path.name.startswith("."):
                problems.append(f"{path}: an unexpected file under a final name")
    for link in cache.glob("content/*/*"):
        if link.is_file() and len(link.name) == 64 and sha256(link) != link.name:
            problems.append(f"{link} does not hash to its name")
    return problems


def test_eight_processes_share_one_cache_and_one_killed_midway_corrupts_nothing(tmp_path: Path) -> None:
    served = tmp_path / "served"
    served.mkdir()
    expected = {}
    for name, size in SIZES.items():
        (served / name).write_bytes(os.urandom(size))
        expected[name] = sha256(served / name)
    cache = tmp_path / "cache"
    requests: list[tuple[str, dict[str, str]]] = []
    with serve_directory(served, throttle=RATE, request_log=requests) as url:
        files = {name.split("-")[0]: (f"{url}/{name}", name, expected[name]) for name in SIZES}
        victim = start(cache, [files["big"]])
        # Wait until its download is well under way, then start the seven others and kill it midway.
        deadline = time.monotonic() + 30
        while not any(p.stat().st_size > 200_000 for p in cache.glob("wheels/*/*/big-*.part")):
            assert victim.poll() is None and time.monotonic() < deadline, victim.communicate()
            time.sleep(0.01)
        others = [start(cache, [files[n] for n in plan if n != "*"], parallel=plan[0] == "*") for plan in PLANS]
        time.sleep(0.3)
        (part,) = cache.glob("wheels/*/*/big-*.part")
        assert victim.poll() is None and 0 < part.stat().st_size < SIZES["big-1.0-py3-none-any.whl"]
        victim.send_signal(signal.SIGKILL)
        victim.communicate(timeout=10)
        assert victim.returncode == -signal.SIGKILL
        results = [finish(p) for p in others]

        for plan, got in zip(PLANS, results, strict=True):
            wanted = [files[n][1] for n in plan if n != "*"]
            assert [(name, digest) for name, _, digest in got] == [(n, expected[n]) for n in wanted]
        # Every file was downloaded by one process; the rest waited for it and took it from the cache.
        downloaded = [str(name) for got in results for name, from_cache, _ in got if not from_cache]
        assert sorted(downloaded) == sorted(SIZES)
        # One transfer per file; the killed one's continues where it stopped or starts again, but only once.
        asked = [path.lstrip("/") for path, _ in requests]
        assert {name: asked.count(name) for name in SIZES if name != "big-1.0-py3-none-any.whl"} == {
            name: 1 for name in SIZES if name != "big-1.0-py3-none-any.whl"
        }
        assert asked.count("big-1.0-py3-none-any.whl") == 2
        assert cache_problems(cache, expected) == []

        before = len(requests)
        again = finish(start(cache, [files[n] for n in ("big", "fa", "fb", "fc")], parallel=True))
        assert [from_cache for _, from_cache, _ in again] == [True] * 4
        assert requests[before:] == []  # a fresh run reuses every entry without asking the server
