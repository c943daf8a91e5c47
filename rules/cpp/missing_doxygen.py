"""Reports exported C++ entities of a JIT module without a Doxygen comment.

## What it does
Reports, in JIT sources, an exported entity with no Doxygen comment (`///`, `//!`, `/** ... */`
or `/*! ... */`) directly above it (only whitespace and macro words between; in a run of
comments one Doxygen comment is enough):
- an FFI entry point: a host function with a `tvm::ffi::TensorView` parameter that no other
  function of the file calls and that takes no stream, a function exported with
  `TVM_FFI_DLL_EXPORT_TYPED_FUNC`, or a `load_jit(..., cuda_wrappers=[...])` target among the
  checked files (for a member function, a comment above its class counts too);
- a public function or class template at namespace scope in a JIT `include/` header.

Not reported, by design:
- in headers: templates in `detail`, `details`, `impl`, `internal` or anonymous namespaces or
  under an `impl/` directory, names starting with `_`, `static` functions, specializations,
  declarations without a body, deduction guides, alias templates, concepts, variables and
  non-template functions;
- out-of-line member definitions, and code the parser could not understand.

## Why is this bad?
SGLang's JIT kernel guide: "Document exported entities with `///` or `/** ... */` blocks using
`\\brief`, `\\param`, `\\tparam`, `\\return`". clangd renders Doxygen comments on hover, so a
documented launcher or header template explains its tensors' shapes, dtypes and template
parameters where it is used.

## Example
```cuda
namespace sglang {
// Scale `src` into `dst`.
void scale(tvm::ffi::TensorView dst, tvm::ffi::TensorView src) {}
}  // namespace sglang
```

## Use instead
```cuda
namespace sglang {
/**
 * \\brief Scale `src` into `dst`.
 * \\param dst Output tensor, like `src`
 * \\param src Input tensor on CUDA
 */
void scale(tvm::ffi::TensorView dst, tvm::ffi::TensorView src) {}
}  // namespace sglang
```

## Fix safety
No automatic fix: the comment's content is the author's to write.
"""

from __future__ import annotations

from kernlint.cpp.ffi import entry_points
from kernlint.lazyre import lazy_compile
from kernlint.model import Rule

RULE = Rule(
    code="CU011",
    name="missing-doxygen",
    language="cpp",
    summary="exported C++ entity without a Doxygen comment",
    severity="info",
    status="preview",
    scope="jit",
    # No byte triggers: a `cuda_wrappers` target or a header template can be in any file.
    # `check` filters by path and bytes itself and only then asks for the tree.
    needs_tree=False,
)

PRIVATE_NAMESPACES = frozenset({"detail", "details", "impl", "internal", ""})
_INCLUDE = lazy_compile(r"(?:^|/)include/")
_IMPL_DIR = lazy_compile(r"(?:^|/)impl/")
_WS = b" \t\r\n\f\v"
_MACRO_WORDS = lazy_compile(rb"[ \t]*(?:[A-Za-z_]\w*[ \t]*)*")


def check(ctx) -> None:
    path = (ctx.source.abspath or ctx.source.path).replace("\\", "/")
    seen: set[int] = set()
    data = ctx.data
    header = bool(_INCLUDE.search(path))
    for func in () if header else entry_points(ctx):
        # (in a header, a function taking tensors is the header's API, used by other files:
        # its templates are judged below)
        if "::" in func.name:
            continue  # (an out-of-line member definition: the class declares and documents it)
        if not _documented(data, _outer(func.node)) and not _class_documented(data, func.node):
            _report(ctx, func.node, func.name, "FFI entry point", seen)
    if header and not _IMPL_DIR.search(path.split("/include/", 1)[-1]):
        for item in ctx.facts.items:
            if item.kind != "template" or item.node.id in seen:
                continue
            if any(part in PRIVATE_NAMESPACES for part in item.namespace):
                continue
            inner = _templated(item.node)
            if inner is None or not _public_primary(inner, item.name):
                continue
            if not _documented(data, item.node):
                _report(ctx, inner, item.name, "public template", seen)


def _report(ctx, node, name: str, what: str, seen: set[int]) -> None:
    seen.add(_outer(node).id)
    target = _name_node(node) or node
    ctx.report_node(
        target,
        f"{what} `{name}` has no Doxygen comment: document it with `///` or `/** ... */` "
        "(`\\brief`, `\\param`, `\\tparam`)",
    )


def _outer(node):
    """The node a comment stands above: the `template <...>` declaration around `node`, if
    any (templates of templates nest)."""
    parent = node.parent
    while parent is not None and parent.type == "template_declaration":
        node, parent = parent, parent.parent
    return node


def _templated(template):
    """The function or class a template declaration declares (nested templates followed), or
    None for alias templates, concepts and variables."""
    node = template
    while node is not None and node.type == "template_declaration":
        node = next(
            (
                c
                for c in node.named_children
                if c.type
                in (
                    "template_declaration",
                    "function_definition",
                    "declaration",
                    "struct_specifier",
                    "class_specifier",
                )
            ),
            None,
        )
    if node is None:
        return None
    if node.type == "declaration":
        return None  # (a declaration without a body, or a deduction guide)
    return node


def _public_primary(node, name: str) -> bool:
    bare = name.split("<")[0]
    if not bare or bare.startswith("_") or "::" in bare:
        return False  # (internal, or an out-of-line member definition `A<T>::f`)
    if node.type in ("struct_specifier", "class_specifier"):
        name_node = node.child_by_field_name("name")
        if name_node is None or name_node.type == "template_type":
            return False  # (a partial specialization)
        if node.child_by_field_name("body") is None:
            return False  # (a forward declaration)
    if node.type == "function_definition" and any(
        c.type == "storage_class_specifier" and c.text == b"static" for c in node.children
    ):
        return False  # (internal linkage: not exported)
    template = node.parent
    params = template.child_by_field_name("parameters") if template is not None else None
    if params is not None and params.named_child_count == 0:
        return False  # (`template <>`: an explicit specialization)
    return True


def _name_node(node):
    if node.type in ("struct_specifier", "class_specifier"):
        return node.child_by_field_name("name")
    declarator = node.child_by_field_name("declarator")
    while declarator is not None and declarator.type not in (
        "identifier",
        "field_identifier",
        "qualified_identifier",
        "destructor_name",
        "operator_name",
    ):
        declarator = declarator.child_by_field_name("declarator")
    return declarator


def _class_documented(data: bytes, func_node) -> bool:
    parent = func_node.parent
    if parent is None or parent.type != "field_declaration_list":
        return False
    cls = parent.parent
    return cls is not None and _documented(data, _outer(cls))


def _documented(data: bytes, node) -> bool:
    """Is there a Doxygen comment above `node`, with only whitespace (and macro words on the
    node's line) between?"""
    start = node.start_byte
    line_start = data.rfind(b"\n", 0, start) + 1
    if _MACRO_WORDS.fullmatch(data, line_start, start) is not None:
        start = line_start
    i = start
    while True:
        while i > 0 and data[i - 1] in _WS:
            i -= 1
        if i >= 2 and data[i - 2 : i] == b"*/":
            open_ = data.rfind(b"/*", 0, i - 2)
            if open_ < 0:
                return False
            if data[open_ : open_ + 3] in (b"/**", b"/*!") and data[open_ : open_ + 4] != b"/**/":
                return True
            i = open_
            continue
        line_start = data.rfind(b"\n", 0, i) + 1
        line = data[line_start:i].lstrip(b" \t")
        if not line.startswith(b"//"):
            return False
        if line.startswith((b"///", b"//!")) and not line.startswith(b"////"):
            return True
        i = line_start
