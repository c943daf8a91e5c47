"""Triton kernels for the compile pass: found with `ast`, built for a CUDA target without a GPU.

`find_kernels` lists the `@triton.jit` functions of a file and their literal `triton.autotune`
configs; `instantiations` turns the builds a user configured (plus those configs) into concrete
signatures; `compile_kernel` / `compile_builds` build them with `triton.compile(ASTSource(...),
target=GPUTarget("cuda", 90, 32))` in a child Python process and read registers and spills
from the ptxas report Triton writes while making the cubin (`cuobjdump -res-usage` on the cubin
when no report comes back).

The user's module is never imported. The child imports a synthetic module instead: the file's
`triton` imports, its module-level literal assignments and every `@triton.jit` function (other
decorators dropped), each at its own line so Triton's line numbers are the file's, each run on
its own so one that fails (an import this Triton lacks) leaves the others. A kernel that reads
anything else (a helper imported from another module, a global computed at import time) does not
compile; the reason says which name and where it comes from.
"""

from __future__ import annotations

import ast
import importlib.util
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from typing import Any

from ..lazyre import lazy_compile
from .build_dir import parse_res_usage
from .model import Usage
from .ptxas import ptxas_report
from .toolchain import find_tool

# Triton's type names (`triton._utils.type_canonicalisation_dict`): the canonical ones and the
# torch-style aliases it accepts for them.
_SCALARS = {
    "fp8e4nv", "fp8e4b8", "fp8e5", "fp8e5b16", "fp8e4b15", "fp16", "bf16", "fp32", "fp64",
    "i1", "i8", "i16", "i32", "i64", "u1", "u8", "u16", "u32", "u64",
}  # fmt: skip
_ALIASES = {
    "bool": "u1", "int1": "u1", "uint1": "u1", "i1": "u1",
    "float8e4nv": "fp8e4nv", "float8e5": "fp8e5", "float8e4b15": "fp8e4b15",
    "float8_e4m3fn": "fp8e4nv", "float8e4b8": "fp8e4b8", "float8_e4m3fnuz": "fp8e4b8",
    "float8_e5m2": "fp8e5", "float8e5b16": "fp8e5b16", "float8_e5m2fnuz": "fp8e5b16",
    "half": "fp16", "float16": "fp16", "bfloat16": "bf16", "float": "fp32", "float32": "fp32",
    "double": "fp64", "float64": "fp64", "int8": "i8", "int16": "i16", "int": "i32",
    "int32": "i32", "int64": "i64", "uint8": "u8", "uint16": "u16", "uint32": "u32",
    "uint64": "u64",
}  # fmt: skip
# `tl.<name>` dtypes a string constexpr may name ("tl.float16" stands for tl.float16).
_DTYPES = {
    "float16", "bfloat16", "float32", "float64", "int1", "int8", "int16", "int32", "int64",
    "uint8", "uint16", "uint32", "uint64", "float8e4nv", "float8e5", "float8e4b15", "float8e4b8",
    "float8e5b16",
}  # fmt: skip
_TYPE = lazy_compile(r"(\*k?)?([A-Za-z0-9_]+)(:16)?")

_JIT = {"triton.jit", "triton.runtime.jit", "triton.runtime.jit.jit"}
_AUTOTUNE = {"triton.autotune", "triton.runtime.autotune", "triton.runtime.autotuner.autotune"}
_CONFIG = {"triton.Config", "triton.runtime.Config", "triton.runtime.autotuner.Config"}
_HEURISTICS = {
    "triton.heuristics",
    "triton.runtime.heuristics",
    "triton.runtime.autotuner.heuristics",
}
# Keyword arguments of `triton.jit(...)` that are kept (when literal) in the synthetic module;
# `repr` and `launch_metadata` (functions) only name or describe the launch and are dropped.
_JIT_KEEP = {"do_not_specialize", "do_not_specialize_on_alignment", "debug", "noinline"}
_RETURN = lazy_compile(rb"(?m)\breturn[ \t(]*[^\s#;)]")
_ENTRY_KEYS = ("kernel", "signature", "constexprs", "num_warps", "num_stages")


@dataclass(frozen=True)
class TritonKernel:
    """One `@triton.jit` function of a file.

    start/end: byte offsets of the function's name in the file (for the finding's position);
    line: its 1-based line. params: parameter names in order; constexpr: those annotated
    `tl.constexpr`. autotune: (constexprs, num_warps, num_stages) of each `triton.Config` of its
    `@triton.autotune`, None when it has none or when a config is not literal (`reason` says
    which). heuristics: the constexprs `@triton.heuristics` computes at run time. defaults:
    literal default values; types: Triton types fixed by annotations (`n: tl.int64`); no_align:
    parameters named in `do_not_specialize(_on_alignment)` (no divisibility hint). helper: it
    returns a value, so it is a device function other kernels call, not a kernel to launch.
    """

    name: str
    start: int
    end: int
    line: int
    params: tuple[str, ...]
    constexpr: tuple[str, ...]
    autotune: list[tuple[dict, int, int]] | None = None
    reason: str = ""
    heuristics: tuple[str, ...] = ()
    defaults: dict[str, Any] = field(default_factory=dict)
    types: dict[str, str] = field(default_factory=dict)
    no_align: tuple[str, ...] = ()
    helper: bool = False


# --- reading the file --------------------------------------------------------------------------


def _split_lines(text: str) -> list[str]:
    """Lines as Python's tokenizer counts them (\\r\\n, \\r, \\n), each with its ending."""
    parts = re.split(r"(\r\n|\r|\n)", text)
    lines = [parts[i] + parts[i + 1] for i in range(0, len(parts) - 1, 2)]
    if parts[-1]:
        lines.append(parts[-1])
    return lines


def _literal(node: ast.AST) -> tuple[bool, Any]:
    try:
        return True, ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return False, None


def _dotted(node: ast.AST) -> str | None:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    parts.append(node.id)
    return ".".join(reversed(parts))


def _is_triton(module: str | None) -> bool:
    return bool(module) and (module == "triton" or module.startswith("triton."))


def _module_statements(body, indent=0):
    """(statement, indent to strip) for module-level statements, also those inside module-level
    `if` / `try` / `with` blocks (`if HAS_TRITON:` guards around kernels). `except` handlers are
    left out: they are what runs when the import of Triton fails (`triton = None`)."""
    for stmt in body:
        yield stmt, indent
        blocks = []
        if isinstance(stmt, ast.If):
            blocks = [stmt.body, stmt.orelse]
        elif isinstance(stmt, ast.Try) or type(stmt).__name__ == "TryStar":
            blocks = [stmt.body, stmt.orelse, stmt.finalbody]
        elif isinstance(stmt, ast.With):
            blocks = [stmt.body]
        for block in blocks:
            if block:
                yield from _module_statements(block, block[0].col_offset)


class _Module:
    """What the synthetic module is made of, and where every other module-level name comes from."""

    def __init__(self, data: bytes, tree: ast.Module | None = None):
        self.tree = tree if tree is not None else ast.parse(data)
        self.line_starts = [0]
        for raw in data.splitlines(keepends=True):
            self.line_starts.append(self.line_starts[-1] + len(raw))
        self.data = data
        # alias -> dotted triton name ("tl" -> "triton.language", "jit" -> "triton.jit")
        self.aliases: dict[str, str] = {"triton": "triton"}
        self.kept: list[tuple[ast.stmt, int]] = []  # statements copied into the synthetic module
        self.jit: list[tuple[ast.FunctionDef, int]] = []
        self.bound: dict[str, str] = {}  # name -> how it is bound, when not usable by a kernel
        self.literals: dict[str, ast.AST] = {}  # name -> literal value node (module level)
        literal_stmts: dict[str, list[ast.stmt]] = {}
        statements = list(_module_statements(self.tree.body))
        for stmt, _ in statements:  # imports first: decorators are resolved through them
            if isinstance(stmt, ast.Import):
                for a in stmt.names:
                    if _is_triton(a.name) and a.name != "*":
                        if a.asname:
                            self.aliases[a.asname] = a.name
                        else:
                            self.aliases[a.name.split(".")[0]] = a.name.split(".")[0]
            elif isinstance(stmt, ast.ImportFrom) and not stmt.level and _is_triton(stmt.module):
                for a in stmt.names:
                    if a.name != "*":
                        self.aliases[a.asname or a.name] = f"{stmt.module}.{a.name}"
        for stmt, indent in statements:
            if isinstance(stmt, (ast.Import, ast.ImportFrom)):
                mod = stmt.module if isinstance(stmt, ast.ImportFrom) else None
                if isinstance(stmt, ast.ImportFrom):
                    if mod == "__future__":
                        continue
                    triton_import = not stmt.level and _is_triton(mod)
                    origin = "." * stmt.level + (mod or "")
                    for a in stmt.names:
                        if not triton_import and a.name != "*":
                            self.bound[a.asname or a.name] = f"imported from `{origin}`"
                else:
                    triton_import = all(_is_triton(a.name) for a in stmt.names)
                    for a in stmt.names:
                        if not _is_triton(a.name):
                            name = a.asname or a.name.split(".")[0]
                            self.bound[name] = f"the module `{a.name}`"
                if triton_import:
                    self.kept.append((stmt, indent))
            elif isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
                if isinstance(stmt, ast.FunctionDef) and self.jit_decorator(stmt) is not None:
                    self.jit.append((stmt, indent))
                    self.kept.append((stmt, indent))
                    self.bound.pop(stmt.name, None)
                else:
                    self.bound[stmt.name] = f"a Python function, line {stmt.lineno}"
            elif isinstance(stmt, ast.ClassDef):
                self.bound[stmt.name] = f"a class, line {stmt.lineno}"
            elif isinstance(stmt, (ast.Assign, ast.AnnAssign)):
                targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
                names = [t.id for t in targets if isinstance(t, ast.Name)]
                simple = len(names) == len(targets) and stmt.value is not None
                if any(n in self.aliases for n in names):
                    continue  # (`tl = None`-style fallbacks never replace the triton imports)
                if simple and self._literal_value(stmt.value):
                    for n in names:
                        literal_stmts.setdefault(n, []).append(stmt)
                        self.literals[n] = stmt.value
                else:
                    for t in targets:
                        for node in ast.walk(t):
                            if isinstance(node, ast.Name):
                                self.bound[node.id] = f"computed at import time, line {stmt.lineno}"
            elif not isinstance(stmt, (ast.If, ast.Try, ast.With, ast.Expr, ast.Pass)):
                if type(stmt).__name__ == "TryStar":
                    continue
                for node in ast.walk(stmt):
                    if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                        self.bound[node.id] = f"computed at import time, line {stmt.lineno}"
        # A name also bound some other way is not a literal of the module: leave it out.
        indent_of = {id(s): i for s, i in statements}
        for name, stmts in literal_stmts.items():
            if name in self.bound:
                self.literals.pop(name, None)
                continue
            for s in stmts:
                entry = (s, indent_of[id(s)])
                if entry not in self.kept:
                    self.kept.append(entry)
        self.kept.sort(key=lambda e: e[0].lineno)
        self.kept_names: dict[str, int] = {}  # name -> line of the kept statement binding it
        for stmt, _ in self.kept:
            if isinstance(stmt, ast.Import):
                for a in stmt.names:
                    self.kept_names[a.asname or a.name.split(".")[0]] = stmt.lineno
            elif isinstance(stmt, ast.ImportFrom):
                for a in stmt.names:
                    self.kept_names[a.asname or a.name] = stmt.lineno
            elif isinstance(stmt, ast.FunctionDef):
                self.kept_names[stmt.name] = stmt.lineno
            else:
                targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
                for t in targets:
                    self.kept_names[t.id] = stmt.lineno

    def _literal_value(self, node: ast.AST) -> bool:
        """A literal, `tl.constexpr(<literal>)`, or an attribute of a triton module (`tl.float16`)."""
        if _literal(node)[0]:
            return True
        if isinstance(node, ast.Call) and not node.keywords and len(node.args) == 1:
            func = self.qualname(node.func)
            if func in ("triton.language.constexpr", "triton.language.core.constexpr"):
                return self._literal_value(node.args[0])
        if isinstance(node, ast.Attribute):
            name = self.qualname(node)
            return bool(name) and _is_triton(name)
        return False

    def qualname(self, node: ast.AST) -> str | None:
        dotted = _dotted(node)
        if dotted is None:
            return None
        head, _, rest = dotted.partition(".")
        base = self.aliases.get(head)
        if base is None:
            return None
        return f"{base}.{rest}" if rest else base

    def _callee(self, dec: ast.AST) -> str | None:
        return self.qualname(dec.func if isinstance(dec, ast.Call) else dec)

    def jit_decorator(self, fn: ast.FunctionDef) -> ast.AST | None:
        for dec in fn.decorator_list:
            if self._callee(dec) in _JIT:
                return dec
        return None

    def offset(self, line: int, col: int) -> int:
        return self.line_starts[line - 1] + col

    # --- the kernels ---------------------------------------------------------------------------

    def kernels(self) -> list[TritonKernel]:
        out = []
        for fn, _ in self.jit:
            line_bytes = self.data[self.line_starts[fn.lineno - 1] : self.line_starts[fn.lineno]]
            m = re.compile(rb"def\s+(" + re.escape(fn.name.encode()) + rb")\b").search(
                line_bytes, fn.col_offset
            )
            start = self.line_starts[fn.lineno - 1] + (m.start(1) if m else fn.col_offset)
            args = fn.args
            plist = [*args.posonlyargs, *args.args, *args.kwonlyargs]
            params = tuple(a.arg for a in plist)
            constexpr = tuple(
                a.arg for a in plist if a.annotation and "constexpr" in ast.unparse(a.annotation)
            )
            defaults: dict[str, Any] = {}
            positional = [*args.posonlyargs, *args.args]
            for a, d in zip(
                positional[len(positional) - len(args.defaults) :], args.defaults, strict=True
            ):
                ok, value = _literal(d)
                if ok:
                    defaults[a.arg] = value
            for a, d in zip(args.kwonlyargs, args.kw_defaults, strict=True):
                if d is not None:
                    ok, value = _literal(d)
                    if ok:
                        defaults[a.arg] = value
            types = {}
            for a in plist:
                if a.annotation is not None and a.arg not in constexpr:
                    ty = _annotation_type(a.annotation)
                    if ty:
                        types[a.arg] = ty
            no_align: list[str] = []
            dec = self.jit_decorator(fn)
            if isinstance(dec, ast.Call):
                for kw in dec.keywords:
                    if kw.arg in ("do_not_specialize", "do_not_specialize_on_alignment"):
                        ok, value = _literal(kw.value)
                        for v in value if ok and isinstance(value, (list, tuple)) else ():
                            if isinstance(v, int) and 0 <= v < len(params):
                                no_align.append(params[v])
                            elif isinstance(v, str):
                                no_align.append(v)
            autotune, reason = None, ""
            heuristics: list[str] = []
            for d in fn.decorator_list:
                callee = self._callee(d)
                if callee in _AUTOTUNE and isinstance(d, ast.Call):
                    autotune, reason = self._autotune(d)
                elif callee in _HEURISTICS and isinstance(d, ast.Call):
                    values = d.args[0] if d.args else None
                    for kw in d.keywords:
                        if kw.arg == "values":
                            values = kw.value
                    if isinstance(values, ast.Dict):
                        for k in values.keys:
                            ok, key = _literal(k) if k is not None else (False, None)
                            if ok and isinstance(key, str):
                                heuristics.append(key)
            out.append(
                TritonKernel(
                    name=fn.name,
                    start=start,
                    end=start + len(fn.name.encode()),
                    line=fn.lineno,
                    params=params,
                    constexpr=constexpr,
                    autotune=autotune,
                    reason=reason,
                    heuristics=tuple(heuristics),
                    defaults=defaults,
                    types=types,
                    no_align=tuple(dict.fromkeys(no_align)),
                    helper=_returns_value(fn, self.data, self.line_starts),
                )
            )
        return out

    def _autotune(self, dec: ast.Call) -> tuple[list | None, str]:
        configs = dec.args[0] if dec.args else None
        for kw in dec.keywords:
            if kw.arg == "configs":
                configs = kw.value
        where = f"the triton.autotune configs at line {dec.lineno}"
        if isinstance(configs, ast.Name) and configs.id in self._list_assignments():
            configs = self._list_assignments()[configs.id]
        if not isinstance(configs, (ast.List, ast.Tuple)):
            shown = ast.unparse(configs) if configs is not None else "nothing"
            return None, f"{where} are not a literal list (`{_short(shown)}`)"
        out = []
        for item in configs.elts:
            if not (isinstance(item, ast.Call) and self.qualname(item.func) in _CONFIG):
                return None, f"{where} hold `{_short(ast.unparse(item))}`, not a triton.Config"
            kwargs_node = item.args[0] if item.args else None
            values = {"num_warps": 4, "num_stages": 3}
            for kw in item.keywords:
                if kw.arg == "kwargs":
                    kwargs_node = kw.value
                elif kw.arg == "pre_hook":
                    continue  # (runs before a launch: no part of the build)
                elif kw.arg in ("num_warps", "num_stages", "num_ctas", "maxnreg", "ir_override"):
                    ok, value = _literal(kw.value)
                    if not ok:
                        return None, f"{where}: `{kw.arg}` at line {item.lineno} is not literal"
                    values[kw.arg] = value
                else:
                    return None, f"{where}: triton.Config at line {item.lineno} has `{kw.arg}`"
            for key in ("num_ctas", "maxnreg", "ir_override"):
                if values.get(key) not in (None, 1 if key == "num_ctas" else None):
                    return None, (
                        f"{where}: triton.Config at line {item.lineno} sets `{key}`, "
                        "which kernlint does not build"
                    )
            for i, arg in enumerate(item.args[1:], 1):  # (positional num_warps, num_stages, ...)
                ok, value = _literal(arg)
                if not ok or i > 2:
                    return None, f"{where}: triton.Config at line {item.lineno} is not literal"
                values[("num_warps", "num_stages")[i - 1]] = value
            ok, kwargs = _literal(kwargs_node) if kwargs_node is not None else (True, {})
            if not ok or not isinstance(kwargs, dict):
                return None, f"{where}: triton.Config at line {item.lineno} is not literal"
            nw, ns = values["num_warps"], values["num_stages"]
            if not isinstance(nw, int) or not isinstance(ns, int):
                return None, f"{where}: triton.Config at line {item.lineno} is not literal"
            out.append((kwargs, nw, ns))
        return out, ""

    def _list_assignments(self) -> dict[str, ast.AST]:
        """Module-level `NAME = [...]` assignments (autotune config lists kept in a global)."""
        found = {}
        for stmt in self.tree.body:
            if (
                isinstance(stmt, ast.Assign)
                and len(stmt.targets) == 1
                and isinstance(stmt.targets[0], ast.Name)
                and isinstance(stmt.value, (ast.List, ast.Tuple))
            ):
                found[stmt.targets[0].id] = stmt.value
        return found

    # --- the synthetic module ------------------------------------------------------------------

    def synthetic(self) -> tuple[str, int]:
        """(source, line shift): the kept statements at their own lines, other lines blank; the
        header imports on line 1 (shift 0) or, when line 1 starts a compound statement, on two
        lines of their own (shift 2)."""
        text = self.data.decode("utf-8", errors="replace").removeprefix("\ufeff")
        lines = _split_lines(text)
        out = ["\n"] * len(lines)
        per_line: dict[int, int] = {}
        for stmt, _ in _module_statements(self.tree.body):
            for ln in range(stmt.lineno, (stmt.end_lineno or stmt.lineno) + 1):
                if not isinstance(stmt, (ast.If, ast.Try, ast.With)):
                    per_line[ln] = per_line.get(ln, 0) + 1
        for stmt, indent in self.kept:
            first, last = stmt.lineno, stmt.end_lineno or stmt.lineno
            if isinstance(stmt, ast.FunctionDef) and stmt.decorator_list:
                first = min(d.lineno for d in stmt.decorator_list)
            shared = any(per_line.get(ln, 0) > 1 for ln in range(first, last + 1))
            if shared and first == last and not isinstance(stmt, ast.FunctionDef):
                out[first - 1] = ast.unparse(stmt) + "\n"
                continue
            for ln in range(first, last + 1):
                s = lines[ln - 1].rstrip("\r\n")
                if indent and s[:indent].strip() == "":
                    s = s[indent:]
                out[ln - 1] = s + "\n"
            if isinstance(stmt, ast.FunctionDef):
                jit = self.jit_decorator(stmt)
                for d in stmt.decorator_list:
                    for ln in range(d.lineno, (d.end_lineno or d.lineno) + 1):
                        out[ln - 1] = "\n"
                    if d is jit:
                        out[d.lineno - 1] = "@" + self._jit_text(d) + "\n"
        header = "from __future__ import annotations; import triton; import triton.language as tl"
        if not out or out[0] == "\n":
            out[:1] = [header + "\n"]
            return "".join(out), 0
        first_stmt = self.tree.body[0] if self.tree.body else None
        if first_stmt is not None and isinstance(
            first_stmt, (ast.Import, ast.ImportFrom, ast.Assign, ast.AnnAssign)
        ):
            out[0] = header + "; " + out[0]
            return "".join(out), 0
        header2 = (
            "from __future__ import annotations\nimport triton; import triton.language as tl\n"
        )
        return header2 + "".join(out), 2

    def _jit_text(self, dec: ast.AST) -> str:
        if not isinstance(dec, ast.Call):
            return ast.unparse(dec)
        kept = []
        for kw in dec.keywords:
            if kw.arg in _JIT_KEEP and _literal(kw.value)[0]:
                kept.append(f"{kw.arg}={ast.unparse(kw.value)}")
        return f"{ast.unparse(dec.func)}({', '.join(kept)})"


def _returns_value(fn: ast.FunctionDef, data: bytes, line_starts: list[int]) -> bool:
    body = data[line_starts[fn.lineno - 1] : line_starts[min(fn.end_lineno, len(line_starts) - 1)]]
    if not _RETURN.search(body):  # (most kernels: no `return <value>` line at all)
        return False
    stack = list(fn.body)
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Return) and node.value is not None:
            return True
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            stack.extend(ast.iter_child_nodes(node))
    return False


def _short(text: str, limit: int = 60) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _annotation_type(node: ast.AST) -> str | None:
    """The Triton type an annotation fixes (`tl.int64` -> "i64", `"*fp32"` -> "*fp32")."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        text = node.value
    else:
        text = ast.unparse(node)
    for prefix in ("triton.language.", "tl."):
        text = text.removeprefix(prefix)
    pointer = text.startswith("*")
    base = text.lstrip("*")
    base = _ALIASES.get(base, base)
    if base in _SCALARS:
        return ("*" if pointer else "") + base
    return None


def find_kernels(path: str, data: bytes, tree: ast.Module | None = None) -> list[TritonKernel]:
    """Every `@triton.jit` function of a Python file (module level, or inside module-level
    `if`/`try`/`with` blocks), in source order; [] for a file that does not parse. The file is
    read with `ast` only, never imported; `tree`: its `ast.parse(data)` when the caller has it."""
    if b"jit" not in data:
        return []
    try:
        return _Module(data, tree).kernels()
    except (SyntaxError, ValueError, RecursionError):
        return []


# --- what to build ------------------------------------------------------------------------------


def _type_of(value: str) -> str | None:
    """A signature type as Triton's compiler takes it, or None when it is none: `*bf16`,
    `*kfp16` (const pointer), `i32`, `i32:16` (divisible by 16), torch-style aliases
    (`*bfloat16`, `int64`)."""
    if not isinstance(value, str):
        return None
    m = _TYPE.fullmatch(value.strip().replace("tl.", ""))
    if not m:
        return None
    prefix, base, hint = m.group(1) or "", m.group(2), m.group(3) or ""
    base = _ALIASES.get(base, base)
    if base not in _SCALARS:
        return None
    return prefix + base + hint


def _default_type(value: Any) -> str | None:
    if isinstance(value, bool):
        return "u1"
    if isinstance(value, int):
        return "i32" if -(2**31) <= value < 2**31 else "i64"
    if isinstance(value, float):
        return "fp32"
    return None


def _constexpr_ok(value: Any) -> bool:
    return value is None or isinstance(value, (bool, int, float, str))


def _resolve(
    kernel: TritonKernel, signature: dict, constexprs: dict, where: str
) -> tuple[dict[str, str], dict[str, Any]] | str:
    """(full signature in parameter order, constexprs) or a one-line error."""
    k = f"`{kernel.name}`"
    if not isinstance(signature, dict):
        return f"{k}: {where}`signature` must be a table of parameter = type"
    if not isinstance(constexprs, dict):
        return f"{k}: {where}`constexprs` must be a table of parameter = value"
    for name in list(signature) + list(constexprs):
        if name not in kernel.params:
            key = "signature" if name in signature else "constexprs"
            return (
                f"{k}: {where}`{key}.{name}` names no parameter of {k} "
                f"(parameters: {', '.join(kernel.params) or 'none'})"
            )
    full: dict[str, str] = {}
    values: dict[str, Any] = {}
    for name in kernel.params:
        if name in constexprs:
            value = constexprs[name]
            if not _constexpr_ok(value):
                return f"{k}: {where}`constexprs.{name}` must be a number, a boolean or a string"
            if isinstance(value, str) and value.startswith("tl.") and value[3:] not in _DTYPES:
                return (
                    f"{k}: {where}`constexprs.{name}` = {json.dumps(value)} is no Triton dtype "
                    '(e.g. "tl.float16", "tl.bfloat16", "tl.float32")'
                )
            values[name] = value
            full[name] = "constexpr"
        elif name in kernel.constexpr:
            if name in signature and signature[name] != "constexpr":
                return (
                    f"{k}: {where}`signature.{name}` is a tl.constexpr parameter: "
                    "give its value in `constexprs`"
                )
            if name in kernel.defaults and _constexpr_ok(kernel.defaults[name]):
                values[name] = kernel.defaults[name]
                full[name] = "constexpr"
                continue
            note = " (triton.heuristics sets it at run time)" if name in kernel.heuristics else ""
            return f"{k}: {where}constexpr `{name}` has no value{note}: give `constexprs.{name}`"
        elif name in signature:
            ty = _type_of(signature[name])
            if ty is None:
                return (
                    f"{k}: {where}`signature.{name}` = {json.dumps(signature[name])} is no "
                    'Triton type (e.g. "*bf16", "*fp32", "i32", "i64", "fp32")'
                )
            full[name] = ty
        elif name in kernel.types:
            full[name] = kernel.types[name]
        elif name in kernel.defaults and kernel.defaults[name] is None:
            values[name] = None
            full[name] = "constexpr"
        elif name in kernel.defaults and _default_type(kernel.defaults[name]):
            full[name] = _default_type(kernel.defaults[name])
        else:
            return f'{k}: {where}`signature` lacks `{name}`: give its type (e.g. {name} = "i32")'
    return full, values


def _helper_reason(kernel: TritonKernel) -> str:
    return (
        f"`{kernel.name}` returns a value: a @triton.jit helper, built within the kernels that "
        "call it"
    )


def _label(kernel: TritonKernel, full: dict, values: dict, num_warps: int, num_stages) -> str:
    parts = []
    for name in kernel.params:
        if full.get(name) == "constexpr":
            v = values.get(name)
            parts.append(f"{name}={json.dumps(v) if isinstance(v, (bool, type(None))) else v}")
        else:
            parts.append(f"{name}={full[name]}")
    parts.append(f"num_warps={num_warps}")
    if num_stages is not None:
        parts.append(f"num_stages={num_stages}")
    return f"{kernel.name}[{', '.join(parts)}]"


def _warps_error(kernel: TritonKernel, value, where: str) -> str | None:
    if not isinstance(value, int) or isinstance(value, bool) or value not in (1, 2, 4, 8, 16, 32):
        return f"`{kernel.name}`: {where}`num_warps` must be 1, 2, 4, 8, 16 or 32"
    return None


def instantiations(
    kernel: TritonKernel, configured: list[dict]
) -> list[tuple[dict[str, str], dict[str, Any], int, int | None, str]] | str:
    """The builds to run for one kernel: (signature, constexprs, num_warps, num_stages, label)
    each, or one line saying why there is none.

    configured: the user's entries for this kernel, each a table `{ kernel = "...", signature =
    { X = "*bf16", N = "i32" }, constexprs = { BLOCK = 1024 }, num_warps = 4, num_stages = 3 }`
    (num_warps defaults to 4, num_stages to Triton's default; constexprs optional). With literal
    autotune configs, each entry is built once per config: the config's constexprs, num_warps
    and num_stages win, the entry's constexprs fill the rest. Parameters the entry leaves out may
    come from type annotations (`n: tl.int64`), literal defaults (int -> i32, float -> fp32) and
    constexpr defaults. With no entry, a kernel whose every parameter is known that way is built
    as it is; any other gets "no signature given" (pointer dtypes are never guessed).

    Types: Triton's names (`*bf16`, `*kfp16` for a const pointer, `i32`, `fp32`, ...) or torch's
    (`*bfloat16`, `int64`); `i32:16` says the value is divisible by 16 (Triton's hint, as its AOT
    compiler writes it). Pointers get that hint unless named in `do_not_specialize(_on_alignment)`,
    as a tensor torch allocates would. A string constexpr "tl.float16" stands for the dtype.
    """
    k = f"`{kernel.name}`"
    if kernel.helper:
        return _helper_reason(kernel)
    entries = list(configured)
    implicit = not entries
    if implicit:
        entries = [{}]
    builds: list[tuple[dict[str, str], dict[str, Any], int, int | None, str]] = []
    seen = set()
    for n, entry in enumerate(entries):
        where = "" if len(entries) == 1 else f"instantiation {n + 1}: "
        if not isinstance(entry, dict):
            return f"{k}: {where}an instantiation must be a table with `signature`"
        for key in entry:
            if key not in _ENTRY_KEYS:
                return (
                    f"{k}: {where}unknown key `{key}` in an instantiation "
                    f"(known: {', '.join(_ENTRY_KEYS)})"
                )
        if "kernel" in entry and entry["kernel"] != kernel.name:
            return f"{k}: {where}`kernel` = {json.dumps(entry['kernel'])} is another kernel"
        signature = entry.get("signature", {})
        user_constexprs = entry.get("constexprs", {})
        if not isinstance(user_constexprs, dict):
            return f"{k}: {where}`constexprs` must be a table of parameter = value"
        num_warps = entry.get("num_warps", 4)
        num_stages = entry.get("num_stages")
        err = _warps_error(kernel, num_warps, where)
        if err:
            return err
        if num_stages is not None and (
            not isinstance(num_stages, int) or isinstance(num_stages, bool) or num_stages < 1
        ):
            return f"{k}: {where}`num_stages` must be a positive integer"
        variants = [(dict(user_constexprs), num_warps, num_stages)]
        if kernel.autotune:
            variants = []
            for cfg, nw, ns in kernel.autotune:
                for name in cfg:
                    if name not in kernel.params:
                        return (
                            f"{k}: a triton.autotune config sets `{name}`, which is no "
                            f"parameter of {k}"
                        )
                variants.append(({**user_constexprs, **cfg}, nw, ns))
        for constexprs, nw, ns in variants:
            resolved = _resolve(kernel, signature, constexprs, where)
            if isinstance(resolved, str):
                if implicit and "`signature` lacks" in resolved:
                    return (
                        f"{k}: no signature given: list its parameters' types in config "
                        "(kernlint does not guess pointer dtypes)"
                    )
                return resolved
            full, values = resolved
            label = _label(kernel, full, values, nw, ns)
            if label not in seen:
                seen.add(label)
                builds.append((full, values, nw, ns, label))
    return builds


# --- building -----------------------------------------------------------------------------------

_CHILD = r"""
import contextlib, io, json, os, sys
req = json.load(sys.stdin)
out = {"builds": []}
def finish():
    with open(req["result"] + ".tmp", "w") as fh:
        json.dump(out, fh)
    os.replace(req["result"] + ".tmp", req["result"])
try:
    import triton
    import triton.language as tl
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource
    from triton.compiler.errors import CompilationError
except Exception as e:
    out["setup"] = f"{type(e).__name__}: {e}"
    finish(); sys.exit(0)
try:
    triton.knobs.nvidia.dump_ptxas_log = True
except Exception:
    pass
# Each statement of the synthetic module runs on its own: one that fails (an import this Triton
# lacks, a default computed from a missing global) leaves the rest loaded.
import __future__, ast, types
mod = types.ModuleType(req["module"])
mod.__file__ = req["path"]
sys.modules[req["module"]] = mod
failed = []
with open(req["path"], encoding="utf-8") as fh:
    tree = ast.parse(fh.read(), req["path"])
with contextlib.redirect_stdout(io.StringIO()):
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and node.module == "__future__":
            continue
        try:
            code = compile(ast.Module([node], []), req["path"], "exec",
                           flags=__future__.annotations.compiler_flag, dont_inherit=True)
            exec(code, mod.__dict__)
        except Exception as e:
            failed.append({"line": node.lineno, "type": type(e).__name__, "message": str(e)})
out["failed"] = failed
fn = getattr(mod, req["kernel"], None)
if fn is None:
    out["import"] = True
    finish(); sys.exit(0)
def value(v):
    if isinstance(v, str) and v.startswith("tl.") and isinstance(getattr(tl, v[3:], None), tl.dtype):
        return getattr(tl, v[3:])
    return v
import re
def diagnostics(path):
    # The first MLIR `file:line:col: error: ...` line Triton's passes wrote to fd 2.
    with open(path, errors="replace") as fh:
        for line in fh:
            m = re.match(r".*?:(\d+):\d+: error: (.*)", line)
            if m:
                return {"line": int(m.group(1)), "message": m.group(2).strip()}
    return None
for i, b in enumerate(req["builds"]):
    log = io.StringIO()
    errpath = os.path.join(os.path.dirname(req["result"]), f"build{i}.err")
    sys.stderr.flush()
    saved = os.dup(2)
    fd = os.open(errpath, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
    os.dup2(fd, 2)
    os.close(fd)
    try:
        src = ASTSource(fn, signature=b["signature"],
                        constexprs={k: value(v) for k, v in b["constexprs"].items()},
                        attrs={(j,): [["tt.divisibility", 16]] for j in b["aligned"]})
        opts = {"num_warps": b["num_warps"]}
        if b["num_stages"] is not None:
            opts["num_stages"] = b["num_stages"]
        with contextlib.redirect_stdout(log):
            c = triton.compile(src, target=GPUTarget("cuda", req["arch"], 32), options=opts)
        cubin = os.path.join(os.path.dirname(req["result"]), f"build{i}.cubin")
        with open(cubin, "wb") as fh:
            fh.write(c.asm["cubin"])
        res = {"name": c.metadata.name, "log": log.getvalue(), "cubin": cubin}
    except Exception as e:
        err = e
        while isinstance(err.__cause__, CompilationError):
            err = err.__cause__
        info = {"type": type(err).__name__, "message": str(err)}
        if isinstance(err, CompilationError):
            info["message"] = err.error_message or ""
            info["func"] = (err.src or "").split("\n", 1)[0]
            info["rel_line"] = getattr(err.node, "lineno", None)
        res = {"error": info}
    finally:
        sys.stderr.flush()
        os.dup2(saved, 2)
        os.close(saved)
    if "error" in res:
        res["error"]["mlir"] = diagnostics(errpath)
    out["builds"].append(res)
    finish()
"""

_ARCH = lazy_compile(r"sm_(\d+)[a-z]?")


def triton_available() -> str | None:
    """None when Triton can build here, else why not (one line)."""
    if importlib.util.find_spec("triton") is None:
        return "Triton kernels are not compiled: triton is not installed (pip install triton)"
    return None


def _cuobjdump() -> str | None:
    """The cuobjdump Triton ships (it reads what Triton's ptxas writes), else the CUDA one."""
    spec = importlib.util.find_spec("triton")
    if spec and spec.origin:
        cand = os.path.join(os.path.dirname(spec.origin), "backends", "nvidia", "bin", "cuobjdump")
        if os.path.isfile(cand) and os.access(cand, os.X_OK):
            return cand
    return find_tool("cuobjdump")


def _one_line(text: str) -> str:
    for line in (text or "").splitlines():
        if line.strip():
            return _short(line.strip(), 200)
    return ""


def _load_reason(kernel: TritonKernel, mod: _Module, name: str, failed: list, shift: int) -> str:
    """Why `name` (the kernel, or a name it reads) is missing from the synthetic module."""
    line = mod.kept_names.get(name)
    for f in failed:
        if f["line"] - shift == line:
            missing = re.match(r"name '(\w+)' is not defined", f["message"])
            if missing and missing.group(1) in mod.bound:
                return (
                    f"`{kernel.name}`: the definition of `{name}` (line {line}) needs "
                    f"`{missing.group(1)}`, which is not a literal of its module "
                    f"({mod.bound[missing.group(1)]})"
                )
            return (
                f"`{kernel.name}`: the definition of `{name}` (line {line}) does not run on its "
                f"own: {f['type']}: {_one_line(f['message'])}"
            )
    return f"`{kernel.name}`: `{name}` is not defined when the file's Triton code loads on its own"


def _reason(
    kernel: TritonKernel,
    mod: _Module,
    arch: str,
    err: dict,
    lines: dict,
    failed: dict,
    shift: int = 0,
) -> str:
    k = f"`{kernel.name}`"
    message = err.get("message", "")
    func_line = err.get("func", "")
    m = re.match(r"\s*def\s+(\w+)", func_line)
    func = m.group(1) if m else kernel.name
    at = ""
    if err.get("rel_line") and func in lines:
        at = f" (line {lines[func] + err['rel_line'] - 1})"
    who = k if func == kernel.name else f"`{func}` (called by {k})"
    m = re.search(r"NameError\('(\w+) is not defined'\)", message) or re.match(
        r"(\w+) is not defined", message
    )
    if m:
        name = m.group(1)
        line = mod.kept_names.get(name)
        if line in failed:
            f = failed[line]
            return (
                f"{who} reads `{name}`{at}, whose definition (line {line}) does not run on its "
                f"own: {f['type']}: {_one_line(f['message'])}"
            )
        origin = mod.bound.get(name)
        origin = f" ({origin})" if origin else ""
        return (
            f"{who} reads `{name}`{at}, which is not a literal of its module{origin}: kernlint "
            f"compiles a Triton file without importing it; define `{name}` in this file as a "
            "literal or a @triton.jit function"
        )
    m = re.search(r"Cannot access global variable (\w+)", message)
    if m:
        return (
            f"{who} reads the global `{m.group(1)}`{at}, which Triton accepts only when it is "
            f"`{m.group(1)} = tl.constexpr(...)`"
        )
    mlir = err.get("mlir")
    if mlir and "rel_line" not in err and err.get("type") != "PTXASError":
        return (
            f"{k} does not compile for {arch} (line {mlir['line'] - shift}): "
            f"{_short(mlir['message'], 200)}"
        )
    if err.get("type") == "PTXASError":
        found = re.search(r"line (\d+); error\s*:\s*(.*)", message) or re.search(
            r"fatal\s*:\s*(.*)", message
        )
        if found and found.lastindex == 2:
            detail = f"{found.group(2).strip()} (PTX line {found.group(1)})"
        else:
            detail = found.group(1).strip() if found else _one_line(message)
        return f"{k}: ptxas failed for {arch}: {_short(detail, 200)}"
    m = re.fullmatch(r"(\w+)\('(.*)'\)", message.strip(), re.S)
    detail = f"{m.group(1)}: {m.group(2)}" if m else _one_line(message)
    if "rel_line" not in err:
        detail = f"{err.get('type', 'error')}: {detail}" if detail else err.get("type", "error")
    return f"{who} does not compile for {arch}{at}: {_short(detail, 200)}"


def compile_builds(
    path: str,
    data: bytes,
    kernel: TritonKernel,
    builds: list[tuple],
    arch: str,
    timeout: float | None = None,
) -> list[list[Usage] | str]:
    """Build one kernel several times in one child process (each build: (signature, constexprs,
    num_warps, num_stages[, label]) as `instantiations` gives them); for each build, its Usage
    list or why it could not be built. timeout: seconds for them all (default 60 s + 240 s a
    build: a large kernel takes ptxas tens of seconds); past it the child and its ptxas stop."""
    m = _ARCH.fullmatch(arch or "")
    if not m:
        return [f"`{kernel.name}`: arch {arch!r} is not of the form sm_90"] * len(builds)
    try:
        mod = _Module(data)
    except (SyntaxError, ValueError, RecursionError) as e:
        return [f"`{kernel.name}`: the file does not parse: {e}"] * len(builds)
    if kernel.name not in {fn.name for fn, _ in mod.jit}:
        return [f"`{kernel.name}` is no @triton.jit function of this file"] * len(builds)
    if kernel.helper:
        return [_helper_reason(kernel)] * len(builds)
    lines = {fn.name: fn.lineno for fn, _ in mod.jit}
    prepared = []
    results: list[list[Usage] | str | None] = [None] * len(builds)
    for i, build in enumerate(builds):
        signature, constexprs, num_warps, num_stages = build[:4]
        resolved = _resolve(kernel, signature, constexprs or {}, "")
        if isinstance(resolved, str):
            results[i] = resolved
            continue
        err = _warps_error(kernel, num_warps, "")
        if err:
            results[i] = err
            continue
        full, values = resolved
        hints = set(kernel.no_align)
        aligned = [
            j
            for j, name in enumerate(kernel.params)
            if full[name] != "constexpr"
            and (full[name].endswith(":16") or (full[name].startswith("*") and name not in hints))
        ]
        label = build[4] if len(build) > 4 else _label(kernel, full, values, num_warps, num_stages)
        sig = {name: ty.removesuffix(":16") for name, ty in full.items()}
        prepared.append(
            (
                i,
                label,
                num_warps,
                {
                    "signature": sig,
                    "constexprs": values,
                    "aligned": aligned,
                    "num_warps": num_warps,
                    "num_stages": num_stages,
                },
            )
        )
    if not prepared:
        return results  # type: ignore[return-value]
    missing = triton_available()
    if missing:
        for i, *_ in prepared:
            results[i] = missing
        return results  # type: ignore[return-value]
    source, shift = mod.synthetic()
    stem = re.sub(r"\W", "_", os.path.splitext(os.path.basename(path))[0]) or "module"
    with tempfile.TemporaryDirectory(prefix="kernlint-triton-") as tmp:
        module_path = os.path.join(tmp, f"{stem}.py")
        with open(module_path, "w", encoding="utf-8") as fh:
            fh.write(source)
        request = {
            "path": module_path,
            "module": f"_kernlint_triton_{stem}_{os.getpid()}",
            "kernel": kernel.name,
            "arch": int(m.group(1)),
            "result": os.path.join(tmp, "result.json"),
            "builds": [p[3] for p in prepared],
        }
        env = dict(os.environ)
        env["TRITON_CACHE_DIR"] = os.path.join(tmp, "cache")
        env.setdefault("TRITON_DEFAULT_FP_FUSION", "1")  # (Triton 3.9's default, said aloud)
        env["PYTHONDONTWRITEBYTECODE"] = "1"
        limit = timeout if timeout is not None else 60 + 240 * len(prepared)
        proc = subprocess.Popen(
            [sys.executable, "-c", _CHILD],
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            cwd=tmp,
            env=env,
            start_new_session=True,
        )
        try:
            _, stderr = proc.communicate(json.dumps(request).encode(), timeout=limit)
        except subprocess.TimeoutExpired:
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            proc.wait()
            why = f"`{kernel.name}`: compiling for {arch} took over {limit:g} s; stopped"
            for i, *_ in prepared:
                results[i] = why
            return results  # type: ignore[return-value]
        try:
            with open(request["result"]) as fh:
                reply = json.load(fh)
        except (OSError, ValueError):
            reply = {"builds": []}
        if len(reply.get("builds", [])) < len(prepared) and not (
            "setup" in reply or "import" in reply
        ):
            lines_err = [ln for ln in stderr.decode(errors="replace").splitlines() if ln.strip()]
            tail = _short(lines_err[-1].strip(), 200) if lines_err else ""
            why = f"`{kernel.name}`: the Triton compiler stopped for {arch} (exit status "
            why += f"{proc.returncode}){': ' + tail if tail else ''}"
            for i, *_ in prepared[len(reply.get("builds", [])) :]:
                results[i] = why
        if "setup" in reply or "import" in reply:
            if "setup" in reply:
                why = f"Triton kernels are not compiled: triton does not load: {reply['setup']}"
            else:
                why = _load_reason(kernel, mod, kernel.name, reply.get("failed", []), shift)
            for i, *_ in prepared:
                results[i] = why
            return results  # type: ignore[return-value]
        failed = {f["line"] - shift: f for f in reply.get("failed", [])}
        tool = None
        for (i, label, num_warps, _), res in zip(prepared, reply["builds"], strict=False):
            if "error" in res:
                results[i] = _reason(kernel, mod, arch, res["error"], lines, failed, shift)
                continue
            symbol = res["name"]
            report = [r for r in ptxas_report(res["log"]) if r[0] == symbol] or ptxas_report(
                res["log"]
            )
            if report:
                _, _, regs, stack, stores, loads = report[0]
            else:
                tool = tool or _cuobjdump()
                if tool is None:
                    results[i] = f"`{kernel.name}`: no ptxas report and no cuobjdump to read"
                    continue
                run = subprocess.run(
                    [tool, "-res-usage", res["cubin"]], capture_output=True, text=True
                )
                usage = {sym: f for _, sym, f in parse_res_usage(run.stdout)}
                if symbol not in usage:
                    results[i] = f"`{kernel.name}`: cuobjdump reported no `{symbol}`"
                    continue
                fields = usage[symbol]
                regs = fields.get("REG", 0)
                stack = max(fields.get("STACK", 0), fields.get("LOCAL", 0))
                stores = loads = 0  # (cuobjdump does not split spills out of local memory)
            results[i] = [
                Usage(
                    symbol=symbol,
                    name=kernel.name,
                    arch=f"sm_{m.group(1)}",
                    registers=regs,
                    spill_stores=stores,
                    spill_loads=loads,
                    local_bytes=stack,
                    instantiation=label,
                    source="triton",
                    threads=32 * num_warps,
                )
            ]
    return results  # type: ignore[return-value]


def compile_kernel(
    path: str,
    data: bytes,
    kernel: TritonKernel,
    signature: dict[str, str],
    constexprs: dict,
    num_warps: int,
    num_stages: int | None,
    arch: str,
    timeout: float | None = None,
) -> list[Usage] | str:
    """Build one instantiation of a Triton kernel for `arch` ("sm_90", "sm_100", ...) without a
    GPU: its Usage (one), or one line saying why it could not be built."""
    return compile_builds(
        path, data, kernel, [(signature, constexprs, num_warps, num_stages)], arch, timeout
    )[0]
