"""ROCm 7.14+ torch wheels do not bundle ROCm: their METADATA requires ``rocm[device-all,libraries]==7.14.*``
(RFC pytorch/pytorch#191688; the line as installed from download.pytorch.org/whl/rocm7.14 by a 2.14.1 user), and
``rocm`` requires ``rocm-sdk-core``, with ``rocm-sdk-libraries`` and ``rocm-sdk-device-<gfx>`` behind its extras
(ROCm/TheRock ``rocm_sdk/_dist_info.py``). The PyTorch index serves those names beside torch (pytorch/test-infra
#8436), so they are torch-family: taken from the plan's variant index, pinned by sha256, never the default index's
copy, which here is a squatter (a higher ``rocm`` that ``==7.14.*`` admits, same-version sdk packages of other
bytes).

One deviation from the real index: ``rocm`` is an sdist there (TheRock builds it with ``setup.py sdist`` so that it
can pick the machine's gfx at install time), and wheelfit installs wheels only; here it is a wheel with the same
dependencies, and the last test shows what the real sdist-only page does: fail closed, naming it.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
from collections.abc import Callable, Iterator, Sequence
from functools import partial
from pathlib import Path
from urllib.parse import unquote

import pytest
import tomlkit
from packaging.requirements import Requirement
from packaging.tags import Tag
from packaging.version import Version

from tests.support.wheels import make_torch_like, make_wheel
from wheelfit.family import is_torch_family
from wheelfit.install.errors import WheelNotFoundError
from wheelfit.install.install_set import Platform, WheelMetadata, family_files
from wheelfit.simple.links import FileLink

from .conftest import Index, installed, make_venv, run_wheelfit
from .loopback import serve

ROCM = "7.14.0"
#: What a 2.14.1+rocm7.14 torch requires of ROCm, as its METADATA writes it.
TORCH_NEEDS = "rocm[device-all,libraries]==7.14.*"
#: ``rocm``'s Requires-Dist (TheRock ``_dist_info.py``: ``core`` required, the others extras, device-all every
#: gfx), cut to two gfx targets. ``devel`` is an extra torch does not ask for, and only AMD's index has it.
ROCM_NEEDS = [
    f"rocm-sdk-core=={ROCM}",
    f'rocm-sdk-libraries=={ROCM}; extra == "libraries"',
    f'rocm-sdk-devel=={ROCM}; extra == "devel"',
    *(f'rocm-sdk-device-{gfx}=={ROCM}; extra == "device-{gfx}"' for gfx in ("gfx942", "gfx1100")),
    *(f'rocm-sdk-device-{gfx}=={ROCM}; extra == "device-all"' for gfx in ("gfx942", "gfx1100")),
]
ROCM_EXTRAS = ["libraries", "devel", "device-gfx942", "device-gfx1100", "device-all"]
SDK = ["rocm-sdk-core", "rocm-sdk-libraries", "rocm-sdk-device-gfx942", "rocm-sdk-device-gfx1100"]

Maker = Callable[[Path], Path]


def _marked(name: str, version: str, origin: str, requires: Sequence[str] = (), extras: Sequence[str] = ()) -> Maker:
    """A wheel whose module says where it came from (``ORIGIN``)."""
    files = {f"{name.replace('-', '_')}/__init__.py": f"ORIGIN = {origin!r}\n"}
    return partial(make_wheel, name=name, version=version, files=files, requires=requires, extras=extras)


def _build(root: Path) -> None:
    put = Index(root, "").put
    variant = "pytorch/rocm7.14"
    torch = partial(make_torch_like, version="2.15.0", variant="rocm7.14", requires=["smallnum>=1.0", TORCH_NEEDS])
    put(variant, torch)
    put(variant, _marked("rocm", ROCM, "variant", requires=ROCM_NEEDS, extras=ROCM_EXTRAS))
    for name in SDK:
        put(variant, _marked(name, ROCM, "variant"))
    put("default/simple", partial(make_wheel, name="smallnum", version="1.0"))
    put("default/simple", _marked("torch", "99.0", "default"))
    put("default/simple", _marked("rocm", "7.14.99", "default", requires=ROCM_NEEDS, extras=ROCM_EXTRAS))
    for name in SDK:
        put("default/simple", _marked(name, ROCM, "default"))


@pytest.fixture(scope="module")
def rocm_index(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Index]:
    root = tmp_path_factory.mktemp("rocm-index")
    _build(root)
    with serve(root) as url:
        yield Index(root, url)


def _origins(python: Path, env: dict[str, str]) -> dict[str, str]:
    """Which index each ROCm package installed came from, as its module says."""
    modules = [name.replace("-", "_") for name in ["rocm", *SDK]]
    script = f"import importlib, json; print(json.dumps({{m: importlib.import_module(m).ORIGIN for m in {modules}}}))"
    done = subprocess.run([str(python), "-c", script], capture_output=True, text=True, env=env, check=True)
    return {name.replace("_", "-"): origin for name, origin in json.loads(done.stdout).items()}


def _served_sha256(index: Index, url: str) -> str:
    """The sha256 of the file the loopback index serves at ``url``."""
    assert url.startswith(f"{index.url}/"), url
    return hashlib.sha256((index.root / unquote(url.removeprefix(f"{index.url}/"))).read_bytes()).hexdigest()


@pytest.mark.parametrize("installer", ["uv", "pip"])
def test_the_rocm_packages_come_from_the_variant_index_with_the_build(
    rocm_index: Index, env: dict[str, str], tmp_path: Path, installer: str
) -> None:
    python = make_venv(tmp_path / "venv")
    args = ["install", "torch", "--target", "rocm=gfx942", "--python", str(python), "--installer", installer]
    args += ["--json", "--no-verify"]
    done = run_wheelfit([*args, "--pytorch-index", rocm_index.pytorch, "--index-url", rocm_index.default], env)
    assert done.returncode == 0, done.stderr
    have = installed(python, env)
    assert have["torch"] == "2.15.0+rocm7.14"
    assert have["rocm"] == ROCM  # the default index's 7.14.99 is higher and admitted by ==7.14.*
    assert have["smallnum"] == "1.0"  # an ordinary dependency still comes from the default index
    assert "rocm-sdk-devel" not in have  # an extra torch does not ask for
    assert _origins(python, env) == dict.fromkeys(["rocm", *SDK], "variant")
    family = {w["name"]: w for w in json.loads(done.stdout)["torch_family"]}
    assert family.keys() == {"torch", "rocm", *SDK}
    assert family["rocm"]["needed_by"] == "torch 2.15.0+rocm7.14"
    assert {family[name]["needed_by"] for name in SDK} == {f"rocm {ROCM}"}
    for name, wheel in family.items():  # each the variant index's file, pinned by the index's sha256
        assert wheel["url"].startswith(f"{rocm_index.pytorch}/rocm7.14/{name}/"), wheel
        assert wheel["sha256"] == _served_sha256(rocm_index, wheel["url"])


def test_a_lock_pins_the_rocm_packages_of_the_variant_index_by_hash(
    rocm_index: Index, env: dict[str, str], tmp_path: Path
) -> None:
    out = tmp_path / "pylock.toml"
    args = ["lock", "torch", "--target", "rocm=gfx942", "-o", str(out)]
    done = run_wheelfit([*args, "--pytorch-index", rocm_index.pytorch, "--index-url", rocm_index.default], env)
    assert done.returncode == 0, done.stderr
    packages = {p["name"]: p for p in tomlkit.parse(out.read_text(encoding="utf-8")).unwrap()["packages"]}
    assert {name: p["version"] for name, p in packages.items()} == {
        "torch": "2.15.0+rocm7.14", "rocm": ROCM, "smallnum": "1.0", **dict.fromkeys(SDK, ROCM)
    }  # fmt: skip
    for name in ["rocm", *SDK]:
        assert packages[name]["index"] == f"{rocm_index.pytorch}/rocm7.14"
        (wheel,) = packages[name]["wheels"]
        assert wheel["url"].startswith(f"{rocm_index.pytorch}/rocm7.14/{name}/")
        assert wheel["hashes"]["sha256"] == _served_sha256(rocm_index, wheel["url"])
    assert packages["smallnum"]["index"] == rocm_index.default


@pytest.mark.parametrize(
    ("name", "family"),
    [
        ("rocm", True),
        ("rocm-sdk-core", True),
        ("rocm_sdk_libraries", True),
        ("rocm-sdk-device-gfx942", True),
        ("rocm-sdk-device-gfx1250", True),
        ("rocm-sdk-device-gfx1300", True),  # a gfx the PyTorch index mirrors once AMD publishes it (test-infra#8436)
        ("rocm-sdk-devel", False),  # only AMD's index has it (not in test-infra's torch_rocm list)
        ("rocm-profiler", False),
        ("rocm-bootstrap", False),
        ("rocm-sdk-libraries-gfx94x-dcgpu", False),  # AMD's per-family indexes of ROCm 7.9-7.13, not PyTorch's
        ("amd-torch-device-gfx942", False),  # AMD's whl-next torch device packages
    ],
)
def test_rocm_routing(name: str, family: bool) -> None:
    assert is_torch_family(name) is family


# The walk itself, on an index in memory.

PLATFORM = Platform((Tag("py3", "none", "any"),), {"sys_platform": "linux", "platform_system": "Linux"}, "3.12")


class _Pages:
    """A variant index in memory: project -> files, each file's Requires-Dist by file name."""

    index_url = "memory://pytorch/rocm7.14"

    def __init__(self, files: dict[str, Sequence[tuple[str, Sequence[str]]]]) -> None:
        self.links = {
            project: [FileLink(fn, f"{self.index_url}/{project}/{fn}", {"sha256": "0" * 64}) for fn, _ in listed]
            for project, listed in files.items()
        }
        self.requires = {fn: needs for listed in files.values() for fn, needs in listed}

    def files(self, project: str) -> Sequence[FileLink]:
        return self.links.get(project, [])

    def metadata(self, link: FileLink) -> WheelMetadata:
        name, version = link.filename.split("-")[:2]
        needs = tuple(map(Requirement, self.requires[link.filename]))
        return WheelMetadata(name.replace("_", "-"), Version(version), needs, link)


def _wheel(name: str, version: str, *needs: str) -> tuple[str, Sequence[str]]:
    return f"{name.replace('-', '_')}-{version}-py3-none-any.whl", needs


def test_a_later_requirement_with_other_extras_brings_their_packages_too() -> None:
    pages = _Pages(
        {
            "torch": [_wheel("torch", "2.15.0+rocm7.14", "rocm[libraries]==7.14.*", "torchvision")],
            "torchvision": [_wheel("torchvision", "0.30.0+rocm7.14", "rocm[device-gfx942]==7.14.*")],
            "rocm": [_wheel("rocm", ROCM, *ROCM_NEEDS)],
            **{name: [_wheel(name, ROCM)] for name in SDK},
        }
    )
    files = family_files([Requirement("torch==2.15.0+rocm7.14")], pages, pages, PLATFORM)
    assert {f.name: f.needed_by for f in files} == {
        "torch": None,
        "rocm": "torch 2.15.0+rocm7.14",
        "torchvision": "torch 2.15.0+rocm7.14",
        "rocm-sdk-core": f"rocm {ROCM}",
        "rocm-sdk-libraries": f"rocm {ROCM}",
        "rocm-sdk-device-gfx942": f"rocm {ROCM}",  # torchvision's extra, on the rocm chosen for torch
    }  # not gfx1100 (no device-all asked for), not devel


def test_a_variant_index_with_only_the_rocm_sdist_fails_closed() -> None:
    """The real ``rocm`` is served as ``rocm-7.14.0.tar.gz`` only: wheelfit, which installs wheels only, stops
    and names it; it never lets the backend take a ``rocm`` from the default index instead."""
    pages = _Pages({"torch": [_wheel("torch", "2.15.0+rocm7.14", TORCH_NEEDS)], "rocm": [(f"rocm-{ROCM}.tar.gz", ())]})
    with pytest.raises(WheelNotFoundError) as failed:
        family_files([Requirement("torch==2.15.0+rocm7.14")], pages, pages, PLATFORM)
    assert str(failed.value).startswith(f"{TORCH_NEEDS} (needed by torch 2.15.0+rocm7.14): ")
    assert "no wheel" in str(failed.value) and pages.index_url in str(failed.value)
