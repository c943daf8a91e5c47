"""Reports platform-width integer types at the FFI boundary of a JIT module.

## What it does
Finds the FFI boundary of a JIT module: host functions with a `tvm::ffi::TensorView` parameter
that no other function of the file calls and that take no stream, functions exported with
`TVM_FFI_DLL_EXPORT_TYPED_FUNC`, and targets of a Python `load_jit(..., cuda_wrappers=[...])`
among the checked files. In those it reports each by-value integer parameter and return type
spelled with a platform-width type (`int`, `unsigned`, `long`, `long long`, `short`, `ssize_t`,
`ptrdiff_t`, ...), naming the fixed-width type of the same width and signedness on LP64.

Not reported, by design: fixed-width types, `bool`, `char`, floating types, `size_t` (the guide
allows it), `intptr_t`/`uintptr_t`; kernels, device functions and helpers; pointer and reference
parameters; functions returning a pointer or reference. Aliases (`using index_t = int;`) are
seen only with `--semantic` (without a fix).

## Why is this bad?
The TVM FFI converts Python integers to fixed-width types, while the width of `long` differs
between platforms (Windows, Linux): the two sides can disagree on an argument's width. SGLang's
JIT kernel guide asks for `int32_t`, `int64_t`, `uint32_t` (or `size_t`) at the boundary.

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
The fix is unsafe: it can change the exported function's ABI, and callers in other files must
follow. For `long long` it changes every declaration of the function in the file, and is not
offered where one spells another type or the function's name is used other than in calls,
arguments and `auto` variables. None is offered where the fixed-width name may be undeclared (no
`<cstdint>`-style, TVM FFI or `sgl_kernel` include, and no use of it).
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


def _spelled(type_node) -> str:
    text = " ".join(type_node.text.decode("utf-8", "replace").split())
    return text[5:] if text.startswith("std::") else text


def _semantic_param(ctx, func, param) -> None:
    """Semantic mode: a type spelled through an alias or typedef (`index_t`), resolved by
    libclang through the file and its headers to a platform-width integer. A type libclang
    could not resolve (a header not found: error recovery reads it as `int`) is not judged:
    the syntactic verdict stands, and the run's note counts it."""
    from kernlint.semantic import UNRESOLVED, note_unjudged

    sem = ctx.semantic
    if sem is None or param.name_node is None:
        return
    found = sem.param_integer(param.name_node.start_byte)
    if found is UNRESOLVED:
        note_unjudged(ctx, "parameter", param.node.start_byte)
        return
    if found is None:
        return
    spelled, replacement = found
    ctx.report_node(
        param.node,
        f"FFI function `{func.name}` takes `{param.name}` as `{spelled}`, an alias of a "
        f"platform-width integer: use a fixed-width type (`{replacement}`)",
    )


def check(ctx) -> None:
    from kernlint.cpp.ffi import entry_points

    safety = None
    for func in entry_points(ctx):
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
            if safety is None:
                safety = FixSafety(ctx)
            fix = _fix(safety, func.node, param.index, param.type_node, replacement)
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
                if safety is None:
                    safety = FixSafety(ctx)
                ctx.report_node(
                    ret,
                    f"FFI function `{func.name}` returns `{' '.join(ctx.text(ret).split())}`: "
                    f"use a fixed-width type (`{replacement}`)",
                    _fix(safety, func.node, None, ret, replacement),
                )


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
