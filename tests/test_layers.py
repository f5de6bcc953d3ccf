"""The shape the design promises, checked: the planning layers import nothing that does I/O, and nothing below
the command line prints."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

from .conftest import ROOT, hermetic_env

SRC = ROOT / "src" / "wheelfit"

#: Modules that do I/O (network, files of the cache, processes, detection) or present it.
IO_MODULES = (
    "httpx",
    "httpcore",
    "rich",
    "typer",
    "click",
    "wheelfit.api",
    "wheelfit.cli",
    "wheelfit.fetch",
    "wheelfit.index.client",
    "wheelfit.index.candidates",
    "wheelfit.index.variant_index",
    "wheelfit.install",
    "wheelfit.probe",
)


def _modules(package: str) -> list[str]:
    folder = SRC / package
    return [f"wheelfit.{package}.{p.stem}" for p in sorted(folder.glob("*.py")) if p.stem != "__init__"]


def test_resolve_and_variants_import_nothing_that_does_io() -> None:
    pure = ["wheelfit.candidates.model", "wheelfit.candidates.knowledge", *_modules("resolve"), *_modules("variants")]
    script = "import importlib, json, sys\nfor m in sys.argv[1:]: importlib.import_module(m)\n"
    script += "print(json.dumps(sorted(sys.modules)))"
    out = subprocess.run(
        [sys.executable, "-c", script, *pure], capture_output=True, text=True, env=hermetic_env(), check=True
    )
    loaded = json.loads(out.stdout)
    assert "wheelfit.resolve.resolver" in loaded and "wheelfit.variants.ranking" in loaded
    leaked = [m for m in loaded if any(m == io or m.startswith(io + ".") for io in IO_MODULES)]
    assert leaked == []


def _prints(path: Path) -> list[int]:
    """Lines of ``path`` that call ``print`` or use ``sys.stdout``/``sys.stderr`` (strings, such as the scripts
    a child interpreter runs, do not count)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    lines = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "print":
            lines.append(node.lineno)
        if (
            isinstance(node, ast.Attribute)
            and node.attr in ("stdout", "stderr")
            and isinstance(node.value, ast.Name)
            and node.value.id == "sys"
        ):
            lines.append(node.lineno)
    return lines


#: Modules that touch ``sys.stdout`` to keep others from printing into it, never to print: the detector plugins'
#: writes are sent to stderr so that ``--json`` output stays JSON.
GUARDS = {"src/wheelfit/probe/divert.py"}


def test_nothing_below_the_command_line_prints() -> None:
    files = [p for p in SRC.rglob("*.py") if "cli" not in p.relative_to(SRC).parts and p.name != "__main__.py"]
    files += list((ROOT / "providers").glob("*/src/*/*.py"))
    assert len(files) > 50
    printing = {str(p.relative_to(ROOT)): _prints(p) for p in files if _prints(p)}
    assert set(printing) <= GUARDS, printing
    for guard in GUARDS:
        tree = ast.parse((ROOT / guard).read_text(encoding="utf-8"))
        calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)]
        assert all(n.func.id != "print" for n in calls if isinstance(n.func, ast.Name))


def test_an_offline_plan_imports_no_http_client(tmp_path: Path) -> None:
    """Reading the cache needs no httpx and no TLS trust store (~80 ms of start-up): they load on first use."""
    script = (
        "import contextlib, io, sys\n"
        "from wheelfit.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    status = main(['plan', 'torch', '--offline', '--json', '--target', 'cuda=8.6,driver=580.95.05'])\n"
        "print(status, 'httpx' in sys.modules, 'ssl' in sys.modules)"
    )
    env = hermetic_env(WHEELFIT_CACHE_DIR=str(tmp_path / "cache"))
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, check=True)
    assert out.stdout.split() == ["0", "False", "False"]
