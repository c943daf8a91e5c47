"""`--fix` against files that change while kernlint runs, and against files the user protected.

Each race is made deterministic by wrapping the function that runs at the critical moment (the
lint, the temporary file's write, the swap, the in-place write) so that it edits or deletes the
file right then, as another program would; the real CLI runs in-process. What must hold: the
concurrent edit is intact, a warning names the file, no traceback, no temporary file left.
"""

from __future__ import annotations

import errno
import os
import stat

import pytest

import kernlint.fixes as fixes
import kernlint.runner as runner
from kernlint.cli import main

# A CU001 finding with a safe fix (U+2014 in a comment -> "--") and one without a fix (the
# section sign, also in a comment).
DIRTY = "namespace sglang {\n// a \u2014 b\nint x = 0;\n}  // namespace sglang\n".encode()
FIXED = DIRTY.replace("\u2014".encode(), b"--")
UNFIXABLE = "namespace sglang {\n// PTX ISA \u00a79.7\n}  // namespace sglang\n".encode()
# What "another program" writes meanwhile: the offsets of the finding move by 40 bytes.
EDITED = b"// a line the user added meanwhile ....\n" + DIRTY


@pytest.fixture(autouse=True)
def _isolated(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))  # (the cache's key)
    (tmp_path / "kernlint.toml").write_text('jit-roots = ["**"]\n')  # (CU001 is JIT-scoped)


def _check(capsys, *args):
    """Run `kernlint check ARGS`; (exit status, stdout, stderr)."""
    status = main(["check", *args])
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    return status, out, err


def _leftovers(directory) -> list[str]:
    return sorted(n for n in os.listdir(directory) if n.startswith(".kernlint-"))


def _after_lint(monkeypatch, action, expect_cached=None):
    """Run `action()` once the lint is done, before the fixes (`expect_cached`: assert that the
    results came from the cache, True, or kept their bytes, False)."""
    real = runner.lint_candidates

    def wrapped(*args, **kwargs):
        results = real(*args, **kwargs)
        if expect_cached is not None:
            fixable = [r for r in results if any(d.fix for d in r.diagnostics)]
            assert fixable and all((r.source is None) == expect_cached for r in fixable)
        action()
        return results

    monkeypatch.setattr(runner, "lint_candidates", wrapped)


# -- between the lint and the fix ----------------------------------------------------------


@pytest.mark.parametrize(
    "concurrent", [EDITED, DIRTY[:20], DIRTY.replace(b"a ", b"b ")], ids=["moved", "cut", "same"]
)
def test_changed_after_lint_is_not_fixed(tmp_path, capsys, monkeypatch, concurrent):
    f = tmp_path / "a.cu"
    f.write_bytes(DIRTY)
    _after_lint(monkeypatch, lambda: f.write_bytes(concurrent), expect_cached=False)
    status, out, err = _check(capsys, "--no-cache", "--fix", "a.cu")
    assert f.read_bytes() == concurrent  # the concurrent edit, untouched
    assert "warning: a.cu: changed while kernlint ran; not fixed" in err
    assert status == 1 and "a.cu:2:6: CU001" in out  # the findings it has
    assert "Fixed" not in out and _leftovers(tmp_path) == []


def test_deleted_after_lint(tmp_path, capsys, monkeypatch):
    f, other = tmp_path / "a.cu", tmp_path / "b.cu"
    f.write_bytes(DIRTY)
    other.write_bytes(DIRTY)
    _after_lint(monkeypatch, f.unlink)
    status, out, err = _check(capsys, "--no-cache", "--fix", ".")
    assert "warning: a.cu: deleted while kernlint ran; not fixed" in err
    assert not f.exists() and other.read_bytes() == FIXED
    assert status == 0 and "Fixed 1 error." in out


def test_deleted_after_lint_exit_status_follows_remaining(tmp_path, capsys, monkeypatch):
    f, other = tmp_path / "a.cu", tmp_path / "b.cu"
    f.write_bytes(DIRTY)
    other.write_bytes(UNFIXABLE)
    _after_lint(monkeypatch, f.unlink)
    status, out, err = _check(capsys, "--no-cache", "--fix", ".")
    assert "a.cu: deleted while kernlint ran" in err
    assert status == 1 and "b.cu:2:" in out and "a.cu" not in out


def _warm_cache(capsys, *paths):
    status, _, _ = _check(capsys, "--cache-dir", "cache", *paths)
    assert status == 1


def test_cached_result_deleted_before_fix(tmp_path, capsys, monkeypatch):
    f = tmp_path / "a.cu"
    f.write_bytes(DIRTY)
    _warm_cache(capsys, "a.cu")
    _after_lint(monkeypatch, f.unlink, expect_cached=True)
    status, out, err = _check(capsys, "--cache-dir", "cache", "--fix", "a.cu")
    assert "warning: a.cu: deleted while kernlint ran; not fixed" in err
    assert status == 0 and not f.exists()


@pytest.mark.parametrize("concurrent", [EDITED, DIRTY[:20]], ids=["moved", "cut"])
def test_cached_result_changed_before_fix(tmp_path, capsys, monkeypatch, concurrent):
    # A cached result holds no bytes: the file's current bytes are linted again and those
    # findings fixed, at the offsets of the current bytes (never the cached ones).
    f = tmp_path / "a.cu"
    f.write_bytes(DIRTY)
    _warm_cache(capsys, "a.cu")
    _after_lint(monkeypatch, lambda: f.write_bytes(concurrent), expect_cached=True)
    status, out, err = _check(capsys, "--cache-dir", "cache", "--fix", "a.cu")
    expected = concurrent.replace("\u2014".encode(), b"--")
    assert f.read_bytes() == expected
    assert status == 0 and ("Fixed 1 error." in out) == (expected != concurrent)


def test_cached_result_unchanged_is_fixed(tmp_path, capsys, monkeypatch):
    f = tmp_path / "a.cu"
    f.write_bytes(DIRTY)
    _warm_cache(capsys, "a.cu")
    _after_lint(monkeypatch, lambda: None, expect_cached=True)
    status, out, err = _check(capsys, "--cache-dir", "cache", "--fix", "a.cu")
    assert f.read_bytes() == FIXED and status == 0 and "Fixed 1 error." in out
    assert err == ""


@pytest.mark.parametrize("fmt", ["text", "json", "sarif"])
def test_cached_result_deleted_before_the_report(tmp_path, capsys, monkeypatch, fmt):
    # Without --fix the findings stand as linted; the excerpt is left out, no traceback.
    f = tmp_path / "a.cu"
    f.write_bytes(DIRTY)
    _warm_cache(capsys, "a.cu")
    _after_lint(monkeypatch, f.unlink, expect_cached=True)
    status, out, err = _check(capsys, "--cache-dir", "cache", "--output-format", fmt, "a.cu")
    assert status == 1 and "CU001" in out


def test_replaced_by_a_fifo_after_lint(tmp_path, capsys, monkeypatch):
    f = tmp_path / "a.cu"
    f.write_bytes(DIRTY)

    def to_fifo():
        f.unlink()
        os.mkfifo(f)

    _after_lint(monkeypatch, to_fifo)
    status, out, err = _check(capsys, "--no-cache", "--fix", "a.cu")  # (must not block)
    assert "a.cu: changed while kernlint ran; not fixed" in err
    assert stat.S_ISFIFO(os.lstat(f).st_mode)


def test_parallel_lint_keeps_the_bytes_of_fixable_files(tmp_path, capsys, monkeypatch):
    # In the worker pool the lint hands back the bytes of files with a fix, so the change to
    # one of them is seen as such.
    monkeypatch.setattr(runner, "_jobs", lambda: 2)
    names = [f"f{k:02}.cu" for k in range(runner.PARALLEL_THRESHOLD + 2)]
    for name in names:
        (tmp_path / name).write_bytes(DIRTY)
    _after_lint(monkeypatch, lambda: (tmp_path / "f07.cu").write_bytes(EDITED), False)
    status, out, err = _check(capsys, "--no-cache", "--fix", ".")
    assert (tmp_path / "f07.cu").read_bytes() == EDITED
    assert "f07.cu: changed while kernlint ran; not fixed" in err
    assert all((tmp_path / n).read_bytes() == FIXED for n in names if n != "f07.cu")
    assert f"Fixed {len(names) - 1} errors." in out and status == 1


# -- during the write ----------------------------------------------------------------------


def _once(monkeypatch, name, before=None, after=None):
    """Wrap kernlint.fixes.NAME: run `before()` / `after()` around its first call."""
    real = getattr(fixes, name)
    calls = []

    def wrapped(*args, **kwargs):
        first = not calls
        calls.append(args)
        if first and before:
            before()
        result = real(*args, **kwargs)
        if first and after:
            after()
        return result

    monkeypatch.setattr(fixes, name, wrapped)
    return calls


def _save_by_rename(path, data):
    """What an editor does: write a new file, rename it over the old one."""
    tmp = f"{path}.editor~"
    with open(tmp, "wb") as fh:
        fh.write(data)
    os.replace(tmp, path)


@pytest.mark.parametrize("exchange", [True, False], ids=["exchange", "replace"])
@pytest.mark.parametrize("how", ["in-place", "rename", "same-size-and-mtime"])
def test_changed_while_the_temporary_file_is_written(tmp_path, capsys, monkeypatch, how, exchange):
    f = tmp_path / "a.cu"
    f.write_bytes(DIRTY)
    concurrent = EDITED if how != "same-size-and-mtime" else DIRTY.replace(b"a ", b"b ")

    def edit():
        if how == "rename":
            _save_by_rename(f, concurrent)
            return
        st = os.stat(f)
        f.write_bytes(concurrent)
        if how == "same-size-and-mtime":  # (only the bytes tell)
            os.utime(f, ns=(st.st_atime_ns, st.st_mtime_ns))

    _once(monkeypatch, "_write_temp", after=edit)
    if not exchange:
        monkeypatch.setattr(fixes, "_exchange", lambda a, b: False)
    swaps = _once(monkeypatch, "_exchange")
    status, out, err = _check(capsys, "--no-cache", "--fix", "a.cu")
    assert f.read_bytes() == concurrent
    assert swaps == []  # seen by the check before the swap: nothing was swapped
    assert "warning: a.cu: changed while kernlint ran; not fixed" in err and status == 1
    assert _leftovers(tmp_path) == []


@pytest.mark.parametrize("how", ["in-place", "rename"])
def test_changed_at_the_moment_of_the_swap(tmp_path, capsys, monkeypatch, how):
    # After the last check, right before the names are exchanged: the exchange is undone.
    f = tmp_path / "a.cu"
    f.write_bytes(DIRTY)
    edit = (
        (lambda: f.write_bytes(EDITED))
        if how == "in-place"
        else (lambda: _save_by_rename(f, EDITED))
    )
    calls = _once(monkeypatch, "_exchange", before=edit)
    status, out, err = _check(capsys, "--no-cache", "--fix", "a.cu")
    if not fixes._RENAMEAT2 or fixes._RENAMEAT2[0] is None:
        pytest.skip("no atomic exchange of names here")
    assert len(calls) == 2  # the exchange and its undo
    assert f.read_bytes() == EDITED
    assert "warning: a.cu: changed while kernlint ran; not fixed" in err and status == 1
    assert _leftovers(tmp_path) == []


def test_without_exchange_an_edit_at_the_rename_is_put_back(tmp_path, capsys, monkeypatch):
    # Where names cannot be exchanged: an edit written into the file as it is replaced is
    # seen through the descriptor kept on it, and put back.
    f = tmp_path / "a.cu"
    f.write_bytes(DIRTY)
    monkeypatch.setattr(fixes, "_exchange", lambda a, b: False)
    real_replace = os.replace
    calls = []

    def replace(src, dst):
        if not calls and os.fspath(dst) == str(f):
            f.write_bytes(EDITED)  # in place, just before the rename
        calls.append(dst)
        return real_replace(src, dst)

    monkeypatch.setattr(fixes.os, "replace", replace)
    status, out, err = _check(capsys, "--no-cache", "--fix", "a.cu")
    assert f.read_bytes() == EDITED
    assert "warning: a.cu: changed while kernlint ran; not fixed" in err and status == 1
    assert len(calls) == 2 and _leftovers(tmp_path) == []


def test_without_exchange_fixes_still_apply(tmp_path, capsys, monkeypatch):
    f = tmp_path / "a.cu"
    f.write_bytes(DIRTY)
    os.chmod(f, 0o640)
    monkeypatch.setattr(fixes, "_exchange", lambda a, b: False)
    status, out, err = _check(capsys, "--no-cache", "--fix", "a.cu")
    assert f.read_bytes() == FIXED and status == 0 and err == ""
    assert stat.S_IMODE(os.stat(f).st_mode) == 0o640 and _leftovers(tmp_path) == []


# -- files the user protected --------------------------------------------------------------


def test_read_only_file_is_not_fixed(tmp_path, capsys):
    f = tmp_path / "a.cu"
    f.write_bytes(DIRTY)
    os.chmod(f, 0o444)  # (the tests may run as root: the mode bits are what counts)
    ino = os.stat(f).st_ino
    status, out, err = _check(capsys, "--no-cache", "--fix", "a.cu")
    assert "warning: a.cu: read-only; not fixed" in err
    assert f.read_bytes() == DIRTY and os.stat(f).st_ino == ino
    assert stat.S_IMODE(os.stat(f).st_mode) == 0o444
    assert status == 1 and "a.cu:2:6: CU001" in out and "Fixed" not in out


def test_read_only_target_of_a_symlink_is_not_fixed(tmp_path, capsys):
    target = tmp_path / "real.cu"
    target.write_bytes(DIRTY)
    os.chmod(target, 0o400)
    (tmp_path / "link.cu").symlink_to("real.cu")
    status, out, err = _check(capsys, "--no-cache", "--fix", "link.cu")
    assert "link.cu: read-only; not fixed" in err and target.read_bytes() == DIRTY


def test_hard_links_all_see_the_fix(tmp_path, capsys):
    f, other = tmp_path / "a.cu", tmp_path / "sub" / "b.cu"
    other.parent.mkdir()
    f.write_bytes(DIRTY)
    os.link(f, other)
    os.chmod(f, 0o604)
    ino = os.stat(f).st_ino
    status, out, err = _check(capsys, "--no-cache", "--fix", "a.cu")
    assert status == 0 and "Fixed 1 error." in out and err == ""
    assert f.read_bytes() == FIXED and other.read_bytes() == FIXED
    st = os.stat(f)
    assert st.st_ino == ino and st.st_nlink == 2 and stat.S_IMODE(st.st_mode) == 0o604
    assert _leftovers(tmp_path) == []
    status, out, err = _check(capsys, "--no-cache", "--fix", "sub/b.cu")
    assert status == 0 and "Fixed" not in out and f.read_bytes() == FIXED  # converged


def test_hard_link_changed_before_the_in_place_write(tmp_path, capsys, monkeypatch):
    f = tmp_path / "a.cu"
    f.write_bytes(DIRTY)
    os.link(f, tmp_path / "b.cu")
    _once(monkeypatch, "_write_temp", after=lambda: f.write_bytes(EDITED))  # (the backup)
    status, out, err = _check(capsys, "--no-cache", "--fix", "a.cu")
    assert f.read_bytes() == EDITED and (tmp_path / "b.cu").read_bytes() == EDITED
    assert "a.cu: changed while kernlint ran; not fixed" in err and status == 1
    assert _leftovers(tmp_path) == []


def _failing_pwrite(monkeypatch, failures):
    """The first `failures` in-place writes write half their bytes, then fail (a full disk)."""
    real = fixes._pwrite_all
    calls = []

    def pwrite_all(fd, data):
        calls.append(data)
        if len(calls) <= failures:
            os.pwrite(fd, data[: len(data) // 2], 0)
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real(fd, data)

    monkeypatch.setattr(fixes, "_pwrite_all", pwrite_all)
    return calls


def test_hard_link_failed_in_place_write_restores_the_file(tmp_path, capsys, monkeypatch):
    f, other = tmp_path / "a.cu", tmp_path / "b.cu"
    f.write_bytes(DIRTY)
    os.link(f, other)
    calls = _failing_pwrite(monkeypatch, 1)
    status, out, err = _check(capsys, "--no-cache", "--fix", "a.cu")
    assert calls == [FIXED, DIRTY]  # the fix, then the original put back
    assert f.read_bytes() == DIRTY and other.read_bytes() == DIRTY  # never half-written
    assert "a.cu: cannot write fixes: No space left on device" in err and status == 1
    assert _leftovers(tmp_path) == []


def test_hard_link_failed_restore_keeps_a_backup(tmp_path, capsys, monkeypatch):
    f = tmp_path / "a.cu"
    f.write_bytes(DIRTY)
    os.link(f, tmp_path / "b.cu")
    _failing_pwrite(monkeypatch, 2)
    status, out, err = _check(capsys, "--no-cache", "--fix", "a.cu")
    left = _leftovers(tmp_path)
    assert len(left) == 1 and left[0].endswith(".orig")
    assert (tmp_path / left[0]).read_bytes() == DIRTY  # the original, kept
    assert "its original content is kept in" in err and left[0] in err
    assert status == 1


def test_symlink_fixes_its_target(tmp_path, capsys):
    target = tmp_path / "real.cu"
    target.write_bytes(DIRTY)
    link = tmp_path / "link.cu"
    link.symlink_to("real.cu")
    status, out, err = _check(capsys, "--no-cache", "--fix", "link.cu")
    assert status == 0 and "Fixed 1 error." in out
    assert link.is_symlink() and os.readlink(link) == "real.cu"
    assert target.read_bytes() == FIXED and _leftovers(tmp_path) == []


def test_diff_writes_nothing_even_for_protected_files(tmp_path, capsys):
    f = tmp_path / "a.cu"
    f.write_bytes(DIRTY)
    os.chmod(f, 0o444)
    before = os.stat(f)
    status, out, err = _check(capsys, "--no-cache", "--diff", "a.cu")
    assert status == 1 and "+// a -- b" in out
    after = os.stat(f)
    assert f.read_bytes() == DIRTY and (after.st_ino, after.st_mtime_ns) == (
        before.st_ino,
        before.st_mtime_ns,
    )


@pytest.mark.parametrize("kind", ["hard", "symbolic"])
def test_two_names_of_one_file_in_one_run(tmp_path, capsys, kind):
    # The second name sees the first one's fix: no "changed" warning, no stale finding.
    f = tmp_path / "a.cu"
    f.write_bytes(DIRTY.replace(b"int x", "int \u00a7x".encode()))  # + one finding left
    other = tmp_path / "b.cu"
    if kind == "hard":
        os.link(f, other)
    else:
        other.symlink_to("a.cu")
    status, out, err = _check(capsys, "--no-cache", "--fix", "a.cu", "b.cu")
    assert err == "" and "Fixed 1 error." in out
    assert f.read_bytes() == FIXED.replace(b"int x", "int \u00a7x".encode())
    assert status == 1 and out.count("CU001") == 2  # the unfixable one, under each name
    assert "a.cu:3:" in out and "b.cu:3:" in out and ":2:6:" not in out
