"""A `python -m wheelfit ...` child process whose stderr the test reads while it runs, and interrupts (SIGINT)."""

from __future__ import annotations

import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable

import pytest

__all__ = ["Running"]


class Running:
    """A `python -m wheelfit ...` child whose stderr is read line by line as it comes."""

    def __init__(self, args: list[str], env: dict[str, str]) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "wheelfit", *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        self.lines: list[str] = []
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.lines.append(line.rstrip("\n"))

    def wait_until(self, condition: Callable[[], bool], timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        while not condition():
            if self.proc.poll() is not None:
                self._reader.join(5)
                pytest.fail(
                    f"wheelfit exited ({self.proc.returncode}) before the test could interrupt it: {self.lines}"
                )
            if time.monotonic() > deadline:
                self.interrupt()
                pytest.fail(f"timed out waiting; stderr so far: {self.lines}")
            time.sleep(0.02)

    def interrupt(self) -> float:
        """SIGINT, as Ctrl-C sends; returns the seconds until the process had exited."""
        sent = time.monotonic()
        self.proc.send_signal(signal.SIGINT)
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        took = time.monotonic() - sent
        self._reader.join(5)
        for pipe in (self.proc.stdout, self.proc.stderr):
            if pipe is not None:
                pipe.close()
        return took
