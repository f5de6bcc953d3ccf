# ruff: noqa: F811 - the fixtures are imported, then named as parameters
"""``wheelfit configure uv`` edits a real project's pyproject.toml, and real uv 0.13.9 locks and syncs from it."""

from __future__ import annotations

from pathlib import Path

import tomlkit

from ..conftest import MACHINES
from ..install.conftest import Index, caches, error_line, import_torch, index, installed, run_wheelfit  # noqa: F401
from .uv_helpers import ADA, PASCAL, PYPROJECT, configure, project, uv, uv_env


def test_one_target_locks_and_syncs_the_planned_build_never_the_squatted_one(
    index: Index, caches: dict[str, str], tmp_path: Path
) -> None:
    env = uv_env(index, caches)
    root = project(tmp_path)
    done = run_wheelfit(configure(root, index, "--target", PASCAL), env)
    assert done.returncode == 0, done.stderr
    data = tomlkit.parse((root / "pyproject.toml").read_text()).unwrap()
    uv_table = data["tool"]["uv"]
    assert uv_table["index"] == [{"name": "pytorch-cu126", "url": f"{index.pytorch}/cu126", "explicit": True}]
    # torch from dependencies, torchvision from the dev group, and torch's Triton (a transitive dependency).
    assert uv_table["sources"] == {n: {"index": "pytorch-cu126"} for n in ("torch", "torchvision", "triton")}
    assert uv_table["constraint-dependencies"] == ["torch==2.14.1", "torchvision==0.29.1"]
    # uv applies sources to direct dependencies only: without triton in the project uv looks for torch's
    # triton==3.5.1 on the default index (which has only the squatted 99.0) and the lock fails.
    assert "triton; sys_platform == 'linux'" in data["project"]["dependencies"]
    assert data["tool"]["wheelfit"]["builds"][0]["variant"] == "cu126"

    locked = uv(["lock"], root, env)
    assert locked.returncode == 0, locked.stderr
    lock = tomlkit.parse((root / "uv.lock").read_text()).unwrap()
    sources = {p["name"]: (p["version"], p["source"].get("registry")) for p in lock["package"]}
    assert sources["torch"] == ("2.14.1+cu126", f"{index.pytorch}/cu126")
    assert sources["triton"] == ("3.5.1", f"{index.pytorch}/cu126")
    assert sources["smallnum"] == ("1.0", index.default)
    synced = uv(["sync", "--locked"], root, env)
    assert synced.returncode == 0, synced.stderr
    python = root / ".venv" / "bin" / "python"
    assert import_torch(python, env) == ["2.14.1+cu126", "12.6", "None"]
    have = installed(python, env)
    assert (have["torchvision"], have["triton"]) == ("0.29.1+cu126", "3.5.1")  # never the default index's 99.0


def test_comments_and_layout_are_kept_and_a_second_run_changes_nothing(
    index: Index, caches: dict[str, str], tmp_path: Path
) -> None:
    env = uv_env(index, caches)
    root = project(tmp_path)
    path = root / "pyproject.toml"
    assert run_wheelfit(configure(root, index, "--target", PASCAL, "--target", ADA), env).returncode == 0
    first = path.read_text()
    # Everything wheelfit does not own is there byte for byte: the comments, the untouched table, the layout.
    assert first.startswith("# demo: a model server\n[project]\n")
    assert 'dependencies = [\n    "smallnum>=1.0",  # an ordinary dependency\n]\n' in first
    assert "\n[tool.ruff]\nline-length = 100   # wide\n" in first
    again = run_wheelfit(configure(root, index, "--target", PASCAL, "--target", ADA), env)
    assert again.returncode == 0, again.stderr
    assert "unchanged" in again.stdout
    assert path.read_text() == first


def test_a_crlf_project_stays_crlf_and_keeps_its_mode(index: Index, caches: dict[str, str], tmp_path: Path) -> None:
    """The layout is kept byte for byte outside what is changed: a CRLF file comes back CRLF throughout (it came
    back LF once), and the file's permission bits are the user's."""
    env = uv_env(index, caches)
    root = project(tmp_path, PYPROJECT.replace("\n", "\r\n"))
    path = root / "pyproject.toml"
    path.chmod(0o640)
    done = run_wheelfit(configure(root, index, "--target", PASCAL), env)
    assert done.returncode == 0, done.stderr
    data = path.read_bytes()
    assert data.count(b"\r\n") == data.count(b"\n") > 20
    assert data.startswith(b"# demo: a model server\r\n[project]\r\n")
    assert path.stat().st_mode & 0o777 == 0o640
    assert "unchanged" in run_wheelfit(configure(root, index, "--target", PASCAL), env).stdout


def test_a_project_file_that_is_not_utf8_is_one_line_and_exit_2(
    index: Index, caches: dict[str, str], tmp_path: Path
) -> None:
    root = project(tmp_path)
    path = root / "pyproject.toml"
    path.write_bytes(path.read_bytes().replace(b"# wide", b"# wide \xff"))
    before = path.read_bytes()
    done = run_wheelfit(configure(root, index, "--target", PASCAL), uv_env(index, caches))
    assert done.returncode == 2
    at = before.index(b"\xff")
    assert error_line(done.stderr) == (
        f"wheelfit: error: {path} is not UTF-8 (byte {at}); TOML is UTF-8: fix the file and run again"
    )
    assert path.read_bytes() == before


def test_dry_run_writes_nothing_and_check_fails_until_configured(
    index: Index, caches: dict[str, str], tmp_path: Path
) -> None:
    env = uv_env(index, caches)
    root = project(tmp_path)
    path = root / "pyproject.toml"
    dry = run_wheelfit(configure(root, index, "--target", PASCAL, "--dry-run"), env)
    assert dry.returncode == 0, dry.stderr
    assert path.read_text() == PYPROJECT
    assert dry.stdout.startswith("--- a/pyproject.toml\n+++ b/pyproject.toml\n")
    assert '+torch = {index = "pytorch-cu126"}\n' in dry.stdout

    check = run_wheelfit(configure(root, index, "--target", PASCAL, "--check"), env)
    assert check.returncode == 1
    assert check.stdout == dry.stdout  # what differs
    assert check.stderr.startswith("wheelfit: error: ") and "does not match the plan" in check.stderr
    assert path.read_text() == PYPROJECT

    assert run_wheelfit(configure(root, index, "--target", PASCAL), env).returncode == 0
    ok = run_wheelfit(configure(root, index, "--target", PASCAL, "--check"), env)
    assert ok.returncode == 0, ok.stdout + ok.stderr
    # Another machine's plan (an RTX 4090: cu130) does not match the file written for a GTX 1080.
    other = run_wheelfit(configure(root, index, "--target", ADA, "--check"), env)
    assert other.returncode == 1
    assert '\n-torch = {index = "pytorch-cu126"}\n' in other.stdout
    assert '\n+torch = {index = "pytorch-cu130"}\n' in other.stdout


def test_a_project_without_torch_gets_it_and_rocm_gets_its_own_triton(
    index: Index, caches: dict[str, str], tmp_path: Path
) -> None:
    env = uv_env(index, caches)
    text = '[project]\nname = "bare"\nversion = "0"\nrequires-python = ">=3.10"\ndependencies = []\n'
    root = project(tmp_path, text)
    done = run_wheelfit(configure(root, index, "--target", "rocm=gfx942"), env)
    assert done.returncode == 0, done.stderr
    data = tomlkit.parse((root / "pyproject.toml").read_text()).unwrap()
    assert data["project"]["dependencies"] == ["torch", "pytorch-triton-rocm; sys_platform == 'linux'"]
    assert set(data["tool"]["uv"]["sources"]) == {"torch", "pytorch-triton-rocm"}
    locked = uv(["lock"], root, env)
    assert locked.returncode == 0, locked.stderr
    versions = {p["name"]: p["version"] for p in tomlkit.parse((root / "uv.lock").read_text()).unwrap()["package"]}
    assert (versions["torch"], versions["pytorch-triton-rocm"]) == ("2.15.0+rocm7.14", "3.6.0")


def test_two_targets_lock_both_extras_and_each_machine_syncs_its_own_build(
    index: Index, caches: dict[str, str], tmp_path: Path
) -> None:
    env = uv_env(index, caches)
    root = project(tmp_path)
    done = run_wheelfit(configure(root, index, "--target", PASCAL, "--target", ADA), env)
    assert done.returncode == 0, done.stderr
    assert "wheelfit sync" in done.stdout
    data = tomlkit.parse((root / "pyproject.toml").read_text()).unwrap()
    extras = data["project"]["optional-dependencies"]
    assert set(extras) == {"cu126", "cu130"}
    # uv's guide's pattern: the two extras conflict, each source names its extra; no torch outside the extras.
    assert data["tool"]["uv"]["conflicts"] == [[{"extra": "cu126"}, {"extra": "cu130"}]]
    assert data["tool"]["uv"]["sources"]["torch"] == [
        {"index": "pytorch-cu126", "extra": "cu126"},
        {"index": "pytorch-cu130", "extra": "cu130"},
    ]
    assert not [r for r in data["project"]["dependencies"] if r.startswith("torch")]

    locked = uv(["lock"], root, env)
    assert locked.returncode == 0, locked.stderr
    lock = tomlkit.parse((root / "uv.lock").read_text()).unwrap()
    torches = {p["version"]: p["source"]["registry"] for p in lock["package"] if p["name"] == "torch"}
    assert torches == {"2.14.1+cu126": f"{index.pytorch}/cu126", "2.15.0+cu130": f"{index.pytorch}/cu130"}

    # A plain `uv sync` (the mistake of astral-sh/uv#10360) installs no torch at all, never the wrong build.
    plain = uv(["sync", "--locked"], root, env)
    assert plain.returncode == 0, plain.stderr
    python = root / ".venv" / "bin" / "python"
    assert "torch" not in installed(python, env)

    # The GTX 1080 machine, detected from its sysroot, gets the cu126 build; the RTX 4090 by its recorded target.
    gtx = run_wheelfit(["sync", "--project", str(root), "--sysroot", str(MACHINES / "nvidia-gtx1080" / "root"),
                        "--locked"], env)  # fmt: skip
    assert gtx.returncode == 0, gtx.stderr
    assert "cu126: torch 2.14.1 (cu126, planned for this machine)" in gtx.stderr
    assert import_torch(python, env) == ["2.14.1+cu126", "12.6", "None"]
    ada = run_wheelfit(["sync", "--project", str(root), "--target", ADA, "--locked"], env)
    assert ada.returncode == 0, ada.stderr
    assert "recorded target" in ada.stderr
    assert import_torch(python, env)[0] == "2.15.0+cu130"


def test_sync_refuses_a_machine_the_project_has_no_build_for(
    index: Index, caches: dict[str, str], tmp_path: Path
) -> None:
    env = uv_env(index, caches)
    root = project(tmp_path)
    assert run_wheelfit(configure(root, index, "--target", PASCAL, "--target", ADA), env).returncode == 0
    rocm = run_wheelfit(["sync", "--project", str(root), "--target", "rocm=gfx942"], env)
    assert rocm.returncode == 1
    line = error_line(rocm.stderr)
    assert "has no build for --target rocm=gfx942" in line and "cu126, cu130" in line
    assert not (root / ".venv").exists()  # uv was never run
    (tmp_path / "other").mkdir()
    bare = project(tmp_path / "other")
    none = run_wheelfit(["sync", "--project", str(bare)], env)
    assert none.returncode == 1
    assert "no builds in [tool.wheelfit]" in error_line(none.stderr)


def test_a_tampered_project_is_refused_by_uv_and_by_check(index: Index, caches: dict[str, str], tmp_path: Path) -> None:
    """Sources moved to the default index (where torch 99.0 is squatted): uv sync --locked refuses, never the squatter,
    and ``configure uv --check`` names the change; a changed torch hash in uv.lock: uv refuses the file."""
    env = uv_env(index, caches)
    root = project(tmp_path)
    path = root / "pyproject.toml"
    assert run_wheelfit(configure(root, index, "--target", PASCAL), env).returncode == 0
    assert uv(["lock"], root, env).returncode == 0
    configured, lock = path.read_text(), (root / "uv.lock").read_text()

    path.write_text(configured.replace('torch = {index = "pytorch-cu126"}\n', ""))
    stale = uv(["sync", "--locked"], root, env)
    # uv re-resolves to check the lock: with torch only on the default index, 2.14.1 is unsatisfiable there.
    assert stale.returncode != 0, stale.stderr
    assert "needs to be updated" in stale.stderr or "torch==2.14.1" in stale.stderr, stale.stderr
    check = run_wheelfit(configure(root, index, "--target", PASCAL, "--check"), env)
    assert check.returncode == 1 and '\n+torch = {index = "pytorch-cu126"}\n' in check.stdout
    assert not (root / ".venv" / "lib").exists() or "torch" not in installed(root / ".venv" / "bin" / "python", env)

    path.write_text(configured)
    data = tomlkit.parse(lock).unwrap()
    (torch,) = [p for p in data["package"] if p["name"] == "torch"]
    sha = torch["wheels"][0]["hash"].removeprefix("sha256:")
    (root / "uv.lock").write_text(lock.replace(sha, ("0" if sha[0] != "0" else "1") + sha[1:]))
    refused = uv(["sync", "--locked"], root, env)
    assert refused.returncode != 0 and "Hash mismatch" in refused.stderr, refused.stderr


def test_a_valid_toml_file_of_the_wrong_shape_is_one_line_naming_the_key(
    index: Index, caches: dict[str, str], tmp_path: Path
) -> None:
    """Valid TOML that wheelfit cannot read as a project: ``AttributeError`` (exit 70) once; now exit 2 naming the
    file, the key and the shape, the file untouched."""
    head = '[project]\nname = "d"\n'
    cases = [
        (f'{head}dependencies = "torch"\n', "project.dependencies must be an array of strings, not a string"),
        (f'{head}[tool]\nuv = "x"\n', "tool.uv must be a table, not a string"),
        (f"{head}[tool.wheelfit]\nbuilds = 7\n", "tool.wheelfit.builds must be an array of tables, not a number"),
        ("project = [1, 2]\n", "project must be a table, not an array of other values"),
    ]
    for n, (text, message) in enumerate(cases):
        root = tmp_path / str(n)
        root.mkdir()
        path = root / "pyproject.toml"
        path.write_text(text)
        done = run_wheelfit(configure(root, index, "--target", PASCAL), uv_env(index, caches))
        assert done.returncode == 2, done.stderr
        assert error_line(done.stderr) == f"wheelfit: error: {path}: {message}; fix it and run again"
        assert path.read_text() == text


def test_the_projects_own_sources_and_indexes_are_kept_unless_replace_sources(
    index: Index, caches: dict[str, str], tmp_path: Path
) -> None:
    """A team's vetted mirror for torch is theirs: refused in one line naming it (exit 2, nothing written) instead
    of being rewritten to the public index; ``--replace-sources`` replaces it."""
    env = uv_env(index, caches)
    own_source = '\n[tool.uv.sources]\ntorch = { index = "corp-mirror" }  # our vetted mirror\n'
    own_index = '\n[[tool.uv.index]]\nname = "pytorch-cu126"\nurl = "https://mirror.corp.example/whl/cu126"\n'
    cases = [(own_source, "tool.uv.sources.torch"), (own_index, "tool.uv.index pytorch-cu126")]
    for n, (extra, named) in enumerate(cases):
        (tmp_path / str(n)).mkdir()
        root = project(tmp_path / str(n), PYPROJECT + extra)
        path = root / "pyproject.toml"
        before = path.read_text()
        for mode in ([], ["--dry-run"]):
            done = run_wheelfit([*configure(root, index, "--target", PASCAL), *mode], env)
            assert done.returncode == 2, done.stderr
            line = error_line(done.stderr)
            assert line.startswith(f"wheelfit: error: {named} is the project's own (") and "--replace-sources" in line
            assert path.read_text() == before
        replaced = run_wheelfit([*configure(root, index, "--target", PASCAL), "--replace-sources"], env)
        assert replaced.returncode == 0, replaced.stderr
        data = tomlkit.parse(path.read_text()).unwrap()
        assert data["tool"]["uv"]["sources"]["torch"] == {"index": "pytorch-cu126"}
        planned = {"name": "pytorch-cu126", "url": f"{index.pytorch}/cu126", "explicit": True}
        assert planned in data["tool"]["uv"]["index"]
        again = run_wheelfit(configure(root, index, "--target", PASCAL), env)  # now wheelfit's own: no refusal
        assert again.returncode == 0 and "unchanged" in again.stdout, again.stderr


def test_the_triton_is_the_one_the_planned_torch_requires(caches: dict[str, str], tmp_path: Path) -> None:
    """A torch that requires ``pytorch-triton`` (as nightlies do) gets ``pytorch-triton`` routed to its index, read
    from its metadata, not the ``triton`` the variant usually has: ``uv lock`` of the project then resolves."""
    from functools import partial

    from tests.install.loopback import serve
    from tests.support.wheels import make_torch_like, make_wheel

    root = tmp_path / "index"
    cu126 = Index(root, "")
    requires = ["smallnum>=1.0", 'pytorch-triton==3.5.1; platform_system == "Linux"']
    cu126.put("pytorch/cu126", partial(make_torch_like, version="2.14.1", variant="cu126", requires=requires))
    cu126.put("pytorch/cu126", partial(make_wheel, name="pytorch-triton", version="3.5.1"))
    cu126.put("default/simple", partial(make_wheel, name="smallnum", version="1.0"))
    with serve(root) as url:
        served = Index(root, url)
        env = uv_env(served, caches)
        demo = project(tmp_path, '[project]\nname = "demo"\nversion = "0.1.0"\ndependencies = ["torch"]\n')
        done = run_wheelfit(configure(demo, served, "--target", PASCAL), env)
        assert done.returncode == 0, done.stderr
        data = tomlkit.parse((demo / "pyproject.toml").read_text()).unwrap()
        assert set(data["tool"]["uv"]["sources"]) == {"torch", "pytorch-triton"}
        assert "pytorch-triton; sys_platform == 'linux'" in data["project"]["dependencies"]
        locked = uv(["lock"], demo, env)
        assert locked.returncode == 0, locked.stderr
