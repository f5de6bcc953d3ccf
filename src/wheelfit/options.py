"""The choices a command passes down, as frozen values: built once by ``cli/`` from its options, passed whole.

Three bundles, because three questions are asked separately: which machine (:class:`MachineOptions`), what shapes
the plan (:class:`PlanOptions`), and what an install does besides planning (:class:`InstallOptions`). A library
caller builds the same values (``PlanOptions(pytorch_index=..., allow_cpu=True)``); defaults are the commands'.
Pure: no I/O, nothing imported but for type checking.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .kb.matrix import Knowledge

__all__ = ["InstallOptions", "MachineOptions", "PlanOptions"]


@dataclass(frozen=True)
class MachineOptions:
    """How the machine is found: ``target`` (a saved report or a ``key=value,...`` spec), else detection of this
    machine or the simulated one under ``sysroot``."""

    target: str | None = None
    sysroot: Path | None = None
    #: Seconds each hardware tool may run.
    probe_timeout: float = 15.0
    #: Detector plugins not to run (``--disable``).
    disabled: tuple[str, ...] = ()
    #: The Python the plan is for (``3.12``): replaces the detected one, and is a target spec's default.
    python_version: str | None = None

    @property
    def described(self) -> str:
        """Whose GPUs a verification judged when torch sees none, for messages."""
        if self.target:
            return f"--target {self.target}"
        if self.sysroot is not None:
            return f"the machine detected under --sysroot {self.sysroot}"
        return "this machine's detection"


@dataclass(frozen=True)
class PlanOptions:
    """What shapes a plan besides the requirements and the machine."""

    #: The knowledge base (``--kb``), loaded once by the caller; ``None``: the packaged one.
    kb: Knowledge | None = None
    pytorch_index: str | None = None
    #: Plan from wheel-variant metadata (PEP 817/825) when this index serves it for torch.
    variant_index: str | None = None
    #: The default index (``--index-url``); one ending in a variant (``.../whl/cu128``) chooses that build.
    index_url: str | None = None
    extra_index_urls: tuple[str, ...] = ()
    #: Wheelhouses and find-links pages: extension wheels come from there only when given.
    find_links: tuple[str, ...] = ()
    #: Plan the CPU build for a machine whose GPU no build serves (``--allow-cpu``), silently.
    allow_cpu: bool = False
    pre: bool = False
    #: The build chosen as uv's ``--torch-backend`` chooses it (``auto``, ``cpu``, ``cu128``, ...).
    torch_backend: str | None = None
    #: Plan the chosen build even without kernels here (``--force-build``), warned.
    force: bool = False
    #: A near-miss AMD GPU may get a build it runs only under ``HSA_OVERRIDE_GFX_VERSION``.
    allow_hsa_override: bool = False
    #: Refuse to plan the CPU build for a machine with a GPU (CI for a GPU fleet).
    require_gpu: bool = False


@dataclass(frozen=True)
class InstallOptions:
    """What ``wheelfit install`` does besides planning: into which environment, with which backend, and how."""

    #: The environment's interpreter or directory; ``None``: the one uv would find.
    python: str | None = None
    #: ``uv`` or ``pip``.
    installer: str = "uv"
    dry_run: bool = False
    #: Import torch afterwards and judge it (``--no-verify`` turns it off).
    verify_after: bool = True
    #: Constraint strings (``-c`` values given as requirements), and requirement and constraint files.
    constraints: tuple[str, ...] = ()
    requirement_files: tuple[str, ...] = ()
    constraint_files: tuple[str, ...] = ()
    upgrade: bool = False
    reinstall: bool = False
    no_deps: bool = False
    no_index: bool = False
    #: Allow the Python on ``PATH`` outside a virtual environment.
    system: bool = False
    #: An earlier install killed midway: ``restore`` or ``keep`` (``None``: refuse when the environment changed).
    recover: str | None = None
    #: The rollback snapshot (about 0.7 s for an environment holding torch).
    snapshot: bool = True
    #: Where relative paths in requirement files are read from; ``None``: the current directory.
    cwd: Path | None = None
