"""Parameters of C++/CUDA function definitions, read from the tree-sitter tree."""

from __future__ import annotations

from ..record import record

RESTRICT_WORDS = frozenset({"__restrict__", "__restrict", "restrict"})
_POINTER_QUALIFIERS = frozenset({"type_qualifier", "ms_pointer_modifier"})


@record(frozen=True)
class Param:
    node: object  # parameter_declaration
    index: int  # position among the function's parameters (variadic packs excluded)
    name: str  # "" when unnamed
    name_node: object | None
    type_node: object | None
    type_text: str  # the spelled type, without the declarator (e.g. `tvm::ffi::TensorView`)
    declarator: object | None
    pointer_depth: int  # 0 = not a pointer, 1 = `T*`, 2 = `T**`
    is_reference: bool
    restrict: bool  # the parameter's own pointer carries `__restrict__`
    own_pointer: object | None  # the pointer_declarator whose `*` makes the parameter a pointer
    pointee_const: bool  # `const T*` / `T const*`
    is_array: bool  # `T x[]` (a pointer in a parameter list)


def function_declarator(func_node):
    """The `function_declarator` of a function definition (through pointer/reference wrappers)."""
    decl = func_node.child_by_field_name("declarator")
    while decl is not None and decl.type != "function_declarator":
        decl = decl.child_by_field_name("declarator")
    return decl


def parameters(func_node) -> list[Param]:
    decl = function_declarator(func_node)
    if decl is None:
        return []
    plist = decl.child_by_field_name("parameters")
    if plist is None:
        return []
    out = []
    index = 0
    for node in plist.named_children:
        if node.type not in ("parameter_declaration", "optional_parameter_declaration"):
            if node.type == "variadic_parameter_declaration":
                index += 1
            continue
        out.append(_param(node, index))
        index += 1
    return out


def _param(node, index: int) -> Param:
    type_node = node.child_by_field_name("type")
    own_const = False
    for c in node.children:
        if c.type == "type_qualifier" and c is not type_node and c.text == b"const":
            own_const = True
            break
    declarator = node.child_by_field_name("declarator")
    depth = 0
    restrict = False
    is_reference = False
    is_array = False
    d = declarator
    innermost_pointer = None
    while d is not None:
        t = d.type
        if t == "pointer_declarator":
            depth += 1
            # `T** p`: p's own qualifiers sit on the pointer declarator next to the name.
            innermost_pointer = d
            restrict = False
            for c in d.children:
                if c.type in _POINTER_QUALIFIERS and c.text.decode() in RESTRICT_WORDS:
                    restrict = True
                    break
        elif t == "reference_declarator":
            is_reference = True
        elif t == "array_declarator":
            is_array = True
        elif t in ("function_declarator", "abstract_function_declarator"):
            depth = -1  # function pointer: not a data pointer
            break
        elif t in ("identifier", "field_identifier"):
            break
        nxt = d.child_by_field_name("declarator")
        if nxt is None:
            # reference_declarator / parenthesized_declarator keep the inner one unnamed
            named = [c for c in d.named_children if c.type != "type_qualifier"]
            nxt = named[-1] if named and named[-1] is not d else None
            if nxt is not None and nxt.type in ("number_literal",):
                nxt = None
        d = nxt
    name_node = d if d is not None and d.type in ("identifier", "field_identifier") else None
    if depth == -1:
        depth = 0
    # `T const* p`: a `const` after the type but before the `*` sits among the node's children.
    type_text = type_node.text.decode("utf-8", "replace") if type_node is not None else ""
    return Param(
        node=node,
        index=index,
        name=name_node.text.decode("utf-8", "replace") if name_node is not None else "",
        name_node=name_node,
        type_node=type_node,
        type_text=type_text,
        declarator=declarator,
        pointer_depth=depth,
        is_reference=is_reference,
        restrict=restrict,
        own_pointer=innermost_pointer,
        pointee_const=own_const,
        is_array=is_array,
    )
