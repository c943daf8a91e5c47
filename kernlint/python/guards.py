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
gate or reads `SGLANG_USE_AITER`. The `aiter-gates` setting replaces `_use_aiter` and its
naming convention by the names it lists (`Guards.use_gates`), each matched as a name, an
attribute (`envs.USE_X`) or a call of either (`use_x()`).
"""

from __future__ import annotations

import ast
from bisect import bisect_left, bisect_right
from functools import cached_property

from ..lazyre import lazy_compile
from . import child_nodes
from . import walk as _walk

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
GATE_PATTERN = lazy_compile(r"^_?(use|USE)_(aiter|AITER)(_\w*)?$")
_NO_NAME = lazy_compile(r"(?!)")  # (configured gates: no naming convention)
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
    for sub in _walk(node):
        if isinstance(sub, ast.Constant) and sub.value == AITER_ENV:
            return True
        if isinstance(sub, ast.Attribute) and sub.attr == AITER_ENV:
            return True
    return False


def gate_word(node) -> str | None:
    """The name a configured gate is matched by: `x` in `x`, `a.x`, `x(...)`, `a.x(...)`."""
    if isinstance(node, ast.Call):
        node = node.func
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return None


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


# -- three-valued logic without recursion -------------------------------------------------------
def evaluate(root, expand):
    """The value of a formula over True/False/None (unknown), without recursion (a condition
    may nest as deep as the parser allows). `expand(item)` gives `("value", v)` or
    `("not", item)`, `("and", items)`, `("or", items)`. `and`: False if one is False, True if
    all are True, else None; `or`: the dual; `not None` is None."""
    stack = [(root, None)]
    values: list = []
    while stack:
        item, pending = stack.pop()
        if pending is not None:  # combine the values of `pending[1]` operands
            op, count = pending
            args = values[len(values) - count :]
            del values[len(values) - count :]
            values.append(_combine(op, args))
            continue
        op, arg = expand(item)
        if op == "value":
            values.append(arg)
            continue
        operands = (arg,) if op == "not" else arg
        stack.append((None, (op, len(operands))))
        stack.extend((o, None) for o in reversed(operands))
    return values[0]


def _combine(op: str, args: list):
    if op == "not":
        return None if args[0] is None else not args[0]
    if op == "and":
        if False in args:
            return False
        return True if all(v is True for v in args) else None
    if True in args:
        return True
    return False if all(v is False for v in args) else None


class _Step:
    """One step on the way from the module down to a statement: `block` (the list in field
    `field` of `owner`) holds the statement at `index`; `up` is the step above (None at the
    module). Steps are shared by every node located below them."""

    __slots__ = ("owner", "field", "block", "index", "up")

    def __init__(self, owner, field, block, index, up) -> None:
        self.owner = owner
        self.field = field
        self.block = block
        self.index = index
        self.up = up

    def __iter__(self):  # (owner, field, block, index), the old chain items
        return iter((self.owner, self.field, self.block, self.index))


def _steps(step) -> list:
    """The steps from the module down to `step`, outermost first."""
    out = []
    while step is not None:
        out.append(step)
        step = step.up
    out.reverse()
    return out


class Guards:
    """Conditions around nodes of one module's tree. Every query costs the depth of the node
    (or less): what the statements around it contribute is computed once per block and per
    step, shared by all the nodes below it (no query scans a block's earlier statements)."""

    def __init__(self, tree: ast.Module) -> None:
        self.tree = tree
        self._located: dict = {}
        self._spans: dict = {}
        self._exits: dict = {}
        self._parents: dict = {}
        self._exit_memo: dict = {}
        self._step_memo: dict = {}
        self._owner_memo: dict = {}
        self._cuda_memo: dict = {}
        self._finger = None  # the last step located: the next node is usually near it

    # The configured aiter gates (`aiter-gates`), or None: SGLang's `_use_aiter` and the names
    # following its convention (GATE_NAME, GATE_PATTERN).
    gate_names: frozenset[str] | None = None
    gate_pattern = GATE_PATTERN

    def use_gates(self, names) -> None:
        """Judge aiter gates by the configured `names` (the `aiter-gates` setting) instead of
        `_use_aiter` and its naming convention; what was judged by other gates is forgotten."""
        names = frozenset(names)
        if names == self.gate_names:
            return
        self.gate_names = names
        self.gate_pattern = _NO_NAME
        self.__dict__.pop("gates", None)
        for memo in (self._cuda_memo, self._exit_memo, self._step_memo):
            memo.clear()

    @cached_property
    def parent(self) -> dict[int, ast.AST]:
        parent: dict[int, ast.AST] = {}
        stack = [self.tree]
        while stack:
            node = stack.pop()
            kids = child_nodes(node)
            for child in kids:
                parent[id(child)] = node
            stack.extend(kids)
        return parent

    # -- module-level aiter gates -----------------------------------------------------------
    @cached_property
    def gates(self) -> frozenset[str]:
        """`_use_aiter` (or the configured gates) and every module-level name assigned from an
        expression that implies a gate or reads the aiter environment variable (to a fixed
        point: an assignment is judged again only when a name it reads becomes a gate)."""
        gates = {GATE_NAME} if self.gate_names is None else set(self.gate_names)
        assigns = []
        for stmt, _ in module_level(self.tree):
            if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
                target = stmt.targets[0]
                if isinstance(target, ast.Name):
                    assigns.append((target.id, stmt.value))
        readers: dict[str, list[int]] = {}  # name -> the assignments whose value reads it
        for k, (_name, value) in enumerate(assigns):
            for sub in _walk(value):
                if isinstance(sub, ast.Name):
                    readers.setdefault(sub.id, []).append(k)
        todo = list(range(len(assigns)))
        todo.reverse()
        while todo:
            k = todo.pop()
            name, value = assigns[k]
            if name in gates:
                continue
            if self._implies_gate(value, True, gates) or self._env_conjunct(value):
                gates.add(name)
                todo.extend(reversed(readers.get(name, ())))
        return frozenset(gates)

    @staticmethod
    def _env_conjunct(value) -> bool:
        """`get_bool_env_var("SGLANG_USE_AITER") and ...`: one conjunct reads the env var."""

        def expand(v):
            if isinstance(v, ast.BoolOp) and isinstance(v.op, ast.And):
                return "or", v.values
            return "value", reads_aiter_env(v) and not isinstance(v, ast.BoolOp)

        return bool(evaluate(value, expand))

    def _implies_gate(self, expr, polarity: bool, gates) -> bool:
        pattern = self.gate_pattern
        configured = self.gate_names

        def expand(item):
            e, pol = item
            if isinstance(e, ast.UnaryOp) and isinstance(e.op, ast.Not):
                return "or", ((e.operand, not pol),)
            if isinstance(e, ast.BoolOp):
                if isinstance(e.op, ast.And) and pol:
                    return "or", [(v, True) for v in e.values]
                if isinstance(e.op, ast.Or) and not pol:
                    return "or", [(v, False) for v in e.values]
                if isinstance(e.op, ast.Or) and pol:
                    return "and", [(v, True) for v in e.values]
                return "value", False
            if isinstance(e, ast.Name) and pol:
                return "value", e.id in gates or bool(pattern.match(e.id))
            if configured is not None and pol and isinstance(e, (ast.Attribute, ast.Call)):
                return "value", gate_word(e) in configured
            return "value", False

        return bool(evaluate((expr, polarity), expand))

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

        def expand(e):
            if isinstance(e, ast.UnaryOp) and isinstance(e.op, ast.Not):
                return "not", e.operand
            if isinstance(e, ast.BoolOp):
                return ("and" if isinstance(e.op, ast.And) else "or"), e.values
            return "value", self._leaf_value(e, others)

        return evaluate(expr, expand)

    def _leaf_value(self, expr, others: bool):
        if isinstance(expr, ast.Name):
            if expr.id in HIP_NAMES or expr.id in self.gates or self.gate_pattern.match(expr.id):
                return False
            if expr.id in OTHER_NAMES:
                return False if others else None
            if expr.id in CUDA_NAMES:
                return True
            return None
        if self.gate_names is not None and gate_word(expr) in self.gate_names:
            return False
        name = _call_name(expr)
        if name in HIP_CALLS:
            return False
        if name in OTHER_CALLS:
            return False if others else None
        if name in CUDA_CALLS:
            return True
        return None

    def _cuda_value_of(self, test, others: bool):
        """`cuda_value` of a condition of the tree, computed once."""
        key = (id(test), others)
        found = self._cuda_memo.get(key, self)
        if found is self:
            found = self._cuda_memo[key] = self.cuda_value(test, others)
        return found

    # -- paths --------------------------------------------------------------------------------
    # Paths are found by descending from the module to the node by source position (no
    # parent map of the whole tree): cost is the depth of the node, times the logarithm of
    # the blocks along the way. The descent starts from the deepest statement of the previous
    # one that holds the node (nodes are mostly asked about in source order).
    def locate(self, node):
        """(step, stmt): the innermost statement containing `node` (the node itself if it is
        a statement) and the step into it (a `_Step`, whose `up` steps lead to the module;
        None for the module itself)."""
        key = id(node)
        cached = self._located.get(key)
        if cached is not None:
            return cached
        target = _span(node)
        start = (target[0], target[1])
        step = self._finger
        while step is not None and not _contains(
            self._block_spans(step.block)[1][step.index], target
        ):
            step = step.up
        current = self.tree if step is None else step.block[step.index]
        while current is not node:
            found = None
            for field, block in _child_blocks(current):
                # Statements of a block are ordered and disjoint: only the last one starting
                # at or before the node can contain it.
                starts, spans = self._block_spans(block)
                i = bisect_right(starts, start) - 1
                if i >= 0 and _contains(spans[i], target):
                    found = _Step(current, field, block, i, step)
                    break
            if found is None:
                break
            step = found
            current = found.block[found.index]
        self._finger = step
        result = (step, current)
        self._located[key] = result
        return result

    def chain(self, node) -> list:
        """The statements enclosing `node`, outermost first, as (owner, field, block, index)."""
        step, _ = self.locate(node)
        return [tuple(s) for s in _steps(step)]

    def _block_spans(self, block):
        key = id(block)
        found = self._spans.get(key)
        if found is None:
            spans = [_span(stmt) for stmt in block]
            found = ([(sp[0], sp[1]) for sp in spans], spans)
            self._spans[key] = found
        return found

    def _block_exits(self, block):
        """(indexes, literals) of the statements of a block after which a condition holds:
        `if c: return` gives (c, False), `assert c` gives (c, True)."""
        key = id(block)
        found = self._exits.get(key)
        if found is None:
            idx, lits = [], []
            for i, prev in enumerate(block):
                if (
                    isinstance(prev, ast.If)
                    and prev.body
                    and isinstance(prev.body[-1], _EXITS)
                    and not prev.orelse
                ):
                    idx.append(i)
                    lits.append((prev.test, False))
                elif isinstance(prev, ast.Assert):
                    idx.append(i)
                    lits.append((prev.test, True))
            found = self._exits[key] = (idx, lits)
        return found

    def local_parents(self, stmt) -> dict[int, ast.AST]:
        """Parent map of a statement's own expressions (cached per statement)."""
        key = id(stmt)
        found = self._parents.get(key)
        if found is None:
            found = self._parents[key] = _local_parents(stmt)
        return found

    def _local_ancestors(self, node, stmt):
        """The expressions around `node` inside its innermost statement, innermost first."""
        if stmt is node:
            return
        local = self.local_parents(stmt)
        n = local.get(id(node))
        while n is not None:
            yield n
            n = local.get(id(n))

    def ancestors(self, node) -> list:
        """Enclosing nodes, innermost first: expressions inside the innermost statement, that
        statement, then the statements (and the module) around it."""
        step, stmt = self.locate(node)
        out = list(self._local_ancestors(node, stmt))
        while step is not None:
            out.append(step.owner)
            step = step.up
        return out

    def first_ancestor(self, node, key, pred):
        """The innermost enclosing node `n` (as `ancestors` lists them) with `pred(n, field)`
        true, or None; `field` is the owner's field holding the way down (None inside the
        innermost statement). `key` names `pred`: what the statements around contribute is
        remembered under it, so the same `key` must always come with the same `pred`."""
        step, stmt = self.locate(node)
        for n in self._local_ancestors(node, stmt):
            if pred(n, None):
                return n
        return self._up_first(step, key, lambda s: s.owner if pred(s.owner, s.field) else None)

    def _up_first(self, step, key, own):
        """The first non-None `own(s)` for the steps from `step` up to the module, each step's
        answer remembered under `key` (so a step is judged once for all the nodes below it)."""
        memo = self._step_memo.setdefault(key, {})
        todo = []
        result = None
        s = step
        while s is not None:
            k = (id(s.block), s.index)
            if k in memo:
                result = memo[k]
                break
            todo.append(s)
            s = s.up
        for s in reversed(todo):
            mine = own(s)
            if mine is not None:
                result = mine
            memo[(id(s.block), s.index)] = result
        return result

    def enclosing_function(self, node):
        return self.first_ancestor(node, "function", lambda n, _f: isinstance(n, _FUNCTIONS))

    def path(self, node) -> list[tuple[ast.AST, bool]]:
        """(condition, polarity) literals that hold whenever `node` runs, innermost first."""
        step, stmt = self.locate(node)
        out = list(self._local_literals(node, stmt))
        while step is not None:
            # Early exits earlier in the same block: `if not _use_aiter: return`.
            idx, lits = self._block_exits(step.block)
            for j in range(bisect_left(idx, step.index) - 1, -1, -1):
                out.append(lits[j])
            if isinstance(step.owner, ast.If):
                out.append((step.owner.test, step.field == "body"))
            step = step.up
        return out

    def _local_literals(self, node, stmt):
        """Inside the innermost statement: `a if c else b`, `c and f()`."""
        if stmt is node:
            return
        local = self.local_parents(stmt)
        child = node
        n = local.get(id(node))
        while n is not None:
            if isinstance(n, ast.IfExp):
                if child is n.body:
                    yield (n.test, True)
                elif child is n.orelse:
                    yield (n.test, False)
            elif isinstance(n, ast.BoolOp) and isinstance(n.op, ast.And):
                for v in n.values:
                    if v is child:
                        break
                    yield (v, True)
            child = n
            n = local.get(id(n))

    def first_on_path(self, node, key, pred):
        """The first literal (test, polarity) of `path(node)` with `pred(test, polarity)` true,
        or None, without listing the path: what each block and step contributes is remembered
        under `key` (the same `key` must always come with the same `pred`)."""
        step, stmt = self.locate(node)
        for test, pol in self._local_literals(node, stmt):
            if pred(test, pol):
                return (test, pol)

        def own(s):
            lit = self._exit_first(s.block, s.index, key, pred)
            if lit is None and isinstance(s.owner, ast.If):
                lit = (s.owner.test, s.field == "body")
                if not pred(*lit):
                    lit = None
            return lit

        return self._up_first(step, ("path", key), own)

    def _exit_first(self, block, index, key, pred):
        """The closest early-exit literal before `index` in `block` with `pred` true."""
        idx, lits = self._block_exits(block)
        j = bisect_left(idx, index) - 1
        if j < 0:
            return None
        mkey = (key, id(block))
        best = self._exit_memo.get(mkey)
        if best is None:
            best, last = [], None
            for lit in lits:
                if pred(*lit):
                    last = lit
                best.append(last)
            self._exit_memo[mkey] = best
        return best[j]

    def aiter_gated(self, node) -> bool:
        return self.first_on_path(node, "aiter", self.implies_aiter) is not None

    def hip_only(self, node) -> bool:
        """Is a HIP check (alone or and-ed) a condition that holds on the node's path?"""
        return self.first_on_path(node, "hip", lambda t, pol: pol and hip_test(t)) is not None

    def conditioned(self, node) -> bool:
        """Does any condition hold on the node's path (is `path(node)` non-empty)?"""
        return self.first_on_path(node, "any", lambda _t, _p: True) is not None

    def on_cuda(self, node, others: bool = True):
        """Can `node` run on CUDA? False if a condition on its path is false on CUDA."""
        value = self._cuda_value_of

        def false_on_cuda(test, pol):
            v = value(test, others)
            return v is not None and v != pol

        if self.first_on_path(node, ("false", others), false_on_cuda) is not None:
            return False
        unknown = self.first_on_path(
            node, ("unknown", others), lambda t, _p: value(t, others) is None
        )
        return None if unknown is not None else True

    def in_import_guard(self, node) -> bool:
        """Inside `try:` whose handlers catch ImportError (ModuleNotFoundError, or a superclass:
        Exception, BaseException, a bare `except:`)."""
        return self.in_try_catching(node, _IMPORT_ERRORS)

    def in_try_catching(self, node, names: frozenset[str]) -> bool:
        """Inside the `try:` body of a statement with a bare handler or one catching `names`."""
        step, _ = self.locate(node)

        def own(s):
            if isinstance(s.owner, ast.Try) and s.field == "body":
                for h in s.owner.handlers:
                    if h.type is None or _handler_names(h.type) & names:
                        return True
            return None

        return self._up_first(step, ("try", names), own) is not None

    def statements_at_line(self, line: int) -> list:
        """The innermost statements whose lines include `line`, in order: one, or several on
        one line (`x = 1; import aiter`); none outside any statement."""
        return _statements_at_line(self.tree, line)

    def statements_at_lines(self, lines: list[int]) -> dict[int, list]:
        """`statements_at_line` for each of the sorted `lines`, in one walk."""
        return statements_at_lines(self.tree, lines)


_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)


def _statements_at_line(owner, line: int) -> list:
    return statements_at_lines(owner, [line]).get(line, [])


def statements_at_lines(owner, lines: list[int]) -> dict[int, list]:
    """For each of the sorted `lines`, the innermost statements under `owner` whose lines
    include it, in order (lines outside any statement are left out). One walk down the tree
    for all the lines: a statement is visited once, whatever the number of lines in it (an
    `elif` chain thousands long costs its length, not its length squared), and blocks are
    searched by line (bisect), not statement by statement. No recursion."""
    out: dict[int, list] = {}
    if not lines:
        return out
    stack = [(owner, 0, len(lines))]  # (node, lo, hi): lines[lo:hi] are in its range
    while stack:
        node, lo, hi = stack.pop()
        children = []
        for _field, block in _child_blocks(node):
            _block_children(block, lines, lo, hi, children)
        if node is not owner:
            # The lines no child statement holds are this statement's.
            covered = sorted((j, b) for _st, j, b in children)
            j = lo
            for c0, c1 in covered:
                for k in range(j, c0):
                    out.setdefault(lines[k], []).append(node)
                j = max(j, c1)
            for k in range(j, hi):
                out.setdefault(lines[k], []).append(node)
        stack.extend(reversed(children))
    return out


def _block_children(block, lines, lo, hi, children) -> None:
    """Append (stmt, j, b) for each statement of `block` holding some of `lines[lo:hi]`
    (those are `lines[j:b]`), jumping over statements and lines between them."""
    j = lo
    i = bisect_left(block, lines[lo], key=_end_line)
    n = len(block)
    while j < hi and i < n:
        first, last = _stmt_lines(block[i])
        line = lines[j]
        if last < line:  # the statement ends before the next line: jump to the one holding it
            i = bisect_left(block, line, i + 1, key=_end_line)
            continue
        if first > line:  # lines before the statement: none of this block's
            j = bisect_left(lines, first, j, hi)
            continue
        b = bisect_right(lines, last, j, hi)
        children.append((block[i], j, b))
        i += 1
        if i < n:  # (the next statement may start on this one's last line)
            j = bisect_left(lines, _stmt_lines(block[i])[0], j, hi)


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
        for child in child_nodes(n):
            if isinstance(child, ast.stmt) or isinstance(child, ast.ExceptHandler):
                continue
            parents[id(child)] = n
            stack.append(child)
    return parents


def _handler_names(t) -> set[str]:
    out: set[str] = set()
    stack = [t]
    while stack:
        t = stack.pop()
        if isinstance(t, ast.Tuple):
            stack.extend(t.elts)
        elif isinstance(t, ast.Name):
            out.add(t.id)
        elif isinstance(t, ast.Attribute):
            out.add(t.attr)
    return out


class Literals:
    """The (condition, polarity) literals that hold for a module-level statement, outermost
    first, as a shared linked list: each statement adds at most one literal to the list of
    the statements before it (so listing them all costs nothing until they are iterated)."""

    __slots__ = ("literal", "up")

    def __init__(self, literal, up) -> None:
        self.literal = literal
        self.up = up

    def __iter__(self):
        out = []
        node = self
        while node is not None and node.literal is not None:
            out.append(node.literal)
            node = node.up
        return reversed(out)

    def __len__(self) -> int:
        return sum(1 for _ in self)

    def __bool__(self) -> bool:
        return self.literal is not None

    def all_hold(self, pred, memo: dict) -> bool:
        """`all(pred(test, pol) for test, pol in self)`, each list's answer kept in `memo`
        (keyed by the lists themselves, which share their tails)."""
        todo = []
        node = self
        result = True
        while node is not None and node.literal is not None:
            found = memo.get(node)
            if found is not None:
                result = found
                break
            todo.append(node)
            node = node.up
        for node in reversed(todo):
            result = result and bool(pred(*node.literal))
            memo[node] = result
        return result


_NO_LITERALS = Literals(None, None)


def module_level(tree):
    """Statements that run when the module is imported, with the (condition, polarity)
    literals that hold for each (a `Literals`, outermost first) and whether it is inside a
    `try:` catching ImportError: yields (stmt, (literals, import_guarded)), in source order.
    Function bodies are not entered. (Without recursion: blocks nest as deep as the parser
    allows.)"""
    # A frame: [block, next index, literals before the block's early exits, guarded]
    stack = [[tree.body, 0, _NO_LITERALS, False]]
    while stack:
        frame = stack[-1]
        block, i, here, guarded = frame
        if i >= len(block):
            stack.pop()
            continue
        stmt = block[i]
        frame[1] = i + 1
        yield stmt, (here, guarded)
        children = []
        if isinstance(stmt, ast.If):
            children.append((stmt.body, Literals((stmt.test, True), here), guarded))
            children.append((stmt.orelse, Literals((stmt.test, False), here), guarded))
            if stmt.body and isinstance(stmt.body[-1], _EXITS) and not stmt.orelse:
                frame[2] = Literals((stmt.test, False), here)  # for the statements after it
        elif isinstance(stmt, ast.Try) or type(stmt).__name__ == "TryStar":
            catches = any(
                h.type is None or _handler_names(h.type) & _IMPORT_ERRORS for h in stmt.handlers
            )
            children.append((stmt.body, here, guarded or catches))
            children.extend((h.body, here, guarded) for h in stmt.handlers)
            children.append((stmt.orelse, here, guarded))
            children.append((stmt.finalbody, here, guarded))
        elif isinstance(stmt, (ast.With, ast.AsyncWith, ast.ClassDef)):
            children.append((stmt.body, here, guarded))
        elif isinstance(stmt, (ast.For, ast.While)):
            children.append((stmt.body, here, guarded))
            children.append((stmt.orelse, here, guarded))
        for child_block, lits, g in reversed(children):
            if child_block:
                stack.append([child_block, 0, lits, g])


# A handler catching any of these catches a failed import (the superclasses of ImportError).
_IMPORT_ERRORS = frozenset({"ImportError", "ModuleNotFoundError", "Exception", "BaseException"})
