"""The engine: one file in, findings out.

Each file is read once; it is parsed at most once, and only if an enabled rule that can fire
on it (its byte triggers occur in the file) needs the syntax tree. Shared facts are computed
lazily, once, and handed to all rules. Rules that want nodes are dispatched from a table built
from their `node_types` (one walk of the tree-sitter tree, or one `ast.walk`, per file).
"""

from __future__ import annotations

import os
import stat
from functools import cached_property

from .config import DEFAULT_MAX_FILE_SIZE
from .model import Diagnostic, Fix, Rule
from .record import field, record
from .source import SourceFile

META_UNUSED = "unused-suppression"
META_INVALID = "invalid-suppression"
META_SYNTAX = "syntax-error"
# Smaller Python files are parsed whole: the skeleton would not pay for itself. (The 417
# SGLang files a Python rule parses: 0.371 s at 8 KiB, 0.357 at 4 KiB, 0.353 at 2 KiB, 0.350 at
# 1 KiB, 0.350 with no threshold; medians of 7.)
SKELETON_MIN_BYTES = 1024


@record(slots=True)
class FileResult:
    path: str
    diagnostics: list[Diagnostic] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    source: SourceFile | None = None
    abspath: str = ""
    language: str = ""
    notes: list[str] = field(default_factory=list)  # aggregated once per run (semantic pass)
    # With `record_unparsed(True)` (`--statistics`, `--show-skipped`): the regions of a file
    # whose tree the rules needed that no rule could judge, as (first line, last line, reason)
    # ([] for a clean parse); None when no tree was built or nothing was asked.
    unparsed: list | None = None
    # Why the file is machine-generated (kernlint.jitscope.generated_reason): no rule checked
    # it. None for every other file.
    generated: str | None = None
    # True where a rule asked for a cross-file fact a pool is still gathering
    # (`ProjectFactsPending`): no finding was made, the file is to be linted again.
    pending: bool = False


class Context:
    """What a rule sees: the file, its facts, and `report`."""

    def __init__(self, source: SourceFile, settings, is_jit: bool) -> None:
        self.source = source
        self.data = source.data
        self.settings = settings
        self.is_jit = is_jit
        self.rule: Rule | None = None
        self.diagnostics: list[Diagnostic] = []
        self.parse_error: str | None = None
        self.notes: list[str] = []
        # Python: the line patterns the rules running on this file need (see Rule.partial_lines)
        # or None when one of them needs the whole tree.
        self.partial_lines: list | None = None
        self.parse_too_deep = False  # (Python: the parser's recursion or memory ran out)

    # -- C++/CUDA ---------------------------------------------------------------------------
    @cached_property
    def normalized(self):
        from .cpp.normalize import normalize

        return normalize(self.data)

    @cached_property
    def tree(self):
        """The syntax tree: tree-sitter (C++/CUDA) or `ast.Module` (Python); None if unparsable."""
        if self.source.language == "cpp":
            from .cpp.parser import parse

            return parse(self.normalized.data)
        from .python import parse

        skeleton = self._python_skeleton()
        if skeleton is not None:
            try:
                return parse(skeleton, self.source.path)
            except (SyntaxError, ValueError):
                pass  # not a valid skeleton (or the file is invalid): parse the whole file
            except (RecursionError, MemoryError):
                skeleton = None  # (the whole file is nested as deep: the same error)
        try:
            return parse(self.data, self.source.path)
        except (RecursionError, MemoryError):
            # Nested deeper than Python's parser goes: not a syntax error of the file's.
            self.parse_error = "too deeply nested to parse"
            self.parse_too_deep = True
            self._syntax_error_at = (1, 1)
            return None
        except SyntaxError as exc:
            self.parse_error = exc.msg or "invalid syntax"
            self._syntax_error_at = (exc.lineno or 1, exc.offset or 1)
            return None
        except (ValueError, UnicodeDecodeError) as exc:
            self.parse_error = str(exc)
            self._syntax_error_at = (1, 1)
            return None

    def _python_skeleton(self) -> bytes | None:
        if not self.partial_lines or len(self.data) < SKELETON_MIN_BYTES:
            return None
        from .python.skeleton import skeleton

        keep = {1}  # line-start patterns search after a newline: the first line is kept
        line_index = self.source.line_index
        for pattern in self.partial_lines:
            for m in pattern.finditer(self.data):
                keep.add(line_index(m.end() - 1) + 1)  # the line of the match's last byte
        return skeleton(self.data, sorted(keep), self.source.line_starts)

    @cached_property
    def facts(self):
        if self.source.language == "cpp":
            from .cpp.facts import CppFacts

            return CppFacts(self.tree, self.normalized, self.data)
        from .python.facts import PyFacts

        return PyFacts(self.tree, self.source)

    @cached_property
    def semantic(self):
        """libclang's view of this C++/CUDA file in semantic mode, or None (off, unavailable,
        or the parse failed: a note says so and the tree-sitter results stand)."""
        if self.source.language != "cpp" or not getattr(self.settings, "semantic", False):
            return None
        from .semantic import SemanticFile, SemanticUnavailable

        try:
            sem = SemanticFile(
                self.source.abspath or self.source.path,
                self.data,
                getattr(self.settings, "include_paths", ()),
                getattr(self.settings, "defines", ()),
            )
        except SemanticUnavailable as exc:
            self.notes.append(f"unavailable: {exc}")
            return None
        except Exception as exc:  # libclang crashed on this file: degrade, never a traceback
            self.notes.append(f"{self.source.path}: libclang failed: {exc}")
            return None
        if sem.problems:
            self.notes.append(f"{self.source.path}: {sem.problems[0]}")
        return sem if sem.tu is not None else None

    @cached_property
    def literal_spans(self):
        from .cpp.lexer import literal_spans

        return literal_spans(self.data)

    def literal_spans_before(self, stop: int) -> list:
        """The literal spans that start before `stop` (the whole file's list when it is known):
        enough to tell whether an offset before `stop` is in a comment or a literal."""
        if "literal_spans" in self.__dict__:
            return self.literal_spans
        from .cpp.lexer import literal_spans

        return literal_spans(self.data, stop)

    # -- reporting --------------------------------------------------------------------------
    def report(self, start: int, end: int, message: str, fix: Fix | None = None) -> None:
        rule = self.rule
        assert rule is not None
        src = self.source
        line, col = src.position(start)
        end_line, end_col = src.position(max(end, start))
        self.diagnostics.append(
            Diagnostic(
                path=src.path,
                line=line,
                column=col,
                end_line=end_line,
                end_column=end_col,
                code=rule.code,
                name=rule.name,
                message=message,
                severity=rule.severity,
                fix=fix,
                start=start,
                end=end,
            )
        )

    def report_node(self, node, message: str, fix: Fix | None = None) -> None:
        self.report(node.start_byte, node.end_byte, message, fix)

    def text(self, node) -> str:
        """Original source text of a tree-sitter node."""
        return self.data[node.start_byte : node.end_byte].decode("utf-8", "surrogateescape")


_PLAN_CACHE: dict[tuple, tuple] = {}


def _plan(rules: list[Rule], language: str, is_jit: bool) -> tuple:
    """Rules that can run on files of this language, split by whether they have byte
    triggers, with all the trigger words (computed once per rule set)."""
    # Keyed by the list itself (most files share their settings' list; nothing changes one in
    # place): the plan holds the list, so its id cannot be reused by another one meanwhile.
    key = (id(rules), language, is_jit)
    plan = _PLAN_CACHE.get(key)
    if plan is not None and plan[5] is not rules:
        plan = None
    if plan is None:
        usable = [
            r
            for r in rules
            if r.language in (language, "any")
            and (r.scope != "jit" or is_jit)
            and (r.check is not None or r.visit is not None)  # meta rules run in the engine
        ]
        triggered = [r for r in usable if r.triggers]
        always = [r for r in usable if not r.triggers]
        # The words of rules limited to some paths are searched only in files on those paths.
        words = frozenset(t for r in triggered if r.path_filter is None for t in r.triggers)
        filtered = tuple(r for r in triggered if r.path_filter is not None)
        untriggerable = tuple(r for r in triggered if r.untriggered_when is not None)
        # (the last: what `untriggered_when` says of each settings object, asked once)
        plan = (usable, always, words, untriggerable, filtered, rules, {})
        if len(_PLAN_CACHE) > 1024:  # (per-file-ignores make a list per file)
            _PLAN_CACHE.clear()
        _PLAN_CACHE[key] = plan
    return plan


_MEMMEM = None


def use_memmem() -> bool:
    """Search the trigger words with the C library's `memmem`: about twice as fast as
    `bytes.__contains__` on these words (0.058 vs 0.135 s for 5 words over the 4,719 SGLang
    Python files), for the cost of importing ctypes (2 to 4 ms). The runner turns it on before
    a pool of workers forks, where it pays back; False where there is no `memmem`."""
    global _MEMMEM
    if _MEMMEM is None:
        try:
            import ctypes

            fn = ctypes.CDLL(None).memmem
            fn.restype = ctypes.c_void_p
            fn.argtypes = (ctypes.c_char_p, ctypes.c_size_t, ctypes.c_char_p, ctypes.c_size_t)
            if fn(b"abc", 3, b"bc", 2) is None or fn(b"abc", 3, b"cb", 2) is not None:
                raise OSError("memmem does not behave")
        except (ImportError, OSError, AttributeError, TypeError):
            fn = False
        _MEMMEM = fn
    return bool(_MEMMEM)


def _present(words, data: bytes) -> set:
    """The words that occur in `data`."""
    if _MEMMEM:
        size = len(data)
        return {w for w in words if _MEMMEM(data, size, w, len(w)) is not None}
    return {w for w in words if w in data}


def contains(data: bytes, word: bytes) -> bool:
    """`word in data`, with `memmem` when a pool turned it on."""
    if _MEMMEM:
        return _MEMMEM(data, len(data), word, len(word)) is not None
    return word in data


def _has_directive(data: bytes) -> bool:
    return contains(data, b"kernlint:")


def _applicable(rules: list[Rule], source: SourceFile, is_jit: bool, settings=None) -> list[Rule]:
    data = source.data
    usable, always, words, untriggerable, filtered, _, forcing = _plan(
        rules, source.language, is_jit
    )
    path = source.abspath or source.path
    # Each path filter and each prefilter pattern is asked once per file (several rules share
    # one: the registration rules search one pattern over 1,600 of SGLang's files).
    passed: dict = {}
    if filtered:
        extra = set()
        for r in filtered:
            check = r.path_filter
            ok = passed.get(check)
            if ok is None:
                ok = passed[check] = bool(check(path))
            if ok:
                extra.update(r.triggers)
        if extra:
            words = words | extra
    # Each trigger word is searched once (substring search at memchr speed, several times
    # faster than one regex alternation over the same bytes); most files hold none of them.
    present = _present(words, data)
    forced = _forced(untriggerable, settings, forcing) if untriggerable else _NONE_FORCED
    candidates = usable if present or forced else always
    out = []
    for rule in candidates:
        if rule.triggers and present.isdisjoint(rule.triggers) and rule.code not in forced:
            continue
        check = rule.path_filter
        if check is not None:
            ok = passed.get(check)
            if ok is None:
                ok = passed[check] = bool(check(path))
            if not ok:
                continue
        if rule.prefilter is not None:
            # (rules sharing a pattern share its search: equal bound methods of one pattern)
            search = rule.prefilter.search
            hit = passed.get(search)
            if hit is None:
                hit = passed[search] = search(data) is not None
            if not hit:
                continue
        out.append(rule)
    return out


_NONE_FORCED: frozenset = frozenset()


def _forced(untriggerable, settings, memo: dict) -> frozenset:
    """The codes of the rules that run without their trigger words under these settings
    (`Rule.untriggered_when`), worked out once per settings object (the memo holds it, so its
    id cannot be reused by another one meanwhile)."""
    entry = memo.get(id(settings))
    if entry is None or entry[0] is not settings:
        if len(memo) > 1024:
            memo.clear()
        codes = frozenset(r.code for r in untriggerable if r.untriggered_when(settings))
        entry = memo[id(settings)] = (settings, codes)
    return entry[1]


class _NotRegular(OSError):
    """The path is not a regular file (a FIFO, a socket, a device, a directory)."""

    def __init__(self, mode: int) -> None:
        super().__init__("not a regular file")
        self.mode = mode


class _TooLarge(OSError):
    def __init__(self, size: int) -> None:
        super().__init__(f"{size} bytes, too large")
        self.size = size  # bytes known to be there (at least the limit + 1)


_OPEN_FLAGS = os.O_RDONLY | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NONBLOCK", 0)


def _read_bytes(path: str, limit: int = DEFAULT_MAX_FILE_SIZE) -> bytes:
    """The bytes of the regular file `path` (a symbolic link is followed): one `read` of its
    size (a third less time than `open(path, "rb").read()` over thousands of small files), more
    while it keeps growing, never more than `limit` + 1 bytes. Raises _NotRegular for anything
    else, which is never opened (`os.stat` first; the open is non-blocking and checked again, so
    a FIFO put there in between cannot block), and _TooLarge past `limit` bytes."""
    st = os.stat(path)
    if not stat.S_ISREG(st.st_mode):
        raise _NotRegular(st.st_mode)
    if st.st_size > limit:
        raise _TooLarge(st.st_size)
    fd = os.open(path, _OPEN_FLAGS)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise _NotRegular(st.st_mode)
        if st.st_size > limit:
            raise _TooLarge(st.st_size)
        data = os.read(fd, st.st_size + 1)  # (at most limit + 1 bytes)
        if len(data) == st.st_size:
            return data  # its size, asked for one more: its end
        parts = [data]
        total = len(data)
        while data and total <= limit:  # it changed since the fstat, or a read was cut short
            data = os.read(fd, min(1 << 16, limit + 1 - total))
            parts.append(data)
            total += len(data)
        if total > limit:
            raise _TooLarge(max(total, os.fstat(fd).st_size))
        return b"".join(parts)
    finally:
        os.close(fd)


def read_source(
    path: str, display: str, language: str, limit: int = DEFAULT_MAX_FILE_SIZE
) -> tuple[SourceFile | None, str | None]:
    """Read a file once (at most `limit` bytes: the `max-file-size` setting). Returns
    (source, None) or (None, warning)."""
    try:
        data = _read_bytes(path, limit)
    except _NotRegular as exc:
        if stat.S_ISDIR(exc.mode):
            return None, f"{display}: is a directory; skipped"
        return None, f"{display}: not a regular file; skipped"
    except _TooLarge as exc:
        return None, (
            f"{display}: {exc.size} bytes, larger than max-file-size ({limit} bytes); skipped"
        )
    except OSError as exc:
        return None, f"{display}: cannot read file: {exc.strerror or exc}; skipped"
    if b"\0" in data:
        return None, f"{display}: binary file (contains NUL bytes); skipped"
    return SourceFile(display, data, language, abspath=path), None


def lint_source(
    source: SourceFile, settings, is_jit: bool, registry, enabled: list[Rule] | None = None
) -> FileResult:
    """Lint one file. `enabled`: the rules enabled for it, when the caller has them."""
    result = FileResult(
        source.path, source=source, abspath=source.abspath, language=source.language
    )
    if enabled is None:
        enabled = settings.rules_for(source.abspath) if source.abspath else settings.enabled
    if is_jit and source.language == "cpp":
        from .jitscope import jit_exemption

        # Under the JIT roots but not SGLang JIT code (a torch extension, a marked copy).
        is_jit = jit_exemption(settings, source.data) is None
    rules = _applicable(enabled, source, is_jit, settings)
    if not rules and not _has_directive(source.data):
        # Nothing can fire and no suppression to judge (most files): whether the file is
        # generated changes nothing but the statistics, which ask for it.
        if _RECORD_UNPARSED:
            result.generated = generated_of(source, settings)
        return result
    generated = generated_of(source, settings)
    if generated is not None:
        result.generated = generated  # (linting generated code is not actionable)
        return result
    enabled_codes = {r.code for r in enabled}
    if source.language == "python":
        from .python import adopt_line_breaks

        adopt_line_breaks(source)  # (lone `\r` line breaks: the lines Python counts)
    ctx = Context(source, settings, is_jit)
    if source.language == "python" and rules:
        if len(source.data) >= SKELETON_MIN_BYTES:  # (smaller files are parsed whole)
            ctx.partial_lines = _partial_lines(rules, source.data)

    try:
        _run_rules(ctx, rules, registry, enabled_codes, result)
    except (RecursionError, MemoryError, ProjectFactsPending):
        raise
    except Exception as exc:
        raise RuleCrash(ctx.rule.code if ctx.rule is not None else "?") from exc
    diagnostics = list(ctx.diagnostics)
    if _has_directive(source.data):
        diagnostics = _suppress(ctx, diagnostics, registry, enabled_codes, is_jit)
    diagnostics.sort(key=Diagnostic.sort_key)
    result.diagnostics = diagnostics
    result.notes = list(ctx.notes)
    if _RECORD_UNPARSED and "tree" in ctx.__dict__:  # (only a tree the rules built anyway)
        result.unparsed = unparsed_regions(ctx)
    return result


def _run_rules(ctx, rules, registry, enabled_codes, result) -> None:
    tree_rules = [r for r in rules if r.needs_tree or r.visit is not None]
    byte_rules = [r for r in rules if not (r.needs_tree or r.visit is not None)]
    for rule in byte_rules:
        ctx.rule = rule
        rule.check(ctx)
    if not tree_rules and "tree" in ctx.__dict__ and ctx.tree is None:
        # A byte rule looked at the tree (e.g. after its own prefilter) and found none.
        _unparsable(ctx, registry, enabled_codes, result)

    if tree_rules:
        tree = ctx.tree
        if tree is None:
            _unparsable(ctx, registry, enabled_codes, result)
        else:
            for rule in tree_rules:
                if rule.check is not None:
                    ctx.rule = rule
                    rule.check(ctx)
            visitors = [r for r in tree_rules if r.visit is not None]
            if visitors:
                _dispatch(ctx, visitors)


def generated_of(source: SourceFile, settings) -> str | None:
    """Why `source` is a generated file that no rule checks (kernlint.jitscope), or None. Its
    path counts relative to the project root (the config's directory), else by its name."""
    from .jitscope import generated_exemption

    rel = None
    root = getattr(settings, "root", None)
    if source.abspath and root:
        from .config import _relative

        rel = _relative(source.abspath, root)
    if rel is None:
        rel = os.path.basename(source.abspath or source.path)
    return generated_exemption(settings, source.data, rel, source.language)


_RECORD_UNPARSED = False


def record_unparsed(on: bool) -> None:
    """Record each parsed file's unparsed regions into its FileResult (`unparsed`). Off by
    default: a normal run never looks for them. (Set before a pool forks: workers inherit it.)"""
    global _RECORD_UNPARSED
    _RECORD_UNPARSED = bool(on)


def recording_unparsed() -> bool:
    return _RECORD_UNPARSED


def unparsed_regions(ctx) -> list[tuple[int, int, str]]:
    """(first line, last line, reason) of the text in `ctx`'s tree that no rule can judge: the
    ERROR and MISSING nodes of a C++/CUDA tree (after normalization; overlapping line ranges
    merged), or the whole of a Python file that failed to parse."""
    source = ctx.source
    tree = ctx.tree
    # (the last line: a final line break ends it, it starts no line of its own)
    lines = max(1, len(source.line_starts) - (1 if source.data.endswith(b"\n") else 0))
    if source.language != "cpp":
        if tree is not None:
            return []
        line = getattr(ctx, "_syntax_error_at", (1, 1))[0]
        return [(1, lines, f"cannot parse: {ctx.parse_error} (line {line})")]
    if "facts" in ctx.__dict__:
        ranges = ctx.facts.error_ranges
    else:
        from .cpp.parser import error_nodes

        ranges = [(n.start_byte, n.end_byte) for n in error_nodes(tree.root_node)]
    out: list[tuple[int, int, str]] = []
    for start, end in ranges:
        first = min(source.line_index(start) + 1, lines)
        last = min(source.line_index(max(start, end - 1)) + 1, lines)
        if out and first <= out[-1][1]:  # (overlapping line ranges: one region)
            out[-1] = (out[-1][0], max(last, out[-1][1]), "")
        else:
            out.append((first, last, ""))
    return out


def _unparsable(ctx, registry, enabled_codes, result) -> None:
    """A file a rule needed to read and could not: a syntax-error finding where that rule is
    enabled (Python), else a warning naming the file."""
    syntax = registry.by_name[META_SYNTAX]
    if (
        ctx.source.language == "python"
        and syntax.code in enabled_codes
        and not ctx.parse_too_deep
        and getattr(ctx, "_syntax_error_at", None) is not None
    ):
        source = ctx.source
        line, col = ctx._syntax_error_at
        line = max(1, min(line, len(source.line_starts)))
        offset = source.offset_of(line, max(col, 1))
        ctx.rule = syntax
        ctx.report(offset, offset, f"cannot parse: {ctx.parse_error}")
    else:
        result.warnings.append(_parse_warning(ctx))


def _parse_warning(ctx) -> str:
    if ctx.parse_too_deep:
        return f"{ctx.source.path}: too deeply nested to parse; skipped"
    return f"{ctx.source.path}: cannot parse: {ctx.parse_error}"


def _partial_lines(rules: list[Rule], data: bytes) -> list | None:
    """The line patterns of all the rules (see Rule.partial_lines); None if one needs the
    whole tree."""
    out = []
    for rule in rules:
        pattern = rule.partial_lines
        if callable(pattern):
            pattern = pattern(data)
        if pattern is None:
            return None
        if isinstance(pattern, tuple):
            out.extend(pattern)
        else:
            out.append(pattern)
    return out


def _dispatch(ctx: Context, visitors: list[Rule]) -> None:
    table: dict[str, list[Rule]] = {}
    for rule in visitors:
        for node_type in rule.node_types:
            table.setdefault(node_type, []).append(rule)
    if ctx.source.language == "cpp":
        from .cpp.parser import nodes_of_types

        facts = ctx.facts
        types = tuple(sorted(table))
        if set(types) <= set(facts.INDEXED_TYPES):
            found = facts.nodes(*types)  # shares the file's one walk with the rules
        else:
            found = nodes_of_types(ctx.tree.root_node, types)
        for node in found:
            if facts.error_ranges and facts.inside_error(node.start_byte, node.end_byte):
                continue  # never fire on text the parser could not understand
            for rule in table[node.type]:
                ctx.rule = rule
                rule.visit(node, ctx)
    else:
        from .python import walk as _walk

        for node in _walk(ctx.tree):
            rules = table.get(type(node).__name__)
            if rules:
                for rule in rules:
                    ctx.rule = rule
                    rule.visit(node, ctx)


def _suppress(ctx, diagnostics, registry, enabled_codes, is_jit):
    from .suppressions import apply_suppressions, find_suppressions

    suppressions = find_suppressions(ctx.source, registry)
    if not suppressions:
        return diagnostics
    before = len(ctx.diagnostics)
    kept = apply_suppressions(diagnostics, suppressions)
    unused = registry.by_name[META_UNUSED]
    invalid = registry.by_name[META_INVALID]
    # Rules that ran on this file: only their suppressions can be judged unused.
    judged = {
        r.code
        for r in registry.rules
        if r.code in enabled_codes
        and r.language in (ctx.source.language, "any")
        and (r.scope == "all" or is_jit)
        and (r.check is not None or r.visit is not None)
    }
    for s in suppressions:
        if invalid.code in enabled_codes:
            ctx.rule = invalid
            for message in s.problems():  # (no names, unknown rules, a misspelt directive)
                ctx.report(s.start, s.end, message)
        if unused.code in enabled_codes:
            ctx.rule = unused
            for name, code in zip(s.names, s.codes, strict=True):
                if code is not None and code in judged and code not in s.used:
                    ctx.report(
                        s.start,
                        s.end,
                        f"unused suppression: no `{name}` finding here: remove `{name}` from it",
                    )
    extra = ctx.diagnostics[before:]
    return kept + extra


def lint_file(
    path: str,
    display: str,
    language: str,
    settings,
    is_jit: bool,
    registry,
    enabled: list[Rule] | None = None,
) -> FileResult:
    limit = getattr(settings, "max_file_size", DEFAULT_MAX_FILE_SIZE)
    source, warning = read_source(path, display, language, limit)
    if source is None:
        return FileResult(display, warnings=[warning], abspath=path, language=language)
    try:
        return lint_source(source, settings, is_jit, registry, enabled)
    except ProjectFactsPending:  # (its bytes kept: the pool takes what it gathers from them)
        return FileResult(display, source=source, abspath=path, language=language, pending=True)
    except (RecursionError, MemoryError):
        return FileResult(
            display,
            warnings=[f"{display}: too deeply nested to analyze; skipped"],
            abspath=path,
            language=language,
        )
    except Exception as exc:  # a bug in kernlint: name it and go on with the other files
        where = f"rule {exc.rule}" if isinstance(exc, RuleCrash) else "kernlint"
        cause = exc.__cause__ if isinstance(exc, RuleCrash) else exc
        detail = f"{type(cause).__name__}: {cause}".strip().rstrip(":")
        local = getattr(registry, "files", {}).get(exc.rule) if isinstance(exc, RuleCrash) else None
        blame = (
            f"This is a bug in the local rule {exc.rule} ({relpath_for_display(local)})"
            if local
            else "This is a bug in kernlint: please report it with the file"
        )
        return FileResult(
            display,
            warnings=[
                f"{display}: internal error in {where} ({detail[:200]}); the file is skipped. {blame}"
            ],
            abspath=path,
            language=language,
        )


class ProjectFactsPending(Exception):
    """A rule asked for a cross-file fact that a pool is still gathering: the file is linted
    again once the fact is known (never raised outside such a pool)."""


class RuleCrash(Exception):
    """A rule raised while checking a file (the original exception is the cause)."""

    def __init__(self, rule: str) -> None:
        super().__init__(rule)
        self.rule = rule


def relpath_for_display(path: str) -> str:
    try:
        rel = os.path.relpath(path)
    except ValueError:
        return path
    return path if rel.startswith(os.pardir) else rel
