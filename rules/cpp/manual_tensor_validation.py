"""Reports hand-written checks of a `TensorView`'s shape, dtype, strides or device.

## What it does
In a host function with `tvm::ffi::TensorView` parameters (the launcher of a JIT kernel),
reports a check -- `RuntimeCheck(...)`, `CHECK_HOST(...)`, `TORCH_CHECK(...)`, `assert(...)`, or an
`if (...)` whose body throws or calls `Panic` -- whose condition reads a parameter's
`.shape()`, `.size(i)`, `.dim()`, `.ndim()`, `.dtype()`, `.strides()`, `.stride(i)`,
`.device()` or `.is_contiguous()` in a way `TensorMatcher` can express (equality of a size,
stride, dtype or device; contiguity). One finding per check, on the first such access.

Not reported: reading those properties for anything other than a check (computing sizes,
dispatching on the dtype with `if (is_type<bf16_t>(x.dtype()))`), checks of values that are
not parameters of the function, bounds and divisibility checks (`x.size(0) >= n`,
`x.stride(0) % 8 == 0`: the matcher cannot express them), and checks inside the abstractions' implementation
(`include/sgl_kernel/**`). The rule is in preview: a check may be
equality-shaped and still be one the author keeps on purpose (a clearer message for one
dimension), and the reviewed precision on the SGLang tree is recorded in docs/real-world.md.

## Why is this bad?
`TensorMatcher` (with `SymbolicSize`, `SymbolicDType`, `SymbolicDevice`) checks a tensor's
shape, dtype, strides and device in one declarative statement, binds the sizes it checks for
later use, and reports mismatches with the tensor's name and the expected and actual values.
Hand-written checks drift out of sync with the kernel, are easy to forget for one of several
tensors, and give worse messages.

## Example
```cpp
namespace sglang {
void launch(tvm::ffi::TensorView x, tvm::ffi::TensorView out) {
  host::RuntimeCheck(x.dim() == 2, "x must be 2-D");
}
}  // namespace sglang
```

## Use instead
```cpp
namespace sglang {
void launch(tvm::ffi::TensorView x, tvm::ffi::TensorView out) {
  auto N = host::SymbolicSize{"num_tokens"};
  auto D = host::SymbolicSize{"hidden_size"};
  host::TensorMatcher({N, D}).with_dtype<bf16_t>().verify(x).verify(out);
}
}  // namespace sglang
```

## Fix safety
No automatic fix: the matcher needs symbolic names chosen by the author.
"""

from __future__ import annotations

from kernlint.cpp.facts import in_abstractions, simple_name
from kernlint.model import Rule

RULE = Rule(
    code="CU008",
    name="manual-tensor-validation",
    language="cpp",
    summary="hand-written TensorView validation instead of `TensorMatcher`",
    severity="warning",
    status="preview",
    scope="jit",
    triggers=(b"TensorView",),
)

PROPERTIES = frozenset(
    {"shape", "size", "dim", "ndim", "dtype", "strides", "stride", "device", "is_contiguous"}
)
CHECKS = frozenset(
    {"RuntimeCheck", "CHECK_HOST", "TORCH_CHECK", "assert", "CHECK", "TVM_FFI_ICHECK"}
)
_NOT_EXPRESSIBLE = frozenset({"<", ">", "<=", ">=", "%"})


def check(ctx) -> None:
    if in_abstractions(ctx.source.abspath or ctx.source.path):
        return

    for func in ctx.facts.functions:
        if func.is_kernel or ("device" in func.qualifiers and "host" not in func.qualifiers):
            continue
        tensors = {
            p.name
            for p in ctx.facts.params_of(func.node)
            if p.name and p.type_text.replace("tvm::ffi::", "").strip() == "TensorView"
        }
        if not tensors:
            continue
        body = func.node.child_by_field_name("body")
        if body is None:
            continue
        for node in ctx.facts.nodes("call_expression", "if_statement", within=body):
            condition = _checked_condition(node)
            if condition is None:
                continue
            access = _first_access(ctx.facts, condition, tensors)
            if access is not None:
                tensor, prop, anode = access
                ctx.report_node(
                    anode,
                    f"`{tensor}.{prop}()` checked by hand: verify `{tensor}` with "
                    f"`TensorMatcher` (shape, dtype, strides, device in one place)",
                )


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


def _first_access(facts, condition, tensors):
    for call in facts.nodes("call_expression", within=condition):
        fn = call.child_by_field_name("function")
        if fn is None or fn.type != "field_expression":
            continue
        obj = fn.child_by_field_name("argument")
        field = fn.child_by_field_name("field")
        if obj is None or field is None or obj.type != "identifier":
            continue
        name = obj.text.decode("utf-8", "replace")
        prop = field.text.decode("utf-8", "replace")
        if name in tensors and prop in PROPERTIES and _matcher_can_express(call, condition):
            return name, prop, call
    return None


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
