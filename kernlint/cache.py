"""A content cache of per-file results, in `.kernlint_cache/` (or `--cache-dir`).

What is stored: a file's findings (with their fixes), warnings and notes, and the FFI wrapper
targets a Python file names, each under a key made of the kernlint version, the cache format
and the effective settings for the file (enabled rules, JIT or not, cross-file facts;
the source of the local rules among them). An
entry also keeps the file's size, mtime and SHA-256: when size and mtime are unchanged the
file is not even read. An entry stored while its file's mtime was recent (an edit within the
same timestamp tick keeps size and mtime) is used only after the file's bytes hash to the
stored digest again.

The file is data, never code: ASCII JSON, a header line and then the entries,

    {"format":"kernlint-cache","version":2,"kernlint":"0.1.0","mac":"<hex>"}
    {"<settings key>":{"<absolute path>":"<size> <mtime_ns> <racy> <sha256> <mac> <payload>"}}

each entry one string (split only when it is looked up; racy: 0 or 1), its payload JSON text
decoded only when the entry is used (`encode_result`, `encode_targets`). Each entry's mac is an
HMAC-SHA256 over the format version, its key, its path and its other fields; the header's mac
covers the whole entries text. The HMAC key is a
per-user secret kept outside the working tree (`$XDG_CACHE_HOME/kernlint/cache-key`, else
`~/.cache/kernlint/cache-key`, mode 0600, created on first use). A cache file made elsewhere
(another machine, a pull request) fails the check and is ignored, so it cannot change results;
a damaged one loses only its damaged entries. When the header's mac matches, entries are not
checked one by one (a warm run's fast path). Whatever does not check out (a path that is not a
regular file or is over `MAX_BYTES`, invalid JSON, another version, a wrong type or shape, a mac
that does not match) is dropped without a message: results are always those of a run without
the cache. When the key cannot be read or created, the cache is not used.

Beside the results file, `run-<signature>.json` files keep run records (kernlint.runner: a whole
run's results and what making their keys asked the file system), at most RUN_RECORDS of them,
each a header line (its mac over the record's signature and body) and the record; one that does
not check out is not used. The results file is read only when a run needs it: a replayed run
reads its record alone.

The file is written atomically (temp file + rename), so concurrent runs never see a torn file
(the last writer wins). The directory gets a `.gitignore` holding `*`.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import stat
import time

from . import __version__
from .model import APPLICABILITIES, SEVERITIES, Diagnostic, Edit, Fix

FORMAT = 2
MAX_BYTES = 256 * 1024 * 1024  # a larger cache file is not read
KEY_BYTES = 32
# An entry whose file's mtime is this close to the run's start (or later) is "racy": the
# coarsest common timestamp granularity (FAT: 2 s) could hide a same-size edit.
RACY_NS = 2_000_000_000
EMPTY_RESULT = "[[],[],[]]"
# Run records (kernlint.runner: a whole run's results and what making its keys asked the file
# system): one file each, `run-<signature>.json`; at most RUN_RECORDS of them.
RUN_PREFIX = "run-"
RUN_RECORDS = 4
_RUN_MAGIC = "kernlint-run"
EMPTY_TARGETS = "[]"
_HEADER_MAX = 1024
_MAGIC = "kernlint-cache"
_OPEN_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
_dumps = json.JSONEncoder(separators=(",", ":"), check_circular=False).encode  # (ASCII)


_CODE_KEY: list[str] = []


def code_key() -> str:
    """The size and modification time of kernlint's own modules and rules: an edited rule (a
    development install, a reinstall of the same version) is never answered from results it
    did not compute."""
    if not _CODE_KEY:
        import kernlint_rules

        from . import __file__ as package_file

        parts = []
        dirs = [os.path.dirname(package_file)] + list(kernlint_rules.__path__)
        for top in dirs:
            for directory, subdirs, files in os.walk(top):
                subdirs[:] = sorted(d for d in subdirs if d != "__pycache__")
                for name in sorted(files):
                    if name.endswith(".py"):
                        try:
                            st = os.stat(os.path.join(directory, name))
                        except OSError:
                            continue
                        parts.append(f"{name}:{st.st_size}:{st.st_mtime_ns}")
        _CODE_KEY.append(hashlib.sha256("|".join(parts).encode()).hexdigest()[:16])
    return _CODE_KEY[0]


def settings_key(settings, rules, is_jit: bool, project: str = "") -> str:
    h = hashlib.sha256()
    policy = getattr(settings, "aiter_import_policy", "")
    if getattr(settings, "semantic", False):
        policy += "|semantic|" + ",".join(getattr(settings, "include_paths", []))
        policy += "|" + "\0".join(getattr(settings, "defines", []))
    policy += f"|cap={getattr(settings, 'max_file_size', '')}"  # (a lower cap skips files)
    policy += "|conv=" + getattr(settings, "conventions_key", "")  # (the house conventions)
    h.update(f"{__version__}|{FORMAT}|{code_key()}|{int(is_jit)}|{project}|{policy}|".encode())
    h.update(",".join(r.code for r in rules).encode())
    from .registry import local_key

    h.update(local_key(rules).encode())  # the source of the local rules among them ("": none)
    return h.hexdigest()[:24]


def content_hash(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


# -- the key --------------------------------------------------------------------------------
def key_path() -> str | None:
    """Where the HMAC key lives: `$XDG_CACHE_HOME/kernlint/cache-key` (an absolute
    XDG_CACHE_HOME only, as the XDG spec says), else `~/.cache/kernlint/cache-key`."""
    base = os.environ.get("XDG_CACHE_HOME", "")
    if not os.path.isabs(base):
        home = os.path.expanduser("~")
        if not os.path.isabs(home):
            return None
        base = os.path.join(home, ".cache")
    return os.path.join(base, "kernlint", "cache-key")


def _read_regular(path: str, limit: int) -> bytes | None:
    """The bytes of `path` if it is a regular file of at most `limit` bytes, else None (opened
    without blocking, so a FIFO is never waited on; at most its size + 1 bytes are read).
    Raises OSError when it cannot be opened."""
    fd = os.open(path, _OPEN_FLAGS)
    with os.fdopen(fd, "rb") as fh:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_size > limit:
            return None
        data = fh.read(st.st_size + 1)
    return data if len(data) == st.st_size else None  # (None: it changed while read)


def load_key(path: str | None = None) -> bytes | None:
    """The per-user HMAC key, created (mode 0600, atomically) when missing or malformed;
    None when it can be neither read nor created."""
    path = path or key_path()
    if path is None:
        return None
    try:
        data = _read_regular(path, 4 * KEY_BYTES)
    except FileNotFoundError:
        return _create_key(path, replace=False)
    except OSError:
        return None
    if data is not None and len(data) == KEY_BYTES:
        return data
    return _create_key(path, replace=True)


def _create_key(path: str, replace: bool) -> bytes | None:
    directory = os.path.dirname(path)
    key = os.urandom(KEY_BYTES)
    tmp = os.path.join(directory, f".cache-key-{os.getpid()}-{os.urandom(6).hex()}")
    try:
        os.makedirs(directory, mode=0o700, exist_ok=True)
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0), 0o600)
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(key)
            if replace:
                os.replace(tmp, path)
            else:
                try:
                    os.link(tmp, path)  # fails if another run made one meanwhile: use that
                except FileExistsError:
                    other = _read_regular(path, 4 * KEY_BYTES)
                    return other if other is not None and len(other) == KEY_BYTES else None
                except OSError:  # (no hard links on this file system)
                    os.replace(tmp, path)
        finally:
            try:
                os.unlink(tmp)
            except OSError:
                pass
    except OSError:
        return None
    return key


# -- payloads -------------------------------------------------------------------------------
def encode_result(diagnostics, warnings, notes) -> str:
    """A file's findings (path left out: it is the file's display path when read back),
    warnings and notes, as JSON text."""
    if not (diagnostics or warnings or notes):
        return EMPTY_RESULT
    rows = []
    for d in diagnostics:
        f = d.fix
        fix = None
        if f is not None:
            fix = [f.applicability, f.title, [[e.start, e.end, e.content] for e in f.edits]]
        rows.append(
            [d.line, d.column, d.end_line, d.end_column, d.code, d.name, d.message, d.severity]
            + [d.start, d.end, fix]
        )
    return _dumps([rows, list(warnings), list(notes)])


def decode_result(payload: str, path: str):
    """(diagnostics, warnings, notes) from `encode_result`'s text, the diagnostics given
    `path`; None unless every field has the type and shape `encode_result` writes."""
    if payload == EMPTY_RESULT:
        return [], [], []
    obj = _loads(payload)
    if type(obj) is not list or len(obj) != 3:
        return None
    rows, warnings, notes = obj
    if type(rows) is not list or not _strings(warnings) or not _strings(notes):
        return None
    diagnostics = []
    for row in rows:
        d = _diagnostic(row, path)
        if d is None:
            return None
        diagnostics.append(d)
    return diagnostics, warnings, notes


def encode_targets(targets) -> str:
    return _dumps(sorted(targets)) if targets else EMPTY_TARGETS


def decode_targets(payload: str) -> frozenset[str] | None:
    if payload == EMPTY_TARGETS:
        return frozenset()
    obj = _loads(payload)
    return frozenset(obj) if _strings(obj) else None


def _loads(text):
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        return None


def _strings(value) -> bool:
    if type(value) is not list:
        return False
    for s in value:
        if type(s) is not str:
            return False
    return True


def _diagnostic(row, path: str) -> Diagnostic | None:
    if type(row) is not list or len(row) != 11:
        return None
    line, column, end_line, end_column, code, name, message, severity, start, end, fix = row
    if not (
        type(line) is int
        and type(column) is int
        and type(end_line) is int
        and type(end_column) is int
        and type(start) is int
        and type(end) is int
        and type(code) is str
        and type(name) is str
        and type(message) is str
        and type(severity) is str
        and severity in SEVERITIES
    ):
        return None
    if fix is not None:
        fix = _fix(fix)
        if fix is None:
            return None
    return Diagnostic(
        path, line, column, end_line, end_column, code, name, message, severity, fix, start, end
    )


def _fix(value) -> Fix | None:
    if type(value) is not list or len(value) != 3:
        return None
    applicability, title, edits = value
    if applicability not in APPLICABILITIES or type(title) is not str or type(edits) is not list:
        return None
    out = []
    for edit in edits:
        if type(edit) is not list or len(edit) != 3:
            return None
        start, end, content = edit
        if not (type(start) is int and type(end) is int and 0 <= start <= end):
            return None
        if type(content) is not str:
            return None
        out.append(Edit(start, end, content))
    return Fix(tuple(out), applicability, title)


# -- the cache file -------------------------------------------------------------------------
class Cache:
    def __init__(self, directory: str, key: bytes | None = None) -> None:
        """`key`: the HMAC key (default: the per-user one, see `load_key`)."""
        self.directory = directory
        self.path = os.path.join(directory, f"results-v{FORMAT}-{__version__}.json")
        self._entries: dict | None = None  # (read on first use: a replayed run needs none)
        self.dirty = False
        self.trusted = False  # the header's mac matched: entries need no check of their own
        self.started = time.time_ns()
        self.key = key if key is not None else load_key()
        self._runs: dict[str, str] = {}  # run records to write: signature -> payload

    @property
    def entries(self) -> dict:
        if self._entries is None:
            self.load()
        return self._entries

    @entries.setter
    def entries(self, value: dict) -> None:
        self._entries = value

    def load(self) -> None:
        """Read the results file (once; `entries` reads it on first use)."""
        if self._entries is None:
            self._entries = {}
            if self.key is not None:
                self._load()

    def _mac(self, key: str, path: str, fields: str) -> str:
        """The mac of an entry: the format version, its key and path (NUL-separated: a key or
        path holding a NUL never checks out) and its fields but the mac."""
        msg = f"{FORMAT}\0{key}\0{path}\0{fields}".encode("utf-8", "surrogatepass")
        return hmac.digest(self.key, msg, "sha256").hex()

    def _load(self) -> None:
        try:
            data = _read_regular(self.path, MAX_BYTES)
        except OSError:
            return
        if data is None:
            return
        end = data.find(b"\n", 0, _HEADER_MAX)
        if end < 0:
            return
        header = _loads(data[:end])
        if not (
            type(header) is dict
            and header.get("format") == _MAGIC
            and type(header.get("version")) is int
            and header.get("version") == FORMAT
            and header.get("kernlint") == __version__
        ):
            return
        body = data[end + 1 :]
        mac = header.get("mac")
        self.trusted = (
            type(mac) is str
            and mac.isascii()
            and hmac.compare_digest(hmac.digest(self.key, body, "sha256").hex(), mac)
        )
        # (Read as Latin-1: the file is ASCII, and a damaged byte then only spoils the string
        # holding it, whose entry fails its mac, instead of the whole file's UTF-8.)
        entries = _loads(body.decode("latin-1"))
        if type(entries) is dict:
            self.entries = entries
        if not self.trusted:
            self.dirty = True  # rewritten at the end, with only the entries that check out

    def _checks_out(self, key: str, path: str, e) -> bool:
        """An entry read from a file whose header's mac did not match: its own mac."""
        if type(e) is not str or "\0" in key or "\0" in path:
            return False
        parts = e.split(" ", 5)
        if len(parts) != 6:
            return False
        size, mtime, racy, digest, mac, payload = parts
        return (
            size.isascii()
            and size.isdigit()
            and mtime.isascii()
            and mtime.isdigit()
            and racy in ("0", "1")
            and mac.isascii()
            and hmac.compare_digest(
                self._mac(key, path, f"{size} {mtime} {racy} {digest} {payload}"), mac
            )
        )

    def lookup_stat(self, abspath: str, key: str, st) -> str | None:
        """The payload stored for `abspath` under `key` if the file's size and mtime are those
        in `st` (and, for a racy entry, its bytes still hash to the stored digest)."""
        group = self.entries.get(key)
        if type(group) is not dict:
            return None
        e = group.get(abspath)
        if type(e) is not str:
            return None
        # An entry: "size mtime_ns racy sha256 mac payload" (decimal integers, hex digests).
        parts = e.split(" ", 5)
        if len(parts) != 6:
            return None
        size, mtime, racy, digest, _mac, payload = parts
        if size != str(st.st_size) or mtime != str(st.st_mtime_ns):
            return None
        if not self.trusted and not self._checks_out(key, abspath, e):
            del group[abspath]
            return None
        if racy != "0":
            if not self._same_bytes(abspath, st, digest):
                return None
            if st.st_mtime_ns < self.started - RACY_NS:  # no longer racy: a plain entry
                self.store(abspath, key, st, digest, payload)
        return payload

    @staticmethod
    def _same_bytes(abspath: str, st, digest: str) -> bool:
        if not digest:
            return False
        try:
            data = _read_regular(abspath, st.st_size)
        except OSError:
            return False
        return data is not None and content_hash(data) == digest

    def store(self, abspath: str, key: str, st, digest: str, payload: str) -> None:
        """Keep `payload` (JSON text) for `abspath` under `key`; `st`: the file's stat, taken
        before its bytes (whose SHA-256 is `digest`, or "") were read."""
        if self.key is None:
            return
        mtime = st.st_mtime_ns
        racy = int(mtime >= self.started - RACY_NS)
        fields = f"{st.st_size} {mtime} {racy} {digest}"
        group = self.entries.get(key)
        if type(group) is not dict:
            group = self.entries[key] = {}
        mac = self._mac(key, abspath, f"{fields} {payload}")
        group[abspath] = f"{fields} {mac} {payload}"
        self.dirty = True

    def _run_path(self, signature: str) -> str:
        return os.path.join(self.directory, f"{RUN_PREFIX}{signature}.json")

    def lookup_run(self, signature: str) -> str | None:
        """The run record kept under `signature` (kernlint.runner), or None: a file of its own
        (a header line with its mac, then the record), read without the results file."""
        if self.key is None or not signature.isalnum():
            return None
        try:
            data = _read_regular(self._run_path(signature), MAX_BYTES)
        except OSError:
            return None
        if data is None:
            return None
        end = data.find(b"\n", 0, _HEADER_MAX)
        header = _loads(data[:end]) if end >= 0 else None
        if not (
            type(header) is dict
            and header.get("format") == _RUN_MAGIC
            and header.get("version") == FORMAT
            and header.get("kernlint") == __version__
            and header.get("signature") == signature
            and type(header.get("mac")) is str
        ):
            return None
        body = data[end + 1 :]
        if not hmac.compare_digest(self._run_mac(signature, body), header["mac"]):
            return None
        try:
            return body.decode("ascii")
        except UnicodeDecodeError:
            return None

    def store_run(self, signature: str, payload: str) -> None:
        """Keep a run record (ASCII JSON text), written by `save`; at most RUN_RECORDS of them
        stay in the directory (the least recently written go)."""
        if self.key is not None and signature.isalnum() and payload.isascii():
            self._runs[signature] = payload

    def _run_mac(self, signature: str, body: bytes) -> str:
        """The mac of a run record: its kind, its signature and its body (NUL-separated)."""
        msg = _RUN_MAGIC.encode() + b"\0" + signature.encode() + b"\0" + body
        return hmac.digest(self.key, msg, "sha256").hex()

    def _save_runs(self) -> None:
        for signature, payload in self._runs.items():
            body = payload.encode("ascii")
            header = {
                "format": _RUN_MAGIC,
                "version": FORMAT,
                "kernlint": __version__,
                "signature": signature,
                "mac": self._run_mac(signature, body),
            }
            _write_atomically(self._run_path(signature), _dumps(header).encode() + b"\n", body)
        self._runs.clear()
        try:  # (the oldest records beyond RUN_RECORDS are removed)
            found = []
            with os.scandir(self.directory) as it:
                for e in it:
                    if e.name.startswith(RUN_PREFIX) and e.name.endswith(".json"):
                        found.append((e.stat(follow_symlinks=False).st_mtime_ns, e.name))
            for _, name in sorted(found, reverse=True)[RUN_RECORDS:]:
                os.unlink(os.path.join(self.directory, name))
        except OSError:
            pass

    def _checked_entries(self) -> dict:
        out = {}
        for key, group in self.entries.items():
            if type(group) is dict:
                kept = {p: e for p, e in group.items() if self._checks_out(key, p, e)}
                if kept:
                    out[key] = kept
        return out

    def save(self) -> None:
        """Write the results file (when it changed) and the run records kept; a cache that
        cannot be written is only a slower next run."""
        if self.key is None or not (self.dirty or self._runs):
            return
        try:
            os.makedirs(self.directory, exist_ok=True)
            _write_gitignore(self.directory)
        except OSError:
            return
        if self.dirty:
            entries = self.entries if self.trusted else self._checked_entries()
            body = _dumps(entries).encode()
            mac = hmac.digest(self.key, body, "sha256").hex()
            header = {"format": _MAGIC, "version": FORMAT, "kernlint": __version__, "mac": mac}
            try:
                _write_atomically(self.path, _dumps(header).encode() + b"\n", body)
            except OSError:
                pass
        if self._runs:
            try:
                self._save_runs()
            except OSError:
                pass


def _write_atomically(path: str, *parts: bytes) -> None:
    """Write `path` as a temporary file beside it, then rename it into place."""
    import tempfile  # (a warm run that stores nothing does not import it)

    fd, tmp = tempfile.mkstemp(prefix=".kernlint-", dir=os.path.dirname(path))
    try:
        with os.fdopen(fd, "wb") as fh:
            for part in parts:
                fh.write(part)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def _write_gitignore(directory: str) -> None:
    try:  # (O_EXCL: an existing name, a dangling symlink included, is left alone)
        fd = os.open(
            os.path.join(directory, ".gitignore"), os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644
        )
    except FileExistsError:
        return
    with os.fdopen(fd, "w") as fh:
        fh.write("# Created by kernlint\n*\n")
