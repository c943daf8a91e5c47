"""Offset-preserving normalization of C++/CUDA source before tree-sitter parses it.

tree-sitter's CUDA grammar cannot parse several things real kernels are full of: `#pragma unroll`
between a `for` header and its body, attribute macros (`SGL_DEVICE`, `__launch_bounds__(...)`,
`__align__(...)`, `CUTE_ALIGNAS(...)`, `__grid_constant__`, file-local `#define FOO_KERNEL
__global__ __launch_bounds__(...)`), unroll macros (`CUTLASS_PRAGMA_UNROLL`), `= {}` default
arguments, macros in declarations and parameter lists, `#if` branches that split braces or stand
inside an expression or a parameter list. This pass rewrites those bytes so that the grammar sees
plain C++ (docs/parsing.md lists the forms and the rule that picks a preprocessor branch):

* every rewrite keeps the byte length and never touches a line break, so every byte offset,
  line and column of the normalized text is the one of the original;
* text is blanked (replaced with spaces) or replaced by a same-length spelling the grammar knows
  (`SGL_DEVICE` -> `__device__`);
* what was removed is recorded (`Normalized.attributes`) so facts can still tell, e.g., that a
  function declared with `Q_KERNEL` is a `__global__` kernel, and so are the preprocessor
  branches blanked (`Normalized.branches`).

Rules always report on, and read text from, the original bytes.
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right

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
    b"_Alignas",
    b"__CUDA_ALIGN__",
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
    b"CUTLASS_LAMBDA_FUNC_INLINE",
    b"CUTE_GRID_CONSTANT",
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
_MACRO_STATEMENT_NAME = re.compile(rb"_*[A-Z][A-Z0-9]*_[A-Z0-9_]*")
# Declaration-generating macros used at class or namespace scope.
_DECL_MACRO = re.compile(rb"\b(SGL_REGISTER_[A-Z_]+)[ \t]*\(")
# `__builtin_bit_cast(float, x)`: a type as first argument -> `__builtin_bit_cast(0    , x)`.
_BIT_CAST = re.compile(rb"\b__builtin_bit_cast[ \t]*\([ \t]*([A-Za-z_][\w:]*(?:[ \t]*\*)*)[ \t]*,")
# `typename T::X(args)` / `typename T::X{}` used as an expression (functional cast).
_TYPENAME_EXPR = re.compile(
    rb"typename[ \t]+[A-Za-z_][\w:]*(?:<[^<>;{}()\n]*(?:<[^<>;{}()\n]*>[^<>;{}()\n]*)*>)?"
    rb"(?:::\w+)*::\w+[ \t]*[({]"
)
# `decltype(x){}` (a value of x's type) as an argument: `decltype(`, its `)` and the `{}` are
# blanked, leaving `x` (an expression of the same type) for the grammar.
_DECLTYPE_BRACES = re.compile(rb"decltype[ \t]*\(")
# `__device__ friend` -> `friend __device__` (same length; the grammar wants `friend` first),
# also `__host__ __device__ friend`: the qualifiers before a `friend` on its line.
_FRIEND = re.compile(rb"friend\b")
_QUALIFIERS_BEFORE = re.compile(
    rb"(?<![\w])((?:__host__[ \t]+|__device__[ \t]+)?(?:__device__|__host__))([ \t]*)\Z"
)
# (The patterns below start with a literal, which `re` searches for at memchr speed; a leading
# `\b` or character class makes it try the whole pattern at every byte. Word starts are
# checked by hand.)
# An explicit instantiation `template class X<A>;`: the grammar wants a declarator after the
# class; without `class` it reads the same line as a (function) instantiation.
_CLASS_INSTANTIATION = re.compile(rb"template\s+(class|struct)\s+[A-Za-z_][\w:]*\s*<")
_INSTANTIATION_STOP = re.compile(rb"[;{]")
# `x.template f(args)` (no template arguments): the grammar wants `<...>` after the name.
_MEMBER_TEMPLATE = re.compile(rb"template[ \t]+[A-Za-z_]\w*[ \t]*\(")
# `using typename Base::X;`
_USING_TYPENAME = re.compile(rb"using[ \t]+(typename)[ \t]")
# `enum : int { ... }` (no name, an underlying type): the type is blanked.
_ANONYMOUS_ENUM_BASE = re.compile(rb"enum[ \t]*(:[ \t]*[A-Za-z_][\w:]*)[ \t]*\{")
# `__global__ MACRO(args) void k(...)`: a function-like macro between the qualifier and the
# return type is an attribute (`FLASHINFER_SAMPLING_LAUNCH_BOUNDS(BLOCK_THREADS)`).
_QUALIFIER_MACRO_CALL = re.compile(rb"__(?:global|device|host)__[ \t]+(_*[A-Z][A-Z0-9_]*)[ \t]*\(")
# `bool enable_pdl ADDITIONAL_FUNC_PARAMS)`: macros named `..._PARAMS` or `..._ARGS` that add
# parameters, after the name of the last parameter (itself after a type), before the `)`.
_PARAM_MACRO_WORDS = (b"_PARAMS", b"_ARGS")
_TRAILING_PARAM_MACROS = re.compile(
    rb"(?:[\w>*&\]][ \t]+|[*&][ \t]*)([A-Za-z_]\w*)"
    rb"((?:\s+_*[A-Z][A-Z0-9_]*_(?:PARAMS|ARGS))+)\s*\)"
)
_LOWER = frozenset(b"abcdefghijklmnopqrstuvwxyz")
_PARAM_MACRO_WINDOW = 256  # (how far before the macro the parameter's type and name are read)
# A line that starts with an upper-case name and a `(` (a macro call: `_MACRO_STATEMENT_NAME`),
# or holds only such a name (an object-like macro, `_MACRO_NAME`).
_MACRO_NAME_LINE = re.compile(rb"\n[ \t]*([A-Z_][A-Z0-9_]*)[ \t]*(?:\(|(?://[^\n]*)?(?=\r?\n|$))")
# An argument of an upper-case macro call that is a built-in type alone (which the grammar
# reads as a declaration and cannot parse: `DISPATCH_CASE(torch::kFloat32, float);`) becomes an
# identifier of underscores of the same length.
_BUILTIN_TYPES = (
    b"bool|char|int|float|double|void|size_t|ssize_t|ptrdiff_t|intptr_t|uintptr_t|nullptr_t|"
    b"max_align_t|u?int(?:8|16|32|64)_t|char(?:8|16|32)_t"
)
_TYPE_ARGUMENT = re.compile(
    rb"[(,][ \t]*((?:(?:const|volatile|unsigned|signed|long|short)[ \t]+)*(?:"
    + _BUILTIN_TYPES
    + rb")\b(?:[ \t]*(?:const\b|[*&]))*)[ \t]*(?=[,)])"
)
# `__quickreduce_device_inline__ CodecBase(...)`, `__global__ __name_launch_bounds__ static`: an
# unknown double-underscore word of a project's before a declaration is an attribute macro.
_DUNDER_WORD = re.compile(
    rb"__(?!(?:global|device|host|restrict|forceinline|shared|constant|inline|noinline)__)"
    rb"([a-z][a-z0-9_]*)__(?=[ \t]+([A-Za-z_]\w*))"
)
_GRAMMAR_DUNDERS = frozenset(
    b"__global__ __device__ __host__ __shared__ __constant__ __managed__ __restrict__ "
    b"__forceinline__ __noinline__ __inline__ __launch_bounds__ __attribute__ __declspec "
    b"__asm__ __volatile__ __extension__ __typeof__ __grid_constant__ __align__ "
    b"__cluster_dims__ __maxnreg__ __thread__ __restrict".split()
)
# A linkage or visibility macro before a declaration (`TVM_FFI_DLL_EXPORT int f(...)`,
# `CUBIN_EXPORT __device__ ...`): upper case, with a part EXPORT or API, followed by a word a
# declaration starts with.
_LINKAGE_PARTS = (b"EXPORT", b"_API")
_LINKAGE_MACRO = re.compile(rb"_*[A-Z][A-Z0-9_]*")
_LINKAGE_NAME = re.compile(rb"(?:_*[A-Z0-9]+_)+(?:EXPORT|API)(?:_[A-Z0-9]+)*")
_WORD_AFTER = re.compile(rb"[ \t]+([A-Za-z_]\w*)")
_UPPER_WORD_BYTES = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_")
# Words that a type or declaration can start with (what may follow an attribute macro).
_DECL_WORDS = frozenset(
    b"void bool char short int long float double signed unsigned auto const constexpr volatile "
    b"static inline extern struct class union enum typename template friend virtual explicit "
    b"__global__ __device__ __host__ __forceinline__ __noinline__".split()
)
# Words a parameter's name cannot be (`int N_TILE)` names the parameter `N_TILE`).
_NOT_A_NAME = _DECL_WORDS | frozenset(
    b"__restrict__ __restrict restrict return sizeof decltype typeof alignof and or not xor "
    b"bitand bitor compl and_eq or_eq not_eq xor_eq".split()
)
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
    b"CUTE_HOST_RTC": frozenset({"device", "host"}),
    # FlashInfer, TensorRT-LLM, PyTorch and SGLang's ROCm headers, defined in headers that the
    # files using them include
    b"FLASHINFER_INLINE": frozenset({"device"}),
    b"HOST_DEVICE_FUNC": frozenset({"device", "host"}),
    b"C10_HOST_DEVICE": frozenset({"device", "host"}),
    b"C10_DEVICE": frozenset({"device"}),
    b"SGL_HIP_INLINE": frozenset({"device"}),
    b"__BF16_HOST_DEVICE_STATIC__": frozenset({"device", "host"}),
}
_QUALIFIER_KINDS = {b"__global__": "global", b"__device__": "device", b"__host__": "host"}
_ATTRIBUTE_ONLY_WORDS = {
    b"__global__",
    b"__device__",
    b"__host__",
    b"__forceinline__",
    b"__noinline__",
    b"inline",
    b"__inline__",
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
    # (start, end) of the preprocessor branches and directive lines blanked so that the file
    # parses (`resolve_conditionals`), in file order
    branches: list[tuple[int, int]] = field(default_factory=list)
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


_CALLABLE_ATTRIBUTES = {
    b"__launch_bounds__",
    b"__cluster_dims__",
    b"__maxnreg__",
    b"__attribute__",
    b"__align__",
    b"alignas",
}


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


# -- preprocessor conditionals ------------------------------------------------------------------
#
# tree-sitter parses every branch of an `#if` as if all of them were compiled, and only where a
# declaration or statement may stand. A conditional whose branches split braces or parentheses
# (`#ifdef USE_ROCM if (a) { #else if (b) { #endif`), that stands inside a parameter list, an
# argument list, a condition or an expression, or whose branches end in the middle of a
# declaration makes an ERROR that can swallow whole kernels. Such a conditional is *resolved*:
# one branch is kept for parsing (`choose_branch`), the other branches and the directive lines
# are blanked. Every other conditional is left to the grammar, which then sees all its branches.

_HASH_LINE = re.compile(rb"#[^\n]*(?:(?:(?<=\\)|(?<=\\\r))\n[^\n]*)*")
_CONDITIONAL = re.compile(
    rb"[ \t]*#[ \t]*(ifdef|ifndef|if|elifdef|elifndef|elif|else|endif)\b((?:[^\n]*\\\r?\n)*[^\n]*)"
)
_LABEL = re.compile(rb"(?:case\b[^\n]*|default|public|private|protected|[A-Za-z_]\w*)[ \t]*:")
_BRACKETS = (b"(", b")", b"[", b"]", b"{", b"}")


def block_comments(data: bytes) -> list[tuple[int, int]]:
    """(start, end) of the `/* ... */` comments (an opening inside a `//` comment or after an
    odd number of quotes on its line is not one)."""
    out: list[tuple[int, int]] = []
    find, rfind = data.find, data.rfind
    at = find(b"/*")
    while at >= 0:
        line = rfind(b"\n", 0, at) + 1
        if find(b"//", line, at) >= 0 or data.count(b'"', line, at) % 2:
            at = find(b"/*", at + 2)
            continue
        close = find(b"*/", at + 2)
        if close < 0:
            out.append((at, len(data)))
            break
        out.append((at, close + 2))
        at = find(b"/*", close + 2)
    return out


def directive_lines(data: bytes, comments) -> list[tuple[int, int]]:
    """(start, end) of every preprocessor line (with its continuations; `end` at its last line
    break or the end of the file) that is not inside a block comment."""
    out = []
    append = out.append
    starts = [c[0] for c in comments]
    rfind = data.rfind
    for m in _HASH_LINE.finditer(data):
        at = m.start()
        if at and data[at - 1] == 0x0A:  # (`#` first on its line: most directives)
            line = at
        else:
            line = rfind(b"\n", 0, at) + 1
            if line < at and data[line:at].strip(b" \t"):
                continue  # (a `#` that is not the first byte of its line)
        if starts:
            i = bisect_right(starts, line) - 1
            if i >= 0 and comments[i][1] > line:
                continue
        append((line, m.end()))
    return out


class _Group:
    """One `#if ... #endif`: its directives as (kind, start, end, condition), its children."""

    __slots__ = ("dirs", "children", "counts", "resolved", "chosen")

    def __init__(self) -> None:
        self.dirs: list[tuple[bytes, int, int, bytes]] = []
        self.children: list[_Group] = []
        self.counts = (0, 0, 0)  # what the group adds to the brackets of the text around it
        self.resolved = False
        self.chosen: int | None = None


def _groups(data: bytes, lines) -> list[_Group]:
    """The complete conditional groups, children before their parents (an `#endif` without an
    `#if`, and a group never closed, are left out)."""
    done: list[_Group] = []
    stack: list[_Group] = []
    for start, end in lines:
        m = _CONDITIONAL.match(data, start)
        if m is None or m.end() > end + 1:
            continue
        word, cond = m.group(1), m.group(2)
        if word.startswith(b"if"):
            group = _Group()
            group.dirs.append((word, start, end, cond))
            if stack:
                stack[-1].children.append(group)
            stack.append(group)
        elif not stack:
            continue
        elif word == b"endif":
            group = stack.pop()
            group.dirs.append((word, start, end, cond))
            done.append(group)
        else:
            stack[-1].dirs.append((word, start, end, cond))
    if stack:  # children of a group never closed are still normalized on their own
        done = [g for g in done if all(g is not s for s in stack)]
    return done


class _Code:
    """The file with its preprocessor lines and block comments blanked: bracket counts and the
    last byte of code before an offset (`//` comments skipped) are read from it."""

    __slots__ = ("view", "rev", "n")

    def __init__(self, data: bytes, lines, comments) -> None:
        view = bytearray(data)
        for start, end in lines:
            _blank(view, start, end)
        for start, end in comments:
            _blank(view, start, end)
        self.view = bytes(view)
        self.rev = self.view[::-1]
        self.n = len(data)

    def counts(self, start: int, end: int) -> tuple[int, int, int, bool]:
        """(parentheses, brackets, braces) opened minus closed in [start, end), and whether a
        closing one comes before any opening one of its kind. Literals are left out when the
        plain count is not balanced."""
        view = self.view
        c = [view.count(b, start, end) for b in _BRACKETS]
        if (c[0] != c[1] or c[2] != c[3] or c[4] != c[5]) and (
            view.find(b'"', start, end) >= 0
            or view.find(b"'", start, end) >= 0
            or view.find(b"//", start, end) >= 0
        ):
            c = _literal_free_counts(view[start:end])
        early = False
        for k in (0, 2, 4):
            if c[k + 1]:
                close = view.find(_BRACKETS[k + 1], start, end)
                opening = view.find(_BRACKETS[k], start, close)
                early = early or opening < 0
        return c[0] - c[1], c[2] - c[3], c[4] - c[5], early

    def first(self, start: int, end: int) -> int:
        """The offset of the first byte of code in [start, end), -1 if none."""
        view = self.view
        while start < end:
            m = _NON_SPACE.search(view, start, end)
            if m is None:
                return -1
            at = m.start()
            if not view.startswith(b"//", at):
                return at
            start = view.find(b"\n", at, end)
            if start < 0:
                return -1
        return -1

    def last(self, end: int, floor: int) -> int:
        """The offset of the last byte of code in [floor, end), -1 if none."""
        view, rev, n = self.view, self.rev, self.n
        while end > floor:
            m = _NON_SPACE.search(rev, n - end, n - floor)
            if m is None:
                return -1
            at = n - 1 - m.start()
            line = view.rfind(b"\n", floor, at) + 1
            cut = _line_comment(view, line, at + 1)
            if cut < 0:
                return at
            end = cut
        return -1


def _literal_free_counts(text: bytes) -> list[int]:
    from .lexer import literal_spans

    pieces, at = [], 0
    for span in literal_spans(text):
        pieces.append(text[at : span.start])
        at = span.end
    pieces.append(text[at:])
    code = b"".join(pieces)
    return [code.count(b) for b in _BRACKETS]


def _line_comment(view: bytes, line: int, end: int) -> int:
    """Where a `//` comment starts in [line, end) (outside quotes), -1 if none."""
    i = view.find(b"//", line, end)
    while i >= 0:
        if view.count(b'"', line, i) % 2 == 0:
            return i
        i = view.find(b"//", i + 2, end)
    return -1


def _at_boundary(code: _Code, at: int) -> bool:
    """Can a declaration or statement start after the code byte at `at` (-1: the file start)?
    After `;`, `}`, a `{` that opens a block (not an initializer list) or a label."""
    if at < 0:
        return True
    c = code.view[at]
    if c == 0x3B or c == 0x7D:  # `;` `}`
        return True
    if c == 0x7B:  # `{`
        before = code.last(at, 0)
        return before < 0 or code.view[before] not in b"=,(["
    if c == 0x3A and code.view[at - 1 : at] != b":":  # `:`, not `::`
        line = code.view.rfind(b"\n", 0, at) + 1
        text = code.view[line : at + 1].strip()
        return _LABEL.fullmatch(text) is not None
    return False


def _needs_resolving(code: _Code, group: _Group) -> bool:
    """Does the group stand where no declaration or statement may start, or does a branch
    end inside one, or start by going on with the code before it (`else`, `,`, `)`, ...)?"""
    if not _at_boundary(code, code.last(group.dirs[0][1], 0)):
        return True
    for k in range(len(group.dirs) - 1):
        start, end = group.dirs[k][2], group.dirs[k + 1][1]
        last = code.last(end, start)
        if last >= 0 and not _at_boundary(code, last):
            return True
        first = code.first(start, end)
        if first >= 0 and _goes_on(code.view, first):
            return True
    return False


_GOES_ON = re.compile(rb"[),.:?|=>\]]|<<|&&|(?:else|catch)\b")


def _goes_on(view: bytes, at: int) -> bool:
    """Does the code at `at` go on with a statement or expression before it?"""
    return _GOES_ON.match(view, at) is not None and view[at : at + 2] != b"::"


def _branch_counts(code: _Code, group: _Group):
    """Each branch's (parentheses, brackets, braces, early close), its children's own
    contributions counted instead of their text."""
    out = []
    children = group.children
    ci = 0
    for k in range(len(group.dirs) - 1):
        start, end = group.dirs[k][2], group.dirs[k + 1][1]
        total = [0, 0, 0]
        early = False
        at = start
        while ci < len(children) and children[ci].dirs[0][1] < end:
            child = children[ci]
            p, b, c, e = code.counts(at, child.dirs[0][1])
            early = early or (e and total == [0, 0, 0])
            total = [total[0] + p, total[1] + b, total[2] + c]
            total = [x + y for x, y in zip(total, child.counts, strict=True)]
            at = child.dirs[-1][2]
            ci += 1
        p, b, c, e = code.counts(at, end)
        early = early or (e and total == [0, 0, 0])
        out.append((total[0] + p, total[1] + b, total[2] + c, early))
    return out


# In `#if` conditions the grammar reads C expressions only: `and`/`or`/`not` become `&&`/`||`/`!`
# and `__has_include("x")` (a string argument) becomes `1`, at the same length.
_CONDITION_WORD = re.compile(rb"\b(and|or|not)\b|\b__has_include(?:_next)?[ \t]*\([^()\n]*\)")
_CONDITION_SPELLING = {b"and": b"&& ", b"or": b"||", b"not": b"!  "}


def rewrite_conditions(data: bytes, out: bytearray, lines) -> None:
    for start, end in lines:
        m = _CONDITIONAL.match(data, start)
        if m is None or m.group(1) not in (b"if", b"elif") or m.end() > end + 1:
            continue
        cond_start = m.start(2)
        cond = m.group(2)
        if b"and" not in cond and b"or" not in cond and b"not" not in cond and b"__has" not in cond:
            continue
        for w in _CONDITION_WORD.finditer(data, cond_start, end):
            word = w.group(1)
            if word is not None:
                out[w.start() : w.end()] = _CONDITION_SPELLING[word]
            else:
                out[w.start() : w.end()] = b"1" + b" " * (w.end() - w.start() - 1)


_ZERO = re.compile(rb"[ \t]*0[ \t]*(?://|/\*|\Z)")
_GUARD = re.compile(rb"[ \t]*#[ \t]*define[ \t]+([A-Za-z_]\w*)")


def _balanced(data: bytes, start: int, end: int) -> bool:
    c = [data.count(b, start, end) for b in _BRACKETS]
    return c[0] == c[1] and c[2] == c[3] and c[4] == c[5]


def _include_guard(data: bytes, group: _Group) -> bool:
    """`#ifndef X_H` / `#define X_H` ... `#endif` (never resolved: the guard's own branch is the
    whole header)."""
    if len(group.dirs) != 2 or group.dirs[0][0] != b"ifndef":
        return False
    name = group.dirs[0][3].strip()
    m = _GUARD.match(data, group.dirs[0][2] + 1)
    return m is not None and m.group(1) == name


def resolve_conditionals(data: bytes, out: bytearray, lines, comments) -> list[tuple[int, int]]:
    """Resolve the conditionals that would break the parse (see above), blanking in `out`;
    the (start, end) spans blanked, directive lines included."""
    groups = _groups(data, lines)
    if all(_include_guard(data, g) and _balanced(data, g.dirs[0][2], g.dirs[1][1]) for g in groups):
        return []  # (a header whose only conditional is its guard: nothing to resolve)
    code = _Code(data, lines, comments)
    blanked: list[tuple[int, int]] = []
    for group in groups:  # (children first)
        counts = _branch_counts(code, group)
        cond_zero = group.dirs[0][0] == b"if" and _ZERO.match(group.dirs[0][3]) is not None
        if (
            cond_zero
            or any(p or b or c or e for p, b, c, e in counts)
            or _needs_resolving(code, group)
        ):
            group.resolved = True
            group.chosen = choose_branch(group.dirs)
            if group.chosen is not None:
                p, b, c, _ = counts[group.chosen]
                group.counts = (p, b, c)
            at_boundary = not cond_zero and _at_boundary(code, code.last(group.dirs[0][1], 0))
            for k, (_word, start, end, _cond) in enumerate(group.dirs):
                blanked.append((start, end))
                if k + 1 < len(group.dirs) and k != group.chosen:
                    closers = _trailing_closers(code, group, k, counts[k]) if at_boundary else None
                    if closers is None:
                        blanked.append((end, group.dirs[k + 1][1]))
                    else:
                        blanked.extend((at, at + 1) for at in closers)
    blanked.sort()
    merged: list[tuple[int, int]] = []
    for start, end in blanked:
        if merged and start <= merged[-1][1]:
            if end > merged[-1][1]:
                merged[-1] = (merged[-1][0], end)
        else:
            merged.append((start, end))
    for start, end in merged:
        _blank(out, start, end)
    return merged


def _trailing_closers(code: _Code, group: _Group, k: int, counts) -> list[int] | None:
    """A branch not kept whose only fault is closing braces at its end (`stub kernel }  //
    namespace` before an `#else` that holds the real code and leaves the namespace open) keeps
    its complete items: the offsets of those braces, to blank; None if it is not such a
    branch (it has conditionals of its own, opens or closes anything else, or what stays
    does not end where an item may)."""
    p, b, c, _early = counts
    start, end = group.dirs[k][2], group.dirs[k + 1][1]
    if p or b or c >= 0 or any(start <= g.dirs[0][1] < end for g in group.children):
        return None
    first = code.first(start, end)
    if first >= 0 and _goes_on(code.view, first):
        return None
    closers = []
    at = end
    for _ in range(-c):
        at = code.last(at, start)
        if at < 0 or code.view[at] != 0x7D:  # `}`
            return None
        closers.append(at)
    rest = code.counts(start, at)
    if rest != (0, 0, 0, False):
        return None
    last = code.last(at, start)
    if last >= 0 and not _at_boundary(code, last):
        return None
    return closers


# -- which branch --------------------------------------------------------------------------------
#
# The branch kept is the one a CUDA device compilation for the newest architecture takes, as far
# as the condition can be decided: ROCm/HIP macros undefined, `__CUDACC__` defined,
# `__CUDA_ARCH__` 1000 (sm_100), NVRTC and Windows undefined. A condition that still depends on
# an unknown macro counts as true, so the first branch that is not known false is kept.

PREPROCESSOR_MODEL: dict[bytes, int | None] = {
    # defined (with their values)
    b"__CUDACC__": 1,
    b"__NVCC__": 1,
    b"__CUDA_ARCH__": 1000,
    b"__cplusplus": 201703,
    # undefined
    b"USE_ROCM": None,
    b"USE_HIP": None,
    b"USE_MUSA": None,
    b"__HIPCC__": None,
    b"__HIP__": None,
    b"__HIPCC_RTC__": None,
    b"__HIP_PLATFORM_AMD__": None,
    b"__HIP_PLATFORM_HCC__": None,
    b"__HIP_DEVICE_COMPILE__": None,
    b"__CUDACC_RTC__": None,
    b"__CLION_IDE__": None,
    b"_WIN32": None,
    b"_MSC_VER": None,
}
_UNKNOWN = object()
_PP_TOKEN = re.compile(
    rb"\s*(?:(0[xX][0-9a-fA-F]+|\d+)[uUlL]*|([A-Za-z_]\w*)|(&&|\|\||==|!=|<=|>=|<<|>>|[-+*/%<>!~&|^?:(),])|(\S))"
)
_ALTERNATIVE = {b"and": b"&&", b"or": b"||", b"not": b"!", b"bitand": b"&", b"bitor": b"|"}
_BINARY = {
    b"||": 1,
    b"&&": 2,
    b"|": 3,
    b"^": 4,
    b"&": 5,
    b"==": 6,
    b"!=": 6,
    b"<": 7,
    b">": 7,
    b"<=": 7,
    b">=": 7,
    b"<<": 8,
    b">>": 8,
    b"+": 9,
    b"-": 9,
    b"*": 10,
    b"/": 10,
    b"%": 10,
}


def _pp_tokens(text: bytes) -> list | None:
    """Tokens of a condition: ints, (b"id", name) and operator bytes; None if unreadable."""
    comment = text.find(b"//")
    if comment >= 0:
        text = text[:comment]
    text = re.sub(rb"/\*.*?\*/", b" ", text.replace(b"\\\n", b" ").replace(b"\\\r\n", b" "))
    out: list = []
    pos = 0
    n = len(text.rstrip())
    while pos < n:
        m = _PP_TOKEN.match(text, pos)
        if m is None or m.group(4) is not None:
            return None
        pos = m.end()
        if m.group(1) is not None:
            out.append(_pp_int(m.group(1)))
        elif m.group(2) is not None:
            word = m.group(2)
            out.append(_ALTERNATIVE[word] if word in _ALTERNATIVE else (b"id", word))
        else:
            out.append(m.group(3))
    return out


def _pp_int(digits: bytes) -> int:
    if digits[:2] in (b"0x", b"0X"):
        return int(digits, 16)
    return int(digits, 8) if len(digits) > 1 and digits[0] == 0x30 else int(digits)


class _Condition:
    """A three-valued evaluator of `#if` conditions: an int, or _UNKNOWN."""

    def __init__(self, tokens: list) -> None:
        self.tokens = tokens
        self.i = 0

    def peek(self):
        return self.tokens[self.i] if self.i < len(self.tokens) else None

    def take(self):
        tok = self.peek()
        self.i += 1
        return tok

    def expect(self, tok) -> None:
        if self.take() != tok:
            raise ValueError

    def parse(self, level: int = 0):
        left = self.unary()
        while True:
            op = self.peek()
            if op == b"?" and level == 0:
                self.take()
                a = self.parse(0)
                self.expect(b":")
                b = self.parse(0)
                if left is _UNKNOWN:
                    left = a if a == b else _UNKNOWN
                else:
                    left = a if left else b
                continue
            prec = _BINARY.get(op) if isinstance(op, bytes) else None
            if prec is None or prec <= level:
                return left
            self.take()
            right = self.parse(prec)
            left = _apply(op, left, right)

    def unary(self):
        tok = self.take()
        if tok in (b"!", b"~", b"-", b"+"):
            v = self.unary()
            if v is _UNKNOWN:
                return v
            return {b"!": int(not v), b"~": ~v, b"-": -v, b"+": v}[tok]
        if tok == b"(":
            v = self.parse(0)
            self.expect(b")")
            return v
        if isinstance(tok, int):
            return tok
        if isinstance(tok, tuple):
            name = tok[1]
            if name == b"defined":
                paren = self.peek() == b"("
                if paren:
                    self.take()
                target = self.take()
                if not isinstance(target, tuple):
                    raise ValueError
                if paren:
                    self.expect(b")")
                if target[1] in PREPROCESSOR_MODEL:
                    return int(PREPROCESSOR_MODEL[target[1]] is not None)
                return _UNKNOWN
            if self.peek() == b"(":  # a function-like macro or `__has_include(...)`
                depth = 0
                while True:
                    t = self.take()
                    if t is None:
                        raise ValueError
                    depth += (t == b"(") - (t == b")")
                    if depth == 0:
                        break
                return _UNKNOWN
            if name in (b"true", b"false"):
                return int(name == b"true")
            if name in PREPROCESSOR_MODEL:
                value = PREPROCESSOR_MODEL[name]
                return 0 if value is None else value
            return _UNKNOWN
        raise ValueError


def _apply(op: bytes, a, b):
    if op == b"&&":
        if a == 0 or b == 0:
            return 0
        return _UNKNOWN if a is _UNKNOWN or b is _UNKNOWN else 1
    if op == b"||":
        if (a is not _UNKNOWN and a) or (b is not _UNKNOWN and b):
            return 1
        return _UNKNOWN if a is _UNKNOWN or b is _UNKNOWN else 0
    if a is _UNKNOWN or b is _UNKNOWN:
        return _UNKNOWN
    if op in (b"/", b"%") and b == 0:
        return _UNKNOWN
    return {
        b"|": lambda: a | b,
        b"^": lambda: a ^ b,
        b"&": lambda: a & b,
        b"==": lambda: int(a == b),
        b"!=": lambda: int(a != b),
        b"<": lambda: int(a < b),
        b">": lambda: int(a > b),
        b"<=": lambda: int(a <= b),
        b">=": lambda: int(a >= b),
        b"<<": lambda: a << b if 0 <= b < 64 else _UNKNOWN,
        b">>": lambda: a >> b if 0 <= b < 64 else _UNKNOWN,
        b"+": lambda: a + b,
        b"-": lambda: a - b,
        b"*": lambda: a * b,
        b"/": lambda: int(a / b),
        b"%": lambda: a - b * int(a / b),
    }[op]()


def evaluate(condition: bytes):
    """The value of an `#if` condition under `PREPROCESSOR_MODEL`: an int, or None when it
    depends on a macro the model does not know (or cannot be read)."""
    tokens = _pp_tokens(condition)
    if not tokens:
        return None
    ev = _Condition(tokens)
    try:
        value = ev.parse(0)
    except (ValueError, TypeError, IndexError):
        return None
    if ev.i != len(tokens) or value is _UNKNOWN:
        return None
    return value


def _branch_value(word: bytes, cond: bytes):
    if word == b"else":
        return 1
    if word in (b"ifdef", b"ifndef", b"elifdef", b"elifndef"):
        m = re.match(rb"\s*([A-Za-z_]\w*)", cond)
        if m is None or m.group(1) not in PREPROCESSOR_MODEL:
            return None
        defined = PREPROCESSOR_MODEL[m.group(1)] is not None
        return int(defined if word.endswith(b"ifdef") else not defined)
    return evaluate(cond)


def choose_branch(dirs) -> int | None:
    """The index of the branch kept: the first whose condition is true or unknown; None when
    every condition is false and there is no `#else`."""
    for k in range(len(dirs) - 1):
        value = _branch_value(dirs[k][0], dirs[k][3])
        if value is None or value:
            return k
    return None


class _Directives:
    """`inside(offset)`: is the offset on a preprocessor line (continuations included)?"""

    __slots__ = ("lines", "starts")

    def __init__(self, lines) -> None:
        self.lines = lines
        self.starts = [start for start, _ in lines]

    def inside(self, offset: int) -> bool:
        i = bisect_right(self.starts, offset) - 1
        return i >= 0 and offset <= self.lines[i][1]


def _dunder_attributes(data: bytes, out: bytearray, pre: _Directives, attributes) -> None:
    """Blank `_DUNDER_WORD`s followed by a word a declaration starts with, or by a name and
    `(` (a constructor); their qualifiers are guessed from the name (`device`, `host`,
    `global`)."""
    for m in _DUNDER_WORD.finditer(data):
        start, end = m.start(), m.end()
        name, nxt = data[start:end], m.group(2)
        if (
            name in _GRAMMAR_DUNDERS
            or name.startswith(b"__builtin")
            or not _starts_word(data, start)
        ):
            continue
        if nxt not in _DECL_WORDS:
            after = _NON_SPACE.search(data, m.end(2))
            if after is None or data[after.start()] != 0x28:  # `(`
                continue
            if not any(w in name for w in (b"inline", b"device", b"host", b"attribute")):
                continue
        if pre.inside(start):
            continue
        kinds = frozenset(k for k in ("device", "host", "global") if k.encode() in name)
        attributes.append(Attribute(start, end, name.decode(), kinds))
        _blank(out, start, end)


def _type_arguments(data: bytes, out: bytearray, open_end: int, end: int) -> None:
    """Rewrite the built-in-type arguments (`_TYPE_ARGUMENT`) of the macro call whose `(` ends
    at `open_end` and whose `)` ends at `end`."""
    for a in _TYPE_ARGUMENT.finditer(data, open_end - 1, end):
        at = a.start()
        if at != open_end - 1 and any(
            data.count(o, open_end, at) != data.count(c, open_end, at)
            for o, c in ((b"(", b")"), (b"[", b"]"), (b"{", b"}"))
        ):
            continue  # (an argument of a call inside the macro's arguments)
        out[a.start(1) : a.end(1)] = b"_" * (a.end(1) - a.start(1))


def _linkage_macros(data: bytes, out: bytearray, pre: _Directives) -> None:
    """Blank linkage and visibility macros (`_LINKAGE_NAME`) before a declaration."""
    done = -1
    for at, _part in occurrences(data, _LINKAGE_PARTS):
        if at < done:
            continue
        start = at
        while start > 0 and data[start - 1] in _UPPER_WORD_BYTES:
            start -= 1
        m = _LINKAGE_MACRO.match(data, start)
        if m is None or not _starts_word(data, start):
            continue
        end = done = m.end()
        if end < len(data) and data[end] in WORD_BYTES:
            continue  # (a word with lower-case letters)
        if _LINKAGE_NAME.fullmatch(data, start, end) is None:
            continue
        nxt = _WORD_AFTER.match(data, end)
        if nxt is not None and nxt.group(1) in _DECL_WORDS and not pre.inside(start):
            _blank(out, start, end)


def _trailing_param_macros(data: bytes, out: bytearray) -> None:
    """Blank `_TRAILING_PARAM_MACROS`: the pattern is matched in a window before each
    `..._PARAMS)`-like word."""
    done = -1
    for at, word in occurrences(data, _PARAM_MACRO_WORDS):
        after = _NON_SPACE.search(data, at + len(word))
        if at < done or after is None or data[after.start()] != 0x29:  # `)`
            continue
        if at + len(word) < len(data) and data[at + len(word)] in WORD_BYTES:
            continue
        floor = max(0, at - _PARAM_MACRO_WINDOW)
        for m in _TRAILING_PARAM_MACROS.finditer(data, floor, after.end()):
            name = m.group(1)
            # (the parameter's name: lower case first, not a type such as `size_t N_PARAMS)`)
            if (
                m.end() == after.end()
                and name[0] in _LOWER
                and not name.endswith(b"_t")
                and name not in _NOT_A_NAME
            ):
                _blank(out, m.start(2), m.end(2))
                done = m.end()
                break


def _declaration_only(data: bytes, at: int) -> bool:
    """Does the declaration going on at `at` end with a `;` before any `{`?"""
    found = _INSTANTIATION_STOP.search(data, at)
    return found is not None and data[found.start()] == 0x3B


def _declaration_forms(
    data: bytes, out: bytearray, parens: _Parens, pre: _Directives, attributes
) -> None:
    """Forms of declarations the grammar does not know, rewritten (see the patterns). (Each
    search of a whole file costs about what normalizing a small one does: the forms are found
    from one search per literal.)"""
    stop_from, stop_at = len(data) + 1, -1
    for at, _word in occurrences(data, (b"template",)):
        if not _starts_word(data, at):
            continue
        m = _CLASS_INSTANTIATION.match(data, at)
        if m is not None:
            if not (stop_from <= m.end() and (stop_at < 0 or m.end() <= stop_at)):
                found = _INSTANTIATION_STOP.search(data, m.end())
                stop_from, stop_at = m.end(), found.start() if found is not None else -1
            if stop_at >= 0 and data[stop_at] == 0x3B:  # `;` before any `{`
                _blank(out, m.start(1), m.end(1))
            continue
        if _MEMBER_TEMPLATE.match(data, at) is not None:
            before = data[max(0, at - 8) : at].rstrip(b" \t")
            if before.endswith((b".", b"->")):
                _blank(out, at, at + len(b"template"))
    for m in _USING_TYPENAME.finditer(data):
        if _starts_word(data, m.start()):
            _blank(out, m.start(1), m.end(1))
    for m in _ANONYMOUS_ENUM_BASE.finditer(data):
        if _starts_word(data, m.start()):
            _blank(out, m.start(1), m.end(1))
    for m in _QUALIFIER_MACRO_CALL.finditer(data):
        if not _starts_word(data, m.start()) or _MACRO_NAME.fullmatch(m.group(1)) is None:
            continue
        end = parens.end(m.end())
        if end < 0:
            continue
        nxt = _NON_SPACE.search(data, end)
        if nxt is not None and data[nxt.start()] in WORD_BYTES:
            _blank(out, m.start(1), end)
    _dunder_attributes(data, out, pre, attributes)
    for m in _DECLTYPE_BRACES.finditer(data):
        close = parens.end(m.end())
        if close < 0 or not data.startswith(b"{}", close) or not _starts_word(data, m.start()):
            continue
        before = data[max(0, m.start() - 8) : m.start()].rstrip(b" \t")
        if before.endswith((b"(", b",", b"=", b"return")):
            _blank(out, m.start(), m.end())
            _blank(out, close - 1, close + 2)
    _linkage_macros(data, out, pre)
    _trailing_param_macros(data, out)


def _macro_name_line(data: bytes, out: bytearray, m, pre: _Directives) -> None:
    """Blank a line holding only an object-like macro (`PROFILER_PARAMS_SETTER`), where a
    statement or declaration may stand: after `;`, `{`, `}` or another such line, and before a
    line that does not go on with the expression (an operator, `(`, `;`). Macros that may open
    or close a namespace or a block (`..._BEGIN`, `..._END`, `...NAMESPACE...`) are left
    alone."""
    name = m.group(1)
    if _MACRO_NAME.fullmatch(name) is None:
        return
    if b"NAMESPACE" in name or name.endswith((b"_BEGIN", b"_END", b"_START", b"_OPEN")):
        return
    if name.endswith((b"_CLOSE", b"_NS")) or name.startswith((b"BEGIN_", b"END_")):
        return
    start, end = m.start(1), m.end(1)
    if pre.inside(start):
        return
    nxt = _code_after(data, end)
    after = data[nxt] if nxt >= 0 else 0x7D
    if after in b"<.-+*/%&|^?:;),=[({":
        return
    prev, line = _code_before(data, start)
    if prev is None or (prev not in b";{}" and not _MACRO_NAME.fullmatch(line.strip())):
        return
    if prev == 0x7B and after == 0x7D and _ENUM_WORD.search(line) is not None:
        return  # (`enum E { ONLY_ENUMERATOR }`)
    _blank(out, start, end)


_MACRO_NAME = re.compile(rb"_*[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+_*")
_ENUM_WORD = re.compile(rb"\benum\b")


def _code_after(data: bytes, pos: int) -> int:
    """The offset of the first byte from `pos` on that is not blank or in a comment, -1 if
    none."""
    n = len(data)
    while pos < n:
        m = _NON_SPACE.search(data, pos)
        if m is None:
            return -1
        at = m.start()
        if data.startswith(b"//", at):
            pos = data.find(b"\n", at)
            if pos < 0:
                return -1
        elif data.startswith(b"/*", at):
            pos = data.find(b"*/", at + 2)
            if pos < 0:
                return -1
            pos += 2
        else:
            return at
    return -1


_CODE_BEFORE_WINDOW = 4096


def _code_before(data: bytes, pos: int) -> tuple[int | None, bytes]:
    """The last byte of code before the line holding `pos` and that code's line (without its
    comment): blank lines, `//` and `/* */` comments and preprocessor lines are skipped;
    (ord(";"), b"") at the start of the file; (None, b"") if it is further back than
    `_CODE_BEFORE_WINDOW` bytes."""
    floor = max(0, pos - _CODE_BEFORE_WINDOW)
    end = data.rfind(b"\n", floor, pos)
    while end >= floor:
        start = data.rfind(b"\n", floor, end) + 1
        if start == 0 and floor > 0:
            return None, b""
        line = data[start:end]
        cut = _line_comment(data, start, end)
        if cut >= 0:
            line = data[start:cut]
        code = line.strip()
        if code.endswith(b"*/"):
            opening = data.rfind(b"/*", floor, start + len(line))
            if opening < 0:
                return None, b""
            code = data[data.rfind(b"\n", floor, opening) + 1 : opening].strip()
            start = data.rfind(b"\n", floor, opening) + 1
        if code and not code.startswith(b"#") and not _continues_directive(data, floor, start):
            return code[-1], code
        end = start - 1
    return (0x3B, b"") if floor == 0 else (None, b"")


def _continues_directive(data: bytes, floor: int, start: int) -> bool:
    """Is the line starting at `start` a continuation of a preprocessor line?"""
    while start > floor:
        prev_end = start - 1  # the `\n` ending the line before
        if data[prev_end - 1 : prev_end] == b"\r":
            prev_end -= 1
        if data[prev_end - 1 : prev_end] != b"\\":
            return False
        start = data.rfind(b"\n", floor, prev_end) + 1
        if data[start:prev_end].lstrip().startswith(b"#"):
            return True
    return False


def normalize(data: bytes) -> Normalized:
    """Normalize C++/CUDA source bytes; the result has exactly the same length and line breaks."""
    out = bytearray(data)
    attributes: list[Attribute] = []
    has_hash = b"#" in data
    padded = b"\n" + data
    parens = _Parens(data)
    comments = block_comments(data) if has_hash else []
    lines = directive_lines(data, comments) if has_hash else []
    pre = _Directives(lines)

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
        if end > 0 and not (lines and pre.inside(start)):
            blank(start, end)
    for start, end, _word in _whole_words(data, _ATTR_WORDS):
        if not (lines and pre.inside(start)):  # (`#ifndef __grid_constant__`)
            _blank(out, start, end)
    if b"using" in data:
        for start, end in _multi_using(padded):
            _blank(out, start, end)
    blank = _Blanker(out)
    eol_from, eol = len(data) + 1, -1  # the last search for a line end: from, found
    after_eol, after = -2, b""  # the first byte after that line end that is not a blank
    for m in _line_matches(_MACRO_NAME_LINE, padded):
        if data[m.end() - 1] != 0x28:  # `(`: else a macro name alone on its line
            _macro_name_line(data, out, m, pre)
            continue
        if _MACRO_STATEMENT_NAME.fullmatch(m.group(1)) is None:
            continue
        end = parens.end(m.end())
        if end < 0:
            continue
        if not (eol_from <= end and (eol < 0 or end <= eol)):
            eol_from, eol = end, data.find(b"\n", end)
        # (the rest of the line must be blank, or a comment)
        rest = _NON_SPACE.search(data, end, eol if eol >= 0 else len(data))
        if rest is None or data.startswith(b"//", rest.start()):
            if after_eol != eol:
                nxt = _code_after(data, eol) if eol >= 0 else -1
                after_eol, after = eol, data[nxt : nxt + 1] if nxt >= 0 else b""
            # (unless the call goes on on the next line: `CHECK(x)\n << "msg";`)
            if not after or after not in b"<.-+*/%&|^?:;),=[":
                blank(m.start(1), end)
                continue
        if m.start(1) >= blank.done and not (lines and pre.inside(m.start(1))):
            _type_arguments(data, out, m.end(), end)
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
        for m in _FRIEND.finditer(data):
            if not _starts_word(data, m.start()):
                continue
            line = data.rfind(b"\n", 0, m.start()) + 1
            q = _QUALIFIERS_BEFORE.search(bytes(out[line : m.start()]))
            if q is not None:
                at = line + q.start()
                out[at : m.end()] = b"friend" + q.group(2) + q.group(1)
            elif (
                not out[line : m.start()].strip() and line > 0 and _declaration_only(data, m.end())
            ):
                # (`CUTE_HOST_DEVICE` on the line before: the qualifiers cannot move after a
                # line break; they are blanked, the macro's kinds stay recorded)
                above = data.rfind(b"\n", 0, line - 1) + 1
                q = _QUALIFIERS_BEFORE.search(bytes(out[above : line - 1]).rstrip(b"\r"))
                if q is not None:
                    _blank(out, above + q.start(1), above + q.end(1))
    _declaration_forms(data, out, parens, pre, attributes)
    branches = []
    if lines:
        rewrite_conditions(data, out, lines)
        for start, end in comments:
            # (a `/* */` comment in a `#define` body ends the grammar's token for the body:
            # the rest of the body would be parsed as code; to the preprocessor it is a blank)
            if pre.inside(start):
                _blank(out, start, end)
        branches = resolve_conditionals(data, out, lines, comments)
    attributes.sort(key=lambda a: a.start)
    return Normalized(bytes(out), attributes, branches)
