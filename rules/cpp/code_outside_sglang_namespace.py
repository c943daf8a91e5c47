"""Reports JIT code that is not inside `namespace sglang`.

## What it does
In JIT sources, reports each namespace-scope item (function, kernel, template, type, variable,
alias, typedef) not enclosed, at any depth, in `namespace sglang` (`namespace sglang::x {`
counts), on its first line.

Not reported, by design:
- preprocessor lines, includes, comments, `using` declarations and directives, `static_assert`,
  macro invocations (FFI export macros must stay global);
- items inside a third-party namespace the code extends (`std`, `cute`, `cutlass`, `cub`,
  `thrust`, `tvm`, `at`, `c10`, `torch`, and `third-party-namespaces`);
- items that must be global: CUDA runtime or driver API names (`cuda*`, `cu[A-Z]*`, `CU[A-Z_]*`,
  as a ROCm shim defines them), names starting with `__`, `extern "C"` items;
- a namespace named by a macro the file does not `#define`;
- namespace bodies the parser could not understand;
- trees whose `include/sgl_kernel/utils.h` does not open `namespace sglang` (older layouts;
  unless `namespaces` names others): the run warns once;
- torch extensions, marked verbatim copies and generated files.

Vendored code without a copy marker is reported: add a `// Copied from URL` leading comment,
or list it in `per-file-ignores`.

## Why is this bad?
SGLang's JIT kernel guide puts all JIT device and host code inside `namespace sglang`. JIT
modules share a process with other kernel libraries; a global `rms_norm` kernel or `Params`
struct collides with theirs (ODR violations, wrong symbol picked at load time).

Configure: `namespaces` (`[]` turns the rule off), `third-party-namespaces` (docs/presets.md).

## Example
```cpp
__global__ void scale_kernel(float* __restrict__ out, float s) { out[threadIdx.x] *= s; }
```

## Use instead
```cpp
namespace sglang {
__global__ void scale_kernel(float* __restrict__ out, float s) { out[threadIdx.x] *= s; }
}  // namespace sglang
```

## Fix safety
No automatic fix: wrapping code in a namespace changes its qualified name, which callers and FFI
exports may depend on.
"""

from __future__ import annotations

import os
import re

from kernlint.cpp.facts import ITEM_TYPES
from kernlint.jitscope import LIBRARY_NAMESPACES, namespace_convention
from kernlint.lazyre import lazy_compile
from kernlint.model import Rule

RULE = Rule(
    code="CU002",
    name="code-outside-sglang-namespace",
    language="cpp",
    summary="JIT code not enclosed in `namespace sglang`",
    scope="jit",
)

# Top-level namespaces of libraries whose templates JIT code may specialize or extend.
THIRD_PARTY_NAMESPACES = LIBRARY_NAMESPACES


# Names of the CUDA runtime/driver API: global shims for them (HIP builds) must stay global.
_CUDA_API_NAME = lazy_compile(r"^(cuda|CUDA|cu[A-Z]|CU[A-Z_])")
# A namespace spelled like a macro (`namespace VSA_NAMESPACE {`).
_MACRO_LIKE = lazy_compile(r"[A-Z][A-Z0-9_]*\Z")
# `NAME(args) { ... }` at namespace scope with no return type, NAME in capitals: a macro
# invocation with a body (PYBIND11_MODULE, TORCH_LIBRARY, TEST), not a function.
_MACRO_CALL_NAME = lazy_compile(r"[A-Z][A-Z0-9_]*\Z")


def house_namespaces(settings) -> tuple[tuple[tuple[str, ...], ...], frozenset[str]] | None:
    """(the namespaces JIT code must live in, each as its components; the third-party
    namespaces allowed) from the `namespaces` and `third-party-namespaces` settings, or None
    when neither is set (SGLang's: `sglang`, `THIRD_PARTY_NAMESPACES`)."""
    namespaces = getattr(settings, "namespaces", None)
    extra = getattr(settings, "third_party_namespaces", None)
    if namespaces is None and extra is None:
        return None
    own = tuple(
        tuple(n.lstrip(":").split("::")) for n in (["sglang"] if namespaces is None else namespaces)
    )
    allowed = THIRD_PARTY_NAMESPACES | {n.lstrip(":").split("::")[0] for n in extra or ()}
    return own, allowed


def check(ctx) -> None:
    house = house_namespaces(ctx.settings)
    in_force, _ = namespace_convention(
        ctx.source.abspath or os.path.abspath(ctx.source.path),
        getattr(ctx.settings, "namespaces", None),
    )
    if not in_force:
        return  # this tree's own JIT headers predate the convention (noted once per run)
    if house is not None:
        own, allowed = house
        if not own:
            return  # `namespaces = []`: no house namespace to ask for
        wanted = " or ".join(f"`namespace {'::'.join(ns)}`" for ns in own)
        advice = f"enclose it in `namespace {'::'.join(own[0])} {{ ... }}`"
    macros: dict[str, list[str] | None] = {}
    # (an `extern "C"` block holds the `extern` token: without one no item is walked up)
    linkage = b"extern" in ctx.normalized.data
    for item in ctx.facts.items:
        name = item.name or _declared_name(item.node, ctx)
        simple = name.split("::")[-1].lstrip("*&( ")
        if not item.namespace and _CUDA_API_NAME.match(simple):
            continue
        if simple.startswith("__"):
            continue  # reserved for the implementation: shims of CUDA intrinsics (`__dp4a`)
        if linkage and _c_linkage(item.node, ctx):
            continue  # a namespace does not change a C-linkage name
        if item.kind == "function" and _macro_call(item.node, simple):
            continue
        namespace = _expanded(item.namespace, ctx.data, macros)
        if namespace is None:
            continue  # a namespace named by a macro this file does not define
        # The outermost named namespace of each expansion (anonymous ones are transparent).
        outer = {next((p for p in ns if p), "") for ns in namespace}
        if house is None:
            if outer == {"sglang"} or outer <= THIRD_PARTY_NAMESPACES:
                continue
        elif outer <= allowed or all(_inside(ns, own) for ns in namespace):
            continue
        node = item.node
        what = f"{item.kind} `{name}`" if name else item.kind
        where = (
            f"namespace `{'::'.join(p or '(anonymous)' for p in item.namespace)}`"
            if item.namespace
            else "the global namespace"
        )
        spelled = [ns for ns in namespace if tuple(ns) != tuple(item.namespace)]
        if spelled:
            where += " (" + " or ".join(f"`{'::'.join(ns)}`" for ns in spelled) + ")"
        # Report on the item's first line only.
        line_end = ctx.data.find(b"\n", node.start_byte)
        end = node.end_byte if line_end < 0 else min(node.end_byte, line_end)
        if end > node.start_byte and ctx.data[end - 1 : end] == b"\r":
            end -= 1
        if house is None:
            ctx.report(
                node.start_byte,
                end,
                f"{what} is in {where}, not inside `namespace sglang`: enclose it in "
                "`namespace sglang { ... }`",
            )
        else:
            ctx.report(node.start_byte, end, f"{what} is in {where}, not inside {wanted}: {advice}")


def _inside(namespace: tuple[str, ...], own) -> bool:
    """Does the namespace (anonymous components are transparent) lie inside one of `own`?"""
    named = tuple(p for p in namespace if p)
    return any(named[: len(ns)] == ns for ns in own)


def _expanded(namespace, data: bytes, macros) -> list[tuple[str, ...]] | None:
    """The namespaces `namespace` may stand for once the macro-named components this file
    `#define`s are expanded (one per definition), or None when a component is named like a
    macro this file does not define (it may expand to `sglang`)."""
    out: list[tuple[str, ...]] = [()]
    for part in namespace:
        if part and _MACRO_LIKE.match(part):
            if part not in macros:
                macros[part] = _definitions(data, part)
            values = macros[part]
            if values is None:
                return None
            out = [ns + tuple(v.split("::")) for ns in out for v in values]
        else:
            out = [ns + (part,) for ns in out]
    return out


def _definitions(data: bytes, name: str) -> list[str] | None:
    pattern = re.compile(
        rb"^[ \t]*#[ \t]*define[ \t]+" + re.escape(name.encode()) + rb"[ \t]+"
        rb"((?:::)?[A-Za-z_]\w*(?:::[A-Za-z_]\w*)*)[ \t]*(?://[^\n]*|/\*[^\n]*)?\r?$",
        re.M,
    )
    found = []
    for m in pattern.finditer(data):
        value = m.group(1).decode().lstrip(":")
        if value not in found:
            found.append(value)
    return found or None


def _c_linkage(node, ctx) -> bool:
    """Is the item (or a block around it) under `extern "C"`? (The parents come from the facts:
    `node.parent` goes down from the root each time, the square of the depth of an item
    thousands of `#if` blocks deep.)"""
    parent_of = ctx.facts.parent
    while node is not None and node.type not in ("namespace_definition", "translation_unit"):
        if node.type == "linkage_specification":
            value = node.child_by_field_name("value")
            if value is not None and ctx.text(value).strip() == '"C"':
                return True
        node = parent_of(node)
    return False


def _macro_call(node, simple: str) -> bool:
    return node.child_by_field_name("type") is None and _MACRO_CALL_NAME.match(simple) is not None


_WRAPPERS = frozenset(
    {
        "pointer_declarator",
        "reference_declarator",
        "function_declarator",
        "array_declarator",
        "init_declarator",
        "attributed_declarator",
        "parenthesized_declarator",
    }
)
_NAMES = frozenset(
    {
        "identifier",
        "qualified_identifier",
        "template_function",
        "field_identifier",
        "operator_name",
        "destructor_name",
        "type_identifier",
        "template_type",
    }
)


def _declared_name(node, ctx) -> str:
    """The declared name when the shared one is empty (a function template specialization
    `to_float<half>`, a reference `auto& x = ...`), from the declarator chain; "" if none."""
    while node is not None and node.type in ("template_declaration", "linkage_specification"):
        node = next((c for c in node.named_children if c.type in ITEM_TYPES), None)
    if node is None:
        return ""
    decl = node.child_by_field_name("declarator") or node.child_by_field_name("name")
    for _ in range(32):  # (declarators nest a few levels; never loop on a strange tree)
        if decl is None or decl.type in _NAMES:
            break
        inner = decl.child_by_field_name("declarator")
        if inner is None:
            inner = next((c for c in decl.named_children if c.type in _NAMES | _WRAPPERS), None)
        decl = inner
    if decl is None or decl.type not in _NAMES:
        return ""
    name = " ".join(ctx.text(decl).split())
    return name if len(name) <= 60 else name[:57] + "..."
