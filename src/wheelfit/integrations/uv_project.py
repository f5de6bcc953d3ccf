"""``wheelfit configure uv``: write the plan into a uv project's ``pyproject.toml`` so that ``uv lock`` and
``uv sync`` take each torch-family package from the planned variant's index, and nothing else.

The patterns are uv's PyTorch guide's (https://docs.astral.sh/uv/guides/integration/pytorch/), checked against
uv 0.13.9: ``[[tool.uv.index]]`` entries with ``explicit = true``, ``[tool.uv.sources]`` naming them, and for
several machines one extra per build with ``[tool.uv] conflicts``. Two things the guide leaves out, measured:

- uv applies sources to direct dependencies only: torch's own ``triton`` requirement is resolved on the default
  index ("there is no version of triton==3.5.1") unless ``triton`` is a dependency of the project too
  (astral-sh/uv#11388), so the build's Triton is added;
- with several extras a torch-family package left in ``project.dependencies`` has no source outside the extras,
  and a plain ``uv sync`` installs the default index's torch; so in that layout the torch family lives only in
  the extras (a plain ``uv sync`` then installs no torch, never another build).

The file is edited with tomlkit: comments, order and layout of everything else are kept, and a second run with
the same plans writes the same bytes. What was planned is recorded under ``[tool.wheelfit]`` for ``wheelfit
sync`` and ``--check``.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name

from ..errors import UsageError, WheelfitError
from ..family import is_torch_family
from ..kinds import Mode

if TYPE_CHECKING:
    import tomlkit.items
    from tomlkit.toml_document import TOMLDocument

    from ..app.session import Network
    from ..options import MachineOptions, PlanOptions
    from .targets import TargetPlan

__all__ = ["Build", "Configured", "configure_uv", "read_builds", "render_pyproject", "torch_family_requirements"]

#: The Triton each kind of build requires (torch's own Requires-Dist on Linux: ``triton`` on the cuNNN indexes,
#: ``pytorch-triton-rocm`` / ``pytorch-triton-xpu`` on the ROCm and XPU ones; wheel METADATA on
#: download.pytorch.org). The CPU builds and the Windows and macOS wheels require none.
_TRITON = (("cu", "triton"), ("rocm", "pytorch-triton-rocm"), ("xpu", "pytorch-triton-xpu"))
_LINUX = "sys_platform == 'linux'"


@dataclass(frozen=True)
class Build:
    """One planned build as ``[tool.wheelfit]`` records it."""

    name: str
    #: The ``--target`` as given; ``""``: the machine ``configure uv`` ran on.
    target: str
    variant: str
    torch: str
    index: str
    platform: str
    python: str
    #: The project's extra for this build; ``""`` with one build (plain sources, no extra).
    extra: str


@dataclass(frozen=True)
class Configured:
    """What ``configure uv`` found and would write: the file, its text before and after, and the builds."""

    path: Path
    before: str
    after: str
    builds: tuple[Build, ...]
    #: What each target's plan says the user should know (a GPU target that got the CPU build), by target name.
    warnings: tuple[str, ...] = ()

    @property
    def changed(self) -> bool:
        return self.before != self.after

    def diff(self) -> str:
        """The change as a unified diff (empty when there is none)."""
        name = self.path.name
        lines = difflib.unified_diff(
            self.before.splitlines(keepends=True), self.after.splitlines(keepends=True), f"a/{name}", f"b/{name}"
        )
        return "".join(line if line.endswith("\n") else line + "\n" for line in lines)


def configure_uv(
    project: Path,
    targets: Sequence[str],
    where: MachineOptions,
    options: PlanOptions,
    *,
    environ: Mapping[str, str],
    network: Network | None,
    write: bool = True,
    replace_sources: bool = False,
) -> Configured:
    """Plan the torch-family packages ``project``'s ``pyproject.toml`` uses for each of ``targets`` (this machine
    when none) and write the uv configuration for them (unless ``write`` is false: ``--dry-run``, ``--check``)."""
    from dataclasses import replace

    from .targets import plan_targets, plan_warnings

    path = pyproject_path(project)
    before = read_project_file(path)
    doc = _parse(before, path)
    wanted = torch_family_requirements(doc) or ["torch"]
    if options.pytorch_index is None and _recorded(doc).get("pytorch-index"):
        options = replace(options, pytorch_index=str(_recorded(doc)["pytorch-index"]))
    plans = plan_targets(wanted, targets, where, options, environ=environ, network=network)
    tritons = _tritons(plans, network) if network is not None else {}
    after, builds = render_pyproject(
        before, wanted, plans, pytorch_index=options.pytorch_index, replace_sources=replace_sources,
        tritons=tritons,
    )  # fmt: skip
    after = _same_line_endings(before, after)
    if write and after != before:
        from ..userfiles import Write, write_files

        write_files([Write(path, after.encode("utf-8"))])
    return Configured(path, before, after, builds, plan_warnings(plans))


def read_project_file(path: Path) -> str:
    """The file's text with its line endings as they are (CRLF stays CRLF); one line when it cannot be read."""
    try:
        return path.read_bytes().decode("utf-8")
    except UnicodeDecodeError as exc:
        raise UsageError(f"{path} is not UTF-8 (byte {exc.start}); TOML is UTF-8: fix the file and run again") from None
    except OSError as exc:
        raise UsageError(f"cannot read {path} ({exc.strerror or exc}); check the path and its permissions") from None


def _same_line_endings(before: str, after: str) -> str:
    """A file written with CRLF throughout gets CRLF on the lines added too (tomlkit keeps the old lines' endings
    and writes new ones with LF)."""
    crlf = before.count("\r\n")
    if crlf == 0 or crlf != before.count("\n"):
        return after
    return re.sub(r"(?<!\r)\n", "\r\n", after)


def pyproject_path(project: Path) -> Path:
    path = project / "pyproject.toml"
    if not path.is_file():
        raise UsageError(f"{path} not found; run in a uv project (uv init) or give --project DIR")
    return path


def _parse(text: str, path: Path) -> TOMLDocument:
    import tomlkit
    from tomlkit.exceptions import ParseError

    try:
        doc = tomlkit.parse(text)
    except ParseError as exc:
        raise UsageError(f"{path} is not valid TOML ({exc}); fix it and run again") from None
    _check_shape(doc.unwrap(), path)
    return doc


#: The keys wheelfit reads or writes, and the shape each must have: ``table`` (of anything), ``strings`` (an
#: array of strings), ``tables`` (an array of tables), ``table of strings`` (a table whose values are arrays of
#: strings; dependency groups may also hold ``{include-group = ...}`` tables).
_SHAPES: tuple[tuple[tuple[str, ...], str], ...] = (
    (("project",), "table"),
    (("project", "dependencies"), "strings"),
    (("project", "optional-dependencies"), "table of strings"),
    (("dependency-groups",), "table of strings"),
    (("tool",), "table"),
    (("tool", "uv"), "table"),
    (("tool", "uv", "sources"), "table"),
    (("tool", "uv", "index"), "tables"),
    (("tool", "uv", "constraint-dependencies"), "strings"),
    (("tool", "uv", "conflicts"), "array"),
    (("tool", "wheelfit"), "table"),
    (("tool", "wheelfit", "builds"), "tables"),
)


_SHAPE_WORDS = {
    "table": "a table",
    "array": "an array",
    "strings": "an array of strings",
    "tables": "an array of tables",
    "table of strings": "a table of arrays of strings",
}


def _check_shape(doc: Mapping[str, Any], path: Path) -> None:
    """Each key wheelfit reads has the shape it reads it as, or one line naming the file, the key and the shape:
    a valid TOML file with ``dependencies = "torch"`` or ``[tool] uv = "x"`` is refused before it is used."""
    for keys, shape in _SHAPES:
        value: Any = doc
        for key in keys:
            if not isinstance(value, Mapping) or key not in value:
                value = None
                break
            value = value[key]
        if value is None:
            continue
        ok = {
            "table": isinstance(value, Mapping),
            "array": isinstance(value, list),
            "strings": isinstance(value, list) and all(isinstance(v, str) for v in value),
            "tables": isinstance(value, list) and all(isinstance(v, Mapping) for v in value),
            "table of strings": isinstance(value, Mapping)
            and all(isinstance(v, list) and all(isinstance(x, (str, Mapping)) for x in v) for v in value.values()),
        }[shape]
        if not ok:
            what = _SHAPE_WORDS[shape]
            raise UsageError(f"{path}: {'.'.join(keys)} must be {what}, not {_toml_type(value)}; fix it and run again")


def _toml_type(value: object) -> str:
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array of other values"
    if isinstance(value, Mapping):
        return "a table"
    return type(value).__name__


def _recorded(doc: Mapping[str, Any]) -> Mapping[str, Any]:
    found = doc.get("tool", {}).get("wheelfit", {})
    return found if isinstance(found, Mapping) else {}


def torch_family_requirements(doc: Mapping[str, Any]) -> list[str]:
    """The torch-family requirements the project asks for: ``project.dependencies``, its extras (not the ones
    wheelfit wrote), ``dependency-groups``, and those an earlier run moved into the build extras."""
    recorded = _recorded(doc)
    ours = {str(b.get("extra", "")) for b in recorded.get("builds", []) if isinstance(b, Mapping)}
    project = doc.get("project", {})
    texts: list[str] = [str(r) for r in recorded.get("requirements", [])]
    texts += [str(r) for r in project.get("dependencies", [])]
    for extra, reqs in project.get("optional-dependencies", {}).items():
        if extra not in ours:
            texts += [str(r) for r in reqs]
    for reqs in doc.get("dependency-groups", {}).values():
        texts += [str(r) for r in reqs if isinstance(r, str)]
    added = {str(r) for r in recorded.get("added", [])}
    kept = len(recorded.get("requirements", []))
    found: dict[str, str] = {}
    for i, text in enumerate(texts):
        if i >= kept and text in added:
            continue
        name = _name(text)
        if name is not None and is_torch_family(name):
            found.setdefault(name, text)
    return list(found.values())


def _name(text: str) -> str | None:
    try:
        return str(canonicalize_name(Requirement(text).name))
    except InvalidRequirement:
        return None


def _public(requirement: str) -> str:
    """``torch==2.14.1+cu126`` -> ``torch==2.14.1``: the index the source names already chooses the build, and a
    public pin also matches PyTorch's unlabelled macOS wheels."""
    return re.sub(r"\+[A-Za-z0-9.]+", "", requirement)


def _extra_name(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _refuse_replacing(
    table: Mapping[str, Any],
    sources: Mapping[str, Sequence[tuple[str, str]]],
    entries: Sequence[Mapping[str, Any]] | None,
    indexes: Mapping[str, str],
    old_managed: set[str],
    old_indexes: set[str],
) -> None:
    """The user's own ``[tool.uv.sources]`` entry for a package wheelfit routes (``torch = { index = "corp-mirror"
    }  # our vetted mirror``), or their own index under a name wheelfit writes with another URL, is theirs: one
    line naming it and the option that replaces it, never a silent rewrite."""
    for name in sources:
        if name in table and name not in old_managed:
            raise UsageError(
                f"tool.uv.sources.{name} is the project's own ({_inline_text(table[name])}), and the plan routes "
                f"{name} to {sources[name][0][0]}: remove it, or pass --replace-sources to let wheelfit replace it"
            )
    for entry in entries or ():
        name = str(entry.get("name", ""))
        if name in indexes and name not in old_indexes and str(entry.get("url", "")) != indexes[name]:
            raise UsageError(
                f"tool.uv.index {name} is the project's own ({entry.get('url')}), not the plan's {indexes[name]}: "
                "rename it, or pass --replace-sources to let wheelfit replace it"
            )


def _inline_text(value: Any) -> str:
    text = str(value.as_string() if hasattr(value, "as_string") else value)
    return text if len(text) <= 120 else text[:117] + "..."


def _triton(variant: str, platform: str) -> str | None:
    if not platform.startswith("linux"):
        return None
    return next((name for prefix, name in _TRITON if variant.startswith(prefix)), None)


def _tritons(plans: Sequence[TargetPlan], network: Network) -> dict[str, str]:
    """The Triton each plan's torch requires, by target name, as the install set's walk reads it from the planned
    files' metadata (a nightly torch requires ``pytorch-triton``, not ``triton``); ``""``: none. A plan whose files
    cannot be read (offline and not cached) keeps the variant's usual name (:data:`_TRITON`)."""
    from ..app.install import planned_files
    from ..install.install_set import Platform
    from ..install.sources import IndexPages
    from ..resolve import Machine

    found: dict[str, str] = {}
    for tp in plans:
        if tp.plan.mode is Mode.VARIANT:
            continue
        machine = Machine.from_report(tp.target.report)
        platform = Platform(tuple(machine.tags), machine.markers, machine.python)
        try:
            files = planned_files(tp.plan, IndexPages(tp.plan.index_url, network.index), platform, network,
                                  for_lock=True)  # fmt: skip
        except WheelfitError:
            continue
        torch = {f.name: f for f in files}.get("torch")
        needed = [f.name for f in files if torch is not None and f.needed_by == f"torch {torch.version}"]
        found[tp.name] = next((name for name in needed if "triton" in name), "")
    return found


def render_pyproject(
    text: str,
    requirements: Sequence[str],
    plans: Sequence[TargetPlan],
    *,
    pytorch_index: str | None = None,
    replace_sources: bool = False,
    tritons: Mapping[str, str] | None = None,
) -> tuple[str, tuple[Build, ...]]:
    """``text`` (a ``pyproject.toml``) with the uv configuration for ``plans`` of ``requirements``; pure. A source
    or index of the user's own that the plan needs otherwise is refused unless ``replace_sources``."""
    import tomlkit

    doc = tomlkit.parse(text)
    old = _recorded(doc)
    old_builds = [b for b in old.get("builds", []) if isinstance(b, Mapping)]
    old_extras = {str(b.get("extra", "")) for b in old_builds} - {""}
    old_indexes = {str(b.get("index", "")) for b in old_builds} - {""}
    old_managed = {str(canonicalize_name(str(n))) for n in old.get("packages", [])}
    old_added = [str(r) for r in old.get("added", [])]
    several = len({tp.name for tp in plans}) > 1

    builds: list[Build] = []
    pins: dict[str, list[str]] = {}  # extra ("" with one build) -> requirements
    indexes: dict[str, str] = {}  # index name -> url
    sources: dict[str, list[tuple[str, str]]] = {}  # package -> [(index, extra)]
    transitive: dict[str, str] = {}  # a Triton the project does not name -> its requirement
    for tp in plans:
        p = tp.plan
        index = f"pytorch-{p.variant}"
        indexes.setdefault(index, p.index_url)
        extra = _extra_name(tp.name) if several else ""
        if extra in pins:
            continue
        build = Build(tp.name, tp.spec or "", p.variant, p.torch_version, index, p.platform, p.python, extra)
        builds.append(build)
        reqs = [_public(pkg.requirement) for pkg in p.packages]
        names = [str(canonicalize_name(pkg.name)) for pkg in p.packages]
        known = (tritons or {}).get(tp.name)  # read from torch's metadata: "" none; absent: the usual name
        triton = (known or None) if known is not None else _triton(p.variant, p.platform)
        if triton is not None and triton not in names:
            reqs.append(f"{triton}; {_LINUX}")
            names.append(triton)
            transitive[triton] = f"{triton}; {_LINUX}"
        pins[extra] = reqs
        for name in names:
            sources.setdefault(name, []).append((index, extra))

    project = _table(doc, "project")
    tool = _table(doc, "tool", super_table=True)
    uv = _table(tool, "uv")
    managed = set(sources)

    deps = project.get("dependencies")
    if deps is None:
        deps = tomlkit.array()
        project["dependencies"] = deps

    # What an earlier run added, and (with several builds) every torch-family requirement: the extras carry them.
    def dropped(r: object) -> bool:
        return str(r) in old_added or (several and _is_family(r))

    if several:
        for group in doc.get("dependency-groups", {}).values():
            _update(group, _is_family, [])
    added: list[str] = []
    if not several:
        present = {_name(str(r)) for r in deps if not dropped(r)} | _names_elsewhere(doc, old_extras)
        for req in [*requirements, *transitive.values()]:
            if _name(req) not in present:
                added.append(req)
                present.add(_name(req))
    _update(deps, dropped, added)

    extras = project.get("optional-dependencies")
    for name in old_extras - set(pins):
        if extras is not None and name in extras:
            del extras[name]
    if several:
        if extras is None:
            extras = tomlkit.table()
            project["optional-dependencies"] = extras
        for extra, reqs in pins.items():
            _set(extras, extra, _array(reqs))
        if not extras:
            del project["optional-dependencies"]
    elif extras is not None and not extras and "optional-dependencies" in project:
        del project["optional-dependencies"]

    # [tool.uv] constraint-dependencies (one build) or conflicts (several).
    constraints = uv.get("constraint-dependencies")
    pinned = [r for r in pins.get("", []) if Requirement(r).specifier] if not several else []
    if constraints is None and pinned:
        constraints = _array([])
        constraints.multiline(True)
        uv["constraint-dependencies"] = constraints
    if constraints is not None:
        _update(constraints, lambda r: (_name(str(r)) or "") in old_managed | managed, pinned)
        if not constraints:
            del uv["constraint-dependencies"]
    conflicts = uv.get("conflicts")
    ours = [[_inline({"extra": e}) for e in pins]] if several else []
    if conflicts is None and ours:
        conflicts = tomlkit.array()
        uv["conflicts"] = conflicts
    if conflicts is not None:
        _update(conflicts, lambda c: {str(e.get("extra", "")) for e in c} <= old_extras | set(pins), ours)
        if not conflicts:
            del uv["conflicts"]

    # [tool.uv.sources]
    table = uv.get("sources")
    fresh = table is None
    if table is None:
        table = tomlkit.table()
        uv["sources"] = table
    for name in sorted(old_managed - managed):
        if name in table:
            del table[name]
    if not replace_sources:
        _refuse_replacing(table, sources, uv.get("index"), indexes, old_managed, old_indexes)
    for name, where in sources.items():
        if several:
            _set(table, name, _array([_inline({"index": i, "extra": e}) for i, e in where]))
        else:
            _set(table, name, _inline({"index": where[0][0]}))
    if fresh:
        table.add(tomlkit.nl())

    # [[tool.uv.index]]
    entries = uv.get("index")
    if entries is None:
        entries = tomlkit.aot()
        uv["index"] = entries
    for i in reversed(range(len(entries))):
        name = str(entries[i].get("name", ""))
        if name in old_indexes and name not in indexes:
            del entries[i]
    for name, url in indexes.items():
        entry = next((e for e in entries if e.get("name") == name), None)
        if entry is None:
            entries.append({"name": name, "url": url, "explicit": True})
        else:
            _set(entry, "url", url)
            _set(entry, "explicit", True)

    # [tool.wheelfit]
    record = tomlkit.table()
    record.add(tomlkit.comment("Written by `wheelfit configure uv`: the builds `wheelfit sync` chooses from."))
    record["requirements"] = _array(list(requirements))
    record["packages"] = _array(sorted(managed))
    if added:
        record["added"] = _array(added)
    if pytorch_index:
        record["pytorch-index"] = pytorch_index
    aot = tomlkit.aot()
    for b in builds:
        aot.append(
            {
                "name": b.name, "target": b.target, "variant": b.variant, "torch": b.torch, "index": b.index,
                "platform": b.platform, "python": b.python, "extra": b.extra,
            }
        )  # fmt: skip
    record["builds"] = aot
    if tool.get("wheelfit") is not None and tool["wheelfit"].unwrap() == record.unwrap():
        record = tool["wheelfit"]
    else:
        tool["wheelfit"] = record
    return _spaced(text, tomlkit.dumps(doc)), tuple(builds)


def _spaced(before: str, after: str) -> str:
    """A blank line before each table header tomlkit put right under another line, unless the file had those two
    lines together already (the user's own layout is kept as it was)."""
    had = set(zip(before.splitlines(), before.splitlines()[1:], strict=False))
    lines = after.splitlines(keepends=True)
    out: list[str] = []
    for i, line in enumerate(lines):
        prev = lines[i - 1] if i else ""
        header = line.startswith("[") and re.match(r"\[\[?[A-Za-z0-9_.\"' -]+\]\]?\s*(#.*)?$", line.strip())
        if header and prev.strip() and (prev.rstrip("\r\n"), line.rstrip("\r\n")) not in had:
            out.append("\n")
        out.append(line)
    return "".join(out)


def read_builds(project: Path) -> tuple[Path, Mapping[str, Any], tuple[Build, ...]]:
    """The builds an earlier ``configure uv`` recorded in ``project``'s ``pyproject.toml``."""
    path = pyproject_path(project)
    doc = _parse(read_project_file(path), path)
    recorded = _recorded(doc)
    builds = tuple(
        Build(**{k: str(b.get(k, "")) for k in Build.__dataclass_fields__})
        for b in recorded.get("builds", [])
        if isinstance(b, Mapping)
    )
    if not builds:
        raise WheelfitError(
            f"{path} has no builds in [tool.wheelfit]; run `wheelfit configure uv --target ...` in the project first"
        )
    return path, recorded, builds


def _names_elsewhere(doc: Mapping[str, Any], ours: set[str]) -> set[str | None]:
    """The names the project's dependency groups and its own extras (not wheelfit's) ask for."""
    names: set[str | None] = set()
    for extra, reqs in doc.get("project", {}).get("optional-dependencies", {}).items():
        if extra not in ours:
            names |= {_name(str(r)) for r in reqs}
    for reqs in doc.get("dependency-groups", {}).values():
        names |= {_name(r) for r in reqs if isinstance(r, str)}
    return names


def _is_family(req: object) -> bool:
    name = _name(str(req))
    return name is not None and is_torch_family(name)


def _table(parent: Any, key: str, *, super_table: bool = False) -> Any:
    import tomlkit

    found = parent.get(key)
    if found is None:
        found = tomlkit.table(is_super_table=super_table)
        parent[key] = found
    return found


def _update(items: Any, drop: Any, add: Sequence[Any]) -> None:
    """Drop what ``drop`` says and append ``add``, touching ``items`` only when that changes it: the untouched
    items keep their comments, and an equal result keeps its bytes."""
    kept = [x for x in items if not drop(x)]
    if [_plain(x) for x in [*kept, *add]] == [_plain(x) for x in items]:
        return
    for i in reversed(range(len(items))):
        if drop(items[i]):
            del items[i]
    for x in add:
        items.append(x)


def _plain(value: Any) -> Any:
    return value.unwrap() if hasattr(value, "unwrap") else value


def _inline(values: Mapping[str, Any]) -> tomlkit.items.InlineTable:
    import tomlkit

    table = tomlkit.inline_table()
    table.update(values)
    return table


def _array(values: Sequence[Any]) -> tomlkit.items.Array:
    import tomlkit

    array = tomlkit.array()
    array.extend(values)
    if len(values) > 1:
        array.multiline(True)
    return array


def _set(table: Any, key: str, value: Any) -> None:
    """Assign only when the value differs: an equal value keeps its own layout (idempotent, comments kept)."""
    current = table.get(key)
    plain = value.unwrap() if hasattr(value, "unwrap") else value
    if current is not None and (current.unwrap() if hasattr(current, "unwrap") else current) == plain:
        return
    table[key] = value
