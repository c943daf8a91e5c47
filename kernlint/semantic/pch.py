"""Precompiled headers for the semantic pass: the prelude and a shared header, parsed once.

Nearly every SGLang JIT file starts with the same header (`#include <sgl_kernel/tensor.h>`,
which brings in tvm-ffi and most of the standard library): 1.5 s of the 1.8 s libclang spends
on a file. Here the prelude plus one include (or the prelude alone) is parsed once into a
precompiled header (PCH), and the files whose parse begins that way are parsed with
`-include-pch`:

* a file's first include (`#include <...>`, or `#include "..."` found beside the file): its
  line is blanked (same length, same line breaks) and the PCH stands for it;
* or the first include of that header, and so on down the chain (`chain`: a file starting
  with a local header that starts with `<sgl_kernel/tensor.h>`): the header reads it where
  the PCH already did, and skips it.

A parse with a PCH must be the parse without it, so a PCH is used only where it is exactly the
beginning of the file's parse (`use_for`):

* the file, and each header of the chain before the include, start with it: before it only
  comments, blank lines and `#pragma once` (in the file also closed `#if`...`#endif` blocks of
  `#error` lines, testing only names the PCH's headers neither define nor undefine);
* the file's directory (the first include path of its parse, left out of the PCH's) holds
  nothing a lookup of the PCH's headers could find (the first path component of every name
  they looked up on the include paths or tested with `__has_include`);
* neither the file nor a header of the chain before the include is one of the PCH's files (it
  would be read out of turn), and an include down the chain has an include guard or `#pragma
  once` (clang's own verdict, from the PCH's parse), so the header's reading is skipped;
* the PCH's parse had no error (its errors would not be reported again in the file's parse,
  and an error changes how clang goes on);
* its headers, and what a lookup of their names finds, are unchanged: each PCH is stored with
  a manifest of its input files (size and SHA-256: each file is hashed again, once per process
  and run, before a PCH is used) and of the lookups (which of the names exist in which of the
  directories searched); the manifest and the PCH's own SHA-256 are under an HMAC with the
  cache's key. Any difference, a manifest that does not check out, or a PCH that libclang
  cannot load, and the file is parsed without it: the plain parse is always the fallback.

Which PCHs are built is planned per run (`prepare`, before the runner forks its workers), by
their estimated worth (`_choose`: header bytes the files save against the cost of a build);
the prelude's serves the other files. A worker builds a PCH when it first needs it (another
worker that wants it meanwhile waits for it). PCHs live in `<cache dir>/semantic/`, keyed by
the compile arguments, the include, the libclang version and kernlint's semantic code, and
are reused by later runs while their manifests check out (the least recently used go beyond
`MAX_ENTRIES` or `MAX_TOTAL_BYTES`); with `--no-cache` they go in a temporary directory
removed after the run. `KERNLINT_SEMANTIC_PCH=0` turns them off.
"""

from __future__ import annotations

import atexit
import ctypes
import errno
import hashlib
import hmac
import json
import os
import re
import shutil
import tempfile
import time
from collections import Counter

from ..lazyre import lazy_compile

FORMAT = 1
MAX_ENTRIES = 24
MAX_TOTAL_BYTES = 768 * 1024 * 1024
# A run this small builds PCHs even for one file (with a cache: the next run reuses them; the
# edit-and-check loop and pre-commit runs are small).
SMALL_RUN = 8
_HERE = os.path.dirname(os.path.abspath(__file__))

# The run's plan (set by `prepare` in the parent, inherited by the forked workers).
_STATE: dict = {"dir": None, "key": None, "temp_owner": None, "plan": {}}
# Per process: node key -> Manifest (usable or not) once checked; absent: not known yet.
_MEMO: dict = {}
_LISTDIR: dict = {}  # directory -> frozenset of its entries (per process)


# -- how a file begins -------------------------------------------------------------------------
_INCLUDE = lazy_compile(
    rb"#[ \t]*include[ \t]*(<[^<>\n\"]+>|\"[^<>\n\"]+\")"
    rb"[ \t]*(?://[^\n]*|/\*(?:(?!\*/)[^\n])*\*/[ \t]*)?\r?$"
)
_PRAGMA_ONCE = lazy_compile(rb"#[ \t]*pragma[ \t]+once[ \t]*\r?$")
_DIRECTIVE = lazy_compile(rb"#[ \t]*(\w+)")
_IDENTIFIER = lazy_compile(rb"[A-Za-z_]\w*")
# Conditionals a file may open and close before its first include (`#ifndef USE_ROCM` /
# `#error ...` / `#endif`): evaluated after the PCH instead of before its header, so only
# where the PCH's files define none of the names they test.
_CONDITIONALS = {b"if": 1, b"ifdef": 1, b"ifndef": 1, b"elif": 0, b"else": 0, b"endif": -1}
_TESTED = (b"if", b"ifdef", b"ifndef", b"elif")
_MAX_CHAIN = 8


class Lead:
    """The include a file starts with: `operand` as a PCH spells it (`<name>`, or a quoted
    include found beside the file as its absolute `"path"`), the directive's bytes
    (`start`, `end`), and the macro names conditionals before it test."""

    __slots__ = ("operand", "start", "end", "macros")

    def __init__(self, operand: str, start: int, end: int, macros: frozenset) -> None:
        self.operand = operand
        self.start = start
        self.end = end
        self.macros = macros


def lead(data: bytes, directory: str, conditionals: bool = True) -> Lead | None:
    """The include a file in `directory` starts with, after blank lines, comments, `#pragma
    once` and (with `conditionals`) closed `#if`...`#endif` blocks of `#error`/`#warning`
    lines; None when something else comes first. A `"name"` include is looked up beside the
    file first: spelled `"directory/name"` when that file exists, else `<name>` (then it is
    searched for on the include paths, as an angle include is)."""
    i, n, depth = 0, len(data), 0
    macros: set[str] = set()
    while i < n:
        c = data[i]
        if c in b" \t\r\n\f\v":
            i += 1
            continue
        if data.startswith(b"//", i):
            j = data.find(b"\n", i)
            if j < 0 or data[j - 1 : j] == b"\\" or data[j - 2 : j] == b"\\\r":
                return None  # (a comment continued on the next line)
            i = j
            continue
        if data.startswith(b"/*", i):
            j = data.find(b"*/", i + 2)
            if j < 0:
                return None
            i = j + 2
            continue
        if c != 0x23:  # not `#`
            return None
        j = data.find(b"\n", i)
        if j < 0:
            return None
        line = data[i:j]
        if line.rstrip(b"\r").endswith(b"\\"):
            return None  # (a directive continued on the next line)
        m = _INCLUDE.match(line)
        if m is not None:
            if depth:
                return None
            return _lead_of(m.group(1), i, i + m.end(1), directory, macros)
        if _PRAGMA_ONCE.match(line) is not None:
            i = j
            continue
        d = _DIRECTIVE.match(line)
        word = d.group(1) if d is not None else b""
        if not conditionals or not (word in _CONDITIONALS or word in (b"error", b"warning")):
            return None
        step = _CONDITIONALS.get(word, 0)
        if (word in (b"elif", b"else", b"endif")) and depth == 0:
            return None
        depth += step
        if word in _TESTED:
            names = {t.decode() for t in _IDENTIFIER.findall(line, d.end())}
            if "__COUNTER__" in names:
                return None
            macros |= names - {"defined"}
        i = j
    return None


def _lead_of(raw: bytes, start: int, end: int, directory: str, macros) -> Lead | None:
    try:
        operand = raw.decode("ascii")
    except UnicodeDecodeError:
        return None
    if operand.startswith('"'):
        name = operand[1:-1]
        beside = os.path.join(directory, name)
        if os.path.isabs(name) or os.path.isfile(beside):
            operand = f'"{name if os.path.isabs(name) else beside}"'
            if "\n" in operand[1:-1] or '"' in operand[1:-1]:
                return None
        else:
            operand = f"<{name}>"
    return Lead(operand, start, end, frozenset(macros))


def blank_spans(data: bytes, spans) -> bytes:
    out = bytearray(data)
    for start, end in spans:
        out[start:end] = b" " * (end - start)
    return bytes(out)


_HEADER_LEADS: dict = {}  # path -> ((size, mtime_ns), Lead | None), per process


def _header_lead(path: str) -> Lead | None:
    """The include a header starts with (no conditionals before it), from its host view."""
    from . import host_view

    try:
        st = os.stat(path)
    except OSError:
        return None
    stamp = (st.st_size, st.st_mtime_ns)
    known = _HEADER_LEADS.get(path)
    if known is not None and known[0] == stamp:
        return known[1]
    try:
        with open(path, "rb") as fh:
            data = fh.read(1 << 16)
    except OSError:
        return None
    found = lead(host_view(data), os.path.dirname(path), conditionals=False)
    _HEADER_LEADS[path] = (stamp, found)
    return found


def _resolve(operand: str, directory: str, search) -> str | None:
    """The file an include resolves to in the parse of a file in `directory` (the include
    paths in order: the directory, then `search`), when it is on them; else None."""
    name = operand[1:-1]
    if operand.startswith('"'):
        return name if os.path.isfile(name) else None
    for d in (directory, *search):
        path = os.path.join(d, name)
        if os.path.isfile(path):
            return path
    return None


def chain(first: Lead, directory: str, search) -> list[tuple[str, list[str]]]:
    """The includes a file's parse opens one inside the other before anything else: its
    first include, that header's first include, and so on, each (operand, the files it is
    reached through: the headers opened before it, outermost first)."""
    out = [(first.operand, [])]
    through: list[str] = []
    operand = first.operand
    for _ in range(_MAX_CHAIN):
        path = _resolve(operand, directory, search)
        if path is None or path in through:
            break
        nxt = _header_lead(path)
        if nxt is None:
            break
        through = [*through, path]
        operand = nxt.operand
        out.append((operand, through))
    return out


# -- the plan -------------------------------------------------------------------------------
class Node:
    """One PCH: the prelude plus `prefix` (no include or one, as `lead` spells it), for one
    argument list."""

    __slots__ = ("key", "prefix", "build_args", "roots", "build")

    def __init__(self, key, prefix, build_args, roots, build) -> None:
        self.key = key
        self.prefix = prefix
        self.build_args = build_args
        self.roots = roots  # the include roots whose header views the parse hands libclang
        self.build = build  # may this run build it (else: used only when stored already)


def _code_fingerprint() -> str:
    h = hashlib.sha256()
    for name in ("__init__.py", "pch.py", "prelude.h"):
        try:
            with open(os.path.join(_HERE, name), "rb") as fh:
                h.update(fh.read())
        except OSError:
            h.update(b"?")
    return h.hexdigest()


def _libclang_version() -> str:
    from . import cindex

    ci = cindex()
    parts = []
    try:
        fn = ci.conf.lib.clang_getClangVersion
        fn.argtypes = []
        fn.restype = ci._CXString
        parts.append(ci._CXString.from_result(fn()).decode("utf-8", "replace"))
    except Exception:
        pass
    name = getattr(ci.conf.lib, "_name", None) or ""
    try:
        st = os.stat(name)
        parts.append(f"{os.path.realpath(name)}:{st.st_size}:{st.st_mtime_ns}")
    except (OSError, TypeError):
        parts.append(str(name))
    return "|".join(parts)


def prepare(items, cache=None) -> None:
    """Plan the run's PCHs. `items`: (absolute path, include paths, defines) of the C++/CUDA
    files the semantic pass may parse; `cache`: the run's `kernlint.cache.Cache` (its directory
    and key keep PCHs for later runs) or None (a temporary directory for this run).

    Each file can use the PCH of any include of its chain (`chain`), the prelude's last;
    which ones are built is chosen by their estimated worth (`_choose`); in a small run with a
    cache, each file's first include's (for the next runs)."""
    finish()
    _MEMO.clear()
    _LISTDIR.clear()
    _HEADER_LEADS.clear()
    _DIGESTS.clear()
    _SCANNED.clear()
    _PRELUDE_CLOSURE.clear()
    if os.environ.get("KERNLINT_SEMANTIC_PCH", "1") == "0":
        return  # (turned off: every file parsed on its own)
    from . import SemanticUnavailable, _build_args, _view_roots, host_view

    try:
        version = _libclang_version()
    except SemanticUnavailable:
        return  # (the parse reports it)
    fingerprint = _code_fingerprint()
    wanted: dict[str, list] = {}  # path -> its candidate node keys, outermost first
    specs: dict[str, tuple] = {}
    targets: dict[str, tuple] = {}  # key -> (the file its include reads, include paths)
    for path, extra, defines in items:
        try:
            with open(path, "rb") as fh:
                head = fh.read(1 << 16)
        except OSError:
            continue
        directory = os.path.dirname(path)
        args = _build_args(directory, extra, defines)
        roots = _view_roots(directory)
        views = tuple(sorted(p for root in roots for p in _views_of(root)))
        first = lead(host_view(head), directory)
        search = tuple(_search_dirs(args))
        operands = [op for op, _ in chain(first, directory, search)] if first else []
        keys = []
        for prefix in [(op,) for op in operands] + [()]:
            key = _node_key(version, fingerprint, args, views, prefix)
            if key not in specs:
                specs[key] = (prefix, args, roots)
                targets[key] = (_resolve(prefix[0], directory, search) if prefix else None, search)
            keys.append(key)
        wanted[path] = keys
    small = len(wanted) <= SMALL_RUN and cache is not None
    chosen = {p: keys[0] for p, keys in wanted.items()} if small else _choose(wanted, targets)
    picked = Counter(chosen.values())
    built = {k for k, n in picked.items() if n >= 2 or small}
    nodes = {k: Node(k, *specs[k], build=k in built) for k in specs}
    # Each file tries its chosen PCH first, then the others of its chain that exist.
    _STATE["plan"] = {
        path: tuple(nodes[k] for k in [chosen[path]] + [k for k in keys if k != chosen[path]])
        for path, keys in wanted.items()
    }
    if cache is not None and getattr(cache, "key", None):
        _STATE["dir"] = os.path.join(cache.directory, "semantic")
        _STATE["key"] = cache.key
    elif built:
        try:
            _STATE["dir"] = tempfile.mkdtemp(prefix="kernlint-pch-")
        except OSError:
            _STATE["plan"] = {}
            return
        _STATE["key"] = os.urandom(32)
        _STATE["temp_owner"] = os.getpid()
        atexit.register(finish)
    else:
        _STATE["plan"] = {}


# A PCH is built where the parse time the files save exceeds what building it costs: the
# parse of its headers and writing it out, about BUILD_FACTOR times a parse of the headers
# and BUILD_BYTES more (the estimates count header bytes: `_weight`).
BUILD_FACTOR = 1.5
BUILD_BYTES = 200_000


def _choose(wanted: dict, targets: dict) -> dict:
    """Each file's PCH: greedily, the include whose PCH saves the most over its cost (the
    files whose chains hold it each save the header bytes it covers beyond what the PCH
    they have already covers), until none saves more than it costs; the prelude's for the
    rest."""
    users: dict[str, list] = {}
    for path, keys in wanted.items():
        for k in keys[:-1]:
            users.setdefault(k, []).append(path)
    weight = {k: _weight(*targets[k]) for k, paths in users.items() if len(paths) >= 2}
    covered = dict.fromkeys(wanted, 0)
    chosen = {path: keys[-1] for path, keys in wanted.items()}
    while weight:
        gains = {
            k: sum(max(0, w - covered[p]) for p in users[k]) - BUILD_FACTOR * w - BUILD_BYTES
            for k, w in weight.items()
        }
        best = max(gains, key=lambda k: (gains[k], k))
        if gains[best] <= 0:
            break
        w = weight.pop(best)
        for path in users[best]:
            if w > covered[path]:
                covered[path] = w
                chosen[path] = best
    return chosen


_INCLUDES_RE = lazy_compile(
    rb"^[ \t]*#[ \t]*(?:include|include_next|import)[ \t]*([<\"])([^>\"\n]+)[>\"]", re.M
)
_SCANNED: dict = {}  # path -> (size, [(quoted, name)]), per run


def _scan(path: str):
    found = _SCANNED.get(path)
    if found is None:
        try:
            with open(path, "rb") as fh:
                data = fh.read()
        except OSError:
            data = b""
        names = [
            (q == b'"', n.decode("utf-8", "surrogateescape")) for q, n in _INCLUDES_RE.findall(data)
        ]
        found = _SCANNED[path] = (len(data), names)
    return found


def _closure(start: str, search) -> set[str]:
    """The files an include of `start` may read, found on the include paths (conditionals
    ignored; headers of the system directories, which every parse reads, not followed)."""
    seen = {start}
    todo = [start]
    while todo:
        path = todo.pop()
        here = os.path.dirname(path)
        for quoted, name in _scan(path)[1]:
            dirs = (here, *search) if quoted else search
            for d in dirs:
                cand = os.path.join(d, name)
                if cand in seen:
                    break
                if os.path.isfile(cand):
                    seen.add(cand)
                    todo.append(cand)
                    break
    return seen


def _weight(target: str | None, search) -> int:
    """Estimated size of what a PCH of `target` covers beyond the prelude: the bytes of the
    headers it may read that the prelude does not."""
    from . import PRELUDE

    if target is None:
        return 0
    base = _PRELUDE_CLOSURE.get(search)
    if base is None:
        base = _PRELUDE_CLOSURE[search] = _closure(PRELUDE, search)
    return sum(_scan(p)[0] for p in _closure(target, search) - base)


_PRELUDE_CLOSURE: dict = {}


def _views_of(root: str):
    from . import _header_views

    return [p for p, _ in _header_views(root)]


def _node_key(version, fingerprint, args, views, prefix) -> str:
    text = json.dumps([FORMAT, version, fingerprint, list(args), list(views), list(prefix)])
    if any(not os.path.isabs(d) for d in _search_dirs(args)):
        text += "\0" + os.getcwd()  # (a relative include path means something else elsewhere)
    return hashlib.sha256(text.encode("utf-8", "surrogateescape")).hexdigest()[:32]


def finish() -> None:
    """End the run's plan; remove its temporary PCH directory (in the process that made it)."""
    owner, directory = _STATE.get("temp_owner"), _STATE.get("dir")
    if owner is not None and owner == os.getpid() and directory:
        shutil.rmtree(directory, ignore_errors=True)
    _STATE.update(dir=None, key=None, temp_owner=None, plan={})


def planned(path: str) -> bool:
    return bool(_STATE["plan"].get(path))


# -- use ------------------------------------------------------------------------------------
class Use:
    """How to parse one file with a PCH: its arguments and main-file text."""

    def __init__(self, node, manifest, args, text) -> None:
        self.node = node
        self.manifest = manifest
        self.args = args
        self.text = text
        self.path = manifest.pch

    def failed(self) -> None:
        """libclang could not use it: not again in this process."""
        _MEMO[self.node.key] = None


def use_for(path: str, view: bytes, args: list[str]) -> Use | None:
    """A PCH for parsing `path` (its host view `view`, its plain arguments `args`), or None.

    The PCH of the file's first include stands for that include (its line is blanked); the
    PCH of an include further down the chain (a header's first include) stands for that
    include where the header reads it: there it is then skipped, so its file must have an
    include guard (or `#pragma once`), and neither the file nor the headers it is reached
    through may be among the PCH's files. The prelude's PCH needs none of that."""
    nodes = _STATE["plan"].get(path)
    if not nodes or _STATE["dir"] is None:
        return None
    directory = os.path.dirname(path)
    first = lead(view, directory)
    links = dict(chain(first, directory, _search_dirs(args))) if first is not None else {}
    for node in nodes:
        operand = node.prefix[0] if node.prefix else None
        if operand is not None and operand not in links:
            continue  # (the file or a header changed since the plan)
        manifest = _manifest(node)
        if manifest is None or not manifest.usable:
            continue
        if _shadowed(directory, manifest) or manifest.contains(path):
            continue
        if first is not None and not manifest.macros.isdisjoint(first.macros):
            continue  # (its conditionals would read differently after the PCH)
        text = view
        if operand is not None and operand == first.operand:
            text = blank_spans(view, [(first.start, first.end)])
        elif operand is not None:
            if not manifest.guarded or any(manifest.contains(h) for h in links[operand]):
                continue
        return Use(node, manifest, _use_args(args, manifest.pch), text)
    return None


def _use_args(args: list[str], pch: str) -> list[str]:
    out = []
    skip = False
    for i, a in enumerate(args):
        if skip:
            skip = False
            continue
        if a == "-include" and i + 1 < len(args):
            skip = True  # the prelude: in the PCH
            continue
        out.append(a)
    return out + ["-include-pch", pch]


def _listdir(directory: str) -> frozenset:
    found = _LISTDIR.get(directory)
    if found is None:
        try:
            found = frozenset(os.listdir(directory))
        except OSError:
            found = frozenset()
        _LISTDIR[directory] = found
    return found


def _shadowed(directory: str, manifest) -> bool:
    """Could a lookup of the PCH's headers find something in `directory` (the file's own
    directory, searched first in its parse but not in the PCH's)?"""
    if not manifest.first_names.isdisjoint(_listdir(directory)):
        return True
    return any(os.path.exists(os.path.join(directory, n)) for n in manifest.dotted_names)


# -- manifests ------------------------------------------------------------------------------
class Manifest:
    def __init__(self, data: dict, directory: str) -> None:
        self.data = data
        self.usable = bool(data.get("usable"))
        self.pch = os.path.join(directory, data["pch"]) if data.get("pch") else ""
        self.first_names = frozenset(data.get("first", ()))
        self.dotted_names = tuple(data.get("dotted", ()))
        self.macros = frozenset(data.get("macros", ()))
        self.guarded = bool(data.get("guarded"))
        self._inputs = None

    def contains(self, path: str) -> bool:
        if self._inputs is None:
            self._inputs = {os.path.realpath(p) for p, *_ in self.data["inputs"]}
        return os.path.realpath(path) in self._inputs


def _mac(key: bytes, body: str) -> str:
    return hmac.digest(key, f"kernlint-pch\0{FORMAT}\0{body}".encode(), "sha256").hex()


def _manifest_path(key: str) -> str:
    return os.path.join(_STATE["dir"], f"{key}.json")


def _manifest(node: Node):
    if node.key in _MEMO:
        return _MEMO[node.key]
    found = _load(node)
    if found is None and node.build:
        lock = _lock(node.key)
        if lock is None:
            return None  # (another process is still building it, or none can: not now)
        try:
            found = _load(node)  # (built meanwhile by the process that held the lock?)
            if found is None:
                found = _build(node)  # (None: it could not be built; not tried again)
        except Exception:
            found = None
        finally:
            os.close(lock)
    _MEMO[node.key] = found
    if found is not None:
        try:
            os.utime(_manifest_path(node.key))  # (recently used: kept longest)
        except OSError:
            pass
    return found


# How long a process waits for another one building the PCH it wants (a build takes seconds;
# waiting costs no CPU, parsing without the PCH meanwhile costs as much as the build).
LOCK_WAIT_S = 30.0


def _lock(key: str) -> int | None:
    """The build lock of a PCH, once no other process holds it (waiting up to LOCK_WAIT_S);
    None when it cannot be had."""
    import fcntl

    try:
        os.makedirs(_STATE["dir"], mode=0o700, exist_ok=True)
        _gitignore(_STATE["dir"])
        fd = os.open(os.path.join(_STATE["dir"], f"{key}.lock"), os.O_RDWR | os.O_CREAT, 0o600)
    except OSError:
        return None
    deadline = time.monotonic() + LOCK_WAIT_S
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return fd
        except BlockingIOError:
            if time.monotonic() > deadline:
                break
            time.sleep(0.05)
        except OSError:
            break
    os.close(fd)
    return None


def _gitignore(directory: str) -> None:
    """`.gitignore` files holding `*` in the store and the cache directory above it."""
    dirs = (
        [directory] if _STATE["temp_owner"] is not None else [directory, os.path.dirname(directory)]
    )
    for d in dirs:
        try:
            fd = os.open(os.path.join(d, ".gitignore"), os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        except OSError:
            continue  # (there already, or not writable)
        with os.fdopen(fd, "w") as fh:
            fh.write("*\n")


def _load(node: Node):
    """The stored manifest of `node` if it checks out (mac, PCH digest, inputs, lookups)."""
    path = _manifest_path(node.key)
    try:
        with open(path, "rb") as fh:
            raw = fh.read(64 << 20)
        outer = json.loads(raw)
        body, mac = outer["body"], outer["mac"]
        if not isinstance(body, str) or not isinstance(mac, str):
            return None
        if not hmac.compare_digest(mac, _mac(_STATE["key"], body)):
            return None
        data = json.loads(body)
        if data.get("key") != node.key or data.get("format") != FORMAT:
            return None
        if not _inputs_unchanged(data["inputs"]) or _probe(data["probes"]) != data["found"]:
            return None
        if data.get("usable"):
            pch = os.path.join(_STATE["dir"], data["pch"])
            if os.path.dirname(pch) != _STATE["dir"] or _digest_file(pch) != data["pch_sha256"]:
                return None
        return Manifest(data, _STATE["dir"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _digest_file(path: str) -> str | None:
    h = hashlib.sha256()
    try:
        with open(path, "rb") as fh:
            while chunk := fh.read(1 << 20):
                h.update(chunk)
    except OSError:
        return None
    return h.hexdigest()


_DIGESTS: dict = {}  # path -> ((size, mtime_ns, inode), SHA-256), per process and run


def _inputs_unchanged(inputs) -> bool:
    """Do the files hash as they did when the PCH was built? (Each file is hashed once per
    process and run: the PCHs of one tree share most of their files.)"""
    for path, size, digest in inputs:
        try:
            st = os.stat(path)
        except OSError:
            return False
        if st.st_size != size:
            return False
        stamp = (st.st_size, st.st_mtime_ns, st.st_ino)
        known = _DIGESTS.get(path)
        if known is None or known[0] != stamp:
            known = _DIGESTS[path] = (stamp, _digest_file(path))
        if known[1] != digest:
            return False
    return True


def _probe(probes) -> list:
    """For each (directories, names) group: the (directory index, name) pairs that exist."""
    found = []
    for dirs, names in probes:
        for k, d in enumerate(dirs):
            entries = _listdir(d)
            for name in names:
                head = name.split("/", 1)[0]
                if head in entries and (head == name or os.path.exists(os.path.join(d, name))):
                    found.append([k, name])
    return found


# -- building -------------------------------------------------------------------------------
_DIRECTIVE_NAME = lazy_compile(rb"#\s*(?:include|include_next|import)\s*([<\"])([^>\"\n]+)[>\"]")
_DEFINES = lazy_compile(rb"^[ \t]*#[ \t]*(?:define|undef)[ \t]+([A-Za-z_]\w*)", re.M)
_HAS_INCLUDE = lazy_compile(rb"__has_include(?:_next)?\s*\(\s*([<\"])([^>\"\n]+)[>\"]")
# Searched by default before some of the system directories headers are found in.
_IMPLICIT_DIRS = ("/usr/local/include",)


def _build(node: Node):
    """Parse the prelude and the node's include into a PCH, store it with its manifest (or a
    manifest that says it is not usable); None when that cannot be done."""
    from . import _diagnostics, _header_view_list, cindex

    ci = cindex()
    directory = _STATE["dir"]
    source = os.path.join(directory, f"{node.key}.h")
    text = "".join(f"#include {operand}\n" for operand in node.prefix)
    views = _header_view_list(node.roots)
    started = time.time_ns()
    try:
        tu = ci.Index.create().parse(
            source,
            args=node.build_args,
            unsaved_files=[*views, (source, text)],
            options=ci.TranslationUnit.PARSE_INCOMPLETE,
        )
    except ci.TranslationUnitLoadError:
        return None
    # Errors: not usable (they would not be reported again in a file's parse). (Headers with
    # inline asm that report errors are errors too: the views handed over were not enough.)
    usable = not _diagnostics(tu)
    found = _dependencies(tu, node, source)
    if found is None:
        return None
    inputs, probes, shadowing, macros, target = found
    if any(_recent(path, started) for path, *_ in inputs):
        return None  # (a file changed while it was read, or may have: not stored)
    data = {
        "format": FORMAT,
        "key": node.key,
        "usable": usable,
        "inputs": inputs,
        "probes": probes,
        "found": _probe(probes),
        "first": sorted({n.split("/", 1)[0] for n in shadowing if not n.startswith(".")}),
        "dotted": sorted(n for n in shadowing if n.startswith(".")),
        "macros": sorted(macros),
        "guarded": target is not None and _guarded(tu, target),
    }
    if usable:
        tmp = os.path.join(directory, f".{node.key}-{os.getpid()}.pch.tmp")
        try:
            tu.save(tmp)
            digest = _digest_file(tmp)
            if digest is None:
                raise OSError(errno.EIO, "unreadable")
            name = f"{node.key}-{digest[:16]}.pch"
            os.replace(tmp, os.path.join(directory, name))
        except (OSError, ci.TranslationUnitSaveError):
            _unlink(tmp)
            return None
        data.update(pch=name, pch_sha256=digest)
    del tu
    body = json.dumps(data, separators=(",", ":"))
    outer = json.dumps({"body": body, "mac": _mac(_STATE["key"], body)})
    tmp = os.path.join(directory, f".{node.key}-{os.getpid()}.json.tmp")
    try:
        with open(tmp, "w") as fh:
            fh.write(outer)
        os.replace(tmp, _manifest_path(node.key))
    except OSError:
        _unlink(tmp)
        return None
    if _STATE["temp_owner"] is None:
        _collect_garbage(directory, keep=node.key)
    return Manifest(data, directory)


# A file modified this close to a build's start (or later) may differ from what the build read
# (the coarsest common timestamp granularity, FAT's 2 s, could hide an edit).
RACY_NS = 2_000_000_000


def _recent(path: str, started: int) -> bool:
    try:
        return os.stat(path).st_mtime_ns > started - RACY_NS
    except OSError:
        return True


def _dependencies(tu, node: Node, source: str):
    """What a PCH's parse depended on: (inputs, probes, shadowing, macros, target). Inputs:
    every file read, with its size and SHA-256. Probes: [directories, names] groups, the names its headers
    looked up (the includes taken, every `__has_include`) with the directories such a lookup
    can search (the including file's for `"..."`, the include paths, the directories angle
    includes were found in). Shadowing: the names a lookup may have searched the include
    paths for (all but the `"..."` includes found beside their includer). Macros: the names
    its files but the prelude `#define` or `#undef`. Target: the file its include read."""
    from . import PRELUDE

    files: dict[str, None] = {PRELUDE: None}
    taken: dict[str, list] = {}  # including file -> [(line, included file)]
    for inc in tu.get_includes():
        included = _absolute(inc.include.name)
        files[included] = None
        if inc.source is not None:
            src = _absolute(inc.source.name)
            taken.setdefault(src, []).append((inc.location.line, included))
    files.pop(source, None)
    target = min(taken.get(source, [(0, None)]))[1]  # (the file the PCH's include read)
    inputs = []
    macros: set[str] = set()
    lookups = set()  # (quoted, name, including directory)
    shadowing = set()
    found_in = set()
    for path in [source, *files]:
        if path == source:
            data = "".join(f"#include {o}\n" for o in node.prefix).encode()
        else:
            try:
                with open(path, "rb") as fh:
                    data = fh.read()
            except OSError:
                return None
            inputs.append([path, len(data), hashlib.sha256(data).hexdigest()])
            if path != PRELUDE:  # (the prelude comes first in a parse without the PCH too)
                macros.update(m.decode("utf-8", "replace") for m in _DEFINES.findall(data))
        here = os.path.dirname(path)
        for m in _HAS_INCLUDE.finditer(data):
            name = m.group(2).decode("utf-8", "surrogateescape")
            lookups.add((m.group(1) == b'"', name, here))
            shadowing.add(name)
        if path not in taken:
            continue
        text = data.split(b"\n")
        for line, included in taken[path]:
            m = _DIRECTIVE_NAME.search(text[line - 1]) if 0 < line <= len(text) else None
            if m is None:
                continue  # (a computed include: its file is an input all the same)
            quoted = m.group(1) == b'"'
            name = m.group(2).decode("utf-8", "surrogateescape")
            lookups.add((quoted, name, here))
            if quoted and os.path.join(here, name) == included:
                continue  # found beside its includer: the include paths were not searched
            shadowing.add(name)
            if included.endswith("/" + name):
                found_in.add(included[: -len(name) - 1])
    search = list(dict.fromkeys([*_search_dirs(node.build_args), *sorted(found_in)]))
    search += [d for d in _IMPLICIT_DIRS if d not in search and os.path.isdir(d)]
    groups: dict[str | None, set] = {}
    for quoted, name, here in lookups:
        groups.setdefault(here if quoted else None, set()).add(name)
    probes = [
        [([d] if d is not None else []) + search, sorted(names)]
        for d, names in sorted(groups.items(), key=lambda kv: kv[0] or "")
    ]
    return inputs, probes, shadowing, macros, target


def _guarded(tu, path: str) -> bool:
    """Has the file an include guard or `#pragma once` (as clang saw it in this parse)?"""
    from . import cindex

    ci = cindex()
    try:
        fn = ci.conf.lib.clang_isFileMultipleIncludeGuarded
        fn.argtypes = [ci.TranslationUnit, ci.File]
        fn.restype = ctypes.c_uint
        return bool(fn(tu, tu.get_file(path)))
    except Exception:
        return False


def _absolute(name: str) -> str:
    """A file name libclang reports, absolute (not normalized: `..` after a symbolic link,
    as in the GCC installation's `/usr/lib/gcc/<triple>/12/../../../../include`, is not
    the directory above it in the name)."""
    return name if os.path.isabs(name) else os.path.join(os.getcwd(), name)


def _search_dirs(args: list[str]) -> list[str]:
    out = []
    for i, a in enumerate(args[:-1]):
        if a in ("-I", "-isystem"):
            out.append(args[i + 1])
    return out


def _unlink(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass


def _collect_garbage(directory: str, keep: str) -> None:
    """Keep the store within MAX_ENTRIES manifests and MAX_TOTAL_BYTES of PCHs (the least
    recently used go first), and remove PCHs no manifest names."""
    try:
        names = os.listdir(directory)
    except OSError:
        return
    entries = []
    named = set()
    for name in names:
        if not name.endswith(".json"):
            continue
        path = os.path.join(directory, name)
        try:
            with open(path, "rb") as fh:
                pch = json.loads(json.loads(fh.read(64 << 20))["body"]).get("pch")
            st = os.stat(path)
        except (OSError, ValueError, KeyError, TypeError):
            continue
        size = 0
        if pch:
            named.add(pch)
            try:
                size = os.stat(os.path.join(directory, pch)).st_size
            except OSError:
                pass
        entries.append((st.st_mtime_ns, name[:-5], pch, size))
    entries.sort(reverse=True)
    total = 0
    for k, (_, key, pch, size) in enumerate(entries):
        total += size
        if key != keep and (k >= MAX_ENTRIES or total > MAX_TOTAL_BYTES):
            for victim in (f"{key}.json", pch, f"{key}.lock"):
                if victim:
                    _unlink(os.path.join(directory, victim))
            named.discard(pch)
    now = time.time()
    for name in names:
        if name.endswith((".pch", ".tmp")) and name not in named:
            path = os.path.join(directory, name)
            try:
                stale = now - os.stat(path).st_mtime > 3600  # (not one being written now)
            except OSError:
                continue
            if stale:
                _unlink(path)
