"""Reports hand-written checks of a `TensorView`'s shape, dtype, strides or device.

## What it does
In a host function with `tvm::ffi::TensorView` (or `Optional<TensorView>`) parameters, reports a
check (`RuntimeCheck`, `CHECK_HOST`, `TORCH_CHECK`, `assert`, or an `if` that throws or calls
`Panic`) whose condition tests a tensor's rank, size, stride, dtype or device for equality, or
its contiguity. The tensors are parameters, `o.value()` of optional ones, locals bound to them
and loop variables over them.

Not reported, by design (one `TensorMatcher` statement cannot say the same thing):
- bounds and divisibility (`x.size(0) >= n`, `x.stride(0) % 8 == 0`), also beside an equality of
  the same tensor;
- checks of a rank-generic tensor (rank compared with `<`/`>`, or tied to such a tensor);
- in a helper the file calls, dtype, device or contiguity checks of a tensor whose shape it
  never reads;
- checks under an `if` asking whether the tensor is there or where it lives;
- dtype checks against a DLPack code with no C++ type (`kDLBool`);
- `include/sgl_kernel/**`.

Known misses: checks of `tvm::ffi::Tensor` parameters, in lambdas or through macros, and
`numel() == n`.

## Why is this bad?
`TensorMatcher` checks a tensor's shape, dtype, strides and device in one statement, binds the
sizes for later use, and names the tensor and both values on a mismatch. Hand-written checks
drift from the kernel, are easy to forget for one of several tensors, and give worse messages.

## Example
```cpp
namespace sglang {
void launch(tvm::ffi::TensorView x) {
  host::RuntimeCheck(x.dim() == 2, "x must be 2-D");
}
}  // namespace sglang
```

## Use instead
```cpp
namespace sglang {
void launch(tvm::ffi::TensorView x) {
  auto N = host::SymbolicSize{"num_tokens"};
  auto D = host::SymbolicSize{"hidden_size"};
  host::TensorMatcher({N, D}).with_dtype<bf16_t>().verify(x);
}
}  // namespace sglang
```

## Fix safety
No automatic fix: the author chooses the matcher's symbolic names.
"""

from __future__ import annotations

import bisect
import re

from kernlint.cpp.facts import in_abstractions, simple_name
from kernlint.lazyre import lazy_compile
from kernlint.model import Rule

RULE = Rule(
    code="CU008",
    name="manual-tensor-validation",
    language="cpp",
    summary="hand-written TensorView validation instead of `TensorMatcher`",
    severity="warning",
    scope="jit",
    triggers=(b"TensorView",),
)

PROPERTIES = frozenset(
    {
        "shape",
        "size",
        "dim",
        "ndim",
        "dtype",
        "strides",
        "stride",
        "device",
        "is_contiguous",
        "IsContiguous",
    }
)
# Properties that state the tensor's rank or sizes: a tensor none of them is read of has no
# shape the function knows, and a matcher for it would have to invent one.
SHAPE_PROPERTIES = frozenset({"shape", "size", "dim", "ndim", "strides", "stride"})
RANK_PROPERTIES = frozenset({"dim", "ndim"})
# What a bound or divisibility test of a tensor reads (`x.numel() >= n`, `x.size(0) % 8`).
_BOUNDED_PROPERTIES = SHAPE_PROPERTIES | {"numel"}
CHECKS = frozenset(
    {"RuntimeCheck", "CHECK_HOST", "TORCH_CHECK", "assert", "CHECK", "TVM_FFI_ICHECK"}
)
_NOT_EXPRESSIBLE = frozenset({"<", ">", "<=", ">=", "%"})
_RELATIONAL = frozenset({"<", ">", "<=", ">="})
# DLPack type codes `TensorMatcher::with_dtype<T>()` has no C++ type for.
_NO_DTYPE_TRAIT = lazy_compile(rb"\bkDL(?:Bool|OpaqueHandle|Complex)\b")
_NAMESPACES = lazy_compile(r"\b(?:tvm::ffi::|ffi::|const\b)")


def _tensor_kind(type_text: str) -> str | None:
    """ "view" for `tvm::ffi::TensorView`, "optional" for `Optional<TensorView>`, else None."""
    t = "".join(_NAMESPACES.sub("", type_text).split()).rstrip("&")
    if t == "TensorView":
        return "view"
    if t == "Optional<TensorView>":
        return "optional"
    return None


def check(ctx) -> None:
    if in_abstractions(ctx.source.abspath or ctx.source.path):
        return

    facts = ctx.facts
    for func in facts.functions:
        if func.is_kernel or ("device" in func.qualifiers and "host" not in func.qualifiers):
            continue
        tensors: set[str] = set()
        optionals: set[str] = set()
        for p in facts.params_of(func.node):
            kind = _tensor_kind(p.type_text) if p.name else None
            if kind == "view":
                tensors.add(p.name)
            elif kind == "optional":
                optionals.add(p.name)
        if not tensors and not optionals:
            continue
        body = func.node.child_by_field_name("body")
        if body is None or not _may_check(facts.normalized.data, body):
            continue
        # (one walk of the body for both kinds: the calls are the same nodes in the same order)
        nodes = facts.nodes("call_expression", "if_statement", within=body)
        calls = [n for n in nodes if n.type == "call_expression"]
        starts = [n.start_byte for n in calls]
        if optionals:
            tensors |= _optional_aliases(calls, optionals, facts)
        ranges = _range_aliases(body, tensors, facts)
        tensors |= set(ranges)
        usage = None  # (what the function reads of each tensor: built at the first check)
        for node in nodes:
            condition = _checked_condition(node)
            if condition is None:
                continue
            accesses = _accesses(_within(calls, starts, condition), condition, tensors, optionals)
            if not accesses:
                continue
            if usage is None:
                usage = _Usage(calls, tensors, optionals, facts, ranges)
                usage.helper = _is_called(ctx, func)
                usage.body = body
            for tensor, prop, anode in accesses:
                if usage.expressible(tensor, prop, node, condition, anode, facts):
                    ctx.report_node(
                        anode,
                        f"`{tensor}.{prop}()` checked by hand: verify `{tensor}` with "
                        f"`TensorMatcher` (shape, dtype, strides, device in one place)",
                    )
                    break


# Bytes one of which a body holds if it holds a check `_checked_condition` finds: a callee
# named in CHECKS, or `throw` or `Panic(` in the consequence of an `if`.
_CHECK_BYTES = (*sorted(c.encode() for c in CHECKS), b"throw", b"Panic(")


def _may_check(text: bytes, body) -> bool:
    """Can `body` (in `text`, the bytes the tree was parsed from) hold a check? A function
    without one is not walked (105 of the 284 SGLang host functions taking a TensorView)."""
    start, end = body.start_byte, body.end_byte
    return any(text.find(word, start, end) >= 0 for word in _CHECK_BYTES)


def _checked_condition(node):
    if node.type == "call_expression":
        if simple_name(node.child_by_field_name("function")) in CHECKS:
            args = node.child_by_field_name("arguments")
            values = [a for a in args.named_children if a.type != "comment"] if args else []
            return values[0] if values else None  # the condition, not the message
        return None
    # if (cond) { throw ...; } / if (cond) Panic(...);
    consequence = node.child_by_field_name("consequence")
    if consequence is None or node.child_by_field_name("alternative") is not None:
        return None
    text = consequence.text
    if b"throw" in text or b"Panic(" in text:
        return node.child_by_field_name("condition")
    return None


def _property_access(call, tensors, optionals):
    """(tensor name as written, property) when `call` is `x.prop(...)` of a tensor `x` (a
    TensorView parameter or alias, or `o.value()` of an `Optional<TensorView>` parameter)."""
    fn = call.child_by_field_name("function")
    if fn is None or fn.type != "field_expression":
        return None
    obj = fn.child_by_field_name("argument")
    field = fn.child_by_field_name("field")
    if obj is None or field is None:
        return None
    prop = field.text.decode("utf-8", "replace")
    if prop not in PROPERTIES:
        return None
    if obj.type == "identifier":
        name = obj.text.decode("utf-8", "replace")
        return (name, prop) if name in tensors else None
    if obj.type == "call_expression" and optionals:
        inner = obj.child_by_field_name("function")
        if inner is not None and inner.type == "field_expression":
            base = inner.child_by_field_name("argument")
            method = inner.child_by_field_name("field")
            if (
                base is not None
                and base.type == "identifier"
                and method is not None
                and method.text == b"value"
                and base.text.decode("utf-8", "replace") in optionals
            ):
                return base.text.decode("utf-8", "replace") + ".value()", prop
    return None


def _within(calls, starts, node) -> list:
    """The calls (in document order, `starts` their offsets) inside `node`, itself included."""
    lo = bisect.bisect_left(starts, node.start_byte)
    hi = bisect.bisect_right(starts, node.end_byte)
    return [c for c in calls[lo:hi] if c.end_byte <= node.end_byte]


def _accesses(calls, condition, tensors, optionals) -> list:
    out = []
    for call in calls:
        found = _property_access(call, tensors, optionals)
        if found is not None and _matcher_can_express(call, condition):
            out.append((found[0], found[1], call))
    return out


def _optional_aliases(calls, optionals, facts) -> set[str]:
    """Locals bound to `o.value()` of an `Optional<TensorView>` parameter
    (`const auto& bias = correction_bias.value();`)."""
    out = set()
    for call in calls:
        fn = call.child_by_field_name("function")
        if fn is None or fn.type != "field_expression":
            continue
        base = fn.child_by_field_name("argument")
        field = fn.child_by_field_name("field")
        if (
            field is None
            or field.text != b"value"
            or base is None
            or base.type != "identifier"
            or base.text.decode("utf-8", "replace") not in optionals
        ):
            continue
        decl = facts.parent(call)
        if decl is None or decl.type != "init_declarator":
            continue
        target = decl.child_by_field_name("declarator")
        while target is not None and target.type == "reference_declarator":
            target = target.named_children[-1] if target.named_children else None
        if target is not None and target.type == "identifier":
            out.add(target.text.decode("utf-8", "replace"))
    return out


def _range_aliases(body, tensors, facts) -> dict[str, tuple[str, ...]]:
    """Loop variables over a list of tensors: `for (const auto t : {a, b, c})` -> {t: (a, b,
    c)}. (The loops are found from their `for` tokens, not by a walk of the body.)"""
    from kernlint.cpp.parser import keyword_nodes

    out = {}
    for loop in keyword_nodes(body, facts.normalized.data, "for", "for_range_loop", facts.seeker):
        var = loop.child_by_field_name("declarator")
        while var is not None and var.type == "reference_declarator":
            var = var.named_children[-1] if var.named_children else None
        right = loop.child_by_field_name("right")
        if var is None or var.type != "identifier" or right is None:
            continue
        if right.type != "initializer_list":
            continue
        members = tuple(c.text.decode("utf-8", "replace") for c in right.named_children)
        if members and all(m in tensors for m in members):
            out[var.text.decode("utf-8", "replace")] = members
    return out


class _Usage:
    """What a function reads of its tensors beyond the check at hand: which tensors have a
    shape the function states (a size, stride or rank read, or a `.verify(x)`), and which are
    rank-generic (their rank compared with `<`/`>`, as in `x.ndim() >= 2` or a loop over
    `i < x.ndim()`, or tied to such a tensor's by `y.ndim() == x.ndim()`)."""

    def __init__(self, calls, tensors, optionals, facts, ranges) -> None:
        self.shaped: set[str] = set()
        self.generic: set[str] = set()
        # (local, tensor, pattern) -> is the local set from that read of the tensor
        # (`_derived_from`; each answer found once per function)
        self.derived: dict = {}
        ties: list[tuple[str, str]] = []
        for call in calls:
            fn = call.child_by_field_name("function")
            if fn is not None and fn.type == "field_expression":
                field = fn.child_by_field_name("field")
                if field is not None and field.text == b"verify":
                    args = call.child_by_field_name("arguments")
                    for a in args.named_children if args is not None else ():
                        if a.type == "identifier":
                            self.shaped.add(a.text.decode("utf-8", "replace"))
            found = _property_access(call, tensors, optionals)
            if found is None:
                continue
            name, prop = found
            if prop in SHAPE_PROPERTIES:
                self.shaped.add(name)
            if prop in RANK_PROPERTIES:
                parent = facts.parent(call)
                while parent is not None and parent.type == "parenthesized_expression":
                    parent = facts.parent(parent)
                if parent is None or parent.type != "binary_expression":
                    continue
                op = parent.child_by_field_name("operator")
                if op is not None and op.type in _RELATIONAL:
                    self.generic.add(name)
                elif op is not None and op.type in ("==", "!="):
                    other = _rank_operand(parent, call, tensors, optionals)
                    if other is not None:
                        ties.append((name, other))
        # (a loop variable over `{a, b, c}` stands for each of them: what is true of one of
        # them through it is true of all)
        for var, members in ranges.items():
            ties.extend((var, m) for m in members)
            if var in self.shaped:
                self.shaped.update(members)
        changed = True
        while changed and ties:
            changed = False
            for a, b in ties:
                if (a in self.generic) != (b in self.generic):
                    self.generic.update((a, b))
                    changed = True

    helper = False  # the function is called in its file (not an FFI entry point)
    body = None

    def expressible(self, tensor, prop, check, condition, access, facts) -> bool:
        if tensor in self.generic:
            return False  # (a matcher needs a fixed rank)
        if prop not in SHAPE_PROPERTIES and tensor not in self.shaped and self.helper:
            return False  # (a helper's dtype/device check of a tensor of no stated shape)
        if prop == "dtype" and _NO_DTYPE_TRAIT.search(condition.text):
            return False  # (`with_dtype<T>()` has no type for it)
        if _guarded_by_presence(check, tensor, self.body, facts, self.derived):
            return False
        return not _mixed_with_bounds(condition, tensor, self.body, facts, self.derived)


def _is_called(ctx, func) -> bool:
    """Is `func` called by name from another host function of this file: a helper of the
    file's launchers rather than an FFI entry point? (Calls from device code, such as a
    kernel's `Trait::run(...)`, name a different function.)"""
    simple = func.name.split("::")[-1]
    if not simple:
        return False
    facts = ctx.facts
    kinds = {f.node.id: f for f in facts.functions}
    for call in facts.calls_named(simple.encode(), "identifier"):
        owner = facts.enclosing_function(call)
        caller = kinds.get(owner.id) if owner is not None else None
        if caller is None or caller.node.id == func.node.id:
            continue
        if "global" in caller.qualifiers or (
            "device" in caller.qualifiers and "host" not in caller.qualifiers
        ):
            continue
        return True
    return False


_PRESENCE = r"\s*\.\s*(?:data_ptr|numel|device)\s*\("


_ASSIGNMENT = lazy_compile(r"(?<![\w.>])([A-Za-z_]\w*)\s*=(?!=)([^;]*)")


def _derived_from(local: str, tensor: str, pattern: str, body, memo: dict) -> bool:
    """Is `local` assigned from `tensor.<pattern>(...)` somewhere in `body`
    (`const auto dev = t.device().device_type;`, `const int64_t L = t.stride(0);`)? (`memo`:
    the body's assignments, read once, and each answer.)"""
    key = (local, tensor, pattern)
    found = memo.get(key)
    if found is None:
        assignments = memo.get(None)
        if assignments is None:
            assignments = memo[None] = {}
            for m in _ASSIGNMENT.finditer(body.text.decode("utf-8", "replace")):
                assignments.setdefault(m.group(1), []).append(m.group(2))
        read = re.compile(r"\b" + re.escape(tensor) + pattern)
        found = memo[key] = any(read.search(v) for v in assignments.get(local, ()))
    return found


def _guarded_by_presence(check, tensor: str, body, facts, memo: dict) -> bool:
    """Is the check inside an `if` whose condition asks whether `tensor` is there or where it
    lives (`if (t.data_ptr())`, `if (t.numel() > 0)`, `if (dev == kDLCUDA)` with
    `dev = t.device().device_type`)? Such a tensor is validated on some paths only, as the
    path requires, which one `TensorMatcher` statement does not say."""
    if body is None or "." in tensor:
        return False
    direct = None  # (compiled at the first `if` above the check: most checks have none)
    node, child = facts.parent(check), check
    while node is not None and node.id != body.id:
        if node.type == "if_statement":
            cond = node.child_by_field_name("condition")
            if cond is not None and cond.id != child.id:
                text = cond.text.decode("utf-8", "replace")
                if direct is None:
                    direct = re.compile(r"\b" + re.escape(tensor) + _PRESENCE)
                if direct.search(text):
                    return True
                for word in set(re.findall(r"[A-Za-z_]\w*", text)):
                    if word != tensor and _derived_from(word, tensor, _PRESENCE, body, memo):
                        return True
        node, child = facts.parent(node), node
    return False


def _rank_operand(binary, call, tensors, optionals) -> str | None:
    """The tensor whose rank the other side of `x.ndim() == y.ndim()` reads, or None."""
    for side in (binary.child_by_field_name("left"), binary.child_by_field_name("right")):
        if side is None or side.id == call.id or side.type != "call_expression":
            continue
        found = _property_access(side, tensors, optionals)
        if found is not None and found[1] in RANK_PROPERTIES:
            return found[0]
    return None


_SHAPE_READ = r"\s*\.\s*(?:shape|size|dim|ndim|strides|stride|numel)\s*\("


def _mixed_with_bounds(condition, tensor, body, facts, memo: dict) -> bool:
    """Does the condition also test a property of `tensor` with a bound or a divisibility
    (`x.stride(1) == 1 && x.stride(0) % 8 == 0`, or `% 4` of a local `L = x.stride(0)`)? The
    hand-written check has to stay for that part, and the message covers both."""
    from kernlint.cpp.parser import nodes_of_types

    for binary in nodes_of_types(condition, ("binary_expression",)):
        op = binary.child_by_field_name("operator")
        if op is None or op.type not in _NOT_EXPRESSIBLE:
            continue
        if body is not None and "." not in tensor:
            for ident in nodes_of_types(binary, ("identifier",)):
                word = ident.text.decode("utf-8", "replace")
                if word != tensor and _derived_from(word, tensor, _SHAPE_READ, body, memo):
                    return True
        for call in nodes_of_types(binary, ("call_expression",)):
            fn = call.child_by_field_name("function")
            obj = fn.child_by_field_name("argument") if fn is not None else None
            field = fn.child_by_field_name("field") if fn is not None else None
            if (
                fn is not None
                and fn.type == "field_expression"
                and obj is not None
                and field is not None
                and field.text.decode("utf-8", "replace") in _BOUNDED_PROPERTIES
                and obj.text.decode("utf-8", "replace") == tensor
            ):
                return True
    return False


def _matcher_can_express(node, stop) -> bool:
    """Equality, dtype, device and contiguity checks: yes. Bounds and divisibility: no. (The
    nodes from `stop` down to `node` are read going down, with one cursor: walking up with
    `node.parent`, which itself goes down from the root, cost the square of the depth.)"""
    path = _path_down(stop, node)
    if path is None:  # (not below `stop`: every node above `node`)
        path = []
        n = node.parent
        while n is not None:
            path.append(n)
            n = n.parent
    for n in path:
        if n.type == "binary_expression":
            op = n.child_by_field_name("operator")
            if op is not None and op.type in _NOT_EXPRESSIBLE:
                return False
    return True


def _path_down(top, node) -> list | None:
    """The nodes from `top` down to the parent of `node`, or None if `node` is not below `top`."""
    if node.id == top.id:
        return None
    cursor = top.walk()
    path = []
    target = node.start_byte
    while cursor.node.id != node.id:
        path.append(cursor.node)
        if cursor.goto_first_child_for_byte(target) is None or cursor.node.start_byte > target:
            return None
    return path
