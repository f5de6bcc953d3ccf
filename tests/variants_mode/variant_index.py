"""A loopback wheel-variant index, laid out as ``download.pytorch.org/whl/variant/`` is (PEP 825 ``*-variants.json``;
pytorch/test-infra ``release/pypi/promote_wheel_variants.sh``).

``tests/support/index_server.py`` cannot serve it: it lists files through
``packaging.utils.parse_wheel_filename``, which rejects variant labels by design
(pypa/packaging#1148), and serves only ``.whl`` files. This one writes a static PEP 503
project page beside real wheel files, their PEP 658 ``.metadata`` files and the
``torch-<version>-variants.json`` file, and serves the directory over HTTP on 127.0.0.1.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import shutil
import zipfile
from collections.abc import Sequence
from html import escape
from pathlib import Path

from tests.support.static import serve_directory
from tests.support.wheels import make_wheel, torch_version_attrs
from wheelfit.variants.legacy import legacy_variant

__all__ = ["LINUX_X86_64", "TORCH_REQUIRES", "add_torch_variant_wheel", "add_variant_wheel", "serve", "write_page"]

LINUX_X86_64 = "cp312-cp312-manylinux_2_28_x86_64"

#: The dependency style PyTorch's variant wheels use (wheelnext/variant-repack ``configs/torch-2.9`` ``deps_add_list``):
#: one list in every wheel of a release, the variant markers decide. Versions are illustrative.
#: The two ``kernels-sm*`` entries are test constructs that show PEP 825's narrowing.
TORCH_REQUIRES = (
    "filelock",
    "nvidia-cublas-cu12==12.6.4.1; platform_system == 'Linux' and variant_label == 'cuda12.6'",
    "nvidia-cublas==12.8.4.1; platform_system == 'Linux' and variant_label == 'cuda12.8'",
    "nvidia-cublas==13.0.0.19; platform_system == 'Linux' and variant_label == 'cuda13.0'",
    "nvidia-nccl-cu12==2.27.5; platform_system == 'Linux'"
    " and 'nvidia :: cuda_version_lower_bound :: 12.0' in variant_properties",
    "nvidia-nccl-cu13==2.27.7; platform_system == 'Linux'"
    " and 'nvidia :: cuda_version_lower_bound :: 13.0' in variant_properties",
    "triton==3.5.0; platform_system == 'Linux' and 'nvidia' in variant_namespaces",
    'pytorch-triton-rocm==3.5.0; platform_system == "Linux" and "amd" in variant_namespaces',
    "intel-sycl-rt==2025.2.1; platform_system == 'Linux' and 'intel' in variant_namespaces",
    "kernels-sm86==1.0; 'nvidia :: sm_arch :: 86_real' in variant_properties",
    "kernels-sm90==1.0; 'nvidia::sm_arch::90_real' in variant_properties",
    "sympy; extra == 'opt'",
)


def add_variant_wheel(
    directory: Path, version: str, label: str, *, tag: str = LINUX_X86_64, requires: Sequence[str] = TORCH_REQUIRES
) -> Path:
    """A real torch wheel named ``torch-<version>-<tag>-<label>.whl`` (PEP 825 filename)."""
    built = make_wheel(directory / ".build" / label, "torch", version, requires=requires, tag=tag)
    final = directory / built.name.replace(".whl", f"-{label}.whl")
    shutil.move(built, final)
    return final


def add_torch_variant_wheel(directory: Path, version: str, label: str, *, tag: str, requires: Sequence[str]) -> Path:
    """A torch-like variant wheel as PyTorch repacks them: no local version in the name or METADATA, while the
    build inside still says the per-variant build it came from (``torch.__version__ == "2.10.0+cu130"``,
    ``torch.version.cuda == "13.0"``)."""
    built_from = legacy_variant(label)
    assert built_from is not None, label
    full = f"{version}+{built_from}"
    version_py = f'__version__ = "{full}"\n' + "".join(
        f"{key} = {value!r}\n" for key, value in torch_version_attrs(built_from).items()
    )
    init_py = f'from torch import version\n\n__version__ = "{full}"\n'
    built = make_wheel(
        directory / ".build" / label,
        "torch",
        version,
        requires=requires,
        tag=tag,
        files={
            "torch/__init__.py": init_py,
            "torch/version.py": version_py,
            # PEP 825: the wheel's own variant.json holds exactly one variant (properties left out here)
            f"torch-{version}.dist-info/variant.json": json.dumps({"variants": {label: {}}}, indent=4),
        },
    )
    final = directory / built.name.replace(".whl", f"-{label}.whl")
    shutil.move(built, final)
    return final


def _metadata(wheel: Path) -> bytes:
    with zipfile.ZipFile(wheel) as zf:
        return next(zf.read(n) for n in zf.namelist() if n.count("/") == 1 and n.endswith(".dist-info/METADATA"))


def write_page(
    directory: Path,
    project: str = "torch",
    *,
    pep658: bool = True,
    wrong_hash: Sequence[str] = (),
    yanked: Sequence[str] = (),
) -> Path:
    """``<directory>/<project>/index.html`` linking every ``.whl`` and ``*-variants.json`` file in ``directory``;
    the files named in ``yanked`` carry PEP 592's ``data-yanked``."""
    lines = ['<!DOCTYPE html><html><head><meta name="pypi:repository-version" content="1.1"></head><body>']
    for path in sorted(directory.iterdir()):
        if not path.name.startswith(f"{project}-") or not path.name.endswith((".whl", "-variants.json")):
            continue
        data = path.read_bytes()
        digest = hashlib.sha256(b"other" + data if path.name in wrong_hash else data).hexdigest()
        attrs = [f'href="../{escape(path.name)}#sha256={digest}"']
        if path.name in yanked:
            attrs.append('data-yanked="broken build"')
        if path.suffix == ".whl" and pep658:
            meta = _metadata(path)
            (directory / f"{path.name}.metadata").write_bytes(meta)
            attrs.append(f'data-core-metadata="sha256={hashlib.sha256(meta).hexdigest()}"')
        lines.append(f"<a {' '.join(attrs)}>{escape(path.name)}</a><br/>")
    lines.append("</body></html>")
    page = directory / project / "index.html"
    page.parent.mkdir(exist_ok=True)
    page.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return page


def serve(root: Path) -> contextlib.AbstractContextManager[str]:
    """Serve ``root`` on 127.0.0.1; yields the base URL."""
    return serve_directory(root)
