"""Facts that cross files: FFI wrapper targets named in Python `load_jit(..., cuda_wrappers=...)`.

SGLang's Python side builds a JIT module with
`load_jit("name", cuda_files=[...], cuda_wrappers=[("export", f"&Kernel<{args}>::run")])`: the
second element of each pair names the C++ function that becomes an FFI entry point. When the
Python files are among the files being checked, their targets are collected once per run (only
files containing `cuda_wrappers` are parsed) and handed to the C++ rules through
`wrapper_targets()`. Checking a C++ file on its own (the pre-commit case) still finds FFI
functions by their `TensorView` parameters and export macros.
"""

from __future__ import annotations

import ast

from .lazyre import lazy_compile
from .python import parse as parse_python

_TARGETS: frozenset[str] = frozenset()


def wrapper_targets() -> frozenset[str]:
    """Qualified names (`Kernel::run`, `fn`), template arguments and `&` removed."""
    return _TARGETS


_FINGERPRINT: str | None = None  # computed on first use: only cache keys need it


def set_wrapper_targets(targets) -> None:
    global _TARGETS, _FINGERPRINT
    _TARGETS = frozenset(targets)
    _FINGERPRINT = None


def fingerprint() -> str:
    global _FINGERPRINT
    if _FINGERPRINT is None:
        import hashlib

        _FINGERPRINT = hashlib.sha256("\n".join(sorted(_TARGETS)).encode()).hexdigest()[:12]
    return _FINGERPRINT


def normalize_target(text: str) -> str:
    text = text.strip().lstrip("&").strip()
    text = text.strip("()").strip()
    text = _without_template_args(text)
    parts = [p.strip() for p in text.split("::") if p.strip()]
    if parts and parts[0] == "sglang":
        parts = parts[1:]
    return "::".join(parts)


def _without_template_args(text: str) -> str:
    """`text` without its balanced `<...>` groups, nested ones included (an unmatched `<` or
    `>` stays): what removing innermost groups until none is left gives, in one pass."""
    if "<" not in text:
        return text
    out: list[str] = []
    opened: list[int] = []  # lengths of `out` at each unmatched `<`
    last = 0
    for m in _ANGLE.finditer(text):
        out.append(text[last : m.start()])
        last = m.end()
        if m.group() == "<":
            opened.append(len(out))
            out.append("<")
        elif opened:
            del out[opened.pop() :]
        else:
            out.append(">")
    out.append(text[last:])
    return "".join(out)


_ANGLE = lazy_compile(r"[<>]")


def string_value(node, hole: str = "_") -> str | None:
    """A string literal's text; an f-string's with each `{...}` written as `hole`."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        # f"&Kernel<{args}>::run": keep the literal parts; `{...}` stand for template arguments.
        out = []
        for part in node.values:
            if isinstance(part, ast.Constant) and isinstance(part.value, str):
                out.append(part.value)
            else:
                out.append(hole)
        return "".join(out)
    return None


_string_value = string_value


def _targets_in_tree(tree) -> set[str]:
    """FFI targets named by `cuda_wrappers=[(name, target), ...]` calls in a parsed tree."""
    from .python import walk as _walk

    out: set[str] = set()
    for node in _walk(tree):
        if not isinstance(node, ast.Call):
            continue
        for kw in node.keywords:
            if kw.arg != "cuda_wrappers" or not isinstance(kw.value, (ast.List, ast.Tuple)):
                continue
            for elt in kw.value.elts:
                if isinstance(elt, (ast.Tuple, ast.List)) and len(elt.elts) == 2:
                    value = _string_value(elt.elts[1])
                    if value:
                        target = normalize_target(value)
                        if target:
                            out.add(target)
    return out


# (The literal first, the word boundary checked behind it: a leading `\b` would defeat the
# regex engine's literal search.)
_WRAPPERS = lazy_compile(rb"cuda_wrappers(?<=\bcuda_wrappers)\s*=\s*(?=[\[(])")


# The scanner's events: in code, a bracket, a comment or a quote; inside a string, its end, an
# escape or (one-line strings) the end of the line.
_CODE_EVENT = lazy_compile(rb"[\[\](){}#'\"]")
_QUOTE_EVENT = lazy_compile(rb"[#'\"]")  # (no snippet open: only strings and comments matter)
_STRING_END = {
    b"'": lazy_compile(rb"['\\\n]"),
    b'"': lazy_compile(rb'["\\\n]'),
    b"'''": lazy_compile(rb"'''|\\"),
    b'"""': lazy_compile(rb'"""|\\'),
}


def wrapper_snippets(data: bytes) -> list[bytes]:
    """The bracketed literal after each `cuda_wrappers=` in the code of a Python file (not in
    comments or strings), `[...]` or `(...)`, as far as its brackets balance; unclosed ones
    are left out. One pass over the file: comments, strings and brackets are followed from
    the start, and every `cuda_wrappers=` opener still open is closed by the same pass (an
    unbalanced file costs its length once, not once per opener)."""
    openers = [m.end() for m in _WRAPPERS.finditer(data)]
    if not openers:
        return []
    from .python import lf_view

    source, data = data, lf_view(data)  # (lone `\r` line breaks end comments too)
    out: list[bytes] = []
    n = len(data)
    k = 0  # the next opener (position of its bracket)
    pending: list[tuple[int, int]] = []  # (opener position, depth before it), innermost last
    depth = 0
    pos = 0

    def skip_openers(until: int) -> None:
        """Openers before `until` were in a comment or a string: not calls."""
        nonlocal k
        while k < len(openers) and openers[k] < until:
            k += 1

    while pos < n and (pending or k < len(openers)):
        if pending:
            m = _CODE_EVENT.search(data, pos)
        else:
            m = _QUOTE_EVENT.search(data, pos, openers[k])
            if m is None:  # code up to the next opener: it is a call's argument
                pos, depth = openers[k], 0
                m = _CODE_EVENT.search(data, pos)
        if m is None:
            break
        at = m.start()
        c = data[at : at + 1]
        if c in b"[({":
            if k < len(openers) and openers[k] == at:
                pending.append((at, depth))
                k += 1
            depth += 1
            pos = at + 1
        elif c in b"])}":
            depth -= 1
            while pending and pending[-1][1] == depth:
                out.append(source[pending.pop()[0] : at + 1])
            pos = at + 1
        elif c == b"#":
            end = data.find(b"\n", at)
            pos = n if end < 0 else end + 1
            skip_openers(pos)
        else:  # a string
            quote = data[at : at + 3]
            if quote not in _STRING_END:
                quote = c
            end_of = _STRING_END[quote].search
            i = at + len(quote)
            while True:
                e = end_of(data, i)
                if e is None:
                    i = n  # unterminated to the end of the file
                    pending.clear()
                    break
                ch = data[e.start() : e.start() + 1]
                if ch == b"\\":
                    i = e.start() + 2  # (an escaped quote, backslash or line break)
                    continue
                i = e.end()
                if ch == b"\n":  # a one-line string not closed on its line: invalid code
                    pending.clear()  # (every open snippet holds it: none can parse)
                break
            pos = i
            skip_openers(pos)
    return out


def targets_in_snippets(data: bytes) -> set[str]:
    """Wrapper targets from each `cuda_wrappers=[...]` literal, parsed on its own (a few
    hundred bytes) rather than parsing the whole file. A literal nested deeper than Python's
    parser goes is skipped (the file's own lint reports it)."""
    out: set[str] = set()
    from .engine import contains

    if not contains(data, b"cuda_wrappers"):
        return out  # a substring search, much faster than the regex over the whole file
    for snippet in wrapper_snippets(data):
        try:
            expr = parse_python(b"f(cuda_wrappers=" + snippet + b")", mode="eval")
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            continue
        out |= _targets_in_tree(expr)
    return out


_CACHE_KEY = "project:cuda-wrappers"


def collect(paths, cache=None, stats=None) -> set[str]:
    """Wrapper targets of all the Python files (see `cached_names`)."""
    return cached_names(paths, cache, stats, _CACHE_KEY, targets_in_snippets)


def cached_names(paths, cache, stats, key: str, extract) -> set[str]:
    """The union of `extract(bytes)` (a set of names) over the files `paths`; with a cache,
    files whose size and mtime are unchanged since the last run are not read again (their
    names kept under `key`). `stats`: the files' `os.stat` results (None where it failed),
    needed with a cache."""
    out: set[str] = set()
    if cache is not None:
        from .cache import content_hash, decode_targets, encode_targets
    for k, path in enumerate(paths):
        st = None
        if cache is not None:
            st = stats[k]
            if st is None:
                continue
            found = cache.lookup_stat(path, key, st)
            if found is not None:
                found = decode_targets(found)
                if found is not None:  # (None: an entry of the wrong shape)
                    out |= found
                    continue
        try:
            with open(path, "rb") as fh:
                data = fh.read()
        except OSError:
            continue
        names = extract(data)
        out |= names
        if cache is not None and st is not None:
            cache.store(path, key, st, content_hash(data), encode_targets(names))
    return out


# -- aiter imports at import time (the `import-time` policy of ungated-aiter-import) ---------
_AITER_FINDINGS: dict[str, list[tuple[int, int, int, int, str]]] = {}


def aiter_import_time_findings(abspath: str) -> list[tuple[int, int, int, int, str]]:
    return _AITER_FINDINGS.get(abspath, [])


def set_aiter_findings(findings) -> None:
    global _AITER_FINDINGS
    _AITER_FINDINGS = dict(findings)


def state() -> tuple:
    """The facts of the last collection (for `restore`: the language server keeps one per
    project)."""
    return (_TARGETS, dict(_AITER_FINDINGS))


def restore(saved: tuple) -> None:
    targets, findings = saved
    set_wrapper_targets(targets)
    set_aiter_findings(findings)


def _module_name(path: str, is_pkg_cache: dict[str, bool]) -> str:
    """Dotted module name of a file, from the `__init__.py` files above it."""
    import os

    def is_pkg(d: str) -> bool:
        if d not in is_pkg_cache:
            is_pkg_cache[d] = os.path.isfile(os.path.join(d, "__init__.py"))
        return is_pkg_cache[d]

    d, base = os.path.split(os.path.abspath(path))
    stem = base[:-3] if base.endswith(".py") else base
    parts = [] if stem == "__init__" else [stem]
    while is_pkg(d):
        d, name = os.path.split(d)
        parts.insert(0, name)
        if not name:
            break
    return ".".join(parts)


def _executed_modules(node, module: str, is_package: bool) -> list[str]:
    """Modules an import statement executes (parents included), absolute."""
    names: list[str] = []
    if isinstance(node, ast.Import):
        for alias in node.names:
            names.append(alias.name)
    elif isinstance(node, ast.ImportFrom):
        if node.level:
            base = module.split(".") if is_package else module.split(".")[:-1]
            if node.level > 1:
                base = base[: len(base) - (node.level - 1)]
            prefix = ".".join(base)
            target = f"{prefix}.{node.module}" if node.module else prefix
        else:
            target = node.module or ""
        names.append(target)
        for alias in node.names:
            if alias.name != "*":
                names.append(f"{target}.{alias.name}")  # maybe a submodule
    out = []
    for name in names:
        parts = name.split(".")
        out += [".".join(parts[: i + 1]) for i in range(len(parts))]
    return out


def _import_time_statements(tree, guards):
    """Import statements that run when the module is imported on CUDA: not in a function, on
    a path whose conditions are all true on CUDA, not in a `try:` that catches ImportError."""
    from .python.guards import module_level

    out = []
    memo: dict = {}  # (the literals of statements share their tails: each is judged once)
    for node, (literals, guarded) in module_level(tree):
        if not isinstance(node, (ast.Import, ast.ImportFrom)) or guarded:
            continue
        if literals.all_hold(lambda test, pol: guards.cuda_value(test) is pol, memo):
            out.append(node)
    return out


def collect_aiter_import_time(paths) -> dict[str, list[tuple[int, int, int, int, str]]]:
    """Per file: the import-time aiter findings of `ungated-aiter-import` (import-time policy)."""
    import os

    from .python.guards import Guards

    pkg_cache: dict[str, bool] = {}
    files = {}
    for path in paths:
        name = _module_name(path, pkg_cache)
        files[path] = (name, os.path.basename(path) == "__init__.py")
    by_module = {name: path for path, (name, _) in files.items()}
    data_cache: dict[str, bytes] = {}
    parsed: dict[str, tuple] = {}

    def data_of(path):
        if path not in data_cache:
            try:
                with open(path, "rb") as fh:
                    data_cache[path] = fh.read()
            except OSError:
                data_cache[path] = b""
        return data_cache[path]

    def parse(path):
        """(tree, import-time import statements) of a file, computed once."""
        if path not in parsed:
            try:
                tree = parse_python(data_of(path))
                parsed[path] = (tree, _import_time_statements(tree, Guards(tree)))
            except (SyntaxError, ValueError, RecursionError, MemoryError):
                parsed[path] = (None, [])
        return parsed[path]

    findings: dict[str, list] = {}
    reported: dict[str, set] = {}  # the import-through findings of each file, as a set
    via: dict[str, str] = {}  # tainted module -> what it imports that imports aiter
    direct: set[str] = set()
    for path, (module, is_pkg) in files.items():
        if b"aiter" not in data_of(path):
            continue
        tree, statements = parse(path)
        for node in statements:
            mods = _executed_modules(node, module, is_pkg)
            if any(m == "aiter" for m in mods):
                via.setdefault(module, "aiter")
                direct.add(module)
                if is_pkg:
                    findings.setdefault(path, []).append(
                        _finding(
                            node,
                            "`aiter` import in a package `__init__.py` runs on CUDA "
                            "whenever anything in the package is imported",
                        )
                    )
    frontier = set(via)
    while frontier:
        tokens = {m.rsplit(".", 1)[-1].encode() for m in frontier}
        new: set[str] = set()
        for path, (module, is_pkg) in files.items():
            if module in direct or not any(t in data_of(path) for t in tokens):
                continue
            tree, statements = parse(path)
            for node in statements:
                hit = next(
                    (
                        m
                        for m in _executed_modules(node, module, is_pkg)
                        if m in via and m != module
                    ),
                    None,
                )
                if hit is None:
                    continue
                chain = _chain(hit, via)
                item = _finding(
                    node,
                    f"imports `{hit}` at import time, which imports aiter on CUDA ({chain}): "
                    "put this import under `if _use_aiter:`",
                )
                seen = reported.setdefault(path, set())
                if item not in seen:  # (a set: many imports of one module stay linear)
                    seen.add(item)
                    findings.setdefault(path, []).append(item)
                if module not in via:
                    via[module] = hit
                    new.add(module)
        frontier = new
    del by_module
    return findings


def _chain(module: str, via: dict[str, str]) -> str:
    out = [module]
    seen = {module}
    while out[-1] != "aiter" and len(out) < 8:
        nxt = via.get(out[-1], "aiter")
        if nxt in seen:
            break
        out.append(nxt)
        seen.add(nxt)
    return " -> ".join(out)


def _finding(node, message: str) -> tuple[int, int, int, int, str]:
    return (
        node.lineno,
        node.col_offset,
        getattr(node, "end_lineno", None) or node.lineno,
        getattr(node, "end_col_offset", None) or node.col_offset,
        message,
    )


def aiter_fingerprint(abspath: str) -> str:
    """What a Python file's ungated-aiter-import findings depend on beyond its bytes: its
    import-time findings, and its module's standing in the `reachable` import graph."""
    from .aiter_graph import fingerprint as reachable_fingerprint

    items = _AITER_FINDINGS.get(abspath, [])
    graph = reachable_fingerprint(abspath)
    if not items:
        return "-|" + graph
    import hashlib

    return hashlib.sha256(repr(items).encode()).hexdigest()[:12] + "|" + graph
