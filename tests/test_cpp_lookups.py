"""Node lookups that stand in for a walk of the tree or a lookup per occurrence
(kernlint.cpp.parser: `keyword_nodes`, `Seeker.above`, `nodes_spelled`) find exactly what
those find, in the same order."""

from __future__ import annotations

import glob
import os
import re

import pytest

from kernlint.cpp.normalize import normalize
from kernlint.cpp.parser import Seeker, keyword_nodes, nodes_of_types, parse

KEYWORDS = (
    ("struct", "struct_specifier"),
    ("class", "class_specifier"),
    ("union", "union_specifier"),
    ("for", "for_range_loop"),
)

SNIPPETS = {
    "nested": b"""
struct Outer {
  struct Inner { int* p; } inner;
  class Hidden { float f; };
  union U { int i; float f; } u;
};
typedef struct { int x; } Anon;
template <class T, typename U> struct Box { T value; };
enum class Color { kRed };
struct struct_info { int format_for; };
class classy_for;
""",
    "in_functions": b"""
__global__ void k(float* out, const float* in) {
  struct Local { int a; };
  for (auto x : {1, 2, 3}) {
    for (const auto& y : items) { out[x] = in[y]; }
  }
  for (int i = 0; i < 4; ++i) { out[i] = 0; }
  auto f = [](int forward) { struct L2 { int b; }; return forward; };
}
void host(int format) { for (auto t : {a, b}) { (void)t; } }
""",
    "errors": b"""
struct Broken { int a
void f() { for (auto x : xs { } }
class C { public: int b; ;
Foo { int x; };
""",
    "comments_and_strings": b"""
// struct InComment { int a; };
const char* s = "class InString { };";
/* for (auto x : y) */
struct Real { int a; };
""",
}


def _check(data: bytes) -> None:
    text = normalize(data).data
    root = parse(text).root_node
    seeker = Seeker(root)
    for keyword, node_type in KEYWORDS:
        walked = nodes_of_types(root, (node_type,))
        found = keyword_nodes(root, text, keyword, node_type, seeker)
        assert [n.id for n in found] == [n.id for n in walked], (keyword, node_type)
        # (a subtree: its own nodes only, with the file's seeker or one of its own)
        for func in nodes_of_types(root, ("function_definition",)):
            body = func.child_by_field_name("body")
            if body is None:
                continue
            want = [n.id for n in nodes_of_types(body, (node_type,))]
            assert [n.id for n in keyword_nodes(body, text, keyword, node_type, seeker)] == want
            assert [n.id for n in keyword_nodes(body, text, keyword, node_type)] == want


@pytest.mark.parametrize("name", sorted(SNIPPETS))
def test_keyword_nodes_are_the_walked_nodes(name):
    _check(SNIPPETS[name])


def test_keyword_nodes_find_something():
    """(The snippets hold the nodes the comparison is about.)"""
    text = normalize(SNIPPETS["nested"]).data
    root = parse(text).root_node
    assert not root.has_error
    assert len(keyword_nodes(root, text, "struct", "struct_specifier")) == 5
    assert len(keyword_nodes(root, text, "class", "class_specifier")) == 2
    text = normalize(SNIPPETS["in_functions"]).data
    root = parse(text).root_node
    assert len(keyword_nodes(root, text, "for", "for_range_loop")) == 3


def test_keyword_nodes_on_the_repository_sources():
    """The C++/CUDA files of the test data and the examples, whichever there are."""
    here = os.path.dirname(os.path.abspath(__file__))
    top = os.path.dirname(here)
    paths = []
    for pattern in ("tests/**/*.cu", "tests/**/*.cuh", "tests/**/*.cpp", "tests/**/*.h"):
        paths += glob.glob(os.path.join(top, pattern), recursive=True)
    for path in sorted(paths)[:200]:
        with open(path, "rb") as f:
            _check(f.read())


def _above_by_hand(root, start, end, chain):
    node = root.descendant_for_byte_range(start, end)
    for node_type in chain:
        if node is None or node.type != node_type:
            return None
        node = node.parent
    return node


@pytest.mark.parametrize("deep", [False, True])
def test_seeker_above_is_the_chain_of_parents(deep):
    """`Seeker.above` answers what `descendant_for_byte_range` and `parent` do, whether a
    lookup goes through the tree or through the cursor (a deep tree: the cursor only)."""
    if deep:
        data = b"void f() {\n" + b"if (a) {\n" * 300 + b"x = 1;\n" + b"}\n" * 300 + b"}\n"
    else:
        data = SNIPPETS["nested"] + SNIPPETS["in_functions"]
    text = normalize(data).data
    root = parse(text).root_node
    seeker = Seeker(root)
    chains = (("{", "compound_statement"), ("struct",), ("{",), ("for",))
    asked = 0
    for i in range(len(text)):
        for chain in chains:
            size = len(chain[0])
            if text.startswith(chain[0].encode(), i):
                want = _above_by_hand(root, i, i + size, chain)
                got = seeker.above(i, i + size, chain)
                assert (got.id if got is not None else None) == (
                    want.id if want is not None else None
                ), (i, chain)
                asked += 1
    assert asked > 20
    assert seeker._deep == deep


def _spelled_by_hand(root, text: bytes, name: bytes) -> list:
    out = []
    i = text.find(name)
    while i >= 0:
        node = root.descendant_for_byte_range(i, i + len(name))
        if node.start_byte == i and node.end_byte == i + len(name):
            out.append(node.id)
        i = text.find(name, i + 1)
    return out


WORDY = b"""
struct S { int x; int xs; };
__global__ void k(float* x, int n_x, int x1) {
  auto v = 123_km + 0x1F + 1ux + u8"x" + L'x';
  x[0] = xs + x1 + n_x;  // x in a comment
  const char* s = "x\\nx";
  R"x(raw x)x";
  for (auto y : x) { x_y(y); }
  #define X_OF(x) x##_of
}
"""


@pytest.mark.parametrize("name", sorted(SNIPPETS) + ["wordy"])
def test_nodes_spelled_finds_every_exact_span(name):
    """Occurrences of a word followed by a word byte are not looked up: no node spans them,
    whatever the word, in code, comments, strings, literals with suffixes, broken code."""
    from kernlint.cpp.parser import nodes_spelled

    data = WORDY if name == "wordy" else SNIPPETS[name]
    text = normalize(data).data
    root = parse(text).root_node
    words = set(re.findall(rb"[A-Za-z_]\w*", text)) | {b"x", b"1", b"km", b"_km", b"u8", b"of"}
    for word in sorted(words):
        want = _spelled_by_hand(root, text, word)
        assert [n.id for n in nodes_spelled(root, word, text)] == want, word
        assert [n.id for n in nodes_spelled(root, word)] == want, word
