"""What the JIT-module rules share: finding `load_jit` calls and classifying decorators.

The loader and the cache decorator are SGLang's (`load_jit`, `cache_once`) unless the settings
name others (`jit-loaders`, `jit-cache-decorators`: `loaders(settings)`, `caches(settings)`,
None where unset): a name is matched by the last part of what it was imported as, or as an
attribute (`module.load_jit`)."""

from __future__ import annotations

import ast
import re

from ..lazyre import lazy_compile
from .conventions import NamePattern, configured_names, when_configured

LRU_CACHES = frozenset({"functools.lru_cache", "functools.cache"})
LOADERS = "jit_loaders"  # (the settings' attributes)
CACHES = "jit_cache_decorators"
# A JIT rule's `untriggered_when`: a file of a config naming other loaders may call only those.
when_loaders_configured = when_configured(LOADERS)


def loaders(settings) -> frozenset[str] | None:
    """The configured JIT loader names (`jit-loaders`), or None: `load_jit`."""
    names = getattr(settings, LOADERS, None)
    return None if names is None else frozenset(names)


def caches(settings) -> frozenset[str] | None:
    """The configured JIT cache decorators (`jit-cache-decorators`), or None: `cache_once`."""
    names = getattr(settings, CACHES, None)
    return None if names is None else frozenset(names)


def loader_shown(settings) -> str:
    """The loader as a message names it: `load_jit`, or the first configured one."""
    names = getattr(settings, LOADERS, None)
    return "load_jit" if not names else names[0]


def cache_shown(settings) -> str:
    """The cache decorator as a message names it: `@cache_once`, or the first configured."""
    names = getattr(settings, CACHES, None)
    if names is None:
        return "`@cache_once`"
    return f"`@{names[0]}`" if names else "cached"


def names_a_loader(data: bytes, names: frozenset[str] | None) -> bool:
    """Can the file call a loader (does it hold `load_jit`, or a configured loader's name)?"""
    if names is None:
        return b"load_jit" in data
    return any(n.encode() in data for n in names)


def loaders_here(ctx) -> tuple[frozenset[str] | None, bool]:
    """(the configured loaders or None, whether this file can call one): a rule of a config
    naming other loaders runs on every file of it and returns at once where none is called."""
    names = loaders(ctx.settings)
    return names, names is None or names_a_loader(ctx.data, names)


def is_load_jit(call: ast.Call, facts, names: frozenset[str] | None = None) -> bool:
    fn = call.func
    if names is not None:
        if isinstance(fn, ast.Attribute):
            return fn.attr in names
        if isinstance(fn, ast.Name):
            return facts.names.get(fn.id, fn.id).rpartition(".")[2] in names
        return False
    if isinstance(fn, ast.Attribute):
        return fn.attr == "load_jit"
    if isinstance(fn, ast.Name):
        origin = facts.names.get(fn.id, fn.id)
        return origin == "load_jit" or origin.endswith(".load_jit")
    return False


def decorator_kind(dec, facts, names: frozenset[str] | None = None) -> str | None:
    """ "cache_once" (the cache decorator: `cache_once`, or one of the configured `names`),
    "lru_cache" (functools.lru_cache/cache however imported), or None."""
    target = dec.func if isinstance(dec, ast.Call) else dec
    origin = facts.qualified(target) or ""
    if names is not None:
        if origin.rpartition(".")[2] in names:
            return "cache_once"
    elif origin == "cache_once" or origin.endswith(".cache_once"):
        return "cache_once"
    if origin in LRU_CACHES:
        return "lru_cache"
    return None


_LOAD_JIT_LINE = lazy_compile(rb"load_jit\b(?<=\bload_jit)")  # (literal first: see facts.py)


# The `load_jit` lines, and those of the loaders configs of this process name (conventions).
LOADER_LINE = NamePattern(lazy_compile(rb"load_jit"), LOADERS)
# (Two patterns, each starting with its literal: four times faster than one alternation.)
_JIT_PARTIAL = (LOADER_LINE, lazy_compile(rb"\n[ \t]*@[\w.]+[ \t]*\("))
_LOAD_JIT_ALIAS = lazy_compile(rb"load_jit(?<=\bload_jit)[ \t]+as\b")


def _renames_a_configured_loader(data: bytes) -> bool:
    names = configured_names(LOADERS)
    return bool(names) and _alias_pattern(names).search(data) is not None


_ALIASES: dict[frozenset, re.Pattern] = {}


def _alias_pattern(names: frozenset[str]) -> re.Pattern:
    found = _ALIASES.get(names)
    if found is None:
        alternatives = b"|".join(re.escape(n.encode()) for n in sorted(names))
        found = _ALIASES[names] = re.compile(rb"\b(?:" + alternatives + rb")[ \t]+as\b")
    return found


def partial_lines(data: bytes):
    """What the JIT rules read of a file (Rule.partial_lines): the `load_jit` lines (calls and
    imports) and decorator calls (which may name a registration callback); the whole file when
    `load_jit` is imported under another name (its calls do not say `load_jit`). The same for
    the loaders configured in this process (`jit-loaders`)."""
    if _LOAD_JIT_ALIAS.search(data) or _renames_a_configured_loader(data):
        return None
    return _JIT_PARTIAL


def load_jit_calls(facts, names: frozenset[str] | None = None) -> list[ast.Call]:
    """The file's loader calls: of `load_jit`, or of the configured loader `names`."""
    if names is not None:
        return _configured_calls(facts, names)
    pattern = _LOAD_JIT_LINE
    aliases = [
        n for n, origin in facts.names.items() if origin.endswith(".load_jit") and n != "load_jit"
    ]
    if aliases:
        names = b"|".join(re.escape(a.encode()) for a in aliases)
        pattern = re.compile(rb"\b(load_jit|" + names + rb")\b")
    return [n for n in facts.nodes_on_lines(pattern, (ast.Call,)) if is_load_jit(n, facts)]


def _configured_calls(facts, names: frozenset[str]) -> list[ast.Call]:
    words = set(names)
    words.update(n for n, origin in facts.names.items() if origin.rpartition(".")[2] in names)
    if not words:
        return []
    alternatives = b"|".join(re.escape(w.encode()) for w in sorted(words))
    pattern = re.compile(rb"\b(?:" + alternatives + rb")\b")
    return [n for n in facts.nodes_on_lines(pattern, (ast.Call,)) if is_load_jit(n, facts, names)]


def enclosing_functions(node, guards) -> list:
    """Enclosing functions and lambdas, innermost first (each found from the one inside it:
    the cost is the number of functions, not the depth of the node)."""
    out = []
    func = guards.enclosing_function(node)
    while func is not None:
        out.append(func)
        func = guards.enclosing_function(func)
    return out


def loader_name(call: ast.Call, facts) -> str:
    """The configured loader a call (found by `load_jit_calls` with names) calls."""
    fn = call.func
    if isinstance(fn, ast.Attribute):
        return fn.attr
    return facts.names.get(fn.id, fn.id).rpartition(".")[2] if isinstance(fn, ast.Name) else ""


_WIRING_LINES = (LOADER_LINE,)


def wiring_partial_lines(data: bytes):
    """What the JIT-wiring rules read of a file (Rule.partial_lines): the loader lines; the
    whole file where a loader configured in this process is imported under another name."""
    return None if _renames_a_configured_loader(data) else _WIRING_LINES
