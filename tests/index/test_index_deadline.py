"""Index reads held to a deadline each: a page, a PEP 658 metadata file, a variant index's metadata file. A plan
whose index never answers falls back to the knowledge base once the deadline passes (one request, not four
attempts of 30 s), and says so."""

from __future__ import annotations

import os
from pathlib import Path

import httpx
import pytest

from tests.support.hung import hung_server
from wheelfit.fetch.deadline import Deadline
from wheelfit.fetch.errors import NetworkError
from wheelfit.fetch.http import RetryPolicy, make_client
from wheelfit.fetch.pace import DEADLINE_EXTENSION
from wheelfit.fetch.watch import Watch
from wheelfit.index.client import IndexClient
from wheelfit.index.variant_index import read_variant_index

RTX_3090 = "cuda=8.6,driver=580.95.05"
INDEX = "https://index.example/whl/cu128"
WHEEL = "torch-2.8.0-py3-none-any.whl"
PAGE = (
    f'<a href="{WHEEL}" data-core-metadata="true">{WHEEL}</a>\n'
    '<a href="torch-2.9.0-variants.json">torch-2.9.0-variants.json</a>\n'
).encode()


class Deadlines:
    """A deadline factory that counts the reads it was asked for, on a fake clock."""

    def __init__(self, *seconds: float) -> None:
        self.seconds = list(seconds)
        self.made: list[Deadline] = []

    def __call__(self) -> Deadline:
        made = Deadline(self.seconds.pop(0), lambda: 0.0, source="a test")
        self.made.append(made)
        return made


def _index(deadline: Deadlines, seen: list[tuple[str, object]]) -> httpx.Client:
    def serve(request: httpx.Request) -> httpx.Response:
        seen.append((request.url.path, request.extensions.get(DEADLINE_EXTENSION)))
        if request.url.path.endswith(".metadata"):
            return httpx.Response(200, content=b"Metadata-Version: 2.1\nName: torch\nVersion: 2.8.0\n")
        return httpx.Response(200, content=PAGE, headers={"Content-Type": "text/html"})

    return httpx.Client(transport=httpx.MockTransport(serve))


def test_each_page_and_metadata_read_gets_its_own_deadline() -> None:
    deadlines = Deadlines(20, 20)
    seen: list[tuple[str, object]] = []
    with _index(deadlines, seen) as http:
        index = IndexClient(http, deadline=deadlines)
        link = next(f for f in index.project_page(INDEX, "torch").links if f.filename == WHEEL)
        assert index.core_metadata(link).startswith(b"Metadata-Version")
    assert [path for path, _ in seen] == ["/whl/cu128/torch/", f"/whl/cu128/torch/{WHEEL}.metadata"]
    assert [d for _, d in seen] == deadlines.made and deadlines.made[0] is not deadlines.made[1]


def test_a_variant_index_metadata_file_is_read_within_the_index_deadline() -> None:
    deadlines = Deadlines(20, 0)  # the page in time; no time left for the variants file
    seen: list[tuple[str, object]] = []
    with _index(deadlines, seen) as http:
        index = IndexClient(http, deadline=deadlines)
        with pytest.raises(NetworkError) as info:
            read_variant_index(index, http, INDEX, "torch")
    assert str(info.value) == f"{INDEX}/torch/torch-2.9.0-variants.json: no answer within 0 s (a test)"
    assert [path for path, _ in seen] == ["/whl/cu128/torch/"]  # the variants file was never asked for


def test_a_hung_index_page_fails_within_the_deadline_with_the_offline_hint() -> None:
    with hung_server() as hung, make_client(watch=Watch()) as http:  # 30 s per read, 4 attempts
        with pytest.raises(NetworkError) as info:
            IndexClient(http, retry=RetryPolicy(), deadline=1).project_page(f"{hung.url}/whl/cu128", "torch")
        assert hung.requests == ["GET /whl/cu128/torch/ HTTP/1.1"]
    assert type(info.value) is NetworkError
    assert str(info.value) == (
        f"{hung.url}/whl/cu128/torch/: no answer within 1 s (the index deadline; WHEELFIT_INDEX_DEADLINE sets it); "
        "or use --offline to read the cache"
    )


#: typer (0.25) still calls click helpers that click 8.3+ deprecates; not this test's subject.
@pytest.mark.filterwarnings(r"ignore:'click\.[\w.]+' is deprecated:DeprecationWarning")
def test_plan_falls_back_to_the_knowledge_base_once_the_index_deadline_passes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from typer.testing import CliRunner

    from wheelfit.cli.app import app

    for name in list(os.environ):
        if name.startswith(("WHEELFIT_", "PIP_", "UV_", "CUDA_", "HSA_")):
            monkeypatch.delenv(name)
    monkeypatch.setenv("PIP_CONFIG_FILE", os.devnull)
    monkeypatch.setenv("UV_NO_CONFIG", "1")
    monkeypatch.setenv("WHEELFIT_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("WHEELFIT_INDEX_DEADLINE", "1")
    monkeypatch.setenv("COLUMNS", "200")
    with hung_server() as hung:
        result = CliRunner().invoke(app, ["plan", "torch", "--target", RTX_3090, "--pytorch-index", hung.url])
        requests = list(hung.requests)
    assert len(requests) == 1 and requests[0].endswith("/torch/ HTTP/1.1"), requests  # one request, not four
    assert result.exit_code == 0, (result.output, result.exception)
    text = " ".join(result.output.split())
    assert "planned from the knowledge base alone" in text
    assert "no answer within 1 s (the index deadline; WHEELFIT_INDEX_DEADLINE sets it)" in text
