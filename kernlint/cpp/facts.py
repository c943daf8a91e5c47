"""Shared facts about one C++/CUDA file, computed once on first use and handed to every rule.

Everything here is derived from the tree-sitter tree of the *normalized* source (see
`normalize.py`); node byte offsets are offsets into the original file.
"""

from __future__ import annotations

from functools import cached_property

from ..lazyre import lazy_compile
from ..record import record

TYPE_CHECKING = False  # (typing costs about 3 ms to import)

if TYPE_CHECKING:  # (imported for real when a file is normalized, not at start-up)
    from .normalize import Normalized

_WORD = lazy_compile(rb"[A-Za-z_]\w*")
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


def calls_named(root, text: bytes, name: bytes, leaf_type: str | None = None, seeker=None) -> list:
    """The call expressions whose callee's simple name (`simple_name`) is `name`, in document
    order, found from the occurrences of `name` in `text` (the bytes the tree was parsed from)
    instead of visiting every call from Python. `leaf_type`: also require the name node's type
    (e.g. "identifier"); `seeker`: a `parser.Seeker` of `root` to use."""
    from .parser import Seeker, nodes_spelled

    out = []
    seeker = seeker or Seeker(root)
    for node in nodes_spelled(root, name, text, seeker=seeker):
        call = _call_of_name(node, leaf_type, seeker.parent)
        if call is not None:
            out.append(call)
    return out


def _call_of_name(node, leaf_type: str | None, parent_of):
    """The call whose callee's `name_node` is `node` (or a node of the same span above it), or
    None: the inverse of `name_node`, which descends through the `name` fields of qualified
    identifiers and template functions. (`parent_of(node)`: `node.parent`.)"""
    start, end = node.start_byte, node.end_byte
    parent = parent_of(node)
    while parent is not None and parent.start_byte == start and parent.end_byte == end:
        node, parent = parent, parent_of(parent)
    if leaf_type is not None and node.type != leaf_type:
        return None
    while parent is not None and parent.type in ("qualified_identifier", "template_function"):
        field = parent.child_by_field_name("name")
        if field is None or field.id != node.id:
            return None
        node, parent = parent, parent_of(parent)
    if parent is None or parent.type != "call_expression":
        return None
    fn = parent.child_by_field_name("function")
    return parent if fn is not None and fn.id == node.id else None


def in_document_order(nodes: list) -> list:
    """Document order, an outer node before the nodes it contains (a tree walk's pre-order)."""
    nodes.sort(key=lambda n: (n.start_byte, -n.end_byte))
    return nodes


def _function_definitions(root, text: bytes, seeker=None) -> list:
    """Every function_definition under `root`, in document order, from the `{` of its body
    (`text`: the bytes the tree was parsed from; `seeker`: a `parser.Seeker` of `root`). A body
    is a compound statement, or a function-try-block's; a definition without a body is
    `= default` or `= delete`."""
    from .parser import Seeker

    out = []
    find = text.find
    seeker = seeker or Seeker(root)
    lookup, parent_of, above = seeker.smallest, seeker.parent, seeker.above
    body = ("{", "compound_statement")
    i = find(b"{")
    while i >= 0:
        owner = above(i, i + 1, body)  # (what holds the block the `{` opens)
        if owner is not None:
            kind = owner.type
            if kind == "function_definition":
                out.append(owner)
            elif kind == "try_statement":
                owner = parent_of(owner)
                if owner is not None and owner.type == "function_definition":
                    out.append(owner)
        i = find(b"{", i + 1)
    for word in (b"default", b"delete"):
        i = find(word)
        while i >= 0:
            node = lookup(i, i + len(word))
            clause = parent_of(node) if node is not None and node.type == word.decode() else None
            if clause is not None and clause.type in _METHOD_CLAUSES:
                owner = parent_of(clause)
                if owner is not None and owner.type == "function_definition":
                    out.append(owner)
            i = find(word, i + 1)
    return in_document_order(out)


_METHOD_CLAUSES = frozenset(("default_method_clause", "delete_method_clause"))


def _parents_of_token(root, text: bytes, token: bytes, node_type: str, seeker=None) -> list:
    """The nodes of `node_type` that hold an occurrence of `token` (e.g. `asm` in `asm(...)`
    or `__asm__ volatile(...)`, `<<<` in a launch's `<<<...>>>`) as a child, in document order
    (`seeker`: a `parser.Seeker` of `root`)."""
    from .parser import Seeker

    out = []
    seen = set()
    find = text.find
    seeker = seeker or Seeker(root)
    lookup = seeker.smallest
    size = len(token)
    i = find(token)
    while i >= 0:
        node = lookup(i, i + size)
        parent = seeker.parent(node) if node is not None else None
        if parent is not None and parent.type == node_type and parent.id not in seen:
            seen.add(parent.id)
            out.append(parent)
        i = find(token, i + 1)
    return in_document_order(out)


class _Scope:
    """Enclosing namespaces as a chain: `parts` (a namespace's own name components) inside
    `outer`; `names()` spells them out, outermost first, once."""

    __slots__ = ("outer", "parts", "_names")

    def __init__(self, outer: _Scope | None, parts: tuple[str, ...]) -> None:
        self.outer = outer
        self.parts = parts
        self._names: tuple[str, ...] | None = None

    def names(self) -> tuple[str, ...]:
        if self._names is None:
            chain = []
            scope: _Scope | None = self
            while scope is not None and scope._names is None:
                chain.append(scope.parts)
                scope = scope.outer
            prefix = scope._names if scope is not None else ()
            self._names = prefix + tuple(p for parts in reversed(chain) for p in parts)
        return self._names


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
    while t == "template_declaration":  # (a loop: templates of templates nest)
        node = next((c for c in node.named_children if c.type in ITEM_TYPES), None)
        if node is None:
            return ""
        t = node.type
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


class FunctionsByName(dict):
    """A dict of function definitions by simple name, with `callee_memo`: the verdicts the
    pointer analysis (`writes.Analyzer`) reaches about calls to these functions, shared by
    every analyzer given this dict."""

    __slots__ = ("callee_memo",)

    def __init__(self) -> None:
        super().__init__()
        self.callee_memo: dict = {}


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
        self._merged_cache: dict[tuple[str, ...], tuple[list, list[int]]] = {}

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
    # is looked up in the tree (a `parser.Seeker`) and kept when its parent is such a
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
    def seeker(self):
        """The file's `parser.Seeker`: node lookups by byte range, and parents (`parent`), in
        time linear in the file however deep its nesting."""
        from .parser import Seeker

        return Seeker(self.root)

    @cached_property
    def parent(self):
        """`parent(node)`: `node.parent` (known at once for a node the file's lookups passed: in
        a tree nested thousands deep, `node.parent` itself goes down from the root each time).
        The seeker's own method: the rules call it tens of thousands of times."""
        return self.seeker.parent

    def enclosing_function(self, node):
        """The innermost function_definition that contains `node` (what walking up its parents
        finds first), or None: from the functions' byte ranges, not a walk up the tree."""
        import bisect

        funcs, starts, outer = self._function_nesting
        i = bisect.bisect_right(starts, node.start_byte) - 1
        start, end = node.start_byte, node.end_byte
        while i >= 0:
            func = funcs[i]
            if func.start_byte <= start and end <= func.end_byte and func.id != node.id:
                return func
            i = outer[i]
        return None

    @cached_property
    def _function_nesting(self) -> tuple[list, list[int], list[int]]:
        """Every function_definition in document order, their starts, and for each the index of
        the innermost function containing it (-1: none)."""
        funcs = self.nodes("function_definition")
        outer: list[int] = []
        open_: list[int] = []  # indexes of the functions containing the current one
        for i, func in enumerate(funcs):
            while open_ and funcs[open_[-1]].end_byte <= func.start_byte:
                open_.pop()
            outer.append(open_[-1] if open_ else -1)
            open_.append(i)
        return funcs, [f.start_byte for f in funcs], outer

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
            text, seeker = self.normalized.data, self.seeker
            if node_type == "function_definition":
                found = _function_definitions(self.root, text, seeker)
            elif node_type == "gnu_asm_expression":
                found = _parents_of_token(self.root, text, b"asm", node_type, seeker)
            elif node_type == "kernel_call_syntax":
                found = _parents_of_token(self.root, text, b"<<<", node_type, seeker)
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
        if within is None:
            if len(types) == 1:
                return self._of_type(types[0])
            return list(self._merged(types)[0])
        import bisect

        # (The merged list and its start offsets are built once per combination of types: a
        # rule asks for the nodes within each function, and rebuilding them per call made the
        # work grow with the square of the file.)
        found, starts = self._merged(types)
        lo = bisect.bisect_left(starts, within.start_byte)
        hi = bisect.bisect_right(starts, within.end_byte)
        return [n for n in found[lo:hi] if n.end_byte <= within.end_byte]

    def _merged(self, types: tuple[str, ...]) -> tuple[list, list[int]]:
        """The nodes of `types` in document order, with their start offsets (cached)."""
        entry = self._merged_cache.get(types)
        if entry is None:
            if len(types) == 1:
                found = self._of_type(types[0])
            else:
                found = in_document_order([n for t in types for n in self._of_type(t)])
            entry = self._merged_cache[types] = (found, [n.start_byte for n in found])
        return entry

    # After this many `calls_named` lookups in one file, one index of every call's callee name
    # answers the rest: each lookup searches the whole file, and a rule that asks once per
    # function made the work grow with the square of the file. (A lookup costs about 1/250 of
    # the walk the index needs: 1.5 ms against 0.37 s in a 4 MB file.)
    _NAMED_LOOKUPS = 200

    def calls_named(self, name: bytes, leaf_type: str | None = None) -> list:
        """`calls_named(self.root, normalized bytes, name, leaf_type)`: the same calls, in the
        same order."""
        self._named_lookups = getattr(self, "_named_lookups", 0) + 1
        if (
            self._named_lookups <= self._NAMED_LOOKUPS and "_walked" not in self.__dict__
        ) or not _WORD.fullmatch(name):
            return calls_named(self.root, self.normalized.data, name, leaf_type, self.seeker)
        found = self._calls_by_name.get(name, ())
        return [call for nm, call in found if leaf_type is None or nm.type == leaf_type]

    @cached_property
    def _calls_by_name(self) -> dict[bytes, list]:
        """Callee name bytes -> [(name node, call)] in the order of the names in the file. The
        name node is `name_node(function)`, the node `calls_named` finds from the name's bytes
        (the inverse of `name_node`)."""
        out: dict[bytes, list] = {}
        for call in self.nodes("call_expression"):
            node = name_node(call.child_by_field_name("function"))
            if node is not None and node.start_byte < node.end_byte:
                out.setdefault(node.text, []).append((node, call))
        for found in out.values():
            found.sort(key=lambda pair: pair[0].start_byte)
        return out

    @cached_property
    def error_ranges(self) -> list[tuple[int, int]]:
        from .parser import error_nodes

        return [(n.start_byte, n.end_byte) for n in error_nodes(self.root)]

    @cached_property
    def _error_index(self) -> tuple[list[int], list[int]]:
        """The error ranges' starts, and the largest end among the ranges up to each."""
        starts, reach = [], []
        top = -1
        for s, e in self.error_ranges:
            top = max(top, e)
            starts.append(s)
            reach.append(top)
        return starts, reach

    def inside_error(self, start: int, end: int) -> bool:
        """Is [start, end) within an ERROR node (text the parser could not understand)? (Some
        range starting at or before `start` ends at or after `end`: a bisection, not a scan of
        the ranges, which grew with the square of a file full of errors.)"""
        if not self.error_ranges:
            return False
        import bisect

        starts, reach = self._error_index
        i = bisect.bisect_right(starts, start)
        return i > 0 and reach[i - 1] >= end

    @cached_property
    def items(self) -> list[Item]:
        """Namespace-scope items of code, with their enclosing namespaces.

        A container (file, namespace body, preprocessor block) that has an ERROR child is not
        trusted: its items are left out, since the parse may have cut a namespace open.
        """
        out: list[Item] = []
        # A walk with an explicit stack (namespaces and `#if` blocks nest thousands deep in
        # generated code): each entry is the children of a container still to be read, with
        # the position of the next one and the enclosing namespaces, in document order. (The
        # namespaces are a chain spelled out only for a namespace that holds an item.)
        stack: list[tuple[list, int, _Scope]] = []

        def enter(container, scope) -> None:
            children = container.named_children
            if not any(c.type == "ERROR" for c in children):
                stack.append((children, 0, scope))

        enter(self.root, _Scope(None, ()))
        while stack:
            children, i, scope = stack.pop()
            if i >= len(children):
                continue
            stack.append((children, i + 1, scope))
            child = children[i]
            t = child.type
            if t == "namespace_definition":
                body = child.child_by_field_name("body")
                if body is not None and not body.has_error:
                    enter(body, _Scope(scope, namespace_components(child)))
            elif t in _PREPROC_CONTAINERS:
                enter(child, scope)
            elif t == "linkage_specification":
                body = child.child_by_field_name("body")
                if body is not None and body.type == "declaration_list":
                    enter(body, scope)
                elif body is not None and body.type in ITEM_TYPES:
                    kind = ITEM_TYPES[body.type]
                    out.append(Item(child, kind, scope.names(), node_name(body)))
            elif t in ITEM_TYPES and not child.has_error:
                out.append(Item(child, ITEM_TYPES[t], scope.names(), node_name(child)))
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
        """Function definitions by simple name (`A::run` -> `run`), for callee lookups (with a
        memo the pointer analysis shares between the file's kernels)."""
        out: dict[str, list] = FunctionsByName()
        for f in self.functions:
            simple = f.name.split("::")[-1].strip()
            if simple:
                out.setdefault(simple, []).append(f.node)
        return out
