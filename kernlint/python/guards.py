"""Platform guards in Python: which branches run on CUDA, which only when aiter is on.

SGLang runs one Python tree on CUDA and on ROCm. Code for ROCm sits under guards such as
`if _is_hip:`, `if _use_aiter:` (`_use_aiter = get_bool_env_var("SGLANG_USE_AITER") and
_is_hip`), and derived flags (`_use_aiter_gfx95 = _use_aiter and _is_gfx95_supported`).

This module answers two questions about any node, from the `if` statements around it (through
`and`, `or`, `not`, `elif`, `else`, nested ifs, and early exits such as
`if not _use_aiter: return` earlier in the same block):

* `aiter_gated(node)`: does the node run only when the aiter flag is true?
* `on_cuda(node)`: can the node run on a CUDA machine (`_is_hip` false, `_is_cuda` true, the
  aiter environment variable unset)? True, False, or None (unknown: a condition on something
  else).

Recognized spellings: `_is_hip`, `is_hip()`, `_is_rocm`, `is_rocm()`, `current_platform.is_rocm()`
(ROCm); `_is_cuda`, `is_cuda()`, `current_platform.is_cuda()` (CUDA); `_is_npu`, `_is_xpu`,
`_is_cpu`, `_is_mps`, `_is_musa`, `_is_hpu` and their `is_*()` calls (other platforms, false on
CUDA); aiter gates: `_use_aiter`,
names following its convention (`_use_aiter_*`, `USE_AITER*`, e.g. `_use_aiter_gfx95` imported
from another module), and every module-level name assigned from an expression that implies a
gate or reads `SGLANG_USE_AITER`.
"""

from __future__ import annotations

import ast
import re
from bisect import bisect_left, bisect_right
from functools import cached_property

HIP_NAMES = frozenset({"_is_hip", "_is_rocm", "_IS_HIP", "_IS_ROCM"})
HIP_CALLS = frozenset({"is_hip", "is_rocm"})
CUDA_NAMES = frozenset({"_is_cuda", "_IS_CUDA"})
CUDA_CALLS = frozenset({"is_cuda"})
# Other platforms: false on a CUDA machine.
OTHER_NAMES = frozenset({"_is_npu", "_is_xpu", "_is_cpu", "_is_mps", "_is_musa", "_is_hpu"})
OTHER_CALLS = frozenset({"is_npu", "is_xpu", "is_cpu", "is_mps", "is_musa", "is_hpu"})
AITER_ENV = "SGLANG_USE_AITER"
GATE_NAME = "_use_aiter"
# The naming convention for aiter flags: `_use_aiter`, `_use_aiter_gfx95`, `USE_AITER`, ...
GATE_PATTERN = re.compile(r"^_?(use|USE)_(aiter|AITER)(_\w*)?$")
_EXITS = (ast.Return, ast.Raise, ast.Continue, ast.Break)


def _call_name(node) -> str | None:
    if not isinstance(node, ast.Call) or node.args or node.keywords:
        return None
    fn = node.func
    if isinstance(fn, ast.Name):
        return fn.id
    if isinstance(fn, ast.Attribute):
        return fn.attr
    return None


def reads_aiter_env(node) -> bool:
    """Does an expression read SGLANG_USE_AITER (get_bool_env_var, os.environ, os.getenv, envs)?"""
    for sub in ast.walk(node):
        if isinstance(sub, ast.Constant) and sub.value == AITER_ENV:
            return True
        if isinstance(sub, ast.Attribute) and sub.attr == AITER_ENV:
            return True
    return False


def is_hip_check(node) -> bool:
    if isinstance(node, ast.Name):
        return node.id in HIP_NAMES
    if isinstance(node, ast.Attribute) and node.attr in HIP_CALLS:
        return True  # `get_platform().is_hip` (a property)
    return _call_name(node) in HIP_CALLS


def hip_test(test) -> bool:
    """Is a condition a HIP check, alone or as one operand of an `and`?"""
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And):
        return any(is_hip_check(v) for v in test.values)
    return is_hip_check(test)


class Guards:
    def __init__(self, tree: ast.Module) -> None:
        self.tree = tree

    @cached_property
    def parent(self) -> dict[int, ast.AST]:
        parent: dict[int, ast.AST] = {}
        for node in ast.walk(self.tree):
            for child in ast.iter_child_nodes(node):
                parent[id(child)] = node
        return parent

    # -- module-level aiter gates -----------------------------------------------------------
    @cached_property
    def gates(self) -> frozenset[str]:
        gates = {GATE_NAME}
        assigns = []
        for stmt, _ in module_level(self.tree):
            if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
                target = stmt.targets[0]
                if isinstance(target, ast.Name):
                    assigns.append((target.id, stmt.value))
        changed = True
        while changed:
            changed = False
            for name, value in assigns:
                if name in gates:
                    continue
                if self._implies_gate(value, True, gates) or self._env_conjunct(value):
                    gates.add(name)
                    changed = True
        return frozenset(gates)

    @staticmethod
    def _env_conjunct(value) -> bool:
        """`get_bool_env_var("SGLANG_USE_AITER") and ...`: one conjunct reads the env var."""
        if isinstance(value, ast.BoolOp) and isinstance(value.op, ast.And):
            return any(Guards._env_conjunct(v) for v in value.values)
        return reads_aiter_env(value) and not isinstance(value, ast.BoolOp)

    def _implies_gate(self, expr, polarity: bool, gates) -> bool:
        if isinstance(expr, ast.UnaryOp) and isinstance(expr.op, ast.Not):
            return self._implies_gate(expr.operand, not polarity, gates)
        if isinstance(expr, ast.BoolOp):
            if isinstance(expr.op, ast.And) and polarity:
                return any(self._implies_gate(v, True, gates) for v in expr.values)
            if isinstance(expr.op, ast.Or) and not polarity:
                return any(self._implies_gate(v, False, gates) for v in expr.values)
            if isinstance(expr.op, ast.Or) and polarity:
                return all(self._implies_gate(v, True, gates) for v in expr.values)
            return False
        if isinstance(expr, ast.Name) and polarity:
            return expr.id in gates or bool(GATE_PATTERN.match(expr.id))
        return False

    def implies_aiter(self, expr, polarity: bool = True) -> bool:
        return self._implies_gate(expr, polarity, self.gates)

    @cached_property
    def local_functions(self) -> dict[str, ast.AST]:
        """Module-level functions by name."""
        return {
            n.name: n
            for n in self.tree.body
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
        }

    # -- evaluation on a CUDA machine -------------------------------------------------------
    def cuda_value(self, expr, others: bool = True):
        """Three-valued value of a condition on CUDA: True, False or None (unknown).

        others=False: conditions on other platforms (`_is_npu`, ...) count as unknown."""
        if isinstance(expr, ast.UnaryOp) and isinstance(expr.op, ast.Not):
            v = self.cuda_value(expr.operand, others)
            return None if v is None else not v
        if isinstance(expr, ast.BoolOp):
            values = [self.cuda_value(v, others) for v in expr.values]
            if isinstance(expr.op, ast.And):
                if False in values:
                    return False
                return True if all(v is True for v in values) else None
            if True in values:
                return True
            return False if all(v is False for v in values) else None
        if isinstance(expr, ast.Name):
            if expr.id in HIP_NAMES or expr.id in self.gates or GATE_PATTERN.match(expr.id):
                return False
            if expr.id in OTHER_NAMES:
                return False if others else None
            if expr.id in CUDA_NAMES:
                return True
            return None
        name = _call_name(expr)
        if name in HIP_CALLS:
            return False
        if name in OTHER_CALLS:
            return False if others else None
        if name in CUDA_CALLS:
            return True
        return None

    # -- paths --------------------------------------------------------------------------------
    # Paths are found by descending from the module to the node by source position (no
    # parent map of the whole tree): cost is the length of the blocks along the way.
    def locate(self, node):
        """(chain, stmt): the statements enclosing `node`, outermost first, as
        (owner, field, block, index) steps, and the innermost statement containing it."""
        key = id(node)
        cached = self._located.get(key)
        if cached is not None:
            return cached
        chain: list = []
        current = self.tree
        target = _span(node)
        start = (target[0], target[1])
        while current is not node:
            step = None
            for field, block in _child_blocks(current):
                # Statements of a block are ordered and disjoint: only the last one starting
                # at or before the node can contain it.
                starts, spans = self._block_spans(block)
                i = bisect_right(starts, start) - 1
                if i >= 0 and _contains(spans[i], target):
                    step = (current, field, block, i)
                    break
            if step is None:
                break
            chain.append(step)
            current = step[2][step[3]]
        result = (chain, current)
        self._located[key] = result
        return result

    def _block_spans(self, block):
        key = id(block)
        found = self._spans.get(key)
        if found is None:
            spans = [_span(stmt) for stmt in block]
            found = ([(sp[0], sp[1]) for sp in spans], spans)
            self._spans[key] = found
        return found

    @cached_property
    def _spans(self) -> dict:
        return {}

    def local_parents(self, stmt) -> dict[int, ast.AST]:
        """Parent map of a statement's own expressions (cached per statement)."""
        key = id(stmt)
        found = self._parents.get(key)
        if found is None:
            found = self._parents[key] = _local_parents(stmt)
        return found

    @cached_property
    def _parents(self) -> dict:
        return {}

    @cached_property
    def _located(self) -> dict:
        return {}

    def ancestors(self, node) -> list:
        """Enclosing nodes, innermost first: expressions inside the innermost statement, that
        statement, then the statements (and the module) around it."""
        chain, stmt = self.locate(node)
        out = []
        if stmt is not node:
            local = self.local_parents(stmt)
            n = local.get(id(node))
            while n is not None:
                out.append(n)
                n = local.get(id(n))
        for owner, _field, _block, _i in reversed(chain):
            out.append(owner)
        return out

    def enclosing_function(self, node):
        for n in self.ancestors(node):
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                return n
        return None

    def path(self, node) -> list[tuple[ast.AST, bool]]:
        """(condition, polarity) literals that hold whenever `node` runs, innermost first."""
        chain, stmt = self.locate(node)
        out: list[tuple[ast.AST, bool]] = []
        # Inside the innermost statement: `a if c else b`, `c and f()`.
        if stmt is not node:
            local = self.local_parents(stmt)
            child = node
            n = local.get(id(node))
            while n is not None:
                if isinstance(n, ast.IfExp):
                    if child is n.body:
                        out.append((n.test, True))
                    elif child is n.orelse:
                        out.append((n.test, False))
                elif isinstance(n, ast.BoolOp) and isinstance(n.op, ast.And):
                    for v in n.values:
                        if v is child:
                            break
                        out.append((v, True))
                child = n
                n = local.get(id(n))
        for owner, field, block, i in reversed(chain):
            # Early exits earlier in the same block: `if not _use_aiter: return`.
            for prev in reversed(block[:i]):
                if (
                    isinstance(prev, ast.If)
                    and prev.body
                    and isinstance(prev.body[-1], _EXITS)
                    and not prev.orelse
                ):
                    out.append((prev.test, False))
                elif isinstance(prev, ast.Assert):
                    out.append((prev.test, True))
            if isinstance(owner, ast.If):
                out.append((owner.test, field == "body"))
        return out

    def aiter_gated(self, node) -> bool:
        return any(self.implies_aiter(test, pol) for test, pol in self.path(node))

    def on_cuda(self, node, others: bool = True):
        """Can `node` run on CUDA? False if a condition on its path is false on CUDA."""
        unknown = False
        for test, pol in self.path(node):
            v = self.cuda_value(test, others)
            if v is None:
                unknown = True
            elif v != pol:
                return False
        return None if unknown else True

    def in_import_guard(self, node) -> bool:
        """Inside `try:` whose handlers catch ImportError (or ModuleNotFoundError)."""
        return self.in_try_catching(node, _IMPORT_ERRORS)

    def in_try_catching(self, node, names: frozenset[str]) -> bool:
        """Inside the `try:` body of a statement with a bare handler or one catching `names`."""
        chain, _ = self.locate(node)
        for owner, field, _block, _i in chain:
            if isinstance(owner, ast.Try) and field == "body":
                for h in owner.handlers:
                    if h.type is None or _handler_names(h.type) & names:
                        return True
        return False

    def statements_at_line(self, line: int) -> list:
        """The innermost statements whose lines include `line`, in order: one, or several on
        one line (`x = 1; import aiter`); none outside any statement."""
        return _statements_at_line(self.tree, line)


def _statements_at_line(owner, line: int) -> list:
    out = []
    for _field, block in _child_blocks(owner):
        # A block's statements follow each other: those holding `line` start at the first
        # one that ends on or after it.
        i = bisect_left(block, line, key=_end_line)
        while i < len(block) and _stmt_lines(block[i])[0] <= line:
            stmt = block[i]
            out.extend(_statements_at_line(stmt, line) or (stmt,))
            i += 1
    return out


def _end_line(stmt) -> int:
    return getattr(stmt, "end_lineno", None) or stmt.lineno


def _stmt_lines(stmt) -> tuple[int, int]:
    start = stmt.lineno
    for d in getattr(stmt, "decorator_list", ()):
        start = min(start, d.lineno)
    return start, getattr(stmt, "end_lineno", None) or stmt.lineno


def _span(node) -> tuple[int, int, int, int]:
    start_line, start_col = node.lineno, node.col_offset
    for d in getattr(node, "decorator_list", ()):
        if (d.lineno, d.col_offset) < (start_line, start_col):
            start_line, start_col = d.lineno, d.col_offset - 1
    end_line = getattr(node, "end_lineno", None) or node.lineno
    end_col = getattr(node, "end_col_offset", None)
    return start_line, start_col, end_line, end_col if end_col is not None else 1 << 30


def _contains(outer, inner) -> bool:
    return (outer[0], outer[1]) <= (inner[0], inner[1]) and (inner[2], inner[3]) <= (
        outer[2],
        outer[3],
    )


def _child_blocks(node):
    """(field, statement list) pairs directly under a node."""
    for field in ("body", "orelse", "finalbody"):
        block = getattr(node, field, None)
        if isinstance(block, list) and block and isinstance(block[0], ast.stmt):
            yield field, block
    for h in getattr(node, "handlers", ()) or ():
        yield "handler", h.body
    for case in getattr(node, "cases", ()) or ():
        yield "case", case.body


def _local_parents(stmt) -> dict[int, ast.AST]:
    """Parent map of a statement's own expressions (not its nested statement blocks)."""
    parents: dict[int, ast.AST] = {}
    stack = [stmt]
    while stack:
        n = stack.pop()
        for child in ast.iter_child_nodes(n):
            if isinstance(child, ast.stmt) or isinstance(child, ast.ExceptHandler):
                continue
            parents[id(child)] = n
            stack.append(child)
    return parents


def _handler_names(t) -> set[str]:
    if isinstance(t, ast.Tuple):
        return set().union(*(_handler_names(e) for e in t.elts))
    if isinstance(t, ast.Name):
        return {t.id}
    if isinstance(t, ast.Attribute):
        return {t.attr}
    return set()


def module_level(tree):
    """Statements that run when the module is imported, with the (condition, polarity)
    literals that hold for each and whether it is inside a `try:` catching ImportError:
    yields (stmt, (literals, import_guarded)). Function bodies are not entered."""

    def walk(block, literals, guarded):
        extra: list = []
        for stmt in block:
            here = literals + extra
            yield stmt, (here, guarded)
            if isinstance(stmt, ast.If):
                yield from walk(stmt.body, here + [(stmt.test, True)], guarded)
                yield from walk(stmt.orelse, here + [(stmt.test, False)], guarded)
                if stmt.body and isinstance(stmt.body[-1], _EXITS) and not stmt.orelse:
                    extra.append((stmt.test, False))
            elif isinstance(stmt, ast.Try) or type(stmt).__name__ == "TryStar":
                catches = any(
                    h.type is None or _handler_names(h.type) & _IMPORT_ERRORS for h in stmt.handlers
                )
                yield from walk(stmt.body, here, guarded or catches)
                for h in stmt.handlers:
                    yield from walk(h.body, here, guarded)
                yield from walk(stmt.orelse, here, guarded)
                yield from walk(stmt.finalbody, here, guarded)
            elif isinstance(stmt, (ast.With, ast.AsyncWith, ast.ClassDef)):
                yield from walk(stmt.body, here, guarded)
            elif isinstance(stmt, (ast.For, ast.While)):
                yield from walk(stmt.body, here, guarded)
                yield from walk(stmt.orelse, here, guarded)

    yield from walk(tree.body, [], False)


_IMPORT_ERRORS = frozenset({"ImportError", "ModuleNotFoundError"})
