"""The house rules of issue 29 that a reader checks by eye, checked by the suite: options travel as values (no
function takes more than eight parameters, but typer's command functions, which need one per option), the build
kinds and plan modes are enums (no comparison with their words), and ``wheelfit.api`` is a facade. The one-way
import graph is ``lint-imports``' (``.importlinter``, run by scripts/test)."""

from __future__ import annotations

import ast
import re

from .conftest import ROOT

SOURCES = sorted([*(ROOT / "src").rglob("*.py"), *(ROOT / "providers").rglob("src/**/*.py")])
MAX_PARAMETERS = 8


def _is_command(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """A typer command (``@app.command()``, ``@configure.command("uv")``): one parameter per option."""
    return any(
        isinstance(d, ast.Call) and isinstance(d.func, ast.Attribute) and d.func.attr == "command"
        for d in fn.decorator_list
    )


def _parameters(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    a = fn.args
    names = [*a.posonlyargs, *a.args, *a.kwonlyargs]
    count = len(names) + (a.vararg is not None) + (a.kwarg is not None)
    return count - (1 if names and names[0].arg in ("self", "cls") else 0)


def test_no_function_outside_the_typer_commands_takes_more_than_eight_parameters() -> None:
    over = [
        f"{path.relative_to(ROOT)}:{node.lineno} {node.name} ({_parameters(node)})"
        for path in SOURCES
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
        and _parameters(node) > MAX_PARAMETERS
        and not _is_command(node)
    ]
    assert over == []


def test_no_keyword_bundles_travel_as_kwargs() -> None:
    """``**plan_options: Any`` and ``choice={...}`` were how options travelled; values do now."""
    bundles = [
        f"{path.relative_to(ROOT)}:{node.lineno} {node.name}"
        for path in SOURCES
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
        and node.args.kwarg is not None
        and node.args.kwarg.arg.endswith("options")
    ]
    assert bundles == []


#: A build kind, plan mode or confidence compared with its word instead of its enum member.
_WORDS = re.compile(
    r"""\b(kind|mode|confidence)\s*[!=]=\s*["'](cuda|rocm|xpu|cpu|mps|index|variant|P|M|S|U|inferred)["']"""
)


def test_closed_sets_are_compared_as_enum_members_not_words() -> None:
    found = [
        f"{path.relative_to(ROOT)}:{i}: {line.strip()}"
        for path in SOURCES
        for i, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if _WORDS.search(line)
    ]
    assert found == []


def test_the_api_module_is_a_facade() -> None:
    api = ROOT / "src/wheelfit/api.py"
    tree = ast.parse(api.read_text(encoding="utf-8"))
    functions = [n.name for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
    assert functions == [] and len(api.read_text(encoding="utf-8").splitlines()) <= 200


def test_every_package_is_a_regular_package() -> None:
    """A folder without ``__init__.py`` is a namespace package, which the import graph does not see."""
    folders = {p.parent for p in (ROOT / "src/wheelfit").rglob("*.py")}
    assert sorted(str(f.relative_to(ROOT)) for f in folders if not (f / "__init__.py").is_file()) == []


def test_the_import_contract_names_every_package() -> None:
    """A new package has a place in the layers, or ``lint-imports`` would not hold it to one."""
    contract = (ROOT / ".importlinter").read_text(encoding="utf-8")
    named = set(re.findall(r"wheelfit\.(\w+)", contract))
    packages = {p.stem for p in (ROOT / "src/wheelfit").iterdir() if (p.suffix == ".py" and p.stem not in
                ("__init__", "__main__")) or (p.is_dir() and (p / "__init__.py").is_file())}  # fmt: skip
    assert packages - named == set()

