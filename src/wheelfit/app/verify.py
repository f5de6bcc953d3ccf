"""Verifying: whether the torch an environment imports runs on the machine (:func:`verify_environment`), and what
else is wrong with it (:func:`doctor_environment`). Nothing here changes the environment; a verification of this
machine keeps what torch said of its own kernels for later plans."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import UsageError, WheelfitError
from ..options import MachineOptions, PlanOptions
from .install import full_python, target_python
from .machine import Target, machine
from .plan import plan, with_measured
from .session import Network

if TYPE_CHECKING:
    from ..doctor import Diagnosis
    from ..install.target_env import TargetEnv
    from ..install.verify import TorchFacts, Verification
    from ..kb.matrix import Knowledge
    from ..resolve.plan import Plan

__all__ = ["DoctorOutcome", "VerifyOutcome", "doctor_environment", "verify", "verify_environment"]


def verify(
    plan: Plan | None,
    facts: TorchFacts,
    target: Target | None = None,
    *,
    kb: Knowledge | None = None,
    target_from: str = "the machine's report",
    plan_error: str | None = None,
) -> Verification:
    """Whether the torch an environment imports (``facts``, from :func:`wheelfit.install.verify.probe_torch`) runs
    on ``target``'s machine: kernels for every GPU (those torch sees, else the report's, ``target_from`` says whose),
    a CUDA runtime the driver supports, torchvision/torchaudio of the same torch and build. Being ``plan``'s build
    is a note, never a verdict: PyPI's torch runs where it has kernels. Pure."""
    from ..install.runs_here import judge
    from ..kb.matrix import load_knowledge
    from ..resolve import Machine

    found = Machine.from_report(target.report) if target is not None else None
    knowledge = kb if kb is not None else load_knowledge()
    return judge(facts, found, knowledge, machine_from=target_from, plan=plan, plan_error=plan_error)


@dataclass(frozen=True)
class VerifyOutcome:
    verification: Verification
    #: ``None`` when torch could not be imported, or no plan could be made (the verification says why).
    plan: Plan | None
    env: TargetEnv
    #: The machine judged.
    target: Target | None = None

    def to_dict(self) -> dict[str, Any]:
        data = self.verification.to_dict()
        data["plan"] = self.plan.to_dict() if self.plan is not None else None
        data["python"] = self.env.executable
        return data


def verify_environment(
    python: str | None,
    where: MachineOptions,
    options: PlanOptions,
    *,
    environ: Mapping[str, str],
    network: Network | None,
    others: Sequence[str] = (),
    today: str | None = None,
) -> VerifyOutcome:
    """``wheelfit verify``: import torch in ``python``'s environment and judge whether it runs on this machine (or
    ``where``); the machine's plan for the same torch version is made to say whether it is wheelfit's pick. A
    torch that is missing or fails to import is a failed verification, not an error."""
    from packaging.version import InvalidVersion, Version

    from ..install.target_env import start_inspect
    from ..install.verify import probe_torch

    py = target_python(python, environ, read_only=True)
    pending = start_inspect(py, environ)  # the environment is described while torch imports
    facts = probe_torch(py, environ, others=others)
    env = pending.result()
    here = machine(where, environ=environ, python=full_python(env), kb=options.kb)
    kb = with_measured(options.kb, environ)
    chosen: Plan | None = None
    why: str | None = None
    if facts.error is None:
        try:
            chosen = plan([f"torch=={Version(facts.version).public}"], here, replace(options, kb=kb), environ=environ,
                          network=network)  # fmt: skip
        except UsageError:
            raise
        except (WheelfitError, InvalidVersion) as exc:
            why = str(exc)
    checked = verify(chosen, facts, here, kb=kb, target_from=where.described, plan_error=why)
    if today is not None and where.target is None:
        _record_measured(checked, here, kb, today, environ)
    return VerifyOutcome(checked, chosen, env, here)


def _record_measured(
    checked: Verification, here: Target, kb: Knowledge, today: str, environ: Mapping[str, str]
) -> None:
    """What torch said about its own kernels, kept for later plans of that build: only a list torch reported
    (it reports one only while it sees a GPU), only for this machine's platform. A data directory that cannot
    be written loses the measurement, never the verification."""
    from packaging.version import Version

    from ..kb.measured import measured_path, updated
    from ..kb.overlay import Measured
    from ..resolve import Machine
    from ..userfiles import UserFileError, Write, write_files

    facts = checked.facts
    if not facts.arch_list or checked.label is None or facts.error is not None:
        return
    try:
        platform = Machine.from_report(here.report).platform_key
        version = Version(facts.version)
    except (WheelfitError, ValueError):
        return
    runtime = facts.cuda or facts.hip or facts.xpu
    new = Measured(version, checked.label, platform, facts.arch_list, runtime, today)
    if kb.measured.builds.get(new.key) == new:
        return
    with contextlib.suppress(UserFileError):
        write_files([Write(measured_path(environ, sys.platform, Path.home()), updated(kb.measured, [new]))])


@dataclass(frozen=True)
class DoctorOutcome:
    diagnosis: Diagnosis
    #: The build the fixes install (this torch version's that runs here, else the newest that does).
    fix_plan: Plan | None
    env: TargetEnv


def doctor_environment(
    python: str | None,
    where: MachineOptions,
    options: PlanOptions,
    *,
    environ: Mapping[str, str],
    network: Network | None,
    today: str | None = None,
) -> DoctorOutcome:
    """``wheelfit doctor``: ``verify``'s judgement, and what else is wrong (hidden GPUs, a shadowed torch, changed
    files, extensions of another torch), each with the build that fixes it. Changes nothing."""
    from packaging.utils import canonicalize_name

    from ..doctor import diagnose, extension_names
    from ..install.installed_record import check_installed_records
    from ..kb.drivers import compat_floor, toolkit_floor
    from ..resolve import Machine
    from ..resolve.request import TRITONS

    options = replace(options, kb=with_measured(options.kb, environ))
    outcome = verify_environment(python, where, options, environ=environ, network=network,
                                 others=(*TRITONS, *extension_names()), today=today)  # fmt: skip
    here = outcome.target
    found = Machine.from_report(here.report) if here is not None else None
    facts = outcome.verification.facts
    fix_plan = outcome.plan
    gpu_machine = found is not None and found.gpus is not None
    if here is not None and (fix_plan is None or (gpu_machine and fix_plan.variant == "cpu")):
        try:  # no build of this version serves the GPU: the newest torch that does
            fix_plan = plan(["torch"], here, options, environ=environ, network=network)
        except UsageError:
            raise
        except WheelfitError:
            fix_plan = outcome.plan
    family = {"torch", *(canonicalize_name(c.name) for c in (*facts.companions, *facts.others))}
    family &= {"torch", "torchvision", "torchaudio", *TRITONS}
    changed: tuple[str, ...] = ()
    if facts.error is None:
        records = check_installed_records(outcome.env.install_dirs, outcome.env.prefix, sorted(family))
        changed = tuple(d.name for d in records.distributions if not d.ok)
    major = (facts.cuda or "").split(".")[0]  # minor-version compatibility: the floor of the CUDA major
    floor = (compat_floor(int(major)) or toolkit_floor(str(facts.cuda))) if major.isdigit() else None
    driver_os = found.driver_os if found is not None else "linux"
    needed = (floor.windows if driver_os == "windows" else floor.linux) if floor is not None else None
    diagnosis = diagnose(
        outcome.verification, here.report if here is not None else None, plan=fix_plan, environ=environ,
        install_dirs=[str(d) for d in outcome.env.install_dirs], detected=not where.target, changed=changed,
        driver_floor=str(needed) if needed is not None else None,
    )  # fmt: skip
    return DoctorOutcome(diagnosis, fix_plan, outcome.env)
