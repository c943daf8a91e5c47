"""Python `load_jit(...)` calls against the C++ files they name (jit-source-not-found,
jit-wrapper-not-found, jit-wrapper-namespace-prefix, jit-wrapper-arity-mismatch).

SGLang's JIT loader (`sglang.kernels.jit.utils`, `sglang.jit_kernel.utils` in older wheels)
resolves each relative `cuda_files` / `cpp_files` entry against `<KERNEL_PATH>/csrc/`, where
KERNEL_PATH is the JIT package directory holding both `include/` and `csrc/`, and compiles a
generated unit that `#include`s those files and then emits, for each `(export, symbol)` of
`cuda_wrappers` / `cpp_wrappers`, `TVM_FFI_DLL_EXPORT_TYPED_FUNC(export, (symbol));` -- inside
`namespace sglang { ... }` in the current loader, at global scope in older ones.

This module finds the JIT root of a checked Python file (the `jit-source-root` setting, else
the nearest directory above the file that holds the loader's package directory), reads the
C++ files a call names and the headers they include from the JIT tree, and keeps what each
C++ file declares (per process, per file size and mtime).

The `jit-loaders` setting names other loader functions, called with the same keywords: one
imported from SGLang's loader modules keeps their layout; any other (layout "configured") is
resolved against `jit-source-root` only.
"""

from __future__ import annotations

import ast
import hashlib
import json
import os
import re
import time

from .lazyre import lazy_compile

# `load_jit` as the loader's modules export it (however imported: PyFacts.qualified).
_LOADER = lazy_compile(r"sglang\.(kernels\.jit|jit_kernel)(?:\.\w+)*\.load_jit")
LAYOUT_DIRS = {"kernels.jit": ("kernels", "jit"), "jit_kernel": ("jit_kernel",)}
SOURCE_KEYS = {"cuda_files": "cuda", "cpp_files": "cpp"}
WRAPPER_KEYS = {"cuda_wrappers": "cuda", "cpp_wrappers": "cpp"}
_HOLE = "\x00"  # an f-string `{...}` in a wrapper symbol
_SYMBOL = lazy_compile(r"[A-Za-z_]\w*(?:::[A-Za-z_]\w*)*")
_MAX_INCLUDE_FILES = 2000  # a closure larger than this is not followed (stay silent)


CONFIGURED = "configured"  # the layout of a configured loader outside SGLang's modules
_CONFIGURED_LOADERS: dict[frozenset, re.Pattern] = {}


def loader_layout(qualified: str | None, names: frozenset[str] | None = None) -> str | None:
    """ "kernels.jit" or "jit_kernel" when `qualified` is the loader's `load_jit`, else None.
    With configured loader `names` (`jit-loaders`): the layout of SGLang's loader modules for
    one of them imported from there, CONFIGURED for one imported from elsewhere (or called as
    an attribute: `qualified` is then the bare name)."""
    if not qualified:
        return None
    if names is not None:
        return _configured_layout(qualified, names)
    m = _LOADER.fullmatch(qualified)
    return m.group(1) if m else None


def _configured_layout(qualified: str, names: frozenset[str]) -> str | None:
    if qualified.rpartition(".")[2] not in names:
        return None
    pattern = _CONFIGURED_LOADERS.get(names)
    if pattern is None:
        alternatives = "|".join(re.escape(n) for n in sorted(names))
        pattern = _CONFIGURED_LOADERS[names] = re.compile(
            r"sglang\.(kernels\.jit|jit_kernel)(?:\.\w+)*\.(?:" + alternatives + ")"
        )
    m = pattern.fullmatch(qualified)
    return m.group(1) if m else CONFIGURED


# -- the JIT root ----------------------------------------------------------------------------
_ROOTS: dict[tuple, str | None] = {}
_UNKNOWN = object()


def _is_kernel_path(d: str) -> bool:
    return os.path.isdir(os.path.join(d, "csrc")) and os.path.isdir(os.path.join(d, "include"))


def find_root(pyfile: str, layout: str, settings=None) -> str | None:
    """The JIT KERNEL_PATH for a Python file: the configured `jit-source-root` (when it holds
    `csrc/`), else the nearest directory above the file that is, or holds, the loader's
    package directory (`kernels/jit`, `sglang/kernels/jit`; `jit_kernel`, `sglang/jit_kernel`)
    with both `include/` and `csrc/`. None: not found (the rules stay silent)."""
    configured = getattr(settings, "jit_source_root", None)
    if configured:
        return configured if os.path.isdir(os.path.join(configured, "csrc")) else None
    if os.path.isabs(pyfile) and os.sep in pyfile:
        d = pyfile.rpartition(os.sep)[0] or os.sep  # (an absolute path: its directory)
    else:
        d = os.path.dirname(os.path.abspath(pyfile))
    found = _ROOTS.get((d, layout), _UNKNOWN)
    return _root_above(d, layout) if found is _UNKNOWN else found


def _root_above(start: str, layout: str) -> str | None:
    """The nearest KERNEL_PATH at or above `start` (memoized for every directory passed)."""
    from .jitscope import nearest_above

    tail = LAYOUT_DIRS.get(layout)
    if tail is None:
        return None  # (a configured loader: only `jit-source-root` says where its tree is)

    def probe(d):
        parts = d.replace(os.sep, "/").split("/")
        candidates = [d] if tuple(parts[-len(tail) :]) == tail else []
        candidates += [os.path.join(d, *tail), os.path.join(d, "sglang", *tail)]
        return next((c for c in candidates if _is_kernel_path(c)), None)

    return nearest_above(start, probe, _ROOTS, key=lambda d: (d, layout))


_EMITS: dict[str, bool | None] = {}
_EXPORT = b"TVM_FFI_DLL_EXPORT_TYPED_FUNC("


def wrapper_scope(root: str) -> bool | None:
    """Does the loader of this JIT tree emit its wrappers inside `namespace sglang`? Read from
    the loader's own source (the `.py` files of `<root>/utils` that write the export macro):
    True (inside), False (at global scope), None (no loader found)."""
    if root in _EMITS:
        return _EMITS[root]
    answer = None
    utils = os.path.join(root, "utils")
    files = [utils + ".py"]
    for d, dirs, names in os.walk(utils):
        dirs[:] = sorted(x for x in dirs if x != "__pycache__")
        files += [os.path.join(d, n) for n in sorted(names) if n.endswith(".py")]
    for path in files:
        try:
            with open(path, "rb") as fh:
                data = fh.read()
        except OSError:
            continue
        if _EXPORT in data:
            inside = b'"namespace sglang {"' in data or b"'namespace sglang {'" in data
            answer = inside if answer is None else (answer and inside)
    _EMITS[root] = answer
    return answer


_LOADER_FILES: dict[str, list[str]] = {}


def loader_files(root: str) -> list[str]:
    """The loader's source files (what `wrapper_scope` reads), for cache keys (listed once
    per process)."""
    if root not in _LOADER_FILES:
        _LOADER_FILES[root] = _list_loader_files(root)
    return _LOADER_FILES[root]


def _list_loader_files(root: str) -> list[str]:
    utils = os.path.join(root, "utils")
    out = [utils + ".py"] if os.path.isfile(utils + ".py") else []
    for d, dirs, names in os.walk(utils):
        dirs[:] = sorted(x for x in dirs if x != "__pycache__")
        out += [os.path.join(d, n) for n in sorted(names) if n.endswith(".py")]
    return out


def resolve_source(root: str, name: str) -> str | None:
    """Where the loader looks for a `cuda_files` entry; None for an absolute path (passed
    through as written)."""
    if os.path.isabs(name):
        return None
    return os.path.normpath(os.path.join(root, "csrc", name))


_CSRC_INDEX: dict[str, dict[str, list[str]]] = {}


def similar_sources(root: str, name: str) -> list[str]:
    """Files under `<root>/csrc` with the same base name as `name` (relative paths)."""
    csrc = os.path.join(root, "csrc")
    index = _CSRC_INDEX.get(csrc)
    if index is None:
        index = {}
        for d, dirs, names in os.walk(csrc):
            dirs.sort()
            for n in sorted(names):
                rel = os.path.relpath(os.path.join(d, n), csrc).replace(os.sep, "/")
                index.setdefault(n, []).append(rel)
        _CSRC_INDEX[csrc] = index
    return index.get(os.path.basename(name), [])[:3]


# -- the Python side -------------------------------------------------------------------------
class JitCall:
    """One `load_jit(...)` call: its literal source lists and wrapper pairs."""

    def __init__(self, node, layout: str) -> None:
        self.node = node
        self.layout = layout
        # kind -> [(element node, str or None)] / None when the list is not a literal list
        self.files: dict[str, list | None] = {}
        # kind -> [(symbol node, text with holes as _HOLE)] / None when not a literal list
        self.wrappers: dict[str, list | None] = {}
        self.opaque = False  # `**kwargs`: what is passed is not known
        self.header_only = True  # False or not a literal: wrappers are not generated
        for kw in node.keywords:
            if kw.arg is None:
                self.opaque = True
            elif kw.arg in SOURCE_KEYS:
                self.files[SOURCE_KEYS[kw.arg]] = _source_list(kw.value)
            elif kw.arg in WRAPPER_KEYS:
                self.wrappers[WRAPPER_KEYS[kw.arg]] = _wrapper_list(kw.value)
            elif kw.arg == "header_only":
                v = kw.value
                self.header_only = isinstance(v, ast.Constant) and v.value is True


def _source_list(value):
    if isinstance(value, ast.Constant) and value.value is None:
        return []
    if not isinstance(value, (ast.List, ast.Tuple)):
        return None
    out = []
    for elt in value.elts:
        s = elt.value if isinstance(elt, ast.Constant) and isinstance(elt.value, str) else None
        out.append((elt, s))
    return out


def _wrapper_list(value):
    if isinstance(value, ast.Constant) and value.value is None:
        return []
    if not isinstance(value, (ast.List, ast.Tuple)):
        return None
    from .project import string_value

    out = []
    for elt in value.elts:
        if isinstance(elt, (ast.Tuple, ast.List)) and len(elt.elts) == 2:
            out.append((elt.elts[1], string_value(elt.elts[1], hole=_HOLE)))
        else:
            out.append((elt, None))
    return out


_CALL_LINE = lazy_compile(rb"load_jit")
_ALIASED = lazy_compile(rb"load_jit\s+as\b")


def jit_calls(ctx) -> list[JitCall]:
    """The file's calls of the loader's `load_jit` (or of the configured `jit-loaders`)."""
    from .python.jit import loaders

    names = loaders(ctx.settings)
    if names is not None:
        return _configured_jit_calls(ctx, names)
    facts = ctx.facts
    if ctx.tree is None:
        return []
    if _ALIASED.search(ctx.data):
        from .python import walk

        nodes = [n for n in walk(ctx.tree) if isinstance(n, ast.Call)]
    else:
        nodes = facts.nodes_on_lines(_CALL_LINE, (ast.Call,))
    out = []
    for node in nodes:
        layout = loader_layout(facts.qualified(node.func))
        if layout is not None:
            out.append(JitCall(node, layout))
    return out


def _configured_jit_calls(ctx, names: frozenset[str]) -> list[JitCall]:
    from .python.jit import load_jit_calls, names_a_loader

    if not names_a_loader(ctx.data, names) or ctx.tree is None:
        return []
    facts = ctx.facts
    out = []
    for node in load_jit_calls(facts, names):
        fn = node.func
        # (an attribute call's module is not known: `qualified` of its base, or the bare name)
        qualified = facts.qualified(fn) or (fn.attr if isinstance(fn, ast.Attribute) else None)
        layout = loader_layout(qualified, names)
        if layout is not None:
            out.append(JitCall(node, layout))
    return out


def shown(node, text: str) -> str:
    """A wrapper symbol as written, for messages: f-string holes as `{expression}`."""
    if isinstance(node, ast.JoinedStr):
        out = []
        for part in node.values:
            if isinstance(part, ast.Constant) and isinstance(part.value, str):
                out.append(part.value)
            elif isinstance(part, ast.FormattedValue):
                out.append("{" + ast.unparse(part.value) + "}")
        return "".join(out).strip()
    return text.strip()


def symbol_parts(text: str) -> list[str] | None:
    """`&Kernel<{args}>::run` -> ["Kernel", "run"]; a leading `sglang::` / `::` dropped. None
    when the symbol is not a plain (qualified) name once `&`, parentheses and template
    arguments are stripped, or an f-string hole is left outside template arguments."""
    from .project import normalize_target

    t = text.strip()
    if t.lstrip("&( \t").startswith("::"):
        t = t.replace("::", "", 1)
    name = normalize_target(t)
    if _HOLE in name or not _SYMBOL.fullmatch(name):
        return None
    return name.split("::")


_PREFIX = lazy_compile(
    r"[rRbBuUfF]{0,2}(\"\"\"|'''|\"|')([ \t]*&?[ \t]*)((?:::[ \t]*)?sglang[ \t]*::[ \t]*)"
)


def namespace_prefix(raw: str) -> tuple[int, int] | None:
    """(start, end) of a leading `sglang::` / `::sglang::` in a string literal's source text
    (after the opening quote and an optional `&`), or None."""
    m = _PREFIX.match(raw)
    if m is None:
        return None
    return m.start(3), m.end(3)


# -- the C++ side ----------------------------------------------------------------------------
class CppFacts:
    """What one C++ file declares, as far as wrapper lookup needs it."""

    __slots__ = (
        "decls",
        "classes",
        "kinds",
        "includes",
        "macro_words",
        "paste_words",
        "unsure_words",
        "qualifier_words",
        "using_directives",
        "sglang_direct",
        "sglang_hidden",
        "nested_sglang",
    )

    def __init__(self) -> None:
        self.decls: dict[str, set[tuple]] = {}  # name -> scopes (transparent namespaces removed)
        self.classes: dict[tuple, bool] = {}  # full path -> has base classes
        self.kinds: dict[str, set[str]] = {}  # name -> "namespace" | "class" | "alias" | ...
        self.includes: list[tuple[str, str]] = []  # ("quote" | "angle", text)
        self.macro_words: set[str] = set()
        self.paste_words: set[str] = set()
        self.unsure_words: set[str] = set()
        self.qualifier_words: set[str] = set()  # words followed by `::`
        self.using_directives: set[str] = set()  # `using namespace X;` targets (last part)
        self.sglang_direct: set[str] = set()  # names declared directly in `namespace sglang`
        self.sglang_hidden: set[str] = set()  # in an anonymous/inline namespace inside it
        self.nested_sglang = False  # a `namespace sglang` inside `namespace sglang`


_DEFINE = lazy_compile(rb"(?m)^[ \t]*#[ \t]*define\b((?:[^\n]*\\\r?\n)*[^\n]*)")
_INCLUDE = lazy_compile(rb'(?m)^[ \t]*#[ \t]*include[ \t]*(?:"([^"\n]+)"|<([^>\n]+)>)')
_WORD = lazy_compile(rb"[A-Za-z_]\w*")
_QUALIFIER = lazy_compile(rb"([A-Za-z_]\w*)\s*(?:<[^;{}()]*?>\s*)?::")


def file_facts(path: str) -> CppFacts | None:
    """The facts of one C++ file, cached per process with its bytes; None: unreadable."""
    data = read_text(path)
    if data is None:
        return None
    entry = _TEXTS[path]
    if entry[2] is None:
        entry = _TEXTS[path] = (entry[0], entry[1], _build_facts(data))  # (its place kept)
    return entry[2]


def _words(data: bytes) -> set[str]:
    return {w.decode("ascii") for w in set(_WORD.findall(data))}


def _build_facts(data: bytes) -> CppFacts:
    from .cpp.normalize import normalize
    from .cpp.parser import error_nodes, parse

    f = CppFacts()
    f.includes = _includes_in(data)
    for m in _DEFINE.finditer(data):
        body = m.group(1)
        words = _words(body)
        f.macro_words |= words
        if b"##" in body:
            f.paste_words |= {w for w in words if len(w) >= 3}
    # (words followed by `::`, comments included: more such words only mean more silence)
    code = data
    f.qualifier_words = {m.decode("ascii") for m in set(_QUALIFIER.findall(code))}
    norm = normalize(data)
    tree = parse(norm.data)
    unsure = [(a.start, a.end) for a in norm.attributes] + list(norm.branches)
    unsure += [(n.start_byte, n.end_byte) for n in error_nodes(tree.root_node)]
    for start, end in unsure:
        f.unsure_words |= _words(code[start:end])
    _walk(tree.root_node, norm.data, f)
    return f


def _text(node, data: bytes) -> str:
    return data[node.start_byte : node.end_byte].decode("utf-8", "replace")


def _type_name(node, data: bytes) -> str | None:
    """`K` of `K`, `K<int>`, `ns::K<...>`."""
    if node is None:
        return None
    if node.type in ("type_identifier", "identifier", "namespace_identifier"):
        return _text(node, data)
    if node.type == "template_type":
        return _type_name(node.child_by_field_name("name"), data)
    if node.type == "qualified_identifier":
        return _type_name(node.child_by_field_name("name"), data)
    return None


def _namespace_names(node, data: bytes) -> list[str]:
    """`a::b::c` of a (recursively nested) `nested_namespace_specifier`."""
    out: list[str] = []
    todo = [node]
    while todo:
        n = todo.pop()
        if n.type == "nested_namespace_specifier":
            todo += reversed(n.named_children)
        else:
            out.append(_text(n, data))
    return out


def _qualified_parts(node, data: bytes) -> list[str] | None:
    """`Kernel<T>::run` -> ["Kernel", "run"] (template arguments dropped)."""
    parts = []
    while node is not None and node.type == "qualified_identifier":
        scope = node.child_by_field_name("scope")
        if scope is not None:
            if scope.type == "nested_namespace_specifier":
                parts += _namespace_names(scope, data)
            else:
                name = _type_name(scope, data)
                if name is None:
                    return None
                parts.append(name)
        node = node.child_by_field_name("name")
    if node is None:
        return None
    if node.type == "template_function":
        node = node.child_by_field_name("name")
    if node is None or node.type not in ("identifier", "field_identifier", "type_identifier"):
        return None
    parts.append(_text(node, data))
    return parts


_DECLARATOR_WRAPPERS = (
    "function_declarator",
    "pointer_declarator",
    "reference_declarator",
    "init_declarator",
    "array_declarator",
    "parenthesized_declarator",
    "attributed_declarator",
)


def _declared_parts(node, data: bytes) -> list[str] | None:
    """The (qualified) name a declarator declares."""
    for _ in range(64):
        if node is None:
            return None
        if node.type in _DECLARATOR_WRAPPERS:
            inner = node.child_by_field_name("declarator")
            if inner is None:
                inner = next((c for c in node.named_children), None)
            node = inner
            continue
        if node.type in ("identifier", "field_identifier", "type_identifier"):
            return [_text(node, data)]
        if node.type == "template_function":
            return _declared_parts(node.child_by_field_name("name"), data)
        if node.type == "qualified_identifier":
            return _qualified_parts(node, data)
        return None
    return None


def _add(f: CppFacts, scope: tuple, parts: list[str], kind: str, in_sglang: int) -> None:
    *quals, name = parts
    full = scope + tuple(quals)
    f.decls.setdefault(name, set()).add(full)
    f.kinds.setdefault(name, set()).add(kind)
    if not quals:
        if in_sglang == 1:
            f.sglang_direct.add(name)
        elif in_sglang == 2:
            f.sglang_hidden.add(name)


def _walk(root, data: bytes, f: CppFacts) -> None:
    # (node, scope, in_sglang: 0 outside, 1 directly inside ::sglang, 2 inside a transparent
    # namespace within it, 3 deeper)
    stack = [(root, (), 0)]
    while stack:
        node, scope, in_sg = stack.pop()
        for child in node.named_children:
            t = child.type
            if t == "namespace_definition":
                name_node = child.child_by_field_name("name")
                body = child.child_by_field_name("body")
                if body is None:
                    continue
                inline = data[child.start_byte : child.start_byte + 6] == b"inline"
                if name_node is None or inline:  # (anonymous or inline: transparent)
                    names = []
                elif name_node.type == "nested_namespace_specifier":
                    names = _namespace_names(name_node, data)
                else:
                    names = [_text(name_node, data)]
                for n in names:
                    f.kinds.setdefault(n, set()).add("namespace")
                if names:
                    if names[0] == "sglang" and in_sg:
                        f.nested_sglang = True
                    if in_sg == 1 and len(names) >= 1:
                        f.sglang_direct.add(names[0])
                    new_sg = 1 if scope == () and names == ["sglang"] else (3 if in_sg else 0)
                    if scope == () and names[0] == "sglang" and len(names) > 1:
                        f.sglang_direct.add(names[1])
                        new_sg = 3
                else:
                    new_sg = 2 if in_sg in (1, 2) else in_sg
                stack.append((body, scope + tuple(names), new_sg))
            elif t in ("class_specifier", "struct_specifier", "union_specifier", "enum_specifier"):
                _class(child, scope, in_sg, data, f, stack)
            elif t in ("declaration", "field_declaration", "function_definition"):
                inner_types = [c for c in child.named_children]
                for c in inner_types:
                    if c.type in ("class_specifier", "struct_specifier", "union_specifier"):
                        _class(c, scope, in_sg, data, f, stack)
                for c in child.children_by_field_name("declarator"):
                    parts = _declared_parts(c, data)
                    if parts:
                        _add(f, scope, parts, "function", in_sg)
            elif t == "template_declaration":
                for c in child.named_children:
                    if c.type == "template_parameter_list":
                        for p in c.named_children:
                            for w in _words(data[p.start_byte : p.end_byte]):
                                f.kinds.setdefault(w, set()).add("alias")
                stack.append((child, scope, in_sg))
            elif t in ("alias_declaration", "type_definition"):
                name = child.child_by_field_name("name")
                names = [name] if name is not None else []
                names += child.children_by_field_name("declarator")
                for n in names:
                    if n.type in ("type_identifier", "identifier"):
                        _add(f, scope, [_text(n, data)], "alias", in_sg)
            elif t == "using_declaration":
                text = _text(child, data)
                words = re.findall(r"[A-Za-z_]\w*", text)
                if len(words) >= 2 and words[1] == "namespace":
                    f.using_directives.add(words[-1])
                elif words:
                    _add(f, scope, [words[-1]], "alias", in_sg)
            elif t == "namespace_alias_definition":
                name = child.child_by_field_name("name") or next(iter(child.named_children), None)
                if name is not None:
                    _add(f, scope, [_text(name, data)], "alias", in_sg)
            elif t in (
                "linkage_specification",
                "declaration_list",
                "preproc_if",
                "preproc_ifdef",
                "preproc_else",
                "preproc_elif",
                "preproc_elifdef",
                "field_declaration_list",
                "ERROR",
            ):
                body = child.child_by_field_name("body") if t == "linkage_specification" else None
                stack.append((body or child, scope, in_sg))


def _class(node, scope, in_sg, data, f, stack) -> None:
    name = _type_name(node.child_by_field_name("name"), data)
    body = node.child_by_field_name("body")
    if name is None:
        if body is not None:  # (an anonymous struct: its members are the enclosing scope's)
            stack.append((body, scope, in_sg))
        return
    _add(f, scope, [name], "class", in_sg)
    bases = any(c.type == "base_class_clause" for c in node.named_children)
    full = scope + (name,)
    f.classes[full] = f.classes.get(full, False) or bases
    if node.type == "enum_specifier":
        if body is not None:
            for e in body.named_children:
                n = e.child_by_field_name("name")
                if n is not None:
                    _add(f, scope, [_text(n, data)], "enumerator", 3)
                    _add(f, full, [_text(n, data)], "enumerator", 3)
        return
    if body is not None:
        stack.append((body, full, 3))


# -- the closure of included files -----------------------------------------------------------
def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def closure(root: str, paths: list[str]):
    """(facts of `paths` and the headers they include from the JIT tree, in that order, and
    whether every quoted include was found) -- or None when a named file is missing or
    unreadable."""
    root = os.path.normpath(root)
    include_dir = os.path.join(root, "include")
    out: list[CppFacts] = []
    complete = True
    seen: set[str] = set()
    todo = list(paths)
    first = len(paths)
    while todo:
        path = todo.pop(0)
        if path in seen:
            first -= 1
            continue
        seen.add(path)
        facts = file_facts(path) if os.path.isfile(path) else None
        if facts is None:
            if first > 0:
                return None
            complete = False
            continue
        first -= 1
        out.append(facts)
        if len(seen) > _MAX_INCLUDE_FILES:
            return None
        here = os.path.dirname(path)
        for kind, name in facts.includes:
            bases = [here, include_dir] if kind == "quote" else [include_dir]
            target = None
            for b in bases:
                cand = os.path.normpath(os.path.join(b, name))
                if os.path.isfile(cand):
                    target = cand
                    break
            if target is None:
                if kind == "quote" and not os.path.isabs(name):
                    complete = False
                continue
            if _inside(target, root) and target not in seen:
                todo.append(target)
    return out, complete


def resolve(root: str, paths: list[str], parts: list[str]):
    """(verdict, what is missing) for the wrapper symbol `parts` (see `lookup`), or None when
    a named file is missing or unreadable. A symbol each of whose parts occurs as a word in
    the named files or the JIT headers they include is taken as declared without parsing
    anything (generous, and most symbols); otherwise those files are parsed and looked in."""
    texts = []
    for path in include_closure_paths(root, paths):
        data = read_text(path)
        if data is None:
            if path in paths:
                return None
            continue
        texts.append(data)
    if len(texts) < len(set(paths)):
        return None
    if all(any(_has_word(t, p) for t in texts) for p in parts):
        return FOUND, ""
    found = closure(root, paths)
    if found is None:
        return None
    return lookup(parts, found[0], found[1])


# What `\w` matches in a bytes pattern.
_WORD_BYTES = frozenset(b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_")


def _has_word(data: bytes, word: str) -> bool:
    """Does `word` occur in `data` with no word byte (`\\w`) just before or after it? (Its
    occurrences found with `bytes.find`: no pattern compiled per word.)"""
    literal = word.encode()
    size = len(literal)
    at = data.find(literal)
    while at >= 0:
        end = at + size
        if (at == 0 or data[at - 1] not in _WORD_BYTES) and (
            end == len(data) or data[end] not in _WORD_BYTES
        ):
            return True
        at = data.find(literal, at + 1)
    return False


def include_closure_paths(root: str, paths: list[str], cache=None) -> list[str]:
    """The files `closure` would read (named files and included JIT headers), for cache keys:
    found by the include lines alone, without parsing. `cache`: each file's include lines
    are kept there by size and modification time (a warm run reads no unchanged header)."""
    root = os.path.normpath(root)
    include_dir = os.path.join(root, "include")
    seen: list[str] = []
    done: set[str] = set()
    todo = list(paths)
    while todo and len(done) <= _MAX_INCLUDE_FILES:
        path = todo.pop()
        if path in done:
            continue
        done.add(path)
        seen.append(path)
        todo.extend(_included_paths(path, root, include_dir, cache))
    return seen


_INCLUDED: dict[tuple, tuple] = {}  # (path, root) -> (its include list, the JIT files it names)


_INCLUDES_KEY = "cpp-includes:1"  # the cache's group of C/C++ include lists


def _cached_includes(path: str, cache) -> list[tuple[str, str]]:
    """`_includes_of(path)`, kept in the cache by the file's size and modification time."""
    st = _stat(path)
    if st is None:
        return []
    payload = cache.lookup_stat(path, _INCLUDES_KEY, st)
    if payload is not None:
        hit = _PAYLOADS.get(payload)
        if hit is None:
            try:
                hit = _PAYLOADS[payload] = [tuple(x) for x in json.loads(payload)]
            except (ValueError, TypeError):
                hit = None
        if hit is not None:
            return hit
    includes = _includes_of(path)
    cache.store(path, _INCLUDES_KEY, st, "", json.dumps(includes))
    return includes


_PAYLOADS: dict[str, list] = {}


def _included_paths(path: str, root: str, include_dir: str, cache=None) -> list[str]:
    """The files inside the JIT tree that `path`'s include lines name (memoized per file, by
    its include list: a file's contents are re-read when they change)."""
    includes = _includes_of(path) if cache is None else _cached_includes(path, cache)
    hit = _INCLUDED.get((path, root))
    if hit is not None and (hit[0] is includes or hit[0] == includes):
        return hit[1]
    out = []
    for kind, name in includes:
        bases = [os.path.dirname(path), include_dir] if kind == "quote" else [include_dir]
        for b in bases:
            cand = os.path.normpath(os.path.join(b, name))
            is_file = _IS_FILE.get(cand)
            if is_file is None:
                is_file = _IS_FILE[cand] = os.path.isfile(cand)
            if is_file:
                if _inside(cand, root):
                    out.append(cand)
                break
    _INCLUDED[(path, root)] = (includes, out)
    return out


# path -> (size and mtime, bytes, facts or None): the C++ files read, the oldest forgotten
# first past _TEXT_BUDGET bytes of them (a run over many copies of a JIT tree holds about the
# budget, not every copy's headers).
_TEXTS: dict[str, tuple] = {}
_TEXT_BUDGET = 4 << 20
_TEXT_BYTES = [0]
_IS_FILE: dict[str, bool] = {}  # (include candidates that exist, once per run)


def reset() -> None:
    """Forget what the directories held (the JIT roots found, which include candidates exist):
    a long-lived process, between runs. File contents stay memoized by size and mtime."""
    _ROOTS.clear()
    _IS_FILE.clear()
    _INCLUDED.clear()
    _STATS.clear()
    _CSRC_INDEX.clear()


# Each file's stat, taken once per run (reset between runs) and for at most a second (a
# long-lived process that lints without a reset sees edits a second later).
_STATS: dict[str, tuple] = {}
_STAT_TTL = 1.0


def _stat(path: str):
    now = time.monotonic()
    hit = _STATS.get(path)
    if hit is not None and now - hit[1] < _STAT_TTL:
        return hit[0]
    try:
        st = os.stat(path)
    except OSError:
        st = None
    _STATS[path] = (st, now)
    return st


def read_text(path: str) -> bytes | None:
    """A C++ file's bytes, cached per process by size and mtime (read again when modified
    within the last RECENT_NS: a same-size edit in one mtime tick); None: unreadable."""
    st = _stat(path)
    if st is None:
        return None
    stamp = (st.st_size, st.st_mtime_ns)
    hit = _TEXTS.get(path)
    if hit is not None and hit[0] == stamp and st.st_mtime_ns < time.time_ns() - RECENT_NS:
        return hit[1]
    try:
        with open(path, "rb") as fh:
            data = fh.read()
    except OSError:
        return None
    if hit is not None and hit[1] == data:
        data = hit[1]
    _remember(path, (stamp, data, hit[2] if hit is not None and hit[1] is data else None))
    return data


def _remember(path: str, entry: tuple) -> None:
    old = _TEXTS.pop(path, None)
    if old is not None:
        _TEXT_BYTES[0] -= len(old[1])
    _TEXTS[path] = entry
    _TEXT_BYTES[0] += len(entry[1])
    while _TEXT_BYTES[0] > _TEXT_BUDGET and len(_TEXTS) > 1:
        oldest = next(iter(_TEXTS))
        _TEXT_BYTES[0] -= len(_TEXTS.pop(oldest)[1])
        _INCLUDE_LISTS.pop(oldest, None)  # (it holds the bytes too)


_INCLUDE_LISTS: dict[str, tuple] = {}


def _includes_of(path: str) -> list[tuple[str, str]]:
    data = read_text(path)
    if data is None:
        return []
    hit = _INCLUDE_LISTS.get(path)
    if hit is None or hit[0] is not data:
        hit = _INCLUDE_LISTS[path] = (data, _includes_in(data))
    return hit[1]


def _includes_in(data: bytes) -> list[tuple[str, str]]:
    found = []
    for m in _INCLUDE.finditer(data):
        if m.group(1) is not None:
            found.append(("quote", m.group(1).decode("utf-8", "replace")))
        else:
            found.append(("angle", m.group(2).decode("utf-8", "replace")))
    return found


# -- lookup ----------------------------------------------------------------------------------
FOUND, MISSING, UNKNOWN = "found", "missing", "unknown"


def lookup(parts: list[str], files: list[CppFacts], complete: bool) -> tuple[str, str]:
    """Is the wrapper symbol `parts` (qualifiers then name, from namespace sglang) declared in
    `files`? (FOUND | MISSING | UNKNOWN, what is missing). Generous: any declaration of the
    name in a scope whose path ends with the qualifiers is a match; anything that could hide a
    declaration from this reading (macros, unparsed regions, base classes, aliases, names from
    headers outside the JIT tree) gives UNKNOWN."""
    *quals, name = parts
    k = len(quals)
    for f in files:
        for scope in f.decls.get(name, ()):
            if k == 0 or scope[-k:] == tuple(quals):
                return FOUND, ""
    for w in parts:
        for f in files:
            if w in f.macro_words or w in f.unsure_words:
                return UNKNOWN, ""
            if any(p in w for p in f.paste_words):
                return UNKNOWN, ""
    nominated = set().union(*(f.using_directives for f in files)) if files else set()
    declared = set()
    for f in files:
        declared |= f.kinds.keys()
    if nominated - declared:
        return UNKNOWN, ""  # (`using namespace` of a namespace declared outside these files)
    if not quals:
        return MISSING, name
    # The qualifiers: which ones resolve, and to what.
    for i in range(k):
        q = quals[i]
        kinds = set().union(*(f.kinds.get(q, set()) for f in files))
        if "alias" in kinds:
            return UNKNOWN, ""  # (a type alias, template parameter or using-declaration)
        if not kinds:
            if i == 0 and (not complete or any(q in f.qualifier_words for f in files)):
                return UNKNOWN, ""  # (a namespace or class of a header not read)
            # the first qualifier not declared anywhere
            prefix = "::".join(quals[: i + 1])
            return MISSING, prefix
        prefix = tuple(quals[: i + 1])
        matching = [
            (f, s)
            for f in files
            for s in f.decls.get(q, ())
            if i == 0 or s[-i:] == tuple(quals[:i])
        ]
        if not matching and "namespace" not in kinds:
            return UNKNOWN, ""
        for f, s in matching:
            if f.classes.get(s + (q,)):
                return UNKNOWN, ""  # (a class with base classes: inherited members)
        del prefix
    return MISSING, "::".join(parts)


def fix_is_safe(parts: list[str], files: list[CppFacts]) -> bool:
    """Does `X` name what `sglang::X` names, in the generated unit inside `namespace sglang`?
    True when X's first component is declared directly in `namespace sglang` (so unqualified
    lookup stops there) and nothing else could join it: no namespace that a `using namespace`
    directive nominates, and no anonymous or inline namespace inside `sglang`, declares the
    same name, and no `namespace sglang` is nested in itself."""
    head = parts[0]
    if any(f.nested_sglang for f in files):
        return False
    nominated = set().union(*(f.using_directives for f in files))
    for f in files:  # (a namespace a directive nominates that declares the name too)
        if any(scope and scope[-1] in nominated for scope in f.decls.get(head, ())):
            return False
    if any(head in f.sglang_hidden for f in files):
        return False
    return any(head in f.sglang_direct for f in files)


# -- cache keys ------------------------------------------------------------------------------
_SOURCE_LIST = lazy_compile(rb"\b(?:cuda|cpp)_files\s*=\s*[\[(]")
_STRING = lazy_compile(rb"""(?:"([^"\\\n]{1,300})"|'([^'\\\n]{1,300})')""")
_OPEN_FLAGS = os.O_RDONLY | getattr(os, "O_CLOEXEC", 0)
# A dependency modified this recently is keyed by its bytes too (the cache's racy window).
RECENT_NS = 2_000_000_000


RULE_NAMES = frozenset(
    {
        "jit-source-not-found",
        "jit-wrapper-not-found",
        "jit-wrapper-namespace-prefix",
        "jit-wrapper-arity-mismatch",
    }
)
_WANTS: dict[int, tuple] = {}


def wants_dependencies(rules) -> bool:
    """Is one of the `load_jit` rules in this rule list (memoized per list; the memo holds the
    list, so its id is not reused meanwhile)?"""
    hit = _WANTS.get(id(rules))
    if hit is None or hit[0] is not rules:
        if len(_WANTS) > 1024:
            _WANTS.clear()
        hit = _WANTS[id(rules)] = (rules, any(r.name in RULE_NAMES for r in rules))
    return hit[1]


_NAMES_KEY = "load-jit-names:1"  # the cache's group of "does this file name load_jit" answers


def _names_key(names: frozenset[str] | None) -> str:
    """The cache group of "does this file name a loader" answers, for these loader names."""
    return _NAMES_KEY if names is None else _NAMES_KEY + ":" + ",".join(sorted(names))


def dependency_key(abspath: str, settings, cache=None, stat=None) -> str:
    """What a Python file's findings of these rules depend on beyond its bytes: for a file
    that calls `load_jit` under a JIT root, the size and mtime of each file its source lists
    may name and of the headers those include from the JIT tree, and of the loader's own
    files. Empty for every other file: one without a JIT root above it is not even read
    (the rules are silent there whatever the C++ files hold); the others are read, not
    parsed."""
    roots = {layout: find_root(abspath, layout, settings) for layout in LAYOUT_DIRS}
    if not any(roots.values()):
        return ""
    names = getattr(settings, "jit_loaders", None)
    if names is not None:
        names = frozenset(names)
    group = _names_key(names)
    # (`cache`, `stat`: whether the file names `load_jit` is kept by size and modification
    # time, so that a warm run reads only the files that do)
    if cache is not None and stat is not None and cache.lookup_stat(abspath, group, stat) == "0":
        return ""
    try:
        fd = os.open(abspath, _OPEN_FLAGS)
        try:
            data = os.read(fd, 64 * 1024 * 1024)
        finally:
            os.close(fd)
    except OSError:
        return ""
    from .python.jit import names_a_loader

    if not names_a_loader(data, names):
        if cache is not None and stat is not None:
            cache.store(abspath, group, stat, "", "0")
        return ""
    parts = []
    for layout, root in roots.items():
        if root is None:
            parts.append(f"{layout}:-")
            continue
        parts.append(f"{layout}:{root}")
        named = []
        missing = []  # (a name without a file: the message names the folder and look-alikes)
        for m in _SOURCE_LIST.finditer(data):
            # (to the later of the first `]` and `)`: an over-approximation of the list)
            end = min(max(data.find(b"]", m.end()), data.find(b")", m.end())), m.end() + 8192)
            if end < m.end():
                end = m.end() + 8192
            for s in _STRING.finditer(data, m.end(), end):
                text = (s.group(1) or s.group(2)).decode("utf-8", "replace")
                path = resolve_source(root, text)
                if path is not None:
                    named.append(path)
                    if not os.path.isfile(path):
                        missing.append(text)
        recent = time.time_ns() - RECENT_NS
        for path in include_closure_paths(root, named, cache) + loader_files(root):
            st = _stat(path)
            if st is None:
                parts.append(f"{path}:-")
                continue
            parts.append(f"{path}:{st.st_size}:{st.st_mtime_ns}:{st.st_mode}")
            if st.st_mtime_ns >= recent:  # (an edit within the same mtime tick: the bytes)
                try:
                    with open(path, "rb") as fh:
                        parts.append(hashlib.sha256(fh.read()).hexdigest())
                except OSError:
                    parts.append("-")
        if missing:  # (jit-source-not-found: the folder as shown from here, the look-alikes)
            parts.append(f"cwd:{os.getcwd()}")
            parts += [f"similar:{n}:{similar_sources(root, n)}" for n in sorted(set(missing))]
    text = "\n".join(parts).encode("utf-8", "surrogateescape")
    return "|jit-wiring:" + hashlib.sha256(text).hexdigest()[:16]
