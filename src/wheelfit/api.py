"""wheelfit as a library: :func:`detect`, :func:`machine`, :func:`plan`, :func:`install_requirements`,
:func:`verify_environment`, :func:`doctor_environment`.

Every function takes the system state it uses as arguments (the environment variables, the network session with
its HTTP client and cache, the machine's sysroot), the way ``packaging.tags.cpython_tags(platforms=...)`` does, so
that a caller (the command line, a CI script, a test) decides what counts; choices travel as the frozen values of
:mod:`wheelfit.options`. Nothing here prints or sets process-wide state (no signal handler: the command line makes
Ctrl-C stop a session's requests with :func:`wheelfit.fetch.watch.sigint_cancels`).

    with wheelfit.api.network(os.environ) as net:
        target = wheelfit.api.machine(MachineOptions(target="cuda=8.6,driver=580.95.05"), environ=os.environ)
        print(wheelfit.api.plan(["torch"], target, PlanOptions(), environ=os.environ, network=net).to_dict())

This module only re-exports, each name on first use: each command's flow lives in :mod:`wheelfit.app`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .lazy import lazy_attributes

if TYPE_CHECKING:
    from .app.install import (
        InstallOutcome,
        backend,
        family_source,
        install,
        install_requirements,
        planned_files,
        target_python,
    )
    from .app.machine import Target, detect, machine
    from .app.plan import extension_sources, judge_build, plan, with_measured
    from .app.session import Network, network
    from .app.variants import rank, read_variants_file
    from .app.verify import DoctorOutcome, VerifyOutcome, doctor_environment, verify, verify_environment
    from .options import InstallOptions, MachineOptions, PlanOptions

#: Where each name lives; imported on first use (PEP 562), so ``wheelfit detect`` does not load the install flow.
_WHERE = {
    **dict.fromkeys(
        ("InstallOutcome", "backend", "family_source", "install", "install_requirements", "planned_files",
         "target_python"),
        "app.install",
    ),
    **dict.fromkeys(("Target", "detect", "machine"), "app.machine"),
    **dict.fromkeys(("extension_sources", "judge_build", "plan", "with_measured"), "app.plan"),
    **dict.fromkeys(("Network", "network"), "app.session"),
    **dict.fromkeys(("rank", "read_variants_file"), "app.variants"),
    **dict.fromkeys(
        ("DoctorOutcome", "VerifyOutcome", "doctor_environment", "verify", "verify_environment"), "app.verify"
    ),
    **dict.fromkeys(("InstallOptions", "MachineOptions", "PlanOptions"), "options"),
}

__all__ = [
    "DoctorOutcome",
    "InstallOptions",
    "InstallOutcome",
    "MachineOptions",
    "Network",
    "PlanOptions",
    "Target",
    "VerifyOutcome",
    "backend",
    "detect",
    "doctor_environment",
    "extension_sources",
    "family_source",
    "install",
    "install_requirements",
    "judge_build",
    "machine",
    "network",
    "plan",
    "planned_files",
    "rank",
    "read_variants_file",
    "target_python",
    "verify",
    "verify_environment",
    "with_measured",
]

__getattr__ = lazy_attributes(__name__, _WHERE, under="wheelfit")
