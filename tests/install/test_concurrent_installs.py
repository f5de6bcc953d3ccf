"""Eight ``wheelfit install`` runs started at once into one environment (issue 15: load).

They overlap on purpose: all need the same dependencies, half install the same torch build, each adds its own
package of a few hundred files. Each must succeed, and the environment afterwards must be one that a single run
could have produced: every file of every distribution matching its RECORD, no file that no RECORD lists, each
distribution once, and nothing of the runs' own machinery (rollback snapshots, partial downloads) left behind.
"""

from __future__ import annotations

import base64
import csv
import hashlib
import json
import subprocess
import sys
import time
from collections import Counter
from functools import partial
from pathlib import Path

import pytest

from tests.support.wheels import make_wheel

from .conftest import Index, make_venv

RUNS = 8
#: Files per package: enough that an install takes a while and the runs overlap.
FILES = 200


@pytest.fixture(scope="module")
def packages(index: Index) -> list[str]:
    """``loadpkg0`` .. ``loadpkg7`` on the default index, each needing ``loadcommon`` and ``smallnum``."""
    body = "VALUE = {!r}\n" + "# padding\n" * 40
    files = {f"loadcommon/m{j}.py": body.format(j) for j in range(FILES)}
    index.put("default/simple", partial(make_wheel, name="loadcommon", version="1.0", files=files))
    names = []
    for i in range(RUNS):
        name = f"loadpkg{i}"
        files = {f"{name}/m{j}.py": body.format((i, j)) for j in range(FILES)}
        requires = ["loadcommon>=1.0", "smallnum>=1.0"]
        index.put("default/simple", partial(make_wheel, name=name, version="1.0", requires=requires, files=files))
        names.append(name)
    return names


def site_packages(prefix: Path) -> Path:
    (found,) = prefix.glob("lib/python3*/site-packages")
    return found


def record_problems(site: Path) -> list[str]:
    """Every way the installed files disagree with the RECORDs (PEP 376/627): a file whose sha256 or size is not
    the recorded one, a recorded file that is missing, a file under site-packages that no RECORD lists."""
    problems: list[str] = []
    listed: set[Path] = set()
    for record in sorted(site.glob("*.dist-info/RECORD")):
        with record.open(newline="") as f:
            for row in csv.reader(f):
                if not row:
                    continue
                path = (site / row[0]).resolve()
                listed.add(path)
                digest = row[1] if len(row) > 1 else ""
                if not digest:
                    continue  # RECORD itself, and files installers add without a hash
                if not path.is_file():
                    problems.append(f"{record.parent.name}: {row[0]} is missing")
                    continue
                data = path.read_bytes()
                algorithm, _, want = digest.partition("=")
                got = base64.urlsafe_b64encode(hashlib.new(algorithm, data).digest()).rstrip(b"=").decode()
                if got != want:
                    problems.append(f"{record.parent.name}: {row[0]} does not match its RECORD hash")
                if len(row) > 2 and row[2] and int(row[2]) != len(data):
                    problems.append(f"{record.parent.name}: {row[0]} is {len(data)} bytes, RECORD says {row[2]}")
    for path in sorted(site.rglob("*")):
        if path.is_file() and "__pycache__" not in path.parts and path.resolve() not in listed:
            problems.append(f"{path.relative_to(site)} is listed in no RECORD")
    return problems


def distributions(python: Path) -> Counter[str]:
    """How many times the environment's own ``importlib.metadata`` lists each distribution name."""
    script = "import json, importlib.metadata as m; print(json.dumps([d.metadata['Name'] for d in m.distributions()]))"
    out = subprocess.run([str(python), "-c", script], capture_output=True, text=True, check=True)
    return Counter(json.loads(out.stdout))


def test_eight_concurrent_installs_serialize_and_leave_a_consistent_environment(
    index: Index, env: dict[str, str], packages: list[str], tmp_path: Path
) -> None:
    prefix = tmp_path / "venv"
    python = make_venv(prefix)
    common = ["--python", str(python), "--target", "os=linux", "--no-verify"]
    common += ["--pytorch-index", index.pytorch, "--index-url", index.default]
    logs = [tmp_path / f"run{i}.log" for i in range(RUNS)]
    procs = []
    started = time.monotonic()
    for i, name in enumerate(packages):
        wanted = [name, "torch", "torchvision"] if i % 2 else [name]
        argv = [sys.executable, "-m", "wheelfit", "install", *wanted, *common]
        with logs[i].open("w") as out:
            procs.append(subprocess.Popen(argv, env=env, stdout=out, stderr=subprocess.STDOUT))
    codes = [p.wait(timeout=180) for p in procs]
    elapsed = time.monotonic() - started
    assert codes == [0] * RUNS, "\n---\n".join(log.read_text() for log in logs)
    for name, log in zip(packages, logs, strict=True):  # each installed its own package
        assert f"{name}==1.0" in log.read_text(), log.read_text()
    assert elapsed < 150

    site = site_packages(prefix)
    assert record_problems(site) == []
    listed = distributions(python)
    assert {name: n for name, n in listed.items() if n != 1} == {}  # each distribution once
    assert set(listed) == {*packages, "loadcommon", "smallnum", "torch", "torchvision"}
    versions = subprocess.run(
        [str(python), "-c", "import torch, torchvision, loadpkg7; print(torch.__version__, torchvision.__name__)"],
        capture_output=True, text=True, check=True,
    ).stdout.split()  # fmt: skip
    assert versions == ["2.15.0+cpu", "torchvision"]
    leftovers = [p for p in prefix.rglob("*") if p.name.startswith(".wheelfit-rollback-") or p.suffix == ".part"]
    assert leftovers == []
