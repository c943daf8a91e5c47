"""gitignore-style pattern matching without importing pathspec (which costs ~40 ms to import:
too much for the one-file pre-commit case). Used for `jit-roots` and `.gitignore` files; tested
for equivalence with `pathspec.GitIgnoreSpec` (tests/test_globmatch.py).

Semantics (git's, as pathspec reads them): `!` negates; a pattern without a slash (other than
a trailing one) matches at any depth, with one it is anchored at the root; `*` and `?` do not
cross `/`, `**` does; a trailing `/` matches directories only; a pattern that matches a
directory matches everything inside it. The last pattern matching the path itself wins, else
the last one matching a directory above it. Combined regexes answer "no pattern matches" (most
paths) before the patterns are tried one by one.
"""

from __future__ import annotations

import re
from functools import lru_cache


def _translate(pattern: str) -> tuple[str, bool, bool, bool] | None:
    """(regex core, anchored, directory only, negated) for one gitignore line, or None for
    blank lines and comments."""
    pat = pattern.rstrip(" ")
    if not pat or pat.startswith("#"):
        return None
    negated = pat.startswith("!")
    if negated:
        pat = pat[1:]
    if pat.startswith("\\"):
        pat = pat[1:]
    dir_only = pat.endswith("/")
    pat = pat.rstrip("/")
    if not pat:
        return None
    anchored = "/" in pat
    pat = pat.lstrip("/")
    out = []
    i = 0
    n = len(pat)
    while i < n:
        if pat.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif pat.startswith("/**", i) and i + 3 == n:
            out.append("/.*")
            i += 3
        elif pat.startswith("**", i):
            out.append(".*")
            i += 2
        elif pat[i] == "*":
            out.append("[^/]*")
            i += 1
        elif pat[i] == "?":
            out.append("[^/]")
            i += 1
        elif pat[i] == "[":
            j = pat.find("]", i + 2)
            if j < 0:
                out.append(re.escape(pat[i]))
                i += 1
            else:
                body = pat[i + 1 : j]
                if body.startswith("!"):
                    body = "^" + body[1:]
                out.append(f"[{body}]")
                i = j + 1
        else:
            out.append(re.escape(pat[i]))
            i += 1
    return "".join(out), anchored, dir_only, negated


def _regex(core: str, anchored: bool, dir_only: bool) -> str:
    prefix = "" if anchored else "(?:.*/)?"
    # A directory pattern matches paths inside it (group d: matched as a directory); a plain
    # one also matches the path itself.
    suffix = "(?P<d>/).*" if dir_only else "(?P<d>/.*)?"
    return f"^{prefix}{core}{suffix}$"


def compile_pattern(pattern: str) -> re.Pattern | None:
    """One gitignore line as a regex (None for blank lines and comments); raises re.error
    for a pattern no regex expresses (`[z-a]`)."""
    rule = _translate(pattern)
    if rule is None:
        return None
    core, anchored, dir_only, _ = rule
    return re.compile(_regex(core, anchored, dir_only), re.S)


_ANY_DIRS = "(?:.*/)?"  # (`**/` at the start of a pattern)


def _literal_first(pattern: str) -> str | None:
    """The first path component of an anchored pattern when it is a plain name (no wildcard,
    class or escape): every path the pattern matches starts with it. None otherwise."""
    pat = pattern.rstrip(" ")
    if pat.startswith("!"):
        pat = pat[1:]
    first = pat.lstrip("/").split("/", 1)[0]
    if not first or any(c in first for c in "*?[\\"):
        return None
    return first


_SPECIAL = frozenset(".^$*+?{}[]|()\\")
_ANY_NAME = "[^/]*"


def _literal(regex: str) -> str | None:
    """The text a regex of escaped characters (`_translate`'s output for a plain name) matches,
    or None where it holds any regex syntax."""
    out = []
    i, n = 0, len(regex)
    while i < n:
        c = regex[i]
        if c == "\\":
            if i + 1 == n or regex[i + 1].isalnum():
                return None  # (`\d`, `\b`: a class or an assertion, not a character)
            out.append(regex[i + 1])
            i += 2
            continue
        if c in _SPECIAL:
            return None
        out.append(c)
        i += 1
    return "".join(out)


def _component_matcher(components: list[str]):
    """`re.compile("|".join(components)).fullmatch` as a test of one path component (a name
    without `/`), True on a match: the plain names are looked up in a set,
    `*suffix` and `prefix*` patterns compared as strings, and only the rest go through one
    regex (the combined regex tried all of SGLang's 100 name patterns on every file name:
    two thirds of the discovery's gitignore time)."""
    names: set[str] = set()
    suffixes: list[str] = []
    prefixes: list[str] = []
    rest: list[str] = []
    for core in components:
        plain = _literal(core)
        if plain is not None:
            names.add(plain)
            continue
        if core.startswith(_ANY_NAME):
            tail = _literal(core[len(_ANY_NAME) :])
            if tail is not None:
                suffixes.append(tail)
                continue
        if core.endswith(_ANY_NAME):
            head = _literal(core[: -len(_ANY_NAME)])
            if head is not None:
                prefixes.append(head)
                continue
        rest.append(core)
    ends, starts = tuple(suffixes), tuple(prefixes)
    regex = re.compile("|".join(rest), re.S).fullmatch if rest else None

    def matches(name: str) -> bool:
        return (
            name in names
            or (bool(ends) and name.endswith(ends))
            or (bool(starts) and name.startswith(starts))
            or (regex is not None and regex(name) is not None)
        )

    return matches


class GitIgnoreMatcher:
    def __init__(self, patterns) -> None:
        # Each pattern's own regex, (text, negated), compiled when a path first gets past the
        # combined regexes below (no path of most trees does: SGLang's 283 patterns took
        # 8 ms to compile one by one).
        self._texts: list[tuple[str, bool]] = []
        self._rules: list | None = None
        components: list[str] = []
        general: dict[str | None, list[str]] = {}  # first path component (None: any) -> regexes
        for p in patterns:
            rule = _translate(p)
            if rule is None:
                continue
            core, anchored, dir_only, negated = rule
            # (only a `[...]` class, copied from the pattern, can be an invalid regex)
            if "[" in p:
                try:
                    compile_pattern(p)
                except re.error:  # (e.g. `[z-a]`): git lets such a pattern match nothing
                    continue
            self._texts.append((_regex(core, anchored, dir_only), negated))
            if not anchored and ".*" not in core:
                components.append(core)  # (matches one whole path component, or none)
                continue
            rest = core[len(_ANY_DIRS) :] if core.startswith(_ANY_DIRS) else None
            if rest is not None and "/" not in rest and ".*" not in rest:
                components.append(rest)  # (`**/build/`: a component `build`, at any depth)
                continue
            prefix = "" if anchored else "(?:.*/)?"
            regex_text = f"{prefix}{core}{'/.*' if dir_only else '(?:/.*)?'}"
            first = _literal_first(p) if anchored else None
            general.setdefault(first, []).append(regex_text)
        # Most paths match no pattern: combined regexes say so (a slash-free pattern without
        # `**` can only match one whole component; an anchored one starting with a plain name
        # only a path starting with it) before the patterns are tried one by one.
        self._component = _component_matcher(components) if components else None
        self._general_by_first = {
            first: re.compile("^(?:" + "|".join(alts) + ")$", re.S).match
            for first, alts in general.items()
        }
        self._general = self._general_by_first.pop(None, None)
        self._seen: dict[str, bool] = {}

    def _may_match(self, path: str) -> bool:
        if self._general is not None and self._general(path):
            return True
        if self._general_by_first:
            found = self._general_by_first.get(path.split("/", 1)[0])
            if found is not None and found(path):
                return True
        if self._component is None:
            return False
        seen = self._seen
        for part in path.split("/"):
            hit = seen.get(part)
            if hit is None:
                hit = seen[part] = self._component(part)
                if len(seen) > 100_000:
                    seen.clear()
            if hit:
                return True
        return False

    def check(self, path: str) -> bool | None:
        """True (ignored), False (re-included by a `!` pattern) or None (no pattern matched).
        As pathspec's GitIgnoreSpec: the last pattern that matches the path itself decides;
        where none does, the last one that matches a directory above it (or, for a pattern
        ending in `/`, the directory itself). A directory is given with a trailing `/`."""
        path = path.lstrip("/")
        if not self._may_match(path):
            return None
        if self._rules is None:
            self._rules = [(re.compile(text, re.S), negated) for text, negated in self._texts]
        result = None
        for regex, negated in reversed(self._rules):
            m = regex.match(path)
            if m is None:
                continue
            if not m.group("d"):
                return not negated  # the last pattern matching the path itself decides
            if result is None:
                result = not negated  # else the last one matching a parent directory
        return result

    def match_file(self, path: str) -> bool:
        return bool(self.check(path))


@lru_cache(maxsize=64)
def matcher(patterns: tuple[str, ...]) -> GitIgnoreMatcher:
    return GitIgnoreMatcher(patterns)
