"""Finding detector plugins: the ``wheelfit.providers`` entry-point group.

Discovery reads each installed distribution's ``entry_points.txt`` directly
instead of importing :mod:`importlib.metadata`, whose import alone (email,
zipfile, csv, ...) costs about 40 ms: a third of the start-up budget of
``wheelfit detect``. The rules are the same: the first distribution of a name on
``sys.path`` wins, entries are sorted by name. Loading imports one provider at a
time, and one that fails to load is reported by name instead of ending detection.
"""

from __future__ import annotations

import importlib
import os
import re
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from wheelfit_probekit import Provider

from ..errors import UsageError
from ..report import plugin_origin as origin

__all__ = ["GROUP", "LoadedProvider", "PluginEntry", "discover", "load"]

GROUP = "wheelfit.providers"

_DIST_DIR = re.compile(r"^(?P<name>[A-Za-z0-9_.]+?)(?:-(?P<version>[^-]+))?\.(?:dist|egg)-info$")
_ENTRY = re.compile(r"^(?P<module>[\w.]+)\s*(?::\s*(?P<attr>[\w.]+))?\s*(?:\[.*\])?\s*$")


@dataclass(frozen=True)
class PluginEntry:
    """One ``name = module:attr`` line of the group, and the distribution that declared it."""

    name: str
    value: str
    distribution: str | None
    #: From the ``.dist-info`` directory's name (``name-version.dist-info``, as every installer writes it).
    version: str | None = None

    @property
    def origin(self) -> str:
        """``wheelfit-nvidia 0.2.0``: what a failure names, so that a user knows which package to fix or remove."""
        return origin(self.distribution, self.version)

    def load(self) -> object:
        m = _ENTRY.match(self.value)
        if m is None:
            raise ValueError(f"malformed entry point {self.value!r}")
        obj: object = importlib.import_module(m.group("module"))
        for attr in (m.group("attr") or "").split("."):
            if attr:
                obj = getattr(obj, attr)
        return obj


@dataclass(frozen=True)
class LoadedProvider:
    name: str
    distribution: str | None
    provider: Provider | None
    error: str | None = None
    version: str | None = None
    #: ``error`` without the plugin's name: ``could not be loaded: ImportError: ...`` (the runner names it itself).
    problem: str | None = None

    @property
    def origin(self) -> str:
        return origin(self.distribution, self.version)


def discover(disabled: Iterable[str] = (), path: Sequence[str] | None = None) -> list[PluginEntry]:
    """Entry points of the group on ``path`` (default ``sys.path``), sorted, first per name kept."""
    skip = set(disabled)
    seen_dists: set[str] = set()
    found: dict[str, PluginEntry] = {}
    names_seen: set[str] = set()
    for entry in sys.path if path is None else path:
        try:
            names = sorted(os.listdir(entry or "."))
        except OSError:
            continue
        for dirname in names:
            m = _DIST_DIR.match(dirname)
            if m is None:
                continue
            dist = re.sub(r"[-_.]+", "-", m.group("name")).lower()
            if dist in seen_dists:
                continue  # shadowed by an earlier sys.path entry, as importlib.metadata does
            seen_dists.add(dist)
            for name, value in _group_lines(os.path.join(entry or ".", dirname, "entry_points.txt")):
                names_seen.add(name)
                if name not in skip:
                    found.setdefault(name, PluginEntry(name, value, dist, m.group("version")))
    unknown = sorted(skip - names_seen)
    if unknown:  # a typo must not silently leave the detector running
        raise UsageError(
            f"--disable-provider {unknown[0]}: no detector plugin has that name "
            f"(installed: {', '.join(sorted(names_seen)) or 'none'})"
        )
    return [found[k] for k in sorted(found)]


def _group_lines(path: str) -> list[tuple[str, str]]:
    try:
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
    except OSError:
        return []
    out: list[tuple[str, str]] = []
    section = None
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith(("#", ";")):
            continue
        if line.startswith("[") and line.endswith("]"):
            section = line[1:-1].strip()
        elif section == GROUP and "=" in line:
            name, _, value = line.partition("=")
            out.append((name.strip(), value.strip()))
    return out


def load(ep: PluginEntry) -> LoadedProvider:
    """Import one plugin. Any failure (``SystemExit`` at import time included) is reported, never raised."""
    try:
        obj = ep.load()
    except (Exception, SystemExit) as exc:  # noqa: BLE001 - a plugin's import failure is reported, not raised
        why = f"{type(exc).__name__}: {exc}"
        error = f"could not load provider {ep.name!r} from {ep.origin}: {why}"
        return LoadedProvider(ep.name, ep.distribution, None, error, ep.version, f"could not be loaded: {why}")
    if not callable(getattr(obj, "probe", None)):
        error = f"provider {ep.name!r} from {ep.origin} has no probe() method"
        return LoadedProvider(ep.name, ep.distribution, None, error, ep.version, "has no probe() method")
    return LoadedProvider(ep.name, ep.distribution, obj, version=ep.version)  # type: ignore[arg-type]
