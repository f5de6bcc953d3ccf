"""Real, installable wheels for tests: METADATA, WHEEL, RECORD with sha256 entries, an importable package.

``make_torch_like`` imitates a PyTorch variant build closely enough for the
installer tests: ``import torch; torch.version.cuda`` says which build landed.
"""

from __future__ import annotations

import base64
import hashlib
import re
import zipfile
from collections.abc import Mapping, Sequence
from pathlib import Path

__all__ = ["make_torch_like", "make_wheel", "torch_version_attrs"]

_FIXED_TIME = (2020, 1, 1, 0, 0, 0)  # reproducible archives: same inputs, same bytes, same sha256


def _escape(name: str) -> str:
    return re.sub(r"[-_.]+", "_", name).lower()


def _record_hash(data: bytes) -> str:
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def make_wheel(
    directory: Path,
    name: str,
    version: str,
    *,
    requires: Sequence[str] = (),
    files: Mapping[str, bytes | str] | None = None,
    tag: str = "py3-none-any",
    build: str | None = None,
    requires_python: str | None = None,
) -> Path:
    """Write ``<name>-<version>[-<build>]-<tag>.whl`` into ``directory`` and return its path.

    The wheel holds ``<name>/__init__.py`` (``__version__ = version``), any extra ``files`` (paths inside the
    wheel, overriding the default ``__init__.py`` if given), and a complete ``.dist-info``.
    """
    escaped = _escape(name)
    dist_info = f"{escaped}-{version}.dist-info"
    contents: dict[str, bytes] = {f"{escaped}/__init__.py": f'__version__ = "{version}"\n'.encode()}
    for member, data in (files or {}).items():
        contents[member] = data.encode() if isinstance(data, str) else data
    metadata = ["Metadata-Version: 2.1", f"Name: {name}", f"Version: {version}"]
    if requires_python:
        metadata.append(f"Requires-Python: {requires_python}")
    metadata += [f"Requires-Dist: {r}" for r in requires]
    contents[f"{dist_info}/METADATA"] = ("\n".join(metadata) + "\n\n").encode()
    wheel = ["Wheel-Version: 1.0", "Generator: wheelfit-tests", "Root-Is-Purelib: true"]
    if build is not None:
        wheel.append(f"Build: {build}")
    wheel += [f"Tag: {t}" for t in _expand_tags(tag)]
    contents[f"{dist_info}/WHEEL"] = ("\n".join(wheel) + "\n").encode()
    record = [f"{member},{_record_hash(data)},{len(data)}" for member, data in contents.items()]
    record.append(f"{dist_info}/RECORD,,")
    contents[f"{dist_info}/RECORD"] = ("\n".join(record) + "\n").encode()

    parts = [escaped, version, *([build] if build is not None else []), tag]
    path = Path(directory) / ("-".join(parts) + ".whl")
    path.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        for member, data in contents.items():
            info = zipfile.ZipInfo(member, date_time=_FIXED_TIME)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            zf.writestr(info, data)
    return path


def _expand_tags(tag: str) -> list[str]:
    """``py2.py3-none-any`` -> ``py2-none-any``, ``py3-none-any`` (the WHEEL file lists each tag)."""
    interpreters, abis, platforms = tag.split("-")
    return [f"{i}-{a}-{p}" for i in interpreters.split(".") for a in abis.split(".") for p in platforms.split(".")]


def torch_version_attrs(variant: str) -> dict[str, str | None]:
    """``torch.version`` attributes of a real build of ``variant`` (cu126 -> cuda "12.6"; rocm7.1 -> hip "7.1...")."""
    cuda = hip = xpu = None
    if match := re.fullmatch(r"cu(\d+)(\d)", variant):
        cuda = f"{int(match[1])}.{match[2]}"
    elif match := re.fullmatch(r"rocm(\d+\.\d+)(?:\.\d+)?", variant):
        hip = f"{match[1]}.00000-0000000000"
    elif variant == "xpu":
        xpu = "20250101"
    elif variant != "cpu":
        raise ValueError(f"unknown PyTorch variant {variant!r}")
    return {"cuda": cuda, "hip": hip, "xpu": xpu}


def make_torch_like(directory: Path, version: str, variant: str, *, requires: Sequence[str] = ()) -> Path:
    """``torch-<version>+<variant>-py3-none-any.whl`` whose ``torch.version`` looks like the real build's."""
    full = f"{version}+{variant}"
    attrs = torch_version_attrs(variant)
    version_py = f'__version__ = "{full}"\ngit_version = "0000000000000000000000000000000000000000"\n'
    version_py += "".join(f"{key} = {value!r}\n" for key, value in attrs.items())
    init_py = f'"""A stand-in for torch {full} (wheelfit tests)."""\n\nfrom torch import version\n'
    init_py += f'\n__version__ = "{full}"\n'
    return make_wheel(
        directory,
        "torch",
        full,
        requires=requires,
        files={"torch/__init__.py": init_py, "torch/version.py": version_py},
    )
