"""One install, start to end: fetch and check the torch-family wheels, then hand everything to the backend
inside a snapshot that is restored if anything fails.

Under the environment's lock (one install at a time; a second one waits, and says so), an earlier install that was
killed midway is dealt with first (:func:`~.transaction.recover_interrupted`), and the snapshot records what this
install was asked for (and, when the installer's dry run was asked anyway, what it would change), so that a later
recovery can tell this install's changes from anyone else's."""

from __future__ import annotations

import os
import re
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from ..index.local import backend_index
from ..resolve.plan import Plan
from .backend import BackendRequest, BackendResult, Installer, constraints_text
from .errors import BackendError
from .family import TORCH_FAMILY
from .gather import FetchedWheel, LocalFiles, WheelSource, gather_family
from .prefetch import warm_backend_cache
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
    from ..fetch.download import ProgressCallback

__all__ = ["InstallOptions", "InstallResult", "install_plan", "recover_first"]


@dataclass(frozen=True)
class InstallOptions:
    """How to install, beyond the plan: what else to install from where, and pip's and uv's switches."""

    #: The only index for everything that is not torch-family.
    index_url: str
    environ: Mapping[str, str]
    #: Requirements that are not torch-family, as the user wrote them (for ``index_url``).
    extra: tuple[str, ...] = ()
    #: More indexes for what is not torch-family (``--extra-index-url``).
    extra_index_urls: tuple[str, ...] = ()
    #: The user's constraints on what is not torch-family (``-c``), as lines of a constraints file.
    constraints: tuple[str, ...] = ()
    #: Extras asked for on a torch-family package: ``{"torch": ("opt-einsum",)}``.
    extras: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    dry_run: bool = False
    offline: bool = False
    upgrade: bool = False
    reinstall: bool = False
    no_deps: bool = False
    #: ``--find-links`` wheelhouses for what is not torch-family (torch-family: :class:`LocalFiles`).
    find_links: tuple[str, ...] = ()
    #: ``--no-index``: nothing from the default index, only ``find_links`` (and the plan's torch-family files).
    no_index: bool = False
    #: Torch-family packages installed already that stay as they are (name -> version): PyPI's torch that runs
    #: here, kept under a plan for its companions.
    keep: Mapping[str, str] = field(default_factory=dict)
    #: ``--recover``: an interrupted earlier install when the environment changed since: ``restore`` its snapshot
    #: (undoing the later changes too) or ``keep`` the environment as it is; ``None`` restores only if nothing
    #: else changed, else stops and asks.
    recover: str | None = None
    #: Told (as a ``stalled`` event) when another wheelfit install holds the environment's lock.
    progress: ProgressCallback | None = None


@dataclass(frozen=True)
class InstallResult:
    #: ``None`` when nothing torch-family was asked for (``wheelfit install tinydep``).
    plan: Plan | None
    backend: str
    index_url: str
    wheels: tuple[FetchedWheel, ...]
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


def install_plan(
    plan: Plan | None,
    env: TargetEnv,
    source: WheelSource | None,
    installer: Installer,
    options: InstallOptions,
    local: LocalFiles | None = None,
) -> InstallResult:
    """Install ``plan`` (plus ``options.extra`` from the default index) into ``env``, or with ``options.dry_run``
    say what that would do and change nothing in ``env``.

    Every torch-family name the plan does not bring is kept off the default index by the constraints file: at
    the version installed already (a dependency may use it), else at none. ``plan=None`` installs the other
    requirements alone, under the same constraints.
    """
    pins = [] if plan is None else [Requirement(p.requirement) for p in plan.packages]
    with warm_backend_cache(
        pins, source, env, installer.name, index_url=options.index_url, environ=options.environ,
        extra=options.extra, extra_index_urls=options.extra_index_urls, constraints=options.constraints,
        find_links=options.find_links, enabled=not (options.dry_run or options.offline or options.no_deps),
    ) as warming:  # fmt: skip
        wheels = (
            gather_family(pins, source, env, local, options.keep, opened=warming.unpack)
            if pins and source is not None
            else []
        )
    taken = {w.name for w in wheels}
    installed: dict[str, str] = {canonicalize_name(n): v for n, v in env.installed.items()}
    blocked = sorted(n for n in TORCH_FAMILY if n not in taken and n not in installed)
    kept = {n: installed[n] for n in TORCH_FAMILY if n not in taken and n in installed}
    indexes = backend_index(options.index_url, options.find_links)  # a local default index: as uv/pip take it
    with tempfile.TemporaryDirectory(prefix="wheelfit-") as tmp:
        constraints = Path(tmp) / "constraints.txt"
        constraints.write_text(constraints_text(blocked, kept) + "".join(f"{c}\n" for c in options.constraints))
        request = BackendRequest(
            python=env.executable,
            requirements=(*(_direct(w, options.extras) for w in wheels), *options.extra),
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
        )
        notes: list[str] = [
            f"{w.file.filename}: taken from the wheelhouse {w.wheelhouse} (the planned file; sha256 "
            f"{w.file.hashes.get('sha256')} computed, archive checked), not downloaded"
            for w in wheels
            if w.wheelhouse is not None
        ]
        notes += [warning for w in wheels for warning in w.warnings]  # PEP 592: a yanked file, said
        if not request.requirements:  # PyPI's torch kept, nothing else asked for: nothing to hand over
            return InstallResult(plan, installer.name, options.index_url, (), (), (), options.dry_run, tuple(notes))
        if options.dry_run:
            notes += pending_recovery(env.prefix, env.markers)
            result = installer.install(request)
            if not result.ok:
                raise BackendError(_explain(installer.name, result, blocked))
        else:
            with env_lock(env.prefix, on_wait=_lock_waiting(options.progress, env.prefix)):
                notes += recover_interrupted(env.prefix, env.install_dirs, env.markers, options.recover)
                preview = None if options.reinstall else _preview(installer, request, wheels, env)
                if preview is not None and preview.ok and not preview.installs and not preview.removes:
                    return InstallResult(
                        plan, installer.name, options.index_url, tuple(wheels), (), (), False, tuple(notes)
                    )
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
                    raise BackendError(_explain(installer.name, result, blocked))
                snapshot.discard()
    return InstallResult(
        plan, installer.name, options.index_url, tuple(wheels), result.installs, result.removes, options.dry_run,
        tuple(notes), (result.stderr + result.stdout).strip(),
    )  # fmt: skip


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


def _direct(wheel: FetchedWheel, extras: Mapping[str, tuple[str, ...]]) -> str:
    """``torch[opt-einsum] @ file:///...``: the fetched file, with the extras the user asked for on it."""
    asked = extras.get(canonicalize_name(wheel.name), ())
    if not asked:
        return wheel.requirement
    return f"{wheel.name}[{','.join(sorted(asked))}] @ {wheel.path.resolve().as_uri()}"


def _preview(
    installer: Installer, request: BackendRequest, wheels: Sequence[FetchedWheel], env: TargetEnv
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
        from ..fetch.download import Progress  # only when waiting: a run that never waits need not import it

        report(Progress(str(prefix / ".wheelfit.lock"), "stalled", detail=f"another wheelfit install into {prefix}"))

    return waiting


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
