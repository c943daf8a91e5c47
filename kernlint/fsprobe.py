"""What a stretch of code asked the file system: every path it stat-ed, opened or listed, with
what it saw, so that a later run can tell whether the answers it built on still hold.

`Recorder` swaps the `os` and `io` functions that look at the file system (`os.stat`, `os.lstat`,
`os.open`, `os.scandir`, `os.listdir`, `open`) for ones that note each path and what it was (its
mode, size and modification time, or that it was missing; a directory's entries, with their
types), for the duration of a `with` block, in this process only. `os.path.exists`, `isfile`,
`isdir`, `getsize`, `os.walk`, `glob` and `pathlib` go through those functions and are noted too.
A call on a file descriptor is not noted (the open that made it was).

`changed(probes)` asks the same questions again: True as soon as one answer differs. A probe
whose path was modified within `RACY_NS` of a time (`racy`) cannot vouch for its bytes (an edit
within the same timestamp tick keeps size and modification time): such a record is not kept.
"""

from __future__ import annotations

import builtins
import hashlib
import io
import os
import stat

from .cache import RACY_NS  # (the result cache's: FAT's 2 s timestamps)

_STAT, _LSTAT, _LIST = "s", "l", "d"


def describe(st) -> str:
    """A stat's answer: its mode (the file type and the permission bits: a file made unreadable
    is another answer), size and modification time."""
    return f"{st.st_mode}:{st.st_size}:{st.st_mtime_ns}"


def _listing(entries) -> str:
    """A directory's entries: their names and types, in name order (a digest)."""
    text = "\0".join(sorted(f"{name}\0{kind}" for name, kind in entries))
    return (
        "ls:" + hashlib.blake2b(text.encode("utf-8", "surrogateescape"), digest_size=12).hexdigest()
    )


def _entry_kind(entry) -> str:
    try:
        if entry.is_symlink():
            return "l"
        return "d" if entry.is_dir(follow_symlinks=False) else "f"
    except OSError:
        return "?"


def _kinds(entries) -> list[tuple[str, str]]:
    """(name, type) of each directory entry, the types from the listing itself (no stat per
    entry, as a rule: one that needs a stat and cannot get it is "?")."""
    try:
        return [
            (e.name, "l" if e.is_symlink() else "d" if e.is_dir(follow_symlinks=False) else "f")
            for e in entries
        ]
    except OSError:
        return [(e.name, _entry_kind(e)) for e in entries]


class _Entries:
    """What `os.scandir` returns (an iterator and a context manager), over entries already
    read: the listing noted is the one the caller sees."""

    def __init__(self, entries) -> None:
        self._it = iter(entries)

    def __iter__(self):
        return self

    def __next__(self):
        return next(self._it)

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        self._it = iter(())


def _key_path(path) -> str | None:
    """The absolute path a call names, or None for a file descriptor or an odd argument."""
    if isinstance(path, int):
        return None
    try:
        path = os.fspath(path)
    except TypeError:
        return None
    if isinstance(path, bytes):
        path = os.fsdecode(path)
    return _real["abspath"](path)


_real = {
    "stat": os.stat,
    "lstat": os.lstat,
    "open": os.open,
    "scandir": os.scandir,
    "listdir": os.listdir,
    "builtin_open": builtins.open,
    "io_open": io.open,
    "abspath": os.path.abspath,
}


class Recorder:
    """`with Recorder() as rec:` notes the file-system questions asked inside the block
    (`rec.probes`: (kind, absolute path) -> answer, the first answer seen). Not reentrant;
    not for threads (the swapped functions are the process's)."""

    def __init__(self) -> None:
        self.probes: dict[tuple[str, str], str] = {}

    def _note_stat(self, kind: str, path) -> None:
        key = _key_path(path)
        if key is not None and (kind, key) not in self.probes:
            self.probes[(kind, key)] = answer(kind, key)

    def _note_listing(self, key: str, entries) -> None:
        if (_LIST, key) not in self.probes:
            self.probes[(_LIST, key)] = _listing(entries)

    def __enter__(self) -> Recorder:
        rec = self
        real = _real

        def stat_(path, *args, **kwargs):
            if not args and not kwargs.get("dir_fd"):
                follow = kwargs.get("follow_symlinks", True)
                rec._note_stat(_STAT if follow else _LSTAT, path)
            return real["stat"](path, *args, **kwargs)

        def lstat_(path, *args, **kwargs):
            if not args and not kwargs.get("dir_fd"):
                rec._note_stat(_LSTAT, path)
            return real["lstat"](path, *args, **kwargs)

        def open_(path, flags, *args, **kwargs):
            if not kwargs.get("dir_fd"):
                rec._note_stat(_STAT, path)
            return real["open"](path, flags, *args, **kwargs)

        def listed(key: str, path):
            """The entries of a directory, noted (its failure to list too)."""
            try:
                with real["scandir"](path) as it:
                    entries = list(it)
            except OSError:
                rec.probes.setdefault((_LIST, key), "-")
                raise
            rec._note_listing(key, _kinds(entries))
            return entries

        def scandir_(path="."):
            key = _key_path(path)
            if key is None:  # (a descriptor)
                return real["scandir"](path)
            return _Entries(listed(key, path))

        def listdir_(path="."):
            key = _key_path(path)
            if key is None:
                return real["listdir"](path)
            names = [e.name for e in listed(key, path)]
            return [os.fsencode(n) for n in names] if isinstance(path, bytes) else names

        def builtin_open_(file, *args, **kwargs):
            if not isinstance(file, int):
                rec._note_stat(_STAT, file)
            return real["builtin_open"](file, *args, **kwargs)

        os.stat, os.lstat, os.open = stat_, lstat_, open_
        os.scandir, os.listdir = scandir_, listdir_
        builtins.open = io.open = builtin_open_
        return self

    def __exit__(self, *exc) -> None:
        os.stat, os.lstat, os.open = _real["stat"], _real["lstat"], _real["open"]
        os.scandir, os.listdir = _real["scandir"], _real["listdir"]
        builtins.open, io.open = _real["builtin_open"], _real["io_open"]


def answer(kind: str, path: str, names=None) -> str:
    """What the file system answers now to a probe (as `Recorder` noted it). `names`: for a
    listing, a dict to put the directory's entry names in (as a set, under `path`)."""
    if kind == _LIST:
        try:
            with _real["scandir"](path) as it:
                found = list(it)
        except (OSError, ValueError):  # (ValueError: a NUL or a lone surrogate in the path)
            return "-"
        entries = _kinds(found)
        if names is not None:
            names[path] = {name for name, _ in entries}
        return _listing(entries)
    try:
        st = (_real["stat"] if kind == _STAT else _real["lstat"])(path)
    except (OSError, ValueError):
        return "-"
    return describe(st)


def changed(probes, known=None) -> bool:
    """Does any probe ((kind, path, answer) triples) get another answer now? `known`: absolute
    path -> an `os.stat` result of it taken by this run (asked once, not again here).

    The listings are asked first: a path that was missing, in a directory whose listing is the
    same and does not name it, is missing still (not asked again: most of a run's questions
    about missing files are of that kind)."""
    known = known or {}
    listed: dict[str, set] = {}
    for kind, path, seen in probes:
        if kind == _LIST and answer(kind, path, listed) != seen:
            return True
    sep = os.sep
    for kind, path, seen in probes:
        if kind == _LIST:
            continue
        if seen == "-":
            parent, _, name = path.rpartition(sep)
            inside = listed.get(parent)
            if inside is not None and name and name not in inside:
                continue
        st = known.get(path) if kind == _STAT else None
        now = describe(st) if st is not None else answer(kind, path)
        if now != seen:
            return True
    return False


def racy(probes, since_ns: int) -> bool:
    """Was a probed file (not a directory: a listing is its names, not their times) modified
    within RACY_NS of `since_ns`, or later?"""
    floor = since_ns - RACY_NS
    for kind, _path, seen in probes:
        if kind == _LIST:
            continue
        head = seen.split(":")
        if len(head) != 3 or not (head[0].isdigit() and head[2].isdigit()):
            continue
        if not stat.S_ISDIR(int(head[0])) and int(head[2]) >= floor:
            return True
    return False
