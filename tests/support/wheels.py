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
    extras: Sequence[str] = (),
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
    metadata += [f"Provides-Extra: {e}" for e in extras]
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


def make_torch_like(
    directory: Path,
    version: str,
    variant: str,
    *,
    requires: Sequence[str] = (),
    local: bool = True,
    arch_list: Sequence[str] | None = None,
) -> Path:
    """``torch-<version>+<variant>-py3-none-any.whl`` whose ``torch.version`` looks like the real build's.

    ``local=False`` leaves the label out of the version, as PyPI's torch (``2.9.0``, a CUDA 12.8 build).
    ``arch_list`` adds a ``torch.cuda`` that sees the GPUs named in ``WHEELFIT_FAKE_TORCH_GPUS`` (``name=8.6;...``)
    and, as real torch does, reports ``get_arch_list()`` only while one is visible.
    """
    full = f"{version}+{variant}" if local else version
    attrs = torch_version_attrs(variant)
    version_py = f'__version__ = "{full}"\ngit_version = "0000000000000000000000000000000000000000"\n'
    version_py += "".join(f"{key} = {value!r}\n" for key, value in attrs.items())
    init_py = f'"""A stand-in for torch {full} (wheelfit tests)."""\n\nfrom torch import version\n'
    if arch_list is not None:
        init_py += "from torch import cuda\n"
    init_py += f'\n__version__ = "{full}"\n'
    files = {"torch/__init__.py": init_py, "torch/version.py": version_py}
    if arch_list is not None:
        files["torch/cuda.py"] = _FAKE_CUDA.replace("ARCH_LIST", repr(list(arch_list)))
    return make_wheel(directory, "torch", full, requires=requires, files=files)


#: A ``torch.cuda`` for tests: the GPUs of ``WHEELFIT_FAKE_TORCH_GPUS``, and ``get_arch_list()`` as torch's does
#: it (an empty list while no GPU is available: ``torch/cuda/__init__.py``).
_FAKE_CUDA = """import os
from types import SimpleNamespace


def _gpus():
    found = []
    for item in filter(None, os.environ.get("WHEELFIT_FAKE_TORCH_GPUS", "").split(";")):
        name, _, cc = item.rpartition("=")
        major, _, minor = cc.partition(".")
        found.append(SimpleNamespace(name=name, major=int(major), minor=int(minor), gcnArchName=""))
    return found


def is_available():
    return bool(_gpus())


def device_count():
    return len(_gpus())


def get_device_properties(i):
    return _gpus()[i]


def get_arch_list():
    return ARCH_LIST if is_available() else []


def init():
    if not is_available():  # what real torch says where no driver loads
        raise RuntimeError(os.environ.get("WHEELFIT_FAKE_TORCH_CUDA_ERROR", "Found no NVIDIA driver on your system."))
"""
