"""Offset-preserving normalization of C++/CUDA source before tree-sitter parses it.

tree-sitter's CUDA grammar cannot parse several things real kernels are full of: `#pragma unroll`
between a `for` header and its body, attribute macros (`SGL_DEVICE`, `__launch_bounds__(...)`,
`__align__(...)`, `CUTE_ALIGNAS(...)`, `__grid_constant__`, file-local `#define FOO_KERNEL
__global__ __launch_bounds__(...)`), unroll macros (`CUTLASS_PRAGMA_UNROLL`), `= {}` default
arguments. This pass rewrites those bytes so that the grammar sees plain C++:

* every rewrite keeps the byte length and never touches a line break, so every byte offset,
  line and column of the normalized text is the one of the original;
* text is blanked (replaced with spaces) or replaced by a same-length spelling the grammar knows
  (`SGL_DEVICE` -> `__device__`);
* what was removed is recorded (`Normalized.attributes`) so facts can still tell, e.g., that a
  function declared with `Q_KERNEL` is a `__global__` kernel.

Rules always report on, and read text from, the original bytes.
"""

from __future__ import annotations

import re
from bisect import bisect_left

from ..record import field, record
from ..source import occurrences
from .lexer import WORD_BYTES

# `#pragma ...` lines, with backslash continuations.
_PRAGMA = re.compile(rb"\n([ \t]*#[ \t]*pragma\b(?:[^\n]*\\\r?\n)*[^\n]*)")
# `_Pragma("unroll")`
_PRAGMA_OP = re.compile(rb"\b_Pragma\s*\(")
# A line holding nothing but an unroll/pragma macro, e.g. `CUTLASS_PRAGMA_UNROLL`, `CUTE_UNROLL`:
# one upper-case word on its line with `UNROLL` or `PRAGMA` after its first letter
# (`_unroll_word`). (`[A-Z][A-Z0-9_]*(?:UNROLL|PRAGMA)[A-Z0-9_]*` in the pattern itself tries
# every `UNROLL` of a long word against every end: quadratic on a 64 KB line of them.)
_PRAGMA_MACRO_LINE = re.compile(rb"\n[ \t]*([A-Z][A-Z0-9_]*)[ \t]*(?=\r?\n|$)")
# Attribute-like macros and keywords that take a balanced argument list.
_ATTR_CALL_WORDS = (
    b"__launch_bounds__",
    b"__align__",
    b"CUTE_ALIGNAS",
    b"__cluster_dims__",
    b"__attribute__",
    b"__declspec",
    b"__maxnreg__",
    b"alignas",
    b"TVM_FFI_DECLARE_OBJECT_INFO_FINAL",
    b"TVM_FFI_DECLARE_OBJECT_INFO",
    b"TVM_FFI_DECLARE_BASE_OBJECT_INFO",
)
# Attribute-like words the grammar does not know.
_ATTR_WORDS = (
    b"__grid_constant__",
    b"__forceinline__",
    b"__noinline__",
    b"__inline__",
    b"CUTE_HOST_DEVICE",
    b"CUTE_DEVICE",
    b"CUTE_HOST",
    b"CUTLASS_DEVICE",
    b"CUTLASS_HOST_DEVICE",
    b"CUTLASS_GLOBAL",
    b"__nv_pure__",
)
_SPACE_BYTES = frozenset(b" \t\r\n\f\v")
# `= {}` (value-initialized default argument / initializer) -> `= 0 `.
_EMPTY_INIT = re.compile(rb"=[ \t]*\{\}")
# C++17 `using a::b, c::d;` (the grammar knows only one name per using-declaration): this head,
# then everything up to the next `;`, `=`, `{` or `}`, which must be a `;` (`_multi_using`).
_MULTI_USING = re.compile(rb"\n([ \t]*using[ \t]+(?!namespace\b)[\w:<>]+[ \t]*,)")
_USING_STOP = re.compile(rb"[;={}]")
# A statement-like macro call alone on its line without a `;`, e.g. `ACT_GET_IF(host::kU4)`.
_MACRO_STATEMENT = re.compile(rb"\n[ \t]*([A-Z][A-Z0-9]*_[A-Z0-9_]*)[ \t]*\(")
# Declaration-generating macros used at class or namespace scope.
_DECL_MACRO = re.compile(rb"\b(SGL_REGISTER_[A-Z_]+)[ \t]*\(")
# `__builtin_bit_cast(float, x)`: a type as first argument -> `__builtin_bit_cast(0    , x)`.
_BIT_CAST = re.compile(rb"\b__builtin_bit_cast[ \t]*\([ \t]*([A-Za-z_][\w:]*(?:[ \t]*\*)*)[ \t]*,")
# `typename T::X(args)` / `typename T::X{}` used as an expression (functional cast).
_TYPENAME_EXPR = re.compile(rb"typename[ \t]+[A-Za-z_][\w:]*::\w+[ \t]*[({]")
# `__device__ friend` -> `friend __device__` (same length; the grammar wants `friend` first).
_DEVICE_FRIEND = re.compile(rb"\b__device__([ \t]+)friend\b")
# Object-like `#define NAME expansion` (one line): the name, and the rest of the line, which
# `_define_expansion` cuts to the expansion. (The expansion as a lazy group before optional
# blanks and a comment, `([^\n\\]*?)[ \t]*(?://[^\n]*)?$`, tries every blank against every
# end: quadratic on a line of 64 KB of blanks.)
_DEFINE = re.compile(rb"\n[ \t]*#[ \t]*define[ \t]+([A-Za-z_]\w*)[ \t]+([^\n]*)")
_NON_SPACE = re.compile(rb"\S")  # (the first byte `bytes.lstrip()` would keep)
_TOKEN = re.compile(rb"[A-Za-z_]\w*|\(|\)|,|[^\sA-Za-z_(),]+")

# Macros whose meaning is known without reading their definition (SGLang's and CUTLASS's).
KNOWN_ATTRIBUTE_MACROS: dict[bytes, frozenset[str]] = {
    b"SGL_DEVICE": frozenset({"device"}),
    b"SGL_DEVICE_HOST": frozenset({"device", "host"}),
    b"SGL_HOST_DEVICE": frozenset({"device", "host"}),
    b"CUTE_HOST_DEVICE": frozenset({"device", "host"}),
    b"CUTE_DEVICE": frozenset({"device"}),
    b"CUTLASS_DEVICE": frozenset({"device"}),
    b"CUTLASS_HOST_DEVICE": frozenset({"device", "host"}),
    b"CUTLASS_GLOBAL": frozenset({"global"}),
}
_QUALIFIER_KINDS = {b"__global__": "global", b"__device__": "device", b"__host__": "host"}
_ATTRIBUTE_ONLY_WORDS = {
    b"__global__",
    b"__device__",
    b"__host__",
    b"__forceinline__",
    b"__noinline__",
    b"inline",
    b"static",
    b"__launch_bounds__",
    b"__cluster_dims__",
    b"__maxnreg__",
    b"__grid_constant__",
}


@record(frozen=True)
class Attribute:
    """A span blanked or rewritten by normalization, with the qualifiers it stood for."""

    start: int
    end: int
    name: str
    kinds: frozenset[str]


@record
class Normalized:
    data: bytes
    attributes: list[Attribute] = field(default_factory=list)  # in file order
    _starts: list[int] = field(default_factory=list, compare=False, repr=False)

    def kinds_between(self, start: int, end: int) -> set[str]:
        """Qualifier kinds (global/device/host) of attribute macros in [start, end)."""
        out: set[str] = set()
        attributes = self.attributes
        if not attributes:
            return out
        starts = self._starts
        if len(starts) != len(attributes):
            starts = self._starts = [a.start for a in attributes]
        # (a bisection to the first attribute at `start`: asked once per function, a scan of
        # every attribute made the work grow with the square of the file)
        for i in range(bisect_left(starts, start), len(attributes)):
            attr = attributes[i]
            if attr.start > end:
                break
            if attr.end <= end:
                out |= attr.kinds
        return out


# Every byte but a line break -> a space.
_BLANK = bytes(b if b in (10, 13) else 32 for b in range(256))


def _blank(out: bytearray, start: int, end: int) -> None:
    if start < end:
        out[start:end] = out[start:end].translate(_BLANK)


class _Blanker:
    """`_blank` for spans that come in order of their start and may nest or overlap (macro
    calls inside macro calls): the part already blanked by this blanker is not blanked again,
    so the work stays linear in the file."""

    __slots__ = ("out", "done")

    def __init__(self, out: bytearray) -> None:
        self.out = out
        self.done = 0  # everything in [a span's start, done) is blank already

    def __call__(self, start: int, end: int) -> None:
        if end > self.done:
            _blank(self.out, max(start, self.done), end)
            self.done = end


_PAREN = re.compile(rb"[()]")


class _Parens:
    """`end(i)`: the offset just past the `)` closing the `(` that ends at offset `i`, -1 if
    none. Each is found by reading on from the `(`; once that has read more than twice the
    file (calls nested in calls, or never closed, each read to the end of the file: quadratic),
    one pass matches every parenthesis of the file instead, and answers the rest."""

    __slots__ = ("data", "budget", "table")

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.budget = 2 * len(data) + 4096
        self.table: dict[int, int] | None = None

    def end(self, open_paren_end: int) -> int:
        if self.table is not None:
            return self.table.get(open_paren_end - 1, -1)
        depth = 1
        data = self.data
        for m in _PAREN.finditer(data, open_paren_end):
            if data[m.start()] == 40:
                depth += 1
            else:
                depth -= 1
                if depth == 0:
                    self.budget -= m.end() - open_paren_end
                    self._check()
                    return m.end()
        self.budget -= len(data) - open_paren_end
        self._check()
        return -1

    def _check(self) -> None:
        if self.budget < 0:
            table: dict[int, int] = {}
            opened: list[int] = []
            data = self.data
            for m in _PAREN.finditer(data):
                i = m.start()
                if data[i] == 40:
                    opened.append(i)
                elif opened:
                    table[opened.pop()] = i + 1
            self.table = table


_CALLABLE_ATTRIBUTES = {b"__launch_bounds__", b"__cluster_dims__", b"__maxnreg__"}


def _classify_expansion(tokens, table, pending):
    """Kinds if the tokens are attributes only; False if not; None if undecided yet."""
    if not tokens:
        return False
    kinds: set[str] = set()
    i = 0
    while i < len(tokens):
        tok = tokens[i]
        if tok in _CALLABLE_ATTRIBUTES:
            if i + 1 >= len(tokens) or tokens[i + 1] != b"(":
                return False
            depth, i = 1, i + 2
            while i < len(tokens) and depth:
                depth += {b"(": 1, b")": -1}.get(tokens[i], 0)
                i += 1
            if depth:
                return False
            continue
        if tok in _ATTRIBUTE_ONLY_WORDS:
            kinds |= {_QUALIFIER_KINDS[tok]} if tok in _QUALIFIER_KINDS else set()
        elif tok in table:
            kinds |= table[tok]
        elif tok in pending:
            return None
        else:
            return False
        i += 1
    return frozenset(kinds)


def _local_attribute_macros(defines) -> dict[bytes, frozenset[str]]:
    """File-local object-like macros whose expansion is only attributes/qualifiers."""
    table = dict(KNOWN_ATTRIBUTE_MACROS)
    pending: dict[bytes, bytes] = {}
    for m in defines:
        pending[m.group(1)] = m.group(2)
    changed = True
    while changed:  # resolve macros defined in terms of other attribute macros
        changed = False
        for name, expansion in list(pending.items()):
            verdict = _classify_expansion(_TOKEN.findall(expansion), table, pending)
            if verdict is None:
                continue  # depends on a macro not classified yet
            del pending[name]
            changed = True
            if verdict is not False:
                table[name] = verdict
    return table


class _Shifted:
    """A match found in `b"\\n" + data`, with offsets of `data` (groups >= 1 only)."""

    __slots__ = ("_m",)

    def __init__(self, m) -> None:
        self._m = m

    def start(self, group: int) -> int:
        return self._m.start(group) - 1

    def end(self, group: int = 0) -> int:
        return self._m.end(group) - 1

    def group(self, group: int):
        return self._m.group(group)


def _line_matches(pattern, padded: bytes):
    """Matches of a pattern that starts with `\\n` (a line start: 5x faster to search than
    `^` under re.M) in the file, the first line included (`padded` is the file after a `\\n`)."""
    return map(_Shifted, pattern.finditer(padded))


def _word_line_matches(pattern, padded: bytes, words, accept=None) -> list[_Shifted]:
    """What `_line_matches` finds, for a pattern that can only match from the start of a line
    holding one of `words`: the pattern is tried at those lines only (found at memchr speed)
    instead of at every line start. Matches do not overlap and come in file order, as with
    `finditer` (a match may run over several lines; lines it covered are not tried again).
    `accept(match)`: False for a match to take as no match."""
    out = []
    last_end = 0
    tried = -1
    line_end = -1  # the end of the line last tried: its other occurrences are skipped
    rfind = padded.rfind
    find = padded.find
    match = pattern.match
    # (Offsets in `padded`: the `\\n` before a line is at the line's offset in the file.)
    for at, _word in occurrences(padded, words):
        if at < line_end:
            continue  # (on the line tried last: looking back for its start is not repeated)
        start = rfind(b"\n", 0, at)
        if start == tried or start < last_end:
            continue
        tried = start
        line_end = find(b"\n", at)
        if line_end < 0:
            line_end = len(padded)
        m = match(padded, start)
        if m is not None and (accept is None or accept(m)):
            out.append(_Shifted(m))
            last_end = m.end()
    return out


def _unroll_word(m) -> bool:
    """Does the word `_PRAGMA_MACRO_LINE` matched hold `UNROLL` or `PRAGMA` after its first
    letter?"""
    word = m.group(1)
    return word.find(b"UNROLL", 1) >= 0 or word.find(b"PRAGMA", 1) >= 0


def _multi_using(padded: bytes) -> list[tuple[int, int]]:
    """(start, end) in the file of each `using a::b, c;` statement (`_MULTI_USING`, then up to
    the next `;`, `=`, `{` or `}`, which must be a `;`), as `_word_line_matches` would find
    them: the next such byte is searched once for all the heads before it."""
    out = []
    last_end = 0
    tried = -1
    line_end = -1
    stop_from, stop_at = len(padded) + 1, -1  # the last search for a stop byte: from, found
    rfind, find = padded.rfind, padded.find
    for at, _word in occurrences(padded, (b"using",)):
        if at < line_end:
            continue
        start = rfind(b"\n", 0, at)
        if start == tried or start < last_end:
            continue
        tried = start
        line_end = find(b"\n", at)
        if line_end < 0:
            line_end = len(padded)
        m = _MULTI_USING.match(padded, start)
        if m is None:
            continue
        head_end = m.end()
        if not (stop_from <= head_end and (stop_at < 0 or head_end <= stop_at)):
            found = _USING_STOP.search(padded, head_end)
            stop_from, stop_at = head_end, found.start() if found is not None else -1
        if stop_at < 0 or padded[stop_at] != 0x3B:  # `;`
            continue
        out.append((m.start(1) - 1, stop_at))  # (padded offsets, one past the `;`, minus 1)
        last_end = stop_at + 1
    return out


def _define_expansion(rest: bytes) -> bytes | None:
    """The expansion of `#define NAME rest` (the rest of the line after the name and its
    blanks): up to a `//` comment and the blanks before it, or the blanks at the end; None if
    it holds a backslash (a continued line)."""
    comment = rest.find(b"//")
    head = rest if comment < 0 else rest[:comment]
    expansion = head.rstrip(b" \t")
    return None if b"\\" in expansion else expansion


class _Define:
    """An object-like `#define` on one line (the parts of a match normalization reads)."""

    __slots__ = ("name", "expansion", "name_start")

    def __init__(self, m) -> None:
        self.name = m.group(1)
        self.expansion = _define_expansion(m.group(2))
        self.name_start = m.start(1)

    def group(self, index: int) -> bytes:
        return self.name if index == 1 else self.expansion

    def start(self, index: int) -> int:
        return self.name_start


def _defines(padded: bytes) -> list[_Define]:
    found = [_Define(m) for m in _word_line_matches(_DEFINE, padded, (b"define",))]
    return [d for d in found if d.expansion is not None]


def _starts_word(data: bytes, at: int) -> bool:
    """Does a match at `at` start a word (what a leading `\\b` would check, but a pattern
    starting with a literal is searched much faster)?"""
    return at == 0 or data[at - 1] not in WORD_BYTES


_FAMILIES: dict[tuple, list[tuple[bytes, tuple[bytes, ...]]]] = {}


def _families(words) -> list[tuple[bytes, tuple[bytes, ...]]]:
    """The words grouped by their first `_`-ended part (`CUTE_`, `CUTLASS_`, `SGL_`; b"" for
    words like `__align__` or `alignas`): a file without `CUTLASS_` skips all three CUTLASS
    words with one search."""
    key = tuple(words)
    groups = _FAMILIES.get(key)
    if groups is None:
        by: dict[bytes, list[bytes]] = {}
        for word in key:
            cut = word.find(b"_", 1)
            prefix = word[: cut + 1] if cut > 0 and not word.startswith(b"_") else b""
            by.setdefault(prefix, []).append(word)
        groups = _FAMILIES[key] = [(prefix, tuple(ws)) for prefix, ws in by.items()]
    return groups


def _whole_words(data: bytes, words) -> list[tuple[int, int, bytes]]:
    """(start, end, word) of the occurrences that are whole words (what `\\b(w1|w2)\\b` finds),
    without overlaps, in file order."""
    out = []
    last_end = 0
    n = len(data)
    present = []
    for prefix, group in _families(words):
        if len(group) == 1 or prefix == b"" or prefix in data:
            present.extend(group)
    for start, word in occurrences(data, present):
        end = start + len(word)
        if start < last_end or not _starts_word(data, start):
            continue
        if end < n and data[end] in WORD_BYTES:
            continue
        out.append((start, end, word))
        last_end = end
    return out


def _attribute_calls(data: bytes) -> list[tuple[int, int]]:
    """(start, offset after the `(`) of `__launch_bounds__ (`, `alignas(`, ...: a whole word
    followed by optional whitespace and an opening parenthesis."""
    out = []
    n = len(data)
    for start, i, _word in _whole_words(data, _ATTR_CALL_WORDS):
        while i < n and data[i] in _SPACE_BYTES:
            i += 1
        if i < n and data[i] == 0x28:  # `(`
            out.append((start, i + 1))
    return out


def normalize(data: bytes) -> Normalized:
    """Normalize C++/CUDA source bytes; the result has exactly the same length and line breaks."""
    out = bytearray(data)
    attributes: list[Attribute] = []
    has_hash = b"#" in data
    padded = b"\n" + data
    parens = _Parens(data)

    if has_hash and b"pragma" in data:
        for m in _word_line_matches(_PRAGMA, padded, (b"pragma",)):
            _blank(out, m.start(1), m.end(1))
    if b"_Pragma" in data:
        blank = _Blanker(out)
        for m in _PRAGMA_OP.finditer(data):
            end = parens.end(m.end())
            if end > 0:
                blank(m.start(), end)
    if b"UNROLL" in data or b"PRAGMA" in data:
        words = (b"UNROLL", b"PRAGMA")
        for m in _word_line_matches(_PRAGMA_MACRO_LINE, padded, words, _unroll_word):
            _blank(out, m.start(1), m.end(1))
    blank = _Blanker(out)
    for start, paren_end in _attribute_calls(data):
        end = parens.end(paren_end)
        if end > 0:
            blank(start, end)
    for start, end, _word in _whole_words(data, _ATTR_WORDS):
        _blank(out, start, end)
    if b"using" in data:
        for start, end in _multi_using(padded):
            _blank(out, start, end)
    blank = _Blanker(out)
    eol_from, eol = len(data) + 1, -1  # the last search for a line end: from, found
    after_eol, after = -2, b""  # the first byte after that line end that is not a blank
    for m in _line_matches(_MACRO_STATEMENT, padded):
        end = parens.end(m.end())
        if end < 0:
            continue
        if not (eol_from <= end and (eol < 0 or end <= eol)):
            eol_from, eol = end, data.find(b"\n", end)
        # (the rest of the line must be blank, or a comment)
        rest = _NON_SPACE.search(data, end, eol if eol >= 0 else len(data))
        if rest is not None and not data.startswith(b"//", rest.start()):
            continue
        if after_eol != eol:
            nxt = _NON_SPACE.search(data, eol) if eol >= 0 else None
            after_eol, after = eol, nxt.group() if nxt is not None else b""
        if after and after in b"<.-+*/%&|^?:;),=[":
            continue  # the call continues on the next line (`CHECK(x)\n << "msg";`)
        blank(m.start(1), end)
    if b"SGL_REGISTER_" in data:
        blank = _Blanker(out)
        for m in _DECL_MACRO.finditer(data):
            end = parens.end(m.end())
            if end > 0:
                blank(m.start(), end)
    if b"__builtin_bit_cast" in data:
        for m in _BIT_CAST.finditer(data):
            out[m.start(1) : m.end(1)] = b"0" + b" " * (m.end(1) - m.start(1) - 1)
    if b"typename" in data:
        for m in _TYPENAME_EXPR.finditer(data):
            if not _starts_word(data, m.start()):
                continue
            # Only in expression position: after `(`, `,`, `=`, `return`, or at a line start.
            before = data[max(0, m.start() - 16) : m.start()].rstrip(b" \t")
            if not before or before.endswith((b"(", b",", b"=", b"\n", b"return")):
                _blank(out, m.start(), m.start() + len(b"typename"))
    if b"{}" in data:
        for m in _EMPTY_INIT.finditer(data):
            out[m.end() - 2 : m.end()] = b"0 "

    # (`define` searched first: 201 of the 290 JIT files have none, and skip the regex)
    defines = _defines(padded) if has_hash and b"define" in data else []
    macros = _local_attribute_macros(defines) if defines else dict(KNOWN_ATTRIBUTE_MACROS)
    if macros:
        define_lines = {m.start(1) for m in defines}
        line_start, first = -1, -1  # the line of the last use: its start, its first non-blank
        last = 0
        for start, end, name in _whole_words(data, sorted(macros, key=len, reverse=True)):
            if start in define_lines:
                continue
            # Skip uses inside preprocessor lines (e.g. `#define X SGL_DEVICE`). (The line's
            # start is looked for back to the last use only: many uses on one long line.)
            newline = data.rfind(b"\n", last, start)
            if newline >= 0 or line_start < 0:
                line_start = (newline if newline >= 0 else data.rfind(b"\n", 0, start)) + 1
                nxt = _NON_SPACE.search(data, line_start)
                first = nxt.start() if nxt is not None else len(data)
            last = start
            if first < start and data[first] == 0x23:  # `#`
                continue
            kinds = macros[name]
            attributes.append(Attribute(start, end, name.decode(), kinds))
            width = end - start
            for keyword, kind in ((b"__global__", "global"), (b"__device__", "device")):
                if kind in kinds and width >= len(keyword):
                    out[start:end] = keyword + b" " * (width - len(keyword))
                    break
            else:
                _blank(out, start, end)
    if b"friend" in data:
        for m in _DEVICE_FRIEND.finditer(bytes(out)):
            out[m.start() : m.end()] = b"friend" + m.group(1) + b"__device__"
    return Normalized(bytes(out), attributes)
