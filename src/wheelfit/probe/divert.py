"""What a detector plugin writes to ``sys.stdout`` goes to ``sys.stderr``.

``wheelfit detect --json`` and ``plan --json`` print JSON on stdout for other programs; one ``print()`` left in a
third-party plugin, or printed by a plugin that hangs after the JSON is written, would make that output unreadable.
Providers run in threads of this process, so ``sys.stdout`` is replaced, once, by a stream that sends the writes of
the registered provider threads to stderr and everything else where it went before. It is put back when detection
ends unless a provider thread still runs (an abandoned one may print later). Writes to file descriptor 1 itself (a
plugin's own child process that inherits it, a C library) are not seen here; tools run through
:class:`wheelfit_probekit.System` have their output captured.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Iterable
from typing import Any, TextIO

__all__ = ["ProviderOutput"]

_lock = threading.Lock()


class _Diverted:
    """``sys.stdout`` while providers run: writes from provider threads go to stderr."""

    def __init__(self, stdout: TextIO) -> None:
        self.stdout = stdout
        #: Thread objects, not idents: an ident is reused by a later thread once its first owner ends.
        self.threads: set[threading.Thread] = set()

    def _target(self) -> TextIO:
        if threading.current_thread() in self.threads:
            return sys.stderr if sys.stderr is not None and sys.stderr is not self else self.stdout
        return self.stdout

    def write(self, text: str) -> int:
        return self._target().write(text)

    def writelines(self, lines: Iterable[str]) -> None:
        self._target().writelines(lines)

    def flush(self) -> None:
        self._target().flush()

    def __getattr__(self, name: str) -> Any:  # encoding, fileno, isatty, buffer, ...: the real stdout's
        return getattr(self.stdout, name)


class ProviderOutput:
    """Registers provider threads (each calls :meth:`enter` first) and restores ``sys.stdout`` at :meth:`close`."""

    def __init__(self) -> None:
        self._diverted: _Diverted | None = None
        self._threads: list[threading.Thread] = []

    def enter(self) -> None:
        """Called on the provider's thread, before the plugin runs: from now on its prints go to stderr."""
        with _lock:
            current = sys.stdout
            if current is None:  # pythonw: nothing to protect
                return
            if not isinstance(current, _Diverted):
                current = _Diverted(current)
                sys.stdout = current
            self._diverted = current
            current.threads.add(threading.current_thread())
            self._threads.append(threading.current_thread())

    def close(self) -> None:
        """After detection: forget the threads that ended; put ``sys.stdout`` back when none is left running."""
        with _lock:
            diverted = self._diverted
            if diverted is None:
                return
            for thread in self._threads:
                if not thread.is_alive():
                    diverted.threads.discard(thread)
            if not diverted.threads and sys.stdout is diverted:
                sys.stdout = diverted.stdout
