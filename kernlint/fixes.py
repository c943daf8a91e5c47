"""Applying fixes: non-overlapping edits, atomic writes that keep mode and line endings."""

from __future__ import annotations

import os

from .model import Diagnostic


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
    """Replace `path`'s content atomically (temp file + rename), keeping its permission bits."""
    real = os.path.realpath(path)
    directory = os.path.dirname(real) or "."
    st = os.stat(real)
    import tempfile  # (imported when a file is written: not on the plain check path)

    fd, tmp = tempfile.mkstemp(prefix=".kernlint-", suffix=".tmp", dir=directory)
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
        os.replace(tmp, real)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
