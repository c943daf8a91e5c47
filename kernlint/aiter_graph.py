"""Which modules of a package are imported on a path that did not select aiter: the cross-file
half of `ungated-aiter-import`'s default (`reachable`) policy.

A module of a package (a file under a directory holding `__init__.py`, namespace directories
below it included) is judged from the imports of it found anywhere in its package, read from
disk whatever subset of files is being checked (so one file checked alone gets the same
answer as the whole tree):

* `aiter-only`: it is imported somewhere, and every import of it is guarded (an aiter gate, a
  `try:` catching ImportError, a condition naming aiter, a switch off by default, a function
  named for aiter or already importing aiter: the verdicts of `kernlint.python.aiter_reach`)
  or sits in an aiter-only module. Nothing in it is reported. (A function that imports it
  with no condition of its own is no guard: it loads the module whenever it is called.)
* `reachable`: some unguarded import of it sits in a module that is itself reachable; the
  evidence (the first importer) is named in the findings.
* `root`: nothing in the package imports it (an entry point, a module loaded by a class-path
  string, dead code). Its module-level aiter imports are reported unless the module is named
  for aiter (`backends/aiter.py`, loaded only when the AITER backend is chosen).

Files outside any package are scripts (benchmarks, tests, tools): nothing imports them.

The search goes up from a module through unguarded imports, breadth first, and stops at the
first reachable module; past 6 hops a module counts as reachable. An import statement at
column 0 is an unconditional module-level import (found by its bytes, no parse); an indented
one is judged on a skeleton of its file (parsed once per process). The answer for a module
is a pure function of the package's files (no search uses another's result), so every
process, in any order, gives the same findings and messages. Dynamic imports
(`importlib.import_module`, class-path strings) are not followed: a module loaded only that way
is a root.

Environment defaults (`NAME = EnvBool(True)` in a class body, SGLang's `envs`) are read from
the same package files.

The aiter gates are SGLang's (`_use_aiter`, ...) unless the checked file's settings name others
(`aiter-gates`): its package is then indexed again, once per process and set of gates, and its
importers are judged by those gates.
"""

from __future__ import annotations

import marshal
import os
import re
import zlib
from bisect import bisect_left, bisect_right
from collections import deque
from functools import lru_cache

from .lazyre import lazy_compile

MAX_HOPS = 6
MAX_FILE = 8 * 1024 * 1024  # larger files are not read for the import index
EAGER_INDEX = 32  # a run with this many files naming aiter indexes their packages up front
EAGER_FILES = 256  # a run of this many Python files indexes its packages as it reads them

_NAME = lazy_compile(rb"([\w.]+)(?:[ \t]+as[ \t]+\w+)?")
_ENV_DEFAULT = lazy_compile(
    rb"\n[ \t]+(\w+)[ \t]*(?::[^=\n]*)?=[ \t]*Env(\w*)\([ \t]*"
    rb"(True|False|None|-?\d+(?:\.\d*)?|\"[^\"\n]*\"|'[^'\n]*')[ \t]*[,)]"
)
_ENV_ANY = lazy_compile(rb"\n[ \t]+(\w+)[ \t]*(?::[^=\n]*)?=[ \t]*Env\w*\(")
AITER_WORD = lazy_compile(rb"aiter\b(?<=\baiter)")


class Record:
    """One import statement of a package file: where, whether indented, what it executes."""

    __slots__ = ("file", "offset", "indented", "targets", "names", "verdict")

    def __init__(self, file, offset, indented, targets, names=None) -> None:
        self.file = file
        self.offset = offset
        self.indented = indented
        self.targets = targets  # the modules it names (`from X import ...`: X)
        self.names = names  # `from X import a, b`: the text of `a, b` (maybe submodules)
        self.verdict = None  # the site's Verdict, once judged (indented ones only)

    def imports_submodule(self, name: str) -> bool:
        """Does `from X import ...` name `name` (a submodule of X)?"""
        if self.names is None:
            return False
        return _submodule_pattern(name).search(self.names) is not None


@lru_cache(maxsize=4096)
def _submodule_pattern(name: str) -> re.Pattern:
    """`name` as a whole name in an import list, built once per name (the search asks about
    the same submodule for every `from X import ...` of its parent)."""
    return re.compile(rb"(?<![\w.])" + re.escape(name.encode()) + rb"\b")


class PackageFile:
    __slots__ = ("path", "module", "is_pkg", "_data", "judge", "records")

    def __init__(self, path, module, is_pkg, data) -> None:
        self.path = path
        self.module = module
        self.is_pkg = is_pkg
        self._data = data
        self.judge = None  # (Judge, statements by line, line starts) once parsed
        self.records: list = []  # its import statements, as `import_records` gives them

    @property
    def data(self) -> bytes:
        """The file's bytes, read again from disk when a question needs them (an import site
        to judge, the line of an import an explanation names) and kept from then on: the
        index of a large tree does not hold all of its source."""
        if self._data is None:
            try:
                with open(self.path, "rb") as fh:
                    self._data = fh.read(MAX_FILE)
            except OSError:
                self._data = b""
        return self._data

    def release(self) -> None:
        self._data = None


# -- packages ---------------------------------------------------------------------------------
_TOP: dict[str, str | None] = {}


def top_package(directory: str) -> str | None:
    """The outermost directory at or above `directory` holding `__init__.py` (the top-level
    package a file there belongs to), or None."""
    found = _TOP.get(directory, "")
    if found != "":
        return found
    parent = os.path.dirname(directory)
    above = top_package(parent) if parent and parent != directory else None
    if above is None and os.path.isfile(os.path.join(directory, "__init__.py")):
        above = directory
    _TOP[directory] = above
    return above


def module_of(path: str, top: str) -> tuple[str, bool]:
    """(dotted module name, is a package `__init__`) of a file under the top package `top`."""
    parent = os.path.dirname(top)
    if path.startswith(parent + os.sep):
        rel = path[len(parent) + 1 :]
    else:
        rel = os.path.relpath(path, parent)
    parts = rel[:-3].split(os.sep) if rel.endswith(".py") else rel.split(os.sep)
    is_pkg = parts[-1] == "__init__"
    if is_pkg:
        parts = parts[:-1]
    return ".".join(parts), is_pkg


def _walk(top: str):
    for directory, dirs, files in os.walk(top):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d != "__pycache__")
        for name in sorted(files):
            if name.endswith(".py"):
                yield os.path.join(directory, name)


def _resolve(spec: str, module: str, is_pkg: bool) -> str | None:
    if not spec.startswith("."):
        return spec
    level = len(spec) - len(spec.lstrip("."))
    rest = spec[level:]
    base = module.split(".") if is_pkg else module.split(".")[:-1]
    if level > 1:
        if level - 1 > len(base):
            return None
        base = base[: len(base) - (level - 1)]
    if not base:
        return None
    return ".".join(base + ([rest] if rest else []))


def _patterns(top_name: bytes):
    found = _PATTERNS.get(top_name)
    if found is None:
        word = re.escape(top_name)
        found = _PATTERNS[top_name] = (
            re.compile(rb"from[ \t]+(\.+[\w.]*|" + word + rb"(?:\.[\w.]*)?)[ \t]+import\b"),
            re.compile(rb"import[ \t]+" + word + rb"\b"),
        )
    return found


_PATTERNS: dict = {}


def import_records(
    data: bytes, module: str, is_pkg: bool, top_name: bytes, above: str
) -> list[tuple]:
    """The import statements of a file that can import a module of its package: `from .x
    import y`, `from pkg.x import y`, `import pkg.x` (at a line's start, after indentation),
    as (offset of the line, indented, the modules named, the imported names of a `from`).
    `above`: the directory holding the top-level package. The imported names are kept only
    where `X` of `from X import ...` is a directory, a package that can have submodules (what
    they are asked for, `Record.imports_submodule`); else None (half of the index's size)."""
    from .engine import contains

    out = []
    append = out.append
    rfind = data.rfind
    find = data.find
    from_pattern, import_pattern = _patterns(top_name)
    top = top_name.decode()
    resolved: dict = {}  # (a file names the same relative module in several statements)
    for m in from_pattern.finditer(data):
        p = m.start()
        if p == 0 or data[p - 1] == 10:  # "\n": at column 0
            ls = p
        else:
            ls = rfind(b"\n", 0, p) + 1
            if data[ls:p].strip(b" \t"):
                continue  # not at the start of a line
        spec = m.group(1)
        base = resolved.get(spec, False)
        if base is False:
            if spec[0] == 46:  # "."
                base = _resolve(spec.decode("ascii", "replace"), module, is_pkg)
            else:
                base = spec.decode("ascii", "replace")
            resolved[spec] = base
        if base is None:
            continue
        if not _is_directory(above, base):
            append((ls, ls != p, (base,), None))
            continue
        # The imported names: `a, b` of `from X import a, b` (a parenthesized list across
        # lines included, a trailing comment left out).
        at = m.end()
        eol = find(b"\n", at)
        if eol < 0:
            eol = len(data)
        names = data[at:eol]
        if b"(" in names and b")" not in names:
            close = find(b")", eol)
            names = data[at : close if close > 0 else eol]
        elif b"#" in names:
            names = names.split(b"#", 1)[0]
        append((ls, ls != p, (base,), names))
    # (`import pkg` with a tab is rare: the tab itself, one byte, is looked for first)
    if not (
        contains(data, b"import " + top_name) or (b"\t" in data and contains(data, b"import\t"))
    ):
        return out
    for m in import_pattern.finditer(data):
        p = m.start()
        ls = rfind(b"\n", 0, p) + 1
        if ls != p and data[ls:p].strip(b" \t"):
            continue
        end = find(b"\n", p)
        rest = data[p + 6 : end if end >= 0 else len(data)]
        targets = []
        for nm in _NAME.finditer(rest.split(b"#", 1)[0].split(b";", 1)[0]):
            word = nm.group(1).decode("ascii", "replace")
            if word == top or word.startswith(top + "."):
                targets.append(word)
        if targets:
            append((ls, ls != p, tuple(targets), None))
    return out


# (above -> dotted module -> is it a directory), asked once per module and directory
_DIRECTORIES: dict[str, dict[str, bool]] = {}
# directory -> the names of its subdirectories (links to directories included)
_SUBDIRECTORIES: dict[str, frozenset[str]] = {}


def _directories(above: str) -> dict[str, bool]:
    found = _DIRECTORIES.get(above)
    if found is None:
        if len(_DIRECTORIES) > 64:
            _DIRECTORIES.clear()
        found = _DIRECTORIES[above] = {}
    return found


def _is_directory(above: str, module: str) -> bool:
    """Is the module `module` (dotted, under the directory `above`) a directory? (What
    `os.path.isdir` says, from one listing of each parent directory instead of a `stat` of
    each module: a package's files name thousands of modules in a few hundred directories.)"""
    known = _directories(above)
    found = known.get(module)
    if found is None:
        if len(known) > 65536:
            known.clear()
        *parents, name = module.split(".")
        found = known[module] = name in _subdirectories(os.path.join(above, *parents))
    return found


def _subdirectories(directory: str) -> frozenset[str]:
    found = _SUBDIRECTORIES.get(directory)
    if found is None:
        if len(_SUBDIRECTORIES) > 65536:
            _SUBDIRECTORIES.clear()
        names = []
        try:
            with os.scandir(directory) as entries:
                for entry in entries:
                    try:
                        if entry.is_dir():  # (a link is followed, as `os.path.isdir` does)
                            names.append(entry.name)
                    except OSError:
                        continue
        except OSError:
            pass  # (not a directory, or unreadable: nothing below it is one)
        found = _SUBDIRECTORIES[directory] = frozenset(names)
    return found


def _piece(path: str, data: bytes, top: str, top_name: bytes) -> tuple:
    """What the index keeps of one package file: (module, is a package `__init__`, its import
    records as (offset, indented, targets, names), its environment defaults, whether it names
    aiter). A pure function of the bytes: a worker computes it from the bytes it linted."""
    from .engine import contains

    module, is_pkg = module_of(path, top)
    raw = import_records(data, module, is_pkg, top_name, os.path.dirname(top))
    env = env_defaults_in(data) if contains(data, b"EnvBool(") else None
    names = bool(contains(data, b"aiter") and AITER_WORD.search(data))
    return module, is_pkg, raw, env, names


def env_defaults_in(data: bytes) -> dict:
    """`NAME = EnvBool(default)` (any `Env*` field) in class bodies: name -> default value,
    or CANNOT where the default is an expression."""
    from .python.aiter_reach import CANNOT

    if b"Env" not in data:
        return {}
    out: dict = {}
    for m in _ENV_ANY.finditer(data):
        out[m.group(1).decode()] = CANNOT
    for m in _ENV_DEFAULT.finditer(data):
        raw = m.group(3).decode()
        kind = m.group(2).decode()
        if raw in ("True", "False", "None"):
            value = {"True": True, "False": False, "None": None}[raw]
        elif raw[0] in "\"'":
            value = raw[1:-1]
        else:
            value = float(raw) if "." in raw else int(raw)
        if kind.startswith("Bool") and isinstance(value, str):
            value = value.lower() in ("true", "1", "yes", "y")
        out[m.group(1).decode()] = value
    return out


class Package:
    """The import index of one top-level package."""

    def __init__(self, top: str, note=None, gates=None, pieces=None) -> None:
        """`note`: paths of the run whose naming aiter is to be recorded as they are read
        (`_AITER_FILES`). `gates`: the configured aiter gates import sites are judged by
        (`Guards.use_gates`); None: SGLang's. `pieces`: path -> `piece_of` the file, as the
        pool's workers computed them from the bytes they linted (those files are not read
        again; the others of the package are read here)."""
        self.top = top
        self.gates = gates
        self.name = os.path.basename(top)
        self.files: dict[str, PackageFile] = {}
        self.by_module: dict[str, PackageFile] = {}
        self.env: dict = {}
        from .engine import use_memmem
        from .python.aiter_reach import CANNOT

        use_memmem()
        # Every import statement of the package, as its file's raw tuples (`import_records`):
        # a Record is made only for a statement a question reaches (`_record`).
        flat: list[tuple] = []
        owners: list[PackageFile] = []
        top_name = self.name.encode()
        for path in _walk(top):
            found = pieces.get(path) if pieces is not None else None
            if found is None:
                try:
                    if os.path.getsize(path) > MAX_FILE:
                        continue
                    with open(path, "rb") as fh:
                        data = fh.read()
                except OSError:
                    continue
                found = _piece(path, data, top, top_name)
            module, is_pkg, raw, env, names = found
            if note is not None and names and path in note:
                _AITER_FILES.add(path)
            pf = PackageFile(path, module, is_pkg, None)
            self.files[path] = pf
            self.by_module[module] = pf
            pf.records = raw
            flat += raw
            owners += [pf] * len(raw)
            if env:
                # (a piece from a worker went through pickle or marshal: its "cannot tell"
                # values are copies of the marker, which the conditions test by identity)
                self.env.update({k: CANNOT if v == CANNOT else v for k, v in env.items()})
        # The statements by the modules they name, sorted (a stable sort of the positions: a
        # module's statements in package order, as sorting (module, position) pairs gives).
        names: list[str] = []
        where: list[int] = []
        for i, r in enumerate(flat):
            targets = r[2]
            if len(targets) == 1:
                names.append(targets[0])
                where.append(i)
            else:
                names += targets
                where += [i] * len(targets)
        order = sorted(range(len(names)), key=names.__getitem__)
        self._keys = [names[k] for k in order]
        self._where = [where[k] for k in order]
        self._flat, self._owners = flat, owners
        self._made: dict[int, Record] = {}
        self._status: dict[str, tuple] = {}
        self._sites: dict[str, list] = {}
        self._cheap: dict[str, bool] = {}

    def close(self) -> None:
        """Drop what the index holds (the files' import statements, bytes and parses, the
        records and verdicts made), so that its memory is freed as soon as the package is
        dropped, even where a verdict or an evidence tuple is still referred to; a closed
        package answers nothing (its `env` is kept: a `LazyEnv` may hold it)."""
        for pf in self.files.values():
            pf.records = []
            pf.judge = None
            pf._data = None
        self.files, self.by_module = {}, {}
        self._keys, self._where, self._flat, self._owners, self._made = [], [], [], [], {}
        self._status, self._sites, self._cheap = {}, {}, {}

    def _record(self, i: int) -> Record:
        """The Record of the package's `i`-th import statement (one object per statement: a
        verdict found for it is kept on it)."""
        rec = self._made.get(i)
        if rec is None:
            rec = self._made[i] = Record(self._owners[i], *self._flat[i])
        return rec

    def sites(self, module: str) -> list[Record]:
        """Import statements that execute `module`, outside the module and its submodules:
        those naming it or a submodule, and `from parent import module`."""
        found = self._sites.get(module)
        if found is not None:
            return found
        out = []
        seen = set()
        keys = self._keys
        prefix = module + "."

        def add(rec):
            n = rec.file.module
            if n == module or n.startswith(prefix) or id(rec) in seen:
                return
            seen.add(id(rec))
            out.append(rec)

        i = bisect_left(keys, module)
        while i < len(keys) and (keys[i] == module or keys[i].startswith(prefix)):
            add(self._record(self._where[i]))
            i += 1
        parent, _, last = module.rpartition(".")
        if parent:
            i = bisect_left(keys, parent)
            while i < len(keys) and keys[i] == parent:
                rec = self._record(self._where[i])
                i += 1
                if rec.imports_submodule(last):
                    add(rec)
        out.sort(key=lambda r: (r.indented, r.file.module, r.offset))
        self._sites[module] = out
        return out

    # -- judging an import site -------------------------------------------------------------
    def site_open(self, rec: Record) -> bool:
        """Can this import statement run on a path that did not select aiter?"""
        if not rec.indented:
            return True  # an unconditional module-level import
        pf = rec.file
        if pf.judge is None:
            pf.judge = self._judge(pf)
        judge, at_line, starts = pf.judge
        if judge is None:
            return True  # unparsable: the file's own lint says so; count the import
        line = bisect_right(starts, rec.offset)  # (1-based)
        for stmt in at_line.get(line, ()):
            import ast

            if isinstance(stmt, (ast.Import, ast.ImportFrom)):
                v = rec.verdict = judge.verdict(stmt)
                # (a function that imports the module without choosing a path of its own
                # loads it whenever its caller runs it: that is no aiter selection)
                return v.kind != "silent" or v.why == "caller"
        return True

    def _judge(self, pf: PackageFile):
        import ast

        from .python import parse
        from .python.aiter_reach import Judge, envs_package
        from .python.guards import Guards
        from .python.skeleton import skeleton
        from .source import line_starts

        data = pf.data
        # (1-based lines by bisection: counting line breaks from the start for each record
        # costs the file's length per record)
        starts = line_starts(data)
        lines = {bisect_right(starts, r[0]) for r in pf.records} or {1}
        keep = {1} | lines
        for m in AITER_WORD.finditer(data):
            keep.add(bisect_right(starts, m.start()))
        tree = None
        sk = skeleton(data, sorted(keep))
        for candidate in ([sk] if sk is not None else []) + [data]:
            try:
                tree = parse(candidate, pf.path)
                break
            except (SyntaxError, ValueError, RecursionError, MemoryError):
                continue
        if tree is None:
            return None, {}, starts
        guards = Guards(tree)
        if self.gates is not None:
            guards.use_gates(self.gates)
        at_line = guards.statements_at_lines(sorted(lines))
        del ast
        env = env_for(envs_package(tree, pf.module), pf.path)
        return Judge(tree, guards, env, pf.module), at_line, starts

    # -- module status ----------------------------------------------------------------------
    def status(self, module: str) -> tuple:
        """("reachable", evidence) / ("aiter-only", evidence) / ("root", "")."""
        found = self._status.get(module)
        if found is not None:
            return found

        first = self.sites(module)
        if not first:
            result = ("root", "", (0, 1))
            self._status[module] = result
            return result
        # Unconditional module-level imports first (read from the bytes, no parse); only when
        # they lead nowhere are the indented ones judged.
        came: dict[str, tuple] = {}
        witness = None
        for cheap in (True, False):
            came, witness = self._search(module, first, cheap)
            if witness is not None:
                break
        if witness is None:
            result = ("aiter-only", "every import of it is guarded or in an aiter-only module", ())
            self._status[module] = result
            return result
        return self._reached(module, came, witness)

    def _search(self, module, first, cheap):
        """Breadth first up the unguarded imports of `module`: (the way each module was
        reached, the first reachable module met, or None). `cheap`: through unconditional
        module-level imports only (no parse). A pure function of the package's files: what
        other searches found is not used, so the answer does not depend on the order of
        the questions."""
        queue = deque([(module, 0)])
        came: dict[str, tuple] = {module: (None, None)}
        while queue:
            mod, depth = queue.popleft()
            sites = first if mod == module else self.sites(mod)
            if not sites and mod != module:
                if not _aiter_named(mod):
                    return came, mod  # a root: an entry point, or loaded by name
                continue
            if not cheap:
                # the indented imports in modules reachable through unconditional imports
                # first: the first of them that is open ends the search
                sites = sorted(sites, key=lambda r: (r.indented, not self._cheaply(r.file.module)))
            for rec in sites:
                n = rec.file.module
                if n in came:
                    continue
                if cheap and rec.indented:
                    break  # (sorted: the indented ones come last)
                if not self.site_open(rec):
                    continue
                came[n] = (mod, rec)
                if depth + 1 >= MAX_HOPS or (not cheap and self._cheaply(n)):
                    return came, n
                queue.append((n, depth + 1))
        return came, None

    def _cheaply(self, module: str) -> bool:
        """Is a module reachable through unconditional module-level imports alone?"""
        found = self._cheap.get(module)
        if found is None:
            sites = self.sites(module)
            if not sites:
                found = not _aiter_named(module)
            else:
                found = self._search(module, sites, True)[1] is not None
            self._cheap[module] = found
        return found

    def _reached(self, module, came, witness):
        """The evidence for `module`: the import of it one step up the way found."""
        n = witness
        while True:
            below, rec = came[n]
            if below == module:
                break
            n = below
        result = self._status[module] = self._evidence(n, rec)
        return result

    @staticmethod
    def _evidence(importer, rec) -> tuple:
        line = rec.file.data.count(b"\n", 0, rec.offset) + 1
        v = rec.verdict
        machines = (0, 1) if v is None or not v.machines else v.machines
        if v is None:
            how = "at import time"
        elif v.kind == "function":
            how = f"in `{v.detail}`"
        elif v.kind == "silent":
            how = "in a function"
        else:
            how = "at import time on " + v.where()
        return ("reachable", f"`{importer}` imports it {how}, line {line}", machines)


def _aiter_named(module: str) -> bool:
    from .python.aiter_reach import names_aiter

    return names_aiter(module.rsplit(".", 1)[-1])


# -- the run's facts ----------------------------------------------------------------------------
_PACKAGES: dict[str, Package] = {}
_GATED: dict[tuple, Package] = {}  # (top, configured gates) -> the package judged by them
_RUN_TOPS: list[str] = []  # the top-level packages of the run's Python files, sorted
_AITER_FILES: set[str] = set()  # the run's Python files that name aiter (cache keys)
_FINGERPRINT: list = []  # [the fingerprint], once computed
_COMPLETE: set[str] = set()  # the packages whose files' stats are in _STATS
_STATS: dict[str, list] = {}  # package -> (path, size, mtime_ns) of its files (cache keys)
_GATHER: dict[str, dict] = {}  # while a pool gathers the index: {"by_top": top -> run files}
# After a pool gathered the index: top -> the packed pieces of its files (`pack_pieces`), from
# which its Package is built when a file first asks (and again after `release`).
_PACKED: dict[str, list] = {}
_UNPACKED: dict[str, dict] = {}  # a run's one package's pieces, unpacked for its first build


def reset() -> None:
    _GATHER.clear()
    _PACKED.clear()
    _UNPACKED.clear()
    _PACKAGES.clear()
    _GATED.clear()
    _RUN_TOPS.clear()
    _AITER_FILES.clear()
    _FINGERPRINT.clear()
    _COMPLETE.clear()
    _STATS.clear()
    _TOP.clear()
    _DIRECTORIES.clear()
    _SUBDIRECTORIES.clear()


def state() -> tuple:
    """The index of the last `collect` (for `restore`: the language server keeps one per
    project). The packages are shared, not copied: an index is never changed once built."""
    return (
        dict(_PACKAGES),
        list(_RUN_TOPS),
        set(_AITER_FILES),
        list(_FINGERPRINT),
        set(_COMPLETE),
        {k: list(v) for k, v in _STATS.items()},
        dict(_TOP),
        dict(_PACKED),
    )


def restore(saved: tuple) -> None:
    reset()
    packages, tops, files, fingerprint, complete, stats, top, packed = saved
    _PACKED.update(packed)
    _PACKAGES.update(packages)
    _RUN_TOPS.extend(tops)
    _AITER_FILES.update(files)
    _FINGERPRINT.extend(fingerprint)
    _COMPLETE.update(complete)
    _STATS.update({k: list(v) for k, v in stats.items()})
    _TOP.update(top)


def package_for(abspath: str, gates: frozenset[str] | None = None) -> Package | None:
    top = top_of(abspath)
    if top is None:
        return None
    if gates is not None:
        pkg = _GATED.get((top, gates))
        if pkg is None:
            if _GATHER:
                _pending()
            pkg = _GATED[(top, gates)] = Package(top, gates=gates)
        return pkg
    return _package(top)


def _package(top: str) -> Package:
    pkg = _PACKAGES.get(top)
    if pkg is None:
        if _GATHER:
            _pending()
        pieces = _UNPACKED.pop(top, None)
        if pieces is None:
            packed = _PACKED.get(top)
            pieces = unpack_pieces(packed) if packed is not None else None
        pkg = _PACKAGES[top] = Package(top, pieces=pieces)
    return pkg


def release() -> None:
    """After a pool gathered the index (nothing otherwise): drop the packages built so far,
    their records and the files' bytes and skeletons read for judging. A package is built
    again from its packed pieces if a file asks for it later (one judged by configured gates:
    read again), with the same answers: a package's index is a pure function of its files."""
    if not _PACKED:
        return
    for pkg in (*_PACKAGES.values(), *_GATED.values()):
        pkg.close()
    _PACKAGES.clear()
    _GATED.clear()


def top_of(abspath: str) -> str | None:
    """The top-level package a file belongs to (None: a script)."""
    return top_package(os.path.dirname(os.path.abspath(abspath)))


def env_for(name: str | None, near: str | None = None) -> dict | None:
    """The environment defaults declared in the package `name` (the one a file imports
    `envs` from), where the run has it; None when it does not. `near`: the file asking, whose
    own top-level package is the one meant when it has that name (a run of several copies of
    a package)."""
    if not name:
        return None
    own = top_of(near) if near else None
    for top in ([own] if own else []) + _RUN_TOPS + sorted(_PACKAGES):
        if os.path.basename(top) == name:
            pkg = _PACKAGES.get(top)
            return pkg.env if pkg is not None else LazyEnv(top)
    return None


def module_for(abspath: str) -> str | None:
    """The dotted module name of a file in a package (None outside any), without indexing
    the package."""
    path = os.path.abspath(abspath)
    top = top_package(os.path.dirname(path))
    if top is None:
        return None
    pkg = _PACKAGES.get(top)
    pf = pkg.files.get(path) if pkg is not None else None
    return pf.module if pf is not None else module_of(path, top)[0]


class LazyEnv:
    """The environment defaults of a package, read when a condition first asks for one."""

    def __init__(self, top: str) -> None:
        self.top = top
        self._env: dict | None = None

    def _load(self) -> dict:
        if self._env is None:
            self._env = _package(self.top).env
        return self._env

    def __contains__(self, name) -> bool:
        return name in self._load()

    def __getitem__(self, name):
        return self._load()[name]


def facts_for(abspath: str, gates: frozenset[str] | None = None) -> tuple:
    """(package module name or None, status) of a file: status as `Package.status`, or
    ("script", "", machines) outside any package. `gates`: the configured aiter gates (None:
    SGLang's)."""
    pkg = package_for(abspath, gates)
    if pkg is None:
        return None, ("script", "", (0, 1))
    pf = pkg.files.get(os.path.abspath(abspath))
    if pf is None:  # (not readable when the package was indexed)
        module, _ = module_of(os.path.abspath(abspath), pkg.top)
        return module, ("unknown", "", ())
    return pf.module, pkg.status(pf.module)


_NAMES_KEY = "aiter-names:1"  # the cache's group of "does this file name aiter" answers


def collect(paths, keys: bool = False, cache=None, stats=None) -> None:
    """Read, once per run, the packages of the Python files `paths` that name aiter (a
    package none of whose checked files names aiter is not read). Without `keys` their
    import index is built here, before the workers fork (they share it); modules are judged
    when a file needs it, a pure function of the package's files (the same answer in any
    process, in any order). `keys`: the cache needs `fingerprint`: the scripts are read too,
    every package of the run is read (a script may read the `envs` of any), and the index is
    built only where a file is linted (most are answered from the cache). `cache`, `stats`
    (the files' `os.stat` results): whether a file names aiter is kept in the cache by size
    and modification time, so that a warm run reads none of the unchanged files."""
    from .engine import contains, use_memmem

    reset()
    use_memmem()
    by_top: dict[str, list[str]] = {}
    scripts = []
    for path in paths:
        path = os.path.abspath(path)
        top = top_package(os.path.dirname(path))
        if top is None:
            scripts.append(path)
        else:
            by_top.setdefault(top, []).append(path)
    _RUN_TOPS.extend(sorted(by_top))

    stat_of = {}
    if cache is not None and stats is not None:
        stat_of = {os.path.abspath(p): st for p, st in zip(paths, stats, strict=True)}

    def read(path):
        st = stat_of.get(path)
        if st is not None:
            found = cache.lookup_stat(path, _NAMES_KEY, st)
            if found in ("0", "1"):
                if found == "1":
                    _AITER_FILES.add(path)
                return None
        try:
            with open(path, "rb") as fh:
                data = fh.read()
        except OSError:
            return None
        names = bool(contains(data, b"aiter") and AITER_WORD.search(data))
        if names:
            _AITER_FILES.add(path)
        if st is not None:  # (no digest: a file changed just now is read again next time)
            cache.store(path, _NAMES_KEY, st, "", "1" if names else "0")
        return data

    if not keys and len(paths) >= EAGER_FILES:
        # A large run without a cache: each package of the run is indexed here, once, its
        # files read once (which of the run's files name aiter is noted as they are), and the
        # workers share the index; a package none of whose checked files names aiter is not
        # kept.
        for top in _RUN_TOPS:
            run_files = set(by_top[top])
            pkg = Package(top, note=run_files)
            for path in run_files - pkg.files.keys():
                read(path)  # (a checked file the index does not hold: hidden, too large)
            if any(p in _AITER_FILES for p in run_files):
                _PACKAGES[top] = pkg
        return
    # Otherwise an index is built here as soon as the run has EAGER_INDEX files naming aiter
    # (a package at a time, its bytes not kept beside it); a run that checks a few files
    # builds one only if a file needs it. (A pure function of the files: the same answers
    # either way.)
    pending = []
    for top in _RUN_TOPS:
        for path in by_top[top]:
            read(path)  # (which files name aiter; the index reads each file as it goes)
        if not keys:
            pending.append(top)
            if len(_AITER_FILES) >= EAGER_INDEX:
                for t in pending:
                    if any(p in _AITER_FILES for p in by_top[t]):
                        _package(t)
                pending.clear()
    if keys:
        for path in scripts:
            read(path)
        if _AITER_FILES:
            for top in _RUN_TOPS:
                _complete(top)


def _pending():
    from .engine import ProjectFactsPending

    raise ProjectFactsPending("the aiter import index is being gathered")


def gather_start(paths) -> bool:
    """A large run without a cache, in a pool: instead of reading every package first (as
    `collect` does), the workers compute each package file's part of the index (`piece_for`)
    from the bytes they lint, and `gather_finish` builds the index from those parts. Until
    then a question that needs an index raises `ProjectFactsPending`: the file asking is
    linted again once the index is built. False (nothing set) for a run `collect` serves."""
    if len(paths) < EAGER_FILES:
        return False
    reset()
    from .config import absolute

    by_top: dict[str, list[str]] = {}
    for given in paths:
        path = absolute(given)  # (the candidate's own string: one copy of each path)
        top = top_package(os.path.dirname(path))
        if top is not None:
            by_top.setdefault(top, []).append(path)
    _RUN_TOPS.extend(sorted(by_top))
    _GATHER["by_top"] = by_top
    return True


def piece_for(path: str, data: bytes) -> tuple | None:
    """While gathering (in a worker): the index's part of the Python file `path` read as
    `data`, or None (not in a package of the run, or too large for the index)."""
    if not _GATHER or len(data) > MAX_FILE:
        return None
    top = top_package(os.path.dirname(path))
    if top is None or top not in _GATHER["by_top"]:
        return None
    return _piece(path, data, top, os.path.basename(top).encode())


def pack_pieces(pieces: dict) -> dict:
    """A worker's pieces (path -> `piece_for`) packed for the parent: top package -> the
    pieces of its files, marshalled and compressed (about a fifth of the size of the tuples
    they hold: the parent keeps every package's until the end of the run)."""
    by_top: dict = {}
    for path, piece in pieces.items():
        by_top.setdefault(top_package(os.path.dirname(path)), {})[path] = piece
    return {top: zlib.compress(marshal.dumps(part), 1) for top, part in by_top.items()}


def unpack_pieces(packed: list) -> dict:
    """path -> piece, from a package's packed parts."""
    out: dict = {}
    for blob in packed:
        out.update(marshal.loads(zlib.decompress(blob)))
    return out


def gather_finish(packed: dict) -> None:
    """End the gathering with the workers' packed pieces (`packed`: top -> the packed parts of
    its files): which of the run's files name aiter is noted, and each package of the run is
    built from its pieces when a file first asks for it (`_package`), its other files read
    then. The same index, and the same files noted as naming aiter, as `collect` builds
    reading every file itself."""
    from .engine import contains

    by_top = _GATHER.pop("by_top", {})
    for top in _RUN_TOPS:
        parts = packed.get(top, [])
        pieces = unpack_pieces(parts)
        extra = {}
        for path in by_top[top]:
            found = pieces.get(path)
            if found is not None:
                names = found[4]
            else:  # (not linted: too large, unreadable, binary: read as `collect` reads it)
                try:
                    with open(path, "rb") as fh:
                        data = fh.read()
                except OSError:
                    continue
                names = bool(contains(data, b"aiter") and AITER_WORD.search(data))
                if len(data) <= MAX_FILE:
                    extra[path] = _piece(path, data, top, os.path.basename(top).encode())
            if names:
                _AITER_FILES.add(path)
        if extra:
            parts = [*parts, zlib.compress(marshal.dumps(extra), 1)]
        _PACKED[top] = parts
        if len(_RUN_TOPS) == 1:
            # (one package: its first build takes the pieces unpacked here instead of
            # unpacking them again; with several, each stays packed until its turn)
            pieces.update(extra)
            _UNPACKED[top] = pieces


def _complete(top: str) -> None:
    """The size and modification time of each file of a package (for its fingerprint: the
    same test the cache applies to the checked files themselves)."""
    stats = _STATS.setdefault(top, [])
    for path in _walk(top):
        try:
            st = os.stat(path)
        except OSError:
            continue
        if st.st_size <= MAX_FILE:
            stats.append((path, st.st_size, st.st_mtime_ns))
    _COMPLETE.add(top)


def fingerprint(abspath: str) -> str:
    """What a file's findings depend on beyond its bytes: the files of the run's packages, by
    path, size and modification time (for a file that names aiter; "-" for any other)."""
    if (abspath if os.path.isabs(abspath) else os.path.abspath(abspath)) not in _AITER_FILES:
        return "-"
    if not _FINGERPRINT:
        import hashlib

        h = hashlib.blake2b(digest_size=12)
        for top in _RUN_TOPS:
            for path, size, mtime in _STATS.get(top, ()):
                h.update(f"{path}\0{size}\0{mtime}\0".encode("utf-8", "surrogateescape"))
        _FINGERPRINT.append(h.hexdigest())
    return _FINGERPRINT[0]
