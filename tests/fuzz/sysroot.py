"""Throw-away sysroot trees for the detector fuzz targets, and the check that a provider met no bug.

A provider turns any exception inside a probe into a failed record (``ProbeLog.probe`` writes
``"<ExceptionType>: message"``, the NVIDIA plugin's wrapper does the same for the whole detection), so a parser
crash does not surface as an exception in an end-to-end run: :func:`assert_no_bug` looks for those records.
"""

from __future__ import annotations

import builtins
import os
import re
import tempfile
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

from hypothesis import settings

from wheelfit_probekit import ProviderResult, System

__all__ = ["SLOW", "Tree", "assert_no_bug", "tree"]

#: For end-to-end targets (a sysroot per example, a tool run): half the profile's examples, so the ``ci`` run stays
#: short and ``HYPOTHESIS_PROFILE=fuzz`` still scales them up.
SLOW = settings(max_examples=max(20, settings().max_examples // 2))

#: Builtin exception class names: a probe error starting with ``Name:`` is a Python exception, not a finding.
_EXCEPTIONS = frozenset(
    name for name, value in vars(builtins).items() if isinstance(value, type) and issubclass(value, BaseException)
)

#: Any other exception class name (``JSONDecodeError``, ``InvalidVersion``): no probe message starts like that.
_EXCEPTION_LIKE = re.compile(r"[A-Z][A-Za-z0-9]*(?:Error|Exception|Invalid[A-Za-z]*)|Invalid[A-Z][A-Za-z]*")


class Tree:
    """A sysroot being built: real files in their real formats."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def write(self, rel: str, text: str | bytes, exe: bool = False) -> None:
        path = self.root / rel.lstrip("/")
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(text, bytes):
            path.write_bytes(text)
        else:
            path.write_bytes(text.encode("utf-8", errors="surrogateescape"))
        if exe:
            path.chmod(0o755)

    def link(self, rel: str, target: str) -> None:
        path = self.root / rel.lstrip("/")
        path.parent.mkdir(parents=True, exist_ok=True)
        os.symlink(target, path)

    def system(self, environ: Mapping[str, str] | None = None) -> System:
        return System.from_sysroot(self.root, environ={"PATH": "/usr/bin:/bin", **(environ or {})}, command_timeout=5)


@contextmanager
def tree() -> Iterator[Tree]:
    """An empty sysroot, removed afterwards (one per example: hypothesis reruns the body many times)."""
    with tempfile.TemporaryDirectory(prefix="wheelfit-fuzz-root-") as root:
        yield Tree(Path(root))


def assert_no_bug(result: ProviderResult) -> None:
    """No probe failed with a Python exception (a failed probe naming a file or a tool is a finding, and fine)."""
    for record in result.probes:
        if record.error is None:
            continue
        head = record.error.split(":", 1)[0]
        bug = head in _EXCEPTIONS or _EXCEPTION_LIKE.fullmatch(head)
        assert not bug, f"{record.provider}/{record.source} hit a bug: {record.error}"
