"""``wheelfit lock``: a lock file per target, in the form uv, ``uv pip`` and pip read unchanged.

The torch family is the plan's own files, found by the install set's walk (:mod:`.family_files`); everything
else is resolved by real uv (``uv pip compile`` for the target's Python and platform, the family given as direct
references with hashes), so the closure is the one uv would install. A torch-family name uv brings from anywhere
but the plan's files is an error, never a lock. Files are written only once every target has locked (each to a
temporary file, renamed).
"""

from __future__ import annotations

import re
import subprocess
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

import tomlkit
from packaging.utils import canonicalize_name

from ..errors import UsageError
from ..family import is_torch_family
from .family_files import FamilyFile, LockError, locked_files

if TYPE_CHECKING:
    from ..app.session import Network
    from ..index.config import IndexConfig
    from ..options import MachineOptions, PlanOptions
    from ..resolve import Machine
    from .targets import TargetPlan

__all__ = ["LockOutput", "LockedTarget", "lock", "lock_target", "output_paths"]

_PYLOCK_NAME = re.compile(r"^pylock(\.[^.]+)?\.toml$")


@dataclass(frozen=True)
class LockedTarget:
    """One target's lock: its plan, the family files, the closure uv resolved, and the file's text."""

    target: TargetPlan
    family: tuple[FamilyFile, ...]
    #: Every package of the lock as PEP 751 ``[[packages]]`` tables, sorted by name.
    packages: tuple[Mapping[str, Any], ...]
    default_index: str
    path: Path
    text: str


def output_paths(output: Path, fmt: str, names: Sequence[str]) -> list[Path]:
    """Where each target's file goes: ``output`` for one target; ``pylock.<name>.toml`` (or
    ``<stem>.<name>.txt``) beside it for several."""
    if fmt == "pylock" and len(names) <= 1 and not _PYLOCK_NAME.match(output.name):
        raise UsageError(
            f"-o {output}: a PEP 751 lock file is named pylock.toml or pylock.<name>.toml (what pip and uv look for); "
            "rename it, or use --format requirements"
        )
    if len(set(names)) <= 1:
        return [output for _ in names]
    if fmt == "pylock":
        return [output.with_name(f"pylock.{name}.toml") for name in names]
    return [output.with_name(f"{output.stem}.{name}{output.suffix or '.txt'}") for name in names]


@dataclass(frozen=True)
class LockOutput:
    """What ``wheelfit lock`` writes: the file (one per target beside it for several), its format (``pylock`` or
    ``requirements``; ``None``: by the file's name), and where the ``-r`` files' relative paths are read from."""

    path: Path
    fmt: str | None = None
    cwd: Path = Path()


def lock(
    requirements: Sequence[str],
    requirement_files: Sequence[str],
    targets: Sequence[str],
    where: MachineOptions,
    options: PlanOptions,
    out: LockOutput,
    *,
    environ: Mapping[str, str],
    network: Network,
) -> list[LockedTarget]:
    """Lock ``requirements`` (and ``-r`` files) for each of ``targets`` (this machine when none) and write the
    files, all or none."""
    from dataclasses import replace

    from ..index.config import resolve_index_config
    from ..kb.extensions import extensions
    from ..requirements import IndexOptions, read_file, read_requirements
    from .targets import plan_targets

    output = out.path
    kind = out.fmt or ("requirements" if output.suffix == ".txt" else "pylock")
    if kind not in ("pylock", "requirements"):
        raise UsageError(f"--format {out.fmt}: use pylock or requirements")
    reqs = read_requirements(
        requirements, requirement_files, reader=read_file, cwd=str(out.cwd), environ=environ,
        given=IndexOptions(index_url=options.index_url),
    )  # fmt: skip
    built = extensions()  # flash-attn, torch-scatter: planned with torch, locked as the files built for it
    family, _other = reqs.split(lambda name: is_torch_family(name) or canonicalize_name(name) in built)
    for req in family:
        if req.url is not None or req.path is not None:
            raise UsageError(
                f"{req.origin}: {req.text}: a lock plans the torch family from the PyTorch index; "
                f"give {req.name} by name and version"
            )
    options = replace(options, index_url=reqs.index_url)
    config = resolve_index_config(environ, pytorch_index=options.pytorch_index, index_url=reqs.index_url)
    plans = plan_targets([r.spec for r in family], targets, where, options, environ=environ, network=network)
    paths = output_paths(output, kind, [p.name for p in plans])
    locked: dict[Path, LockedTarget] = {}
    for tp, path in zip(plans, paths, strict=True):
        if path in locked:
            continue  # the same build for the same platform and Python: the same file
        others = [r.line() for r in reqs.for_environment(_machine(tp).markers).requirements if r not in family]
        locked[path] = lock_target(tp, others, config, network, environ, path, kind, only_needed=not family)
    from ..userfiles import Write, write_files

    write_files([Write(item.path, item.text.encode("utf-8")) for item in locked.values()])  # all or none
    return list(locked.values())


def lock_target(
    tp: TargetPlan,
    others: Sequence[str],
    config: IndexConfig,
    network: Network,
    environ: Mapping[str, str],
    path: Path,
    kind: str,
    *,
    only_needed: bool = False,
) -> LockedTarget:
    """One target's lock, not yet written. ``only_needed`` (no torch-family package was asked for): the lock
    holds only the family files the rest of the closure depends on, still from the plan's index."""
    from ..stack.files import extension_files
    from . import pylock

    found = _machine(tp)
    files = (*locked_files(tp.plan, found, network), *extension_files(tp.plan.extensions, network.store,
                                                                       keep_urls=True))  # fmt: skip
    compile_with = partial(
        _compile, others=others, found=found, default_index=config.default_index, environ=environ,
        offline=network.offline,
    )  # fmt: skip
    resolved = None
    if only_needed:  # what the rest needs of the family, read from uv's closure without it
        resolved = compile_with(())
        wanted = {canonicalize_name(str(p["name"])) for p in resolved.get("packages", [])}
        files = _needed(files, {name for name in wanted if is_torch_family(name)})
    if resolved is None or files:
        resolved = compile_with(files)
    packages = _merge(files, resolved, config.default_index)
    render = pylock.render_pylock if kind == "pylock" else pylock.render_requirements
    text = render(tp, found, files, packages, config.default_index)
    return LockedTarget(tp, files, packages, config.default_index, path, text)


def uv_platform(found: Machine) -> str:
    """``--python-platform`` for the target: its architecture, and its glibc where uv knows the manylinux tag."""
    system, _, arch = found.platform_key.partition("_")
    if system == "linux":
        glibc = found.glibc
        if glibc is not None and glibc.major == 2 and 17 <= glibc.minor <= 40:
            return f"{arch}-manylinux_2_{glibc.minor}"
        return f"{arch}-unknown-linux-gnu"
    if system == "windows":
        return "x86_64-pc-windows-msvc"
    return f"{'aarch64' if arch == 'arm64' else arch}-apple-darwin"


def _needed(files: Sequence[FamilyFile], names: set[str]) -> tuple[FamilyFile, ...]:
    """The plan's files for ``names`` and, transitively, the family files those need (torch's Triton)."""
    keep = set(names)
    while True:
        more = {f.name for f in files if f.needed_by is not None and canonicalize_name(f.needed_by.split()[0]) in keep}
        if more <= keep:
            return tuple(f for f in files if f.name in keep)
        keep |= more


def _machine(tp: TargetPlan) -> Machine:
    from ..resolve import Machine

    return Machine.from_report(tp.target.report)


def _compile(
    files: Sequence[FamilyFile],
    *,
    others: Sequence[str],
    found: Machine,
    default_index: str,
    environ: Mapping[str, str],
    offline: bool,
) -> dict[str, Any]:
    """uv's PEP 751 lock of the family's files plus ``others`` for the target, as plain Python data (tomlkit:
    ``tomllib`` is 3.11 and later)."""
    from ..install.uv import find_uv

    python = found.markers.get("python_full_version", found.python)
    with tempfile.TemporaryDirectory(prefix="wheelfit-lock-") as tmp:
        given = Path(tmp) / "requirements.in"
        given.write_text("".join(f"{line}\n" for line in [*(f.direct_reference for f in files), *others]))
        out = Path(tmp) / "pylock.toml"
        argv = [
            find_uv(), "pip", "compile", str(given), "--format", "pylock.toml", "-o", str(out), "--quiet",
            "--no-header", "--python-version", python, "--python-platform", uv_platform(found),
            "--index-url", default_index,
        ]  # fmt: skip
        if offline:
            argv.append("--offline")
        done = subprocess.run(argv, capture_output=True, text=True, env=dict(environ), check=False)
        if done.returncode != 0:
            lines = [ln.strip() for ln in done.stderr.splitlines() if ln.strip()]
            why = " ".join(lines)[:600] or f"exit code {done.returncode}"
            raise LockError(f"uv pip compile could not resolve the rest of the lock: {why}")
        return tomlkit.parse(out.read_text(encoding="utf-8")).unwrap()


def _merge(files: Sequence[FamilyFile], resolved: Mapping[str, Any], default_index: str) -> tuple[dict[str, Any], ...]:
    """uv's packages with the family's replaced by the plan's files; a torch-family package from anywhere else
    (a name only a dependency asks for, not planned) is refused."""
    ours = {f.name: f for f in files}
    packages: dict[str, dict[str, Any]] = {}
    for entry in resolved.get("packages", []):
        name = canonicalize_name(str(entry["name"]))
        if is_torch_family(name):
            urls = {str(a.get("url")) for a in [entry.get("archive") or {}, *entry.get("wheels", [])]}
            if name not in ours or ours[name].url not in urls:
                where = ", ".join(sorted(u for u in urls if u != "None")) or "an unknown source"
                raise LockError(
                    f"{name} is torch-family but uv took it from {where}, not from the plan's index; "
                    f"add {name} to the requirements so that wheelfit plans it"
                )
            continue
        table = dict(entry)
        if "wheels" in table or "sdist" in table:
            table = {"name": table.pop("name"), "version": table.pop("version", None), "index": default_index, **table}
            table = {k: v for k, v in table.items() if v is not None}
        packages[name] = table
    for f in files:
        wheel: dict[str, Any] = {"name": f.filename, "url": f.url}
        if f.size is not None:
            wheel["size"] = f.size
        wheel["hashes"] = {"sha256": f.sha256}
        packages[f.name] = {"name": f.name, "version": f.version, "index": f.index_url, "wheels": [wheel]}
    return tuple(packages[name] for name in sorted(packages))
