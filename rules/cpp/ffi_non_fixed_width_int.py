"""Reports platform-width integer types at the FFI boundary of a JIT module.

## What it does
Finds FFI entry points: host functions with a `tvm::ffi::TensorView` parameter that no other
function of the file calls and that take no stream, functions exported with
`TVM_FFI_DLL_EXPORT_TYPED_FUNC`, and targets of a Python `load_jit(..., cuda_wrappers=[...])`
among the checked files. In those it reports each by-value integer parameter and return type
spelled with a platform-width type (`int`, `unsigned`, `long`, `long long`, `short`, `ssize_t`,
`ptrdiff_t`, ...), naming the LP64 fixed-width type of the same width and signedness.

Not reported: fixed-width types, `bool`, `char`, floating types, `size_t`,
`intptr_t`/`uintptr_t`; kernels, device functions and helpers; pointer and reference
parameters and returns. Aliases (`using index_t = int;`) are seen only with `--semantic`.

Configure: `ffi-boundaries` (docs/presets.md); "torch-library" also judges functions registered
in `TORCH_LIBRARY*` blocks (any integer type but `int64_t`).

## Why is this bad?
The TVM FFI passes fixed-width integers, while the width of `long` differs between platforms:
the sides can disagree on an argument's width. SGLang's JIT guide asks for `int32_t`,
`int64_t`, `uint32_t` (or `size_t`). PyTorch passes a schema `int` as `int64_t`: `TORCH_LIBRARY`
rejects other integer types, the stable ABI's `TORCH_BOX` truncates them.

## Example
```cpp
namespace sglang {
void scale(tvm::ffi::TensorView out, long num_tokens) {}
}  // namespace sglang
```

## Use instead
```cpp
namespace sglang {
void scale(tvm::ffi::TensorView out, int64_t num_tokens) {}
}  // namespace sglang
```

## Fix safety
The fix is unsafe: it can change the function's ABI, and other files must follow. Where the
type changes (`long long`), it edits every declaration in the file, and is not offered where
one spells another type or the name is used other than in calls, arguments and `auto`
variables. None is offered where the fixed-width name may be
undeclared (no `<cstdint>`-style, TVM FFI or `sgl_kernel` include, nor a use).
"""

from __future__ import annotations

from kernlint.cpp.fix_safety import FixSafety
from kernlint.model import Edit, Fix, Rule

RULE = Rule(
    code="CU005",
    name="ffi-non-fixed-width-int",
    language="cpp",
    summary="platform-width integer at the FFI boundary",
    fix="unsafe",
    scope="jit",
    # No byte triggers: a wrapper target named in Python makes any file a candidate. `check`
    # filters by bytes itself and only then asks for the tree (parsed lazily).
    needs_tree=False,
)

# Spelled type (whitespace-normalized, `std::` removed) -> fixed-width replacement (LP64).
REPLACEMENTS = {
    "int": "int32_t",
    "signed": "int32_t",
    "signed int": "int32_t",
    "unsigned": "uint32_t",
    "unsigned int": "uint32_t",
    "short": "int16_t",
    "short int": "int16_t",
    "signed short": "int16_t",
    "unsigned short": "uint16_t",
    "unsigned short int": "uint16_t",
    "long": "int64_t",
    "long int": "int64_t",
    "signed long": "int64_t",
    "long long": "int64_t",
    "long long int": "int64_t",
    "signed long long": "int64_t",
    "unsigned long": "uint64_t",
    "unsigned long int": "uint64_t",
    "unsigned long long": "uint64_t",
    "unsigned long long int": "uint64_t",
    "ssize_t": "int64_t",
    "ptrdiff_t": "int64_t",
}
# Spelled types whose replacement is another type on LP64 (`int64_t` is `long` there, not
# `long long`): every declaration must change with the definition.
DIFFERENT_TYPE = frozenset(
    {
        "long long",
        "long long int",
        "signed long long",
        "unsigned long long",
        "unsigned long long int",
    }
)


TVM_FFI = "tvm-ffi"
TORCH_LIBRARY = "torch-library"
TORCH_INT64 = "int64_t"
_NARROW = (
    "a schema `int` is `int64_t` (`TORCH_LIBRARY` rejects a narrower type, the stable ABI's "
    "`TORCH_BOX` truncates the value)"
)
_PLATFORM = "`{t}` is 32 bits on Windows while a schema `int` is `int64_t`"
_LONG_LONG = "`{t}` is not `int64_t` on LP64 Linux (`TORCH_LIBRARY` rejects it)"
_UNSIGNED = (
    "a schema `int` is a signed `int64_t` (`TORCH_LIBRARY` rejects an unsigned type, the "
    "stable ABI's `TORCH_BOX` wraps negative values)"
)
# Spelled integer type (as `_spelled` gives it) -> why it is wrong at a PyTorch dispatcher
# boundary, where c10 maps a schema `int` to `int64_t` and accepts no other integer type.
TORCH_INT_TYPES = {
    **dict.fromkeys(
        (
            "int",
            "signed",
            "signed int",
            "unsigned",
            "unsigned int",
            "short",
            "short int",
            "signed short",
            "unsigned short",
            "unsigned short int",
            "int32_t",
            "uint32_t",
            "int16_t",
            "uint16_t",
            "int8_t",
            "uint8_t",
        ),
        _NARROW,
    ),
    # (`ssize_t` and `ptrdiff_t` are `int64_t` on every 64-bit platform PyTorch supports.)
    **dict.fromkeys(("long", "long int", "signed long", "signed long int"), _PLATFORM),
    **dict.fromkeys(("long long", "long long int", "signed long long"), _LONG_LONG),
    **dict.fromkeys(
        (
            "unsigned long",
            "unsigned long int",
            "unsigned long long",
            "unsigned long long int",
            "uint64_t",
            "size_t",
        ),
        _UNSIGNED,
    ),
}
# The spellings that are `int64_t` itself on LP64: the fix changes only the definition.
INT64_ON_LP64 = frozenset({"long", "long int", "signed long", "signed long int"})


def _spelled(type_node) -> str:
    text = " ".join(type_node.text.decode("utf-8", "replace").split())
    return text[5:] if text.startswith("std::") else text


def _semantic_param(ctx, func, param, torch_type: str | None = None) -> None:
    """Semantic mode: a type spelled through an alias or typedef (`index_t`), resolved by
    libclang through the file and its headers to a platform-width integer. A type libclang
    could not resolve (a header not found: error recovery reads it as `int`) is not judged:
    the syntactic verdict stands, and the run's note counts it."""
    sem = ctx.semantic
    if sem is None or param.name_node is None:
        return
    from kernlint.semantic import UNRESOLVED, note_unjudged

    found = sem.param_integer(param.name_node.start_byte)
    if found is UNRESOLVED:
        note_unjudged(ctx, "parameter", param.node.start_byte)
        return
    if found is None:
        return
    spelled, replacement = found
    if torch_type is not None:
        ctx.report_node(
            param.node,
            f"`{func.name}` is registered with PyTorch's dispatcher and takes `{param.name}` "
            f"as `{spelled}`, an alias of a platform-width integer, but a schema `int` is "
            f"`{torch_type}`: use `{torch_type}`",
        )
        return
    ctx.report_node(
        param.node,
        f"FFI function `{func.name}` takes `{param.name}` as `{spelled}`, an alias of a "
        f"platform-width integer: use a fixed-width type (`{replacement}`)",
    )


def check(ctx) -> None:
    kinds = getattr(ctx.settings, "ffi_boundaries", None)
    if kinds is None:  # (unset: the TVM-FFI boundary, as `entry_points` finds it)
        from kernlint.cpp.ffi import entry_points

        found = [(func, TVM_FFI) for func in entry_points(ctx)]
    else:
        from kernlint.cpp.ffi import boundary_entry_points

        found = boundary_entry_points(ctx)
    safety = _Safety(ctx)
    for func, kind in found:
        if kind == TORCH_LIBRARY:
            _check_torch(ctx, func, safety)
        else:
            _check_tvm(ctx, func, safety)


class _Safety:
    """The file's `FixSafety`, built on first use."""

    __slots__ = ("ctx", "_safety")

    def __init__(self, ctx) -> None:
        self.ctx = ctx
        self._safety = None

    def get(self) -> FixSafety:
        if self._safety is None:
            self._safety = FixSafety(self.ctx)
        return self._safety


def _check_tvm(ctx, func, safety) -> None:
    params = ctx.facts.params_of(func.node)
    for param in params:
        if param.pointer_depth or param.is_reference or param.is_array:
            continue
        if param.type_node is None:
            continue
        replacement = REPLACEMENTS.get(_spelled(param.type_node))
        if replacement is None:
            _semantic_param(ctx, func, param)
            continue
        name = f"`{param.name}`" if param.name else f"#{param.index + 1}"
        spelled = " ".join(ctx.text(param.type_node).split())
        fix = _fix(safety.get(), func.node, param.index, param.type_node, replacement)
        ctx.report_node(
            param.node,
            f"FFI function `{func.name}` takes {name} as `{spelled}`: "
            f"use a fixed-width type (`{replacement}`)",
            fix,
        )
    ret = func.node.child_by_field_name("type")
    declarator = func.node.child_by_field_name("declarator")
    if ret is not None and declarator is not None and declarator.type == "function_declarator":
        replacement = REPLACEMENTS.get(_spelled(ret))
        if replacement is not None:
            ctx.report_node(
                ret,
                f"FFI function `{func.name}` returns `{' '.join(ctx.text(ret).split())}`: "
                f"use a fixed-width type (`{replacement}`)",
                _fix(safety.get(), func.node, None, ret, replacement),
            )


def _check_torch(ctx, func, safety) -> None:
    """A function registered with PyTorch's dispatcher: a schema `int` (and `SymInt`) is
    `int64_t` in C++, so every other integer type is reported (`bool` is not an integer)."""
    for param in ctx.facts.params_of(func.node):
        if param.pointer_depth or param.is_reference or param.is_array:
            continue
        if param.type_node is None:
            continue
        spelled = _spelled(param.type_node)
        why = TORCH_INT_TYPES.get(spelled)
        if why is None:
            _semantic_param(ctx, func, param, TORCH_INT64)
            continue
        name = f"`{param.name}`" if param.name else f"#{param.index + 1}"
        text = " ".join(ctx.text(param.type_node).split())
        ctx.report_node(
            param.node,
            f"`{func.name}` is registered with PyTorch's dispatcher and takes {name} as "
            f"`{text}`: {why.format(t=text)}: use `{TORCH_INT64}`",
            _torch_fix(safety, func.node, param.index, param.type_node),
        )
    ret = func.node.child_by_field_name("type")
    declarator = func.node.child_by_field_name("declarator")
    if ret is not None and declarator is not None and declarator.type == "function_declarator":
        why = TORCH_INT_TYPES.get(_spelled(ret))
        if why is not None:
            text = " ".join(ctx.text(ret).split())
            ctx.report_node(
                ret,
                f"`{func.name}` is registered with PyTorch's dispatcher and returns `{text}`: "
                f"{why.format(t=text)}: use `{TORCH_INT64}`",
                _torch_fix(safety, func.node, None, ret),
            )


def _torch_fix(safety, func_node, index, type_node) -> Fix | None:
    """`int64_t` for one type; a type other than `int64_t` on LP64 changes in every
    declaration of the function in the file (None where one cannot)."""
    s = safety.get()
    if not s.fixed_width_names_declared(TORCH_INT64):
        return None
    spelled = _spelled(type_node)
    if spelled in INT64_ON_LP64:
        edits = [Edit(type_node.start_byte, type_node.end_byte, TORCH_INT64)]
    else:
        edits = s.int_type_edits(func_node, index, spelled, TORCH_INT64, _spelled)
        if edits is None:
            return None
    return Fix(tuple(edits), "unsafe", f"Use `{TORCH_INT64}`")


def _fix(safety, func_node, index, type_node, replacement) -> Fix | None:
    """The fix for one type (parameter `index`, or None: the return type), or None where the
    fixed file might not compile: the fixed-width name would be undeclared, or a replacement
    that is another type (`long long` -> `int64_t`) cannot reach every declaration."""
    if not safety.fixed_width_names_declared(replacement):
        return None
    spelled = _spelled(type_node)
    if spelled in DIFFERENT_TYPE:
        edits = safety.int_type_edits(func_node, index, spelled, replacement, _spelled)
        if edits is None:
            return None
    else:
        edits = [Edit(type_node.start_byte, type_node.end_byte, replacement)]
    return Fix(tuple(edits), "unsafe", f"Use `{replacement}`")
