"""Planning: the build for a machine (:func:`plan`), one build judged (:func:`judge_build`), and the knowledge
they read. Orchestration only: candidates are gathered with I/O in :mod:`wheelfit.index`, judged without any in
:mod:`wheelfit.resolve`, extensions matched in :mod:`wheelfit.stack`."""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from dataclasses import replace
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import UsageError, WheelfitError
from ..options import PlanOptions
from .machine import Target
from .session import Network

if TYPE_CHECKING:
    from packaging.specifiers import SpecifierSet

    from ..index.client import IndexClient
    from ..kb.matrix import Knowledge
    from ..resolve import BuildVerdict, Machine, Request
    from ..resolve.plan import Plan
    from ..resolve.request import BackendHow
    from ..stack.sources import ExtensionSources

__all__ = ["extension_sources", "judge_build", "plan", "with_measured"]


def with_measured(kb: Knowledge | None, environ: Mapping[str, str]) -> Knowledge:
    """``kb`` (else the packaged knowledge base) with the builds measured on this machine (``verify``, ``doctor``)
    over it: the file in wheelfit's data directory, read once per knowledge base."""
    from ..kb.matrix import load_knowledge
    from ..kb.measured import measured_path, read_measured

    base = kb if kb is not None else load_knowledge()
    if base.measured.path:
        return base
    return replace(base, measured=read_measured(measured_path(environ, sys.platform, Path.home())))


def plan(
    requirements: Sequence[str],
    target: Target,
    options: PlanOptions,
    *,
    environ: Mapping[str, str],
    network: Network | None,
    from_files: Sequence[str] = (),
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
    join the plan as the file built for its torch, read from ``options.find_links`` (else each one's published
    place through ``network``); a torch none of them has wheels for is passed over for an older one, and said
    (:func:`wheelfit.stack.joint.plan_stack`)."""
    from packaging.specifiers import SpecifierSet

    from ..index.candidates import check_companions, gather_candidates, triton_from_metadata
    from ..index.config import resolve_index_config
    from ..resolve import Machine, Request, resolve
    from ..resolve.fallback import detector_fallbacks
    from ..stack.joint import split_extensions

    asked, wanted = split_extensions(requirements or ["torch"])
    o = options
    config = resolve_index_config(
        environ, pytorch_index=o.pytorch_index, index_url=o.index_url, extra_index_urls=o.extra_index_urls
    )
    base = config.pytorch_base
    backend, backend_from, how = _torch_backend(o.torch_backend, config.torch_backend, config.torch_backend_from,
                                                environ)  # fmt: skip
    knowledge = with_measured(o.kb, environ)
    overrides, broken = _rocm_knowledge()
    fallbacks = detector_fallbacks(target.report)  # a detector that failed: what the plan is for instead
    index = network.index if network is not None else None
    here = cache(lambda: Machine.from_report(target.report))  # once, when first needed (after the request is read)

    def for_torch(narrow: SpecifierSet) -> Plan:
        """The torch plan, its torch narrowed by ``narrow`` (the extensions' back-off)."""
        request = Request.parse(
            _narrowed(asked, narrow), allow_cpu=o.allow_cpu, index_base=base, pre=o.pre, torch_backend=backend,
            torch_backend_from=backend_from, torch_backend_how=how, force=o.force,
            allow_hsa_override=o.allow_hsa_override, require_gpu=o.require_gpu, rocm_overrides=overrides,
            rocm_broken=broken,
        )  # fmt: skip
        notes = [*target.notes, *config.notes]
        variants = o.variant_index
        if variants and request.torch_backend is not None:
            notes.append(f"{request.torch_backend_from} chooses a build: planned from the per-variant indexes")
            variants = None
        if variants:
            chosen, why = _variant_plan(target, request, variants, knowledge, environ, network)
            if chosen is not None:
                return replace(chosen, warnings=(*notes, *chosen.warnings), detector_failures=fallbacks)
            notes += why
        found = here()
        jetson = _jetson(found, request, index, knowledge, environ, notes) if request.torch_backend is None else None
        if jetson is not None:
            return replace(jetson, warnings=(*notes, *jetson.warnings), detector_failures=fallbacks)
        candidates = gather_candidates(knowledge, found, index, base, pre=o.pre, label=request.torch_backend)
        result = resolve(found, candidates, request)
        if index is not None:
            result = triton_from_metadata(result, candidates, found, index)  # a torch newer than the knowledge base
            result = check_companions(result, found, index, skip=from_files)
        return replace(result, warnings=(*notes, *result.warnings), detector_failures=fallbacks)

    if not wanted:
        return for_torch(SpecifierSet())
    from ..stack.joint import plan_stack

    sources = extension_sources(network, o.find_links, environ)
    return plan_stack(for_torch, wanted, sources, here().tags, here().python)


def _jetson(
    found: Machine, request: Request, index: IndexClient | None, kb: Knowledge, environ: Mapping[str, str],
    notes: list[str],
) -> Plan | None:
    """A Jetson's plan from the index that serves its L4T release (``WHEELFIT_MIRROR`` may redirect it); ``None``
    (and a note why) when there is none or it cannot be read: the plan is then PyTorch's CPU build, as before."""
    from ..resolve.jetson import jetson_index, jetson_plan

    where = jetson_index(found, kb)
    if where is None:
        return None
    from packaging.utils import canonicalize_name

    from ..fetch.errors import NetworkError
    from ..simple.errors import IndexPageError, NoMatchingFileError, OfflineError, ProjectNotFoundError
    from ..stack.sources import mirrored, read_mirrors

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
    from ..index.local import resolve_find_links
    from ..stack.sources import ExtensionSources, read_mirrors

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
    options: PlanOptions,
    *,
    environ: Mapping[str, str],
    network: Network | None = None,
    label: str | None = None,
) -> BuildVerdict:
    """Whether one build named outright runs on ``target``: ``version`` ``2.9.0+cu128`` (or ``2.9.0`` with
    ``label``), e.g. from a direct reference ``torch @ https://.../torch-2.9.0+cu128-...whl`` that wheelfit does not
    choose but should warn about. ``runs``, ``refused`` (the reason names the kernels it lacks, or the driver), or
    ``unknown`` (no facts for that build); judged on the knowledge base's facts, and the index's when ``network``
    is given. See :func:`wheelfit.resolve.judge_build`."""
    from packaging.version import Version

    from ..index.candidates import gather_candidates
    from ..index.config import resolve_index_config
    from ..resolve import Machine, Request
    from ..resolve import judge_build as judge

    try:
        chosen = label or Version(version).local
    except ValueError:  # InvalidVersion, or a release number past int()'s 4300-digit limit
        raise UsageError(f"{version!r} is not a version; give e.g. 2.9.0+cu128") from None
    base = resolve_index_config(environ, pytorch_index=options.pytorch_index).pytorch_base
    here = Machine.from_report(target.report)
    index = network.index if network is not None else None
    knowledge = with_measured(options.kb, environ)
    candidates = gather_candidates(knowledge, here, index, base, label=chosen.lower() if chosen else None)
    overrides, broken = _rocm_knowledge()
    request = Request.parse(["torch"], index_base=base, allow_hsa_override=options.allow_hsa_override,
                            rocm_overrides=overrides, rocm_broken=broken)  # fmt: skip
    return judge(here, candidates, version, chosen, request)


def _rocm_knowledge() -> tuple[dict[str, tuple[str, str, str | None]], dict[str, tuple[str, str]]]:
    """The knowledge base's ROCm facts a request carries: near-miss gfx targets and their override, and the
    targets a ROCm release lost."""
    from ..kb.overrides import rocm_known_broken, rocm_overrides

    return dict(rocm_overrides()), dict(rocm_known_broken())


def _torch_backend(
    given: str | None, from_url: str | None, url_from: str, environ: Mapping[str, str]
) -> tuple[str | None, str, BackendHow]:
    """The build the user chose, where, and what kind of place that is: ``--torch-backend``, else an index URL
    ending in a variant, else ``UV_TORCH_BACKEND`` (uv's variable: the library honours it, not only the command
    line)."""
    from ..resolve.request import check_backend

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

    from ..candidates.knowledge import knowledge_set
    from ..candidates.variants import dependencies
    from ..index.variant_index import read_variant_index, variant_set
    from ..install.sources import MetadataReader
    from ..resolve import Machine, resolve
    from ..variants.machine import supported_configs
    from ..variants.markers import VariantEnvironment
    from ..variants.uv_preview import plan_notes

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
    candidates = variant_set(found, here.platform_key, knowledge_set(kb, here.platform_key, jetson=here.jetson))
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
