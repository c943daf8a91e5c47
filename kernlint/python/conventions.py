"""The house names the Python rules take from the configuration: `aiter-gates`, `jit-loaders`,
`jit-cache-decorators` and `ci-registration-functions`.

Each is None in the settings unless a config sets it; a rule then uses its own constants
(SGLang's names) exactly as it would without this module. A rule reads the setting where it
uses the name (`ctx.settings`).

What the engine does before a rule sees the settings is fixed per rule: its trigger words, its
pre-filter and the lines it reads (Rule.triggers, prefilter, partial_lines). So a rule whose
names are configured is run on every file of that config (`when_configured(attr)` as its
`untriggered_when`: a file may call the configured names only), and its pre-filter and line
patterns (`NamePattern`) also match every name a config of this process configured: an
over-approximation, so a file of another config is checked exactly as before. A settings
object is looked at once: the predicates answer from a table afterwards.
"""

from __future__ import annotations

import re

from ..lazyre import lazy_compile

_SEEN: dict[str, frozenset[str]] = {}  # setting -> the names configs of this process gave it
_PATTERNS: list[NamePattern] = []
_NEVER = lazy_compile(rb"(?!)")


def word_pattern(names) -> re.Pattern:
    """A bytes pattern matching any of `names` as a word (never matching for no names)."""
    if not names:
        return _NEVER
    alternatives = b"|".join(re.escape(n.encode()) for n in sorted(names))
    return re.compile(rb"\b(?:" + alternatives + rb")\b")


class NamePattern:
    """A bytes pattern for a rule's `prefilter` or `partial_lines`: `default`, which also
    matches, once a config of this process names some under the setting `attr`, what
    `build(names)` matches (all the names configured so far). Until then its `search` and
    `finditer` are the default pattern's own (no cost)."""

    def __init__(self, default: re.Pattern, attr: str, build=word_pattern) -> None:
        self.default = default
        self.attr = attr
        self.build = build
        self.pattern = default.pattern
        _PATTERNS.append(self)
        names = _SEEN.get(attr)
        if names is not None:
            self._extend(names)

    def __getattr__(self, name: str):
        # (`search` and `finditer` before any config named some: the default's own, bound at
        # the first search, so that the default compiles only when it is used)
        if name in ("search", "finditer"):
            self.search = self.default.search
            self.finditer = self.default.finditer
            return getattr(self, name)
        raise AttributeError(name)

    def _extend(self, names) -> None:
        extra = self.build(names)
        default = self.default

        def search(data, *span):
            return default.search(data, *span) or extra.search(data, *span)

        def finditer(data, *span):
            yield from default.finditer(data, *span)
            yield from extra.finditer(data, *span)

        self.search = search
        self.finditer = finditer


def _register(attr: str, names) -> None:
    seen = _SEEN.get(attr, frozenset())
    union = seen | frozenset(names)
    if attr in _SEEN and union == seen:
        return
    _SEEN[attr] = union
    for p in _PATTERNS:
        if p.attr == attr:
            p._extend(union)


def configured_names(attr: str) -> frozenset[str]:
    """Every name a config of this process gave the setting `attr` (empty: none did)."""
    return _SEEN.get(attr, frozenset())


class _Configured(dict):
    """settings -> is the setting `attr` set there (its names registered on first sight)."""

    def __init__(self, attr: str) -> None:
        super().__init__()
        self.attr = attr

    def __missing__(self, settings) -> bool:
        names = getattr(settings, self.attr, None)
        if names is not None:
            _register(self.attr, names)
        if len(self) > 256:  # (a language server makes new settings as configs change)
            self.clear()
        self[settings] = found = names is not None
        return found


_CONFIGURED: dict[str, _Configured] = {}


def when_configured(attr: str):
    """A rule's `untriggered_when`: true for the settings that set `attr` (the rule then runs
    whatever its trigger words), whose names the `NamePattern`s of `attr` match from then on."""
    table = _CONFIGURED.get(attr)
    if table is None:
        table = _CONFIGURED[attr] = _Configured(attr)
    return table.__getitem__


def guards(ctx):
    """The file's `Guards`, judging aiter gates by the settings' `aiter-gates` where set."""
    found = ctx.facts.guards
    names = getattr(ctx.settings, "aiter_gates", None)
    if names is not None:
        found.use_gates(names)
    return found


def aiter_fix(settings) -> str:
    """How a finding of an ungated aiter import says to gate it."""
    names = getattr(settings, "aiter_gates", None)
    if names is None:
        return "put it under `if _use_aiter:`"
    if not names:
        return "put it under an aiter gate"
    return f"put it under an aiter gate (`{names[0]}`)"
