"""The fix engine: safe vs unsafe applicability, overlaps, byte preservation; and the writes:
only over the bytes the fixes were computed on, keeping mode and hard links."""

import os
import stat

import pytest

from kernlint.fixes import (
    CHANGED,
    READ_ONLY,
    NotFixed,
    apply_fixes,
    read_snapshot,
    write_atomic,
    write_fix,
)
from kernlint.model import Diagnostic, Edit, Fix


def _d(start, end, content, applicability):
    return Diagnostic(
        "a.cu",
        1,
        start + 1,
        1,
        end + 1,
        "CU001",
        "n",
        "m",
        "error",
        Fix((Edit(start, end, content),), applicability),
        start,
        end,
    )


def test_unsafe_fixes_only_when_asked():
    data = b"ab\xffcd"
    safe, unsafe = _d(0, 1, "A", "safe"), _d(3, 4, "C", "unsafe")
    new, fixed, remaining = apply_fixes(data, [safe, unsafe], unsafe=False)
    assert new == b"Ab\xffcd" and fixed == [safe] and remaining == [unsafe]
    new, fixed, remaining = apply_fixes(data, [safe, unsafe], unsafe=True)
    assert new == b"Ab\xffCd" and remaining == []  # the invalid byte is kept as is


def test_overlapping_fixes_first_wins():
    data = b"abcdef"
    first, second = _d(1, 4, "X", "safe"), _d(2, 5, "Y", "safe")
    new, fixed, remaining = apply_fixes(data, [second, first], unsafe=False)
    assert new == b"aXef" and fixed == [first] and remaining == [second]


# -- writing: only over the bytes the fixes were computed on ------------------------------


def test_snapshot_follows_links_and_reads_all(tmp_path):
    target = tmp_path / "t.cu"
    target.write_bytes(b"x" * 200_000 + b"\r\n\xff")
    (tmp_path / "l.cu").symlink_to("t.cu")
    snap = read_snapshot(str(tmp_path / "l.cu"))
    assert snap.real == str(target) and snap.data == target.read_bytes()
    assert snap.st.st_ino == os.stat(target).st_ino


def test_snapshot_refuses_what_is_no_longer_the_file(tmp_path):
    f = tmp_path / "a.cu"
    f.write_bytes(b"int x;\n")
    with pytest.raises(NotFixed, match=CHANGED):
        read_snapshot(str(f), limit=3)  # grown past the bytes that were linted
    assert read_snapshot(str(f), limit=7).data == b"int x;\n"
    os.mkfifo(tmp_path / "p.cu")
    with pytest.raises(NotFixed):  # (opened without blocking: no writer needed)
        read_snapshot(str(tmp_path / "p.cu"))
    with pytest.raises(NotFixed):
        read_snapshot(str(tmp_path))
    with pytest.raises(FileNotFoundError):
        read_snapshot(str(tmp_path / "gone.cu"))


@pytest.mark.parametrize(
    "mode, read_only", [(0o444, True), (0o070, True), (0o400, True), (0o200, False), (0o644, False)]
)
def test_read_only_is_the_owner_write_bit(tmp_path, mode, read_only):
    f = tmp_path / "a.cu"
    f.write_bytes(b"a")
    os.chmod(f, mode)
    snap = read_snapshot(str(f)) if mode & 0o400 or os.geteuid() == 0 else None
    if snap is None:
        pytest.skip("unreadable to this user")
    assert snap.read_only is read_only
    if read_only:
        with pytest.raises(NotFixed, match=READ_ONLY):
            write_fix(snap, b"b")
        assert f.read_bytes() == b"a" and stat.S_IMODE(os.stat(f).st_mode) == mode


def test_write_fix_keeps_mode_and_writes_exactly(tmp_path):
    f = tmp_path / "a.cu"
    f.write_bytes(b"old\r\n")
    os.chmod(f, 0o751)
    snap = read_snapshot(str(f))
    write_fix(snap, b"new\r\n\xfe")
    assert f.read_bytes() == b"new\r\n\xfe"
    assert stat.S_IMODE(os.stat(f).st_mode) == 0o751
    assert [n for n in os.listdir(tmp_path) if n != "a.cu"] == []


def test_write_fix_refuses_a_file_changed_since_the_snapshot(tmp_path):
    f = tmp_path / "a.cu"
    f.write_bytes(b"old\n")
    snap = read_snapshot(str(f))
    f.write_bytes(b"mine\n")
    with pytest.raises(NotFixed, match=CHANGED):
        write_fix(snap, b"new\n")
    assert f.read_bytes() == b"mine\n" and os.listdir(tmp_path) == ["a.cu"]


def test_write_fix_in_place_for_hard_links(tmp_path):
    f, g = tmp_path / "a.cu", tmp_path / "b.cu"
    f.write_bytes(b"a longer old content\n")
    os.link(f, g)
    ino = os.stat(f).st_ino
    write_fix(read_snapshot(str(g)), b"short\n")  # (shorter: the rest is cut off)
    assert f.read_bytes() == g.read_bytes() == b"short\n"
    assert os.stat(f).st_ino == ino and os.stat(f).st_nlink == 2
    snap = read_snapshot(str(f))
    g.write_bytes(b"edited\n")  # through the other name
    with pytest.raises(NotFixed, match=CHANGED):
        write_fix(snap, b"new\n")
    assert f.read_bytes() == b"edited\n"
    assert sorted(os.listdir(tmp_path)) == ["a.cu", "b.cu"]


def test_write_atomic_keeps_mode(tmp_path):
    f = tmp_path / "baseline.json"
    f.write_text("{}")
    os.chmod(f, 0o600)
    write_atomic(str(f), b"[]\n")
    assert f.read_bytes() == b"[]\n" and stat.S_IMODE(os.stat(f).st_mode) == 0o600
