"""Reports JIT module exports called with the wrong number of arguments.

## What it does
Reports a JIT module export call whose argument count differs from the wrapped C++
function's parameter count. The module is built in the same file: by a `@cache_once` factory
whose every `return` is a `load_jit(...)` call, or by `m = load_jit(...)` in the calling
function (other names: `jit-loaders`, `jit-cache-decorators`). The C++ function (free, template, or static member of a class or class
template) is found through the literal `cuda_wrappers` / `cpp_wrappers` in the named files
and their JIT headers. C++ default arguments do not count: TVM-FFI calls through the
function's type, which has none.

Not reported:
- calls unpacking arguments or passing keywords;
- non-literal wrapper lists, `**kwargs`, `header_only=` other than `True`, unlisted exports,
  a module name reassigned or a parameter;
- symbols not plain names, touching a macro or unparsed region, or qualified by an alias
  or template parameter; a missing JIT root, file or include;
- declarations disagreeing on the count or not functions; parameter packs, C varargs,
  non-static members, no declaration;
- factories whose modules differ in that count.

## Why is this bad?
The call is a `TypeError`, found when a GPU test runs it.

## Example
```python
# ops/scale.py
from sglang.kernels.jit.utils import cache_once, load_jit


@cache_once
def _jit_scale_module():
    return load_jit(
        "scale",
        cuda_files=["elementwise/scale.cuh"],
        cuda_wrappers=[("scale", "scale")],
    )


def scale(out, src, factor):
    _jit_scale_module().scale(out, src)
```

```cuda
// csrc/elementwise/scale.cuh
void scale(tvm::ffi::TensorView out, tvm::ffi::TensorView src, double factor);
```

## Use instead
```python
# ops/scale.py
from sglang.kernels.jit.utils import cache_once, load_jit


@cache_once
def _jit_scale_module():
    return load_jit(
        "scale",
        cuda_files=["elementwise/scale.cuh"],
        cuda_wrappers=[("scale", "scale")],
    )


def scale(out, src, factor):
    _jit_scale_module().scale(out, src, factor)
```

```cuda
// csrc/elementwise/scale.cuh
void scale(tvm::ffi::TensorView out, tvm::ffi::TensorView src, double factor);
```

## Fix safety
No automatic fix: which arguments are missing or extra is the author's to say.
"""

from __future__ import annotations

import ast
import os
import re

from kernlint.lazyre import lazy_compile
from kernlint.model import Rule
from kernlint.python import child_nodes, walk
from kernlint.python.facts import node_span
from kernlint.python.jit import when_loaders_configured

RULE = Rule(
    code="PY019",
    name="jit-wrapper-arity-mismatch",
    language="python",
    summary="JIT module export called with another number of arguments than the C++ takes",
    status="preview",
    triggers=(b"load_jit",),
    untriggered_when=when_loaders_configured,  # (`jit-loaders`: other names)
    prefilter=lazy_compile(rb"(?:cuda|cpp)_wrappers"),
)

_FUNCS = (ast.FunctionDef, ast.AsyncFunctionDef)


def check(ctx) -> None:
    for call, verdict in judge(ctx):
        if isinstance(verdict, Mismatch):
            ctx.report(*node_span(ctx, call), verdict.message())


# -- the Python side -------------------------------------------------------------------------
def judge(ctx):
    """(export call node, Mismatch | Match | reason string) for every call of a JIT module's
    export that the file's own functions build (the reason: why the rule stays silent)."""
    from kernlint.jit_wiring import jit_calls
    from kernlint.python.jit import caches, loaders

    tree = ctx.tree
    if tree is None:
        return
    calls = jit_calls(ctx)
    if not calls:
        return
    cached = caches(ctx.settings)
    by_node = {id(c.node): c for c in calls}
    factories: dict[str, list] = {}
    for f in tree.body:
        if isinstance(f, _FUNCS) and _cache_once(f, ctx.facts, cached):
            made = _returned_calls(f, by_node)
            if made:
                factories[f.name] = made
    functions = list(_functions(tree))
    strings: dict[int, dict] = {}  # id(function) -> its strings
    for c in calls:  # (the innermost function around the call: the latest to start)
        around = [f for f in functions if f.lineno <= c.node.lineno <= f.end_lineno]
        func = max(around, key=lambda f: f.lineno, default=None)
        if func is None:
            c.strings = {}
            continue
        if id(func) not in strings:
            strings[id(func)] = _local_strings(func)
        c.strings = strings[id(func)]
    # (only functions whose text names a factory or `load_jit` can call a module's export)
    lines = ctx.data.split(b"\n")
    loader_names = loaders(ctx.settings)
    words = [w.encode() for w in factories] + (
        [b"load_jit"] if loader_names is None else [n.encode() for n in loader_names]
    )
    abspath = ctx.source.abspath or os.path.abspath(ctx.source.path)
    memo: dict = {}
    for func in functions:
        text = b"\n".join(lines[func.lineno - 1 : func.end_lineno])
        if not any(w in text for w in words):
            continue
        for call, made in _export_calls(func, factories, by_node):
            yield call, _verdict(call, made, abspath, ctx.settings, memo)


def _cache_once(f, facts, cached=None) -> bool:
    from kernlint.python.jit import decorator_kind

    return any(decorator_kind(d, facts, cached) == "cache_once" for d in f.decorator_list)


_NOT_OWN = (*_FUNCS, ast.ClassDef, ast.Lambda)


def _own_nodes(func):
    """The nodes of `func`'s body, nested functions, classes and lambdas left out."""
    stack = list(func.body)
    while stack:
        node = stack.pop()
        yield node
        # (`child_nodes`: without the `ctx`/`op` singletons, which nothing here looks for)
        for child in child_nodes(node):
            if not isinstance(child, _NOT_OWN):
                stack.append(child)


def _functions(tree):
    """Every function of the module, nested ones included (found through statement bodies:
    a function is a statement)."""
    stack = list(tree.body)
    while stack:
        node = stack.pop()
        if isinstance(node, _FUNCS):
            yield node
        elif not isinstance(node, _COMPOUND):
            continue
        for field in ("body", "orelse", "finalbody"):
            stack.extend(getattr(node, field, ()))
        for sub in getattr(node, "handlers", ()) or getattr(node, "cases", ()):
            stack.extend(sub.body)


_COMPOUND = tuple(
    getattr(ast, n)
    for n in ("ClassDef", "If", "For", "AsyncFor", "While", "With", "AsyncWith", "Try")
    + ("TryStar", "Match")
    if hasattr(ast, n)
)


def _local_strings(func) -> dict:
    """Names assigned once in `func`, a string or an f-string (`cls = f"Kernel<{args}>"`),
    and never otherwise bound there: name -> the value node."""
    params = {a.arg for a in ast.walk(func.args) if isinstance(a, ast.arg)}
    stores: dict[str, int] = {}
    values: dict[str, object] = {}
    for node in _own_nodes(func):
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            stores[node.id] = stores.get(node.id, 0) + 1
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            for n in node.names:
                stores[n] = 2
        elif (
            isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)
            and (
                isinstance(node.value, ast.JoinedStr)
                or isinstance(node.value, ast.Constant)
                and isinstance(node.value.value, str)
            )
        ):
            values[node.targets[0].id] = node.value
    return {k: v for k, v in values.items() if stores.get(k) == 1 and k not in params}


def _symbol_text(node, strings) -> str | None:
    """A wrapper symbol's text, f-string holes as `_HOLE`, except `{name}` of a string the
    enclosing function assigns once, which is written out (one level)."""
    from kernlint.jit_wiring import _HOLE
    from kernlint.project import string_value

    if isinstance(node, ast.Name) and node.id in strings:
        return string_value(strings[node.id], _HOLE)
    if not isinstance(node, ast.JoinedStr):
        return string_value(node, _HOLE)
    out = []
    for part in node.values:
        if isinstance(part, ast.Constant) and isinstance(part.value, str):
            out.append(part.value)
        elif (
            isinstance(part, ast.FormattedValue)
            and isinstance(part.value, ast.Name)
            and part.value.id in strings
            and part.conversion == -1
            and part.format_spec is None
        ):
            out.append(string_value(strings[part.value.id], _HOLE) or _HOLE)
        else:
            out.append(_HOLE)
    return "".join(out)


def _returned_calls(f, by_node) -> list | None:
    """The `load_jit` calls a factory returns, when every `return` returns one (or a name
    assigned only such calls in the factory); else None."""
    nodes = list(_own_nodes(f))
    names = _bound_names(f, nodes, lambda v: [by_node[id(v)]] if id(v) in by_node else None)
    out = []
    returns = [n for n in nodes if isinstance(n, ast.Return)]
    for r in returns:
        v = r.value
        if id(v) in by_node:
            out.append(by_node[id(v)])
        elif isinstance(v, ast.Name) and v.id in names:
            out += names[v.id]
        else:
            return None
    return out or None


def _bound_names(func, nodes, source) -> dict[str, list]:
    """Names each of whose assignments in `func` is `name = <value>` with `source(value)` not
    None (and not a parameter, global or nonlocal): name -> the calls `source` gives."""
    params = {a.arg for a in ast.walk(func.args) if isinstance(a, ast.arg)}
    bound: dict[str, list] = {}
    spoiled = set(params)
    for node in nodes:
        if isinstance(node, (ast.Global, ast.Nonlocal)):
            spoiled.update(node.names)
        elif isinstance(node, ast.Assign) and len(node.targets) == 1:
            target = node.targets[0]
            if isinstance(target, ast.Name):
                made = source(node.value)
                if made is None:
                    spoiled.add(target.id)
                else:
                    bound.setdefault(target.id, []).extend(made)
    # Any other store or delete of a name, anywhere in a statement of `func` that is not such
    # an assignment (nested blocks and definitions included), spoils it: each statement of
    # the body is walked once, the statements inside it with it.
    for stmt in func.body:
        if _is_name_assign(stmt):
            continue  # (an assignment holds no statement)
        for sub in walk(stmt):
            if isinstance(sub, ast.Name) and isinstance(sub.ctx, (ast.Store, ast.Del)):
                spoiled.add(sub.id)
    return {k: v for k, v in bound.items() if k not in spoiled}


def _is_name_assign(stmt) -> bool:
    return (
        isinstance(stmt, ast.Assign)
        and len(stmt.targets) == 1
        and isinstance(stmt.targets[0], ast.Name)
    )


def _export_calls(func, factories, by_node):
    """(call node, the `load_jit` calls that may have built its module) for each
    `<module>.<attr>(...)` in `func` whose module is a factory call or a name bound to one
    (or to a `load_jit` call of `func`)."""

    def source(value):
        if id(value) in by_node:
            return [by_node[id(value)]]
        if (
            isinstance(value, ast.Call)
            and isinstance(value.func, ast.Name)
            and value.func.id in factories
        ):
            return factories[value.func.id]
        return None

    nodes = list(_own_nodes(func))
    names = None
    for node in nodes:
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
            continue
        owner = node.func.value
        made = source(owner) if isinstance(owner, ast.Call) else None
        if made is None and isinstance(owner, ast.Name):
            if names is None:
                names = _bound_names(func, nodes, source)
            made = names.get(owner.id)
        if made:
            yield node, made


class Match:
    pass


class Mismatch:
    def __init__(self, passed: int, sig) -> None:
        self.passed = passed
        self.sig = sig

    def message(self) -> str:
        sig = self.sig
        n = sig.total
        takes = f"{n} parameter{'s' if n != 1 else ''}"
        if sig.required != n:
            takes += f" ({n - sig.required} with defaults, which TVM-FFI does not apply)"
        passed = f"{self.passed} argument{'s' if self.passed != 1 else ''}"
        do = f"pass {n} argument{'s' if n != 1 else ''}" if n else "call it without arguments"
        return (
            f"`{sig.export}` is called with {passed}, but `{sig.shown}` "
            f"({sig.where}) takes {takes}: the call is a TypeError; {do}"
        )


def _verdict(call, made, abspath, settings, memo):
    if any(isinstance(a, ast.Starred) for a in call.args) or any(
        k.arg is None for k in call.keywords
    ):
        return "unpacked arguments"
    if call.keywords:
        return "keyword arguments"
    export = call.func.attr
    sigs = []
    for jit in made:
        got = _export_signature(jit, export, abspath, settings, memo, len(call.args))
        if isinstance(got, str):
            return got
        sigs.append(got)
    if not sigs:
        return "not an export"
    if len({s.total for s in sigs}) > 1:
        return "modules disagree"
    passed = len(call.args)
    sig = sigs[0]
    return Match() if passed == sig.total else Mismatch(passed, sig)


def _export_signature(jit, export, abspath, settings, memo, passed=None):
    """The signature of `export` of one `load_jit` call, or a reason for silence. `passed`: the
    call's argument count; where every spelling of the function's name in the files takes that
    many arguments, the call agrees with it whatever the declaration is (no parse needed)."""
    from kernlint.jit_wiring import _HOLE, find_root, resolve_source

    if jit.opaque or not jit.header_only:
        return "opaque load_jit"
    found = []
    for kind, key in (("cuda", "cuda_wrappers"), ("cpp", "cpp_wrappers")):
        kw = next((k for k in jit.node.keywords if k.arg == key), None)
        if kw is None:
            continue
        pairs = _pairs(kw.value, getattr(jit, "strings", {}))
        if pairs is None:
            return "wrappers not literal"
        for name, node, text in pairs:
            if name is None:
                return "wrappers not literal"
            if name == export:
                found.append((kind, node, text))
    if not found:
        return "not an export"
    if len(found) > 1:
        return "export listed twice"
    kind, node, text = found[0]
    if text is None:
        return "symbol not static"
    root = find_root(abspath, jit.layout, settings)
    if root is None:
        return "no JIT root"
    entries = jit.files.get(kind)
    if not entries or any(name is None for _, name in entries):
        return "sources not literal"
    paths = []
    for _, name in entries:
        path = resolve_source(root, name)
        if path is None or not os.path.isfile(path):
            return "missing source"
        paths.append(path)
    if passed is not None:
        fast = (root, tuple(paths), text, passed)
        if fast not in memo:
            memo[fast] = _every_spelling_takes(root, paths, text, passed)
        if memo[fast]:
            return _Agrees(passed)
    key = (root, tuple(paths), text)
    if key not in memo:
        memo[key] = signature(root, paths, text)
    got = memo[key]
    if isinstance(got, str):
        return got
    return _Shown(got, export, text.replace(_HOLE, "{...}").strip(), root)


def _pairs(value, strings):
    """[(export name or None, symbol node, symbol text or None)] of a literal wrapper list."""
    if isinstance(value, ast.Constant) and value.value is None:
        return []
    if not isinstance(value, (ast.List, ast.Tuple)):
        return None
    out = []
    for elt in value.elts:
        if not (isinstance(elt, (ast.Tuple, ast.List)) and len(elt.elts) == 2):
            return None
        first, second = elt.elts
        name = first.value if isinstance(first, ast.Constant) else None
        out.append((name if isinstance(name, str) else None, second, _symbol_text(second, strings)))
    return out


class _Agrees:
    """A signature known only to take as many arguments as the call passes."""

    def __init__(self, total: int) -> None:
        self.total = self.required = total


_CALL_CHARS = lazy_compile(rb"[()\[\]{}<>,\"'/]")


def _every_spelling_takes(root: str, paths: list[str], text: str, passed: int) -> bool:
    """Does every `name(...)` / `name<...>(...)` in the named files and the JIT headers they
    include hold exactly `passed` top-level arguments (with at least one such spelling, none
    variadic, and the name nowhere bound by `=`: an alias or reference would name another
    function)? Then the declaration, one of those spellings, takes `passed` too."""
    from kernlint.jit_wiring import include_closure_paths, read_text, symbol_parts

    parts = symbol_parts(text)
    if parts is None:
        return False
    word = parts[-1].encode()
    pattern = re.compile(re.escape(word) + rb"(?<=(?<![\w])" + re.escape(word) + rb")(?!\w)")
    seen = 0
    for path in include_closure_paths(root, paths):
        data = read_text(path)
        if data is None:
            return False
        for m in pattern.finditer(data):
            count = _argument_count(data, m.end())
            if count is False:
                return False
            if count is None:
                continue  # (not followed by an argument list: a mention)
            if count != passed:
                return False
            seen += 1
    return seen > 0


def _argument_count(data: bytes, at: int):
    """The top-level argument count of the `(...)` (after an optional `<...>`) at `at`; None
    when no argument list follows; False when unsure (`=` after the name, `...`, unbalanced
    brackets, a string or comment inside)."""
    n = len(data)
    i = at
    while i < n and data[i] in b" \t":
        i += 1
    if i < n and data[i : i + 1] == b"=" and data[i : i + 2] != b"==":
        return False
    if i < n and data[i : i + 1] == b"<":
        depth = 0
        while i < n:
            c = data[i : i + 1]
            if c == b"<":
                depth += 1
            elif c == b">":
                depth -= 1
                if depth == 0:
                    i += 1
                    break
            elif c in b";{}\n":
                return None  # (a comparison, not template arguments)
            i += 1
        while i < n and data[i] in b" \t":
            i += 1
    if i >= n or data[i : i + 1] != b"(":
        return None
    depth = 0  # brackets (), [], {}
    angles = 0  # template argument lists open at depth 1 (`<` right after a name)
    commas = 0
    empty = True
    j = i
    while j < n:
        m = _CALL_CHARS.search(data, j)
        if m is None:
            return False
        c = m.group()
        k = m.start()
        if depth >= 1 and data[j:k].strip() not in (b"", b"void"):
            empty = False
        if c in b"\"'/":
            return False  # (a string or a comment inside: unsure)
        if c in b"([{":
            depth += 1
        elif c in b")]}":
            depth -= 1
            if depth == 0:
                if b"..." in data[i:k]:
                    return False
                return 0 if empty else commas + 1
        elif c == b"<":
            if depth == 1 and k > 0 and (data[k - 1 : k].isalnum() or data[k - 1 : k] in b"_:"):
                angles += 1
        elif c == b">":
            if depth == 1 and angles:
                angles -= 1
        elif c == b"," and depth == 1 and angles == 0:
            commas += 1
        j = k + 1
    return False


class _Shown:
    def __init__(self, sig, export, shown_symbol, root) -> None:
        self.total = sig.total
        self.required = sig.required
        self.export = export
        self.shown = shown_symbol
        rel = os.path.relpath(sig.path, root).replace(os.sep, "/")
        self.where = f"{rel}:{sig.line}"


# -- the C++ side ----------------------------------------------------------------------------
class Signature:
    __slots__ = ("total", "required", "path", "line")

    def __init__(self, total, required, path, line) -> None:
        self.total, self.required, self.path, self.line = total, required, path, line


def signature(root: str, paths: list[str], text: str, depth: int = 0):
    """The parameter counts of the C++ function a wrapper symbol names, read from the named
    files and the JIT headers they include; or why they are not known (a string)."""
    from kernlint.jit_wiring import _has_word, include_closure_paths, read_text, symbol_parts

    parts = symbol_parts(text)
    if parts is None:
        return "symbol not static"
    every = include_closure_paths(root, paths)
    texts = {}
    for path in every:
        data = read_text(path)
        if data is None:
            return "missing source"
        texts[path] = data
    if not _includes_found(root, every):
        return "include not found"
    *quals, name = parts
    k = len(quals)
    entries = []
    macros: set[str] = set()
    classes: set[tuple] = set()
    for path in every:
        data = texts[path]
        macros |= _macro_names(path, data)
        if any(p in name for p in _macro_words(path, data)[1]):
            return "macro or unparsed region"  # (a macro pasting a name that contains it)
        if any(_aliased(data, q) for q in quals if q.encode() in data):
            return "qualifier is an alias or template parameter"
        if not _has_word(data, name):
            continue  # (a file that does not spell the name declares no member of that name)
        if name in _macro_words(path, data)[0]:
            return "macro or unparsed region"
        if not _declares(data, name):
            continue
        functions, file_classes, unsure, aliases = _file_functions(path, data)
        if unsure.intersection(parts):
            return "macro or unparsed region"
        if aliases.intersection(parts):
            return "alias or template parameter"
        classes |= file_classes
        for e in functions.get(name, ()):
            if k == 0 or e.scope[-k:] == tuple(quals):
                entries.append(e)
    if not entries:
        return "no declaration"
    targets = {e.target for e in entries}
    if targets != {""}:
        if len(entries) != 1 or depth >= 3:
            return "not a function"
        return signature(root, paths, entries[0].target, depth + 1)
    if macros.intersection(parts):
        return "macro or unparsed region"
    for e in entries:
        if e.problem:
            return e.problem
        if e.words & macros:
            return "macro in parameter list"
    member = [e for e in entries if e.scope in classes]
    if member:
        if len(member) != len(entries):
            return "members and free functions"
        if not any(e.in_class for e in member):
            return "member declaration not seen"
        if not all(e.static for e in member if e.in_class):
            return "non-static member function"
    if len({e.total for e in entries}) > 1:
        return "overloads"
    best = next((e for e in entries if e.definition), entries[0])
    return Signature(best.total, min(e.required for e in entries), best.path, best.line)


class _Entry:
    __slots__ = (
        "scope",
        "total",
        "required",
        "path",
        "line",
        "definition",
        "in_class",
        "static",
        "problem",
        "words",
        "target",
    )

    def __init__(self, scope, path, line) -> None:
        self.scope = scope
        self.path = path
        self.line = line
        self.total = 0
        self.required = 0
        self.definition = False
        self.in_class = False
        self.static = False
        self.problem = ""
        self.words: frozenset = frozenset()
        self.target = ""  # `constexpr auto& name = ns::fn;`: the function it refers to


_FUNC_CACHE: dict[str, tuple] = {}
_MACRO_CACHE: dict[str, tuple] = {}
_DEFINED = lazy_compile(rb"(?m)^[ \t]*#[ \t]*define[ \t]+([A-Za-z_]\w*)")
_DEFAULT_BRACES = lazy_compile(rb"=\s*\{\s*\}")
_WORDS = lazy_compile(r"[A-Za-z_]\w*")


def _includes_found(root: str, paths: list[str]) -> bool:
    """Does every quoted `#include` of these files name a file that exists (relative to the
    including file or to the JIT `include/`)?"""
    from kernlint.jit_wiring import _includes_of

    include_dir = os.path.join(os.path.normpath(root), "include")
    for path in paths:
        for kind, name in _includes_of(path):
            if kind != "quote" or os.path.isabs(name):
                continue
            bases = (os.path.dirname(path), include_dir)
            if not any(os.path.isfile(os.path.join(b, name)) for b in bases):
                return False
    return True


_MACRO_WORDS: dict[str, tuple] = {}
_DEFINE_BODY = lazy_compile(rb"(?m)^[ \t]*#[ \t]*define\b((?:[^\n]*\\\r?\n)*[^\n]*)")
_WORD_BYTES = lazy_compile(rb"[A-Za-z_]\w*")
_ALIASES: dict[str, re.Pattern] = {}


def _aliased(data: bytes, q: str) -> bool:
    """Is `q` declared as an alias on a line of its own (`using Q = ...`, `using ns::Q;`,
    `typedef ... Q;`), or spelled inside the parameter list of a `template <...>` that
    starts a line (a template parameter, or a default argument: generous)?"""
    pattern = _ALIASES.get(q)
    if pattern is None:
        pattern = _ALIASES[q] = re.compile(rb"(?<!\w)" + re.escape(q.encode()) + rb"(?!\w)")
    for m in pattern.finditer(data):
        start = data.rfind(b"\n", 0, m.start()) + 1
        head = _ALIAS_LINE.match(data, start)
        if head is None:
            continue
        if head.group(1) != b"template":
            end = data.find(b"\n", m.end())
            rest = data[m.end() : end if end >= 0 else len(data)]
            prefix = data[start : m.start()].rstrip()
            if head.group(1) == b"using" and (
                prefix.endswith(b"using")
                and rest.lstrip().startswith(b"=")
                or prefix.endswith(b"::")
                and rest.lstrip().startswith(b";")
            ):
                return True  # (`using Q = ...;`, `using ns::Q;`)
            if head.group(1) == b"typedef" and rest.lstrip().startswith(b";"):
                return True
            continue
        prefix = data[start : m.start()]  # (a template line: inside its parameter list?)
        if prefix.count(b"<") > prefix.count(b">"):
            return True
    return False


_ALIAS_LINE = lazy_compile(rb"[ \t]*(using|typedef|template)\b")


def _declares(data: bytes, name: str) -> bool:
    """Could the file declare `name`: does it spell `name (` or `name =` (a function, or an
    `auto` reference to one)?"""
    pattern = _DECLARES.get(name)
    if pattern is None:
        w = re.escape(name.encode())
        pattern = _DECLARES[name] = re.compile(rb"(?<!\w)" + w + rb"\s*[(=]")
    return pattern.search(data) is not None


_DECLARES: dict[str, re.Pattern] = {}


def _macro_words(path: str, data: bytes) -> tuple[set[str], set[str]]:
    """(the words of the file's `#define`s, those of 3 characters or more in the ones that
    paste tokens (`##`), which a macro could make a longer name of), cached per process with
    the file's bytes."""
    hit = _MACRO_WORDS.get(path)
    if hit is None or hit[0] is not data:
        words: set[str] = set()
        pasted: set[str] = set()
        if b"define" in data:
            for m in _DEFINE_BODY.finditer(data):
                found = {w.decode("ascii") for w in _WORD_BYTES.findall(m.group(1))}
                words |= found
                if b"##" in m.group(1):
                    pasted |= {w for w in found if len(w) >= 3}
        hit = _MACRO_WORDS[path] = (data, (words, pasted))
    return hit[1]


def _macro_names(path: str, data: bytes) -> set[str]:
    """The names a C++ file `#define`s (cached per process with its bytes)."""
    hit = _MACRO_CACHE.get(path)
    if hit is None or hit[0] is not data:
        hit = _MACRO_CACHE[path] = (data, {m.decode("ascii") for m in _DEFINED.findall(data)})
    return hit[1]


def _file_functions(path: str, data: bytes):
    """(name -> [_Entry], class scopes) of one C++ file, cached per process with its
    bytes."""
    hit = _FUNC_CACHE.get(path)
    if hit is not None and hit[0] is data:
        return hit[1]
    from kernlint.cpp.normalize import normalize
    from kernlint.cpp.parser import error_nodes, parse

    norm = normalize(data)
    tree = parse(norm.data)
    info: tuple = ({}, set(), set(), set())
    _collect(tree.root_node, data, norm.data, path, info)
    # (words of what kernlint left out or could not parse: attributes, preprocessor
    # branches, syntax errors)
    unsure = [(a.start, a.end) for a in norm.attributes] + list(norm.branches)
    unsure += [(n.start_byte, n.end_byte) for n in error_nodes(tree.root_node)]
    for start, end in unsure:
        info[2].update(_WORDS.findall(data[start:end].decode("utf-8", "replace")))
    _FUNC_CACHE[path] = (data, info)
    return info


def _collect(root, data: bytes, norm: bytes, path: str, info) -> None:
    from kernlint.jit_wiring import _declared_parts, _namespace_names

    entries, classes, _, aliases = info
    stack = [(root, (), False)]
    while stack:
        node, scope, in_class = stack.pop()
        for child in node.named_children:
            t = child.type
            if t == "namespace_definition":
                body = child.child_by_field_name("body")
                name = child.child_by_field_name("name")
                if body is None:
                    continue
                names = []
                inline = data[child.start_byte : child.start_byte + 6] == b"inline"
                if name is not None and not inline:
                    if name.type == "nested_namespace_specifier":
                        names = _namespace_names(name, norm)
                    else:
                        names = [norm[name.start_byte : name.end_byte].decode("utf-8", "replace")]
                stack.append((body, scope + tuple(names), False))
            elif t in ("class_specifier", "struct_specifier", "union_specifier"):
                _class(child, scope, norm, classes, stack)
            elif t in ("declaration", "field_declaration", "function_definition"):
                for c in child.named_children:
                    if c.type in ("class_specifier", "struct_specifier", "union_specifier"):
                        _class(c, scope, norm, classes, stack)
                if _is_friend(child):
                    continue
                for decl in child.children_by_field_name("declarator"):
                    parts = _declared_parts(decl, norm)
                    if not parts:
                        continue
                    *quals, name = parts
                    e = _Entry(scope + tuple(quals), path, child.start_point[0] + 1)
                    e.definition = t == "function_definition"
                    e.in_class = in_class and not quals
                    e.static = any(
                        c.type == "storage_class_specifier" and c.text == b"static"
                        for c in child.children
                    )
                    _params(child, decl, data, norm, e)
                    entries.setdefault(name, []).append(e)
            elif t in (
                "alias_declaration",
                "type_definition",
                "using_declaration",
                "namespace_alias_definition",
            ):
                text = norm[child.start_byte : child.end_byte].decode("utf-8", "replace")
                if not text.startswith("using namespace"):
                    # (the declared name: the word before `=`, else the last word)
                    words = _WORDS.findall(text.split("=", 1)[0])
                    aliases.update(words[-1:] if "=" in text or t != "type_definition" else words)
            elif t == "template_declaration":
                for c in child.named_children:
                    if c.type == "template_parameter_list":
                        aliases.update(_WORDS.findall(c.text.decode("utf-8", "replace")))
                stack.append((child, scope, in_class))
            elif t in (
                "linkage_specification",
                "declaration_list",
                "field_declaration_list",
                "preproc_if",
                "preproc_ifdef",
                "preproc_else",
                "preproc_elif",
                "preproc_elifdef",
                "ERROR",
            ):
                body = child.child_by_field_name("body") if t == "linkage_specification" else None
                stack.append((body or child, scope, in_class))


def _class(node, scope, norm, classes, stack) -> None:
    from kernlint.jit_wiring import _type_name

    name = _type_name(node.child_by_field_name("name"), norm)
    body = node.child_by_field_name("body")
    if body is None:
        return
    if name is None:
        stack.append((body, scope, True))
        return
    full = scope + (name,)
    classes.add(full)
    stack.append((body, full, True))


def _is_friend(node) -> bool:
    return any(c.type == "friend" or c.text == b"friend" for c in node.children[:3])


_WRAPPERS = ("pointer_declarator", "reference_declarator", "attributed_declarator")
_REFERRED = ("identifier", "qualified_identifier", "template_function")


def _params(owner, decl, data: bytes, norm: bytes, e: _Entry) -> None:
    """Fill `e`'s counts from the function declarator under `decl` (or its problem, or the
    function an `auto` reference or pointer is initialized with)."""
    d = decl
    value = owner.child_by_field_name("default_value")
    if d.type == "init_declarator":
        value = d.child_by_field_name("value")
        d = d.child_by_field_name("declarator")
    while d is not None and d.type in _WRAPPERS:
        d = d.child_by_field_name("declarator")
    if d is None or d.type != "function_declarator":
        e.problem = "not a function"
        if value is not None and any(
            c.type == "placeholder_type_specifier" for c in owner.named_children
        ):
            if value.type == "pointer_expression" and value.text.startswith(b"&"):
                value = value.child_by_field_name("argument")
            if value is not None and value.type in _REFERRED:
                e.problem = ""
                e.target = data[value.start_byte : value.end_byte].decode("utf-8", "replace")
        return
    inner = d.child_by_field_name("declarator")
    if inner is None or inner.type not in (
        "identifier",
        "field_identifier",
        "qualified_identifier",
        "template_function",
        "destructor_name",
        "operator_name",
    ):
        e.problem = "not a function"
        return
    plist = d.child_by_field_name("parameters")
    if plist is None or plist.has_error:
        e.problem = "unparsed parameter list"
        return
    original = data[plist.start_byte : plist.end_byte]
    seen = norm[plist.start_byte : plist.end_byte]
    if original != seen and _DEFAULT_BRACES.sub(lambda m: b" " * len(m.group()), original) != seen:
        e.problem = "rewritten parameter list"  # (a macro or attribute blanked by kernlint)
        return
    e.words = frozenset(_WORDS.findall(original.decode("utf-8", "replace")))
    params = []
    for c in plist.children:
        if c.type == "...":
            e.problem = "C varargs"
            return
        if not c.is_named or c.type == "comment":
            continue
        if c.type == "variadic_parameter_declaration" or b"..." in c.text:
            e.problem = "parameter pack"
            return
        if c.type not in ("parameter_declaration", "optional_parameter_declaration"):
            e.problem = "unparsed parameter list"
            return
        params.append(c)
    if (
        len(params) == 1
        and params[0].type == "parameter_declaration"
        and params[0].child_by_field_name("declarator") is None
        and params[0].child_by_field_name("type") is not None
        and params[0].child_by_field_name("type").text == b"void"
    ):
        params = []
    e.total = len(params)
    defaults = sum(1 for p in params if p.type == "optional_parameter_declaration")
    # (`= {}` defaults are blanked before parsing: count them from the original text)
    defaults = max(defaults, len(_DEFAULT_BRACES.findall(original)))
    e.required = e.total - min(defaults, e.total)
