"""Which of SGLang's JIT abstractions the checked tree's own `sgl_kernel` headers define.

A rule that recommends an abstraction (`SGL_DEVICE_HOST`, `device::warp::reduce_min`,
`CHECK_HOST`, ...) must only recommend what the tree being checked has: SGLang's JIT headers
grew over releases (the 0.5.15 wheel has no `SGL_DEVICE_HOST`, no `reduce_min`, no
`CHECK_HOST`, and its `reduce_max` takes `float` only).

`abstractions(abspath)` answers for the file at `abspath`: the tree is the nearest directory
above the file with an `include/sgl_kernel/utils.h` (`kernlint.jitscope.convention_header`);
the headers directly in that `include/sgl_kernel/` are read once per run (comments removed)
for

- the macros `SGL_DEVICE`, `SGL_DEVICE_HOST`, `CHECK_HOST` (`#define NAME`);
- the types `AlignedVector`, `LaunchKernel`, `RuntimeCheck` (`struct NAME`) and the
  functions `PDLWaitPrimary`, `PDLTriggerSecondary`;
- the warp reductions of `warp.cuh` (`T reduce_sum(...)`, `reduce_max`, `reduce_min`, ...);
- the element types the reductions' `max` and `min` take: the `DTypeTrait<T>` /
  `dtype_trait<T>` specializations of `type.cuh` that register a `max` (`min`) function
  (`"integral"` for the `template <std::integral T>` one).

Without such a header (a file checked outside its tree) the answer is `UNIVERSAL`: what every
SGLang JIT tree kernlint knows of defines (0.5.15 and later).
"""

from __future__ import annotations

import hashlib
import os
import re

from .lazyre import lazy_compile
from .record import record


@record(frozen=True)
class Abstractions:
    names: frozenset[str]
    max_types: frozenset[str]  # canonical element types (`canonical_type`) reduce_max takes
    min_types: frozenset[str]
    header: str | None = None  # the utils.h that located the tree; None: not found
    # `__habs2` -> "abs": CUDA intrinsics the headers' `DTypeTrait` registers for a function
    # that `device::math::` dispatches through the trait (math.cuh).
    intrinsics: tuple[tuple[str, str], ...] = ()
    # `__nv_bfloat16` -> "bf16_t": CUDA type spellings the headers alias (`using A = B;`).
    aliases: tuple[tuple[str, str], ...] = ()

    def math_function(self, intrinsic: str) -> str | None:
        """The `device::math::` function that does what `intrinsic` does, or None."""
        for name, function in self.intrinsics:
            if name == intrinsic:
                return function
        return None

    def alias(self, spelling: str) -> str | None:
        """The project alias of the CUDA type `spelling` (`__half` -> `fp16_t`), or None."""
        for name, alias in self.aliases:
            if name == spelling:
                return alias
        return None

    def has(self, name: str) -> bool:
        return name in self.names

    def reduces(self, op: str, type_name: str | None) -> bool:
        """Does `device::warp::reduce_<op>` exist and take values of this canonical type
        (None: a type kernlint could not read, taken only where every scalar type is)?"""
        if f"reduce_{op}" not in self.names:
            return False
        if op not in ("max", "min"):
            return True  # (a sum is `a + b`: any type with `+`)
        types = self.max_types if op == "max" else self.min_types
        if type_name is None:
            return SCALARS <= types
        return type_name in types

    def fingerprint(self) -> str:
        parts = sorted(self.names) + ["max:" + t for t in sorted(self.max_types)]
        parts += ["min:" + t for t in sorted(self.min_types)]
        parts += [f"math:{a}={b}" for a, b in self.intrinsics]
        parts += [f"alias:{a}={b}" for a, b in self.aliases]
        return hashlib.sha256("|".join(parts).encode()).hexdigest()[:12]


# The scalar element types a reduction's operand can have.
SCALARS = frozenset({"fp32_t", "fp16_t", "bf16_t", "integral"})

UNIVERSAL = Abstractions(
    names=frozenset(
        {
            "SGL_DEVICE",
            "AlignedVector",
            "LaunchKernel",
            "RuntimeCheck",
            "PDLWaitPrimary",
            "PDLTriggerSecondary",
            "reduce_sum",
            "reduce_max",
        }
    ),
    max_types=frozenset({"fp32_t"}),
    min_types=frozenset(),
)

_INTEGRAL = frozenset(
    "int unsigned signed short long char int8_t uint8_t int16_t uint16_t int32_t uint32_t "
    "int64_t uint64_t size_t ssize_t ptrdiff_t intptr_t uintptr_t".split()
)
_ALIASES = {
    "float": "fp32_t",
    "fp32_t": "fp32_t",
    "double": "fp64_t",
    "fp64_t": "fp64_t",
    "half": "fp16_t",
    "__half": "fp16_t",
    "fp16_t": "fp16_t",
    "__nv_bfloat16": "bf16_t",
    "nv_bfloat16": "bf16_t",
    "bf16_t": "bf16_t",
    "half2": "fp16x2_t",
    "__half2": "fp16x2_t",
    "fp16x2_t": "fp16x2_t",
    "__nv_bfloat162": "bf16x2_t",
    "nv_bfloat162": "bf16x2_t",
    "bf16x2_t": "bf16x2_t",
    "float2": "fp32x2_t",
    "fp32x2_t": "fp32x2_t",
}
_QUALIFIERS = lazy_compile(r"\b(const|volatile|__restrict__|__restrict|restrict|register|static)\b")


def canonical_type(text: str | None) -> str | None:
    """`const float` -> "fp32_t", `__nv_bfloat162` -> "bf16x2_t", `uint32_t` -> "integral";
    None for a type kernlint does not know (a template parameter, `auto`, a pointer)."""
    if not text:
        return None
    t = _QUALIFIERS.sub(" ", text).replace("std::", "").strip()
    if not t or "*" in t or "<" in t:
        return None
    t = t.rstrip("&").strip()
    words = t.split()
    if all(w in _INTEGRAL for w in words):
        return "integral"
    if len(words) != 1:
        return None
    return _ALIASES.get(words[0])


_COMMENTS = lazy_compile(rb"//[^\n]*|/\*.*?\*/", re.S)
_MACRO = lazy_compile(
    rb"^[ \t]*#[ \t]*define[ \t]+(SGL_DEVICE|SGL_DEVICE_HOST|CHECK_HOST|CHECK_CUDA)\b", re.M
)
_STRUCT = lazy_compile(rb"\b(?:struct|class)[ \t]+(AlignedVector|LaunchKernel|RuntimeCheck)\b")
_FUNCTION = lazy_compile(
    rb"\bvoid[ \t]+(PDLWaitPrimary|PDLTriggerSecondary|RuntimeDeviceCheck)[ \t]*\("
    rb"|\b(?:auto|Tensor)[ \t]+(alloc_workspace_tensor)[ \t]*\("
)
# math.cuh: `SGL_DEVICE T abs(T a) { return DTypeTrait<T>::abs(a); }` (a function of the trait).
_MATH = lazy_compile(
    rb"\bSGL_DEVICE[ \t]+(\w+)[ \t]+(\w+)[ \t]*\([^)]*\)\s*\{\s*return[ \t]+"
    rb"(?:DTypeTrait|dtype_trait)<\s*\1\s*>::(\w+)\s*\("
)
# type.cuh: `SGL_REGISTER_UNARY_FUNCTION(abs, __habs2);` (a CUDA intrinsic behind a trait function).
_REGISTERED = lazy_compile(
    rb"\bSGL_REGISTER_(?:UNARY|BINARY)_FUNCTION\s*\(\s*(\w+)\s*,\s*(__\w+)\s*\)"
)
_ALIAS = lazy_compile(
    rb"^[ \t]*using[ \t]+(\w+_t)[ \t]*=[ \t]*(__(?:half2?|nv_bfloat162?))[ \t]*;", re.M
)
_REDUCTION = lazy_compile(rb"\b\w+[ \t]+(reduce_(?:sum|max|min|prod|or|and|xor))[ \t]*\(")
_TRAIT = lazy_compile(
    rb"(?P<integral>template\s*<\s*std::integral\s+\w+\s*>\s*)?"
    rb"(?:struct\s+(?:DTypeTrait|dtype_trait)\s*<\s*(?P<a>\w+)\s*>\s*\{"
    rb"|SGL_REGISTER_DTYPE_TRAIT\s*\(\s*(?P<b>\w+)\s*,)"
)
_BINARY = lazy_compile(rb"BINARY_FUNCTION\s*\(\s*(max|min)\b")

_OF_HEADER: dict[str, Abstractions] = {}


def abstractions(abspath: str) -> Abstractions:
    """What the tree of the file at `abspath` defines (memoized per tree, once per run)."""
    from .jitscope import convention_header

    header = convention_header(abspath)
    if header is None:
        return UNIVERSAL
    found = _OF_HEADER.get(header)
    if found is None:
        found = _OF_HEADER[header] = _read_tree(header)
    return found


def fingerprint(abspath: str) -> str:
    """What a file's findings of a rule that reads `abstractions` depend on beyond its bytes."""
    return "|sgl-abstractions:" + abstractions(abspath).fingerprint()


def reset() -> None:
    """Forget the trees read (tests; a long-lived process between runs)."""
    _OF_HEADER.clear()


def _read_tree(header: str) -> Abstractions:
    directory = os.path.dirname(header)
    texts: dict[str, bytes] = {}
    try:
        entries = sorted(os.listdir(directory))
    except OSError:
        return UNIVERSAL
    for name in entries:
        if not name.endswith((".h", ".cuh", ".hpp")):
            continue
        try:
            with open(os.path.join(directory, name), "rb") as fh:
                texts[name] = _COMMENTS.sub(b" ", fh.read(1 << 20))
        except OSError:
            continue
    names: set[str] = set()
    for text in texts.values():
        for pattern in (_MACRO, _STRUCT, _FUNCTION):
            names.update(next(g for g in m.groups() if g).decode() for m in pattern.finditer(text))
    math = texts.get("math.cuh", b"")
    # (the trait functions `device::math::` dispatches to, by the name math.cuh gives them)
    dispatched = {m.group(3).decode(): m.group(2).decode() for m in _MATH.finditer(math)}
    intrinsics: dict[str, str] = {}
    aliases: dict[str, str] = {}
    for text in texts.values():
        for m in _REGISTERED.finditer(text):
            function = dispatched.get(m.group(1).decode())
            if function is not None:
                intrinsics.setdefault(m.group(2).decode(), function)
    for m in _ALIAS.finditer(texts.get("utils.cuh", b"")):
        aliases.setdefault(m.group(2).decode(), m.group(1).decode())
    warp = texts.get("warp.cuh", b"")
    names.update(m.group(1).decode() for m in _REDUCTION.finditer(warp))
    max_types: set[str] = set()
    min_types: set[str] = set()
    for text in texts.values():
        traits = list(_TRAIT.finditer(text))
        for i, m in enumerate(traits):
            end = traits[i + 1].start() if i + 1 < len(traits) else len(text)
            if m.group("integral"):
                kind = "integral"
            else:
                kind = canonical_type((m.group("a") or m.group("b")).decode())
            if kind is None:
                continue
            for op in _BINARY.finditer(text, m.end(), end):
                (max_types if op.group(1) == b"max" else min_types).add(kind)
    return Abstractions(
        names=frozenset(names),
        max_types=frozenset(max_types),
        min_types=frozenset(min_types),
        header=header,
        intrinsics=tuple(sorted(intrinsics.items())),
        aliases=tuple(sorted(aliases.items())),
    )
