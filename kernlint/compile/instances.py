"""What the compile pass builds: template instantiations from the config and from `load_jit`.

JIT kernels are templates instantiated from Python, so a header alone compiles no kernel. The
instantiations come, in this order, from:

1. `compile-instantiate` in the config: a file (path or glob, relative to the config) mapped to
   the symbols to instantiate, written as `load_jit`'s `cuda_wrappers` write them
   (`"FusedAddRMSNorm<bf16_t, 4096, true>::run"`, looked up inside `namespace sglang`), or, for
   a Triton kernel, a table (`{ kernel = "...", signature = {...}, constexprs = {...} }`);
2. `load_jit(..., cuda_files=[...], cuda_wrappers=[...])` calls whose wrapper symbols are
   string literals, or f-strings whose every `{...}` is a name assigned, in the same function,
   `make_cpp_args(...)` of literal values (numbers, booleans, strings, `torch.<dtype>`); a
   value known only at run time (a tensor's dtype, `is_arch_support_pdl()`) leaves the call
   unresolved;
3. a kernel that is no template: its file is compiled as it is.
"""

from __future__ import annotations

import ast
import os

from ..config import ConfigError

# torch dtypes as SGLang's `make_cpp_args` renders them (sglang/kernels/jit/utils/compile/cpp_args.py)
CPP_DTYPES = {
    "float64": "double",
    "double": "double",
    "float32": "fp32_t",
    "float": "fp32_t",
    "float16": "fp16_t",
    "half": "fp16_t",
    "bfloat16": "bf16_t",
    "float8_e4m3fn": "fp8_e4m3_t",
    "float8_e4m3fnuz": "fp8_e4m3_t",
    "float8_e5m2": "fp8_e5m2_t",
    "float8_e5m2fnuz": "fp8_e5m2_t",
    "int8": "int8_t",
    "int16": "int16_t",
    "int32": "int32_t",
    "int": "int32_t",
    "int64": "int64_t",
    "long": "int64_t",
    "uint8": "uint8_t",
    "uint16": "uint16_t",
    "uint32": "uint32_t",
    "uint64": "uint64_t",
    "bool": "bool",
}
TRITON_KEYS = {
    "kernel": str,
    "signature": dict,
    "constexprs": dict,
    "num_warps": int,
    "num_stages": int,
}


def check_config(path: str, table: dict) -> None:
    """Validate `compile-instantiate` (a ConfigError naming the file and key)."""
    from ..config import _key

    for pattern, entries in table.items():
        where = f"{path}: `compile-instantiate.{_key(pattern)}`"
        if not isinstance(entries, list) or not entries:
            raise ConfigError(f"{where} must be a non-empty array of instantiations")
        for i, entry in enumerate(entries, 1):
            if isinstance(entry, str):
                if not entry.strip():
                    raise ConfigError(f"{where}: item {i} is empty")
                continue
            if not isinstance(entry, dict):
                raise ConfigError(
                    f"{where}: item {i} must be a C++ symbol (a string) or a Triton "
                    "instantiation (a table with `kernel` and `signature`)"
                )
            for key, value in entry.items():
                expected = TRITON_KEYS.get(key)
                if expected is None:
                    known = ", ".join(TRITON_KEYS)
                    raise ConfigError(f"{where}: item {i}: unknown key `{key}` (known: {known})")
                if not isinstance(value, expected) or (expected is int and isinstance(value, bool)):
                    raise ConfigError(f"{where}: item {i}: `{key}` has the wrong type")
            if "kernel" not in entry or "signature" not in entry:
                raise ConfigError(
                    f"{where}: item {i}: a Triton instantiation needs `kernel` and `signature`"
                )
            for name, ty in entry["signature"].items():
                if not isinstance(ty, str):
                    raise ConfigError(
                        f"{where}: item {i}: `signature.{name}` must be a type string such as "
                        '"*bf16" or "i32"'
                    )


def configured(settings, abspath: str) -> list:
    """The `compile-instantiate` entries whose path or glob matches `abspath`."""
    table = getattr(settings, "compile_instantiate", None)
    if not table:
        return []
    from ..config import _relative, _spec

    rel = _relative(abspath, settings.compile_instantiate_root)
    posix = abspath.replace(os.sep, "/").lstrip("/")
    out = []
    for pattern, entries in table.items():
        spec = _spec([pattern])
        if rel is not None and (rel == pattern.removeprefix("./") or spec.match_file(rel)):
            out.extend(entries)
        elif rel is None and pattern.startswith("**/") and spec.match_file(posix):
            out.extend(entries)  # (a file outside the config's directory: `**/` globs match)
    return out


def configured_files(settings) -> list[str]:
    """The plain paths (no glob characters) named in `compile-instantiate`, absolute."""
    table = getattr(settings, "compile_instantiate", None) or {}
    out = []
    for pattern in table:
        if not any(c in pattern for c in "*?["):
            out.append(os.path.normpath(os.path.join(settings.compile_instantiate_root, pattern)))
    return out


class JitInstance:
    """One `load_jit` call kernlint can build: its C++ files, the wrapper symbols with the
    template arguments filled in, and its literal extra flags."""

    def __init__(
        self, pyfile: str, line: int, files: list[str], symbols: list[str], flags: list[str]
    ):
        self.pyfile = pyfile
        self.line = line
        self.files = files
        self.symbols = symbols
        self.flags = flags


def load_jit_instances(pyfile: str, data: bytes, settings) -> tuple[list[JitInstance], int]:
    """The `load_jit` calls of a Python file whose wrappers resolve to literal text, and the
    number of calls with wrappers that do not."""
    loaders = tuple(getattr(settings, "jit_loaders", None) or ("load_jit",))
    if b"_wrappers" not in data or not any(name.encode() in data for name in loaders):
        return [], 0
    try:
        tree = ast.parse(data)
    except (SyntaxError, ValueError, RecursionError):
        return [], 0
    from ..jit_wiring import LAYOUT_DIRS, find_root, resolve_source

    roots = [r for r in (find_root(pyfile, layout, settings) for layout in LAYOUT_DIRS) if r]
    if not roots:
        return [], 0
    root = roots[0]
    out: list[JitInstance] = []
    unresolved = 0
    for func in [
        n
        for n in ast.walk(tree)
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Module))
    ]:
        body = func.body
        args = _cpp_args_of(body)
        for node in _calls_in(body):
            if not _is_load_jit(node, loaders):
                continue
            kws = {kw.arg: kw.value for kw in node.keywords if kw.arg}
            wrappers = kws.get("cuda_wrappers")
            if wrappers is None:
                continue
            files = _strings(kws.get("cuda_files"))
            symbols = _wrapper_symbols(wrappers, args)
            flags = _strings(kws.get("extra_cuda_cflags")) or []
            if files is None or symbols is None:
                unresolved += 1
                continue
            paths = [resolve_source(root, f) for f in files]
            if any(p is None for p in paths):
                unresolved += 1
                continue
            out.append(JitInstance(pyfile, node.lineno, paths, symbols, flags))
    return out, unresolved


def _calls_in(body):
    """Calls in a function body, not in nested functions (their own bodies are visited)."""
    todo = list(body)
    while todo:
        node = todo.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue
        if isinstance(node, ast.Call):
            yield node
        todo.extend(ast.iter_child_nodes(node))


def _is_load_jit(node, loaders=("load_jit",)) -> bool:
    """A call of the JIT loader (`jit-loaders`; SGLang's `load_jit`)."""
    f = node.func
    return (isinstance(f, ast.Name) and f.id in loaders) or (
        isinstance(f, ast.Attribute) and f.attr in loaders
    )


def _strings(node) -> list[str] | None:
    if node is None:
        return []
    if not isinstance(node, (ast.List, ast.Tuple)):
        return None
    out = []
    for elt in node.elts:
        if not (isinstance(elt, ast.Constant) and isinstance(elt.value, str)):
            return None
        out.append(elt.value)
    return out


def _cpp_args_of(body) -> dict[str, str]:
    """Names assigned `make_cpp_args(<literals>)` directly in a body: their rendering."""
    out: dict[str, str] = {}
    for stmt in body:
        if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1):
            continue
        target, value = stmt.targets[0], stmt.value
        if not isinstance(target, ast.Name):
            continue
        if not (isinstance(value, ast.Call) and _callee(value) == "make_cpp_args"):
            continue
        if value.keywords:
            continue
        parts = [_literal_arg(a) for a in value.args]
        if all(p is not None for p in parts):
            out[target.id] = ", ".join(parts)
    return out


def _callee(call) -> str | None:
    f = call.func
    if isinstance(f, ast.Name):
        return f.id
    if isinstance(f, ast.Attribute):
        return f.attr
    return None


def _literal_arg(node) -> str | None:
    if isinstance(node, ast.Constant):
        v = node.value
        if isinstance(v, bool):
            return "true" if v else "false"
        if isinstance(v, (int, float, str)):
            return str(v)
        return None
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        inner = _literal_arg(node.operand)
        return None if inner is None or inner.startswith("-") else "-" + inner
    if (
        isinstance(node, ast.Attribute)
        and isinstance(node.value, ast.Name)
        and node.value.id == "torch"
        and node.attr in CPP_DTYPES
    ):
        return CPP_DTYPES[node.attr]
    return None


def _wrapper_symbols(node, args: dict[str, str]) -> list[str] | None:
    if not isinstance(node, (ast.List, ast.Tuple)):
        return None
    out = []
    for elt in node.elts:
        if not (isinstance(elt, (ast.Tuple, ast.List)) and len(elt.elts) == 2):
            return None
        sym = elt.elts[1]
        if isinstance(sym, ast.Constant) and isinstance(sym.value, str):
            out.append(sym.value)
            continue
        if not isinstance(sym, ast.JoinedStr):
            return None
        text = []
        for part in sym.values:
            if isinstance(part, ast.Constant) and isinstance(part.value, str):
                text.append(part.value)
            elif (
                isinstance(part, ast.FormattedValue)
                and isinstance(part.value, ast.Name)
                and part.value.id in args
                and part.format_spec is None
            ):
                text.append(args[part.value.id])
            else:
                return None
        out.append("".join(text))
    return out
