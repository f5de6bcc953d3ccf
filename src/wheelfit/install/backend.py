"""What wheelfit asks of an installer backend, whichever it is (uv or pip)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

__all__ = ["BackendRequest", "BackendResult", "Installer", "source_args"]


@dataclass(frozen=True)
class BackendRequest:
    python: str
    #: Requirements as given to the installer: ``torch @ file:///...`` for torch-family packages, plain names
    #: for everything else.
    requirements: tuple[str, ...]
    #: The only index for everything that is not torch-family.
    index_url: str
    #: ``requirements`` written as a file (``-r``), when they carry ``--hash`` options (hash-checking mode).
    requirements_file: Path | None = None
    #: A constraints file: torch-family names that no dependency may pull from ``index_url``.
    constraints: Path | None = None
    dry_run: bool = False
    environ: Mapping[str, str] = field(default_factory=dict)
    offline: bool = False
    #: More indexes for what is not torch-family (``--extra-index-url``); the constraints keep torch-family off them.
    extra_index_urls: tuple[str, ...] = ()
    #: ``-U``: newer versions of the requirements already installed (pip's and uv's ``--upgrade``).
    upgrade: bool = False
    #: ``--reinstall``: reinstall what is already installed (uv's ``--reinstall``, pip's ``--force-reinstall``).
    reinstall: bool = False
    #: ``--no-deps``: the requirements alone.
    no_deps: bool = False
    #: ``--find-links``: wheelhouse directories (or URLs) for what is not torch-family; the constraints hold too.
    find_links: tuple[str, ...] = ()
    #: ``--no-index``: ``index_url`` is not read (a local wheelhouse given as the default index, in ``find_links``).
    no_index: bool = False
    #: Every requirement must be hash-pinned (a requirements file with ``--hash`` lines, as ``wheelfit lock`` writes).
    require_hashes: bool = False

    def requirement_args(self) -> list[str]:
        """The requirements as both uv and pip take them: ``-r FILE`` when written to one, else as arguments."""
        if self.requirements_file is not None:
            return ["-r", str(self.requirements_file), *(["--require-hashes"] if self.require_hashes else [])]
        return list(self.requirements)


@dataclass(frozen=True)
class BackendResult:
    returncode: int
    stdout: str
    stderr: str
    #: ``name==version`` the installer says it would install (dry run) or installed.
    installs: tuple[str, ...] = ()
    #: ``name==version`` it would remove or replace.
    removes: tuple[str, ...] = ()

    @property
    def ok(self) -> bool:
        return self.returncode == 0

    def last_error(self) -> str:
        """The installer's own one-line reason, for wheelfit's one-line error: its error line and what follows it
        (uv's ``Caused by:`` chain, a hash mismatch's expected and computed digests), paths cut to their last part
        (cache paths would fill the line); when too long, its start and its end, where the innermost cause is."""
        lines = [_short_paths(ln.strip()) for ln in (self.stderr + "\n" + self.stdout).splitlines() if ln.strip()]
        for i, line in enumerate(lines):
            low = line.lower()
            if low.startswith(("error:", "\u00d7 ")) or "error" in low.split(":", 1)[0]:
                rest = [ln for ln in lines[i + 1 :] if not ln.lower().startswith(("hint", "help"))]
                text = " ".join([line, *rest])
                if len(text) <= _MAX_ERROR:
                    return text
                causes = [j for j, ln in enumerate(rest) if ln.lower().startswith(("caused by", "cause:"))]
                last = " ".join(rest[causes[-1] :] if causes else rest[-1:])[-(_MAX_ERROR - 45) :]
                return text[: max(_MAX_ERROR - len(last) - 5, 40)] + " ... " + last
        return (lines[-1] if lines else f"exit code {self.returncode}")[:_MAX_ERROR]


#: The longest reason wheelfit quotes from the installer.
_MAX_ERROR = 400
_FRAGMENT = re.compile(r"#sha256=[0-9a-fA-F]{64}")
#: An absolute path or ``file:`` URL of three parts or more: ``/home/x/.cache/wheelfit/wheels/1d/.../torch-...whl``.
_PATH = re.compile(r"(?:file://)?(?:/[^\s/:'\"()]+){3,}/([^\s/:'\"()]+)")


def _short_paths(line: str) -> str:
    """``.../torch-2.9.0-...whl`` for each long path: the file is what the reader needs, the cache is not; a
    pinned URL's ``#sha256=`` fragment is dropped (a hash mismatch names both digests on lines of their own)."""
    return _PATH.sub(lambda m: ".../" + m.group(1), _FRAGMENT.sub("", line))


class Installer(Protocol):
    name: str

    def install(self, request: BackendRequest) -> BackendResult: ...


def source_args(request: BackendRequest, *, constraints: str) -> list[str]:
    """Where the backend may look, as uv and pip both spell it (``constraints`` is the one flag they spell
    differently: uv ``--constraints``, pip ``--constraint``)."""
    argv: list[str] = []
    for url in request.extra_index_urls:
        argv += ["--extra-index-url", url]
    for link in request.find_links:
        argv += ["--find-links", link]
    if request.no_index:
        argv.append("--no-index")
    if request.constraints is not None:
        argv += [constraints, str(request.constraints)]
    return argv
