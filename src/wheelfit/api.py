"""wheelfit as a library: :func:`detect`, :func:`machine`, :func:`plan`, :func:`install`, :func:`verify`.

Every function takes the system state it uses as arguments (the sysroot, the environment variables, the
network session with its HTTP client and cache), the way ``packaging.tags.cpython_tags(platforms=...)`` does,
so that a caller (the command line, a CI script, a test) decides what counts. Nothing here prints.

    with wheelfit.api.network(os.environ) as net:
        target = wheelfit.api.machine("cuda=8.6,driver=580.95.05", environ=os.environ)
        print(wheelfit.api.plan(["torch"], target, environ=os.environ, network=net).to_dict())
"""

from __future__ import annotations

import contextlib
import sys
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .errors import UsageError, WheelfitError
from .kinds import BuildKind, Mode

if TYPE_CHECKING:
    import httpx
    from packaging.specifiers import SpecifierSet

    from .doctor import Diagnosis
    from .fetch.cache import Cache
    from .fetch.wheels import ProgressCallback, WheelStore
    from .index.client import IndexClient
    from .index.config import IndexConfig
    from .install.backend import Installer
    from .install.install_set import FamilyFile, FamilySource, InstallSet, Platform
    from .install.run import InstallOptions, InstallResult
    from .install.target_env import TargetEnv
    from .install.verify import TorchFacts, Verification
    from .install.wanted import Wanted
    from .kb.matrix import Knowledge
    from .report import HardwareReport
    from .resolve import BuildVerdict, Machine, Request
    from .resolve.plan import Plan
    from .resolve.request import BackendHow
    from .stack.sources import ExtensionSources
    from .variants.metadata import VariantsMetadata
    from .variants.ranking import Ranking

__all__ = [
    "DoctorOutcome",
    "InstallOutcome",
    "Network",
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


# -- the machine ----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Target:
    """The machine a plan is for: its hardware report, and what the plan should say about how it was made
    (the override variables that were used)."""

    report: HardwareReport
    notes: tuple[str, ...] = ()


def detect(
    *,
    sysroot: Path | None = None,
    environ: Mapping[str, str],
    probe_timeout: float = 15.0,
    disabled: Sequence[str] = (),
) -> HardwareReport:
    """Probe this machine, or the simulated one under ``sysroot``, with the detector plugins."""
    from wheelfit_probekit import System

    from .probe import detect as run_detect

    if sysroot is not None and not sysroot.is_dir():
        raise UsageError(f"--sysroot {sysroot} is not a directory")
    return run_detect(System.from_sysroot(sysroot, environ=environ, command_timeout=probe_timeout), disabled=disabled)


def machine(
    target: str | None = None,
    *,
    environ: Mapping[str, str],
    sysroot: Path | None = None,
    probe_timeout: float = 15.0,
    disabled: Sequence[str] = (),
    python: str | Callable[[], str] | None = None,
) -> Target:
    """The one way every command gets its machine: ``target`` (a saved report or a ``key=value,...`` spec) or
    detection, then the override variables of ``environ`` (uv's and the reference variant providers').

    ``python`` is the target environment's Python version (or a function giving it, asked only after detection,
    so that both run at once); it replaces the detected one, and is a ``target`` spec's default.
    """
    from .probe.target import apply_overrides, load_target

    def python_version() -> str | None:
        return python() if callable(python) else python

    if target:
        report = load_target(target, host_python=python_version())
    else:
        report = detect(sysroot=sysroot, environ=environ, probe_timeout=probe_timeout, disabled=disabled)
        version = python_version()
        if version is not None:
            report = replace(report, platform=replace(report.platform, python=version))
    report, notes = apply_overrides(report, environ)
    return Target(report, tuple(notes))


# -- the network ----------------------------------------------------------------------------------------------


@dataclass
class Network:
    """One run's HTTP client and cache, shared by planning and installing (one pool, one TLS trust store).

    ``client`` may be left out and ``connect`` given instead: the client is then made on the first request, so
    that a run that only reads the cache (``--offline``) never imports httpx or loads a trust store.
    """

    client: httpx.Client | None
    cache: Cache
    offline: bool = False
    progress: ProgressCallback | None = None
    connect: Callable[[], httpx.Client] | None = None
    #: ``--timeout``: seconds to connect and per read, for the installer backend too (``None``: the defaults).
    timeout: float | None = None
    #: ``--cert``: the CA bundle that verifies servers, for the installer backend too (``None``: the default store).
    cert: str | None = None
    #: Seconds each index read (page, metadata file; retries included) may take (``None``: no overall bound).
    deadline: float | None = None
    _making: threading.Thread | None = field(default=None, init=False, repr=False)

    @property
    def http(self) -> httpx.Client:
        if self._making is not None:
            self._making.join()
            self._making = None
        if self.client is None:
            if self.connect is None:
                raise WheelfitError("no HTTP client was given for this network session")
            self.client = self.connect()
        return self.client

    def prepare(self) -> None:
        """Make the client (importing httpx, loading the trust store: ~0.1 s) on a thread, while the caller waits
        on something that holds no GIL (a child process describing the target environment, hardware tools).
        A failure is left for the first real use of :attr:`http`, which tries again and raises it."""
        if self.offline or self.client is not None or self.connect is None or self._making is not None:
            return
        connect = self.connect

        def make() -> None:
            with contextlib.suppress(Exception):  # :attr:`http` makes it again and reports the error
                self.client = connect()

        self._making = threading.Thread(target=make, name="wheelfit-http", daemon=True)
        self._making.start()

    @cached_property
    def index(self) -> IndexClient:
        from .index.client import IndexClient

        client = self.client if self.client is not None else (lambda: self.http)
        return IndexClient(client, self.cache, offline=self.offline, memo=True, deadline=self.deadline)

    @cached_property
    def store(self) -> WheelStore:
        """The wheels wheelfit must open itself (a variant wheel, a wheel whose index serves no PEP 658 file)."""
        from .fetch.wheels import WheelStore

        return WheelStore(self.cache.root / "by-sha256", lambda: self.http, self.progress, offline=self.offline)


@contextlib.contextmanager
def network(
    environ: Mapping[str, str],
    *,
    offline: bool = False,
    progress: ProgressCallback | None = None,
    cache_dir: Path | None = None,
    timeout: float | None = None,
    cert: str | None = None,
    deadline: float | None = None,
) -> Iterator[Network]:
    """A :class:`Network` with this user's cache (``WHEELFIT_CACHE_DIR`` or the platform's cache directory);
    its client, made when first needed, is closed on exit. ``WHEELFIT_OFFLINE`` in ``environ`` turns
    ``offline`` on. ``timeout``: seconds to connect and per read (default 10 and 30). ``cert``: a PEM file of CA
    certificates trusted instead of the default store (``SSL_CERT_FILE``, else the OS store and certifi's).
    ``deadline``: seconds each index read may take, retries included (``wheelfit.fetch.deadline.index_deadline``
    gives a phase's from the environment); ``None``: only the timeouts and retries bound it.

    Inside the block (on the main thread) Ctrl-C stops every request and download at once, wherever it runs,
    and raises ``KeyboardInterrupt``; a server that does not answer for 2 s is reported to ``progress``
    (``state="stalled"``) every few seconds."""
    from .fetch.cache import Cache, default_cache_dir
    from .fetch.watch import Watch, sigint_cancels

    watch = Watch(on_stall=_stall_reporter(progress))

    def connect() -> httpx.Client:
        from .fetch.http import make_client

        return make_client(environ=environ, timeout=timeout, watch=watch, cert=cert)

    from .index.config import offline_requested

    offline = offline or offline_requested(environ)
    cache = Cache(cache_dir or default_cache_dir(environ, sys.platform, Path.home()))
    session = Network(None, cache, offline, progress, connect, timeout, cert, deadline)
    try:
        with sigint_cancels(watch):
            yield session
    finally:
        if session._making is not None:
            session._making.join()
        if session.client is not None:
            session.client.close()


def _stall_reporter(progress: ProgressCallback | None) -> Callable[[str, str, float], None] | None:
    """A slow server as a progress event: ``filename`` the URL, ``detail`` its host:port."""
    if progress is None:
        return None

    def report(host: str, url: str, seconds: float) -> None:
        from .fetch.wheels import Progress

        progress(Progress(url, "stalled", detail=host, waited=seconds))

    return report


# -- planning -------------------------------------------------------------------------------------------------


def with_measured(kb: Knowledge | None, environ: Mapping[str, str]) -> Knowledge:
    """``kb`` (else the packaged knowledge base) with the builds measured on this machine (``verify``, ``doctor``)
    over it: the file in wheelfit's data directory, read once per knowledge base."""
    from .kb.matrix import load_knowledge
    from .kb.measured import measured_path, read_measured

    base = kb if kb is not None else load_knowledge()
    if base.measured.path:
        return base
    return replace(base, measured=read_measured(measured_path(environ, sys.platform, Path.home())))


def plan(
    requirements: Sequence[str],
    target: Target,
    *,
    environ: Mapping[str, str],
    network: Network | None,
    kb: Knowledge | None = None,
    pytorch_index: str | None = None,
    variant_index: str | None = None,
    allow_cpu: bool = False,
    pre: bool = False,
    index_url: str | None = None,
    torch_backend: str | None = None,
    force: bool = False,
    allow_hsa_override: bool = False,
    extra_index_urls: Sequence[str] = (),
    from_files: Sequence[str] = (),
    require_gpu: bool = False,
    extension_sources: ExtensionSources | None = None,
) -> Plan:
    """The build for ``target``: the candidates the PyTorch index has (``network=None``: the knowledge base's
    alone), or with ``variant_index`` its variant wheels when it serves ``*-variants.json`` for torch. Each
    companion pinned is looked up on the index the plan installs from (a plan it lacks one for is refused),
    except those of ``from_files``, which the caller takes from wheel files it was given.

    The user may choose the build, as uv's ``--torch-backend`` does: ``torch_backend`` (``auto``, ``cpu``,
    ``cu128``, ``rocm7.1``, ``xpu``; else ``UV_TORCH_BACKEND`` in ``environ``), a local label
    (``torch==2.9.0+cu128``), or an ``index_url``/``pytorch_index``/one of ``extra_index_urls`` ending in a variant
    (``.../whl/cu128``). That
    build is judged, never swapped: one without kernels here is refused unless ``force`` (``--force-build``).
    ``allow_hsa_override``: a near-miss AMD GPU may get a build it runs only under HSA_OVERRIDE_GFX_VERSION.
    ``require_gpu``: a machine with a GPU that would get the CPU build is refused (:class:`GpuRequiredError`).

    Requirements naming a package built against torch (flash-attn, torch-scatter: :mod:`wheelfit.kb.extensions`)
    join the plan as the file built for its torch, read from ``extension_sources`` (else each one's published
    place through ``network``); a torch none of them has wheels for is passed over for an older one, and said
    (:func:`wheelfit.stack.joint.plan_stack`)."""
    from packaging.specifiers import SpecifierSet

    from .index.candidates import check_companions, gather_candidates, triton_from_metadata
    from .index.config import resolve_index_config
    from .resolve import Machine, Request, resolve
    from .resolve.fallback import detector_fallbacks
    from .stack.joint import split_extensions

    asked, wanted = split_extensions(requirements or ["torch"])
    config = resolve_index_config(
        environ, pytorch_index=pytorch_index, index_url=index_url, extra_index_urls=tuple(extra_index_urls)
    )
    base = config.pytorch_base
    backend, backend_from, how = _torch_backend(torch_backend, config.torch_backend, config.torch_backend_from, environ)
    knowledge = with_measured(kb, environ)
    fallbacks = detector_fallbacks(target.report)  # a detector that failed: what the plan is for instead
    index = network.index if network is not None else None

    def for_torch(narrow: SpecifierSet) -> Plan:
        """The torch plan, its torch narrowed by ``narrow`` (the extensions' back-off)."""
        request = Request.parse(
            _narrowed(asked, narrow), allow_cpu=allow_cpu, index_base=base, pre=pre, torch_backend=backend,
            torch_backend_from=backend_from, torch_backend_how=how, force=force,
            allow_hsa_override=allow_hsa_override, require_gpu=require_gpu,
        )  # fmt: skip
        notes = [*target.notes, *config.notes]
        variants = variant_index
        if variants and request.torch_backend is not None:
            notes.append(f"{request.torch_backend_from} chooses a build: planned from the per-variant indexes")
            variants = None
        if variants:
            chosen, why = _variant_plan(target, request, variants, knowledge, environ, network)
            if chosen is not None:
                return replace(chosen, warnings=(*notes, *chosen.warnings), detector_failures=fallbacks)
            notes += why
        found = Machine.from_report(target.report)
        jetson = _jetson(found, request, index, knowledge, environ, notes) if request.torch_backend is None else None
        if jetson is not None:
            return replace(jetson, warnings=(*notes, *jetson.warnings), detector_failures=fallbacks)
        candidates = gather_candidates(knowledge, found, index, base, pre=pre, label=request.torch_backend)
        result = resolve(found, candidates, request)
        if index is not None:
            result = triton_from_metadata(result, candidates, found, index)  # a torch newer than the knowledge base
            result = check_companions(result, found, index, skip=from_files)
        return replace(result, warnings=(*notes, *result.warnings), detector_failures=fallbacks)

    if not wanted:
        return for_torch(SpecifierSet())
    from .stack.joint import plan_stack
    from .stack.sources import ExtensionSources

    found = Machine.from_report(target.report)
    sources = extension_sources if extension_sources is not None else ExtensionSources(index)
    return plan_stack(for_torch, wanted, sources, found.tags, found.python)


def _jetson(
    found: Machine, request: Request, index: IndexClient | None, kb: Knowledge, environ: Mapping[str, str],
    notes: list[str],
) -> Plan | None:
    """A Jetson's plan from the index that serves its L4T release (``WHEELFIT_MIRROR`` may redirect it); ``None``
    (and a note why) when there is none or it cannot be read: the plan is then PyTorch's CPU build, as before."""
    from .resolve.jetson import jetson_index, jetson_plan

    where = jetson_index(found)
    if where is None:
        return None
    from packaging.utils import canonicalize_name

    from .fetch.errors import NetworkError
    from .index.errors import IndexPageError, NoMatchingFileError, OfflineError, ProjectNotFoundError
    from .stack.sources import mirrored, read_mirrors

    url = mirrored(where.url, read_mirrors(environ.get("WHEELFIT_MIRROR", ""), "WHEELFIT_MIRROR"))
    if index is None:
        notes.append(f"{where.what}: its torch builds are on {url}, which is not read offline; this is the CPU build")
        return None
    names = ["torch", *(str(canonicalize_name(r.name)) for r in request.companions)]
    try:
        pages = {name: index.project_page(url, name).links for name in names}
        return jetson_plan(found, request, replace(where, url=url), pages, kb)
    except (NetworkError, IndexPageError, NoMatchingFileError, OfflineError, ProjectNotFoundError) as exc:
        notes.append(f"{where.what}: no torch for this Jetson from {url} ({exc}); this is the CPU build")
        return None


def extension_sources(
    network: Network | None, find_links: Sequence[str], environ: Mapping[str, str]
) -> ExtensionSources:
    """Where a plan reads the wheels of packages built against torch: ``find_links`` (else ``UV_FIND_LINKS``,
    ``PIP_FIND_LINKS``) only, when given; else each one's published place, through ``network``, redirected by
    ``WHEELFIT_MIRROR`` (``https://data.pyg.org/whl=https://mirror.example/pyg ...``)."""
    from .index.local import resolve_find_links
    from .stack.sources import ExtensionSources, read_mirrors

    index = network.index if network is not None else None
    mirrors = read_mirrors(environ.get("WHEELFIT_MIRROR", ""), "WHEELFIT_MIRROR")
    return ExtensionSources(index, resolve_find_links(environ, find_links), mirrors)


def _narrowed(requirements: Sequence[str], narrow: SpecifierSet) -> list[str]:
    """``requirements`` with torch's specifier narrowed by ``narrow`` (torch added when none names it)."""
    if not str(narrow):
        return list(requirements)
    from packaging.requirements import InvalidRequirement, Requirement
    from packaging.utils import canonicalize_name

    out: list[str] = []
    done = False
    for text in requirements:
        try:
            req = Requirement(text)
        except InvalidRequirement:
            out.append(text)  # the planner says what is wrong with it
            continue
        if canonicalize_name(req.name) == "torch" and not done:
            req.specifier &= narrow
            done = True
            text = str(req)
        out.append(text)
    return out if done else [f"torch{narrow}", *out]


def judge_build(
    version: str,
    target: Target,
    *,
    label: str | None = None,
    environ: Mapping[str, str],
    network: Network | None = None,
    kb: Knowledge | None = None,
    pytorch_index: str | None = None,
    allow_hsa_override: bool = False,
) -> BuildVerdict:
    """Whether one build named outright runs on ``target``: ``version`` ``2.9.0+cu128`` (or ``2.9.0`` with
    ``label``), e.g. from a direct reference ``torch @ https://.../torch-2.9.0+cu128-...whl`` that wheelfit does not
    choose but should warn about. ``runs``, ``refused`` (the reason names the kernels it lacks, or the driver), or
    ``unknown`` (no facts for that build); judged on the knowledge base's facts, and the index's when ``network``
    is given. See :func:`wheelfit.resolve.judge_build`."""
    from packaging.version import Version

    from .index.candidates import gather_candidates
    from .index.config import resolve_index_config
    from .resolve import Machine, Request
    from .resolve import judge_build as judge

    try:
        chosen = label or Version(version).local
    except ValueError:  # InvalidVersion, or a release number past int()'s 4300-digit limit
        raise UsageError(f"{version!r} is not a version; give e.g. 2.9.0+cu128") from None
    base = resolve_index_config(environ, pytorch_index=pytorch_index).pytorch_base
    here = Machine.from_report(target.report)
    index = network.index if network is not None else None
    knowledge = with_measured(kb, environ)
    candidates = gather_candidates(knowledge, here, index, base, label=chosen.lower() if chosen else None)
    request = Request.parse(["torch"], index_base=base, allow_hsa_override=allow_hsa_override)
    return judge(here, candidates, version, chosen, request)


def _torch_backend(
    given: str | None, from_url: str | None, url_from: str, environ: Mapping[str, str]
) -> tuple[str | None, str, BackendHow]:
    """The build the user chose, where, and what kind of place that is: ``--torch-backend``, else an index URL
    ending in a variant, else ``UV_TORCH_BACKEND`` (uv's variable: the library honours it, not only the command
    line)."""
    from .resolve.request import check_backend

    if given is not None:
        chosen = check_backend(given, "--torch-backend")
        if from_url is not None and chosen is not None and chosen != from_url:
            raise UsageError(f"--torch-backend {chosen} and {url_from} ask for different builds: give one")
        return chosen, "--torch-backend", "option"
    if from_url is not None:
        return from_url, url_from, "index-url"
    variable = environ.get("UV_TORCH_BACKEND")
    if variable:
        return check_backend(variable, "UV_TORCH_BACKEND"), "UV_TORCH_BACKEND", "variable"
    return None, "--torch-backend", "option"


def _variant_plan(
    target: Target,
    request: Request,
    url: str,
    kb: Knowledge,
    environ: Mapping[str, str],
    network: Network | None,
) -> tuple[Plan | None, list[str]]:
    """The variant-mode plan, or ``None`` and why the per-variant indexes are used instead."""
    from urllib.parse import urlsplit

    from packaging.utils import canonicalize_name
    from packaging.version import Version

    from .index.variant_index import read_variant_index, variant_set
    from .install.sources import MetadataReader
    from .integrations.uv_variants import plan_notes
    from .kb.candidates import knowledge_set
    from .resolve import Machine, resolve
    from .variants.candidates import dependencies
    from .variants.machine import supported_configs
    from .variants.markers import VariantEnvironment

    if network is None or network.offline:
        return None, [f"--offline: {url} not read; planned from the per-variant indexes"]
    if request.companions:
        names = ", ".join(canonicalize_name(r.name) for r in request.companions)
        return None, [f"variant mode plans torch alone ({names} asked for): planned from the per-variant indexes"]
    if urlsplit(url.strip()).scheme not in ("http", "https"):
        raise WheelfitError(
            f"--variant-index {url!r} is not an http(s) URL; give e.g. https://download.pytorch.org/whl/variant"
        )
    url = url.strip().rstrip("/")
    found = read_variant_index(network.index, network.http, url, "torch", request.torch.specifier)
    if found is None:
        return None, [f"no variants metadata at {url}: planned from the per-variant indexes"]
    report = target.report
    here = Machine.from_report(report, supported_configs(report, environ))
    candidates = variant_set(found, here.platform_key, knowledge_set(kb, here.platform_key))
    chosen = resolve(here, candidates, request)
    pin = chosen.packages[0]
    link = next(
        f
        for c in candidates.candidates
        if c.label == chosen.variant and str(c.version) == chosen.torch_version
        for f in c.files or ()
        if f.filename == pin.filename
    )
    variant = VariantEnvironment.from_properties(chosen.variant, chosen.variant_properties)
    metadata, _taken = MetadataReader(network.index, network.store).raw(link)  # the install reads the same file
    # Whether uv's wheel-variant preview would install the same, and if not why, in uv's words.
    variants_file = found.metadata[Version(chosen.torch_version)]
    uv_notes = plan_notes(url, variants_file.filename, variants_file.metadata, chosen.variant, link.filename, metadata)
    return replace(
        chosen,
        dependencies=dependencies(metadata, here.markers, variant, link.filename),
        warnings=(*chosen.warnings, *uv_notes),
    ), []


# -- installing -----------------------------------------------------------------------------------------------


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
    from .install.find_env import find_python

    return find_python(python, environ, cwd or Path.cwd(), system=system, read_only=read_only)


def backend(name: str, env: TargetEnv) -> Installer:
    """The installer backend ``uv`` (the binary from the ``uv`` PyPI package) or ``pip`` (the target's own)."""
    from packaging.utils import canonicalize_name

    if name == "pip":
        from .install.pip import PipInstaller

        return PipInstaller(target_has_pip=any(canonicalize_name(n) == "pip" for n in env.installed))
    if name != "uv":
        raise WheelfitError(f"--installer {name}: use uv or pip")
    from .install.uv import UvInstaller, find_uv

    return UvInstaller(uv=find_uv())


def family_source(plan: Plan, network: Network, config: IndexConfig) -> FamilySource:
    """Where the plan's torch-family files are chosen from: its index; in variant mode, its plain-copy adapter."""
    from .index.links import FileLink
    from .install.sources import IndexPages, VariantPages
    from .variants.legacy import legacy_variant
    from .variants.markers import VariantEnvironment

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

    from .install.install_set import family_files
    from .install.sources import GivenFiles, MetadataReader

    given = source.given if isinstance(source, GivenFiles) else {}
    unpinned = frozenset(link.url for link in given.values() if not link.hashes)  # the user's URLs without a hash
    reader = MetadataReader(network.index, network.store, unpinned, take_download=not for_lock)

    def in_wheelhouse(filename: str) -> Path | None:
        return next((d / filename for d in wheelhouses if (d / filename).is_file()), None)

    pins = [Requirement(p.requirement) for p in plan.packages]
    return family_files(pins, source, reader, platform, keep=keep, wheelhouse=in_wheelhouse if wheelhouses else None)


def install(
    plan: Plan | None, wanted: InstallSet, env: TargetEnv, *, installer: Installer, options: InstallOptions
) -> InstallResult:
    """Install ``wanted`` (the plan's install set) into ``env`` with ``installer``, all or nothing; with
    ``options.dry_run`` say what that would do. ``installer`` is a small interface
    (:class:`~wheelfit.install.backend.Installer`): uv, pip, or a fake."""
    from .install.run import run_install

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
    *,
    environ: Mapping[str, str],
    network: Network,
    python: str | None = None,
    target: str | None = None,
    sysroot: Path | None = None,
    probe_timeout: float = 15.0,
    disabled: Sequence[str] = (),
    installer: str = "uv",
    kb: Knowledge | None = None,
    pytorch_index: str | None = None,
    variant_index: str | None = None,
    index_url: str | None = None,
    dry_run: bool = False,
    allow_cpu: bool = False,
    pre: bool = False,
    verify_after: bool = True,
    wrap_backend: Callable[[Installer], Installer] | None = None,
    constraints: Sequence[str] = (),
    extra_index_urls: Sequence[str] = (),
    upgrade: bool = False,
    reinstall: bool = False,
    no_deps: bool = False,
    system: bool = False,
    cwd: Path | None = None,
    torch_backend: str | None = None,
    force: bool = False,
    allow_hsa_override: bool = False,
    find_links: Sequence[str] = (),
    requirement_files: Sequence[str] = (),
    constraint_files: Sequence[str] = (),
    no_index: bool = False,
    recover: str | None = None,
    snapshot: bool = True,
    require_gpu: bool = False,
) -> InstallOutcome:
    """``wheelfit install``: plan for the machine (or ``target``), install into the environment, verify.

    ``requirements`` and the files of ``requirement_files`` (``-r``) and ``constraint_files`` (``-c``) are read as
    pip reads them (nested files, markers, and their ``--index-url``, ``--extra-index-url``, ``--find-links``,
    ``--pre`` and ``--no-index`` lines, which add to the arguments; an ``index_url`` given here wins).

    The environment is ``python`` or the one uv would find (:func:`target_python`; ``system`` allows the
    Python on ``PATH``). It is described and the machine detected at the same time; its Python is the plan's.
    As pip and uv do, a torch already installed that meets the request is kept (unless ``upgrade``), here only
    when it also has kernels for the machine. Requirements that name no torch-family package are installed
    alone. ``constraints`` are requirement strings (``-c``): on torch-family names they narrow the plan.
    ``wrap_backend`` wraps the installer backend (the command line imports its renderer while the backend runs).
    ``torch_backend``, ``force`` and ``allow_hsa_override`` choose the build as for :func:`plan`.
    ``find_links`` (else ``UV_FIND_LINKS``, ``PIP_FIND_LINKS``) are wheelhouses: for everything that is not
    torch-family, and for a torch-family file only when it has exactly the name of the one the plan chose.
    ``recover`` (``restore`` or ``keep``): what to do with an earlier install into the environment that was killed
    midway, when the environment changed since (:func:`~wheelfit.install.transaction.recover_interrupted`).
    ``snapshot=False`` skips the rollback snapshot (about 0.7 s for an environment holding torch).
    """
    if installer not in ("uv", "pip"):  # before anything runs; backend() says the same to its own callers
        raise UsageError(f"--installer {installer}: use uv or pip")
    from .install.target_env import start_inspect

    # First: the child process that describes the environment (~0.15 s) runs while everything else is imported.
    here_dir = cwd or Path.cwd()
    pending = start_inspect(target_python(python, environ, cwd=here_dir, system=system), environ)
    try:
        from .install.transaction import RECOVER_CHOICES

        if recover is not None and recover not in RECOVER_CHOICES:
            raise UsageError(f"--recover {recover}: use {' or '.join(RECOVER_CHOICES)}")
        from .requirements import read_file, read_requirements

        asked = read_requirements(
            [*requirements] or ([] if requirement_files else ["torch"]), requirement_files, constraint_files,
            reader=read_file, cwd=str(here_dir), environ=environ, index_url=index_url,
            extra_index_urls=extra_index_urls, find_links=find_links, pre=pre, no_index=no_index,
        )  # fmt: skip
        # A file with --hash lines (``wheelfit lock -o requirements.txt``) is installed in hash-checking mode, as pip
        # does.
        require_hashes = any(r.hashes for r in asked.requirements)
        index_url, extra_index_urls, find_links = asked.index_url, asked.extra_index_urls, asked.find_links
        pre, no_index = asked.pre, asked.no_index
        from .index.config import resolve_index_config
        from .install.run import InstallOptions
        from .install.wanted import sort_wanted

        config = resolve_index_config(
            environ, pytorch_index=pytorch_index, index_url=index_url, offline=network.offline,
            extra_index_urls=tuple(extra_index_urls),
        )  # fmt: skip
        from .index.local import resolve_find_links

        links = resolve_find_links(environ, find_links)
        network.prepare()  # on a thread, while this one waits for the child process (no contention for the GIL)
        here = machine(
            target, environ=environ, sysroot=sysroot, probe_timeout=probe_timeout, disabled=disabled,
            python=lambda: _full_python(pending.result()),
        )  # fmt: skip
        env = pending.result()
    except BaseException:  # refused before the child's answer was read: it is not left running
        pending.close()
        raise
    from .install.run import recover_first  # a killed earlier install: undone before the plan looks at the env

    env, recovered = recover_first(env, environ, recover=recover, dry_run=dry_run, progress=network.progress)
    asked = asked.for_environment(env.markers)
    wanted = sort_wanted(asked.requirements, [*constraints, *(c.spec for c in asked.constraints)], env.markers)
    notes: list[str] = list(recovered)
    if config.extra_index_urls:
        notes.append(
            "--extra-index-url is used only for packages that are not torch-family; torch-family packages come "
            "only from the plan's index"
        )
    chosen: Plan | None = None
    family: list[FamilyFile] = []
    keep: dict[str, str] = {}
    from .stack.joint import split_extensions

    rest, stack = split_extensions(wanted.other)  # flash-attn, torch-scatter: planned with torch, as files
    if stack:
        wanted = replace(wanted, other=tuple(rest))
    if wanted.asks_family or stack:
        chosen, source, why, keep = _plan_install(
            wanted, here, env, environ=environ, network=network, config=config, kb=kb, variant_index=variant_index,
            allow_cpu=allow_cpu, pre=pre, upgrade=upgrade, reinstall=reinstall,
            choice={"torch_backend": torch_backend, "force": force, "allow_hsa_override": allow_hsa_override,
                    "index_url": index_url, "extra_index_urls": tuple(extra_index_urls), "require_gpu": require_gpu,
                    "extension_sources": extension_sources(network, links, environ)},
            extensions=[str(e.requirement) for e in stack],
        )  # fmt: skip
        notes += why
        _one_cuda_major(chosen, wanted.other)
        # A variant plan's wheel is offered under its plain name, which a wheelhouse's ordinary torch may share.
        houses = [Path(link) for link in links if "://" not in link] if chosen.mode is not Mode.VARIANT else []
        family = planned_files(chosen, source, _platform(env), network, keep=keep, wheelhouses=houses)
        from .stack.files import extension_files

        family += extension_files(chosen.extensions, network.store)
    runner = backend(installer, env)
    if wrap_backend is not None:
        runner = wrap_backend(runner)
    from packaging.utils import canonicalize_name

    from .install.family import TORCH_FAMILY
    from .install.install_set import InstallSet

    installed: dict[str, str] = {canonicalize_name(n): v for n, v in env.installed.items()}
    taken = {f.name for f in family}
    held = {n: installed[n] for n in TORCH_FAMILY if n not in taken and n in installed}
    wanted_set = InstallSet(tuple(family), wanted.other, wanted.constraints, held, wanted.extras)
    options = InstallOptions(
        config.default_index, _backend_environ(environ, network), config.extra_index_urls,
        dry_run=dry_run, offline=config.offline, upgrade=upgrade, reinstall=reinstall, no_deps=no_deps,
        find_links=links, no_index=no_index, require_hashes=require_hashes, recover=recover, snapshot=snapshot,
        progress=network.progress,
    )  # fmt: skip
    result = install(chosen, wanted_set, env, installer=runner, options=options)
    if notes:
        result = replace(result, notes=(*notes, *result.notes))
    checked = None
    if verify_after and not dry_run and chosen is not None:
        from .install.verify import probe_torch

        checked = verify(chosen, probe_torch(env.executable, environ), here, kb=kb,
                         target_from=_target_from(target, sysroot))  # fmt: skip
    return InstallOutcome(result, env, checked)


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


def _plan_install(
    wanted: Wanted,
    here: Target,
    env: TargetEnv,
    *,
    environ: Mapping[str, str],
    network: Network,
    config: IndexConfig,
    kb: Knowledge | None,
    variant_index: str | None,
    allow_cpu: bool,
    pre: bool,
    upgrade: bool,
    reinstall: bool = False,
    choice: Mapping[str, Any] | None = None,
    extensions: Sequence[str] = (),
) -> tuple[Plan, FamilySource, list[str], dict[str, str]]:
    """The plan an install follows, where its torch-family wheels come from, what the user should know, and the
    installed torch-family packages kept as they are.

    Kept: an installed torch that meets the request and has kernels here (no ``upgrade``). A torch given as a
    file is planned at its own version, its companions and Triton from that build's index, and judged: a
    file without kernels for this machine is installed as asked, with the reason as a warning.
    """
    from packaging.utils import canonicalize_name
    from packaging.version import Version

    from .install.direct import DirectFile, direct_file

    def plan_for(torch: str, exact: bool = False, forced: bool = False) -> Plan:
        return plan(
            [torch, *companions, *extensions], here, environ=environ, network=network, kb=kb,
            pytorch_index=config.pytorch_base,
            variant_index=variant_index, allow_cpu=allow_cpu, pre=pre or exact, from_files=tuple(given),
            **{**(choice or {}), **({"force": True} if forced else {})},
        )  # fmt: skip

    notes: list[str] = []
    keep: dict[str, str] = {}
    given: dict[str, DirectFile] = {canonicalize_name(d.name): d for d in map(direct_file, wanted.direct)}
    asked = next((r for r in wanted.family if canonicalize_name(r.name) == "torch"), None)
    companions = [str(r) for r in wanted.family if canonicalize_name(r.name) not in given and r is not asked]
    # A companion given as a file (a lock's lines) is planned at its own version, and its file then taken; a
    # Triton given so is what the walk finds in torch's metadata, and is taken from the file given there
    from .resolve.request import TRITONS

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
        chosen = _with_pin(chosen, "torch", str(torch_file.version))
    elif have is not None and not upgrade:
        try:
            installed = Version(have)
            meets = asked is None or asked.specifier.contains(installed, prereleases=True)
        except ValueError:  # InvalidVersion, or a release number past int()'s 4300-digit limit
            meets = False
        if meets:
            # PyPI's torch carries no label: it is the build the knowledge base says PyPI has (cu128 for 2.9).
            from .kb.candidates import pypi_label
            from .kb.matrix import load_knowledge
            from .resolve import Machine

            found = Machine.from_report(here.report)
            pypi = None if installed.local else pypi_label(kb or load_knowledge(), installed, found.platform_key)
            label = installed.local or pypi
            gpu = found.gpus is not None and found.gpus.kind is not BuildKind.MPS
            asked_cpu = (asked is not None and "+cpu" in str(asked)) or (choice or {}).get("torch_backend") == "cpu"
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
                if pypi or (Version(pin) == installed and not reinstall):
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
    source = family_source(chosen, network, config)
    if given:
        from .install.sources import GivenFiles

        source = GivenFiles(source, {name: d.link for name, d in given.items()})
    return chosen, source, notes, keep


def _one_cuda_major(chosen: Plan, others: Sequence[str]) -> None:
    """Refuse packages that name another CUDA major than the planned torch's (``cupy-cuda12x``, ``jax[cuda12]``,
    ``nvidia-*-cu12`` beside a CUDA 13 torch): one process would load two CUDA runtimes. Before any download."""
    from packaging.requirements import InvalidRequirement, Requirement

    from .install.verify import expected_runtime
    from .kb.extensions import cuda_major_of
    from .resolve import ResolveError

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


def _with_pin(chosen: Plan, name: str, version: str) -> Plan:
    """``chosen`` with ``name`` pinned at exactly ``version`` (a file the user gave)."""
    from .resolve.plan import PackagePin

    pins = tuple(PackagePin(p.name, version, f"{p.name}=={version}") if p.name == name else p for p in chosen.packages)
    return replace(chosen, packages=pins)


def _full_python(env: TargetEnv) -> str:
    return env.markers.get("python_full_version", env.python)


def _platform(env: TargetEnv) -> Platform:
    from packaging.tags import parse_tag

    from .install.install_set import Platform

    return Platform(tuple(t for text in env.tags for t in parse_tag(text)), env.markers, env.python)


# -- verifying ------------------------------------------------------------------------------------------------


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
    from .install.runs_here import judge
    from .kb.matrix import load_knowledge
    from .resolve import Machine

    found = Machine.from_report(target.report) if target is not None else None
    knowledge = kb if kb is not None else load_knowledge()
    return judge(facts, found, knowledge, machine_from=target_from, plan=plan, plan_error=plan_error)


def _target_from(target: str | None, sysroot: Path | None) -> str:
    """Whose GPUs a verification judged when torch sees none: for the messages."""
    if target:
        return f"--target {target}"
    return f"the machine detected under --sysroot {sysroot}" if sysroot is not None else "this machine's detection"


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
    *,
    environ: Mapping[str, str],
    network: Network | None,
    python: str | None = None,
    target: str | None = None,
    sysroot: Path | None = None,
    probe_timeout: float = 15.0,
    kb: Knowledge | None = None,
    pytorch_index: str | None = None,
    variant_index: str | None = None,
    others: Sequence[str] = (),
    today: str | None = None,
) -> VerifyOutcome:
    """``wheelfit verify``: import torch in ``python``'s environment and judge whether it runs on this machine (or
    ``target``); the machine's plan for the same torch version is made to say whether it is wheelfit's pick. A
    torch that is missing or fails to import is a failed verification, not an error."""
    from packaging.version import InvalidVersion, Version

    from .install.target_env import start_inspect
    from .install.verify import probe_torch

    py = target_python(python, environ, read_only=True)
    pending = start_inspect(py, environ)  # the environment is described while torch imports
    facts = probe_torch(py, environ, others=others)
    env = pending.result()
    here = machine(target, environ=environ, sysroot=sysroot, probe_timeout=probe_timeout, python=_full_python(env))
    kb = with_measured(kb, environ)
    chosen: Plan | None = None
    why: str | None = None
    if facts.error is None:
        try:
            chosen = plan(
                [f"torch=={Version(facts.version).public}"], here, environ=environ, network=network, kb=kb,
                pytorch_index=pytorch_index, variant_index=variant_index,
            )  # fmt: skip
        except UsageError:
            raise
        except (WheelfitError, InvalidVersion) as exc:
            why = str(exc)
    checked = verify(chosen, facts, here, kb=kb, target_from=_target_from(target, sysroot), plan_error=why)
    if today is not None and target is None:
        _record_measured(checked, here, kb, today, environ)
    return VerifyOutcome(checked, chosen, env, here)


def _record_measured(
    checked: Verification, here: Target, kb: Knowledge, today: str, environ: Mapping[str, str]
) -> None:
    """What torch said about its own kernels, kept for later plans of that build: only a list torch reported
    (it reports one only while it sees a GPU), only for this machine's platform. A data directory that cannot
    be written loses the measurement, never the verification."""
    from packaging.version import Version

    from .kb.measured import measured_path, updated
    from .kb.overlay import Measured
    from .resolve import Machine
    from .userfiles import UserFileError, Write, write_files

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
    *,
    environ: Mapping[str, str],
    network: Network | None,
    python: str | None = None,
    target: str | None = None,
    sysroot: Path | None = None,
    probe_timeout: float = 15.0,
    kb: Knowledge | None = None,
    pytorch_index: str | None = None,
    variant_index: str | None = None,
    today: str | None = None,
) -> DoctorOutcome:
    """``wheelfit doctor``: ``verify``'s judgement, and what else is wrong (hidden GPUs, a shadowed torch, changed
    files, extensions of another torch), each with the build that fixes it. Changes nothing."""
    from packaging.utils import canonicalize_name

    from .doctor import diagnose, extension_names
    from .install.installed_record import check_installed_records
    from .kb.drivers import compat_floor, toolkit_floor
    from .resolve import Machine
    from .resolve.request import TRITONS

    outcome = verify_environment(
        environ=environ, network=network, python=python, target=target, sysroot=sysroot, probe_timeout=probe_timeout,
        kb=kb, pytorch_index=pytorch_index, variant_index=variant_index, others=(*TRITONS, *extension_names()),
        today=today,
    )  # fmt: skip
    here = outcome.target
    found = Machine.from_report(here.report) if here is not None else None
    facts = outcome.verification.facts
    fix_plan = outcome.plan
    gpu_machine = found is not None and found.gpus is not None
    if here is not None and (fix_plan is None or (gpu_machine and fix_plan.variant == "cpu")):
        try:  # no build of this version serves the GPU: the newest torch that does
            fix_plan = plan(
                ["torch"], here, environ=environ, network=network, kb=kb, pytorch_index=pytorch_index,
                variant_index=variant_index,
            )  # fmt: skip
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
        install_dirs=[str(d) for d in outcome.env.install_dirs], detected=not target, changed=changed,
        driver_floor=str(needed) if needed is not None else None,
    )  # fmt: skip
    return DoctorOutcome(diagnosis, fix_plan, outcome.env)


# -- variant files --------------------------------------------------------------------------------------------

#: Variant metadata is small (PyTorch's is under 5 kB); anything far larger is not one.
_MAX_VARIANTS_BYTES = 8 * 1024 * 1024


def read_variants_file(source: str, *, environ: Mapping[str, str]) -> tuple[bytes, str]:
    """The bytes of a local ``*-variants.json`` or an http(s) URL (TLS verified), and a short name for messages."""
    if source.startswith(("http://", "https://")):
        from .fetch.http import RetryPolicy, get, status_error

        with network(environ) as session:
            response = get(session.http, source, {"Accept": "application/json, */*"}, RetryPolicy(retries=1))
            if response.status_code != 200:
                raise status_error(source, response)
            body = response.content
        name = source.rstrip("/").rsplit("/", 1)[-1].split("#")[0] or source
    else:
        path = Path(source)
        try:
            with path.open("rb") as fh:
                body = fh.read(_MAX_VARIANTS_BYTES + 1)
        except FileNotFoundError:
            raise WheelfitError(f"{source}: no such file; give a *-variants.json path or an http(s) URL") from None
        except OSError as exc:
            raise WheelfitError(f"{source}: cannot read it ({exc.strerror or exc})") from None
        name = path.name
    if len(body) > _MAX_VARIANTS_BYTES:
        raise WheelfitError(f"{source}: larger than {_MAX_VARIANTS_BYTES // 1024 // 1024} MiB, not variant metadata")
    return body, name


def rank(
    metadata: VariantsMetadata, target: Target, *, environ: Mapping[str, str], enable_optional: Sequence[str] = ()
) -> Ranking:
    """A variants file's labels ranked for ``target``: compatible best first, the others with their reason."""
    from .variants.machine import marker_environment, supported_configs
    from .variants.ranking import rank_variants

    return rank_variants(
        metadata,
        supported_configs(target.report, environ),
        environment=marker_environment(target.report),
        enable_optional=enable_optional or (),
    )
