"""Warm the backend's cache with the default-index dependencies while wheelfit downloads the torch family.

A CUDA install is one large torch wheel (wheelfit's own, checked download) plus gigabytes of ``nvidia-*`` wheels
the backend downloads. Run one after the other they take the sum; ``uv pip install`` alone overlaps them. So, while
:func:`~wheelfit.install.gather.gather_family` downloads, the plan's wheels' PEP 658 metadata (which
download.pytorch.org serves, pytorch/test-infra#6116) names their ordinary dependencies, and the backend downloads
those into its own cache by installing them into a throw-away ``--target`` directory. The real install, inside the
snapshot, then finds them cached.

What holds, whatever happens here:

- the target environment is never touched: the warm-up installs only into its own temporary directory;
- every torch-family name is unresolvable during the warm-up (the same ``name<0`` constraints as the install,
  for all of them), so no torch-family package is ever fetched from the default index;
- a warm-up that fails, or cannot start, changes nothing but speed: its outcome is never read;
- a torch-family wheel is unpacked into the backend's cache (:meth:`Warming.unpack`) only once its archive has
  passed wheelfit's structural checks, while its member hashes are checked, and the unpacking is stopped if they
  fail.

It starts at once when a planned wheel is not in wheelfit's download cache (a cold install: every tenth of a second
before the dependencies start downloading is a tenth of a second on the install, since ``uv pip install`` alone
starts them within 0.1 s). When every planned wheel has a cached copy (a re-run) it waits :data:`GRACE` seconds and
starts only if wheelfit's download still runs then: a cached wheel is checked in milliseconds and has nothing to
overlap, and a warm-up would only cost its resolution.
"""

from __future__ import annotations

import contextlib
import shutil
import subprocess
import tempfile
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path

from packaging.requirements import InvalidRequirement, Requirement
from packaging.tags import parse_tag
from packaging.utils import canonicalize_name

from ..index.links import FileLink
from ..index.select import select_wheel
from .backend import constraints_text
from .family import TORCH_FAMILY, is_torch_family
from .gather import WheelSource
from .target_env import TargetEnv

__all__ = ["GRACE", "Warming", "default_index_dependencies", "missing", "warm_backend_cache"]

#: Seconds wheelfit's own download must still be running before a warm-up starts, when every planned wheel has a
#: copy in the cache (to be checked, not downloaded).
GRACE = 0.25

_Reader = Callable[[FileLink], bytes]


@contextlib.contextmanager
def warm_backend_cache(
    pins: Sequence[Requirement],
    source: WheelSource | None,
    env: TargetEnv,
    backend: str,
    *,
    index_url: str,
    environ: Mapping[str, str],
    extra: Sequence[str] = (),
    extra_index_urls: Sequence[str] = (),
    constraints: Sequence[str] = (),
    find_links: Sequence[str] = (),
    enabled: bool = True,
) -> Iterator[Warming]:
    """Around wheelfit's torch-family download: warm ``backend``'s cache with the plan's default-index
    dependencies meanwhile (``extra`` too: the user's other requirements, from ``index_url``, ``extra_index_urls``
    and ``find_links`` under the user's ``constraints``). Call :meth:`Warming.unpack` with the fetched wheels.
    On a normal exit it waits for a warm-up that started (it overlaps with a download that took a while, and the
    install would fetch the same files); on an error it stops it. Only uv is warmed: pip keeps no cache of
    unpacked wheels to fill that way. A local default index (``file:``) has nothing to download."""
    remote = index_url.startswith(("http://", "https://"))
    if not enabled or backend != "uv" or not pins or source is None or not remote:
        yield Warming()
        return
    warm = _Warmup(pins, source, env, index_url, environ, [*extra], [*extra_index_urls], [*constraints],
                   [*find_links])  # fmt: skip
    warm.thread.start()
    ok = False
    try:
        yield warm
        ok = True
    finally:
        warm.finish(wait=ok)


class Warming:
    """No warm-up (a dry run, pip, a local index): nothing to do."""

    def unpack(self, name: str, path: Path) -> None:
        """Have the backend unpack the wheel ``path`` of ``name`` into its cache while wheelfit hashes its members,
        so that the install only links it."""


def default_index_dependencies(metadata: bytes, markers: Mapping[str, str]) -> list[str]:
    """The ``Requires-Dist`` entries of one wheel's METADATA that hold for ``markers`` and are not torch-family
    (those come from the variant index only), markers dropped."""
    from email.parser import BytesParser

    out: list[str] = []
    for text in BytesParser().parsebytes(metadata, headersonly=True).get_all("Requires-Dist") or []:
        req = Requirement(str(text))
        if is_torch_family(req.name):
            continue
        if req.marker is not None and not req.marker.evaluate({**markers, "extra": ""}):
            continue
        req.marker = None
        out.append(str(req))
    return out


def missing(requirements: Sequence[str], installed: Mapping[str, str]) -> list[str]:
    """The requirements the environment does not meet already: the install keeps those (as uv and pip do), so
    warming them would download gigabytes for nothing (an environment with the ``nvidia-*`` wheels)."""
    have = {canonicalize_name(name): version for name, version in installed.items()}
    out: list[str] = []
    for text in requirements:
        req = Requirement(text)
        version = have.get(canonicalize_name(req.name))
        if version is None or not req.specifier.contains(version, prereleases=True):
            out.append(text)
    return out


class _Warmup(Warming):
    """The background thread: wait out the grace period, read the metadata, run the backend's warm-up."""

    def __init__(
        self,
        pins: Sequence[Requirement],
        source: WheelSource,
        env: TargetEnv,
        index_url: str,
        environ: Mapping[str, str],
        extra: list[str],
        extra_index_urls: list[str],
        constraints: list[str],
        find_links: list[str],
    ) -> None:
        self.pins, self.source, self.env = list(pins), source, env
        self.index_url, self.environ, self.extra = index_url, dict(environ), extra
        self.extra_index_urls, self.constraints, self.find_links = extra_index_urls, constraints, find_links
        self.unpacking: list[subprocess.Popen[bytes]] = []
        self.done = threading.Event()
        self.lock = threading.Lock()
        self.proc: subprocess.Popen[bytes] | None = None
        self.tmp: str | None = None
        self.thread = threading.Thread(target=self._run, name="wheelfit-warmup", daemon=True)

    def unpack(self, name: str, path: Path) -> None:
        """Start the backend unpacking ``path`` into its cache (through a throw-away target) while wheelfit hashes
        its members against RECORD, the last of its checks: the two inflate the archive side by side instead of
        one after the other (a second each for libtorch), and the install only links it.

        The archive has passed every structural check by then (headers, names, declared sizes and ratios,
        RECORD's listing), so the backend never reads one of the tricks those catch; what is still being checked
        (the bytes) can only make wheelfit refuse the wheel, and then :meth:`finish` stops the unpacking and
        deletes its target before the environment is touched. Nothing starts after :meth:`finish`."""
        with self.lock:
            if self.done.is_set():
                return
            if self.tmp is None:
                self.tmp = tempfile.mkdtemp(prefix="wheelfit-warmup-")
            target = str(Path(self.tmp) / f"family-{len(self.unpacking)}")
            argv = [
                self._uv(), "pip", "install", "--python", self.env.executable, "--target", target,
                "--link-mode", "hardlink", "--no-deps", "--no-index", "--no-progress", "--quiet",
                f"{name} @ {path.resolve().as_uri()}",
            ]  # fmt: skip
            with contextlib.suppress(Exception):  # only speed is at stake
                self.unpacking.append(_spawn(argv, self.environ))

    def finish(self, *, wait: bool) -> None:
        """Wait for the warm-up that started (``wait``) or stop it; no warm-up starts after this."""
        with self.lock:
            self.done.set()
            procs = [p for p in (self.proc, *self.unpacking) if p is not None]
        try:
            for proc in procs:
                if not wait:
                    proc.kill()
                proc.wait()
        except BaseException:  # interrupted while waiting: stop them, then let the interrupt through
            for proc in procs:
                proc.kill()
                proc.wait()
            raise
        finally:
            if self.tmp is not None:
                shutil.rmtree(self.tmp, ignore_errors=True)

    def _run(self) -> None:
        try:
            links = self._links()
            if all(_has_copy(self.source, link) for link in links) and self.done.wait(GRACE):
                return  # cached, and checked within the grace: nothing to overlap
            requirements = self._requirements(links)
        except Exception:  # noqa: BLE001 - only speed is at stake: any doubt, no warm-up
            return
        if not requirements:
            return
        with self.lock:
            if self.done.is_set():
                return
            if self.tmp is None:  # or made by unpack() already
                self.tmp = tempfile.mkdtemp(prefix="wheelfit-warmup-")
            # Two downloads at a time: torch keeps a third of the bandwidth and arrives before the dependencies,
            # so its unpacking (unpack()) hides behind theirs; with uv's 50 it would share it eleven ways
            # and, the largest file, arrive last.
            environ = {"UV_CONCURRENT_DOWNLOADS": "2", **self.environ}
            try:
                self.proc = _spawn(self._argv(Path(self.tmp), requirements), environ)
            except Exception:  # noqa: BLE001 - no uv binary, no warm-up; the install says what is wrong
                self.proc = None

    def _links(self) -> list[FileLink]:
        """The files of the plan's wheels, as the install will choose them."""
        python = self.env.markers.get("python_full_version", self.env.python)
        tags = [t for text in self.env.tags for t in parse_tag(text)]
        return [select_wheel(self.source.files(p.name), p, tags=tags, python_version=python).link for p in self.pins]

    def _requirements(self, links: Sequence[FileLink]) -> list[str]:
        """The plan's wheels' default-index dependencies (from PEP 658 metadata) and the user's extras."""
        metadata = _metadata_reader(self.source)
        if metadata is None:
            return []
        wanted: list[str] = []
        for link in links:
            if link.core_metadata is False:
                return []  # not knowable before the download: the install runs as before
            wanted += default_index_dependencies(metadata(link), self.env.markers)
        for spec in self.extra:
            try:
                wanted.append(str(Requirement(spec)))
            except InvalidRequirement:
                continue
        return missing(list(dict.fromkeys(wanted)), self.env.installed)

    def _uv(self) -> str:
        from .uv import find_uv

        return find_uv()

    def _argv(self, tmp: Path, requirements: Sequence[str]) -> list[str]:
        (tmp / "requirements.txt").write_text("\n".join(requirements) + "\n")
        user = "".join(f"{line}\n" for line in self.constraints)
        (tmp / "constraints.txt").write_text(constraints_text(sorted(TORCH_FAMILY)) + user)
        more = [arg for url in self.extra_index_urls for arg in ("--extra-index-url", url)]
        more += [arg for link in self.find_links for arg in ("--find-links", link)]
        # --link-mode hardlink: the throw-away target only links into uv's cache (nothing copied); deleting it
        # deletes the links, never the cache. Not symlink: uv makes the symlinks of a torch wheel's ~15,000 files
        # twice as slowly as hard links (13.4 s against 6.8 s here, torch 2.13.0+cpu, a cold cache).
        return [
            self._uv(), "pip", "install", "--python", self.env.executable, "--target", str(tmp / "target"),
            "--link-mode", "hardlink", "--index-url", self.index_url, *more, "--index-strategy", "first-index",
            "--no-progress", "--quiet", "--constraints", str(tmp / "constraints.txt"),
            "-r", str(tmp / "requirements.txt"),
        ]  # fmt: skip


def _spawn(argv: Sequence[str], environ: Mapping[str, str]) -> subprocess.Popen[bytes]:
    """The backend in the background, silent: its outcome is never read."""
    out = subprocess.DEVNULL
    return subprocess.Popen(list(argv), stdin=out, stdout=out, stderr=out, env=dict(environ))


def _has_copy(source: WheelSource, link: FileLink) -> bool:
    """Whether wheelfit's cache has ``link`` (True for a source that cannot tell: then the grace decides)."""
    from .source import IndexSource

    return source.has_copy(link) if isinstance(source, IndexSource) else True


def _metadata_reader(source: WheelSource) -> _Reader | None:
    """PEP 658 metadata through the source's own index client (cached, hash-checked); ``None`` for a source
    whose wheels' metadata is only known after the download (variant mode's plain copies)."""
    from .source import IndexSource

    if not isinstance(source, IndexSource):
        return None
    return source.index.core_metadata
