"""Fuzz targets through the command line (issue 30): not the parsers alone but the path from an option, a
variable or a file the user names to them, run in this process as the console script runs it
(``wheelfit.cli.app.run``), offline.

Contract: every input ends in exit 0, 1 or 2 with no internal error (70) and no traceback, and an error is one line
that never repeats a long value whole.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from .strategies import TRICKY

GTX_1080 = "cuda=6.1,driver=580.95.05"
_KEYS = ("cuda", "driver", "rocm", "xpu", "os", "arch", "python", "cpu", "macos", "cuda-runtime")

#: A key=value spec, near-valid: real keys with tricky or arbitrary values, joined as a user would.
_PAIRS = st.tuples(st.sampled_from(_KEYS), st.sampled_from(TRICKY) | st.text(max_size=30))
_SPECS = st.lists(_PAIRS.map(lambda kv: f"{kv[0]}={kv[1]}"), min_size=1, max_size=4).map(",".join)
specs = _SPECS | st.text(max_size=300)

def _settable(value: str) -> bool:
    """What an environment can hold: no NUL, and encodable as the OS encodes it."""
    try:
        value.encode()
    except UnicodeEncodeError:
        return False
    return "\x00" not in value


#: The variables wheelfit and its providers read, each with a tricky or arbitrary value.
_NAMES = (
    "WHEELFIT_INDEX_DEADLINE", "WHEELFIT_PLAN_INDEX_DEADLINE", "UV_HTTP_TIMEOUT", "WHEELFIT_SPEED_LIMIT",
    "WHEELFIT_SPEED_TIME", "WHEELFIT_MAX_TIME", "UV_TORCH_BACKEND", "NV_VARIANT_PROVIDER_FORCE_SM_ARCH",
    "NV_VARIANT_PROVIDER_FORCE_CUDA_DRIVER_VERSION", "AMD_VARIANT_PROVIDER_FORCE_GFX_ARCH",
    "AMD_VARIANT_PROVIDER_FORCE_ROCM_VERSION", "UV_CUDA_DRIVER_VERSION",
)  # fmt: skip
variables = st.dictionaries(
    st.sampled_from(_NAMES), (st.sampled_from(TRICKY) | st.text(max_size=40)).filter(_settable), max_size=3
)


@pytest.fixture(scope="module")
def run_cli(tmp_path_factory: pytest.TempPathFactory) -> Iterator[object]:
    with warnings.catch_warnings():  # typer 0.25 trips a click deprecation warning when imported under pytest
        warnings.simplefilter("ignore", DeprecationWarning)
        from wheelfit.cli.app import run
    yield run


def _call(
    run: object,
    args: list[str],
    env: dict[str, str],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> tuple[int, str]:
    with monkeypatch.context() as m:
        m.setenv("WHEELFIT_OFFLINE", "1")
        for name, value in env.items():
            m.setenv(name, value)
        code = run(args)  # type: ignore[operator]
    out = capsys.readouterr()
    return int(code), out.out + out.err


def _holds(code: int, out: str) -> None:
    assert code in (0, 1, 2), out
    assert "internal error" not in out and "Traceback" not in out, out
    errors = [ln for ln in out.splitlines() if ln.startswith("wheelfit: error:")]
    assert len(errors) <= 1 and all(len(ln) < 2000 for ln in errors), out


_SETTINGS = settings(max_examples=60, suppress_health_check=[HealthCheck.function_scoped_fixture])


@_SETTINGS
@given(spec=specs)
@example(spec="x" * 5000)
@example(spec="cuda=8.6," + "x=" * 2000)
def test_target_values(
    spec: str, run_cli: object, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    if "\x00" in spec:
        spec = spec.replace("\x00", "")
    _holds(*_call(run_cli, ["plan", "torch", "--offline", "--target", spec], {}, monkeypatch, capsys))


@_SETTINGS
@given(env=variables)
@example(env={"UV_HTTP_TIMEOUT": "inf"})
@example(env={"AMD_VARIANT_PROVIDER_FORCE_ROCM_VERSION": "bad"})
def test_variables(
    env: dict[str, str], run_cli: object, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _holds(*_call(run_cli, ["plan", "torch", "--offline", "--target", GTX_1080], env, monkeypatch, capsys))


@_SETTINGS
@given(body=st.binary(max_size=600) | st.text(max_size=600).map(str.encode))
@example(body=b'{"x":')
@example(body=b"\xff\xfe{}")
def test_kb_files(
    body: bytes,
    run_cli: object,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    kb = tmp_path_factory.mktemp("kb") / "kb.json"
    kb.write_bytes(body)
    args = ["plan", "torch", "--offline", "--target", GTX_1080, "--kb", str(kb)]
    _holds(*_call(run_cli, args, {}, monkeypatch, capsys))


_TOML_SHAPES = st.sampled_from((
    '[project]\nname = "d"\ndependencies = "torch"\n', '[tool]\nuv = "x"\n', "[tool.wheelfit]\nbuilds = 7\n",
    'project = [1]\n', '[project]\nname = "d"\ndependencies = ["torch", 3]\n', '[dependency-groups]\ndev = "torch"\n',
    '[project]\nname = "d"\n[project.optional-dependencies]\ngpu = 5\n', "[tool.uv.sources]\ntorch = 1\n",
    '[[tool.uv.index]]\nname = 7\n', '[project]\nname = "d"\ndependencies = ["torch"]\n',
))  # fmt: skip


@_SETTINGS
@given(text=_TOML_SHAPES | st.text(max_size=300))
def test_project_files(
    text: str,
    run_cli: object,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    root: Path = tmp_path_factory.mktemp("project")
    (root / "pyproject.toml").write_text(text, encoding="utf-8", errors="surrogateescape")
    args = ["configure", "uv", "--project", str(root), "--target", GTX_1080, "--dry-run"]
    _holds(*_call(run_cli, args, {}, monkeypatch, capsys))
