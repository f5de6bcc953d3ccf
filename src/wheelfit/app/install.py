"""Installing: the plan's install set handed to uv or pip for an environment, all or nothing, then verified.
Orchestration only: the policy (what to keep, what replaces what) is :mod:`wheelfit.install.policy`, the set
:mod:`wheelfit.install.install_set`, the backend run :mod:`wheelfit.install.run`."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import UsageError, WheelfitError
from ..kinds import Mode
from ..options import InstallOptions, MachineOptions, PlanOptions
from .machine import Target, machine
from .plan import plan
from .session import Network

if TYPE_CHECKING:
    from ..index.config import IndexConfig
    from ..install.backend import Installer
    from ..install.install_set import FamilyFile, FamilySource, InstallSet, Platform
    from ..install.run import BackendOptions, InstallResult
    from ..install.target_env import TargetEnv
    from ..install.verify import Verification
    from ..install.wanted import Wanted
    from ..resolve.plan import Plan

__all__ = [
    "InstallOutcome",
    "backend",
    "family_source",
    "install",
    "install_requirements",
    "planned_files",
    "target_python",
]


def target_python(
    python: str | None,
    environ: Mapping[str, str],
    *,
    cwd: Path | None = None,
    system: bool = False,
    read_only: bool = False,
) -> str:
    """The environment's interpreter, found as uv finds it: ``python`` (an interpreter or a venv directory),
    ``$VIRTUAL_ENV``, ``$CONDA_PREFIX``, a ``.venv`` in ``cwd`` or above; the Python on ``PATH`` only with
    ``system`` (or for a command that only reads, ``read_only``). Never wheelfit's own environment by default."""
    from ..install.find_env import find_python

    return find_python(python, environ, cwd or Path.cwd(), system=system, read_only=read_only)


def backend(name: str, env: TargetEnv) -> Installer:
    """The installer backend ``uv`` (the binary from the ``uv`` PyPI package) or ``pip`` (the target's own)."""
    from packaging.utils import canonicalize_name

    if name == "pip":
        from ..install.pip import PipInstaller

        return PipInstaller(target_has_pip=any(canonicalize_name(n) == "pip" for n in env.installed))
    if name != "uv":
        raise WheelfitError(f"--installer {name}: use uv or pip")
    from ..install.uv import UvInstaller, find_uv

    return UvInstaller(uv=find_uv())


def family_source(plan: Plan, network: Network, config: IndexConfig) -> FamilySource:
    """Where the plan's torch-family files are chosen from: its index; in variant mode, its plain-copy adapter."""
    from ..install.sources import IndexPages, VariantPages
    from ..simple.links import FileLink
    from ..variants.legacy import legacy_variant
    from ..variants.markers import VariantEnvironment

    pages = IndexPages(plan.index_url, network.index)
    if plan.mode is not Mode.VARIANT:
        return pages
    pin = plan.packages[0]
    legacy = legacy_variant(plan.variant)
    fallback = None if legacy is None else IndexPages(config.pytorch_variant_index(legacy), network.index)
    return VariantPages(
        pages,
        FileLink(pin.filename or "", pin.url or ""),
        VariantEnvironment.from_properties(plan.variant, plan.variant_properties),
        network.store,
        fallback,
    )


def planned_files(
    plan: Plan,
    source: FamilySource,
    platform: Platform,
    network: Network,
    *,
    keep: Mapping[str, str] | None = None,
    wheelhouses: Sequence[Path] = (),
    for_lock: bool = False,
) -> list[FamilyFile]:
    """The plan's torch-family files (its pins and what they need of the family) as the backend takes them: the
    one walk ``install`` and ``lock`` share. A lock keeps the index's URLs; an install takes a wheel wheelfit had
    to download to read from where it is, and the planned file from a wheelhouse (``wheelhouses``) when there."""
    from packaging.requirements import Requirement

    from ..install.install_set import family_files
    from ..install.sources import GivenFiles, MetadataReader

    given = source.given if isinstance(source, GivenFiles) else {}
    unpinned = frozenset(link.url for link in given.values() if not link.hashes)  # the user's URLs without a hash
    reader = MetadataReader(network.index, network.store, unpinned, take_download=not for_lock)

    def in_wheelhouse(filename: str) -> Path | None:
        return next((d / filename for d in wheelhouses if (d / filename).is_file()), None)

    pins = [Requirement(p.requirement) for p in plan.packages]
    return family_files(pins, source, reader, platform, keep=keep, wheelhouse=in_wheelhouse if wheelhouses else None)


def install(
    plan: Plan | None, wanted: InstallSet, env: TargetEnv, *, installer: Installer, options: BackendOptions
) -> InstallResult:
    """Install ``wanted`` (the plan's install set) into ``env`` with ``installer``, all or nothing; with
    ``options.dry_run`` say what that would do. ``installer`` is a small interface
    (:class:`~wheelfit.install.backend.Installer`): uv, pip, or a fake."""
    from ..install.run import run_install

    return run_install(plan, wanted, env, installer, options)


@dataclass(frozen=True)
class InstallOutcome:
    result: InstallResult
    env: TargetEnv
    #: ``None`` on a dry run or when verification was not asked for.
    verification: Verification | None = None

    def to_dict(self) -> dict[str, Any]:
        data = self.result.to_dict()
        data["python"] = self.env.executable
        if self.verification is not None:
            data["verify"] = self.verification.to_dict()
        return data


def install_requirements(
    requirements: Sequence[str],
    where: MachineOptions,
    options: PlanOptions,
    install_options: InstallOptions,
    *,
    environ: Mapping[str, str],
    network: Network,
    wrap_backend: Callable[[Installer], Installer] | None = None,
) -> InstallOutcome:
    """``wheelfit install``: plan for the machine (``where``), install into the environment, verify.

    ``requirements`` and the files of ``install_options.requirement_files`` (``-r``) and ``constraint_files``
    (``-c``) are read as pip reads them (nested files, markers, and their ``--index-url``, ``--extra-index-url``,
    ``--find-links``, ``--pre`` and ``--no-index`` lines, which add to the options; an index URL given wins).

    The environment is ``install_options.python`` or the one uv would find (:func:`target_python`). It is
    described and the machine detected at the same time; its Python is the plan's. As pip and uv do, a torch
    already installed that meets the request is kept (unless ``upgrade``), here only when it also has kernels for
    the machine (:mod:`wheelfit.install.policy`). Requirements that name no torch-family package are installed
    alone; packages built against torch are planned with it (:mod:`wheelfit.stack`). ``find_links`` are
    wheelhouses: for everything that is not torch-family, and for a torch-family file only when it has exactly the
    name of the one the plan chose. ``wrap_backend`` wraps the installer backend (the command line imports its
    renderer while the backend runs).
    """
    o = install_options
    if o.installer not in ("uv", "pip"):  # before anything runs; backend() says the same to its own callers
        raise UsageError(f"--installer {o.installer}: use uv or pip")
    from ..install.target_env import start_inspect

    # First: the child process that describes the environment (~0.15 s) runs while everything else is imported.
    here_dir = o.cwd or Path.cwd()
    pending = start_inspect(target_python(o.python, environ, cwd=here_dir, system=o.system), environ)
    try:
        from ..install.transaction import RECOVER_CHOICES

        if o.recover is not None and o.recover not in RECOVER_CHOICES:
            raise UsageError(f"--recover {o.recover}: use {' or '.join(RECOVER_CHOICES)}")
        from ..requirements import IndexOptions, read_file, read_requirements

        typed = IndexOptions(options.index_url, options.extra_index_urls, options.find_links, options.pre, o.no_index)
        asked = read_requirements(
            [*requirements] or ([] if o.requirement_files else ["torch"]), o.requirement_files, o.constraint_files,
            reader=read_file, cwd=str(here_dir), environ=environ, given=typed,
        )  # fmt: skip
        # A file's index lines add to the options; a file with --hash lines (``wheelfit lock -o requirements.txt``)
        # is installed in hash-checking mode, as pip does.
        options = replace(options, index_url=asked.index_url, extra_index_urls=tuple(asked.extra_index_urls),
                          find_links=tuple(asked.find_links), pre=asked.pre)  # fmt: skip
        require_hashes = any(r.hashes for r in asked.requirements)
        from ..index.config import resolve_index_config
        from ..index.local import resolve_find_links
        from ..install.wanted import sort_wanted

        config = resolve_index_config(
            environ, pytorch_index=options.pytorch_index, index_url=options.index_url, offline=network.offline,
            extra_index_urls=options.extra_index_urls,
        )  # fmt: skip
        links = resolve_find_links(environ, options.find_links)
        options = replace(options, find_links=links, pytorch_index=config.pytorch_base)
        # the session's client is made on its own thread (joined when the session ends) while this one waits for the
        # child process: no contention for the GIL, and nothing made before the requirements were read and checked
        network.prepare()
        here = machine(where, environ=environ, python=lambda: full_python(pending.result()), kb=options.kb)
        env = pending.result()
    except BaseException:  # refused before the child's answer was read: it is not left running
        pending.close()
        raise
    from ..install.run import recover_first  # a killed earlier install: undone before the plan looks at the env

    env, recovered = recover_first(env, environ, recover=o.recover, dry_run=o.dry_run, progress=network.progress)
    asked = asked.for_environment(env.markers)
    wanted = sort_wanted(asked.requirements, [*o.constraints, *(c.spec for c in asked.constraints)], env.markers)
    notes: list[str] = list(recovered)
    if config.extra_index_urls:
        notes.append(
            "--extra-index-url is used only for packages that are not torch-family; torch-family packages come "
            "only from the plan's index"
        )
    chosen: Plan | None = None
    family: list[FamilyFile] = []
    from ..install.policy import one_cuda_major

    if wanted.asks_family:
        chosen, source, why, keep = _plan_install(wanted, here, env, options, o, config, environ=environ,
                                                  network=network)  # fmt: skip
        notes += why
        one_cuda_major(chosen, wanted.other)
        # A variant plan's wheel is offered under its plain name, which a wheelhouse's ordinary torch may share.
        houses = [Path(link) for link in links if "://" not in link] if chosen.mode is not Mode.VARIANT else []
        family = planned_files(chosen, source, _platform(env), network, keep=keep, wheelhouses=houses)
        from ..stack.files import extension_files

        family += extension_files(chosen.extensions, network.store)
    runner = backend(o.installer, env)
    if wrap_backend is not None:
        runner = wrap_backend(runner)
    from packaging.utils import canonicalize_name

    from ..family import TORCH_FAMILY
    from ..install.install_set import InstallSet
    from ..install.run import BackendOptions

    installed: dict[str, str] = {canonicalize_name(n): v for n, v in env.installed.items()}
    taken = {f.name for f in family}
    held = {n: installed[n] for n in TORCH_FAMILY if n not in taken and n in installed}
    wanted_set = InstallSet(tuple(family), wanted.other, wanted.constraints, held, wanted.extras)
    run = BackendOptions(
        config.default_index, _backend_environ(environ, network), config.extra_index_urls,
        dry_run=o.dry_run, offline=config.offline, upgrade=o.upgrade, reinstall=o.reinstall, no_deps=o.no_deps,
        find_links=links, no_index=asked.no_index, require_hashes=require_hashes, recover=o.recover,
        snapshot=o.snapshot, progress=network.progress,
    )  # fmt: skip
    result = install(chosen, wanted_set, env, installer=runner, options=run)
    if notes:
        result = replace(result, notes=(*notes, *result.notes))
    checked = None
    if o.verify_after and not o.dry_run and chosen is not None:
        from ..install.verify import probe_torch
        from .verify import verify

        checked = verify(chosen, probe_torch(env.executable, environ), here, kb=options.kb,
                         target_from=where.described)  # fmt: skip
    return InstallOutcome(result, env, checked)


def _plan_install(
    wanted: Wanted, here: Target, env: TargetEnv, options: PlanOptions, install_options: InstallOptions,
    config: IndexConfig, *, environ: Mapping[str, str], network: Network,
) -> tuple[Plan, FamilySource, list[str], dict[str, str]]:  # fmt: skip
    """The install policy's plan (:func:`~wheelfit.install.policy.plan_install`), and where its torch-family files
    come from: the plan's index, with the user's own files first."""
    from packaging.utils import canonicalize_name

    from ..install.direct import direct_file
    from ..install.policy import plan_install
    from ..resolve import Machine
    from .plan import with_measured

    given = tuple(canonicalize_name(direct_file(d).name) for d in wanted.direct)

    kb = with_measured(options.kb, environ)  # read once: every plan the policy asks for rests on the same
    options = replace(options, kb=kb)

    def planner(requirements: Sequence[str], exact: bool, forced: bool) -> Plan:
        chosen = replace(options, pre=options.pre or exact, force=options.force or forced)
        return plan(requirements, here, chosen, environ=environ, network=network, from_files=given)

    decided = plan_install(wanted, Machine.from_report(here.report), env, planner, kb, install_options,
                           options.torch_backend)  # fmt: skip
    source = family_source(decided.plan, network, config)
    if decided.given:
        from ..install.sources import GivenFiles

        source = GivenFiles(source, {name: d.link for name, d in decided.given.items()})
    return decided.plan, source, list(decided.notes), decided.keep


def _backend_environ(environ: Mapping[str, str], network: Network) -> Mapping[str, str]:
    """``environ`` for uv or pip (proxy variables included: both read them), with ``--timeout`` and ``--cert``
    in the variables each reads: uv UV_HTTP_TIMEOUT (whole seconds) and SSL_CERT_FILE; pip PIP_DEFAULT_TIMEOUT
    and PIP_CERT, and REQUESTS_CA_BUNDLE too, which requests would otherwise let win over pip's own setting when
    the machine sets it (psf/requests#4726)."""
    timeout, cert = network.timeout, network.cert
    out = dict(environ)
    if timeout is not None:
        out.update(UV_HTTP_TIMEOUT=str(max(1, round(timeout))), PIP_DEFAULT_TIMEOUT=str(timeout))
    if cert is not None:
        out.update(SSL_CERT_FILE=cert, PIP_CERT=cert, REQUESTS_CA_BUNDLE=cert)
    return out


def full_python(env: TargetEnv) -> str:
    return env.markers.get("python_full_version", env.python)


def _platform(env: TargetEnv) -> Platform:
    from packaging.tags import parse_tag

    from ..install.install_set import Platform

    return Platform(tuple(t for text in env.tags for t in parse_tag(text)), env.markers, env.python)
