"""tree-sitter parsing of C++/CUDA (grammar: tree-sitter-cuda, chosen by measurement)."""

from __future__ import annotations

from functools import lru_cache

from ..lazyre import lazy_compile


@lru_cache(maxsize=1)
def language():
    import tree_sitter
    import tree_sitter_cuda

    return tree_sitter.Language(tree_sitter_cuda.language())


@lru_cache(maxsize=1)
def parser():
    import tree_sitter

    return tree_sitter.Parser(language())


# Nodes whose named children are a sequence of statements (a block, a case, a preprocessor
# branch): the statement after one is its next sibling.
STATEMENT_BLOCKS = frozenset(
    {
        "compound_statement",
        "case_statement",
        "preproc_if",
        "preproc_ifdef",
        "preproc_else",
        "preproc_elif",
        "preproc_elifdef",
    }
)


def parse(data: bytes):
    return parser().parse(data)


def error_nodes(root) -> list:
    """The outermost ERROR and MISSING nodes of a tree (empty for a clean parse)."""
    if not root.has_error:
        return []
    out = []
    stack = [root]
    while stack:
        node = stack.pop()
        if node.type == "ERROR" or node.is_missing:
            out.append(node)
        elif node.has_error:
            stack.extend(node.children)
    out.sort(key=lambda n: n.start_byte)
    return out


def nodes_of_types(root, node_types: tuple[str, ...]) -> list:
    """All nodes of the given types under `root`, in document order (pre-order: an outer node
    before the nodes it contains), found by one tree-cursor walk. A tree-sitter query would
    find the same nodes, but costs 15 to 20 ms to compile with this grammar, once per process
    (most of a one-file run's tree work), and its matching costs about what the walk does
    (0.17 vs 0.21 s over the 290 SGLang JIT files)."""
    lang = language()
    kinds = {lang.id_for_node_kind(t, True) for t in node_types} - {None}
    out: list = []
    append = out.append
    cursor = root.walk()
    first, following, up = cursor.goto_first_child, cursor.goto_next_sibling, cursor.goto_parent
    while True:
        node = cursor.node
        if node.kind_id in kinds:
            append(node)
        if first():
            continue
        while not following():
            if not up():
                return out


def keyword_nodes(root, text: bytes, keyword: str, node_type: str, seeker=None) -> list:
    """What `nodes_of_types(root, (node_type,))` finds, for a node type every node of which
    holds the token `keyword` as a child (`struct` of a struct_specifier, `for` of a
    for_range_loop), in document order: the occurrences of the keyword's bytes under `root`
    are looked up in the tree (a `Seeker`; `text`: the bytes the tree was parsed from) and
    their parents kept. A tree with an ERROR or MISSING node below `root` is walked instead
    (error recovery can make such a node without its keyword). Only a few tokens are looked up
    from Python instead of every node: the 40 SGLang files whose structs
    kernel-pointer-not-restrict reads, 0.034 against 0.004 s."""
    if root.has_error:
        return nodes_of_types(root, (node_type,))
    above = (seeker or Seeker(root)).above
    word = keyword.encode()
    size = len(word)
    chain = (keyword,)
    find = text.find
    hi = root.end_byte
    out = []
    i = find(word, root.start_byte, hi)
    while i >= 0:
        parent = above(i, i + size, chain)  # (the keyword's own token: its parent)
        if parent is not None and parent.type == node_type:
            out.append(parent)
        i = find(word, i + 1, hi)
    out.sort(key=lambda n: (n.start_byte, -n.end_byte))  # (a walk's pre-order)
    return out


class Seeker:
    """Finds the nodes under `root` that hold byte ranges, and their parents, in time that
    stays linear however deep the tree is, for ranges asked about in document order (any order
    gives the same answers).

    `node.descendant_for_byte_range` and `node.parent` each go down from the top of the tree:
    fast in C for ordinary code, but n lookups d levels deep cost n x d, and walking up from a
    node d deep costs d x d (2,000 nested blocks: seconds; 10,000: minutes). A tree cursor
    instead goes from one range to the next (up to a node holding the next range, or along
    the siblings, then down), so ranges in order cost about one walk down the tree in all,
    and it knows the parent of every node it passed. It starts with the direct lookups and
    goes through the cursor every `_PROBE`-th time; once a node found that way lies deeper
    than `_DEEP` levels, the cursor answers every lookup."""

    _SIBLING_STEPS = 16
    _PROBE = 32
    _DEEP = 96

    def __init__(self, root) -> None:
        self.root = root
        self._cursor = root.walk()
        self._path = [root]  # from root to the cursor's node
        self._parents: dict[int, object] = {}  # node id -> parent node
        self._count = 0
        self._deep = False

    # Which lookups are direct ones (marked `_direct` below): none in a deep tree; else all
    # but every `_PROBE`-th, the first included, which the cursor answers, measuring the depth.
    # (Written out in `smallest`, `exact` and `parent`, called thousands of times per file: as
    # a method of its own it made up a fifth of their time.)
    def smallest(self, start: int, end: int):
        """What `root.descendant_for_byte_range(start, end)` returns: for a non-empty range, the
        deepest node that contains [start, end) (`root` when none below it does)."""
        if start >= end:
            return self.root.descendant_for_byte_range(start, end)
        if not self._deep:  # (`_direct`)
            self._count += 1
            if self._count % self._PROBE != 1:
                return self.root.descendant_for_byte_range(start, end)
        node = self._seek(start, end)
        if len(self._path) > self._DEEP:
            self._deep = True
        return node

    def _seek(self, start: int, end: int):
        cursor, path, parents = self._cursor, self._path, self._parents
        steps = 0
        while len(path) > 1:
            node = path[-1]
            if node.start_byte <= start and end <= node.end_byte:
                break
            if node.end_byte <= start and steps < self._SIBLING_STEPS:
                if cursor.goto_next_sibling():
                    steps += 1
                    path[-1] = cursor.node
                    parents[path[-1].id] = path[-2]
                    continue
            cursor.goto_parent()
            path.pop()
            steps = 0
        goto_child = cursor.goto_first_child_for_byte
        while goto_child(start) is not None:
            child = cursor.node
            if child.start_byte <= start and end <= child.end_byte:
                parents[child.id] = path[-1]
                path.append(child)
            else:
                cursor.goto_parent()
                break
        return path[-1]

    def exact(self, start: int, end: int):
        """The deepest node spanning exactly [start, end), or None."""
        if start >= end:
            node = self.root.descendant_for_byte_range(start, end)
        elif self._deep:
            node = self.smallest(start, end)
        else:  # (`smallest`, inline)
            self._count += 1
            if self._count % self._PROBE != 1:
                node = self.root.descendant_for_byte_range(start, end)
            else:
                node = self._seek(start, end)
                if len(self._path) > self._DEEP:
                    self._deep = True
        return node if node.start_byte == start and node.end_byte == end else None

    def above(self, start: int, end: int, chain: tuple[str, ...]):
        """The node above a chain of nodes: the smallest node holding [start, end) (`smallest`)
        must be of type `chain[0]`, its parent of type `chain[1]`, and so on; the parent of the
        last is returned (None where the chain breaks or ends at the top). What `smallest` and
        `parent` answer, in one call: a token's enclosing nodes (`{` -> compound_statement ->
        its owner) are asked for thousands of times per file."""
        if start < end and not self._deep:  # (`_direct`: one count for the whole chain)
            self._count += 1
            if self._count % self._PROBE != 1:
                node = self.root.descendant_for_byte_range(start, end)
                for node_type in chain:
                    if node is None or node.type != node_type:
                        return None
                    node = node.parent
                return node
        if start >= end:
            node = self.root.descendant_for_byte_range(start, end)
        else:  # (the cursor: `smallest` without counting again)
            node = self._seek(start, end)
            if len(self._path) > self._DEEP:
                self._deep = True
        for node_type in chain:
            if node is None or node.type != node_type:
                return None
            node = self.parent(node)
        return node

    def parent(self, node):
        """`node.parent`: known without a lookup for the nodes the cursor passed; for another
        node under `root`, the cursor goes to it (or, in a tree that is not deep, most often a
        direct lookup answers)."""
        found = self._parents.get(node.id)
        if found is not None:
            return found
        start, end = node.start_byte, node.end_byte
        if start == end:
            return node.parent
        if not self._deep:  # (`_direct`)
            self._count += 1
            if self._count % self._PROBE != 1:
                return node.parent
        root = self.root
        if not (root.start_byte <= start < end <= root.end_byte):
            return node.parent
        self._seek(start, end)  # (the path to the deepest node holding the range passes `node`)
        if len(self._path) > self._DEEP:
            self._deep = True
        found = self._parents.get(node.id)
        return found if found is not None else node.parent


def nodes_spelled(
    node,
    name: bytes,
    text: bytes | None = None,
    node_text: bytes | None = None,
    seeker: Seeker | None = None,
) -> list:
    """The smallest nodes under `node` that span exactly an occurrence of the bytes `name`, in
    document order: each occurrence is looked up in the tree (a `Seeker`) instead of visiting
    every node from Python. `text`: the bytes the whole tree was parsed from, when the caller
    has them; `node_text`: the node's own bytes (`node.text`), when the caller has read them
    already (else they are read); `seeker`: a Seeker of `node`, when the caller wants the
    parents of the nodes found (`seeker.parent`)."""
    if not name:
        return []
    if text is None:
        text, base, lo, hi = node.text if node_text is None else node_text, node.start_byte, 0, None
    else:
        base, lo, hi = 0, node.start_byte, node.end_byte
    out = []
    find = text.find
    size = len(name)
    exact = (seeker or Seeker(node)).exact
    # An occurrence of a word followed by a word byte is part of a longer word: the lexer
    # takes the longest token (an identifier or keyword goes on over every ASCII letter, digit
    # and `_`), so no node spans exactly that occurrence, and it is not looked up (42% of the
    # occurrences the SGLang rules look for).
    word = _WORD.fullmatch(name) is not None
    last = len(text) - size  # (an occurrence starting after it has no byte after it in `text`)
    i = find(name, lo, hi)
    while i >= 0:
        if not (word and i < last and text[i + size] in _WORD_BYTES):
            start = base + i
            found = exact(start, start + size)
            if found is not None:
                out.append(found)
        i = find(name, i + 1, hi)
    return out


_WORD = lazy_compile(rb"[A-Za-z_][A-Za-z0-9_]*")
_WORD_BYTES = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_")


_IDENTIFIER_TYPES = frozenset(("identifier", "type_identifier"))


def identifier_nodes(
    node, name: bytes, node_text: bytes | None = None, seeker: Seeker | None = None
) -> list:
    """The `identifier` and `type_identifier` nodes spelled `name` under `node`, in document
    order (the smallest node spanning an occurrence is the identifier exactly when one is
    there). `node_text`: `node.text`, when the caller has it; `seeker`: see `nodes_spelled`."""
    found = nodes_spelled(node, name, node_text=node_text, seeker=seeker)
    return [n for n in found if n.type in _IDENTIFIER_TYPES]
