"""What the user asked the planner for: torch and its companions, with ordinary specifiers."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name

from ..candidates.knowledge import label_kind
from ..errors import UsageError, first_line
from .machine import ResolveError

__all__ = [
    "COMPANIONS",
    "DEFAULT_INDEX",
    "PLANNED",
    "TRITONS",
    "BackendHow",
    "Request",
    "UnknownPackageError",
    "check_backend",
    "check_names",
    "misspelt",
]

#: Where a choice of build came from: ``--torch-backend``, ``UV_TORCH_BACKEND``, an index URL ending in a
#: variant (``--index-url .../whl/cu128``), or a local label in a pin (``torch==2.9.0+cu128``).
BackendHow = Literal["option", "variable", "index-url", "pin"]

DEFAULT_INDEX = "https://download.pytorch.org/whl"

#: The names of PyTorch's Triton build: ``triton`` for CUDA, ``pytorch-triton-rocm``/``-xpu`` for ROCm and XPU
#: (what torch's own Requires-Dist names; uv's torch-backend list, crates/uv-torch backend.rs ``applies_to``).
TRITONS = ("triton", "pytorch-triton-rocm", "pytorch-triton-xpu")

#: Packages that come at the version matching the chosen torch, from the same variant index.
COMPANIONS = ("torchvision", "torchaudio", *TRITONS)

#: Every name wheelfit plans: torch and its companions.
PLANNED = ("torch", *COMPANIONS)


class UnknownPackageError(UsageError):
    """A requirement that is a slip of the finger away from a name wheelfit plans (``troch``, see :func:`misspelt`):
    a usage error (exit 2) naming the one package meant, raised before anything is detected or fetched."""

    def __init__(self, name: str, meant: str, where: str = "") -> None:
        self.name, self.meant = name, meant
        super().__init__(f"{where}{name} is not a PyTorch package: did you mean {meant}?")


#: Names people type for torch that are not it: PyPI's ``pytorch`` is a stub whose install fails with "you tried
#: to install pytorch; the package named for PyTorch is torch" (its setup.py on PyPI, version 1.0.2).
ALIASES = {"pytorch": "torch"}


def misspelt(name: str) -> str | None:
    """The planned name (:data:`PLANNED`) that ``name`` is a typo of, else ``None``.

    A typo is one slip from that name: two neighbouring letters swapped (``troch``) or a letter typed twice
    (``torcch``); for a name of 8 letters or more, also one letter left out, added or changed (``torchvison``,
    ``torch-vision``). The names themselves are never typos. ``difflib`` ranks the candidates; its similarity alone
    would be no rule: it takes ``torchao`` and ``torchx``, real packages, for ``torch``. Short names get only the
    slips that no real name is likely to be (``torchx``, ``touch`` and ``porch`` are one letter from ``torch``), so
    a requirement that gets through is left to the index. Callers that install other packages skip the names of the
    torch family first (:func:`wheelfit.family.is_torch_family`): no rule here may refuse those.
    """
    import difflib

    typed = canonicalize_name(name)
    if typed in PLANNED:
        return None
    if typed in ALIASES:
        return ALIASES[typed]
    return next((n for n in difflib.get_close_matches(typed, PLANNED, n=3, cutoff=0.6) if _one_slip(typed, n)), None)


def _one_slip(typed: str, name: str) -> bool:
    """Whether ``typed`` is ``name`` with one slip (see :func:`misspelt`)."""
    long = len(name) >= 8
    at = next((i for i, (a, b) in enumerate(zip(typed, name, strict=False)) if a != b), min(len(typed), len(name)))
    if len(typed) == len(name):
        swapped = typed[at + 2 :] == name[at + 2 :] and typed[at : at + 2] == name[at : at + 2][::-1]
        return swapped or (long and typed[at + 1 :] == name[at + 1 :])
    if len(typed) == len(name) + 1:  # one letter added: typed twice (torcch), or anything in a long name
        doubled = typed[at] in typed[max(at - 1, 0) : at] + typed[at + 1 : at + 2]
        return typed[:at] + typed[at + 1 :] == name and (long or doubled)
    if len(typed) == len(name) - 1:  # one letter left out
        return long and name[:at] + name[at + 1 :] == typed
    return False


def check_backend(value: str, source: str) -> str | None:
    """A ``--torch-backend`` value as uv spells it: ``auto`` (``None``: wheelfit's own choice) or a per-variant
    index name (``cpu``, ``cu128``, ``rocm7.1``, ``xpu``); anything else is a usage error."""
    text = value.strip().lower()
    if text in ("", "auto"):
        return None
    if label_kind(text) is None:
        raise UsageError(f"{source} {value!r}: use auto, cpu, xpu, cuNNN (cu128) or rocmX.Y (rocm7.1), as uv does")
    return text


def _planned(spec: str) -> Requirement:
    """``spec`` read; a name wheelfit does not plan is refused, a typo of one (:func:`misspelt`) as a usage error."""
    try:
        req = Requirement(spec)
    except InvalidRequirement as exc:
        raise UsageError(f"cannot read the requirement {spec!r}: {first_line(exc)}") from exc
    if canonicalize_name(req.name) not in PLANNED:
        meant = misspelt(req.name)
        if meant is not None:
            raise UnknownPackageError(req.name, meant)
        raise ResolveError(
            f"wheelfit plans torch, its companions ({', '.join(COMPANIONS)}) and the packages built against it "
            f"that it knows (flash-attn, torch-scatter, ...); {req.name} is none of them"
        )
    return req


def check_names(specs: Sequence[str]) -> None:
    """Refuse what :meth:`Request.parse` refuses in the names of ``specs``, without building a request (which
    reads the knowledge base): a plan checks them before it detects the machine or reads an index. The names of
    packages built against torch (:mod:`wheelfit.kb.extensions`) are planned with it."""
    from ..kb.extensions import extensions

    table = extensions()
    for spec in specs:
        try:
            if canonicalize_name(Requirement(spec).name) in table:
                continue
        except InvalidRequirement:
            pass
        _planned(spec)


def _said(source: str, backend: str, how: BackendHow) -> str:
    """How the plan names the choice: ``--torch-backend cu128``, ``UV_TORCH_BACKEND=cu128``, or an index URL's
    own words (``--index-url ends in /cu128``, already said whole by :mod:`wheelfit.index.config`)."""
    if how == "index-url":
        return source
    return f"{source}={backend}" if how == "variable" else f"{source} {backend}"


@dataclass(frozen=True)
class Request:
    """``torch`` (first) and the companions asked for, and the choices that shape the plan."""

    requirements: tuple[Requirement, ...]
    allow_cpu: bool = False
    index_base: str = DEFAULT_INDEX
    #: Pre-releases (``--pre``): nightly builds and release candidates are candidates too.
    pre: bool = False
    #: Near-miss AMD targets: ``{"gfx1031": ("gfx1030", "10.3.0", risk or None)}``; the caller passes the knowledge
    #: base's (:func:`wheelfit.kb.overrides.rocm_overrides`): a request reads no file.
    rocm_overrides: dict[str, tuple[str, str, str | None]] = field(default_factory=dict)
    #: Listed targets whose kernels are missing from a ROCm version on: ``{"gfx906": ("6.4", why)}``.
    rocm_broken: dict[str, tuple[str, str]] = field(default_factory=dict)
    #: The build the user chose (``cu128``): from a local label (``torch==2.9.0+cu128``), ``--torch-backend`` or
    #: ``UV_TORCH_BACKEND``, or an index URL ending in it; ``None``: wheelfit's own choice (``auto``).
    torch_backend: str | None = None
    #: Where that choice came from, as the plan says it (``--torch-backend cu128``, ``torch==2.9.0+cu128``).
    torch_backend_from: str = ""
    #: What kind of place that is: an index URL's choice is said in its own words by the plan.
    torch_backend_how: BackendHow | None = None
    #: ``--force-build``: plan the chosen build even when it has no kernels for this machine (warned).
    force: bool = False
    #: ``--allow-hsa-override``: a near-miss AMD GPU may get a build it runs only under HSA_OVERRIDE_GFX_VERSION.
    allow_hsa_override: bool = False
    #: ``--require-gpu``: a machine with a GPU that would get the CPU build is refused instead (CI for a GPU fleet).
    require_gpu: bool = False

    @classmethod
    def parse(
        cls,
        specs: Sequence[str],
        *,
        torch_backend: str | None = None,
        torch_backend_from: str = "--torch-backend",
        torch_backend_how: BackendHow = "option",
        **kwargs: object,
    ) -> Request:
        """The request of ``specs``; a local label in one of them (``torch==2.9.0+cu128``) chooses the build, as
        ``torch_backend`` does (they must agree)."""
        reqs: list[Requirement] = []
        labels: dict[str, str] = {}
        for spec in specs:
            req = _planned(spec)
            name = canonicalize_name(req.name)
            for s in req.specifier:
                local = s.version.partition("+")[2] if s.operator in ("==", "===") else ""  # not != ...+cu128
                if local and name not in TRITONS:
                    labels.setdefault(local.lower(), str(req))
            reqs.append(req)
        if len(labels) > 1:
            raise UsageError(f"the requirements ask for different builds ({', '.join(labels.values())}): ask for one")
        backend = check_backend(torch_backend, torch_backend_from) if torch_backend is not None else None
        chosen_from = _said(torch_backend_from, backend, torch_backend_how) if backend else ""
        how: BackendHow | None = torch_backend_how if backend else None
        if labels:
            label, where = next(iter(labels.items()))
            if label_kind(label) is None:
                raise UsageError(f"{where}: +{label} is not a PyTorch build (cpu, xpu, cuNNN, rocmX.Y)")
            if backend is not None and backend != label:
                raise UsageError(f"{where} asks for the {label} build, {chosen_from} for another: ask for one")
            if backend is None:
                how = "pin"
            backend, chosen_from = label, chosen_from or where
        if not any(canonicalize_name(r.name) == "torch" for r in reqs):
            reqs.insert(0, Requirement("torch"))
        reqs.sort(key=lambda r: canonicalize_name(r.name) != "torch")
        return cls(
            tuple(reqs), torch_backend=backend, torch_backend_from=chosen_from, torch_backend_how=how,
            **kwargs,  # type: ignore[arg-type]
        )  # fmt: skip

    @property
    def torch(self) -> Requirement:
        return self.requirements[0]

    @property
    def companions(self) -> tuple[Requirement, ...]:
        return self.requirements[1:]

    @property
    def prereleases(self) -> bool | None:
        """For ``SpecifierSet.contains``: ``True`` with ``--pre`` or an exact pin, else the specifier's own rule."""
        return True if self.pre or self.exact else None

    @property
    def exact(self) -> bool:
        """An exact pin of torch (``==2.9.0``): the only request that may take a yanked file (PEP 592)."""
        return any(s.operator in ("==", "===") and not s.version.endswith("*") for s in self.torch.specifier)
