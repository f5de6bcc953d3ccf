"""Extensions built against torch (flash-attn, xformers, PyG's, ...): do they match the installed torch? Pure.

An extension compiled for another torch release, CUDA major or C++ ABI fails at import with "undefined symbol".
What a wheel says about its build, as far as its metadata tells: an exact ``Requires-Dist: torch==X`` (xformers,
vLLM), or a local label (flash-attn, causal-conv1d, mamba-ssm: ``+cu12torch2.6cxx11abiFALSE``; PyG's:
``+pt28cu126``; DGL's: ``+cu126``), read from the version or, where the version lost it (flash-attn's release
wheels are renamed after the build, so their METADATA has none), from the file name in ``direct_url.json``. Which
packages, and the pattern of each one's label, are data: ``kb/data/extensions.json``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from urllib.parse import unquote, urlsplit

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

from ..install.verify import Companion, TorchFacts
from ..kb.extensions import extensions
from .model import Finding, Fix, FixKind, Issue

__all__ = ["Built", "built_for", "extension_findings", "names"]

def names() -> tuple[str, ...]:
    """The distributions built against torch whose installed build the doctor reads (``kb/data/extensions.json``)."""
    return tuple(extensions())


@dataclass(frozen=True)
class Built:
    """What an extension says it was built for; ``None``: it does not say."""

    torch: str | None = None
    #: ``12`` (a CUDA major), ``126`` (an exact CUDA), ``cpu``.
    cuda: str | None = None
    cxx11abi: bool | None = None


def built_for(dist: Companion) -> Built:
    """The build an extension's version label (or, failing that, its file name) states, read with the pattern its
    entry in the extension table gives."""
    entry = extensions().get(canonicalize_name(dist.name))
    label = _label(dist.version) or _label(_file_version(dist.url))
    if entry is None or entry.label is None or not label:
        return Built()
    m = entry.label.search(label)
    if m is None:
        return Built()
    groups = {k: v for k, v in m.groupdict().items() if v is not None}
    torch = groups.get("torch") or (
        f"{groups['torch_major']}.{groups['torch_minor']}" if "torch_major" in groups and "torch_minor" in groups
        else None
    )  # fmt: skip
    variant = groups.get("variant", "").lower()
    cuda = groups.get("cuda") or ("cpu" if variant == "cpu" else variant.removeprefix("cu") or None)
    abi = groups.get("abi")
    return Built(torch, cuda, abi.lower() == "true" if abi else None)


def _label(version: str | None) -> str | None:
    if not version:
        return None
    try:
        return Version(version).local
    except InvalidVersion:
        return None


def _file_version(url: str | None) -> str | None:
    """``2.7.4.post1+cu12torch2.6cxx11abiFALSE`` from a wheel URL's file name."""
    if not url:
        return None
    name = unquote(urlsplit(url).path.rsplit("/", 1)[-1])
    parts = name.removesuffix(".whl").split("-")
    return parts[1] if name.endswith(".whl") and len(parts) >= 5 else None


def _torch_pin(dist: Companion) -> Requirement | None:
    for text in dist.requires:
        try:
            req = Requirement(text)
        except InvalidRequirement:
            continue
        if canonicalize_name(req.name) == "torch" and req.specifier and (req.marker is None or "extra" not in
                                                                         str(req.marker)):  # fmt: skip
            return req
    return None


def extension_findings(facts: TorchFacts, label: str) -> Sequence[Finding]:
    """One finding per installed extension built for another torch, CUDA major or C++ ABI than this one."""
    try:
        torch = Version(facts.version)
    except InvalidVersion:
        return []
    wanted = set(extensions())
    out: list[Finding] = []
    for dist in facts.others:
        if canonicalize_name(dist.name) not in wanted:
            continue
        wrong = _mismatches(dist, torch, label, facts.cxx11abi)
        if wrong:
            out.append(
                Finding(
                    Issue.EXTENSION,
                    f"{dist.name} {dist.version} was built for another torch: importing it fails with "
                    "\"undefined symbol\" or its kernels do not run.",
                    f"{dist.name}: {'; '.join(wrong)}",
                    (Fix(FixKind.REBUILD, name=dist.name),),
                )
            )
    return out


def _mismatches(dist: Companion, torch: Version, label: str, abi: bool | None) -> list[str]:
    wrong: list[str] = []
    pin = _torch_pin(dist)
    public = Version(torch.public)
    if pin is not None and not pin.specifier.contains(public, prereleases=True):
        wrong.append(f"requires torch{pin.specifier}, torch is {public}")
    built = built_for(dist)
    if built.torch is not None and built.torch != f"{torch.major}.{torch.minor}":
        wrong.append(f"built for torch {built.torch}, torch is {torch.major}.{torch.minor}")
    ours = label.removeprefix("cu") if label.startswith("cu") else label
    if built.cuda == "cpu" and label != "cpu":
        wrong.append(f"a CPU build, torch is {label}")
    elif built.cuda is not None and built.cuda != "cpu":
        if not label.startswith("cu"):
            wrong.append(f"built for CUDA {_words(built.cuda)}, torch is {label}")
        elif _major(built.cuda) != _major(ours):
            wrong.append(f"built for CUDA {_words(built.cuda)}, torch has CUDA {_words(ours)}")
    if built.cxx11abi is not None and abi is not None and built.cxx11abi != abi:
        wrong.append(f"built with cxx11abi={built.cxx11abi}, torch with {abi}")
    return wrong


def _major(cuda: str) -> str:
    """``12`` from ``12`` or ``126``; ``13`` from ``130``."""
    return cuda if len(cuda) <= 2 else cuda[:-1]


def _words(cuda: str) -> str:
    return cuda if len(cuda) <= 2 else f"{cuda[:-1]}.{cuda[-1]}"
