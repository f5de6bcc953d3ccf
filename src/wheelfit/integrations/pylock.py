"""The two lock forms: PEP 751 ``pylock.toml`` (https://packaging.python.org/specifications/pylock-toml/) and a
hash-pinned requirements file (what ``pip install --require-hashes -r`` accepts, for pips that cannot read pylock).
Pure: the lock's records in, text out."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import tomlkit

if TYPE_CHECKING:
    from ..resolve import Machine
    from .family_files import FamilyFile
    from .targets import TargetPlan

__all__ = ["environment_marker", "planned_for", "render_pylock", "render_requirements"]


def planned_for(tp: TargetPlan) -> str:
    """What the lock was planned for, in one line: the ``--target`` spec, or the detected machine."""
    plan = tp.plan
    machine = f"--target {tp.spec}" if tp.spec else "this machine (detected)"
    return f"{machine}: torch {plan.torch_version} ({plan.variant}) from {plan.index_url}"


def environment_marker(found: Machine) -> str:
    """The PEP 508 environment the lock is valid for: the target's Python, OS and architecture."""
    m = found.markers
    parts = [f'python_version == "{m.get("python_version", found.python)}"']
    parts += [f'{key} == "{m[key]}"' for key in ("sys_platform", "platform_machine") if m.get(key)]
    return " and ".join(parts)


def render_pylock(
    tp: TargetPlan,
    found: Machine,
    family: Sequence[FamilyFile],
    packages: Sequence[Mapping[str, Any]],
    default_index: str,
) -> str:
    doc = tomlkit.document()
    doc.add(tomlkit.comment(f"Written by wheelfit lock for {planned_for(tp)}"))
    doc.add(tomlkit.comment("Install: uv pip install -r pylock.toml, or pip install -r pylock.toml (pip 26.1+)"))
    doc["lock-version"] = "1.0"
    doc["environments"] = [environment_marker(found)]
    doc["requires-python"] = f"=={found.markers.get('python_version', found.python)}.*"
    doc["created-by"] = "wheelfit"
    tables = tomlkit.aot()
    for entry in packages:
        tables.append(_package_table(entry))
    doc["packages"] = tables
    plan = tp.plan
    tool = tomlkit.table()
    wheelfit = tomlkit.table()
    wheelfit["target"] = tp.spec or "detected"
    wheelfit["name"] = tp.name
    wheelfit["variant"] = plan.variant
    wheelfit["torch-version"] = plan.torch_version
    wheelfit["index"] = plan.index_url
    wheelfit["default-index"] = default_index
    wheelfit["platform"] = plan.platform
    wheelfit["python"] = plan.python
    wheelfit["reasons"] = list(plan.reasons)
    wheelfit["family"] = {f.name: f.needed_by or "the plan" for f in family}
    tool["wheelfit"] = wheelfit
    doc["tool"] = tool
    return tomlkit.dumps(doc)


def _package_table(entry: Mapping[str, Any]) -> Any:
    table = tomlkit.table()
    for key, value in entry.items():
        if key == "wheels":
            wheels = tomlkit.array()
            wheels.multiline(True)
            for wheel in value:
                wheels.append(_inline(wheel))
            table[key] = wheels
        elif isinstance(value, Mapping):
            table[key] = _inline(value)
        else:
            table[key] = value
    return table


def _inline(value: Mapping[str, Any]) -> Any:
    inline = tomlkit.inline_table()
    for key, item in value.items():
        inline[key] = _inline(item) if isinstance(item, Mapping) else item
    return inline


def render_requirements(
    tp: TargetPlan,
    found: Machine,
    family: Sequence[FamilyFile],
    packages: Sequence[Mapping[str, Any]],
    default_index: str,
) -> str:
    """``name @ url --hash=sha256:...`` for the torch family (no other index can supply it), ``name==version
    --hash=...`` for the rest (every file hash uv's lock lists for it), from ``--index-url`` = the default index."""
    ours = {f.name for f in family}
    lines = [
        f"# Written by wheelfit lock for {planned_for(tp)}",
        f"# Valid for {environment_marker(found)}",
        "# Install: pip install --require-hashes -r THIS_FILE",
        f"--index-url {default_index}",
    ]
    for entry in packages:
        name = str(entry["name"])
        files = [*entry.get("wheels", []), *([entry["sdist"]] if "sdist" in entry else [])]
        archive = entry.get("archive")
        if name in ours or archive is not None:
            link: Mapping[str, Any] = files[0] if name in ours or archive is None else archive
            lines.append(f"{name} @ {link['url']} --hash=sha256:{link['hashes']['sha256']}")
            continue
        hashes = " ".join(f"--hash=sha256:{f['hashes']['sha256']}" for f in files if "sha256" in f.get("hashes", {}))
        lines.append(f"{name}=={entry['version']} {hashes}".rstrip())
    return "\n".join(lines) + "\n"
