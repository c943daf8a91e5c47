"""Reports registered SGLang tests whose `__main__` block does not make `python3 file.py` fail.

## What it does
In a Python file under the registered-tests root (`test/registered/` by default; the
`registered-tests-roots` setting; `__init__.py` and `conftest.py` aside), reports:

* a `pytest.main(...)` call in an `if __name__ == "__main__":` block whose exit code is not
  propagated. Accepted, as by SGLang's `check_no_bare_pytest_main` hook:
  `sys.exit(pytest.main(...))`, `raise SystemExit(pytest.main(...))`, or the result assigned
  to a name the block passes to either. The guard may be written either way round and sit
  anywhere (in a function too); calls in functions defined in the block are not judged.
* a file with an enabled module-level registration (a `register_<backend>_ci(...)` or
  `ci-registration-functions` call without `disabled=`) but no module-level
  `if __name__ == "__main__":` block holding a call (missing, or only `pass`): SGLang's
  collector requires exactly that form, `__name__` on the left.
  The finding sits on the first enabled registration.

Not reported: `pytest.main` called under another name (`from pytest import main`,
`import pytest as pt`), which the hook does not recognize either.

## Why is this bad?
CI runs each registered test as `python3 file.py`. `pytest.main()` returns the exit code
instead of raising: dropped, the process exits 0 and failing tests show green. Without an
executable `__main__` block the file runs nothing: SGLang's collector rejects it and stops
the CI run.

## Example
```python
# test/registered/kernels/ops/elementwise/test_scale.py
import pytest

from sglang.test.ci.ci_register import register_cuda_ci

register_cuda_ci(est_time=30, stage="base-b-kernel-unit", runner_config="1-gpu-large")


def test_scale():
    assert 2 * 3 == 6


if __name__ == "__main__":
    pytest.main([__file__, "-v"])
```

## Use instead
```python
# test/registered/kernels/ops/elementwise/test_scale.py
import sys

import pytest

from sglang.test.ci.ci_register import register_cuda_ci

register_cuda_ci(est_time=30, stage="base-b-kernel-unit", runner_config="1-gpu-large")


def test_scale():
    assert 2 * 3 == 6


if __name__ == "__main__":
    sys.exit(pytest.main([__file__, "-v"]))
```

## Fix safety
No automatic fix: wrapping the call in `sys.exit(...)` needs `import sys`, and the author may
prefer `raise SystemExit(...)`.
"""

from __future__ import annotations

import ast

from kernlint.ci_layout import collected_test, is_enabled, is_main_entry, may_be_collected_test
from kernlint.lazyre import lazy_compile
from kernlint.model import Rule
from kernlint.python import LineSearch, parse

from .non_literal_ci_registration import ci_names, snippet_span, when_ci_configured
from .unregistered_tests import CI_LINE, registrations

_PYTEST_MAIN = lazy_compile(rb"pytest\s*\.\s*main")
# The lines it reads: the main guards and the pytest.main calls (wherever they are), and the
# registrations (module level, kept in a skeleton anyway).
_LINES = (lazy_compile(rb"__main__"), lazy_compile(rb"pytest\s*\.\s*main"), CI_LINE)

RULE = Rule(
    code="PY013",
    name="bare-pytest-main",
    language="python",
    summary="registered test whose `__main__` block drops `pytest.main`'s exit code or runs nothing",
    # A pytest.main call needs a main guard; a missing main block needs a registration.
    triggers=(b"__main__", b"register_"),
    untriggered_when=when_ci_configured,  # (`ci-registration-functions`: other names)
    path_filter=may_be_collected_test,
    partial_lines=_LINES,
    needs_tree=False,
)


def check(ctx) -> None:
    if not collected_test(ctx):
        return
    data = ctx.data
    has_guard = b"__main__" in data
    blocks = None  # (not looked for yet)
    if has_guard and not _all_wrapped(data):
        blocks = _main_blocks(ctx)
        if blocks is not None:
            found = [(c, off) for block, off in blocks for c in bare_pytest_main_calls(block)]
        elif ctx.tree is not None:
            found = [(c, 0) for c in bare_pytest_main_calls(ctx.tree)]
        else:
            found = ()
        for call, offset in found:
            ctx.report(
                *snippet_span(ctx, call, offset),
                "`pytest.main(...)` drops its exit code: `python3 file.py` exits 0 when "
                "tests fail; use `sys.exit(pytest.main(...))`",
            )
    if ci_names(ctx.settings).named_in(data):
        _check_main_entry(ctx, has_guard, blocks)


def _all_wrapped(data: bytes) -> bool:
    """Is every `pytest.main` of the file the argument of `sys.exit(` or `raise SystemExit(`
    written just before it (none to report, nothing parsed)? True where there is none."""
    for m in _PYTEST_MAIN.finditer(data):
        before = data[max(0, m.start() - 17) : m.start()]
        if not (before.endswith(b"sys.exit(") or before.endswith(b"raise SystemExit(")):
            return False
    return True


# The collector's main block as it is mostly written, and a line of its body that starts with
# a call (`unittest.main()`, `sys.exit(...)`): the file has a main entry, nothing is parsed.
_PLAIN_ENTRY = lazy_compile(
    rb"if[ \t(]*__name__[ \t]*==[ \t]*(['\"])__main__\1[ \t)]*:[ \t]*(?:#[^\n]*)?\r?\n"
    rb"(?:[ \t]*(?:#[^\n]*)?\r?\n)*[ \t]+[A-Za-z_][\w.]*\("
)


def _plain_entry(ctx) -> bool:
    """Does a line naming `__main__` begin the collector's main block, as mostly written?"""
    data = ctx.data
    at = data.find(b"__main__")
    while at >= 0:
        begin = data.rfind(b"\n", 0, at) + 1
        if _PLAIN_ENTRY.match(data, begin) is not None:
            return True
        at = data.find(b"__main__", at + 8)
    return False


def _check_main_entry(ctx, has_guard: bool, blocks) -> None:
    found = registrations(ctx)
    if not found:
        return  # (no registration, or unparsable: the engine warns about it)
    enabled = [(call, offset) for call, offset in found if is_enabled(call)]
    if not enabled:
        return
    if has_guard:
        if _plain_entry(ctx):
            return
        if blocks is None:
            blocks = _main_blocks(ctx)
        if blocks is not None:
            if any(is_main_entry(block.body[0]) for block, _ in blocks):
                return
        else:
            tree = ctx.tree
            if tree is None or any(is_main_entry(s) for s in tree.body):
                return
        # (A skeleton leaves out the functions defined in a main block, where the collector
        # counts the calls too: the whole file says.)
        try:
            whole = parse(ctx.data)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return
        if any(is_main_entry(s) for s in whole.body):
            return
    call, offset = enabled[0]
    ctx.report(
        *snippet_span(ctx, call.func, offset),
        'registered test without an `if __name__ == "__main__":` block that calls '
        "something: SGLang's CI collector rejects it (`python3 file.py` would run nothing); "
        'add a module-level `if __name__ == "__main__":` block calling '
        "`sys.exit(pytest.main([__file__]))`",
    )


# The first line after a block that starts a statement at column 0 (the block's end).
_NEXT_STATEMENT = lazy_compile(rb"\n[^ \t\r\n#\f]")
_IF = lazy_compile(rb"if[ \t(]")


def _main_blocks(ctx):
    """The module-level `if` statements whose first line names `__main__`, each parsed alone
    from its lines: (module of the statement, line offset of its snippet). None where that
    does not hold every mention of `__main__` and of `pytest.main` (a guard in a function, a
    condition over several lines, a block that does not parse alone): the file is parsed
    then."""
    data = ctx.data
    lines = LineSearch(data)  # (the lines around the mentions only: no list of every line)
    blocks = []
    spans = []
    at = data.find(b"__main__")
    while at >= 0:
        begin = lines.begin(at)
        if not _IF.match(data, begin):
            return None  # (not on the first line of a module-level `if`)
        nxt = _NEXT_STATEMENT.search(data, at)
        end = nxt.start() + 1 if nxt is not None else len(data)
        if _inside_string(ctx, lines, begin):
            return None
        try:
            module = parse(data[begin:end])
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return None
        if len(module.body) != 1 or not isinstance(module.body[0], ast.If):
            return None
        blocks.append((module, lines.number(begin)))
        spans.append((begin, end))
        at = data.find(b"__main__", end)
        # (a later mention inside this block: the statement already holds it)
    for m in _PYTEST_MAIN.finditer(data):
        if not any(b <= m.start() < e for b, e in spans):
            return None
    return blocks


def _inside_string(ctx, lines, begin: int) -> bool:
    """Does the line starting at offset `begin` begin inside a triple-quoted string?
    `lines`: a LineSearch of the file."""
    spans = ctx.__dict__.get("_string_spans")
    if spans is None:
        from kernlint.python.skeleton import string_spans

        spans = ctx.__dict__["_string_spans"] = string_spans(ctx.data, lines.begin)
    return any(o < begin and (c is None or begin <= c) for o, c in spans)


def bare_pytest_main_calls(tree):
    """The `pytest.main(...)` calls SGLang's `check_no_bare_pytest_main` hook rejects: in the
    body of an `if __name__ == "__main__":` (either order) anywhere, outside functions defined
    there, whose result is neither the argument of an exit call nor assigned to a name the
    block's exit calls are given."""
    for node in ast.walk(tree):
        if not isinstance(node, ast.If) or not _is_main_guard(node.test):
            continue
        nodes = [n for statement in node.body for n in _runtime_nodes(statement)]
        parents = {id(child): parent for parent in nodes for child in ast.iter_child_nodes(parent)}
        exited = {
            arg.id
            for n in nodes
            if _is_exit_call(n, parents)
            for arg in n.args
            if isinstance(arg, ast.Name)
        }
        for n in nodes:
            if _is_pytest_main(n) and not _propagates(n, parents, exited):
                yield n


def _is_main_guard(node) -> bool:
    if not isinstance(node, ast.Compare) or len(node.ops) != 1:
        return False
    if not isinstance(node.ops[0], ast.Eq):
        return False
    sides = [node.left, *node.comparators]
    return any(isinstance(s, ast.Name) and s.id == "__name__" for s in sides) and any(
        isinstance(s, ast.Constant) and s.value == "__main__" for s in sides
    )


def _is_pytest_main(node) -> bool:
    if not isinstance(node, ast.Call):
        return False
    func = node.func
    return (
        isinstance(func, ast.Attribute)
        and func.attr == "main"
        and isinstance(func.value, ast.Name)
        and func.value.id == "pytest"
    )


def _is_exit_call(node, parents) -> bool:
    """`sys.exit(...)`, or a `SystemExit(...)` that is raised."""
    if not isinstance(node, ast.Call):
        return False
    func = node.func
    if (
        isinstance(func, ast.Attribute)
        and func.attr == "exit"
        and isinstance(func.value, ast.Name)
        and func.value.id == "sys"
    ):
        return True
    parent = parents.get(id(node))
    return (
        isinstance(func, ast.Name)
        and func.id == "SystemExit"
        and isinstance(parent, ast.Raise)
        and parent.exc is node
    )


def _assigned_names(node) -> list[str]:
    if isinstance(node, ast.Assign):
        return [t.id for t in node.targets if isinstance(t, ast.Name)]
    if isinstance(node, (ast.AnnAssign, ast.NamedExpr)):
        return [node.target.id] if isinstance(node.target, ast.Name) else []
    return []


def _propagates(node, parents, exited) -> bool:
    parent = parents.get(id(node))
    if isinstance(parent, ast.Call) and node in parent.args and _is_exit_call(parent, parents):
        return True
    return any(name in exited for name in _assigned_names(parent))


_DEFINITIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)


def _runtime_nodes(node):
    """`node` and what it holds, the bodies of the functions and classes it defines aside."""
    stack = [node]
    while stack:
        n = stack.pop()
        yield n
        if not isinstance(n, _DEFINITIONS):
            stack.extend(ast.iter_child_nodes(n))
