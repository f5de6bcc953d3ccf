"""The machine as a detector sees it: files under a root, tools in known places, an environment.

Every detector reads the machine only through :class:`System`, so a test can hand
it a ``--sysroot`` tree (real file formats, fake tool scripts) instead of
patching anything. With a sysroot, no native library may be loaded
(:attr:`System.native` is false) and tools are looked up only inside the tree.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import sys
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, TYPE_CHECKING

if TYPE_CHECKING:
    import subprocess

__all__ = ["CommandResult", "ProbeError", "ProbeTimeout", "System", "parse_int", "split_kv"]

#: Tool directories searched inside a sysroot (and on the real machine after PATH).
TOOL_DIRS: tuple[str, ...] = (
    "usr/local/bin",
    "usr/bin",
    "bin",
    "usr/sbin",
    "sbin",
    "usr/lib/wsl/lib",
    "opt/rocm/bin",
    "opt/intel/oneapi/compiler/latest/bin",
)

#: Cap on what a tool may print before it is treated as broken (bytes); the rest is read and dropped.
MAX_OUTPUT = 4 * 1024 * 1024
#: How long output may keep coming after the tool itself has exited: a child it left behind (a daemon it
#: started, a ``sleep &`` in a wrapper script) holds the pipes open and would make us wait the whole deadline.
EXIT_GRACE = 0.5


class ProbeError(Exception):
    """A probe could not get its answer; the message is one line a person can act on."""


class ProbeTimeout(ProbeError):  # noqa: N818 - reads as what happened, like TimeoutError
    """A tool or read did not answer before its deadline."""


@dataclass(frozen=True)
class CommandResult:
    """What a tool printed and how it exited."""

    argv: tuple[str, ...]
    returncode: int
    stdout: str
    stderr: str
    #: Bytes the tool printed beyond :data:`MAX_OUTPUT` (stdout and stderr), read and dropped.
    discarded: int = 0

    @property
    def ok(self) -> bool:
        return self.returncode == 0

    def first_line(self) -> str:
        """The first non-empty line of stdout, else of stderr (for error messages)."""
        for text in (self.stdout, self.stderr):
            for line in text.splitlines():
                if line.strip():
                    return line.strip()
        return ""


@dataclass(frozen=True)
class System:
    """Read-only access to one machine, real (``root='/'``) or simulated (a sysroot)."""

    root: Path = Path("/")
    environ: Mapping[str, str] = field(default_factory=lambda: dict(os.environ))
    #: Deadline for one tool invocation, in seconds.
    command_timeout: float = 15.0

    @classmethod
    def from_sysroot(
        cls,
        sysroot: str | os.PathLike[str] | None,
        environ: Mapping[str, str] | None = None,
        command_timeout: float = 15.0,
    ) -> System:
        env = dict(os.environ if environ is None else environ)
        root = Path(sysroot).resolve() if sysroot else Path("/")
        return cls(root=root, environ=env, command_timeout=command_timeout)

    # -- identity -----------------------------------------------------------------

    @property
    def is_sysroot(self) -> bool:
        return self.root != Path("/")

    @property
    def native(self) -> bool:
        """Whether native libraries (NVML, libcuda, Level Zero) may be loaded: never in a sysroot."""
        return not self.is_sysroot

    @property
    def os_name(self) -> str:
        """``Linux``, ``Darwin`` or ``Windows``: the host's, or inferred from a sysroot's layout."""
        if not self.is_sysroot:
            return {"linux": "Linux", "darwin": "Darwin", "win32": "Windows"}.get(sys.platform, sys.platform)
        if self.exists("System/Library/CoreServices/SystemVersion.plist"):
            return "Darwin"
        if self.exists("Windows/System32"):
            return "Windows"
        return "Linux"

    # -- files --------------------------------------------------------------------

    def path(self, relative: str) -> Path:
        """The real path of a machine path such as ``/proc/cpuinfo``."""
        return self.root / relative.lstrip("/")

    def exists(self, relative: str) -> bool:
        try:
            return self.path(relative).exists()
        except OSError:
            return False

    def read_text(self, relative: str, limit: int = MAX_OUTPUT) -> str | None:
        """A file's text, ``None`` when it does not exist.

        Any other failure (permission, a directory, a symlink loop, an I/O error)
        raises :class:`ProbeError` naming the file: the caller records it as a
        failed probe rather than guessing.
        """
        try:
            # Non-blocking open, then only a regular file is read: a FIFO or device node where sysfs or procfs
            # has an attribute would otherwise block the read (and the detector) forever.
            fd = os.open(self.path(relative), os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0))
        except (FileNotFoundError, NotADirectoryError):
            return None
        except OSError as exc:
            raise ProbeError(f"cannot read {relative}: {_os_reason(exc)}") from exc
        try:
            kind = os.fstat(fd).st_mode
            if not stat.S_ISREG(kind):
                raise ProbeError(f"cannot read {relative}: it is {_file_kind(kind)}, not a regular file")
            with os.fdopen(fd, "rb", closefd=False) as fh:
                data = fh.read(limit + 1)
        except OSError as exc:
            raise ProbeError(f"cannot read {relative}: {_os_reason(exc)}") from exc
        finally:
            os.close(fd)
        if len(data) > limit:
            raise ProbeError(f"{relative} is larger than {limit} bytes")
        return data.decode("utf-8", errors="replace")

    def listdir(self, relative: str) -> list[str]:
        """Sorted entries of a directory; empty when it does not exist."""
        try:
            return sorted(os.listdir(self.path(relative)))
        except (FileNotFoundError, NotADirectoryError):
            return []
        except OSError as exc:
            raise ProbeError(f"cannot list {relative}: {_os_reason(exc)}") from exc

    def link_name(self, relative: str) -> str | None:
        """The last component of a symlink's target (``driver -> ../drivers/nvidia`` gives ``nvidia``)."""
        try:
            return os.path.basename(os.readlink(self.path(relative)))
        except OSError:
            return None

    def can_open(self, relative: str) -> bool:
        """Whether a device node exists and this process may read and write it."""
        p = self.path(relative)
        return p.exists() and os.access(p, os.R_OK | os.W_OK)

    def glob_names(self, relative_dir: str, prefix: str) -> Iterator[str]:
        return (n for n in self.listdir(relative_dir) if n.startswith(prefix))

    # -- tools --------------------------------------------------------------------

    def which(self, name: str) -> Path | None:
        """Find a tool: only inside the tree for a sysroot; PATH then known dirs on the real machine."""
        candidates: list[Path] = []
        if not self.is_sysroot:
            candidates += [Path(d) / name for d in self.environ.get("PATH", "").split(os.pathsep) if d]
        candidates += [self.root / d / name for d in TOOL_DIRS]
        for c in candidates:
            if c.is_file() and os.access(c, os.X_OK):
                return c
        return None

    def run(self, name: str, *args: str, timeout: float | None = None) -> CommandResult:
        """Run a tool with a deadline; the whole process group is killed when it passes.

        Raises :class:`ProbeError` when the tool is absent or cannot start and
        :class:`ProbeTimeout` when it overruns. A non-zero exit is not an error
        here: the caller reads :attr:`CommandResult.returncode`.
        """
        exe = self.which(name)
        if exe is None:
            raise ProbeError(f"{name} not found")
        return self.run_path(exe, *args, timeout=timeout, display=name)

    def run_path(
        self, exe: Path | str, *args: str, timeout: float | None = None, display: str | None = None
    ) -> CommandResult:
        import subprocess  # here, not at the top: most detections run no tool, start-up stays lean

        argv = (str(exe), *args)
        label = display or Path(str(exe)).name
        limit = self.command_timeout if timeout is None else timeout
        try:
            proc = subprocess.Popen(
                argv,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env=dict(self.environ),
                start_new_session=True,
            )
        except OSError as exc:
            raise ProbeError(f"{label} could not start: {_os_reason(exc)}") from exc
        pipes = [_Drain(proc.stdout), _Drain(proc.stderr)]
        try:
            proc.wait(timeout=limit)
        except subprocess.TimeoutExpired:
            _kill_group(proc)
            raise ProbeTimeout(f"{label} did not answer within {limit:g} s and was stopped") from None
        # The tool has exited; what it left running may still hold the pipes. Take what came, then stop them.
        _join(pipes, EXIT_GRACE)
        if any(pipe.running for pipe in pipes):
            _kill_group(proc)
            _join(pipes, EXIT_GRACE)
        out, err = pipes
        return CommandResult(
            argv=(label, *args),
            returncode=proc.returncode,
            stdout=out.text(),
            stderr=err.text(),
            discarded=out.dropped + err.dropped,
        )

    def run_python(self, code: str, timeout: float | None = None) -> CommandResult:
        """Run a snippet in a fresh, isolated interpreter (native-library probes live there)."""
        return self.run_path(sys.executable, "-I", "-S", "-c", code, timeout=timeout, display="python probe")


class _Drain:
    """Reads a pipe to its end in a thread, keeping the first :data:`MAX_OUTPUT` bytes: a tool that floods its
    output can neither block on a full pipe nor fill memory."""

    def __init__(self, stream: IO[bytes] | None) -> None:
        import threading

        self.kept = bytearray()
        self.dropped = 0
        self._thread = threading.Thread(target=self._read, args=(stream,), daemon=True)
        self._thread.start()

    def _read(self, stream: IO[bytes] | None) -> None:
        if stream is None:
            return
        with contextlib.suppress(OSError, ValueError), stream:
            while chunk := os.read(stream.fileno(), 1 << 16):
                room = MAX_OUTPUT - len(self.kept)
                self.kept += chunk[:room]
                self.dropped += max(0, len(chunk) - room)

    @property
    def running(self) -> bool:
        return self._thread.is_alive()

    def join(self, timeout: float) -> None:
        self._thread.join(timeout)

    def text(self) -> str:
        return bytes(self.kept).decode("utf-8", errors="replace")


def _join(pipes: list[_Drain], seconds: float) -> None:
    import time

    end = time.monotonic() + seconds
    for pipe in pipes:
        pipe.join(max(0.0, end - time.monotonic()))


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    # A shell script's children keep the pipes open: kill the whole session, not only the shell.
    import signal
    import subprocess

    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except OSError:
        proc.kill()
    with contextlib.suppress(subprocess.TimeoutExpired):  # a process that survives SIGKILL
        proc.wait(timeout=2)


def _file_kind(mode: int) -> str:
    for test, name in ((stat.S_ISFIFO, "a FIFO"), (stat.S_ISSOCK, "a socket"), (stat.S_ISCHR, "a character device"),
                       (stat.S_ISBLK, "a block device"), (stat.S_ISDIR, "a directory")):  # fmt: skip
        if test(mode):
            return name
    return "a special file"


def _os_reason(exc: OSError) -> str:
    if exc.errno is not None and exc.errno in errno.errorcode:
        return f"{exc.strerror or errno.errorcode[exc.errno]} ({errno.errorcode[exc.errno]})"
    return str(exc)


def parse_int(text: str | None, base: int = 10) -> int | None:
    """``'0x10de\\n'`` -> 4318; ``None`` for anything that is not a clean integer."""
    if text is None:
        return None
    t = text.strip().lower()
    if base == 16 and t.startswith("0x"):
        t = t[2:]
    if not (t.isascii() and t.isalnum()):  # int() alone takes "-1", "+7", "1_0", "0x 7" and non-ASCII digits
        return None
    try:
        return int(t, base)
    except ValueError:
        return None


def split_kv(text: str, sep: str = ":") -> dict[str, str]:
    """``key : value`` lines into a dict (first occurrence wins, like archspec's first cpuinfo block)."""
    out: dict[str, str] = {}
    for line in text.splitlines():
        key, found, value = line.partition(sep)
        if found and key.strip() and key.strip() not in out:
            out[key.strip()] = value.strip()
    return out
