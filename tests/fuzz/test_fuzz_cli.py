"""Fuzz targets through the command line (issue 30): not the parsers alone but the path from an option, a
variable or a file the user names to them, run in this process as the console script runs it
(``wheelfit.cli.app.run``), offline.

Contract: every input ends in exit 0, 1 or 2 with no internal error (70) and no traceback, and an error is one line
that never repeats a long value whole.
"""

from __future__ import annotations

import json
import shutil
import threading
import warnings
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from ..conftest import MACHINES, REALDATA
from .strategies import TRICKY, binary_text, mutated_json, texts

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


#: Every variable wheelfit and its providers read (``grep -o '"[A-Z0-9_]*"'`` over src and providers), each with a
#: tricky or arbitrary value.
_NAMES = (
    "WHEELFIT_INDEX_DEADLINE", "WHEELFIT_PLAN_INDEX_DEADLINE", "WHEELFIT_INSTALL_INDEX_DEADLINE", "UV_HTTP_TIMEOUT",
    "UV_REQUEST_TIMEOUT", "WHEELFIT_HTTP_TIMEOUT", "PIP_TIMEOUT", "PIP_DEFAULT_TIMEOUT", "WHEELFIT_SPEED_LIMIT",
    "WHEELFIT_SPEED_TIME", "WHEELFIT_MAX_TIME", "UV_TORCH_BACKEND", "NV_VARIANT_PROVIDER_FORCE_SM_ARCH",
    "NV_VARIANT_PROVIDER_FORCE_CUDA_DRIVER_VERSION", "AMD_VARIANT_PROVIDER_FORCE_GFX_ARCH",
    "AMD_VARIANT_PROVIDER_FORCE_ROCM_VERSION", "INTEL_VARIANT_PROVIDER_FORCE_DEVICE_IP", "UV_CUDA_DRIVER_VERSION",
    "UV_AMD_GPU_ARCHITECTURE", "CUDA_VISIBLE_DEVICES", "CUDA_DEVICE_ORDER", "HIP_VISIBLE_DEVICES",
    "ROCR_VISIBLE_DEVICES", "WHEELFIT_TARGET", "WHEELFIT_SYSROOT", "WHEELFIT_PROBE_TIMEOUT", "WHEELFIT_CERT",
    "WHEELFIT_PYTORCH_INDEX", "WHEELFIT_VARIANT_INDEX", "WHEELFIT_INDEX_URL", "WHEELFIT_CACHE_DIR", "UV_FIND_LINKS",
    "PIP_FIND_LINKS", "UV_INDEX_URL", "UV_DEFAULT_INDEX", "PIP_INDEX_URL", "PIP_EXTRA_INDEX_URL", "PIP_CONFIG_FILE",
)  # fmt: skip
variables = st.dictionaries(
    st.sampled_from(_NAMES), (st.sampled_from(TRICKY) | st.text(max_size=40)).filter(_settable), max_size=4
)
#: With a target given, and with this machine detected from a recorded tree (where the detectors read variables).
_PLANS = (
    ["plan", "torch", "--offline", "--target", GTX_1080],
    ["env", "torch", "--offline", "--sysroot", str(MACHINES / "nvidia-4090-plus-1080" / "root")],
    ["plan", "torch", "--offline", "--sysroot", str(MACHINES / "amd-8x-mi300x" / "root")],
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
@given(env=variables, args=st.sampled_from(_PLANS))
@example(env={"UV_HTTP_TIMEOUT": "inf"}, args=_PLANS[0])
@example(env={"AMD_VARIANT_PROVIDER_FORCE_ROCM_VERSION": "bad"}, args=_PLANS[2])
@example(env={"CUDA_VISIBLE_DEVICES": "GPU-" + "f" * 5000}, args=_PLANS[1])
def test_variables(
    env: dict[str, str],
    args: list[str],
    run_cli: object,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
) -> None:
    monkeypatch.chdir(tmp_path)  # a relative cache or sysroot variable lands here
    _holds(*_call(run_cli, args, env, monkeypatch, capsys))


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


_REQUIREMENT_LINES = st.sampled_from((
    "torch", "torch==2.9.0", "torch>=2.8,<3", "torchvision", "-r other.txt", "--index-url http://127.0.0.1:9/x",
    "torch @ file:///nonexistent.whl", "-e .", "torch; python_version < '3'", "--hash=sha256:00", "torch[", "-c c.txt",
))  # fmt: skip


@_SETTINGS
@given(
    text=st.lists(_REQUIREMENT_LINES | st.text(max_size=60), max_size=6).map("\n".join)
    | st.binary(max_size=300).map(lambda b: b.decode("latin-1"))
)
@example(text="-r req.txt")  # a file that names itself
@example(text="torch\\\n")  # a continuation at the end
def test_requirements_files(
    text: str,
    run_cli: object,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    req = tmp_path_factory.mktemp("req") / "req.txt"
    req.write_bytes(text.encode("utf-8", errors="surrogateescape"))
    args = ["plan", "-r", str(req), "--offline", "--target", GTX_1080]
    _holds(*_call(run_cli, args, {}, monkeypatch, capsys))


_VARIANTS_DOCS = [json.loads(p.read_text(encoding="utf-8")) for p in sorted(REALDATA.glob("torch-*-variants.json"))]


@_SETTINGS
@given(text=mutated_json(_VARIANTS_DOCS) | st.text(max_size=300), command=st.sampled_from(("show", "rank")))
def test_variants_files(
    text: str,
    command: str,
    run_cli: object,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    path = tmp_path_factory.mktemp("variants") / "torch-2.9.0-variants.json"
    path.write_text(text, encoding="utf-8", errors="surrogateescape")
    args = ["variants", command, str(path)] + (["--target", GTX_1080] if command == "rank" else [])
    _holds(*_call(run_cli, args, {}, monkeypatch, capsys))


_MACHINE_DIRS = sorted(p for p in MACHINES.iterdir() if (p / "root").is_dir())


@settings(_SETTINGS, max_examples=40)
@given(
    machine=st.sampled_from(_MACHINE_DIRS),
    pick=st.integers(0, 10_000),
    text=texts() | binary_text(),
    command=st.sampled_from(("detect", "plan")),
)
def test_sysroot_trees(
    machine: Path,
    pick: int,
    text: str,
    command: str,
    run_cli: object,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    """A real machine's tree with one of its files (sysfs, procfs, a tool's recorded output) replaced."""
    root = tmp_path_factory.mktemp("sysroot") / "root"
    shutil.copytree(machine / "root", root, symlinks=True)
    files = sorted(p for p in root.rglob("*") if p.is_file() and not p.is_symlink())
    if files:
        victim = files[pick % len(files)]
        mode = victim.stat().st_mode
        victim.write_text(text, encoding="utf-8", errors="surrogateescape")
        victim.chmod(mode)
    args = ["detect", "--json"] if command == "detect" else ["plan", "torch", "--offline"]
    _holds(*_call(run_cli, [*args, "--sysroot", str(root), "--probe-timeout", "2"], {}, monkeypatch, capsys))


class _Answer:
    """What the fuzzed index answers to every request: a status, headers and a body."""

    status = 200
    headers: tuple[tuple[str, str], ...] = ()
    body = b""


class _FuzzedIndex(BaseHTTPRequestHandler):
    answer = _Answer()

    def log_message(self, format: str, *args: object) -> None:
        return

    def do_GET(self) -> None:
        a = self.answer
        self.send_response(a.status)
        for name, value in a.headers:
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(a.body)))
        self.end_headers()
        self.wfile.write(a.body)


@pytest.fixture(scope="module")
def fuzzed_index() -> Iterator[tuple[str, _Answer]]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _FuzzedIndex)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", _FuzzedIndex.answer
    finally:
        server.shutdown()
        server.server_close()


_T29 = "torch-2.9.0%2Bcu126-cp312-cp312-manylinux_2_28_x86_64.whl"
_PAGES = [
    f'<html><body><a href="/whl/cu126/{_T29}#sha256={"0" * 64}" data-core-metadata="sha256={"1" * 64}">x</a>'
    "</body></html>",
    json.dumps({"meta": {"api-version": "1.1"}, "name": "torch", "files": [
        {"filename": _T29.replace("%2B", "+"), "url": f"/whl/cu126/{_T29}", "hashes": {"sha256": "0" * 64}}]}),
]  # fmt: skip
_TYPES = (
    "text/html", "application/vnd.pypi.simple.v1+json", "application/json", "text/plain", "", "text/html; charset=x",
)  # fmt: skip
#: Where a redirect may point without leaving this machine: a path, loopback, or a host name no resolver is asked
#: about (too long for DNS, empty labels, not a name). Sent as UTF-8 bytes, as a server would.
_LOCATIONS = st.sampled_from((
    "/whl/cu126/torch/", "torch/", "//127.0.0.1:9/x", "http://127.0.0.1:9/", "http://" + "a" * 70 + ".invalid/",
    "http://" + ".".join(["a" * 63] * 5) + "/", "http://a..b/", "http:///x", "ftp://127.0.0.1/", "http://[::1/",
    "http://127.0.0.1:99999/", "\u2603", "http://\u2603\u2603" + "x" * 300 + "/", "",
)).map(lambda s: s.encode().decode("latin-1"))  # fmt: skip
_LOCATIONS |= st.text(st.characters(codec="latin-1", exclude_characters="\r\n"), max_size=40).map(lambda s: "/" + s)


@settings(_SETTINGS, max_examples=40)
@given(
    status=st.sampled_from((200, 200, 200, 301, 302, 307, 404, 500, 503)),
    content_type=st.sampled_from(_TYPES),
    body=st.sampled_from(_PAGES).flatmap(lambda page: st.just(page.encode()) | texts([page]).map(str.encode))
    | st.binary(max_size=500),
    location=_LOCATIONS,
)
@example(status=302, content_type="text/html", body=b"", location="http://" + "a" * 300 + "/")
def test_index_pages_and_redirects(
    status: int,
    content_type: str,
    body: bytes,
    location: str,
    fuzzed_index: tuple[str, _Answer],
    run_cli: object,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    """Every page of a loopback PyTorch index answers with the drawn status, type, body and redirect."""
    base, answer = fuzzed_index
    answer.status, answer.body = status, body
    answer.headers = (("Content-Type", content_type), ("Location", location))
    cache = tmp_path_factory.mktemp("cache")
    env = {"WHEELFIT_CACHE_DIR": str(cache), "WHEELFIT_PLAN_INDEX_DEADLINE": "1", "WHEELFIT_OFFLINE": ""}
    args = ["plan", "torch", "--target", GTX_1080, "--pytorch-index", f"{base}/whl", "--timeout", "1"]
    _holds(*_call(run_cli, args, env, monkeypatch, capsys))


_MEASURED = [{"schema_version": "1.0", "builds": [{
    "version": "2.9.0+cu126", "label": "cu126", "platform": "linux_x86_64", "arch_list": ["sm_61", "sm_70"],
    "runtime": "12.6", "date": "2026-12-07"}]}]  # fmt: skip


@_SETTINGS
@given(text=mutated_json(_MEASURED) | st.text(max_size=300) | binary_text())
def test_measured_files(
    text: str,
    run_cli: object,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    """What verify and doctor measured (``measured.json`` in the data directory) is read by every plan: a file
    that fails its checks is one line naming it, never a traceback."""
    data = tmp_path_factory.mktemp("data")
    (data / "measured.json").write_text(text, encoding="utf-8", errors="surrogateescape")
    env = {"WHEELFIT_DATA_DIR": str(data)}
    _holds(*_call(run_cli, ["plan", "torch==2.9.0", "--offline", "--target", GTX_1080], env, monkeypatch, capsys))
    _holds(*_call(run_cli, ["kb", "show", "2.9.0+cu126"], env, monkeypatch, capsys))
