"""What is wrong with the torch an environment has, in plain words, and the one step that fixes each. Pure.

The verdicts are ``verify``'s (:func:`wheelfit.install.runs_here.judge`: kernels, runtime, driver, companions),
read by their :class:`~wheelfit.install.verify.Problem`, never by their words; the doctor adds what an installer
alone cannot see: GPUs hidden by a variable, a torch shadowed by another copy, files changed since they were
installed, extensions built for another torch. Each finding carries a :class:`Fix` as a value; the command line
renders it as the command to run.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

from ..install.verify import COMPANIONS, Problem, TorchFacts, Verification
from ..kb.overrides import rocm_overrides
from ..report import HardwareReport
from ..resolve.plan import Plan
from .extensions import extension_findings
from .model import Diagnosis, Finding, Fix, FixKind, Issue

__all__ = ["diagnose"]


@dataclass(frozen=True)
class _Context:
    facts: TorchFacts
    verification: Verification
    #: The build the fixes install (``None``: no build runs here).
    plan: Plan | None
    companions: tuple[str, ...]
    report: HardwareReport | None


def diagnose(
    verification: Verification,
    report: HardwareReport | None,
    *,
    plan: Plan | None,
    environ: Mapping[str, str],
    install_dirs: Sequence[str],
    detected: bool,
    changed: Sequence[str] = (),
    driver_floor: str | None = None,
) -> Diagnosis:
    """The findings for one environment. ``verification`` is ``verify``'s judgement of its torch on the machine of
    ``report``; ``plan`` the build that runs there and that the fixes install (this torch version's, else the
    newest that runs; ``None``: none does); ``install_dirs`` the environment's own directories;
    ``detected`` whether the machine is this one (not a ``--target``), so what torch sees can be compared with it;
    ``changed`` the torch-family distributions whose files no longer match their RECORD; ``driver_floor`` the
    driver torch's CUDA runtime needs."""
    facts = verification.facts
    companions = tuple(c.name for c in facts.companions)
    ctx = _Context(facts, verification, plan, companions, report)
    found: list[Finding] = []
    if facts.error is not None:
        if facts.missing:
            found.append(Finding(Issue.NOT_INSTALLED, "torch is not installed in this environment.", facts.error,
                                 (_install(ctx, pinned=False),)))  # fmt: skip
        else:
            found.append(Finding(Issue.IMPORT_FAILS, "import torch fails: the installed torch is broken.",
                                 facts.error, (_install(ctx, reinstall=True),)))  # fmt: skip
        found += _shadowing(facts, install_dirs)
        return Diagnosis(verification, tuple(found), ())
    found += _shadowing(facts, install_dirs)
    found += _hidden(report, environ) if detected else []  # this shell's variables say nothing of another machine
    found += _from_checks(ctx, driver_floor)
    found += _xpu_not_xe(ctx, report)
    if detected and not facts.gpus and not any(f.issue is Issue.GPUS_HIDDEN for f in found):
        found += _not_visible(ctx, report)
    found += _tritons(ctx)
    found += _changed(ctx, changed)
    found += extension_findings(facts, _label(verification))
    good = tuple(c.detail for c in verification.checks if c.ok is True)
    return Diagnosis(verification, tuple(found), good)


# -- fixes ----------------------------------------------------------------------------------------------------


def _pin(plan: Plan) -> str:
    return next((p.requirement for p in plan.packages if p.name == "torch"), f"torch=={plan.torch_version}")


def _install(ctx: _Context, *, pinned: bool = True, reinstall: bool = False) -> Fix:
    """Install the build that runs here, pinned to the exact build so that the installed one is not kept; the
    companions installed come along."""
    chosen = ctx.plan
    if not pinned or chosen is None:
        return Fix(FixKind.INSTALL, ("torch", *ctx.companions), upgrade=chosen is None and pinned, reinstall=reinstall)
    return Fix(FixKind.INSTALL, (_pin(chosen), *ctx.companions), reinstall=reinstall)


def _label(verification: Verification) -> str:
    return verification.label or "cpu"


# -- verify's problems ----------------------------------------------------------------------------------------


def _from_checks(ctx: _Context, driver_floor: str | None) -> list[Finding]:
    """One finding per kind of failed check (the same problem on eight GPUs is one finding)."""
    out: list[Finding] = []
    seen: set[Issue] = set()
    label = _label(ctx.verification)
    runs = ctx.plan
    better = f"torch {_pin(runs).partition('==')[2]}" if runs is not None else "another torch"
    for check in ctx.verification.checks:
        if check.ok is not False or check.problem is None:
            continue
        problem = check.problem
        if problem is Problem.WRONG_KIND:
            issue = Issue.CPU_BUILD_ON_GPU if label == "cpu" else Issue.WRONG_VENDOR
            what = "a CPU build" if label == "cpu" else f"a {label} build"
            finding = Finding(issue, f"torch is {what}: it cannot use this machine's GPU; {better} can.",
                              check.detail, (_install(ctx),))  # fmt: skip
        elif problem is Problem.NO_KERNELS:
            evidence = check.detail + _hsa_hint(ctx.report) if label.startswith("rocm") else check.detail
            finding = Finding(Issue.NO_KERNELS, f"this {label} build has no kernels for the GPU (\"no kernel image is "
                              f"available\"); {better} has.", evidence, (_install(ctx),))  # fmt: skip
        elif problem is Problem.DRIVER_TOO_OLD:
            fixes = [_install(ctx)]
            if driver_floor is not None:
                fixes.append(Fix(FixKind.DRIVER, name=driver_floor))
            finding = Finding(Issue.DRIVER_TOO_OLD, f"the NVIDIA driver is too old for this {label} build; "
                              f"{better} runs on it.", check.detail, tuple(fixes))  # fmt: skip
        elif problem is Problem.COMPANION:
            finding = Finding(Issue.COMPANION, f"{check.name} does not match torch: it fails at import or at its "
                              "first operator.", check.detail, (_install(ctx),))  # fmt: skip
        elif problem is Problem.GPU_QUERY_FAILS:
            finding = Finding(Issue.NO_GPU_VISIBLE, "torch fails when it asks for its GPUs.", check.detail,
                              (_install(ctx, reinstall=True),))  # fmt: skip
        else:  # BAD_VERSION, MIXED_RUNTIMES: not a build PyTorch made
            finding = Finding(Issue.BROKEN_BUILD, "torch is not a build PyTorch published.", check.detail,
                              (_install(ctx, reinstall=True),))  # fmt: skip
        if finding.issue not in seen or finding.issue is Issue.COMPANION:
            seen.add(finding.issue)
            out.append(finding)
    return out


def _hsa_hint(report: HardwareReport | None) -> str:
    """For an AMD GPU no build lists: the listed target whose kernels ``HSA_OVERRIDE_GFX_VERSION`` would run."""
    overrides = rocm_overrides()
    for a in report.accelerators if report is not None else ():
        gfx = a.gfx or ""
        if a.vendor == "amd" and gfx in overrides:
            listed, value, risk = overrides[gfx]
            return (
                f"; HSA_OVERRIDE_GFX_VERSION={value} would run {listed}'s kernels on this {gfx} (not supported by AMD"
                + (f": {risk}" if risk else "")
                + ")"
            )
    return ""


# -- the doctor's own checks ----------------------------------------------------------------------------------

#: Values that hide every device (CUDA's and ROCm's runtimes read the list up to its first invalid entry).
_HIDE_ALL = ("", "-1", "none", "nodevfiles")


def _hidden(report: HardwareReport | None, environ: Mapping[str, str]) -> list[Finding]:
    """A visibility variable that hides every GPU the machine has: torch then sees none and runs on the CPU."""
    if report is None:
        return []
    out: list[Finding] = []
    nvidia = [a for a in report.accelerators if a.vendor == "nvidia" and a.compute_capability]
    name = "CUDA_VISIBLE_DEVICES"
    if nvidia and name in environ and all(a.extra.get("visible", True) is False for a in nvidia):
        out.append(_hidden_finding(name, environ[name], len(nvidia)))
    amd = [a for a in report.accelerators if a.vendor == "amd" and (a.gfx or a.effective_gfx)]
    for name in ("HIP_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES", "CUDA_VISIBLE_DEVICES"):
        value = environ.get(name)
        if amd and value is not None and _hides_all(value, len(amd)):
            out.append(_hidden_finding(name, value, len(amd)))
            break
    return out


def _hides_all(value: str, count: int) -> bool:
    first = value.split(",")[0].strip()
    if first.lower() in _HIDE_ALL:
        return True
    return first.isdigit() and int(first) >= count


def _hidden_finding(name: str, value: str, count: int) -> Finding:
    shown = value if len(value) <= 60 else value[:60] + "..."
    return Finding(
        Issue.GPUS_HIDDEN,
        f"{name} hides every GPU: torch sees none of the {count} and runs on the CPU.",
        f"{name}={shown!r}",
        (Fix(FixKind.UNSET, name=name),),
    )


def _not_visible(ctx: _Context, report: HardwareReport | None) -> list[Finding]:
    """A GPU build on a machine with GPUs that torch does not see: ``torch.cuda.is_available()`` is False."""
    facts = ctx.facts
    if report is None or not (facts.cuda or facts.hip or facts.xpu):
        return []
    kind = "nvidia" if facts.cuda else "amd" if facts.hip else "intel"
    gpus = [a for a in report.accelerators if a.vendor == kind and (a.compute_capability or a.gfx or a.xpu_capable)]
    if not gpus:
        return []
    why = facts.cuda_error or "torch reports no device and no error"
    return [
        Finding(
            Issue.NO_GPU_VISIBLE,
            f"torch.cuda.is_available() is False although the machine has {len(gpus)} {kind.upper()} GPU"
            f"{'s' if len(gpus) > 1 else ''}: torch runs on the CPU.",
            why,
        )
    ]


def _xpu_not_xe(ctx: _Context, report: HardwareReport | None) -> list[Finding]:
    """An XPU build where the only Intel GPU is not an Xe one: it runs on the CPU, a larger download for nothing."""
    if report is None or not ctx.facts.xpu:
        return []
    intel = [a for a in report.accelerators if a.vendor == "intel"]
    if not intel or any(a.xpu_capable for a in intel):
        return []
    names = ", ".join(dict.fromkeys(a.name for a in intel))
    return [
        Finding(
            Issue.XPU_NOT_XE,
            f"torch is an XPU build, but {names} is not an Intel Xe GPU: torch.xpu cannot use it, and the CPU "
            "build does the same with a smaller download.",
            f"torch.version.xpu = {ctx.facts.xpu}; {names}: not XPU-capable",
            (_install(ctx),),
        )
    ]


def _shadowing(facts: TorchFacts, install_dirs: Sequence[str]) -> list[Finding]:
    """torch imported from outside the environment (``PYTHONPATH``, the user site of an interpreter that is not a
    venv), or two torch installs in the environment itself: what Python imports is not what an installer manages.
    A copy further down the path (the user site behind a venv's own) is never imported, and is not a finding."""

    def inside(path: str) -> bool:
        return any(inside_of(path, d) for d in install_dirs)

    location = facts.location
    where = "; ".join(f"torch {i.version} in {i.path}" for i in facts.installs)
    if location is not None and not inside(location):
        evidence = f"torch is imported from {location}" + (f" ({where})" if where else "")
        user = facts.user_site is not None and inside_of(location, facts.user_site)
        fix = Fix(FixKind.UNINSTALL_FIRST, name="torch") if user else Fix(FixKind.UNSHADOW, name=location)
        place = "the user site" if user else location
        return [Finding(Issue.SHADOWED, f"torch is imported from {place}, outside this environment: the "
                        "environment's own torch is hidden behind it.", evidence, (fix,))]  # fmt: skip
    own = [i for i in facts.installs if inside(i.path)]
    if len(own) < 2:
        return []
    evidence = f"{len(own)} torch installs: " + "; ".join(f"torch {i.version} in {i.path}" for i in own)
    return [Finding(Issue.SHADOWED, "two torch installs in one environment: which files belong to which is lost, "
                    "and the next install may break it.", evidence,
                    (Fix(FixKind.INSTALL, ("torch",), reinstall=True),))]  # fmt: skip


def inside_of(path: str, directory: str) -> bool:
    real, root = (os.path.normcase(os.path.realpath(p)) for p in (path, directory))
    return real == root or real.startswith(root + os.sep)


def _tritons(ctx: _Context) -> list[Finding]:
    """The Triton torch requires (``triton==3.5.0``), against the one installed: torch.compile breaks on another."""
    facts = ctx.facts
    installed = {canonicalize_name(c.name): c.version for c in facts.others}
    out: list[Finding] = []
    for text in facts.requires:
        try:
            req = Requirement(text)
        except InvalidRequirement:
            continue
        name = canonicalize_name(req.name)
        if "triton" not in name or name in COMPANIONS or not req.specifier or name not in installed:
            continue
        if req.marker is not None and "extra" in str(req.marker):
            continue
        try:
            ok = req.specifier.contains(Version(installed[name]), prereleases=True)
        except InvalidVersion:
            ok = False
        if not ok:
            out.append(Finding(Issue.TRITON, f"{req.name} {installed[name]} is not the one torch needs: "
                               "torch.compile fails with it.", f"torch requires {req.name}{req.specifier}",
                               (_install(ctx),)))  # fmt: skip
    return out


def _changed(ctx: _Context, changed: Sequence[str]) -> list[Finding]:
    if not changed:
        return []
    names = ", ".join(changed)
    return [
        Finding(
            Issue.FILES_CHANGED,
            f"files of {names} differ from what was installed: something overwrote them.",
            f"{names}: files do not match their RECORD",
            (Fix(FixKind.INSTALL, tuple(changed), reinstall=True),),
        )
    ]
