"""What a pip or uv user types works as they expect: the environment found as uv finds it, requirements that
name no torch-family package, extras, wheels given as files, upgrade semantics, and pip's switches. Real uv and
pip installs from the loopback index of ``conftest.py``."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Iterator
from functools import partial
from pathlib import Path

import pytest

from tests.support.inprocess import wheelfit_in_process
from tests.support.wheels import make_torch_like, make_wheel

from .conftest import Index, error_line, installed, make_venv, run_wheelfit
from .loopback import serve

RTX_3090 = "cuda=8.6,driver=580.95.05"
GTX_1080 = "cuda=6.1,driver=580.95.05"


def _run(args: list[str], env: dict[str, str], cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    if cwd is None:
        return run_wheelfit(args, env)
    return wheelfit_in_process(args, env, cwd=cwd)


def _words(text: str) -> str:
    """Output as one line: the renderer wraps at the terminal's width."""
    return " ".join(text.split())


def _indexes(index: Index) -> list[str]:
    return ["--pytorch-index", index.pytorch, "--index-url", index.default]


# -- the environment ---------------------------------------------------------------------------------------------


def test_no_virtual_environment_is_refused_as_uv_refuses(index: Index, env: dict[str, str], tmp_path: Path) -> None:
    """Without --python, $VIRTUAL_ENV or a .venv, torch must not land in wheelfit's own environment.

    As uv, a ``.venv`` in any directory above is the environment: on a machine with one above the test's
    directory (``/.venv``), that one is found instead, which is checked with a dry run."""
    env = {k: v for k, v in env.items() if k not in ("VIRTUAL_ENV", "CONDA_PREFIX")}
    done = _run(["install", "torch", "--target", RTX_3090, *_indexes(index), "--dry-run", "--json"], env, cwd=tmp_path)
    above = next((d / ".venv" for d in tmp_path.parents if (d / ".venv" / "bin" / "python").is_file()), None)
    if above is not None:
        assert done.returncode == 0, done.stderr
        assert Path(json.loads(done.stdout)["python"]).parent.parent == above
        return
    assert done.returncode == 2, done.stderr
    line = error_line(done.stderr)
    assert "no virtual environment found" in line and "--system" in line and "--python" in line


def test_a_dot_venv_here_or_above_and_a_venv_directory_are_found(
    index: Index, env: dict[str, str], tmp_path: Path
) -> None:
    env = {k: v for k, v in env.items() if k not in ("VIRTUAL_ENV", "CONDA_PREFIX")}
    python = make_venv(tmp_path / "project" / ".venv")
    inner = tmp_path / "project" / "src"
    inner.mkdir()
    done = _run(["install", "smallnum", "--target", RTX_3090, *_indexes(index), "--json"], env, cwd=inner)
    assert done.returncode == 0, done.stderr
    assert Path(json.loads(done.stdout)["python"]).parent.parent == tmp_path / "project" / ".venv"
    assert installed(python, env)["smallnum"] == "1.0"
    other = make_venv(tmp_path / "other")
    done = _run(["install", "smallnum", "--python", str(tmp_path / "other"), *_indexes(index)], env, cwd=inner)
    assert done.returncode == 0, done.stderr
    assert installed(other, env)["smallnum"] == "1.0"
    missing = _run(["install", "smallnum", "--python", str(tmp_path / "nowhere"), *_indexes(index)], env)
    assert missing.returncode == 2 and "no such interpreter or directory" in error_line(missing.stderr)


# -- what is asked for -------------------------------------------------------------------------------------------


def test_a_request_with_no_torch_family_name_installs_only_that(
    index: Index, env: dict[str, str], tmp_path: Path
) -> None:
    python = make_venv(tmp_path / "venv")
    done = _run(["install", "smallnum", "--python", str(python), "--target", RTX_3090, *_indexes(index)], env)
    assert done.returncode == 0, done.stderr
    have = installed(python, env)
    assert have.get("smallnum") == "1.0" and "torch" not in have
    assert "No torch-family package was asked for" in _words(done.stdout)
    # The guard holds all the same: a dependency on triton cannot reach the default index's squatted 99.0.
    guarded = _run(["install", "needstriton", "--python", str(python), "--target", RTX_3090, *_indexes(index)], env)
    assert guarded.returncode == 1
    assert "triton, a torch-family package" in error_line(guarded.stderr)
    assert "needstriton" not in installed(python, env)


@pytest.fixture(scope="module")
def extras_index(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Index]:
    """A torch with an extra (as torch's own ``opt-einsum``) and a package that is only that extra's dependency."""
    root = tmp_path_factory.mktemp("extras-index")
    idx = Index(root, "")
    idx.put(
        "pytorch/cu130",
        partial(
            make_wheel, name="torch", version="2.15.0+cu130", extras=["opt-einsum"],
            requires=["smallnum>=1.0", 'opteinsum>=3.3; extra == "opt-einsum"'],
            files={"torch/__init__.py": '__version__ = "2.15.0+cu130"\n'},
        ),
    )  # fmt: skip
    idx.put("default/simple", partial(make_wheel, name="smallnum", version="1.0"))
    idx.put("default/simple", partial(make_wheel, name="opteinsum", version="3.4.0"))
    with serve(root) as url:
        yield Index(root, url)


@pytest.mark.parametrize("installer", ["uv", "pip"])
def test_extras_of_torch_are_kept_and_their_dependencies_installed(
    extras_index: Index, env: dict[str, str], tmp_path: Path, installer: str
) -> None:
    python = make_venv(tmp_path / "venv")
    args = ["install", "torch[opt-einsum]==2.15.0", "--python", str(python), "--target", RTX_3090, "--no-verify"]
    done = _run([*args, "--installer", installer, *_indexes(extras_index)], env)
    assert done.returncode == 0, done.stderr
    have = installed(python, env)
    assert have["torch"] == "2.15.0+cu130" and have["opteinsum"] == "3.4.0"


def test_a_wheel_given_as_a_path_or_url_is_installed_as_given_and_judged(
    index: Index, env: dict[str, str], tmp_path: Path
) -> None:
    """The file wins over the plan; its torch-family dependencies still come from its build's index only."""
    wheel = next((index.root / "pytorch" / "cu126" / "torch").glob("torch-2.14.1+cu126-*.whl"))
    local = tmp_path / wheel.name
    local.write_bytes(wheel.read_bytes())
    python = make_venv(tmp_path / "venv")
    done = _run(
        ["install", f"./{local.name}", "torchvision", "--python", str(python), "--target", RTX_3090, *_indexes(index),
         "--no-verify"],
        env, cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    have = installed(python, env)
    assert (have["torch"], have["torchvision"], have["triton"]) == ("2.14.1+cu126", "0.29.1+cu126", "3.5.1")
    # A URL to a build without kernels for the GPU is still installed, as asked, with the reason said.
    url = f"{index.pytorch}/cu130/torch/torch-2.15.0+cu130-py3-none-any.whl"
    other = make_venv(tmp_path / "venv2")
    done = _run(["install", f"torch @ {url}", "--python", str(other), "--target", GTX_1080, *_indexes(index),
                 "--no-verify"], env)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert installed(other, env)["torch"] == "2.15.0+cu130"
    assert "sm_61" in done.stdout and "installed as given" in _words(done.stdout)


def test_a_torch_file_that_is_missing_or_unfetchable_is_a_usage_error_naming_where_it_was_written(
    index: Index, env: dict[str, str], tmp_path: Path
) -> None:
    python = make_venv(tmp_path / "venv")
    reqs = tmp_path / "reqs.txt"
    reqs.write_text("# the build we tested\n./torch-2.14.1+cu126-py3-none-any.whl\n")
    common = ["--python", str(python), "--target", RTX_3090, *_indexes(index), "--no-verify"]
    done = _run(["install", "-r", str(reqs), *common], env)
    assert done.returncode == 2, done.stderr
    line = error_line(done.stderr)
    assert line.startswith(f"wheelfit: error: {reqs}:2: ") and line.endswith("no such file"), line
    done = _run(["install", "torch @ ftp://mirror.example/torch-2.14.1+cu126-py3-none-any.whl", *common], env)
    assert done.returncode == 2, done.stderr
    assert "give an https://, http:// or file: URL" in error_line(done.stderr)
    assert "torch" not in installed(python, env)


# -- upgrades and switches ---------------------------------------------------------------------------------------


def test_an_installed_torch_that_fits_is_kept_and_upgrade_replaces_it(
    index: Index, env: dict[str, str], tmp_path: Path
) -> None:
    python = make_venv(tmp_path / "venv")
    common = ["--python", str(python), "--target", RTX_3090, *_indexes(index), "--no-verify"]
    assert _run(["install", "torch==2.14.1", *common], env).returncode == 0
    assert installed(python, env)["torch"] == "2.14.1+cu130"
    more = _run(["install", "torchvision", *common], env)
    assert more.returncode == 0, more.stderr
    have = installed(python, env)
    assert (have["torch"], have["torchvision"]) == ("2.14.1+cu130", "0.29.1+cu130")
    assert "kept (-U upgrades it)" in _words(more.stdout)
    up = _run(["install", "-U", "torch", "torchvision", *common], env)
    assert up.returncode == 0, up.stderr
    have = installed(python, env)
    assert (have["torch"], have["torchvision"]) == ("2.15.0+cu130", "0.29.2+cu130")


def test_an_installed_torch_without_kernels_is_replaced_and_said_so(
    index: Index, env: dict[str, str], tmp_path: Path
) -> None:
    python = make_venv(tmp_path / "venv")
    common = ["--python", str(python), *_indexes(index), "--no-verify"]
    assert _run(["install", "torch", "--target", RTX_3090, *common], env).returncode == 0
    assert installed(python, env)["torch"] == "2.15.0+cu130"
    moved = _run(["install", "torch", "--target", GTX_1080, *common], env)  # the disk moved to a GTX 1080 box
    assert moved.returncode == 0, moved.stderr
    assert installed(python, env)["torch"] == "2.14.1+cu126"
    assert "the installed torch 2.15.0+cu130 is replaced" in _words(moved.stdout)


@pytest.mark.parametrize("installer", ["uv", "pip"])
def test_no_deps_reinstall_and_quiet(index: Index, env: dict[str, str], tmp_path: Path, installer: str) -> None:
    python = make_venv(tmp_path / "venv")
    common = ["--python", str(python), "--target", GTX_1080, *_indexes(index), "--installer", installer]
    done = _run(["install", "torch", "--no-deps", "--no-verify", *common], env)
    assert done.returncode == 0, done.stderr
    have = installed(python, env)
    assert have["torch"] == "2.14.1+cu126" and "smallnum" not in have  # torch's own dependency left out
    quiet = _run(["install", "torch", "--reinstall", "-q", "--no-verify", *common], env)
    assert quiet.returncode == 0, quiet.stderr
    assert quiet.stdout == ""
    again = json.loads(_run(["install", "torch", "--reinstall", "--json", "--no-verify", *common], env).stdout)
    assert any(item.startswith("torch") for item in again["installs"]), again  # reinstalled, not "nothing to do"


def test_extra_index_url_serves_only_what_is_not_torch_family(
    index: Index, env: dict[str, str], tmp_path: Path
) -> None:
    """The squatted torch 99.0 on an extra index never wins; an ordinary package there is found."""
    python = make_venv(tmp_path / "venv")
    extra = tmp_path / "extra"
    Index(extra, "").put("simple", partial(make_wheel, name="onlyextra", version="2.0"))
    Index(extra, "").put("simple", partial(make_torch_like, version="99.0", variant="cu130"))
    with serve(extra) as url:
        done = _run(
            ["install", "torch", "onlyextra", "--python", str(python), "--target", GTX_1080, *_indexes(index),
             "--extra-index-url", f"{url}/simple", "--no-verify"],
            env,
        )  # fmt: skip
    assert done.returncode == 0, done.stderr
    have = installed(python, env)
    assert (have["torch"], have["onlyextra"]) == ("2.14.1+cu126", "2.0")
    assert "--extra-index-url is used only for packages that are not torch-family" in _words(done.stdout)


def test_a_missing_build_is_a_failure_not_a_usage_error(index: Index, env: dict[str, str], tmp_path: Path) -> None:
    python = make_venv(tmp_path / "venv")
    done = _run(["install", "torch==9.9", "--python", str(python), "--target", RTX_3090, *_indexes(index)], env)
    assert done.returncode == 1, done.stderr
    typo = _run(["install", "torch", "--python", str(python), "--no-such-flag"], env)
    assert typo.returncode == 2


def test_the_environment_search_in_process(tmp_path: Path) -> None:
    """The rules of :func:`find_python` one by one, the directories above ``tmp_path`` left out (``ceiling``)."""
    from wheelfit.errors import UsageError
    from wheelfit.install.find_env import find_python

    with pytest.raises(UsageError, match="no virtual environment found"):
        find_python(None, {}, tmp_path, ceiling=tmp_path)
    python = make_venv(tmp_path / ".venv")
    deep = tmp_path / "a" / "b"
    deep.mkdir(parents=True)
    assert find_python(None, {}, deep, ceiling=tmp_path) == str(python)
    assert find_python(str(tmp_path / ".venv"), {}, Path("/")) == str(python)
    with pytest.raises(UsageError, match=r"\$VIRTUAL_ENV is .*no Python interpreter"):
        find_python(None, {"VIRTUAL_ENV": str(tmp_path / "gone")}, deep)
    other = make_venv(tmp_path / "conda")
    assert find_python(None, {"CONDA_PREFIX": str(tmp_path / "conda")}, deep) == str(other)
    on_path = {"PATH": str(python.parent)}
    assert find_python(None, on_path, deep, system=True, ceiling=deep) == str(python.parent / "python3")
    with pytest.raises(UsageError, match="no virtual environment found"):
        find_python(None, on_path, deep, ceiling=deep)  # the Python on PATH only with --system


@pytest.mark.parametrize("installer", ["uv", "pip"])
def test_requirement_and_constraint_files_as_pip_reads_them(
    index: Index, env: dict[str, str], tmp_path: Path, installer: str
) -> None:
    """Nested -r, comments, a continuation, markers, an --index-url line, and -c narrowing torch's plan."""
    python = make_venv(tmp_path / "venv")
    (tmp_path / "reqs").mkdir()
    (tmp_path / "reqs" / "base.txt").write_text(f"--index-url {index.default}\nsmallnum  # ordinary, default index\n")
    (tmp_path / "reqs" / "main.txt").write_text(
        "# what the project needs\n"
        "-r base.txt\n"
        'torch>=2.14 \\\n    ; python_version >= "3.8"\n'
        "torchvision\n"
        'needstriton ; python_version < "3.0"\n'
    )
    (tmp_path / "constraints.txt").write_text("torch<2.15\nsmallnum==1.0\n")
    done = _run(
        ["install", "-r", "reqs/main.txt", "-c", "constraints.txt", "--python", str(python), "--target", RTX_3090,
         "--pytorch-index", index.pytorch, "--installer", installer, "--no-verify", "--json"],
        env, cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    have = installed(python, env)
    # The constraint on torch narrows the plan (2.15.0 would be chosen without it); the marker-false line is out.
    assert (have["torch"], have["torchvision"], have["smallnum"]) == ("2.14.1+cu130", "0.29.1+cu130", "1.0")
    assert "needstriton" not in have
    assert json.loads(done.stdout)["default_index"] == index.default
    # A file that names no torch-family package installs just that (no torch is added for it).
    plain = make_venv(tmp_path / "plain")
    only = _run(["install", "-r", "reqs/base.txt", "--python", str(plain), "--installer", installer], env, cwd=tmp_path)
    assert only.returncode == 0, only.stderr
    assert "smallnum" in installed(plain, env) and "torch" not in installed(plain, env)
    # A constraint is never installed itself, and a bad line is one usage error naming file and line.
    (tmp_path / "bad.txt").write_text("torch\n--editable ./here\n")
    bad = _run(["install", "-r", "bad.txt", "--python", str(python), "--target", RTX_3090], env, cwd=tmp_path)
    assert bad.returncode == 2 and "bad.txt:2" in error_line(bad.stderr)


def test_verbose_shows_the_installer_and_h_is_help(index: Index, env: dict[str, str], tmp_path: Path) -> None:
    python = make_venv(tmp_path / "venv")
    done = _run(["install", "smallnum", "-v", "--python", str(python), *_indexes(index)], env)
    assert done.returncode == 0, done.stderr
    assert "Installed 1 package" in done.stdout  # uv's own summary line, shown with -v only
    plain = _run(["install", "smallnum", "--reinstall", "--python", str(python), *_indexes(index)], env)
    assert plain.returncode == 0 and "Installed 1 package" not in plain.stdout
    helped = _run(["install", "-h"], env)
    assert helped.returncode == 0 and "--requirement" in helped.stdout and "--torch-backend" in helped.stdout


def test_an_extra_index_url_that_is_a_pytorch_variant_index_chooses_that_build(
    index: Index, env: dict[str, str], tmp_path: Path
) -> None:
    """``pip install torch --extra-index-url https://download.pytorch.org/whl/cu126``, as older PyTorch docs say:
    cu126 is the user's choice (an sm_86 would get cu130), and the rest still comes from the default index."""
    python = make_venv(tmp_path / "venv")
    done = _run(
        ["install", "torch", "--python", str(python), "--target", RTX_3090, "--index-url", index.default,
         "--extra-index-url", f"{index.pytorch}/cu126", "--no-verify"],
        env,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    have = installed(python, env)
    assert (have["torch"], have["smallnum"]) == ("2.14.1+cu126", "1.0")
    assert "--extra-index-url ends in /cu126" in _words(done.stdout)


def test_timeout_reaches_the_installer_too(index: Index, env: dict[str, str], tmp_path: Path) -> None:
    """uv waits 30 s per try for a default index that never answers; with --timeout 1 it is told 1 s too. (uv's
    own retries, each of which would wait as long, are turned off: UV_HTTP_RETRIES=0.)"""
    from tests.support.hung import hung_server

    python = make_venv(tmp_path / "venv")
    with hung_server() as hung:
        started = time.monotonic()
        done = _run(["install", "smallnum", "--python", str(python), "--index-url", f"{hung.url}/simple",
                     "--timeout", "1"], {**env, "UV_HTTP_RETRIES": "0"})  # fmt: skip
        took = time.monotonic() - started
    assert done.returncode == 1, done.stderr
    assert hung.requests, "uv never asked the index"
    assert took < 15, took  # uv's own default would take 30 s for its one try
    assert "smallnum" not in installed(python, env)


def test_pypis_torch_that_runs_here_is_kept_as_it_is(index: Index, env: dict[str, str], tmp_path: Path) -> None:
    """PyPI's torch 2.14.1 (no label: the cu130 build, by the knowledge base) on an sm_86 runs: ``wheelfit install
    torchvision`` keeps it untouched, as pip would, and brings the torchvision built for it."""
    python = make_venv(tmp_path / "venv")
    pypi = make_torch_like(tmp_path / "pypi", "2.14.1", "cu130", local=False, requires=["smallnum>=1.0"])
    subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(python), "install", "--no-index", "--find-links",
         str(index.root / "default" / "simple" / "smallnum"), "-q", str(pypi)],
        env=env, check=True, capture_output=True,
    )  # fmt: skip
    before = (tmp_path / "venv" / "lib").rglob("torch/version.py")
    stamp = {p: p.stat().st_mtime_ns for p in before}
    done = _run(["install", "torchvision", "--python", str(python), "--target", RTX_3090, *_indexes(index),
                 "--no-verify"], env)  # fmt: skip
    assert done.returncode == 0, done.stderr
    have = installed(python, env)
    assert (have["torch"], have["torchvision"]) == ("2.14.1", "0.29.1+cu130")
    assert {p: p.stat().st_mtime_ns for p in stamp} == stamp and stamp  # torch's files untouched
    assert "torch 2.14.1 (PyPI: the cu130 build) is installed and has kernels for this machine: kept" in _words(
        done.stdout
    )


def test_a_yanked_file_taken_for_an_exact_pin_is_said(env: dict[str, str], tmp_path: Path) -> None:
    """PEP 592: an exact pin may take a yanked file, with a warning; the install keeps the warning (issue 15)."""
    import hashlib

    folder = tmp_path / "mirror" / "cpu" / "torch"
    wheel = make_torch_like(folder, "2.15.0", "cpu", requires=["smallnum>=1.0"])
    digest = hashlib.sha256(wheel.read_bytes()).hexdigest()
    (folder / "index.html").write_text(
        f'<html><body><a href="{wheel.name}#sha256={digest}" data-yanked="a broken build">{wheel.name}</a>'
        "</body></html>\n"
    )
    default = tmp_path / "default"
    make_wheel(default, "smallnum", "1.0")
    python = make_venv(tmp_path / "venv")
    done = _run(["install", "torch==2.15.0", "--python", str(python), "--target", "os=linux", "--pytorch-index",
                 str(tmp_path / "mirror"), "--index-url", str(default), "--no-verify", "--json"], env)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert installed(python, env)["torch"] == "2.15.0+cpu"
    notes = json.loads(done.stdout)["notes"]
    assert any("is yanked: a broken build" in n and "torch==2.15.0" in n for n in notes), notes
