"""The file of knowledge measured on this machine (:mod:`wheelfit.kb.overlay`), in wheelfit's data directory.

The file (``measured.json``, schema ``schemas/measured.schema.json``) is read with the knowledge base's own JSON
reader and held to its schema; a file that fails is one line naming it, never a traceback. Pure but for
:func:`read_measured` and :func:`measured_path`, which the edges call.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from pathlib import Path

from packaging.version import InvalidVersion, Version

from .jsonfile import conform, load_json
from .matrix import KnowledgeError
from .overlay import Measured, Overlay

__all__ = ["DATA_ENV", "default_data_dir", "measured_path", "parse", "read_measured", "updated"]

DATA_ENV = "WHEELFIT_DATA_DIR"
SCHEMA_MAJOR = 1
_SCHEMA = "schemas/measured.schema.json"


def default_data_dir(env: Mapping[str, str], platform: str, home: Path) -> Path:
    """``WHEELFIT_DATA_DIR``, else the platform's user data dir (XDG, ``~/Library/Application Support``,
    ``%APPDATA%``)."""
    if env.get(DATA_ENV):
        return Path(env[DATA_ENV]).expanduser()
    if platform == "win32":
        return Path(env.get("APPDATA") or str(home / "AppData" / "Roaming")) / "wheelfit"
    if platform == "darwin":
        return home / "Library" / "Application Support" / "wheelfit"
    xdg = env.get("XDG_DATA_HOME")
    return (Path(xdg) if xdg and Path(xdg).is_absolute() else home / ".local" / "share") / "wheelfit"


def measured_path(env: Mapping[str, str], platform: str, home: Path) -> Path:
    return default_data_dir(env, platform, home) / "measured.json"


def read_measured(path: Path) -> Overlay:
    """The overlay in ``path``; none when the file does not exist. A file that cannot be read or fails its checks
    is one line naming it (:class:`KnowledgeError`)."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return Overlay({}, str(path))
    except OSError as exc:
        raise KnowledgeError(f"{path}: cannot read it ({exc.strerror or exc}); remove it or set {DATA_ENV}") from None
    return parse(data, str(path))


def parse(data: bytes | str, name: str) -> Overlay:
    """The overlay in a file's bytes, held to ``schemas/measured.schema.json``: the file is the user's, in their
    data directory, and another tool (or a newer wheelfit) may have written it."""
    doc = conform(load_json(data, name, error=KnowledgeError), _SCHEMA, name, error=KnowledgeError, reads="1")
    found: dict[tuple[Version, str, str], Measured] = {}
    for i, item in enumerate(doc["builds"]):
        try:
            version = Version(item["version"])
        except (InvalidVersion, ValueError):  # ValueError: a number past int()'s 4300-digit limit
            raise KnowledgeError(f"{name}: builds[{i}].version: not a version: {item['version'][:60]!r}") from None
        measured = Measured(version, item["label"], item["platform"], tuple(item["arch_list"]), item.get("runtime"),
                            item["date"])  # fmt: skip
        found[measured.key] = measured
    return Overlay(found, name)


def updated(overlay: Overlay, new: Iterable[Measured]) -> bytes:
    """The file's new bytes: ``overlay`` with each of ``new`` in place of an earlier measurement of its build."""
    builds = dict(overlay.builds)
    for m in new:
        builds[m.key] = m
    doc = {
        "schema_version": f"{SCHEMA_MAJOR}.0",
        "about": "Builds as wheelfit verify/doctor measured them on this machine; wheelfit plans from these facts.",
        "builds": [m.to_dict() for _, m in sorted(builds.items(), key=lambda kv: (str(kv[0][0]), kv[0][1], kv[0][2]))],
    }
    return (json.dumps(doc, indent=2) + "\n").encode()
