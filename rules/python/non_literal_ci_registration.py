"""Reports CI registrations that CI's AST parser cannot read.

## What it does
Reports calls to `register_cuda_ci(...)` and every `register_<backend>_ci(...)`
(`register_amd_ci`, `register_npu_ci`, ..., however imported or aliased) when:

* `est_time` (first positional or keyword), `suite` (second positional or keyword), `stage`
  or `runner_config` is not a literal (a number, string, `True`/`False`/`None`, or `-` a
  number); the finding sits on that argument;
* the call is not at module level: inside a function or a class body (a registration under a
  module-level `if` is still at module level).

Configure: `ci-registration-functions` (docs/presets.md).

## Why is this bad?
SGLang's CI collects test registrations by parsing each test file's AST, without importing or
running it. A variable, an expression or a call as an argument is invisible to the parser
(the test is scheduled with a wrong estimate, or on the wrong suite or runner, or not at all),
and a registration inside a function never reaches the module-level scan.

## Example
```python
from sglang.test.ci.ci_register import register_cuda_ci

EST = 120
register_cuda_ci(est_time=EST, suite="stage-b-test-small-1-gpu")
```

## Use instead
```python
from sglang.test.ci.ci_register import register_cuda_ci

register_cuda_ci(est_time=120, suite="stage-b-test-small-1-gpu")
```

## Fix safety
No automatic fix: the literal value is the author's to write.
"""

from __future__ import annotations

import ast
import re
from functools import lru_cache

from kernlint.ci_layout import CI_FUNCTIONS, REGISTER_FUNCTIONS, registration_functions
from kernlint.lazyre import lazy_compile
from kernlint.model import Rule
from kernlint.python import LineSearch, parse
from kernlint.python.conventions import NamePattern, configured_names, when_configured
from kernlint.python.facts import ast_offset, node_span, qualified

# (Starts with its literal, the boundary before it checked by a lookbehind: the matches of
# `\bregister_\w+_ci\b`, about 10x faster over a file.)
_CI_LINE = lazy_compile(rb"register_(?<=\bregister_)\w+_ci\b")
# `register_<backend>_ci as NAME` (in an import; spaces, line breaks, backslash continuations
# and comments between): a renamed registration function, whose calls do not say its name.
# (A comment is matched through its line break: `#[^\n]*` alone could split a run of `#` in
# exponentially many ways before failing.)
_ALIAS = lazy_compile(rb"register_(?<=\bregister_)\w+_ci\b(?:[\s\\]|#[^\n]*\n)*as\b")
# `as register_<backend>_ci`: another name imported as a registration function's.
_RENAMED = lazy_compile(rb"as(?<=\bas)(?:[\s\\]|#[^\n]*\n)+register_\w+_ci\b")


# The lines naming a registration function of any config of this process (partial_lines).
CI_LINES = NamePattern(_CI_LINE, CI_FUNCTIONS)
# A CI rule's `untriggered_when`: a file of a config naming other functions may call only those.
when_ci_configured = when_configured(CI_FUNCTIONS)


class _WantedLines:
    """The lines the CI rules read (Rule.partial_lines): those naming a `register_<backend>_ci`
    function, which hold its calls and every import that binds or renames one; a skeleton
    keeps them, the blocks around them and the module-level statements (the other imports).
    Every line (the whole file) where an import renames one (`as NAME`: its calls do not say
    its name). The same for the functions configured in this process
    (`ci-registration-functions`). Looked for only when the file is parsed (most files these
    rules run on are not)."""

    def finditer(self, data: bytes):
        if _ALIAS.search(data) is None:
            configured = configured_names(CI_FUNCTIONS)
            if not configured or _names(configured).alias.search(data) is None:
                return CI_LINES.finditer(data)
        return _EVERY_LINE.finditer(data)


_EVERY_LINE = lazy_compile(rb"[^\n]*\n|[^\n]+")
_wanted_lines = _WantedLines()


def renames(ctx) -> bool:
    """Does an import rename a registration function (`as NAME`) or bind another name as one
    (`as register_cuda_ci`)? Then the imported names decide which calls register."""
    memo = ctx.__dict__
    found = memo.get("_ci_renames")
    if found is None:
        found = memo["_ci_renames"] = _renames(ctx)
    return found


def _renames(ctx) -> bool:
    ci = ci_names(ctx.settings)
    data = ctx.data
    if ci is not DEFAULT:
        return bool(ci.alias.search(data) or ci.renamed.search(data))
    # SGLang's names: both patterns hold a mention (`register_<backend>_ci`), which starts
    # where a match of `ci.line` does (a word boundary before it), so each is looked for at
    # the mentions alone: `alias` from one, `renamed` from the `as` it ends, at most a few
    # lines up (`_renamed_from`).
    for m in mentions(ctx):
        if ci.alias.match(data, m.start()) or ci.renamed.search(
            data, _renamed_from(data, m.start()), m.end()
        ):
            return True
    return False


# What `[\s\\]` matches on one line (without its line break).
_LINE_BLANKS = b" \t\r\f\v\\"


def _renamed_from(data: bytes, at: int) -> int:
    """Where an `as` that `_RENAMED` matches up to the mention at `at` can start: the start of
    the first line up from the mention's, through the lines that its whitespace, backslashes
    and comments alone can span (`(?:[\\s\\\\]|#[^\\n]*\\n)+`: a line holding nothing else,
    before its first `#`)."""
    begin = data.rfind(b"\n", 0, at) + 1
    if data[begin:at].strip(_LINE_BLANKS):
        return begin  # (code before the mention on its line: the `as` is there)
    while begin > 0:
        up = data.rfind(b"\n", 0, begin - 1) + 1
        if data[up : begin - 1].split(b"#", 1)[0].strip(_LINE_BLANKS):
            return up
        begin = up
    return 0


def mentions(ctx) -> list:
    """The matches of the settings' `CiNames.line` in the file (its mentions of a
    registration function), found once for the CI rules."""
    memo = ctx.__dict__
    found = memo.get("_ci_mentions")
    if found is None:
        found = memo["_ci_mentions"] = list(ci_names(ctx.settings).line.finditer(ctx.data))
    return found


RULE = Rule(
    code="PY006",
    name="non-literal-ci-registration",
    language="python",
    summary="`register_*_ci(...)` with non-literal arguments or not at module level",
    triggers=(b"register_",),
    untriggered_when=when_ci_configured,  # (`ci-registration-functions`: other names)
    # A call to `register_<backend>_ci`, or an import of one under another name.
    prefilter=NamePattern(lazy_compile(rb"register_\w+_ci\b"), CI_FUNCTIONS),
    # What it reads (see _WantedLines): the file is parsed as a skeleton, where it is parsed.
    partial_lines=_wanted_lines,
    needs_tree=False,
)

# Where a line names a registration function: an import line, or a call at column 0.
_IMPORT_LINE = lazy_compile(rb"(?:from|import)\s")
_CALL_START = lazy_compile(rb"register_\w+_ci[ \t]*\(")
# The most lines one registration statement is looked for in before the file is parsed.
_MAX_STATEMENT_LINES = 40


def check(ctx) -> None:
    ci = ci_names(ctx.settings)
    if ci is not DEFAULT and not ci.named_in(ctx.data):
        return  # (run on every file of a config naming other functions: none named here)
    match = ci.is_name
    renamed = renames(ctx)
    if renamed:
        calls = None  # (the imported names decide which calls register)
    else:
        calls = _module_level_calls(ctx)
    if calls is not None:
        for node, offset in calls:
            name = _register_name(node, None, {}, match)
            if name is not None:
                _check_arguments(node, ctx, name, offset)
        return
    if ctx.tree is None:
        return  # unparsable: the engine warns about it
    facts = ctx.facts
    pattern = ci.line
    # The imported names matter only where an import renames a registration function or
    # binds another name as one; elsewhere a call's own text names its function (the import
    # statements are not looked at).
    names = facts.names if renamed else {}
    aliases = [n for n, o in names.items() if match(o.split(".")[-1]) and not match(n)]
    if aliases:
        pattern = re.compile(
            rb"\b(" + ci.word + b"|" + b"|".join(re.escape(a.encode()) for a in aliases) + rb")\b"
        )
    for node in facts.nodes_on_lines(pattern, (ast.Call,)):
        _check_call(node, ctx, names, match)


_REGISTER = lazy_compile(r"^register_\w+_ci$")


def _is_register_name(name: str):
    """SGLang's test for a registration function's name (`_REGISTER` compiles at its first
    use, not when a default argument binds its method)."""
    return _REGISTER.match(name)


class CiNames:
    """What the CI-registration rules find registration functions by: SGLang's (any
    `register_<backend>_ci`; `collected`: the collector's REGISTER_MAPPING), or the names of
    the `ci-registration-functions` setting (both sets are those names)."""

    def __init__(self, names: frozenset[str] | None = None) -> None:
        self.names = names
        if names is None:
            self.collected = REGISTER_FUNCTIONS
            self.word = rb"register_\w+_ci"
            self.line, self.alias, self.renamed = _CI_LINE, _ALIAS, _RENAMED
            self.call_start = _CALL_START
            self.is_name = _is_register_name
            return
        self.collected = names
        self.is_name = names.__contains__
        if not names:  # (no registration function: nothing matches)
            never = re.compile(rb"(?!)")
            self.word = rb"(?!)"
            self.line = self.alias = self.renamed = self.call_start = never
            return
        self.word = rb"(?:" + b"|".join(re.escape(n.encode()) for n in sorted(names)) + rb")"
        self.line = re.compile(rb"\b" + self.word + rb"\b")
        self.alias = re.compile(rb"\b" + self.word + rb"\b(?:[\s\\]|#[^\n]*\n)*as\b")
        self.renamed = re.compile(rb"as(?<=\bas)(?:[\s\\]|#[^\n]*\n)+" + self.word + rb"\b")
        self.call_start = re.compile(self.word + rb"[ \t]*\(")

    def named_in(self, data: bytes) -> bool:
        """Does the file name a registration function (`register_`, or a configured name)?"""
        if self.names is None:
            return b"register_" in data
        return any(n.encode() in data for n in self.names)


_BY_NAMES: dict[frozenset, CiNames] = {}


def _names(names: frozenset[str]) -> CiNames:
    found = _BY_NAMES.get(names)
    if found is None:
        found = _BY_NAMES[names] = CiNames(names)
    return found


def ci_names(settings) -> CiNames:
    """The registration functions of these settings (DEFAULT: SGLang's)."""
    names = registration_functions(settings)
    return DEFAULT if names is None else _names(names)


POSITIONAL = ("est_time", "suite")
CHECKED = ("est_time", "suite", "stage", "runner_config")


def _is_literal(node) -> bool:
    if isinstance(node, ast.Constant):
        return True
    return (
        isinstance(node, ast.UnaryOp)
        and isinstance(node.op, (ast.USub, ast.UAdd))
        and isinstance(node.operand, ast.Constant)
        and isinstance(node.operand.value, (int, float))
    )


def _register_name(call, facts, names=None, match=_is_register_name) -> str | None:
    """The registration function `call` calls, or None. `names`: the imported names to resolve
    it with (default: all of the file's `facts`); `match`: what a registration function's name
    is (CiNames.is_name)."""
    origin = qualified(call.func, facts.names if names is None else names) or ""
    name = origin.split(".")[-1]
    return name if match(name) else None


def _module_level_calls(ctx):
    """`_find_module_level_calls(ctx)`, worked out once per file for all the rules that read
    the registrations."""
    memo = ctx.__dict__
    if "_ci_module_level_calls" not in memo:
        memo["_ci_module_level_calls"] = _find_module_level_calls(ctx)
    return memo["_ci_module_level_calls"]


def _find_module_level_calls(ctx):
    """The registration calls of a file whose every mention of a registration function is an
    import line or a statement of its own at column 0 (module level, outside any string), as
    `ast` nodes positioned in the file: each statement is parsed alone, the file is not. None
    where a mention is anywhere else (indented, in a comment or a string, after other code)
    or a statement does not parse alone: the file is parsed then."""
    data = ctx.data
    ci = ci_names(ctx.settings)
    matches = mentions(ctx)
    if not matches:
        return []
    lines = LineSearch(data)  # (the lines around the mentions only: no list of every line)
    inside_strings = None
    calls = []
    for m in matches:
        at = m.start()
        begin = lines.begin(at)
        if at != begin:
            if at > begin and _IMPORT_LINE.match(data, begin) and b"(" not in data[begin:at]:
                if b"#" not in data[begin:at] and not _quoted(data, begin, at):
                    continue  # (`from x import register_cuda_ci`: no call, nothing to check)
            return None
        if not ci.call_start.match(data, at):
            return None
        if inside_strings is None:
            from kernlint.python.skeleton import string_spans

            # (only a string opened before the last mention can hold one: the rest of the
            # file, most of a test file, is not scanned)
            inside_strings = string_spans(data[: matches[-1].end()], lines.begin)
        if any(o < begin and (c is None or begin <= c) for o, c in inside_strings):
            return None
        tree = _statement_at(data, lines, begin)
        if tree is None:
            return None
        # (the statement's call, with the line offset of its snippet: a call in its arguments
        # names no registration function, or a mention off column 0 would have sent the file
        # to the parser)
        calls.append((tree.body[0].value, lines.number(begin)))
    return calls


def _quoted(data: bytes, begin: int, at: int) -> bool:
    return b"'" in data[begin:at] or b'"' in data[begin:at]


@lru_cache(maxsize=4096)
def _parse_statement(text: bytes) -> ast.Module | None:
    """`parse(text)`, None where it is not valid Python, kept for the next file: the
    registrations and the runs of lines tried for them repeat from test file to test file
    (the snapshot's 2,966 parses are 1,232 texts). The trees are only read."""
    try:
        return parse(text)
    except (SyntaxError, ValueError):
        return None


def _statement_at(data: bytes, lines, begin: int):
    """The module of the shortest run of lines from the one starting at `begin` that parses
    alone as one statement beginning with the registration call, or None. `lines`: a
    LineSearch of `data`."""
    size = len(data)
    end = begin
    for _ in range(_MAX_STATEMENT_LINES):
        if end >= size:
            return None  # (no line left to add)
        end = lines.end(end)
        try:
            tree = _parse_statement(data[begin:end])
        except (RecursionError, MemoryError):
            return None
        if tree is None:
            continue
        if len(tree.body) != 1 or not isinstance(tree.body[0], ast.Expr):
            return None
        if not isinstance(tree.body[0].value, ast.Call):
            return None
        return tree
    return None


def _check_call(node, ctx, names, match=_is_register_name) -> None:
    facts = ctx.facts
    name = _register_name(node, facts, names, match)
    if name is None:
        return
    _check_arguments(node, ctx, name, 0)
    n = facts.guards.first_ancestor(node, "def-or-class", _def_or_class)
    if n is not None:
        kind = (
            "a class body"
            if isinstance(n, ast.ClassDef)
            else f"function `{getattr(n, 'name', 'lambda')}`"
        )
        ctx.report(
            *node_span(ctx, node.func),
            f"`{name}` inside {kind}: CI only collects module-level registrations; "
            "move the call to module level",
        )


def _span(ctx, node, offset: int) -> tuple[int, int]:
    """node_span of a node parsed from a snippet that starts `offset` lines into the file."""
    if not offset:
        return node_span(ctx, node)
    src = ctx.source
    start = ast_offset(src, node.lineno + offset, node.col_offset)
    end = ast_offset(src, node.end_lineno + offset, node.end_col_offset)
    return start, max(start, end)


def _check_arguments(node, ctx, name, offset: int) -> None:
    for i, arg in enumerate(node.args[: len(POSITIONAL)]):
        if not _is_literal(arg):
            ctx.report(
                *_span(ctx, arg, offset),
                f"`{name}` argument `{POSITIONAL[i]}` is not a literal: CI reads it from the "
                "AST; write the value itself",
            )
    for kw in node.keywords:
        if kw.arg in CHECKED and not _is_literal(kw.value):
            ctx.report(
                *_span(ctx, kw.value, offset),
                f"`{name}` argument `{kw.arg}` is not a literal: CI reads it from the AST; "
                "write the value itself",
            )


def _def_or_class(n, _field) -> bool:
    return isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef))


# Shared with the other CI-registration rules: the module-level registration calls found
# without parsing the file (or None), and the span of a node parsed from one of their snippets.
module_level_calls = _module_level_calls
snippet_span = _span
DEFAULT = CiNames()
