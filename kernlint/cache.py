"""A content cache of per-file results, in `.kernlint_cache/` (or `--cache-dir`).

Key: the file's bytes (SHA-256), the kernlint version and the effective settings for the file
(enabled rules, JIT or not). A stored entry also keeps the file's size and mtime: when both are
unchanged the file is not even read; otherwise it is read and hashed, and the entry is used if
the hash matches. The cache is one pickle per settings fingerprint, written atomically (temp file
+ rename), so concurrent runs never see a torn file (the last writer wins). The directory gets a
`.gitignore` holding `*`.
"""

from __future__ import annotations

import hashlib
import os
import pickle

from . import __version__

FORMAT = 1


def settings_key(settings, rules, is_jit: bool, project: str = "") -> str:
    h = hashlib.sha256()
    policy = getattr(settings, "aiter_import_policy", "")
    if getattr(settings, "semantic", False):
        policy += "|semantic|" + ",".join(getattr(settings, "include_paths", []))
        policy += "|" + "\0".join(getattr(settings, "defines", []))
    h.update(f"{__version__}|{FORMAT}|{int(is_jit)}|{project}|{policy}|".encode())
    h.update(",".join(r.code for r in rules).encode())
    return h.hexdigest()[:24]


def content_hash(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


class Cache:
    def __init__(self, directory: str) -> None:
        self.directory = directory
        self.path = os.path.join(directory, f"results-v{FORMAT}-{__version__}.pickle")
        self.entries: dict[tuple[str, str], tuple] = {}
        self.dirty = False
        try:
            with open(self.path, "rb") as fh:
                loaded = pickle.load(fh)
            if isinstance(loaded, dict):
                self.entries = loaded
        except (OSError, pickle.UnpicklingError, EOFError, AttributeError, ValueError, TypeError):
            self.entries = {}

    def lookup_stat(self, abspath: str, key: str, st) -> tuple | None:
        entry = self.entries.get((abspath, key))
        if entry is None:
            return None
        size, mtime, _digest, payload = entry
        if size == st.st_size and mtime == st.st_mtime_ns:
            return payload
        return None

    def lookup_hash(self, abspath: str, key: str, digest: str) -> tuple | None:
        entry = self.entries.get((abspath, key))
        if entry is not None and entry[2] == digest:
            return entry[3]
        return None

    def store(self, abspath: str, key: str, st, digest: str, payload: tuple) -> None:
        self.entries[(abspath, key)] = (st.st_size, st.st_mtime_ns, digest, payload)
        self.dirty = True

    def save(self) -> None:
        if not self.dirty:
            return
        try:
            os.makedirs(self.directory, exist_ok=True)
            ignore = os.path.join(self.directory, ".gitignore")
            if not os.path.exists(ignore):
                with open(ignore, "w") as fh:
                    fh.write("# Created by kernlint\n*\n")
            import tempfile  # (a warm run that stores nothing does not import it)

            fd, tmp = tempfile.mkstemp(prefix=".results-", dir=self.directory)
            with os.fdopen(fd, "wb") as fh:
                pickle.dump(self.entries, fh, protocol=pickle.HIGHEST_PROTOCOL)
            os.replace(tmp, self.path)
        except OSError:
            pass  # a cache that cannot be written is only a slower next run
