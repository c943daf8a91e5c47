"""What the JIT-module rules share: finding `load_jit` calls and classifying decorators."""

from __future__ import annotations

import ast
import re

LRU_CACHES = frozenset({"functools.lru_cache", "functools.cache"})


def is_load_jit(call: ast.Call, facts) -> bool:
    fn = call.func
    if isinstance(fn, ast.Attribute):
        return fn.attr == "load_jit"
    if isinstance(fn, ast.Name):
        origin = facts.names.get(fn.id, fn.id)
        return origin == "load_jit" or origin.endswith(".load_jit")
    return False


def decorator_kind(dec, facts) -> str | None:
    """ "cache_once", "lru_cache" (functools.lru_cache/cache however imported), or None."""
    target = dec.func if isinstance(dec, ast.Call) else dec
    origin = facts.qualified(target) or ""
    if origin == "cache_once" or origin.endswith(".cache_once"):
        return "cache_once"
    if origin in LRU_CACHES:
        return "lru_cache"
    return None


_LOAD_JIT_LINE = re.compile(rb"load_jit\b(?<=\bload_jit)")  # (literal first: see facts.py)


# (Two patterns, each starting with its literal: four times faster than one alternation.)
_JIT_PARTIAL = (re.compile(rb"load_jit"), re.compile(rb"\n[ \t]*@[\w.]+[ \t]*\("))
_LOAD_JIT_ALIAS = re.compile(rb"load_jit(?<=\bload_jit)[ \t]+as\b")


def partial_lines(data: bytes):
    """What the JIT rules read of a file (Rule.partial_lines): the `load_jit` lines (calls and
    imports) and decorator calls (which may name a registration callback); the whole file when
    `load_jit` is imported under another name (its calls do not say `load_jit`)."""
    return None if _LOAD_JIT_ALIAS.search(data) else _JIT_PARTIAL


def load_jit_calls(facts) -> list[ast.Call]:
    pattern = _LOAD_JIT_LINE
    aliases = [
        n for n, origin in facts.names.items() if origin.endswith(".load_jit") and n != "load_jit"
    ]
    if aliases:
        names = b"|".join(re.escape(a.encode()) for a in aliases)
        pattern = re.compile(rb"\b(load_jit|" + names + rb")\b")
    return [n for n in facts.nodes_on_lines(pattern, (ast.Call,)) if is_load_jit(n, facts)]


def enclosing_functions(node, guards) -> list:
    """Enclosing functions and lambdas, innermost first (each found from the one inside it:
    the cost is the number of functions, not the depth of the node)."""
    out = []
    func = guards.enclosing_function(node)
    while func is not None:
        out.append(func)
        func = guards.enclosing_function(func)
    return out
