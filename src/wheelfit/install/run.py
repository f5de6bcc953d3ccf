"""One install, start to end: fetch and check the torch-family wheels, then hand everything to the backend
inside a snapshot that is restored if anything fails."""

from __future__ import annotations

import os
import re
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name

from ..errors import UsageError, first_line
from ..resolve.plan import Plan
from .backend import BackendRequest, BackendResult, Installer, constraints_text
from .errors import BackendError
from .family import TORCH_FAMILY, is_torch_family
from .gather import FetchedWheel, WheelSource, gather_family
from .target_env import TargetEnv
from .transaction import SNAPSHOT_PREFIX, Snapshot, env_lock, interrupted, recover_interrupted

__all__ = ["InstallResult", "install_plan", "split_requirements"]


@dataclass(frozen=True)
class InstallResult:
    plan: Plan
    backend: str
    index_url: str
    wheels: tuple[FetchedWheel, ...]
    #: ``name==version`` (or ``name @ url``) the backend installed, or would install on a dry run.
    installs: tuple[str, ...]
    removes: tuple[str, ...]
    dry_run: bool
    #: What the user should know beyond the install itself (an interrupted earlier install was undone).
    notes: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {
            "dry_run": self.dry_run,
            "backend": self.backend,
            "default_index": self.index_url,
            "plan": self.plan.to_dict(),
            "torch_family": [
                {
                    "name": w.name,
                    "version": str(w.version),
                    "url": w.file.url,
                    "sha256": w.file.hashes.get("sha256"),
                    "size": w.path.stat().st_size,
                    "needed_by": w.needed_by,
                }
                for w in self.wheels
            ],
            "installs": list(self.installs),
            "removes": list(self.removes),
            "notes": list(self.notes),
        }


def split_requirements(specs: Sequence[str]) -> tuple[list[str], list[str]]:
    """(torch-family requirements for the planner, everything else for the default index)."""
    family: list[str] = []
    other: list[str] = []
    for spec in specs:
        try:
            name = Requirement(spec).name
        except InvalidRequirement as exc:
            raise UsageError(f"cannot read the requirement {spec!r}: {first_line(exc)}") from exc
        (family if is_torch_family(name) else other).append(spec)
    return family, other


def install_plan(
    plan: Plan,
    env: TargetEnv,
    source: WheelSource,
    installer: Installer,
    *,
    index_url: str,
    environ: Mapping[str, str],
    extra: Sequence[str] = (),
    dry_run: bool = False,
    offline: bool = False,
) -> InstallResult:
    """Install ``plan`` (plus ``extra`` non-torch requirements from ``index_url``) into ``env``, or with
    ``dry_run`` say what that would do and change nothing in ``env``."""
    pins = [Requirement(p.requirement) for p in plan.packages]
    wheels = gather_family(pins, source, env)
    taken = {w.name for w in wheels}
    blocked = sorted(n for n in TORCH_FAMILY if n not in taken)
    with tempfile.TemporaryDirectory(prefix="wheelfit-") as tmp:
        constraints = Path(tmp) / "constraints.txt"
        constraints.write_text(constraints_text(blocked))
        request = BackendRequest(
            python=env.executable,
            requirements=(*(w.requirement for w in wheels), *extra),
            index_url=index_url,
            constraints=constraints,
            dry_run=dry_run,
            environ=environ,
            offline=offline,
        )
        notes: list[str] = []
        if dry_run:
            if interrupted(env.prefix):
                notes.append(
                    f"an earlier wheelfit install into {env.prefix} was interrupted; a real install first puts the "
                    "environment back as it was before it"
                )
            result = installer.install(request)
            if not result.ok:
                raise BackendError(_explain(installer.name, result, blocked))
        else:
            with env_lock(env.prefix):
                notes += recover_interrupted(env.prefix, env.install_dirs)
                if _changes_nothing(installer, request, wheels, env):
                    return InstallResult(plan, installer.name, index_url, tuple(wheels), (), (), False, tuple(notes))
                snapshot = Snapshot(env.install_dirs, env.prefix / f"{SNAPSHOT_PREFIX}{os.getpid()}")
                try:
                    result = installer.install(request)
                except BaseException:
                    snapshot.restore()
                    raise
                if not result.ok:
                    snapshot.restore()
                    raise BackendError(_explain(installer.name, result, blocked))
                snapshot.discard()
    return InstallResult(
        plan, installer.name, index_url, tuple(wheels), result.installs, result.removes, dry_run, tuple(notes)
    )


def _changes_nothing(
    installer: Installer, request: BackendRequest, wheels: Sequence[FetchedWheel], env: TargetEnv
) -> bool:
    """Whether the backend's dry run says this install changes nothing.

    Asked only when a planned torch-family package is installed already (a re-run, CI on a cached
    environment): the rollback snapshot links every file of the environment (some 12,000 with torch, ~0.8 s
    to take and drop) and a re-run that changes nothing needs none. A fresh environment skips the question.
    """
    have = {canonicalize_name(name) for name in env.installed}
    if not any(canonicalize_name(w.name) in have for w in wheels):
        return False
    preview = installer.install(replace(request, dry_run=True))
    return preview.ok and not preview.installs and not preview.removes


def _explain(backend: str, result: BackendResult, blocked: Sequence[str]) -> str:
    """One line; names the torch-family package a dependency wanted from the default index, if that was it."""
    error = result.last_error()
    text = result.stdout + "\n" + result.stderr
    for name in blocked:
        if re.search(rf"(?<![\w-]){re.escape(canonicalize_name(name))}\s*<\s*0\b", text):
            return (
                f"a dependency needs {name}, a torch-family package that wheelfit takes only from the variant "
                f"index and the plan does not include; nothing was installed ({backend}: {error})"
            )
    return f"{backend} failed; the environment was left as it was ({error})"
