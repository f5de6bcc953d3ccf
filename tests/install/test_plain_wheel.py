"""The plain copy of a variant wheel: members copied raw, METADATA and RECORD rewritten, cached per variant."""

from __future__ import annotations

import base64
import csv
import hashlib
import io
import os
import zipfile
from email.parser import BytesHeaderParser
from pathlib import Path

import pytest

from tests.support.wheels import make_wheel
from wheelfit.install.errors import UnsafeWheelError
from wheelfit.install.plain_wheel import plain_wheel
from wheelfit.variants.markers import VariantEnvironment

LABELLED = "demo-1.0-py3-none-any-cuda12.8.whl"
REQUIRES = [
    "smallnum",
    "rt-cu12==1.0; platform_system == 'Linux' and variant_label == 'cuda12.8'",
    "rt-cu13==1.0; variant_label == 'cuda13.0'",
    "kernels; 'nvidia :: sm_arch :: 86_real' in variant_properties",
]
CUDA12_8 = VariantEnvironment.from_properties("cuda12.8", ["nvidia :: sm_arch :: 86_real"])
CUDA12_8_SM90 = VariantEnvironment.from_properties("cuda12.8", ["nvidia :: sm_arch :: 90_real"])
FILES = {f"demo/mod{i}.py": f"x = {i}\n" * (i + 1) for i in range(40)} | {"demo/blob.bin": os.urandom(300_000)}


def _variant_wheel(directory: Path, requires: list[str] = REQUIRES) -> Path:
    built = make_wheel(directory / "build", "demo", "1.0", requires=requires, files=FILES)
    return built.replace(directory / built.name.replace(".whl", "-cuda12.8.whl"))


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _requires(wheel: Path) -> list[str]:
    with zipfile.ZipFile(wheel) as zf:
        return BytesHeaderParser().parsebytes(zf.read("demo-1.0.dist-info/METADATA")).get_all("Requires-Dist") or []


def test_plain_copy_keeps_every_other_member_and_a_true_record(tmp_path: Path) -> None:
    src = _variant_wheel(tmp_path)
    out, _ = plain_wheel(src, LABELLED, _sha(src), CUDA12_8)
    assert out.name == "demo-1.0-py3-none-any.whl" and out.parent.parent == src.parent
    assert _requires(out) == ["smallnum", "rt-cu12==1.0; platform_system == 'Linux'", "kernels"]
    with zipfile.ZipFile(src) as before, zipfile.ZipFile(out) as after:
        assert after.testzip() is None
        assert sorted(after.namelist()) == sorted(before.namelist())
        for info in before.infolist():
            if info.filename.endswith(("/METADATA", "/RECORD")):
                continue
            moved = after.getinfo(info.filename)
            assert (moved.CRC, moved.compress_size, moved.compress_type) == (
                info.CRC,
                info.compress_size,
                info.compress_type,
            )
            assert after.read(info.filename) == before.read(info.filename)
        rows = list(csv.reader(io.StringIO(after.read("demo-1.0.dist-info/RECORD").decode())))
        for name, digest, size in rows:
            if name.endswith("/RECORD"):
                assert (digest, size) == ("", "")
                continue
            data = after.read(name)
            want = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
            assert (digest, size) == (f"sha256={want}", str(len(data))), name
        assert len(rows) == len(after.namelist())


def test_warm_calls_reuse_the_copy_and_a_changed_source_is_read_again(tmp_path: Path) -> None:
    src = _variant_wheel(tmp_path)
    out, _ = plain_wheel(src, LABELLED, _sha(src), CUDA12_8)
    stamp = out.stat().st_mtime_ns
    assert plain_wheel(src, LABELLED, _sha(src), CUDA12_8)[0] == out
    assert out.stat().st_mtime_ns == stamp
    other, _ = plain_wheel(src, LABELLED, _sha(src), CUDA12_8_SM90)  # another machine: other narrowed properties
    assert other != out and _requires(other) == ["smallnum", "rt-cu12==1.0; platform_system == 'Linux'"]

    new = _variant_wheel(tmp_path / "v2", [*REQUIRES, "added"])
    new.replace(src)  # the cache entry was replaced (another download)
    again, _ = plain_wheel(src, LABELLED, _sha(src), CUDA12_8)
    assert again != out and _requires(again)[-1] == "added"


def test_a_wheel_without_variant_markers_is_linked_not_copied(tmp_path: Path) -> None:
    src = _variant_wheel(tmp_path, ["smallnum"])
    out, _ = plain_wheel(src, LABELLED, _sha(src), CUDA12_8)
    assert out.name == "demo-1.0-py3-none-any.whl"
    assert out.stat().st_ino == src.stat().st_ino


def test_members_written_with_data_descriptors_are_copied_whole(tmp_path: Path) -> None:
    """Zips written to a pipe put each member's sizes after its data (flag bit 3)."""
    plain = make_wheel(tmp_path / "build", "demo", "1.0", requires=REQUIRES, files=FILES)

    class Pipe(io.RawIOBase):
        def __init__(self) -> None:
            self.data = bytearray()

        def writable(self) -> bool:
            return True

        def write(self, b: bytes) -> int:  # type: ignore[override]
            self.data += b
            return len(b)

    pipe = Pipe()
    with zipfile.ZipFile(plain) as zin, zipfile.ZipFile(pipe, "w", zipfile.ZIP_DEFLATED) as zout:
        for info in zin.infolist():
            zout.writestr(info.filename, zin.read(info.filename))
    src = tmp_path / LABELLED
    src.write_bytes(bytes(pipe.data))
    with zipfile.ZipFile(src) as zf:
        assert all(i.flag_bits & 0x08 for i in zf.infolist())
    out, _ = plain_wheel(src, LABELLED, _sha(src), CUDA12_8)
    with zipfile.ZipFile(out) as zf:
        assert zf.testzip() is None and zf.read("demo/blob.bin") == FILES["demo/blob.bin"]
    assert _requires(out)[-1] == "kernels"


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"not a zip at all", "is not a readable zip archive"),
        (None, "Requires-Dist \"x; variant_label ~= 'a'\""),
    ],
)
def test_bad_wheels_are_one_clear_error_and_leave_nothing(tmp_path: Path, content: bytes | None, message: str) -> None:
    src = _variant_wheel(tmp_path, ["x; variant_label ~= 'a'"])
    if content is not None:
        src.write_bytes(content)
    before = sorted(p.name for p in tmp_path.rglob("*"))
    with pytest.raises(UnsafeWheelError, match="^" + LABELLED.replace(".", r"\.")) as caught:
        plain_wheel(src, LABELLED, _sha(src), CUDA12_8)
    assert message in str(caught.value) and "\n" not in str(caught.value)
    assert sorted(p.name for p in tmp_path.rglob("*")) == before
