"""Which files to lint: explicit files, and directories walked honoring `.gitignore` and excludes."""

from __future__ import annotations

import os
import stat

from .record import FrozenInstanceError
from .source import language_of


class PathError(Exception):
    """A path given on the command line that cannot be used (exit status 2)."""


class Candidate:
    """A file to lint: `display`, its path as shown to the user; `abspath`; `language`;
    `explicit`: named on the command line. Read-only.

    A file found by walking a directory keeps one string, its absolute path: its display path
    is made from it when asked (the display prefix of the directory walked, then the path below
    it), not held beside it (a run of 50,000 files keeps 5 MB less)."""

    __slots__ = ("abspath", "language", "explicit", "_shown")

    # A candidate stands for its own result where the lint found nothing to report (most
    # files): what a result of it would hold, read-only (a run keeps one result per file).
    diagnostics: tuple = ()
    warnings: tuple = ()
    notes: tuple = ()
    source = None
    unparsed = None
    generated = None
    pending = False

    def __init__(self, display: str, abspath: str, language: str, explicit: bool) -> None:
        _set(self, "abspath", abspath)
        _set(self, "language", language)
        _set(self, "explicit", explicit)
        _set(self, "_shown", display)

    @classmethod
    def walked(cls, abspath: str, language: str, below) -> Candidate:
        """A file found under a walked directory: `below` is (the directory's display prefix,
        the length of its absolute path with the separator after it), shared by its files."""
        cand = cls.__new__(cls)
        _set(cand, "abspath", abspath)
        _set(cand, "language", language)
        _set(cand, "explicit", False)
        _set(cand, "_shown", below)
        return cand

    @property
    def display(self) -> str:
        shown = self._shown
        if shown.__class__ is str:
            return shown
        return shown[0] + self.abspath[shown[1] :]

    path = display  # (as a result: the path the report shows)

    def _key(self) -> tuple:
        return (self.display, self.abspath, self.language, self.explicit)

    def __eq__(self, other) -> bool:
        if other.__class__ is not Candidate:
            return NotImplemented
        return self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        return (
            f"Candidate(display={self.display!r}, abspath={self.abspath!r}, "
            f"language={self.language!r}, explicit={self.explicit!r})"
        )

    def __setattr__(self, name, value) -> None:
        raise FrozenInstanceError(f"cannot assign to field {name!r}")

    def __delattr__(self, name) -> None:
        raise FrozenInstanceError(f"cannot delete field {name!r}")

    def __reduce__(self):
        return (Candidate, (self.display, self.abspath, self.language, self.explicit))


_set = object.__setattr__


class _GitIgnores:
    """Stack of `.gitignore` specs, each relative to the directory holding it."""

    def __init__(self) -> None:
        self._cache: dict[str, object] = {}

    def spec_for(self, directory: str, names=None):
        """`names`: the directory's entries, when the caller has listed it."""
        spec = self._cache.get(directory, False)
        if spec is False:
            spec = None
            path = os.path.join(directory, ".gitignore")
            if (names is None or ".gitignore" in names) and os.path.isfile(path):
                try:
                    from .engine import _read_bytes  # (a regular file, size-capped)

                    lines = _read_bytes(path).decode("utf-8", "replace").splitlines()
                    from .globmatch import GitIgnoreMatcher

                    spec = GitIgnoreMatcher(lines)
                except OSError:
                    spec = None
            self._cache[directory] = spec
        return spec

    def active(self, chain: list[str], names=None) -> list[tuple[str, object]]:
        """(directory, spec) for the directories of `chain` that hold a .gitignore (`names`:
        the entries of the last one, when listed)."""
        last = chain[-1] if chain else None
        return [
            (d, spec)
            for d in chain
            if (spec := self.spec_for(d, names if d == last else None)) is not None
        ]

    @staticmethod
    def ignored(abspath: str, is_dir: bool, active: list[tuple[str, object]]) -> bool:
        """Is `abspath` ignored by the .gitignore files `active` (outermost first)?"""
        result = False
        for directory, spec in active:
            # (a path below the directory: its tail, without relpath's normalization of both)
            prefix = directory if directory.endswith(os.sep) else directory + os.sep
            if abspath.startswith(prefix):
                rel = abspath[len(prefix) :]
                if os.sep != "/":
                    rel = rel.replace(os.sep, "/")
            else:
                rel = os.path.relpath(abspath, directory).replace(os.sep, "/")
            if is_dir:
                rel += "/"
            # Later (deeper) files override earlier ones; `!` re-includes.
            verdict = spec.check(rel)
            if verdict is not None:
                result = verdict
        return result


def git_root(start: str) -> str | None:
    d = start
    while True:
        if os.path.exists(os.path.join(d, ".git")):
            return d
        parent = os.path.dirname(d)
        if parent == d:
            return None
        d = parent


def discover(paths: list[str], resolver, force_exclude: bool = False, warn=print):
    """Yield Candidates, deterministically ordered; raise PathError for unusable arguments."""
    gitignores = _GitIgnores()
    seen: set[str] = set()
    for given in paths:
        try:
            st = os.stat(given)  # (a symbolic link named here is followed)
        except OSError as exc:
            if not os.path.lexists(given):
                raise PathError(f"{given}: no such file or directory") from None
            if os.path.islink(given):
                raise PathError(f"{given}: broken symbolic link or symbolic link loop") from None
            raise PathError(f"{given}: cannot access: {exc.strerror or exc}") from None
        abspath = os.path.abspath(given)
        if not stat.S_ISDIR(st.st_mode) and not stat.S_ISREG(st.st_mode):
            # A FIFO, socket or device (or a link to one) is never opened: it could block or
            # never end.
            warn(f"{given}: not a regular file; skipped")
            continue
        if stat.S_ISREG(st.st_mode):
            language = language_of(given)
            if language is None:
                warn(f"{given}: not a C/C++/CUDA or Python file (by extension); skipped")
                continue
            if force_exclude:
                settings = resolver.for_file(abspath)
                if settings.is_excluded(abspath) or _excluded_parents(abspath, settings):
                    continue
            if abspath not in seen:
                seen.add(abspath)
                yield Candidate(given, abspath, language, True)
            continue
        root_git = git_root(abspath)
        base_chain = []
        if root_git is not None:
            d = abspath
            while True:
                base_chain.append(d)
                if d == root_git:
                    break
                d = os.path.dirname(d)
            base_chain.reverse()
            base_chain.pop()  # abspath itself is added by the walk
        yield from _walk(given, abspath, resolver, gitignores, base_chain, seen, warn)


def _excluded_parents(abspath: str, settings) -> bool:
    d = os.path.dirname(abspath)
    root = settings.root
    while d.startswith(root) and d != root:
        if settings.is_excluded(d, is_dir=True):
            return True
        d = os.path.dirname(d)
    return False


def _walk(given, abspath, resolver, gitignores, chain, seen, warn):
    prefix = _display_prefix(given)
    stack = [(abspath, chain, prefix)]
    visited_dirs: set[tuple[int, int]] = set()
    # A file's display path is the prefix, then its path below `abspath` (see `Candidate`).
    cut = len(abspath) if abspath.endswith(os.sep) else len(abspath) + 1
    below = (prefix, cut)
    while stack:
        directory, parents, display_dir = stack.pop()
        try:
            st = os.stat(directory)
        except OSError as exc:
            warn(f"{_rel(given, abspath, directory)}: cannot read directory: {exc.strerror}")
            continue
        key = (st.st_dev, st.st_ino)
        if key in visited_dirs:
            continue
        visited_dirs.add(key)
        try:
            entries = sorted(os.scandir(directory), key=lambda e: e.name)
        except OSError as exc:
            warn(f"{_rel(given, abspath, directory)}: cannot read directory: {exc.strerror}")
            continue
        # (the listing tells which config and .gitignore files are worth a look)
        names = {e.name for e in entries}
        settings = resolver.for_directory(directory, names)
        chain_here = parents + [directory]
        # The .gitignore files that apply here, looked up once per directory, not per entry.
        gitignored = gitignores.active(chain_here, names) if settings.respect_gitignore else []
        subdirs = []
        # (the files here show as `display_dir` + name: derived from their paths, where the
        # directory's own display path is)
        derived = prefix + directory[cut:] + os.sep if directory != abspath else prefix
        shared = below if derived == display_dir else None
        for entry in entries:
            path = entry.path
            try:
                is_dir = entry.is_dir(follow_symlinks=False)
                is_link = entry.is_symlink()
            except OSError:
                continue
            if entry.name == ".git":
                continue
            if is_link:
                # Symbolic links are not followed while walking (no loops, no escapes),
                # like ruff and git. A link named on the command line is followed.
                continue
            # (a file kernlint does not lint is skipped before the ignore and exclude checks)
            language = None if is_dir else language_of(entry.name)
            if language is None and not is_dir:
                continue
            if not is_dir and not _is_regular_file(entry):
                # A FIFO, socket or device is skipped quietly, like a link: never opened.
                continue
            if gitignored and gitignores.ignored(path, is_dir, gitignored):
                continue
            if settings.is_excluded(path, is_dir=is_dir, name=entry.name):
                continue
            if is_dir:
                subdirs.append((path, display_dir + entry.name + os.sep))
                continue
            if path in seen:
                continue
            seen.add(path)
            if shared is not None:
                yield Candidate.walked(path, language, shared)
            else:
                yield Candidate(display_dir + entry.name, path, language, False)
        for sub, sub_display in reversed(subdirs):
            stack.append((sub, chain_here, sub_display))


def _is_regular_file(entry) -> bool:
    """Is this directory entry a regular file (not following links)? Most often answered
    from the listing's file type, without a `stat`."""
    try:
        return entry.is_file(follow_symlinks=False)
    except OSError:
        return False


def _display_prefix(given: str) -> str:
    norm = os.path.normpath(given)
    return "" if norm == "." else norm + os.sep


def _rel(given: str, abspath: str, path: str) -> str:
    rel = os.path.relpath(path, abspath)
    return os.path.normpath(os.path.join(given, rel))
