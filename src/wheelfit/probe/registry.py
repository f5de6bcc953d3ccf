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

__all__ = ["GROUP", "LoadedProvider", "PluginEntry", "discover", "load"]

GROUP = "wheelfit.providers"

_DIST_DIR = re.compile(r"^(?P<name>[A-Za-z0-9_.]+?)(?:-[^-]+)?\.(?:dist|egg)-info$")
_ENTRY = re.compile(r"^(?P<module>[\w.]+)\s*(?::\s*(?P<attr>[\w.]+))?\s*(?:\[.*\])?\s*$")


@dataclass(frozen=True)
class PluginEntry:
    """One ``name = module:attr`` line of the group, and the distribution that declared it."""

    name: str
    value: str
    distribution: str | None

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
                    found.setdefault(name, PluginEntry(name, value, dist))
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
    try:
        obj = ep.load()
    except Exception as exc:  # noqa: BLE001 - any import failure of a plugin is reported, not raised
        return LoadedProvider(
            ep.name, ep.distribution, None, f"could not load provider {ep.name!r} from {ep.distribution}: {exc}"
        )
    if not callable(getattr(obj, "probe", None)):
        return LoadedProvider(
            ep.name, ep.distribution, None, f"provider {ep.name!r} from {ep.distribution} has no probe() method"
        )
    return LoadedProvider(ep.name, ep.distribution, obj)  # type: ignore[arg-type]
