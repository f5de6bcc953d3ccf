"""Finding detector plugins: the ``wheelfit.providers`` entry-point group.

Discovery does not import anything; loading does, one provider at a time, and a
provider that fails to load is reported by name instead of ending detection.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from importlib.metadata import EntryPoint, entry_points

from wheelfit_probekit import Provider

__all__ = ["GROUP", "LoadedProvider", "discover", "load"]

GROUP = "wheelfit.providers"


@dataclass(frozen=True)
class LoadedProvider:
    name: str
    distribution: str | None
    provider: Provider | None
    error: str | None = None


def discover(disabled: Iterable[str] = ()) -> list[EntryPoint]:
    """Entry points of the group, sorted by name, first one per name kept (a doubled sys.path lists some twice)."""
    skip = set(disabled)
    seen: dict[str, EntryPoint] = {}
    for ep in sorted(entry_points(group=GROUP), key=lambda e: (e.name, e.value)):
        if ep.name not in skip:
            seen.setdefault(ep.name, ep)
    return list(seen.values())


def load(ep: EntryPoint) -> LoadedProvider:
    dist = ep.dist.name if ep.dist is not None else None
    try:
        obj = ep.load()
    except Exception as exc:  # noqa: BLE001 - any import failure of a plugin is reported, not raised
        return LoadedProvider(ep.name, dist, None, f"could not load provider {ep.name!r} from {dist}: {exc}")
    if not callable(getattr(obj, "probe", None)):
        return LoadedProvider(ep.name, dist, None, f"provider {ep.name!r} from {dist} has no probe() method")
    return LoadedProvider(ep.name, dist, obj)
