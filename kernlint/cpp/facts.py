"""Shared facts about one C++/CUDA file, computed once on first use and handed to every rule.

Everything here is derived from the tree-sitter tree of the *normalized* source (see
`normalize.py`); node byte offsets are offsets into the original file.
"""

from __future__ import annotations

from functools import cached_property

from ..record import record

TYPE_CHECKING = False  # (typing costs about 3 ms to import)

if TYPE_CHECKING:  # (imported for real when a file is normalized, not at start-up)
    from .normalize import Normalized

# Containers whose children are namespace-scope items.
_PREPROC_CONTAINERS = frozenset(
    {"preproc_if", "preproc_ifdef", "preproc_else", "preproc_elif", "preproc_elifdef"}
)
# Namespace-scope node types that are "items of code".
ITEM_TYPES = {
    "function_definition": "function",
    "template_declaration": "template",
    "declaration": "declaration",
    "struct_specifier": "struct",
    "class_specifier": "class",
    "union_specifier": "union",
    "enum_specifier": "enum",
    "alias_declaration": "type alias",
    "type_definition": "typedef",
    "concept_definition": "concept",
}


# The project abstractions' own implementation: rules that ask for the abstractions
# (`host::LaunchKernel`, `SGL_DEVICE`, `TensorMatcher`, ...) never fire inside it.
ABSTRACTION_DIRS = ("include/sgl_kernel/",)


def in_abstractions(path: str) -> bool:
    posix = "/" + path.replace("\\", "/").lstrip("/")
    return any(f"/{d}" in posix for d in ABSTRACTION_DIRS)


def name_node(node):
    """The name inside a qualified or templated name (`a::b<T>` -> `b`), or None."""
    while node is not None and node.type in ("qualified_identifier", "template_function"):
        node = node.child_by_field_name("name")
    return node


def simple_name(node) -> str:
    node = name_node(node)
    return node.text.decode("utf-8", "replace") if node is not None else ""


def calls_named(root, text: bytes, name: bytes, leaf_type: str | None = None) -> list:
    """The call expressions whose callee's simple name (`simple_name`) is `name`, in document
    order, found from the occurrences of `name` in `text` (the bytes the tree was parsed from)
    instead of visiting every call from Python. `leaf_type`: also require the name node's type
    (e.g. "identifier")."""
    from .parser import nodes_spelled

    out = []
    for node in nodes_spelled(root, name, text):
        call = _call_of_name(node, leaf_type)
        if call is not None:
            out.append(call)
    return out


def _call_of_name(node, leaf_type: str | None):
    """The call whose callee's `name_node` is `node` (or a node of the same span above it), or
    None: the inverse of `name_node`, which descends through the `name` fields of qualified
    identifiers and template functions."""
    start, end = node.start_byte, node.end_byte
    parent = node.parent
    while parent is not None and parent.start_byte == start and parent.end_byte == end:
        node, parent = parent, parent.parent
    if leaf_type is not None and node.type != leaf_type:
        return None
    while parent is not None and parent.type in ("qualified_identifier", "template_function"):
        field = parent.child_by_field_name("name")
        if field is None or field.id != node.id:
            return None
        node, parent = parent, parent.parent
    if parent is None or parent.type != "call_expression":
        return None
    fn = parent.child_by_field_name("function")
    return parent if fn is not None and fn.id == node.id else None


def in_document_order(nodes: list) -> list:
    """Document order, an outer node before the nodes it contains (a tree walk's pre-order)."""
    nodes.sort(key=lambda n: (n.start_byte, -n.end_byte))
    return nodes


def _function_definitions(root, text: bytes) -> list:
    """Every function_definition under `root`, in document order, from the `{` of its body
    (`text`: the bytes the tree was parsed from). A body is a compound statement, or a
    function-try-block's; a definition without a body is `= default` or `= delete`."""
    out = []
    find = text.find
    lookup = root.descendant_for_byte_range
    i = find(b"{")
    while i >= 0:
        node = lookup(i, i + 1)
        if node is not None and node.type == "{":
            block = node.parent
            if block is not None and block.type == "compound_statement":
                owner = block.parent
                if owner is not None:
                    kind = owner.type
                    if kind == "function_definition":
                        out.append(owner)
                    elif kind == "try_statement":
                        owner = owner.parent
                        if owner is not None and owner.type == "function_definition":
                            out.append(owner)
        i = find(b"{", i + 1)
    for word in (b"default", b"delete"):
        i = find(word)
        while i >= 0:
            node = lookup(i, i + len(word))
            clause = node.parent if node is not None and node.type == word.decode() else None
            if clause is not None and clause.type in _METHOD_CLAUSES:
                owner = clause.parent
                if owner is not None and owner.type == "function_definition":
                    out.append(owner)
            i = find(word, i + 1)
    return in_document_order(out)


_METHOD_CLAUSES = frozenset(("default_method_clause", "delete_method_clause"))


def _parents_of_token(root, text: bytes, token: bytes, node_type: str) -> list:
    """The nodes of `node_type` that hold an occurrence of `token` (e.g. `asm` in `asm(...)`
    or `__asm__ volatile(...)`, `<<<` in a launch's `<<<...>>>`) as a child, in document order."""
    out = []
    seen = set()
    find = text.find
    lookup = root.descendant_for_byte_range
    size = len(token)
    i = find(token)
    while i >= 0:
        node = lookup(i, i + size)
        parent = node.parent if node is not None else None
        if parent is not None and parent.type == node_type and parent.id not in seen:
            seen.add(parent.id)
            out.append(parent)
        i = find(token, i + 1)
    return in_document_order(out)


@record(frozen=True)
class Item:
    node: object  # tree-sitter node
    kind: str
    namespace: tuple[str, ...]  # enclosing named namespaces, outermost first ("" = anonymous)
    name: str


def node_name(node) -> str:
    """Best-effort name of a declaration-like node (for messages), on one short line."""
    name = " ".join(_node_name(node).split())
    return name if len(name) <= 60 else name[:57] + "..."


def _node_name(node) -> str:
    t = node.type
    if t == "template_declaration":
        for child in node.named_children:
            if child.type in ITEM_TYPES:
                return _node_name(child)
        return ""
    if t in ("struct_specifier", "class_specifier", "union_specifier", "enum_specifier"):
        name = node.child_by_field_name("name")
        return name.text.decode("utf-8", "replace") if name is not None else ""
    if t in ("alias_declaration", "type_definition", "concept_definition"):
        name = node.child_by_field_name("name") or node.child_by_field_name("declarator")
        return name.text.decode("utf-8", "replace") if name is not None else ""
    declarator = node.child_by_field_name("declarator")
    while declarator is not None:
        if (
            declarator.type == "function_declarator"
            and declarator.child_by_field_name("declarator") is not None
            and declarator.child_by_field_name("declarator").type == ("parenthesized_declarator")
        ):
            declarator = declarator.child_by_field_name("declarator")
        if declarator.type in (
            "identifier",
            "field_identifier",
            "qualified_identifier",
            "operator_name",
            "destructor_name",
            "type_identifier",
        ):
            return declarator.text.decode("utf-8", "replace")
        inner = declarator.child_by_field_name("declarator")
        if inner is None:
            break
        declarator = inner
    return ""


def namespace_components(node) -> tuple[str, ...]:
    """`namespace a::b {` -> ("a", "b"); anonymous -> ("",)."""
    name = node.child_by_field_name("name")
    if name is None:
        for child in node.named_children:
            if child.type in ("namespace_identifier", "nested_namespace_specifier", "identifier"):
                name = child
                break
    if name is None:
        return ("",)
    text = name.text.decode("utf-8", "replace")
    return tuple(part.strip() for part in text.split("::") if part.strip()) or ("",)


@record(frozen=True)
class Function:
    node: object  # function_definition
    name: str
    qualifiers: frozenset[str]  # subset of {"global", "device", "host"}

    @property
    def is_kernel(self) -> bool:
        return "global" in self.qualifiers


class CppFacts:
    def __init__(self, tree, normalized: Normalized, data: bytes) -> None:
        self.tree = tree
        self.root = tree.root_node
        self.normalized = normalized
        self.data = data
        self._params: dict[int, list] = {}

    def params_of(self, func_node) -> list:
        """`params.parameters(func_node)`, computed once per function (several rules read the
        parameters of the same kernels)."""
        found = self._params.get(func_node.id)
        if found is None:
            from .params import parameters

            found = self._params[func_node.id] = parameters(func_node)
        return found

    # Node types the rules ask for. The first three are found from a token each node of the
    # type holds (a function body's `{`, `asm`, `<<<`): every occurrence of the token's bytes
    # is looked up in the tree (`descendant_for_byte_range`) and kept when its parent is such a
    # node. That visits a few thousand tokens from Python instead of every node of the tree
    # (about 1.2 million over the SGLang JIT files: 0.24 s against 0.05 s, identical lists).
    # The others come from one walk of the tree, or of the `within` node only.
    INDEXED_TYPES = (
        "function_definition",
        "gnu_asm_expression",
        "kernel_call_syntax",
        "call_expression",
        "if_statement",
    )
    _WALKED_TYPES = ("call_expression", "if_statement")

    @cached_property
    def _found(self) -> dict[str, list]:
        return {}

    @cached_property
    def _walked(self) -> dict[str, list]:
        from .parser import nodes_of_types

        out: dict[str, list] = {t: [] for t in self._WALKED_TYPES}
        for node in nodes_of_types(self.root, self._WALKED_TYPES):
            out[node.type].append(node)
        return out

    def _of_type(self, node_type: str) -> list:
        found = self._found.get(node_type)
        if found is None:
            if node_type == "function_definition":
                found = _function_definitions(self.root, self.normalized.data)
            elif node_type == "gnu_asm_expression":
                found = _parents_of_token(self.root, self.normalized.data, b"asm", node_type)
            elif node_type == "kernel_call_syntax":
                found = _parents_of_token(self.root, self.normalized.data, b"<<<", node_type)
            else:
                found = self._walked[node_type]
            self._found[node_type] = found
        return found

    def nodes(self, *types: str, within=None) -> list:
        """Nodes of indexed types in document order (an outer node before the nodes it
        contains), optionally only `within` and its descendants."""
        if within is not None and "_walked" not in self.__dict__:
            walked = tuple(t for t in types if t in self._WALKED_TYPES)
            if walked:  # walk that subtree only, not the whole tree
                from .parser import nodes_of_types

                inside = nodes_of_types(within, walked)
                rest = [t for t in types if t not in self._WALKED_TYPES]
                if not rest:
                    return inside
                return in_document_order(inside + self.nodes(*rest, within=within))
        if len(types) == 1:
            found = self._of_type(types[0])
        else:
            found = in_document_order([n for t in types for n in self._of_type(t)])
        if within is None:
            return found
        import bisect

        starts = [n.start_byte for n in found]
        lo = bisect.bisect_left(starts, within.start_byte)
        hi = bisect.bisect_right(starts, within.end_byte)
        return [n for n in found[lo:hi] if n.end_byte <= within.end_byte]

    @cached_property
    def error_ranges(self) -> list[tuple[int, int]]:
        from .parser import error_nodes

        return [(n.start_byte, n.end_byte) for n in error_nodes(self.root)]

    def inside_error(self, start: int, end: int) -> bool:
        """Is [start, end) within an ERROR node (text the parser could not understand)?"""
        for s, e in self.error_ranges:
            if s <= start and end <= e:
                return True
            if s > start:
                break
        return False

    @cached_property
    def items(self) -> list[Item]:
        """Namespace-scope items of code, with their enclosing namespaces.

        A container (file, namespace body, preprocessor block) that has an ERROR child is not
        trusted: its items are left out, since the parse may have cut a namespace open.
        """
        out: list[Item] = []

        def walk(container, namespace):
            children = container.named_children
            if any(c.type == "ERROR" for c in children):
                return
            for child in children:
                t = child.type
                if t == "namespace_definition":
                    body = child.child_by_field_name("body")
                    if body is not None and not body.has_error:
                        walk(body, namespace + namespace_components(child))
                elif t in _PREPROC_CONTAINERS:
                    walk(child, namespace)
                elif t == "linkage_specification":
                    body = child.child_by_field_name("body")
                    if body is not None and body.type == "declaration_list":
                        walk(body, namespace)
                    elif body is not None and body.type in ITEM_TYPES:
                        out.append(Item(child, ITEM_TYPES[body.type], namespace, node_name(body)))
                elif t in ITEM_TYPES and not child.has_error:
                    out.append(Item(child, ITEM_TYPES[t], namespace, node_name(child)))

        walk(self.root, ())
        return out

    @cached_property
    def functions(self) -> list[Function]:
        """Every function definition (ERROR-free), with its CUDA qualifiers.

        Qualifiers come from the tree (`__global__`, `__device__`, `__host__`) and from attribute
        macros that normalization blanked in the function's head (e.g. `Q_KERNEL`).
        """
        out = []
        for node in self.nodes("function_definition"):
            if node.has_error or self.inside_error(node.start_byte, node.end_byte):
                continue
            quals = {
                {"__global__": "global", "__device__": "device", "__host__": "host"}[c.type]
                for c in node.children
                if c.type in ("__global__", "__device__", "__host__")
            }
            # The head starts where the previous sibling ends: blanked macros sit before the node.
            prev = node.prev_sibling
            head_start = prev.end_byte if prev is not None else node.start_byte
            declarator = node.child_by_field_name("declarator")
            head_end = declarator.start_byte if declarator is not None else node.start_byte
            quals |= self.normalized.kinds_between(head_start, head_end)
            out.append(Function(node, node_name(node), frozenset(quals)))
        return out

    @cached_property
    def kernels(self) -> list[Function]:
        return [f for f in self.functions if f.is_kernel]

    @cached_property
    def launch_sites(self) -> list:
        """`kernel<<<...>>>(...)` call expressions outside ERROR regions."""
        return [
            n.parent
            for n in self.nodes("kernel_call_syntax")
            if n.parent is not None
            and n.parent.type == "call_expression"
            and not self.inside_error(n.start_byte, n.end_byte)
        ]

    @cached_property
    def functions_by_name(self) -> dict[str, list]:
        """Function definitions by simple name (`A::run` -> `run`), for callee lookups."""
        out: dict[str, list] = {}
        for f in self.functions:
            simple = f.name.split("::")[-1].strip()
            if simple:
                out.setdefault(simple, []).append(f.node)
        return out
