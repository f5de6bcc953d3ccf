"""A Jetson's plan: torch from the index NVIDIA's Jetson AI Lab serves for its L4T release. Pure.

PyTorch's own aarch64 CUDA builds are SBSA builds for Grace servers (GH200, GB200): their kernels are not for the
Tegra GPUs of Jetson boards, and they do not load on L4T. The Jetson AI Lab index (``jp6/cu126`` for JetPack 6)
builds torch for them; its wheels rotate, so the plan takes the newest the index lists that the request allows,
never a version the knowledge base assumes. Companions asked for are pinned as the knowledge base pins them for
that torch release, where it does.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from ..candidates.model import Fact
from ..kb.matrix import ElsewhereIndex, Knowledge
from ..simple.links import FileLink
from ..simple.select import select_wheel
from .machine import Machine
from .plan import PackagePin, Plan
from .request import Request

__all__ = ["jetson_index", "jetson_plan"]


def jetson_index(found: Machine, kb: Knowledge) -> ElsewhereIndex | None:
    """The index for this Jetson's L4T release (its major: ``36`` is JetPack 6), if the knowledge base has one."""
    elsewhere = kb.elsewhere.get("jetson")
    if not found.jetson or elsewhere is None or found.l4t is None:
        return None
    return elsewhere.indexes.get(found.l4t.split(".")[0])


def jetson_plan(
    found: Machine, request: Request, where: ElsewhereIndex, pages: Mapping[str, Sequence[FileLink]], kb: Knowledge
) -> Plan:
    """torch, and each companion of ``request``, as the newest file of ``pages`` (each project's files on
    ``where``, the index :func:`jetson_index` found in ``kb``) that the request allows and this Python and platform
    take."""
    fact = Fact(f"{where.url} builds torch for {where.what} Tegra GPUs", where.confidence, where.source)
    torch = select_wheel(pages.get("torch", ()), request.torch, tags=found.tags, python_version=found.python)
    version = torch.wheel.version
    release = kb.release(f"{version.major}.{version.minor}")
    pinned = release.companions.get(version) if release is not None else None
    pins = [PackagePin("torch", str(version), f"torch=={version}", torch.link.filename, torch.link.url, (fact,),
                       sha256=torch.link.hashes.get("sha256"))]  # fmt: skip
    for wanted in request.companions:
        name = canonicalize_name(wanted.name)
        spec = pinned.pins.get(name) if pinned is not None else None
        req = Requirement(f"{name}{wanted.specifier & spec if spec is not None else wanted.specifier}")
        chosen = select_wheel(pages.get(name, ()), req, tags=found.tags, python_version=found.python)
        v = chosen.wheel.version
        pins.append(PackagePin(name, str(v), f"{name}=={v}", chosen.link.filename, chosen.link.url, (fact,),
                               sha256=chosen.link.hashes.get("sha256")))  # fmt: skip
    return Plan(
        torch_version=str(version),
        variant=where.label,
        index_url=where.url,
        packages=tuple(pins),
        reasons=(
            f"{kb.elsewhere['jetson'].what}, L4T {found.l4t}: torch {version} from "
            f"NVIDIA's Jetson AI Lab index for {where.what}, built for the Tegra GPU; PyTorch's own aarch64 CUDA "
            "builds are SBSA builds for Grace servers (GH200, GB200) and do not run on L4T",
            f"torch {version} is the newest on {where.url} that matches {request.torch}",
        ),
        platform=found.platform_key,
        python=found.python,
        sources=(where.url,),
    )
