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
import hashlib
import re

_TARGETS: frozenset[str] = frozenset()
_TEMPLATE_ARGS = re.compile(r"<[^<>]*>")


def wrapper_targets() -> frozenset[str]:
    """Qualified names (`Kernel::run`, `fn`), template arguments and `&` removed."""
    return _TARGETS


def set_wrapper_targets(targets) -> None:
    global _TARGETS
    _TARGETS = frozenset(targets)


def fingerprint() -> str:
    return hashlib.sha256("\n".join(sorted(_TARGETS)).encode()).hexdigest()[:12]


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


def targets_in_python(data: bytes) -> set[str]:
    """FFI targets named by `cuda_wrappers=[(name, target), ...]` in one Python file."""
    try:
        tree = ast.parse(data)
    except (SyntaxError, ValueError):
        return set()
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


def collect(paths) -> set[str]:
    out: set[str] = set()
    for path in paths:
        try:
            with open(path, "rb") as fh:
                data = fh.read()
        except OSError:
            continue
        if b"cuda_wrappers" in data:
            out |= targets_in_python(data)
    return out
