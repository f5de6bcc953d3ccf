"""Install policy: which plan an install follows given what the environment holds and what the user gave, as
pip and uv would decide it, but for a machine's build. Pure apart from the planner it is handed.

Kept: an installed torch that meets the request and has kernels here (no ``--upgrade``), from wherever it came
(PyPI's, whose build the knowledge base names; a mirror's). Replaced: a CPU torch on a machine with a GPU that
nobody asked for. A torch given as a file is planned at its own version, its companions and Triton from that
build's index, and judged: a file without kernels here is installed as asked, with the reason as a warning.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from packaging.utils import canonicalize_name
from packaging.version import Version

from ..candidates.knowledge import pypi_label
from ..errors import UsageError, WheelfitError
from ..kinds import BuildKind
from ..resolve.request import TRITONS
from .direct import DirectFile, direct_file

if TYPE_CHECKING:
    from ..kb.matrix import Knowledge
    from ..options import InstallOptions
    from ..resolve import Machine
    from ..resolve.plan import Plan
    from .target_env import TargetEnv
    from .wanted import Wanted

__all__ = ["InstallPlan", "Planner", "one_cuda_major", "plan_install", "with_pin"]

#: Plans ``requirements`` (torch first); ``exact``: an exact pin, pre-releases allowed; ``forced``: the build asked
#: for even without kernels here.
Planner = Callable[[Sequence[str], bool, bool], "Plan"]


@dataclass(frozen=True)
class InstallPlan:
    """The plan an install follows, the files the user gave (by name), what the user should know, and the
    installed torch-family packages kept as they are."""

    plan: Plan
    given: dict[str, DirectFile]
    notes: tuple[str, ...]
    keep: dict[str, str]


def plan_install(
    wanted: Wanted,
    found: Machine,
    env: TargetEnv,
    planner: Planner,
    kb: Knowledge,
    options: InstallOptions,
    torch_backend: str | None,
) -> InstallPlan:
    """The plan for ``wanted`` in ``env`` on ``found``; ``torch_backend`` is the build the user chose, if any."""

    def plan_for(torch: str, exact: bool = False, forced: bool = False) -> Plan:
        return planner([torch, *companions, *(str(e) for e in wanted.extensions)], exact, forced)

    notes: list[str] = []
    keep: dict[str, str] = {}
    given: dict[str, DirectFile] = {canonicalize_name(d.name): d for d in map(direct_file, wanted.direct)}
    asked = next((r for r in wanted.family if canonicalize_name(r.name) == "torch"), None)
    companions = [str(r) for r in wanted.family if canonicalize_name(r.name) not in given and r is not asked]
    # A companion given as a file (a lock's lines) is planned at its own version, and its file then taken; a
    # Triton given so is what the walk finds in torch's metadata, and is taken from the file given there
    companions += [f"{name}=={d.version}" for name, d in given.items() if name != "torch" and name not in TRITONS]
    torch_file = given.get("torch")
    have = next((v for n, v in env.installed.items() if canonicalize_name(n) == "torch"), None)
    chosen: Plan | None = None
    if torch_file is not None:
        try:
            chosen = plan_for(f"torch=={torch_file.version}", exact=True)
        except WheelfitError as exc:
            notes.append(f"{torch_file.link.filename} is installed as given, but: {exc}")
            try:  # a build the index knows: its companions and Triton from its own index
                chosen = plan_for(f"torch=={torch_file.version}", exact=True, forced=True)
            except WheelfitError:  # a build of its own (a local label no index has): the release's best
                chosen = plan_for(f"torch=={torch_file.version.public}", exact=True, forced=True)
        chosen = with_pin(chosen, "torch", str(torch_file.version))
    elif have is not None and not options.upgrade:
        try:
            installed = Version(have)
            meets = asked is None or asked.specifier.contains(installed, prereleases=True)
        except ValueError:  # InvalidVersion, or a release number past int()'s 4300-digit limit
            meets = False
        if meets:
            # PyPI's torch carries no label: it is the build the knowledge base says PyPI has (cu128 for 2.9).
            pypi = None if installed.local else pypi_label(kb, installed, found.platform_key)
            label = installed.local or pypi
            gpu = found.gpus is not None and found.gpus.kind is not BuildKind.MPS
            asked_cpu = (asked is not None and "+cpu" in str(asked)) or torch_backend == "cpu"
            try:
                if label == "cpu" and gpu and not asked_cpu:
                    # not the user's choice of build: what was installed before (PyPI's CPU-only wheel, a mistake)
                    chosen = None
                    notes.append(f"torch {have} is installed: a CPU build on a machine with a GPU; replaced by this "
                                 "machine's build")  # fmt: skip
                else:
                    chosen = plan_for(f"torch=={have}" + (f"+{pypi}" if pypi else ""), exact=True)
            except UsageError:  # the build asked for (an index URL's variant, a backend) is another: it replaces it
                chosen = None
                notes.append(f"torch {have} is installed; the build asked for replaces it")
            except WheelfitError as exc:
                notes.append(f"the installed torch {have} is replaced: {exc}")
            if chosen is not None:
                pin = next(p.requirement for p in chosen.packages if p.name == "torch").partition("==")[2]
                if pypi or (Version(pin) == installed and not options.reinstall):
                    # kept as it is, from wherever it was installed (PyPI, a mirror, a variant wheel's plain copy):
                    # the plan brings its companions, and a dependency on torch finds it
                    chosen = replace(chosen, packages=tuple(p for p in chosen.packages if p.name != "torch"))
                    keep["torch"] = have
                notes.append(
                    f"torch {have}{f' (PyPI: the {pypi} build)' if pypi else ''} is installed and has kernels for "
                    "this machine: kept (-U upgrades it)"
                    if pypi or Version(pin) == installed
                    else f"torch {have} is installed; its build for this machine is {pin}, which replaces it"
                )
    if chosen is None:
        chosen = plan_for(str(asked) if asked is not None else "torch")
    return InstallPlan(chosen, given, tuple(notes), keep)


def one_cuda_major(chosen: Plan, others: Sequence[str]) -> None:
    """Refuse packages that name another CUDA major than the planned torch's (``cupy-cuda12x``, ``jax[cuda12]``,
    ``nvidia-*-cu12`` beside a CUDA 13 torch): one process would load two CUDA runtimes. Before any download."""
    from packaging.requirements import InvalidRequirement, Requirement

    from ..kb.extensions import cuda_major_of
    from ..resolve import ResolveError
    from .verify import expected_runtime

    kind, version = expected_runtime(chosen.variant)
    if kind is not BuildKind.CUDA or version is None:  # a CPU, ROCm or XPU torch brings no CUDA runtime to clash with
        return
    major_here = version.split(".")[0]
    mixed = []
    for text in others:
        try:
            req = Requirement(text)
        except InvalidRequirement:
            continue
        major = cuda_major_of(req.name, frozenset(req.extras))
        if major is not None and major != major_here:
            mixed.append(f"{text} (CUDA {major})")
    if mixed:
        raise ResolveError(
            f"{', '.join(mixed)} beside torch {chosen.torch_version}+{chosen.variant} (CUDA {major_here}): one process "
            f"would load two CUDA runtimes; ask for the CUDA {major_here} build of each, or for a torch of their CUDA"
        )


def with_pin(chosen: Plan, name: str, version: str) -> Plan:
    """``chosen`` with ``name`` pinned at exactly ``version`` (a file the user gave)."""
    from ..resolve.plan import PackagePin

    pins = tuple(PackagePin(p.name, version, f"{p.name}=={version}") if p.name == name else p for p in chosen.packages)
    return replace(chosen, packages=pins)
