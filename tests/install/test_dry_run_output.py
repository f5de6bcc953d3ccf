"""``wheelfit install --dry-run`` as a person reads it: the wheels it would take with their URL and sha256 (the
README's promise), at 80 columns, URLs whole even where they are wider than the line."""

from __future__ import annotations

import json
from pathlib import Path

from .conftest import Index, make_venv, run_wheelfit

GTX_1080 = "cuda=6.1,driver=580.95.05"


def test_a_dry_run_prints_each_wheel_with_its_url_and_sha256(index: Index, env: dict[str, str], tmp_path: Path) -> None:
    python = make_venv(tmp_path / "venv")
    args = ["install", "torch", "--target", GTX_1080, "--python", str(python), "--dry-run"]
    args += ["--pytorch-index", index.pytorch, "--index-url", index.default]
    as_json = run_wheelfit([*args, "--json"], env)
    assert as_json.returncode == 0, as_json.stderr
    wheels = json.loads(as_json.stdout)["torch_family"]
    done = run_wheelfit(args, {**env, "COLUMNS": "80"})
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    for wheel in wheels:
        at = next(i for i, line in enumerate(lines) if wheel["url"] in line)  # whole, on one line
        assert lines[at].startswith(f"  {wheel['name']} ") or lines[at].strip() == wheel["url"]
        sha = next(line for line in lines[at + 1 :] if "sha256" in line)
        assert sha == f"    sha256 {wheel['sha256']}"
    assert "--dry-run: nothing was changed." in lines
    # Lines are at most 80 columns, but for one holding a single word longer than that (a long URL).
    assert all(len(line) <= 80 or len(line.split()) == 1 for line in lines)
