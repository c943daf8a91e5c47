"""Applying fixes: non-overlapping edits, written only over the bytes they were computed on.

`write_fix` replaces a file's content only while the file still holds exactly the bytes the
fixes were computed on (a `Snapshot`), keeps its mode, owner, line endings and encoding (only
the edited bytes change), skips read-only files, and keeps hard links (see `write_fix`).
"""

from __future__ import annotations

import os
import stat
import sys

from .model import Diagnostic

CHANGED = "changed while kernlint ran; not fixed"
READ_ONLY = "read-only; not fixed"


class NotFixed(Exception):
    """The file was left as it is; the message says why (one of the reasons above)."""


def applicable(diag: Diagnostic, unsafe: bool) -> bool:
    fix = diag.fix
    return fix is not None and (fix.applicability == "safe" or unsafe)


def apply_fixes(data: bytes, diagnostics: list[Diagnostic], unsafe: bool):
    """Return (new_bytes, fixed, remaining). Overlapping edits: the first one wins."""
    edits = []
    fixed, remaining = [], []
    taken: list[tuple[int, int]] = []
    for d in sorted(diagnostics, key=lambda d: (d.start, d.end)):
        if not applicable(d, unsafe):
            remaining.append(d)
            continue
        spans = [(e.start, e.end) for e in d.fix.edits]
        if any(s < te and ts < e or (s == e == ts) for s, e in spans for ts, te in taken):
            remaining.append(d)  # conflicts with an earlier fix; a later run picks it up
            continue
        taken += spans
        edits += d.fix.edits
        fixed.append(d)
    if not edits:
        return data, [], diagnostics
    out = bytearray(data)
    for e in sorted(edits, key=lambda e: e.start, reverse=True):
        out[e.start : e.end] = e.content.encode("utf-8")
    return bytes(out), fixed, sorted(remaining, key=Diagnostic.sort_key)


def unified_diff(path: str, old: bytes, new: bytes) -> str:
    a = old.decode("utf-8", "surrogateescape").splitlines(keepends=True)
    b = new.decode("utf-8", "surrogateescape").splitlines(keepends=True)
    import difflib  # (imported when a diff is shown: not on the plain check path)

    lines = difflib.unified_diff(a, b, fromfile=f"a/{path}", tofile=f"b/{path}")
    text = "".join(
        line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in lines
    )
    return text


def write_atomic(path: str, data: bytes) -> None:
    """Replace `path`'s content atomically (temp file + rename), keeping its permission bits.
    (For kernlint's own files, such as a baseline; source files go through `write_fix`.)"""
    real = os.path.realpath(path)
    tmp = _write_temp(real, data, os.stat(real))
    try:
        os.replace(tmp, real)
    except BaseException:
        _unlink(tmp)
        raise


# -- Writing fixes -------------------------------------------------------------------------


class Snapshot:
    """A file's bytes, read once, and the `os.fstat` of the open file they were read from
    (`real`: the path with every symbolic link resolved: a link's target is what is fixed)."""

    __slots__ = ("real", "data", "st")

    def __init__(self, real: str, data: bytes, st: os.stat_result) -> None:
        self.real, self.data, self.st = real, data, st

    @property
    def read_only(self) -> bool:
        # The mode bits, not os.access: root may write any file, but a file its owner cannot
        # write is one the user protected.
        return not self.st.st_mode & stat.S_IWUSR


_OPEN_FLAGS = os.O_RDONLY | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NONBLOCK", 0)


def _ident(st) -> tuple:
    """What changes when a file is written, replaced, re-linked or chmod'ed."""
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def _content(st) -> tuple:
    """What changes when a file's content is written (a rename changes its ctime, not this)."""
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)


def _read_fd(fd: int, st) -> bytes:
    parts, total = [], 0
    while True:
        chunk = os.pread(fd, max(st.st_size + 1 - total, 1 << 16), total)
        if not chunk:
            return b"".join(parts)
        parts.append(chunk)
        total += len(chunk)


def read_snapshot(path: str, limit: int | None = None) -> Snapshot:
    """Read `path` (a regular file; a link is followed) for fixing. Raises OSError when it
    cannot be read; NotFixed(CHANGED) when it is no regular file, is larger than `limit`
    bytes, or changes while it is read (the open does not block: a FIFO put there cannot hang
    the run)."""
    real = os.path.realpath(path)
    fd = os.open(real, _OPEN_FLAGS)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or (limit is not None and st.st_size > limit):
            raise NotFixed(CHANGED)
        data = _read_fd(fd, st)
        if _ident(os.fstat(fd)) != _ident(st) or len(data) != st.st_size:
            raise NotFixed(CHANGED)
    finally:
        os.close(fd)
    return Snapshot(real, data, st)


def _unchanged(snap: Snapshot) -> bool:
    """Does `snap.real` still name the file of the snapshot, with the same bytes?"""
    try:
        again = read_snapshot(snap.real)
    except (OSError, NotFixed):
        return False
    return _ident(again.st) == _ident(snap.st) and again.data == snap.data


def write_fix(snap: Snapshot, new: bytes) -> None:
    """Write `new` over the file of `snap`, only while it still holds exactly `snap.data`.

    Raises NotFixed(READ_ONLY) for a file its owner may not write, NotFixed(CHANGED) when the
    file no longer holds the snapshot's bytes (nothing is written then, and a concurrent edit
    is kept), OSError when it cannot be written (the file is then as it was).

    A file with one name is replaced atomically: the new bytes go to a temporary file in the
    same directory (its mode and owner set to the file's), the file is checked again (its
    inode, size, mtime, ctime and bytes), then the two are swapped (see `_swap`). A file with
    several names (hard links) is written in place so that every name sees the fix (see
    `_write_in_place`)."""
    if snap.read_only:
        raise NotFixed(READ_ONLY)
    if snap.st.st_nlink > 1:
        _write_in_place(snap, new)
        return
    tmp = _write_temp(snap.real, new, snap.st)
    try:
        if not _unchanged(snap):
            raise NotFixed(CHANGED)
    except BaseException:
        _unlink(tmp)
        raise
    _swap(tmp, snap)


def _swap(tmp: str, snap: Snapshot) -> None:
    """Put the temporary file `tmp` in place of `snap.real` (and remove `tmp`), making sure
    what it replaced was the checked file, unchanged. Where the system can exchange two names
    atomically (Linux's renameat2 RENAME_EXCHANGE), the replaced file stays under `tmp`'s name
    until it is checked: if another program replaced or wrote the file between the check and
    the exchange, the exchange is undone and that program's edit is back in place. Elsewhere
    `os.replace` is used, while an open descriptor keeps the replaced file: an edit written
    into it in that window is put back.

    The window that remains: where there is no exchange, a save by rename from another program
    between the last check and `os.replace` (microseconds, once per fixed file) is lost; with
    the exchange, only an edit of the new file in the microseconds between an exchange and its
    undo (that is, a second concurrent edit) is; and a program that still holds the old file
    open and writes it after the swap writes a file that no longer has a name, as with any save
    by rename. There is no compare-and-swap for file contents in POSIX: this is the closest."""
    try:
        exchanged = _exchange(tmp, snap.real)
    except BaseException:
        _unlink(tmp)
        raise
    if exchanged:
        try:
            same = _content(os.lstat(tmp)) == _content(snap.st)
            if same:
                with open(tmp, "rb") as fh:
                    same = fh.read() == snap.data
        except OSError:
            same = False
        if not same:
            try:
                _exchange(tmp, snap.real)  # undo: the other program's file is back in place
            except OSError as exc:
                # (`tmp` is kept: it holds the other program's version)
                raise OSError(
                    f"{exc.strerror or exc}; the file changed meanwhile, its version is {tmp}"
                ) from exc
        _unlink(tmp)  # the old file, or (undone) the new one
        if not same:
            raise NotFixed(CHANGED)
        return
    try:
        fd = os.open(snap.real, _OPEN_FLAGS)
    except BaseException:
        _unlink(tmp)
        raise
    try:
        if _content(os.fstat(fd)) != _content(snap.st):
            _unlink(tmp)
            raise NotFixed(CHANGED)
        try:
            os.replace(tmp, snap.real)
        except BaseException:
            _unlink(tmp)
            raise
        st = os.fstat(fd)
        if _content(st) != _content(snap.st) or _read_fd(fd, st) != snap.data:
            # Written in the window: put that content back (it is the user's newest edit).
            back = _write_temp(snap.real, _read_fd(fd, st), snap.st)
            try:
                os.replace(back, snap.real)
            except BaseException:
                _unlink(back)
                raise
            raise NotFixed(CHANGED)
    finally:
        os.close(fd)


def _write_in_place(snap: Snapshot, new: bytes) -> None:
    """Write `new` into the file itself (same inode: every hard link sees it).

    Trade-off: this is not atomic the way a rename is. A program reading the file meanwhile
    may see part of the new content, and an edit written between the last check and the write
    (microseconds) is overwritten. Against a failed or interrupted write: the original bytes
    are first written to a backup file beside it (and checked); if the write fails, the
    original bytes are written back and the backup removed; if even that fails (or kernlint is
    killed meanwhile), the backup stays and the error names it."""
    backup = _write_temp(snap.real, snap.data, snap.st, suffix=".orig")
    try:
        with open(backup, "rb") as fh:
            if fh.read() != snap.data:
                raise OSError(f"the backup {backup} does not read back as written")
        fd = os.open(snap.real, os.O_RDWR | getattr(os, "O_CLOEXEC", 0))
    except BaseException:
        _unlink(backup)
        raise
    keep_backup = False
    try:
        st = os.fstat(fd)
        if _ident(st) != _ident(snap.st) or _read_fd(fd, st) != snap.data:
            raise NotFixed(CHANGED)
        try:
            _pwrite_all(fd, new)
            os.ftruncate(fd, len(new))
            os.fsync(fd)
            if _read_fd(fd, os.fstat(fd)) != new:
                raise OSError("the fixed file does not read back as written")
        except BaseException as exc:
            try:
                os.ftruncate(fd, len(snap.data))
                _pwrite_all(fd, snap.data)
                os.fsync(fd)
                restored = _read_fd(fd, os.fstat(fd)) == snap.data
            except OSError:
                restored = False
            if not restored:
                keep_backup = True
                reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else exc
                raise OSError(f"{reason}; its original content is kept in {backup}") from exc
            raise
    finally:
        os.close(fd)
        if not keep_backup:
            _unlink(backup)


def _pwrite_all(fd: int, data: bytes) -> None:
    view, done = memoryview(data), 0
    while done < len(data):
        done += os.pwrite(fd, view[done:], done)


def _write_temp(real: str, data: bytes, st, suffix: str = ".tmp") -> str:
    """A new file beside `real` holding `data` (flushed to disk), with `st`'s mode and owner."""
    import tempfile  # (imported when a file is written: not on the plain check path)

    directory = os.path.dirname(real) or "."
    fd, tmp = tempfile.mkstemp(prefix=".kernlint-", suffix=suffix, dir=directory)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, st.st_mode & 0o7777)
        try:
            os.chown(tmp, st.st_uid, st.st_gid)
        except (PermissionError, AttributeError):
            pass
    except BaseException:
        _unlink(tmp)
        raise
    return tmp


def _unlink(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass


_RENAMEAT2: list = []  # [function or None], looked up once


def _exchange(a: str, b: str) -> bool:
    """Swap the names `a` and `b` atomically (Linux renameat2 with RENAME_EXCHANGE). False
    where the system or the file system cannot; OSError for other failures."""
    if not _RENAMEAT2:
        fn = None
        if sys.platform.startswith("linux"):
            try:
                import ctypes

                libc = ctypes.CDLL(None, use_errno=True)
                fn = libc.renameat2
                fn.argtypes = [
                    ctypes.c_int,
                    ctypes.c_char_p,
                    ctypes.c_int,
                    ctypes.c_char_p,
                    ctypes.c_uint,
                ]
                fn.restype = ctypes.c_int
            except (ImportError, OSError, AttributeError):
                fn = None
        _RENAMEAT2.append(fn)
    fn = _RENAMEAT2[0]
    if fn is None:
        return False
    import ctypes
    import errno

    at_fdcwd, rename_exchange = -100, 2
    if fn(at_fdcwd, os.fsencode(a), at_fdcwd, os.fsencode(b), rename_exchange) == 0:
        return True
    err = ctypes.get_errno()
    if err in (errno.ENOSYS, errno.EINVAL, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EPERM):
        return False  # not supported here (EPERM: some file systems refuse the flag)
    raise OSError(err, os.strerror(err), b)
