"""Regular expressions compiled when first used instead of when their module is imported.

Every run imports every rule and the helpers they use, which define about 260 patterns at
module level; compiling the 120 that loading the rules reached took about a quarter of a
one-file run (the rules of one language never meet a file of the other, preview rules are off
by default). A pattern made here compiles at its first search, match or attribute read, and
from then on answers through the compiled pattern's own bound methods. A pattern compiled in
the parent before the pool forks is inherited by every worker; one first used in a worker is
compiled there.
"""

from __future__ import annotations

import re

# The attributes of `re.Pattern` kept on a compiled LazyPattern (read through it afterwards).
_ATTRIBUTES = (
    "search",
    "match",
    "fullmatch",
    "finditer",
    "findall",
    "sub",
    "subn",
    "split",
    "scanner",
    "groups",
    "groupindex",
)


class LazyPattern:
    """What `re.compile(pattern, flags)` returns, compiled on first use. `pattern` and `flags`
    are the arguments given (readable without compiling); `compiled` is the `re.Pattern`."""

    def __init__(self, pattern, flags: int = 0) -> None:
        self.pattern = pattern
        self.flags = flags

    def __getattr__(self, name: str):
        # (called only for an attribute not set yet: before the first use, or one that
        # `re.Pattern` does not have either)
        if name.startswith("__"):
            raise AttributeError(name)
        compiled = re.compile(self.pattern, self.flags)
        found = self.__dict__
        found["compiled"] = compiled
        for attr in _ATTRIBUTES:
            found[attr] = getattr(compiled, attr)
        if name in found:
            return found[name]
        return getattr(compiled, name)

    def __reduce__(self):  # (a copy compiles again on its first use)
        return (LazyPattern, (self.pattern, self.flags))

    def __repr__(self) -> str:
        return f"lazy_compile({self.pattern!r}, {self.flags!r})"


def lazy_compile(pattern, flags: int = 0) -> LazyPattern:
    """`re.compile(pattern, flags)`, compiled on first use (see the module's docstring)."""
    return LazyPattern(pattern, flags)
