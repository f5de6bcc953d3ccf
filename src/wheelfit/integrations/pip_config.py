"""``wheelfit configure pip``: a requirements (or constraints) file that pins the torch family by direct URL with
its sha256, and the warning when pip is already set up to mix the PyTorch index with the default one.

Never ``PIP_EXTRA_INDEX_URL``: pip takes a name from whichever index has the higher version, which is how a
``torchtriton`` uploaded to PyPI replaced PyTorch's own in December 2022
(https://pytorch.org/blog/compromised-nightly-dependency/). A direct URL can come from nowhere else.

The lines are ``name @ url#sha256=...``: pip and uv check the fragment's hash, and unlike ``--hash`` it does not
switch pip to ``--require-hashes`` for every other requirement, so the file combines with the user's own. pip
26.1 also takes these lines in a constraints file (``-c``), where it then picks that very file for the name.
"""

from __future__ import annotations

import configparser
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import UsageError
from .family_files import FamilyFile, locked_files

if TYPE_CHECKING:
    from ..app.session import Network
    from ..options import MachineOptions, PlanOptions
    from .targets import TargetPlan

__all__ = [
    "PipConfig",
    "PipConfigured",
    "PipOutput",
    "configure_pip",
    "pip_config_files",
    "pytorch_index_warnings",
    "render_pip_file",
]

#: pip's index settings that can point at the PyTorch index, as variables and as config-file keys.
_VARIABLES = ("PIP_EXTRA_INDEX_URL", "PIP_INDEX_URL")
_KEYS = ("extra-index-url", "index-url")
_PUBLIC_PYTORCH = "https://download.pytorch.org/whl"


@dataclass(frozen=True)
class PipConfig:
    """One target's file: its plan, the family files, the text to write, and where (``None``: standard output)."""

    target: TargetPlan
    family: tuple[FamilyFile, ...]
    text: str
    path: Path | None


@dataclass(frozen=True)
class PipOutput:
    """Where ``configure pip`` writes (``None``: standard output), and whether as a constraints file (``-c``)."""

    path: Path | None = None
    constraints: bool = False


@dataclass(frozen=True)
class PipConfigured:
    """What ``configure pip`` made: one file per distinct build, and the warnings about pip's own settings."""

    files: tuple[PipConfig, ...]
    warnings: tuple[str, ...]


def configure_pip(
    requirements: Sequence[str],
    targets: Sequence[str],
    where: MachineOptions,
    options: PlanOptions,
    output: PipOutput,
    *,
    environ: Mapping[str, str],
    home: Path,
    network: Network,
) -> PipConfigured:
    """The file(s) for ``requirements`` (default torch) on each target, written when ``output.path`` is given (one
    per target beside it, ``<stem>.<name>.txt``, for several); ``home`` is where pip looks for the user's config."""
    from ..index.config import resolve_index_config
    from ..resolve import Machine
    from ..userfiles import Write, write_files
    from .targets import plan_targets

    for req in requirements:
        if "@" in req or "/" in req:
            raise UsageError(f"{req}: configure pip plans torch-family packages by name; give a name and version")
    plans = plan_targets(list(requirements), targets, where, options, environ=environ, network=network)
    names = [p.name for p in plans]
    several = len(set(names)) > 1
    done: dict[str, PipConfig] = {}
    for tp in plans:
        if tp.name in done:
            continue
        files = locked_files(tp.plan, Machine.from_report(tp.target.report), network)
        path = output.path
        if path is not None and several:
            path = path.with_name(f"{path.stem}.{tp.name}{path.suffix or '.txt'}")
        done[tp.name] = PipConfig(tp, files, render_pip_file(tp, files, constraints=output.constraints), path)
    write_files([Write(item.path, item.text.encode("utf-8")) for item in done.values() if item.path is not None])
    base = resolve_index_config(environ, pytorch_index=options.pytorch_index).pytorch_base
    warnings = pytorch_index_warnings(environ, base, pip_config_files(environ, home))
    return PipConfigured(tuple(done.values()), tuple(warnings))


def render_pip_file(tp: TargetPlan, files: Sequence[FamilyFile], *, constraints: bool) -> str:
    from .pylock import planned_for

    use = "pip install -c THIS_FILE torch ..." if constraints else "pip install -r THIS_FILE"
    lines = [
        f"# Written by wheelfit configure pip for {planned_for(tp)}",
        "# The torch family by direct URL with its sha256: no other index can supply these names.",
        f"# Use: {use}  (never PIP_EXTRA_INDEX_URL)",
    ]
    lines += [f.direct_reference for f in files]
    return "\n".join(lines) + "\n"


def pip_config_files(environ: Mapping[str, str], home: Path) -> list[Path]:
    """The config files pip reads (https://pip.pypa.io/en/stable/topics/configuration/), in its order: global,
    user, site, and ``PIP_CONFIG_FILE``. ``PIP_CONFIG_FILE=os.devnull`` reads none but itself."""
    given = environ.get("PIP_CONFIG_FILE")
    if given == os.devnull:  # pip: "no configuration files are loaded"
        return []
    xdg_dirs = environ.get("XDG_CONFIG_DIRS", "/etc/xdg").split(":")
    xdg_home = Path(environ.get("XDG_CONFIG_HOME") or home / ".config")
    paths = [*(Path(d) / "pip" / "pip.conf" for d in xdg_dirs if d), Path("/etc/pip.conf")]
    paths += [home / ".pip" / "pip.conf", xdg_home / "pip" / "pip.conf"]
    if environ.get("VIRTUAL_ENV"):
        paths.append(Path(environ["VIRTUAL_ENV"]) / "pip.conf")
    if given:
        paths.append(Path(given))
    return paths


def _pip_key(key: str) -> str:
    """A config-file key as pip normalizes it (``configuration._normalize_name``): lower case, no leading
    ``--``, ``_`` read as ``-``: ``--Extra_Index_URL`` is ``extra-index-url``."""
    key = key.strip().lower().replace("_", "-")
    return key[2:] if key.startswith("--") else key


def _comparable(url: str) -> str:
    """``url`` with its scheme and host in lower case (they are case-insensitive) and no trailing slash."""
    scheme, sep, rest = url.strip().partition("://")
    if not sep:
        return url.strip().rstrip("/")
    host, slash, path = rest.partition("/")
    return f"{scheme.lower()}://{host.lower()}{slash}{path}".rstrip("/")


def pytorch_index_warnings(environ: Mapping[str, str], pytorch_base: str, config_files: Sequence[Path]) -> list[str]:
    """One warning per pip setting (variable or config-file key) that points at the PyTorch index."""
    bases = tuple({_comparable(pytorch_base), _comparable(_PUBLIC_PYTORCH)})
    found: list[tuple[str, str]] = []
    for name, value in environ.items():
        if name.upper() in _VARIABLES:  # pip reads PIP_* names; Windows' environment ignores case
            found += [(name, url) for url in value.split() if _comparable(url).startswith(bases)]
    for path in config_files:
        parser = configparser.ConfigParser(interpolation=None)
        try:
            parser.read(path, encoding="utf-8")
        except (OSError, configparser.Error, UnicodeDecodeError):
            continue  # pip would complain about it itself; nothing here is ours to report
        for section in parser.sections():
            for key, value in parser.items(section, raw=True):
                if _pip_key(key) not in _KEYS:
                    continue
                where = f"{key} in {path} [{section}]"
                found += [(where, u) for u in value.split() if _comparable(u).startswith(bases)]
    return [
        f"{where} points at the PyTorch index ({url}): pip then takes every name from whichever index has the "
        "higher version, the hole behind the December 2022 torchtriton compromise (a torchtriton on PyPI "
        "replaced PyTorch's own); remove it and install from this file's direct URLs instead"
        for where, url in found
    ]
