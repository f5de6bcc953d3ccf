"""One install, start to end: the install set handed to the backend (uv or pip), which downloads, checks the
pinned hashes and installs, inside a snapshot that is restored if anything fails.

Under the environment's lock (one install at a time; a second one waits, and says so), an earlier install that was
killed midway is dealt with first (:func:`~.transaction.recover_interrupted`), and the snapshot records what this
install was asked for (and, when the installer's dry run was asked anyway, what it would change), so that a later
recovery can tell this install's changes from anyone else's."""

from __future__ import annotations

import os
import re
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from packaging.utils import canonicalize_name

from ..index.local import backend_index
from ..resolve.plan import Plan
from .backend import BackendRequest, BackendResult, Installer
from .errors import BackendError
from .install_set import FamilyFile, InstallSet
from .target_env import TargetEnv, inspect_env
from .transaction import (
    SNAPSHOT_PREFIX,
    Snapshot,
    env_lock,
    interrupted,
    pending_recovery,
    recover_interrupted,
)

if TYPE_CHECKING:
    from ..fetch.wheels import ProgressCallback

__all__ = ["BackendOptions", "InstallResult", "recover_first", "run_install"]


@dataclass(frozen=True)
class BackendOptions:
    """How to install, beyond the install set: where the rest comes from, and pip's and uv's switches."""

    #: The only index for everything that is not torch-family.
    index_url: str
    environ: Mapping[str, str]
    #: More indexes for what is not torch-family (``--extra-index-url``).
    extra_index_urls: tuple[str, ...] = ()
    dry_run: bool = False
    offline: bool = False
    upgrade: bool = False
    reinstall: bool = False
    no_deps: bool = False
    #: ``--find-links`` wheelhouses for what is not torch-family (torch-family: the planned file only).
    find_links: tuple[str, ...] = ()
    #: ``--no-index``: nothing from the default index, only ``find_links`` (and the set's torch-family files).
    no_index: bool = False
    #: ``--require-hashes`` (a requirements file with ``--hash`` lines): every requirement is hash-checked.
    require_hashes: bool = False
    #: ``--recover``: an interrupted earlier install when the environment changed since: ``restore`` its snapshot
    #: (undoing the later changes too) or ``keep`` the environment as it is; ``None`` restores only if nothing
    #: else changed, else stops and asks.
    recover: str | None = None
    #: ``--snapshot`` off: no rollback snapshot (the backend's own partial install is then left as it is).
    snapshot: bool = True
    #: Told (as a ``stalled`` event) when another wheelfit install holds the environment's lock.
    progress: ProgressCallback | None = None


@dataclass(frozen=True)
class InstallResult:
    #: ``None`` when nothing torch-family was asked for (``wheelfit install tinydep``).
    plan: Plan | None
    backend: str
    index_url: str
    wheels: tuple[FamilyFile, ...]
    #: ``name==version`` (or ``name @ url``) the backend installed, or would install on a dry run.
    installs: tuple[str, ...]
    removes: tuple[str, ...]
    dry_run: bool
    #: What the user should know beyond the install itself (an interrupted earlier install was undone).
    notes: tuple[str, ...] = ()
    #: What the backend printed (``-v`` shows it).
    output: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {
            "dry_run": self.dry_run,
            "backend": self.backend,
            "default_index": self.index_url,
            "plan": None if self.plan is None else self.plan.to_dict(),
            "torch_family": [
                {
                    "name": w.name,
                    "version": w.version,
                    "url": w.url,
                    "sha256": w.sha256,
                    "size": w.size,
                    "needed_by": w.needed_by,
                }
                for w in self.wheels
            ],
            "installs": list(self.installs),
            "removes": list(self.removes),
            "notes": list(self.notes),
        }


def run_install(
    plan: Plan | None, wanted: InstallSet, env: TargetEnv, installer: Installer, options: BackendOptions
) -> InstallResult:
    """Hand ``wanted`` to the backend for ``env``, or with ``options.dry_run`` say what that would do and change
    nothing in ``env``. All or nothing: the environment is snapshotted first and restored if the backend fails
    or is interrupted (unless ``options.snapshot`` is off)."""
    wheels = wanted.family
    notes: list[str] = [
        f"{w.filename}: taken from the wheelhouse {w.wheelhouse} (the planned file; the backend checks its sha256)"
        for w in wheels
        if w.wheelhouse is not None
    ]
    notes += [warning for w in wheels for warning in w.warnings]  # PEP 592: a yanked file, said
    requirements = wanted.requirements
    if not requirements:  # the installed torch kept, nothing else asked for: nothing to hand over
        if options.dry_run:
            notes += pending_recovery(env.prefix, env.markers)
        elif interrupted(env.prefix):  # an earlier install killed midway is still put back first
            with env_lock(env.prefix, on_wait=_lock_waiting(options.progress, env.prefix)):
                notes += recover_interrupted(env.prefix, env.install_dirs, env.markers, options.recover)
        return InstallResult(plan, installer.name, options.index_url, (), (), (), options.dry_run, tuple(notes))
    indexes = backend_index(options.index_url, options.find_links)  # a local default index: as uv/pip take it
    with tempfile.TemporaryDirectory(prefix="wheelfit-") as tmp:
        constraints = Path(tmp) / "constraints.txt"
        constraints.write_text(wanted.constraints_file(hash_checked=options.require_hashes))
        given = None
        if options.require_hashes:  # ``--hash`` options are read from a requirements file only
            given = Path(tmp) / "requirements.txt"
            given.write_text("".join(f"{line}\n" for line in requirements))
        request = BackendRequest(
            python=env.executable,
            requirements=requirements,
            requirements_file=given,
            index_url=options.index_url,
            constraints=constraints,
            dry_run=options.dry_run,
            environ=options.environ,
            offline=options.offline,
            extra_index_urls=options.extra_index_urls,
            upgrade=options.upgrade,
            reinstall=options.reinstall,
            no_deps=options.no_deps,
            find_links=indexes.find_links,
            no_index=indexes.no_index or options.no_index,
            require_hashes=options.require_hashes,
        )
        if options.dry_run:
            notes += pending_recovery(env.prefix, env.markers)
            result = installer.install(request)
            if not result.ok:
                raise BackendError(_explain(installer.name, result, wanted.blocked))
        else:
            with env_lock(env.prefix, on_wait=_lock_waiting(options.progress, env.prefix)):
                notes += recover_interrupted(env.prefix, env.install_dirs, env.markers, options.recover)
                preview = None if options.reinstall else _preview(installer, request, wheels, env)
                if preview is not None and preview.ok and not preview.installs and not preview.removes:
                    return InstallResult(
                        plan, installer.name, options.index_url, tuple(wheels), (), (), False, tuple(notes)
                    )
                result = _run(installer, request, wanted, env, options, preview)
    return InstallResult(
        plan, installer.name, options.index_url, tuple(wheels), result.installs, result.removes, options.dry_run,
        tuple(notes), (result.stderr + result.stdout).strip(),
    )  # fmt: skip


def _run(
    installer: Installer,
    request: BackendRequest,
    wanted: InstallSet,
    env: TargetEnv,
    options: BackendOptions,
    preview: BackendResult | None,
) -> BackendResult:
    """The backend's install, inside a snapshot restored if it fails or is interrupted (when snapshots are on)."""
    if not options.snapshot:
        result = installer.install(request)
        if not result.ok:
            raise BackendError(_explain(installer.name, result, wanted.blocked, restored=False))
        return result
    expected = None if preview is None or not preview.ok else _names(preview)
    snapshot = Snapshot(
        env.install_dirs, env.prefix / f"{SNAPSHOT_PREFIX}{os.getpid()}",
        installing=request.requirements, expected=expected,
    )  # fmt: skip
    try:
        result = installer.install(request)
    except BaseException:
        snapshot.restore(f"the {installer.name} install was interrupted")
        raise
    if not result.ok:
        snapshot.restore(f"{installer.name} failed ({result.last_error()})")
        raise BackendError(_explain(installer.name, result, wanted.blocked))
    snapshot.discard()
    return result


def recover_first(
    env: TargetEnv,
    environ: Mapping[str, str],
    *,
    recover: str | None,
    dry_run: bool,
    progress: ProgressCallback | None = None,
) -> tuple[TargetEnv, list[str]]:
    """Deal with an earlier install into ``env`` that was killed midway before anything is planned, and describe
    the environment again if that changed it: the plan (what is installed already, what is kept) must be made for
    the environment as the install will find it. A dry run changes nothing (:func:`install_plan` says what a real
    install would do)."""
    if dry_run or not interrupted(env.prefix):
        return env, []
    with env_lock(env.prefix, on_wait=_lock_waiting(progress, env.prefix)):
        notes = recover_interrupted(env.prefix, env.install_dirs, env.markers, recover)
    return (inspect_env(env.executable, environ) if notes else env), notes


def _preview(
    installer: Installer, request: BackendRequest, wheels: Sequence[FamilyFile], env: TargetEnv
) -> BackendResult | None:
    """The backend's dry run of this install, to see whether it changes nothing.

    Asked only when a planned torch-family package is installed already (a re-run, CI on a cached
    environment): the rollback snapshot links every file of the environment (some 12,000 with torch, ~0.8 s
    to take and drop) and a re-run that changes nothing needs none. A fresh environment skips the question.
    """
    have = {canonicalize_name(name) for name in env.installed}
    if not any(canonicalize_name(w.name) in have for w in wheels):
        return None
    return installer.install(replace(request, dry_run=True))


def _names(preview: BackendResult) -> list[str]:
    """The distribution names a dry run would install or remove (``torch==2.15.0``, ``torch @ file:///...``)."""
    return [re.split(r"==| @ ", item, maxsplit=1)[0].strip() for item in (*preview.installs, *preview.removes)]


def _lock_waiting(progress: ProgressCallback | None, prefix: Path) -> Callable[[], None] | None:
    """Tell the user why the install pauses: another wheelfit install into this environment holds its lock."""
    if progress is None:
        return None
    report = progress

    def waiting() -> None:
        from ..fetch.wheels import Progress

        report(Progress(str(prefix / ".wheelfit.lock"), "stalled", detail=f"another wheelfit install into {prefix}"))

    return waiting


def _explain(backend: str, result: BackendResult, blocked: Sequence[str], restored: bool = True) -> str:
    """One line; names the torch-family package a dependency wanted from the default index, if that was it."""
    error = result.last_error()
    text = result.stdout + "\n" + result.stderr
    for name in blocked:
        if re.search(rf"(?<![\w-]){re.escape(canonicalize_name(name))}\s*<\s*0\b", text):
            return (
                f"a dependency needs {name}, a torch-family package that wheelfit takes only from the variant "
                f"index and the plan does not include; nothing was installed ({backend}: {error})"
            )
    if not restored:
        return f"{backend} failed; without a snapshot, what it installed before failing stays ({error})"
    return f"{backend} failed; the environment was left as it was ({error})"
