"""All or nothing: a hard-link snapshot of the target's install directories, put back file by file if the install
fails, and finished by the next run if wheelfit is killed.

Why a snapshot: pip rolls back only the distribution that failed (the ones before it stay installed: pip
``req/__init__.py::install_given_reqs``), and uv has no multi-package rollback (astral-sh/uv ``crates/uv-installer``).
Why hard links: both installers replace a file by writing a new one, never by rewriting it in place, so a link keeps
the old contents at no copy cost, and a full disk needs no space to take or restore it. The links go beside the
manifest in ``<prefix>/.wheelfit-rollback-<pid>/<i>``, unless a protected directory is on another volume than the
prefix (a container volume or tmpfs mounted at site-packages): then into a hidden ``.wheelfit-rollback-<pid>-<i>``
inside it, on its own volume, where linking still works (a copy of a CUDA torch would take gigabytes and
minutes). Not there always: ``uv pip install --compile-bytecode`` compiles the whole of site-packages, hidden
directories too (astral-sh/uv#2637).

Why file by file: the protected directory itself is never renamed or removed. It may be a mount point (``EBUSY``),
its parent may not be writable by the user (``PermissionError``); renaming it also loses a bind mount or an open
handle. Restoring removes only the entries inside that are not as they were (what the install added, first, which
frees space) and links back the ones it replaced or removed, so the directory keeps its inode, mount and mode and
every unchanged file keeps its inode. A step that fails does not stop the others: the error names what could not
be put back (a few paths and the count, and the distributions they belong to) and the snapshot is kept, so the next
``wheelfit install`` finishes the rollback, or ``--recover keep`` drops it: a leftover never blocks for good.

Why a manifest with each file's inode, size and mtime and what the install was asked for: a run killed midway
(SIGKILL, out of memory) leaves its snapshot for the next run, but the environment may have moved on since (the user
ran ``pip install``). Recovery compares the distributions now with those at snapshot time; a change the killed
install could not have made (a distribution outside what it was asked for and their dependencies) stops recovery
with one line instead of being undone, until ``--recover restore`` or ``--recover keep`` says which to do.

Files an install writes outside these directories (``.data/data`` into the prefix) are not covered.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import shutil
import stat
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from email.parser import HeaderParser
from pathlib import Path
from typing import Any

from packaging.markers import InvalidMarker, UndefinedComparison, UndefinedEnvironmentName
from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name

from ..fetch.cache import atomic_write
from ..locking import file_lock
from .errors import InstallError

__all__ = [
    "RECOVER_CHOICES",
    "SNAPSHOT_PREFIX",
    "RollbackError",
    "Snapshot",
    "env_lock",
    "interrupted",
    "pending_recovery",
    "recover_interrupted",
]

#: ``<prefix>/.wheelfit-rollback-<pid>``: a running install's snapshot (its manifest, and its links unless they are
#: in ``<install dir>/.wheelfit-rollback-<pid>-<i>``, on another volume).
SNAPSHOT_PREFIX = ".wheelfit-rollback-"
#: ``--recover``: what to do with an interrupted install's snapshot when the environment changed since.
RECOVER_CHOICES = ("restore", "keep")
_MANIFEST = "snapshot.json"
_FORMAT = 2
#: Paths named in a failed rollback's message (then the count of the rest).
_SHOWN = 5
_LINK_FALLBACK = (errno.EXDEV, errno.EPERM, errno.EMLINK, errno.ENOTSUP, errno.EACCES)

#: One path of a protected directory: ``["f", inode, size, mtime_ns]``, ``["l", target]``, ``["d", mode]`` or
#: ``["o"]`` (a socket or FIFO: left alone).
Entry = list[Any]


class RollbackError(InstallError):
    """Putting the environment back failed part-way; the snapshot is kept so that a later run can finish it."""


class UntrustedSnapshotError(InstallError):
    """A snapshot's manifest cannot be read, or names paths outside its environment or its own copies."""


def _checked_dirs(raw: Any, workdir: Path) -> list[_Saved]:
    """The manifest's directories, each checked before use: every copy is one this snapshot made
    (``<workdir>/<i>``, or ``<dir>/<workdir name>-<i>`` on another volume), every entry a well-formed relative path
    that stays inside its directory."""
    if not isinstance(raw, list):
        raise TypeError("its directories are not a list")
    out: list[_Saved] = []
    for i, item in enumerate(raw):
        well_formed = isinstance(item, dict) and isinstance(item.get("path"), str)
        if not well_formed or not isinstance(item.get("entries"), dict):
            raise TypeError(f"directory {i} is malformed")
        saved = _Saved.from_json(item)
        same = item.get("same_as")
        if same is not None and not (isinstance(same, int) and 0 <= same < i):
            raise ValueError(f"directory {i} names another that is not before it")
        if saved.copy is not None and saved.copy not in (workdir / str(i), saved.path / f"{workdir.name}-{i}"):
            raise ValueError(f"copy {str(saved.copy)[:120]!r} is not one the snapshot made")
        for rel, entry in item["entries"].items():
            if not rel or os.path.isabs(rel) or ".." in Path(rel).parts or "\\" in rel or "\0" in rel:
                raise ValueError(f"entry {rel[:120]!r} leaves its directory")
            if not (isinstance(entry, list) and entry and entry[0] in ("f", "l", "d", "o")):
                raise TypeError(f"entry {rel[:120]!r} is malformed")
            if entry[0] == "l" and not (len(entry) == 2 and isinstance(entry[1], str)):
                raise TypeError(f"link {rel[:120]!r} is malformed")
        out.append(saved)
    return out


def _why(exc: OSError) -> str:
    return f"{exc.strerror or type(exc).__name__}: {exc.filename}" if exc.filename else str(exc)


def _link_or_copy(src: str, dst: str) -> None:
    try:
        os.link(src, dst, follow_symlinks=False)
    except OSError as exc:
        if exc.errno not in _LINK_FALLBACK:
            raise
        shutil.copy2(src, dst, follow_symlinks=False)


@dataclass
class _Saved:
    """One protected directory as it was."""

    path: Path
    existed: bool
    #: Its link tree (``None`` if it did not exist, or is another entry's directory under a second name).
    copy: Path | None = None
    entries: dict[str, Entry] = field(default_factory=dict)
    #: Index of the entry that is the same directory (``lib64`` a link to ``lib``): restored once, there.
    same_as: int | None = None

    def to_json(self) -> dict[str, Any]:
        copy = None if self.copy is None else str(self.copy)
        return {"path": str(self.path), "existed": self.existed, "copy": copy, "same_as": self.same_as,
                "entries": self.entries}  # fmt: skip

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> _Saved:
        copy = data["copy"]
        return cls(Path(data["path"]), bool(data["existed"]), None if copy is None else Path(copy),
                   dict(data["entries"]), data["same_as"])  # fmt: skip


class Snapshot:
    """The state of ``dirs`` when taken; ``restore()`` puts it back, ``discard()`` drops it.

    ``installing`` (requirement strings) and ``expected`` (names the installer's dry run said it would change, if
    it was asked) are what this install may change: recovery after a kill undoes nothing else.
    """

    def __init__(
        self,
        dirs: Sequence[Path],
        workdir: Path,
        *,
        installing: Sequence[str] = (),
        expected: Sequence[str] | None = None,
    ) -> None:
        self.workdir = workdir
        self.saved: list[_Saved] = []
        self.installing = tuple(installing)
        self.expected = None if expected is None else tuple(expected)
        try:
            workdir.mkdir(parents=True)  # first: a workdir without a manifest is a snapshot cut short
            seen: dict[str, int] = {}
            for i, d in enumerate(dirs):
                real = os.path.realpath(d)
                if not d.is_dir():
                    self.saved.append(_Saved(d, existed=False))
                elif real in seen:
                    self.saved.append(_Saved(d, existed=True, same_as=seen[real]))
                else:
                    seen[real] = i
                    same_volume = os.stat(d).st_dev == os.stat(workdir).st_dev
                    copy = workdir / str(i) if same_volume else d / f"{workdir.name}-{i}"
                    self.saved.append(_Saved(d, existed=True, copy=copy))
                    copy.mkdir()
                    self.saved[-1].entries = _take(d, copy)
            # Written last: a snapshot without it was cut short before the installer ran, and is only deleted.
            atomic_write(workdir / _MANIFEST, json.dumps(self._manifest()).encode())
        except KeyboardInterrupt:
            self.discard()  # Ctrl-C while linking: the installer has not run, the environment is as it was
            raise
        except OSError as exc:
            self.discard()
            raise InstallError(
                f"cannot take the rollback snapshot in {workdir.parent} ({_why(exc)}); nothing was installed. "
                "Is the environment writable by you? A virtual environment of your own always is"
            ) from exc

    def _manifest(self) -> dict[str, Any]:
        return {"format": _FORMAT, "dirs": [s.to_json() for s in self.saved], "installing": list(self.installing),
                "expected": None if self.expected is None else list(self.expected)}  # fmt: skip

    @property
    def dirs(self) -> list[Path]:
        return [s.path for s in self.saved]

    @classmethod
    def load(cls, workdir: Path) -> Snapshot | None:
        """A snapshot a run left behind, or None if it was cut short (no manifest: the installer never ran).

        The manifest is not trusted: its paths drive deletions and links. One that cannot be read, or names a
        copy outside its own snapshot or an entry that climbs out of its directory, raises
        :class:`UntrustedSnapshotError`; the snapshot is then kept as it is, never deleted."""
        snapshot = cls.__new__(cls)
        snapshot.workdir = workdir
        manifest = workdir / _MANIFEST
        if not manifest.exists():
            return None
        try:
            data = json.loads(manifest.read_bytes())
            if not isinstance(data, dict):
                raise TypeError("not a JSON object")
            if data.get("format") == _FORMAT:
                snapshot.saved = _checked_dirs(data["dirs"], workdir)
                snapshot.installing = tuple(str(r) for r in data["installing"])
                expected = data["expected"]
                snapshot.expected = None if expected is None else tuple(str(n) for n in expected)
            else:  # wheelfit before 2026-12: whole link trees in the workdir, nothing known of the install
                snapshot.installing, snapshot.expected = (), None
                snapshot.saved = []
                for d, c in data["saved"]:
                    copy = None if c is None else workdir / str(c)
                    saved = _Saved(Path(d), existed=copy is not None, copy=copy)
                    saved.entries = {} if copy is None else _scan(copy)
                    snapshot.saved.append(saved)
        except (OSError, ValueError, KeyError, TypeError, AttributeError, IndexError) as exc:
            raise UntrustedSnapshotError(
                f"the rollback snapshot {manifest} cannot be trusted ({str(exc)[:200]}); it was kept, nothing was "
                f"restored or deleted: check the environment, then move {workdir} away"
            ) from None
        return snapshot

    def restore(self, why: str | None = None) -> None:
        """Put every protected directory's entries back as they were; the directories themselves stay in place.

        Raises :class:`RollbackError` (the snapshot kept) naming what could not be put back, after ``why`` (what
        the rollback was for: ``uv failed (...)``) when given.
        """
        failed: list[tuple[Path, str]] = []
        for saved in self.saved:
            if saved.same_as is not None:
                continue
            if not saved.existed:  # created by the install: it goes, as everything it holds
                if os.path.lexists(saved.path):
                    try:
                        shutil.rmtree(saved.path)
                    except OSError as exc:
                        failed.append((saved.path, exc.strerror or str(exc)))
                continue
            if saved.copy is None or not saved.copy.is_dir():
                failed.append((saved.path, f"the snapshot's copy {saved.copy} is missing"))
                continue
            _clear(saved.path, saved.entries, failed)
            _put_back(saved.path, saved.copy, saved.entries, failed)
        if failed:
            raise RollbackError(f"{why}, and {self._unfinished(failed)}" if why else self._unfinished(failed))
        self.discard()

    def _unfinished(self, failed: Sequence[tuple[Path, str]]) -> str:
        shown = ", ".join(str(p) for p, _ in failed[:_SHOWN])
        more = f" and {len(failed) - _SHOWN} more" if len(failed) > _SHOWN else ""
        owners = _owners([p for p, _ in failed], self.saved)
        dists = f"; {', '.join(owners)} may be incomplete or mixed" if owners else ""
        return (
            f"the rollback could not put back {len(failed)} path(s) ({failed[0][1]}): {shown}{more}{dists}. "
            f"The state before the install is kept in {self.workdir}: fix the cause and run wheelfit install again "
            "into this environment, which finishes the rollback first, or pass --recover keep to keep the "
            "environment as it is now"
        )

    def discard(self) -> None:
        """Drop the snapshot: the manifest first, so that a run killed meanwhile leaves only a cut-short one."""
        with contextlib.suppress(OSError):
            (self.workdir / _MANIFEST).unlink(missing_ok=True)
        for saved in self.saved:
            if saved.copy is not None:
                shutil.rmtree(saved.copy, ignore_errors=True)
        shutil.rmtree(self.workdir, ignore_errors=True)

    def changes_by_others(self, markers: Mapping[str, str]) -> list[str]:
        """Distributions added, removed or changed since the snapshot that its install could not have touched: not
        asked for, not in the installer's dry run, and no dependency (by the new ``METADATA``) of those."""
        before: dict[str, Entry | None] = {}
        now: dict[str, tuple[Path, Entry | None]] = {}
        for saved in self.saved:
            if saved.same_as is not None:
                continue
            for rel, entry in saved.entries.items():
                if _is_dist_info(rel) and entry[0] == "d":
                    before[rel] = saved.entries.get(f"{rel}{os.sep}RECORD")
            for item in _listdir(saved.path):
                if _is_dist_info(item.name) and item.is_dir(follow_symlinks=False):
                    record = Path(item.path) / "RECORD"
                    now[item.name] = (Path(item.path), _entry(record) if record.exists() else None)
        added = [n for n in now if n not in before]
        removed = [n for n in before if n not in now]
        changed = [n for n in now if n in before and now[n][1] != before[n]]
        explained = self._explained({_dist_name(n): now[n][0] for n in (*added, *changed)}, markers)
        words = [(added, "installed"), (removed, "removed"), (changed, "changed")]
        return [
            f"{_dist_label(n)} {word}" for names, word in words for n in sorted(names) if _dist_name(n) not in explained
        ]

    def _explained(self, new: Mapping[str, Path], markers: Mapping[str, str]) -> set[str]:
        """Names this install may have changed: those asked for and dry-run, and what they need by ``new``'s
        metadata (a dist-info directory by name), transitively."""
        extras: dict[str, set[str]] = {}
        for text in self.installing:
            with contextlib.suppress(InvalidRequirement):
                req = Requirement(text)
                extras.setdefault(canonicalize_name(req.name), set()).update(req.extras)
        names = set(extras) | {canonicalize_name(n) for n in self.expected or ()}
        pending = list(names)
        while pending:
            name = pending.pop()
            if name not in new:
                continue
            for req in _requires(new[name]):
                dep = canonicalize_name(req.name)
                if not _applies(req, markers, extras.get(name, set())):
                    continue
                grew = dep not in names or not set(req.extras) <= extras.get(dep, set())
                extras.setdefault(dep, set()).update(req.extras)
                if grew:
                    names.add(dep)
                    pending.append(dep)
        return names


def _take(root: Path, copy: Path) -> dict[str, Entry]:
    """Link every entry of ``root`` into ``copy`` (parents first) and note what each was."""
    entries: dict[str, Entry] = {}
    pending = [""]
    while pending:  # string joins, not os.path.join: this runs for each of the ~12,000 files of a torch env
        rel = pending.pop()
        under = f"{rel}{os.sep}" if rel else ""
        into = f"{copy}{os.sep}{under}"
        for item in _listdir(root / rel, strict=True):
            if not rel and item.name.startswith(SNAPSHOT_PREFIX):
                continue
            r = under + item.name
            entry = entries[r] = _entry_of(item.stat(follow_symlinks=False), item.path)
            dst = into + item.name
            if entry[0] == "l":
                os.symlink(entry[1], dst, target_is_directory=item.is_dir())
            elif entry[0] == "d":
                os.mkdir(dst)
                pending.append(r)
            elif entry[0] == "f":
                _link_or_copy(item.path, dst)
    return entries


def _scan(copy: Path) -> dict[str, Entry]:
    """The entries of a link tree (an old snapshot without a list): a link has its original's inode."""
    entries: dict[str, Entry] = {}
    pending = [""]
    while pending:
        rel = pending.pop()
        for item in _listdir(copy / rel, strict=True):
            r = os.path.join(rel, item.name)
            entries[r] = _entry(Path(item.path))
            if entries[r][0] == "d":
                pending.append(r)
    return entries


def _entry(path: Path) -> Entry:
    return _entry_of(path.lstat(), path)


def _entry_of(st: os.stat_result, path: str | Path) -> Entry:
    """What a path is, as the manifest notes it (:data:`Entry`), from its ``lstat``."""
    if stat.S_ISLNK(st.st_mode):
        return ["l", os.readlink(path)]
    if stat.S_ISDIR(st.st_mode):
        return ["d", stat.S_IMODE(st.st_mode)]
    if stat.S_ISREG(st.st_mode):
        return ["f", st.st_ino, st.st_size, st.st_mtime_ns]
    return ["o"]


def _listdir(directory: Path, strict: bool = False) -> list[os.DirEntry[str]]:
    try:
        with os.scandir(directory) as it:
            return list(it)
    except OSError:
        if strict:
            raise
        return []


def _unchanged(st: os.stat_result, path: str, want: Entry | None) -> bool:
    if want is None:
        return False
    if want[0] == "o":
        return True
    if want[0] == "f":
        return stat.S_ISREG(st.st_mode) and [st.st_ino, st.st_size, st.st_mtime_ns] == want[1:]
    if want[0] == "l":
        return stat.S_ISLNK(st.st_mode) and os.readlink(path) == want[1]
    return stat.S_ISDIR(st.st_mode)


def _clear(root: Path, entries: Mapping[str, Entry], failed: list[tuple[Path, str]]) -> None:
    """Remove every entry under ``root`` that is not as it was (added, replaced, another kind); directories that
    were there are kept and looked into."""
    pending = [""]
    while pending:
        rel = pending.pop()
        try:
            items = _listdir(root / rel, strict=True)
        except OSError as exc:
            failed.append((root / rel, exc.strerror or str(exc)))
            continue
        for item in items:
            if not rel and item.name.startswith(SNAPSHOT_PREFIX):
                continue
            r = os.path.join(rel, item.name)
            want = entries.get(r)
            try:
                st = item.stat(follow_symlinks=False)
                if stat.S_ISDIR(st.st_mode) and want is not None and want[0] == "d":
                    pending.append(r)
                elif stat.S_ISDIR(st.st_mode):
                    shutil.rmtree(item.path)
                elif not _unchanged(st, item.path, want):
                    os.unlink(item.path)
            except OSError as exc:
                failed.append((Path(item.path), exc.strerror or str(exc)))


def _put_back(root: Path, copy: Path, entries: Mapping[str, Entry], failed: list[tuple[Path, str]]) -> None:
    """Link back every entry that is missing (parents come first in ``entries``)."""
    for r, want in entries.items():
        dst = os.path.join(root, r)
        try:
            if want[0] == "d":
                if not os.path.isdir(dst) or os.path.islink(dst):
                    os.mkdir(dst)
                    os.chmod(dst, want[1])
            elif want[0] == "o" or os.path.lexists(dst):
                continue  # unchanged, or left by a removal that failed (counted there)
            elif want[0] == "l":
                os.symlink(want[1], dst)
            else:
                _put_file(os.path.join(copy, r), dst)
        except OSError as exc:
            failed.append((Path(dst), exc.strerror or str(exc)))


def _put_file(src: str, dst: str) -> None:
    """The original file back: its own inode when the snapshot linked it, else a copy that appears whole."""
    try:
        os.link(src, dst, follow_symlinks=False)
        return
    except OSError as exc:
        if exc.errno not in _LINK_FALLBACK:
            raise
    tmp = os.path.join(os.path.dirname(dst), f".{os.path.basename(dst)}.wheelfit-restore")
    try:
        shutil.copy2(src, tmp, follow_symlinks=False)
        os.replace(tmp, dst)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def _is_dist_info(rel: str) -> bool:
    return os.sep not in rel and rel.endswith((".dist-info", ".egg-info"))


def _dist_name(dist_info: str) -> str:
    """``Foo_Bar-1.0.dist-info`` -> ``foo-bar`` (the directory's name is ``{name}-{version}``, PEP 427/491)."""
    return canonicalize_name(dist_info.rsplit(".", 1)[0].split("-", 1)[0])


def _dist_label(dist_info: str) -> str:
    name, _, version = dist_info.rsplit(".", 1)[0].partition("-")
    version = version.split("-", 1)[0]  # egg-info: name-version-py3.11
    return f"{name} {version}".strip()


def _requires(dist_info: Path) -> Iterable[Requirement]:
    try:
        headers = HeaderParser().parsestr((dist_info / "METADATA").read_text(encoding="utf-8", errors="replace"))
    except OSError:
        return []
    found = []
    for text in headers.get_all("Requires-Dist") or []:
        with contextlib.suppress(InvalidRequirement):
            found.append(Requirement(text))
    return found


def _applies(req: Requirement, markers: Mapping[str, str], extras: set[str]) -> bool:
    if req.marker is None:
        return True
    for extra in ("", *sorted(extras)):
        with contextlib.suppress(InvalidMarker, UndefinedComparison, UndefinedEnvironmentName):
            if req.marker.evaluate({**markers, "extra": extra}):
                return True
    return False


def _owners(paths: Sequence[Path], saved: Sequence[_Saved]) -> list[str]:
    """``torch 2.15.0+cpu``, ...: the distributions (before the install or after it) whose RECORD lists a path."""
    by_path: dict[str, str] = {}
    for s in saved:
        trees = [t for t in (s.copy, s.path) if t is not None and t.is_dir()]
        for tree in trees:
            for item in _listdir(tree):
                if not item.name.endswith(".dist-info"):
                    continue
                with contextlib.suppress(OSError):
                    for line in (Path(item.path) / "RECORD").read_text(encoding="utf-8", errors="replace").splitlines():
                        member = line.rsplit(",", 2)[0].strip('"')
                        by_path.setdefault(os.path.normpath(os.path.join(s.path, member)), _dist_label(item.name))
    found: list[str] = []
    for path in paths[:1000]:  # the first thousand say enough, and bound the work
        key = os.path.normpath(path)
        owner = by_path.get(key)
        if owner is None and os.path.isdir(key):  # a directory that could not be removed: whose files it holds
            owner = next((o for p, o in by_path.items() if p.startswith(key + os.sep)), None)
        if owner and owner not in found:
            found.append(owner)
    return found


def interrupted(prefix: Path) -> list[Path]:
    """Snapshots left in ``prefix`` by a run that died mid-install (meaningful only under :func:`env_lock`)."""
    return sorted(p for p in prefix.glob(f"{SNAPSHOT_PREFIX}*") if p.is_dir())


def pending_recovery(prefix: Path, markers: Mapping[str, str]) -> list[str]:
    """What a real install would first do about interrupted installs (for a dry run, which changes nothing)."""
    notes = []
    for workdir in interrupted(prefix):
        snapshot = Snapshot.load(workdir)
        if snapshot is None:
            continue
        moved = snapshot.changes_by_others(markers)
        if moved:
            notes.append(
                f"an earlier wheelfit install into {prefix} was interrupted and the environment changed since "
                f"({_listed(moved)}); a real install stops until --recover restore or --recover keep says what to do"
            )
        else:
            notes.append(
                f"an earlier wheelfit install into {prefix} was interrupted; a real install first puts the "
                "environment back as it was before it"
            )
    return notes


def _listed(items: Sequence[str]) -> str:
    more = f" and {len(items) - _SHOWN} more" if len(items) > _SHOWN else ""
    return ", ".join(items[:_SHOWN]) + more


def recover_interrupted(
    prefix: Path, install_dirs: Sequence[Path], markers: Mapping[str, str], recover: str | None = None
) -> list[str]:
    """Put the environment back as it was before an install that was killed midway; call with the lock held.

    Only a complete snapshot of exactly these install directories is restored; one cut short while it was
    being taken (the installer had not started) is deleted. If the environment changed since in a way the killed
    install could not have (``pip install`` of something else), nothing is restored unless ``recover`` says
    ``restore`` (put it back, undoing that too) or ``keep`` (leave it as it is, drop the snapshot).
    """
    if not interrupted(prefix):
        return []
    # The killed wheelfit's backend may still be running (uv outlives a SIGKILLed parent): wait until it is done,
    # by taking the lock uv holds on the environment while it installs, before any file is put back.
    with file_lock(prefix / ".lock", timeout=BACKEND_WAIT, what="the environment (held by a uv still installing)"):
        return _recover(prefix, install_dirs, markers, recover)


#: Seconds to wait for an orphaned backend to finish before recovery gives up (a torch install takes minutes).
BACKEND_WAIT = 600.0


def _recover(
    prefix: Path, install_dirs: Sequence[Path], markers: Mapping[str, str], recover: str | None
) -> list[str]:
    notes: list[str] = []
    for workdir in interrupted(prefix):
        snapshot = Snapshot.load(workdir)
        if snapshot is None:
            _drop_cut_short(workdir, install_dirs)
            continue
        if snapshot.dirs != list(install_dirs):
            raise InstallError(
                f"{workdir} is a rollback snapshot of other directories than this environment's; "
                "move it away and check the environment before installing into it"
            )
        earlier = f"an earlier wheelfit install into {prefix} was interrupted"
        if recover == "keep":
            snapshot.discard()
            notes.append(f"{earlier}; the environment was kept as it is (--recover keep) and its snapshot deleted")
            continue
        moved = [] if recover == "restore" else snapshot.changes_by_others(markers)
        if moved:
            raise InstallError(
                f"{earlier}, and the environment changed since in ways that install did not make "
                f"({_listed(moved)}); nothing was done. Pass --recover restore to put it back as it was before "
                "that install (undoing those changes too) or --recover keep to keep it as it is"
            )
        snapshot.restore(earlier)
        notes.append(f"{earlier}; the environment was first put back as it was before it ({workdir.name})")
    for d in install_dirs:  # link trees whose manifest is gone (removed by hand): nothing can use them
        for tree in d.glob(f"{SNAPSHOT_PREFIX}*"):
            if not (prefix / tree.name.rsplit("-", 1)[0]).exists():
                shutil.rmtree(tree, ignore_errors=True)
    return notes


def _drop_cut_short(workdir: Path, install_dirs: Sequence[Path]) -> None:
    for i, d in enumerate(install_dirs):
        shutil.rmtree(d / f"{workdir.name}-{i}", ignore_errors=True)
    shutil.rmtree(workdir, ignore_errors=True)


def env_lock(
    prefix: Path,
    timeout: float = 300.0,
    on_wait: Callable[[], None] | None = None,
    cancelled: Callable[[], bool] | None = None,
) -> contextlib.AbstractContextManager[None]:
    """One wheelfit install per environment at a time (``<prefix>/.wheelfit.lock``; uv itself locks
    ``<prefix>/.lock``, so the name must differ): :func:`wheelfit.locking.file_lock`, as the cache's."""
    path = prefix / ".wheelfit.lock"

    def cannot_open(exc: OSError) -> InstallError:
        return InstallError(
            f"cannot create the lock file {path} ({_why(exc)}); nothing was installed. "
            "Is the environment writable by you? A virtual environment of your own always is"
        )

    return file_lock(
        path, timeout=timeout, what="this environment's install lock", on_wait=on_wait, cancelled=cancelled,
        error=InstallError, cannot_open=cannot_open,
    )  # fmt: skip
