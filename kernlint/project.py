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
import re

_TARGETS: frozenset[str] = frozenset()
_TEMPLATE_ARGS = re.compile(r"<[^<>]*>")


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
    prev = None
    while prev != text:
        prev = text
        text = _TEMPLATE_ARGS.sub("", text)
    parts = [p.strip() for p in text.split("::") if p.strip()]
    if parts and parts[0] == "sglang":
        parts = parts[1:]
    return "::".join(parts)


def _string_value(node) -> str | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        # f"&Kernel<{args}>::run": keep the literal parts; `{...}` stand for template arguments.
        out = []
        for part in node.values:
            if isinstance(part, ast.Constant) and isinstance(part.value, str):
                out.append(part.value)
            else:
                out.append("_")
        return "".join(out)
    return None


def _targets_in_tree(tree) -> set[str]:
    """FFI targets named by `cuda_wrappers=[(name, target), ...]` calls in a parsed tree."""
    out: set[str] = set()
    for node in ast.walk(tree):
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
_WRAPPERS = re.compile(rb"cuda_wrappers(?<=\bcuda_wrappers)\s*=\s*(?=[\[(])")


def _bracketed(data: bytes, start: int) -> bytes | None:
    """The balanced `[...]`/`(...)` starting at `start` (string literals respected)."""
    depth = 0
    i = start
    quote = None
    while i < len(data):
        c = data[i : i + 1]
        if quote:
            if c == b"\\":
                i += 2
                continue
            if c == quote:
                quote = None
        elif c in (b"'", b'"'):
            quote = c
        elif c in (b"[", b"("):
            depth += 1
        elif c in (b"]", b")"):
            depth -= 1
            if depth == 0:
                return data[start : i + 1]
        i += 1
    return None


def targets_in_snippets(data: bytes) -> set[str]:
    """Wrapper targets from each `cuda_wrappers=[...]` literal, parsed on its own (a few
    hundred bytes) rather than parsing the whole file."""
    out: set[str] = set()
    from .engine import contains

    if not contains(data, b"cuda_wrappers"):
        return out  # a substring search, much faster than the regex over the whole file
    for m in _WRAPPERS.finditer(data):
        snippet = _bracketed(data, m.end())
        if snippet is None:
            continue
        try:
            expr = ast.parse(b"f(cuda_wrappers=" + snippet + b")", mode="eval")
        except (SyntaxError, ValueError):
            continue
        out |= _targets_in_tree(expr)
    return out


_CACHE_KEY = "project:cuda-wrappers"


def collect(paths, cache=None, stats=None) -> set[str]:
    """Wrapper targets of all the Python files; with a cache, files whose size and mtime are
    unchanged since the last run are not read again. `stats`: the files' `os.stat` results
    (None where it failed), needed with a cache."""
    out: set[str] = set()
    if cache is not None:
        from .cache import content_hash, decode_targets, encode_targets
    for k, path in enumerate(paths):
        st = None
        if cache is not None:
            st = stats[k]
            if st is None:
                continue
            found = cache.lookup_stat(path, _CACHE_KEY, st)
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
        targets = targets_in_snippets(data)
        out |= targets
        if cache is not None and st is not None:
            cache.store(path, _CACHE_KEY, st, content_hash(data), encode_targets(targets))
    return out


# -- aiter imports at import time (the `import-time` policy of ungated-aiter-import) ---------
_AITER_FINDINGS: dict[str, list[tuple[int, int, int, int, str]]] = {}


def aiter_import_time_findings(abspath: str) -> list[tuple[int, int, int, int, str]]:
    return _AITER_FINDINGS.get(abspath, [])


def set_aiter_findings(findings) -> None:
    global _AITER_FINDINGS
    _AITER_FINDINGS = dict(findings)


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
    for node, (literals, guarded) in module_level(tree):
        if not isinstance(node, (ast.Import, ast.ImportFrom)) or guarded:
            continue
        if all(guards.cuda_value(test) is pol for test, pol in literals):
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
                tree = ast.parse(data_of(path))
                parsed[path] = (tree, _import_time_statements(tree, Guards(tree)))
            except (SyntaxError, ValueError, RecursionError):
                parsed[path] = (None, [])
        return parsed[path]

    findings: dict[str, list] = {}
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
                if item not in findings.setdefault(path, []):
                    findings[path].append(item)
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
    items = _AITER_FINDINGS.get(abspath, [])
    if not items:
        return "-"
    import hashlib

    return hashlib.sha256(repr(items).encode()).hexdigest()[:12]
