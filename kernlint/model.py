"""The data every part of kernlint shares: rule metadata, findings, fixes."""

from __future__ import annotations

from .record import field, record

# (typing costs about 3 ms to import; the annotations are strings, never evaluated)
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

SEVERITIES = ("error", "warning", "info")
STATUSES = ("stable", "preview")
APPLICABILITIES = ("safe", "unsafe")


@record(frozen=True)
class Rule:
    """A rule's metadata. Each module under `rules/` defines one as `RULE`.

    language: "cpp" (C/C++/CUDA), "python", or "any".
    scope: "all" (every file of the language) or "jit" (only files under `jit-roots`).
    triggers: byte strings; the rule can only fire on a file containing at least one of them.
        Empty means "always run". The engine skips the rule (and maybe the parse) otherwise.
    node_types: syntax node types the rule wants handed to `visit` (tree-sitter type names for
        C/C++/CUDA, `ast` class names for Python).
    needs_tree: the rule's `check` uses the syntax tree or facts (False: bytes only).
    fix: None, "safe", "unsafe" or "sometimes" (what kind of fix the rule can offer).
    """

    code: str
    name: str
    language: str
    summary: str
    severity: str = "error"
    status: str = "stable"
    scope: str = "all"
    fix: str | None = None
    triggers: tuple[bytes, ...] = ()
    node_types: tuple[str, ...] = ()
    needs_tree: bool = True
    # Finer, still cheap, pre-parse filters: a regex over the bytes (searched only when a
    # trigger matched) and a predicate on the file's path. Both must be over-approximations.
    prefilter: Any = None  # compiled bytes regex, or None
    path_filter: Callable[[str], bool] | None = field(default=None, compare=False)
    # A predicate on a file's settings under which the rule runs whatever its triggers (e.g. a
    # policy that can report a file without the trigger words); None: triggers always apply.
    untriggered_when: Callable[[Any], bool] | None = field(default=None, compare=False)
    # Python rules that look only at some lines and what encloses them: a bytes regex whose
    # matching lines the rule needs, or a tuple of them (several patterns that each start with
    # a literal are searched several times faster than one alternation), or a function of the
    # file's bytes returning either (or None for this file). When every rule that runs on a
    # file has one, the file is parsed as a
    # skeleton (functions and classes without such lines left out; see
    # kernlint/python/skeleton.py). None: the rule needs the whole tree.
    partial_lines: Any = None
    # Filled in by the registry from the module that defines the rule:
    doc: str = ""
    module: str = ""
    check: Callable[[Any], None] | None = field(default=None, compare=False)
    visit: Callable[[Any, Any], None] | None = field(default=None, compare=False)

    @property
    def fixable(self) -> bool:
        return self.fix is not None


@record(frozen=True, slots=True)
class Edit:
    """Replace bytes [start, end) of the file with `content`."""

    start: int
    end: int
    content: str


@record(frozen=True, slots=True)
class Fix:
    edits: tuple[Edit, ...]
    applicability: str  # "safe" | "unsafe"
    title: str = ""


@record(slots=True)
class Diagnostic:
    path: str
    line: int
    column: int
    end_line: int
    end_column: int
    code: str
    name: str
    message: str
    severity: str
    fix: Fix | None = None
    start: int = 0  # byte offsets, for suppressions, fixes and fingerprints
    end: int = 0

    def sort_key(self) -> tuple:
        return (self.path, self.line, self.column, self.code, self.message)
