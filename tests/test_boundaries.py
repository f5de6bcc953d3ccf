"""Values from outside, through the real command line in process (typer's runner): each bad value is one line and
exit 2 naming what is wrong, never an internal error (exit 70) and never a value repeated whole."""

from __future__ import annotations

import json
import warnings
from collections.abc import Callable
from pathlib import Path

import pytest

GTX_1080 = "cuda=6.1,driver=580.95.05"
Cli = Callable[..., tuple[int, str]]


@pytest.fixture
def cli(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> Callable[..., tuple[int, str]]:
    """``wheelfit ARGS`` in this process, as the console script runs it (``wheelfit.cli.app.run``): the exit
    status, and stdout plus stderr. ``env`` variables are set for the call."""

    def call(args: list[str], env: dict[str, str] | None = None) -> tuple[int, str]:
        with warnings.catch_warnings():  # typer 0.25 trips a click deprecation warning when imported under pytest
            warnings.simplefilter("ignore", DeprecationWarning)
            from wheelfit.cli.app import run
        monkeypatch.setenv("WHEELFIT_OFFLINE", "1")
        monkeypatch.setenv("WHEELFIT_CACHE_DIR", str(tmp_path / "cache"))
        for name, value in (env or {}).items():
            monkeypatch.setenv(name, value)
        code = run(args)
        out = capsys.readouterr()
        return code, out.out + out.err

    return call


@pytest.mark.parametrize("value", ["inf", "nan", "-1", "1e400"])
def test_a_timeout_variable_that_is_not_seconds_is_a_usage_error(cli: Cli, value: str) -> None:
    code, out = cli(["plan", "torch", "--offline", "--target", GTX_1080], {"UV_HTTP_TIMEOUT": value})
    assert code == 2, out
    assert "--timeout" in out and "Traceback" not in out


def test_a_target_spec_too_long_for_a_file_name_is_one_clipped_line(cli: Cli) -> None:
    code, out = cli(["plan", "torch", "--offline", "--target", "x" * 5000])
    assert code == 2, out
    assert "File name too long" in out and "more]" in out and len(out) < 1500


def test_a_saved_report_with_a_field_of_the_wrong_type_is_a_usage_error(cli: Cli, tmp_path: Path) -> None:
    code, out = cli(["detect", "--json", "--sysroot", str(Path(__file__).parent / "machines/nvidia-gtx1080/root")])
    assert code == 0, out
    report = json.loads(out)
    report["platform"] = 7
    saved = tmp_path / "report.json"
    saved.write_text(json.dumps(report))
    code, out = cli(["plan", "torch", "--offline", "--target", str(saved)])
    assert code == 2, out
    message = "hardware report is malformed: platform section is not an object"
    assert out.strip() == f"wheelfit: error: --target {saved}: {message}"


def test_a_malformed_kb_file_is_a_usage_error(cli: Cli, tmp_path: Path) -> None:
    bad = tmp_path / "kb.json"
    bad.write_text('{"x":')
    code, out = cli(["plan", "torch", "--offline", "--target", GTX_1080, "--kb", str(bad)])
    assert code == 2, out
    assert out.startswith(f"wheelfit: error: {bad}: not valid JSON")


def test_a_provider_override_variable_with_a_bad_value_is_a_usage_error(cli: Cli) -> None:
    """A provider's ``*_FORCE_*`` variable that it cannot read was reported as wheelfit's own bug (exit 70)."""
    variants = str(Path(__file__).parent / "data/realdata/torch-2.10.0-variants.json")
    code, out = cli(["variants", "rank", variants], {"AMD_VARIANT_PROVIDER_FORCE_ROCM_VERSION": "bad"})
    assert code == 2, out
    assert out.strip().startswith("wheelfit: error: AMD_VARIANT_PROVIDER_FORCE_ROCM_VERSION='bad' must be")


def test_a_redirect_to_a_host_name_longer_than_dns_allows_is_one_line_naming_the_url(cli: Cli) -> None:
    """It ended in ``UnicodeError`` from the HTTP layer (exit 70); a plan now says it could not read the index and
    plans from the knowledge base, naming the URL and why."""
    from tests.support.raw_http import Conn, RawRequest, raw_server, reply

    def redirect(request: RawRequest, conn: Conn) -> None:
        del request
        conn.send(reply("302 Found", Location="http://" + "a" * 70 + "." + "b" * 300 + ".example/x/"))

    with raw_server(redirect) as server:
        code, out = cli(["plan", "torch", "--target", GTX_1080, "--pytorch-index", f"{server.url}/whl"],
                        {"WHEELFIT_OFFLINE": ""})  # fmt: skip
    assert code == 0, out
    assert "not a valid URL" in out and "internal error" not in out
