"""gitignore-style pattern matching without importing pathspec (which costs ~40 ms to import:
too much for the one-file pre-commit case). Used for `jit-roots` and `.gitignore` files; tested
for equivalence with `pathspec.GitIgnoreSpec` (tests/test_globmatch.py).

Semantics (git's): the last matching pattern wins, `!` negates; a pattern without a slash
(other than a trailing one) matches at any depth, with one it is anchored at the root; `*` and
`?` do not cross `/`, `**` does; a trailing `/` matches directories only; a pattern that matches
a directory matches everything inside it.
"""

from __future__ import annotations

import re
from functools import lru_cache


def _translate(pattern: str) -> tuple[re.Pattern, bool] | None:
    """(regex, negated) for one gitignore line, or None for blank lines and comments."""
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
    core = "".join(out)
    prefix = "" if anchored else "(?:.*/)?"
    # A directory pattern matches paths inside it; a plain one also matches the path itself.
    suffix = "/.*" if dir_only else "(?:/.*)?"
    return re.compile(f"^{prefix}{core}{suffix}$", re.S), negated


class GitIgnoreMatcher:
    def __init__(self, patterns) -> None:
        self.rules = []
        for p in patterns:
            try:
                rule = _translate(p)
            except re.error:  # (e.g. `[z-a]`): git lets such a pattern match nothing
                continue
            if rule is not None:
                self.rules.append(rule)

    def check(self, path: str) -> bool | None:
        """True (ignored), False (re-included by a `!` pattern) or None (no pattern matched):
        the last matching pattern decides. A directory is given with a trailing `/`."""
        path = path.lstrip("/")
        result = None
        for regex, negated in self.rules:
            if regex.match(path):
                result = not negated
        return result

    def match_file(self, path: str) -> bool:
        return bool(self.check(path))


@lru_cache(maxsize=64)
def matcher(patterns: tuple[str, ...]) -> GitIgnoreMatcher:
    return GitIgnoreMatcher(patterns)
