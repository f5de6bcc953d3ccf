"""``wheelfit verify --record``: the files installed in an environment checked against their RECORD.

Real venvs, real wheels installed by real uv (no index: only the wheel files), then one thing broken by hand as a
user, a bad tool or an attacker would: a file edited or deleted, RECORD rows that lead outside the environment or
cannot be parsed. The command runs in-process (typer's CliRunner); the machine is a ``--target``, planning offline.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import subprocess
from collections.abc import Callable, Iterator
from functools import partial
from pathlib import Path
from typing import Any

import pytest
from uv import find_uv_bin

from tests.conftest import hermetic_env
from tests.support.wheels import make_torch_like, make_wheel
from wheelfit.install.installed_record import ProblemKind, RecordCheck, check_installed_records
from wheelfit.install.target_env import TargetEnv, inspect_env

from .conftest import make_venv

#: PyPI's torch 2.9.0 (a CUDA 12.8 build) on an RTX 3090 with driver 580: verify passes (test_verify_runs_here).
TARGET = "cuda=8.6,driver=580.95.05"
TORCH = partial(make_torch_like, version="2.9.0", variant="cu128", local=False)
#: A file over the size hashed on worker threads (4 MiB), incompressible; and a script installed into bin/.
BIG = os.urandom(5 * 1024**2 + 3)
DEMO = partial(
    make_wheel,
    name="demo",
    version="1.0",
    files={
        "demo/__init__.py": "VALUE = 1\n",
        "demo/big.bin": BIG,
        "demo-1.0.data/scripts/demo-tool": "#!/bin/sh\necho demo\n",
    },
)

Maker = Callable[[Path], Path]

#: typer (0.25) still calls click helpers that click 8.3+ deprecates (as in tests/index/test_index_deadline.py);
#: so typer is imported in the tests, not at collection.
pytestmark = pytest.mark.filterwarnings(r"ignore:'click\.[\w.]+' is deprecated:DeprecationWarning")


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, str]]:
    """Hermetic, offline, caches under tmp_path; also this process's environment, since the command runs here."""
    environ = hermetic_env(
        UV_CACHE_DIR=str(tmp_path / "uv-cache"), WHEELFIT_CACHE_DIR=str(tmp_path / "wf-cache"), WHEELFIT_OFFLINE="1"
    )
    for key in list(os.environ):
        if key not in environ:
            monkeypatch.delenv(key)
    for key, value in environ.items():
        monkeypatch.setenv(key, value)
    yield environ


def _environment(tmp_path: Path, env: dict[str, str], *makers: Maker) -> TargetEnv:
    """A fresh venv with ``makers``' wheels installed by uv, described by its own interpreter."""
    python = make_venv(tmp_path / "venv")
    if makers:
        wheels = [str(make(tmp_path / "wheels")) for make in makers]
        argv = [find_uv_bin(), "pip", "install", "--python", str(python), "--no-index", *wheels]
        done = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=120, check=False)
        assert done.returncode == 0, done.stderr
    return inspect_env(str(python), env)


def _site(target: TargetEnv) -> Path:
    return next(d for d in target.install_dirs if (d / "demo").is_dir() or (d / "torch").is_dir())


def _check(target: TargetEnv, names: list[str] | None = None) -> RecordCheck:
    return check_installed_records(target.install_dirs, target.prefix, names)


def _problems(check: RecordCheck) -> list[tuple[str, ProblemKind, str]]:
    return [(d.name, p.kind, p.path) for d in check.distributions for p in d.problems]


def _append_rows(target: TargetEnv, *rows: str) -> None:
    record = _site(target) / "demo-1.0.dist-info" / "RECORD"
    record.write_text(record.read_text() + "".join(f"{row}\n" for row in rows))


def _verify(target: TargetEnv, *extra: str) -> tuple[int, str]:
    from typer.testing import CliRunner

    from wheelfit.cli.app import app

    result = CliRunner().invoke(app, ["verify", "--python", target.executable, "--target", TARGET, "--record", *extra])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    return result.exit_code, result.stdout


def _verify_json(target: TargetEnv) -> dict[str, Any]:
    code, out = _verify(target, "--json")
    data = json.loads(out)
    assert isinstance(data, dict)
    assert code == (0 if data["ok"] else 1)
    return data


def test_a_fresh_install_matches_its_record(tmp_path: Path, env: dict[str, str]) -> None:
    target = _environment(tmp_path, env, TORCH, DEMO)
    check = _check(target)
    assert check.ok and check.problems == ()
    assert sorted(d.name for d in check.distributions) == ["demo", "torch"]
    demo = next(d for d in check.distributions if d.name == "demo")
    # __init__.py, big.bin, the script in bin/ (../../../bin/demo-tool), METADATA, WHEEL and what uv adds hashed.
    assert demo.version == "1.0" and demo.checked >= 5
    assert demo.skipped >= 1  # RECORD itself has no hash
    assert (target.prefix / "bin" / "demo-tool").is_file()
    code, out = _verify(target)
    assert code == 0, out
    text = " ".join(out.split())
    assert "verified: torch 2.9.0" in text
    assert f"RECORD: 2 distributions, {check.checked} files checked, all match" in text


def test_an_edited_file_is_named(tmp_path: Path, env: dict[str, str]) -> None:
    target = _environment(tmp_path, env, TORCH, DEMO)
    site = _site(target)
    version_py = site / "torch" / "version.py"
    version_py.write_text(version_py.read_text() + "# edited\n")  # a longer file: the size differs
    big = site / "demo" / "big.bin"
    big.write_bytes(BIG[:-1] + bytes([BIG[-1] ^ 1]))  # the same size: only the hash tells
    check = _check(target)
    assert _problems(check) == [
        ("demo", ProblemKind.MISMATCH, "demo/big.bin"),
        ("torch", ProblemKind.MISMATCH, "torch/version.py"),
    ]
    details = {p.path: p.detail for p in check.problems}
    assert details["demo/big.bin"] == "sha256 differs"
    assert details["torch/version.py"].startswith("size ") and "RECORD says" in details["torch/version.py"]
    code, out = _verify(target)
    text = " ".join(out.split())
    assert code == 1
    assert "verified: torch 2.9.0" in text  # torch still runs: the verdict on the files is separate
    assert "torch 2.9.0: 1 file differs from RECORD (torch/version.py)" in text
    assert "demo 1.0: 1 file differs from RECORD (demo/big.bin)" in text
    assert "2 problems in 2 distributions" in text


def test_a_deleted_file_is_missing(tmp_path: Path, env: dict[str, str]) -> None:
    target = _environment(tmp_path, env, DEMO)
    (_site(target) / "demo" / "__init__.py").unlink()
    (target.prefix / "bin" / "demo-tool").unlink()
    check = _check(target)
    assert sorted(_problems(check)) == [
        ("demo", ProblemKind.MISSING, "../../../bin/demo-tool"),  # as RECORD spells it: relative to site-packages
        ("demo", ProblemKind.MISSING, "demo/__init__.py"),
    ]
    code, out = _verify(target)
    in_record_order = ", ".join(p.path for p in check.problems)
    assert code == 1 and f"demo 1.0: 2 missing ({in_record_order})" in " ".join(out.split())


def test_rows_outside_the_environment_are_reported_and_never_read(
    tmp_path: Path, env: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    target = _environment(tmp_path, env, DEMO)
    site = _site(target)
    secret = tmp_path / "outside" / "secret"
    secret.parent.mkdir()
    secret.write_bytes(b"not the environment's\n")
    ups = "../" * len(site.relative_to(site.anchor).parts)  # from site-packages up to /
    (site / "demo" / "link").symlink_to(secret)  # inside by its name, outside once followed
    rows = [
        f"{ups}etc/passwd,sha256={_b64(b'x')},1",
        f"{ups}{str(secret).lstrip('/')},sha256={_b64(secret.read_bytes())},{secret.stat().st_size}",  # it matches
        f"demo/link,sha256={_b64(secret.read_bytes())},{secret.stat().st_size}",
        f"{ups}etc/shadow,,",  # no hash to check, but an uninstall would delete it
        f"{secret},sha256={_b64(b'x')},1",  # absolute
    ]
    _append_rows(target, *rows)
    opened: list[str] = []
    real_open = os.open

    def spy(path: Any, *args: Any, **kwargs: Any) -> int:
        opened.append(os.fspath(path))
        return int(real_open(path, *args, **kwargs))

    monkeypatch.setattr(os, "open", spy)
    check = _check(target)
    monkeypatch.undo()
    assert [(kind, path) for _, kind, path in _problems(check)] == [
        (ProblemKind.OUTSIDE, rows[0].split(",")[0]),
        (ProblemKind.OUTSIDE, rows[1].split(",")[0]),
        (ProblemKind.OUTSIDE, "demo/link"),
        (ProblemKind.OUTSIDE, rows[3].split(",")[0]),
        (ProblemKind.OUTSIDE, str(secret)),
    ]
    assert "leads to /etc/passwd, outside the environment" in check.problems[0].detail
    assert opened and all(Path(p).resolve().is_relative_to(target.prefix.resolve()) for p in opened), opened
    demo = check.distributions[0]
    assert demo.checked >= 5  # the rest of demo's files were still checked


def test_malformed_rows_are_reported_and_the_rest_checked(tmp_path: Path, env: dict[str, str]) -> None:
    target = _environment(tmp_path, env, DEMO)
    init = b"VALUE = 1\n"
    _append_rows(
        target,
        f"demo/two_fields.py,sha256={_b64(init)}",
        "demo/md5.py,md5=1B2M2Y8AsgTpgAmY7PhCfg,0",
        "demo/bad_b64.py,sha256=!!!,3",
        "demo/short.py,sha256=AAAA,3",
        f"demo/size.py,sha256={_b64(init)},ten",
        '"demo/open_quote.py,sha256=x,1',
        f"demo/__init__.py,sha256={_b64(b'other')},5",  # listed twice, differently
    )
    check = _check(target)
    assert [(kind, path) for _, kind, path in _problems(check)] == [
        (ProblemKind.MALFORMED, "demo/two_fields.py"),
        (ProblemKind.MALFORMED, "demo/md5.py"),
        (ProblemKind.MALFORMED, "demo/bad_b64.py"),
        (ProblemKind.MALFORMED, "demo/short.py"),
        (ProblemKind.MALFORMED, "demo/size.py"),
        (ProblemKind.MALFORMED, '"demo/open_quote.py'),
        (ProblemKind.MALFORMED, "demo/__init__.py"),
    ]
    details = [p.detail for p in check.problems]
    assert "2 fields, not 3" in details[0] and "'md5' is not sha256 or stronger" in details[1]
    assert details[-1].endswith("listed twice")
    assert all(d.startswith("RECORD line ") for d in details)
    assert check.distributions[0].checked >= 5
    code, out = _verify(target)
    assert (
        code == 1
        and "demo 1.0: 7 malformed RECORD rows (demo/two_fields.py, demo/md5.py, demo/bad_b64.py, and 4 more)"
        in " ".join(out.split())
    )


def test_a_record_that_is_not_utf8_is_malformed(tmp_path: Path, env: dict[str, str]) -> None:
    target = _environment(tmp_path, env, DEMO)
    (_site(target) / "demo-1.0.dist-info" / "RECORD").write_bytes(b"demo/\xff.py,,\n")
    check = _check(target)
    assert _problems(check) == [("demo", ProblemKind.MALFORMED, "demo-1.0.dist-info/RECORD")]


def test_json_shape(tmp_path: Path, env: dict[str, str]) -> None:
    target = _environment(tmp_path, env, TORCH, DEMO)
    data = _verify_json(target)
    record = data["record"]
    assert data["ok"] is True and record["ok"] is True and data["reason"] is None
    assert set(record) == {
        "ok", "distributions_checked", "files_checked", "problems", "distributions", "without_record", "not_found",
    }  # fmt: skip
    assert record["distributions_checked"] == 2 and record["problems"] == 0
    assert record["files_checked"] == sum(d["files_checked"] for d in record["distributions"])
    demo = next(d for d in record["distributions"] if d["name"] == "demo")
    assert set(demo) == {"name", "version", "dist_info", "ok", "files_checked", "unhashed", "problems"}
    assert demo["version"] == "1.0" and Path(demo["dist_info"]).name == "demo-1.0.dist-info"

    (_site(target) / "demo" / "__init__.py").write_text("VALUE = 2\n")
    data = _verify_json(target)
    assert data["ok"] is False and data["record"]["ok"] is False and data["record"]["problems"] == 1
    assert data["checks"] and all(c["ok"] is not False for c in data["checks"])  # torch itself passed
    assert "demo 1.0: 1 file differs from RECORD (demo/__init__.py)" in data["reason"]
    demo = next(d for d in data["record"]["distributions"] if d["name"] == "demo")
    assert demo["problems"] == [{"kind": "mismatch", "path": "demo/__init__.py", "detail": "sha256 differs"}]


def test_without_torch_the_records_are_checked_and_torch_is_still_missing(tmp_path: Path, env: dict[str, str]) -> None:
    target = _environment(tmp_path, env, DEMO)
    data = _verify_json(target)
    assert data["ok"] is False and data["torch"]["missing"] is True
    assert "torch is not installed" in data["reason"]
    assert data["record"]["ok"] is True and [d["name"] for d in data["record"]["distributions"]] == ["demo"]
    code, out = _verify(target)
    text = " ".join(out.split())
    assert code == 1 and "torch is not installed" in text and "RECORD: 1 distribution," in text


def test_only_the_distributions_named(tmp_path: Path, env: dict[str, str]) -> None:
    target = _environment(tmp_path, env, TORCH, DEMO)
    (_site(target) / "torch" / "version.py").unlink()
    check = _check(target, ["DEMO", "absent"])
    assert [d.name for d in check.distributions] == ["demo"] and check.ok
    assert check.not_found == ("absent",)
    assert not _check(target, ["torch"]).ok
