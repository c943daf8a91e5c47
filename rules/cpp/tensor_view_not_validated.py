"""Reports a `TensorView` argument whose data pointer is used without `TensorMatcher` validation.

## What it does
In an FFI entry point of a JIT module (a host function with a `tvm::ffi::TensorView` parameter
that no other function of the file calls and that takes no stream, a function exported with
`TVM_FFI_DLL_EXPORT_TYPED_FUNC`, or a `load_jit(..., cuda_wrappers=[...])` target among the
checked files), reports each `TensorView` parameter whose `.data_ptr()` is read while the tensor
never reaches a `TensorMatcher`'s `.verify(...)`, in the function or in a same-file helper it is
passed to.

Not reported, by design:
- a tensor passed to a function the file does not define, stored in a local, put in a list,
  captured, returned, or used other than through `.data_ptr()`, its properties and `.verify`;
- a tensor checked by hand (`RuntimeCheck`, `CHECK_HOST`, `TORCH_CHECK`, `TVM_FFI_ICHECK*`,
  `assert`, an `if` that throws or calls `Panic`): `manual-tensor-validation` reports those
  checks;
- a tensor whose pointer is never read, or only handed to a CUDA call taking the bare address
  (`cudaHostRegister`, ...);
- `Optional<TensorView>` and `tvm::ffi::Tensor` parameters, and `include/sgl_kernel/**`.

## Why is this bad?
A kernel trusts every buffer's layout: a tensor of the wrong dtype, shape, strides or device is
silently read out of bounds or misread. SGLang's JIT kernel guide: "validate every
`tvm::ffi::TensorView` argument" with `TensorMatcher`, whose `verify` checks all four and names
the tensor on a mismatch.

## Example
```cuda
namespace sglang {
void scale(tvm::ffi::TensorView dst, tvm::ffi::TensorView src) {
  using namespace host;
  TensorMatcher({SymbolicSize{"n"}}).with_dtype<float>().verify(dst);
  LaunchKernel(1, 256, dst.device())(
      scale_kernel, static_cast<float*>(dst.data_ptr()), static_cast<const float*>(src.data_ptr()));
}
}  // namespace sglang
```

## Use instead
```cuda
namespace sglang {
void scale(tvm::ffi::TensorView dst, tvm::ffi::TensorView src) {
  using namespace host;
  TensorMatcher({SymbolicSize{"n"}}).with_dtype<float>().verify(dst).verify(src);
  LaunchKernel(1, 256, dst.device())(
      scale_kernel, static_cast<float*>(dst.data_ptr()), static_cast<const float*>(src.data_ptr()));
}
}  // namespace sglang
```

## Fix safety
No automatic fix: the matcher's shape, dtype and device are the author's to state.
"""

from __future__ import annotations

from kernlint.cpp.facts import in_abstractions, simple_name
from kernlint.cpp.ffi import entry_points
from kernlint.cpp.parser import identifier_nodes
from kernlint.lazyre import lazy_compile
from kernlint.model import Rule

RULE = Rule(
    code="CU010",
    name="tensor-view-not-validated",
    language="cpp",
    summary="`TensorView` data pointer used without `TensorMatcher(...).verify(...)`",
    severity="warning",
    scope="jit",
    triggers=(b"data_ptr",),
    prefilter=lazy_compile(rb"TensorView"),
)

POINTERS = frozenset({"data_ptr", "const_data_ptr"})
# CUDA calls that take a host or device address without reading the memory behind it.
ADDRESS_ONLY = frozenset(
    {
        "cudaHostGetDevicePointer",
        "cudaPointerGetAttributes",
        "cudaHostRegister",
        "cudaHostUnregister",
        "cudaIpcGetMemHandle",
    }
)
PROPERTIES = frozenset(
    {
        "size",
        "shape",
        "dim",
        "ndim",
        "dtype",
        "device",
        "stride",
        "strides",
        "numel",
        "is_contiguous",
        "IsContiguous",
    }
)
CHECKS = frozenset(
    {"RuntimeCheck", "CHECK_HOST", "TORCH_CHECK", "assert", "CHECK", "TVM_FFI_ICHECK"}
)
# `TVM_FFI_ICHECK_EQ(t.ndim(), 2)`, `CHECK_EQ(...)`: the comparison forms of the check macros.
_CHECK_PREFIXES = ("TVM_FFI_ICHECK", "TVM_FFI_CHECK", "CHECK_")
_NAMESPACES = lazy_compile(r"\b(?:tvm::ffi::|ffi::|const\b)")
# (helpers followed through helpers: a bound on the depth)
_MAX_DEPTH = 4

# What a function does with one of its tensors.
VERIFIED = "verified"  # reaches `.verify(...)` (or a hand-written check)
UNKNOWN = "unknown"  # goes somewhere the file does not show
PLAIN = "plain"  # neither


def _is_view(type_text: str) -> bool:
    return "".join(_NAMESPACES.sub("", type_text).split()).rstrip("&") == "TensorView"


def check(ctx) -> None:
    if in_abstractions(ctx.source.abspath or ctx.source.path):
        return
    analysis = _Analysis(ctx)
    for func in entry_points(ctx):
        for p in ctx.facts.params_of(func.node):
            if not p.name or not _is_view(p.type_text):
                continue
            state, pointer = analysis.usage(func.node, p.name, 0, frozenset())
            if state != PLAIN or pointer is None:
                continue
            callee = _callee_name(pointer)
            if callee in POINTERS:
                what = f"`{p.name}.{callee}()` is used"
            else:
                what = f"`{p.name}` is passed to `{callee}`, which reads its data pointer,"
            ctx.report_node(
                pointer,
                f"{what} but `{p.name}` is never checked with "
                f"`TensorMatcher(...).verify({p.name})`: validate every TensorView argument",
            )


class _Analysis:
    def __init__(self, ctx) -> None:
        self.ctx = ctx
        self.facts = ctx.facts
        self.memo: dict = {}

    def usage(self, func_node, name: str, depth: int, visiting: frozenset):
        """(state, the first node reading the data pointer, or None) for the tensor `name` in
        the body of `func_node`."""
        key = (func_node.id, name)
        found = self.memo.get(key)
        if found is not None:
            return found
        body = func_node.child_by_field_name("body")
        if body is None:
            return UNKNOWN, None
        state, pointer = PLAIN, None
        parent = self.facts.parent
        for ident in identifier_nodes(body, name.encode(), seeker=self.facts.seeker):
            if ident.type != "identifier":
                continue
            up = parent(ident)
            if up is None:
                return UNKNOWN, None
            argument = up.child_by_field_name("argument") if up.type == "field_expression" else None
            if argument is not None and argument.id == ident.id:
                method = _field_name(up)
                call = parent(up)
                if call is None or call.type != "call_expression":
                    return self._remember(key, UNKNOWN)
                if method in POINTERS:
                    if pointer is None and not self._address_only(call):
                        pointer = call
                    if self._in_check(call):
                        state = VERIFIED
                elif method in PROPERTIES:
                    if self._in_check(call):
                        state = VERIFIED
                else:
                    return self._remember(key, UNKNOWN)
                continue
            if up.type == "argument_list":
                call = parent(up)
                if call is None or call.type != "call_expression":
                    return self._remember(key, UNKNOWN)
                callee = _callee_name(call)
                if callee == "verify" or callee in CHECKS:
                    state = VERIFIED
                    continue
                index = [c.id for c in up.named_children].index(ident.id)
                inner, inner_pointer = self._helper(call, callee, index, depth, visiting | {key})
                if inner == UNKNOWN:
                    return self._remember(key, UNKNOWN)
                if inner == VERIFIED:
                    state = VERIFIED
                elif inner_pointer is not None and pointer is None:
                    pointer = call
                continue
            if self._in_check(ident):
                state = VERIFIED
                continue
            return self._remember(key, UNKNOWN)
        found = self.memo[key] = (state, pointer)
        return found

    def _remember(self, key, state):
        found = self.memo[key] = (state, None)
        return found

    def _helper(self, call, callee: str, index: int, depth: int, visiting: frozenset):
        """What the file's definitions of `callee` do with their parameter `index`."""
        if not callee or depth >= _MAX_DEPTH:
            return UNKNOWN, None
        args = call.child_by_field_name("arguments")
        count = len([a for a in args.named_children if a.type != "comment"]) if args else 0
        definitions = []
        for node in self.facts.functions_by_name.get(callee, ()):
            params = self.facts.params_of(node)
            if len(params) == count:
                definitions.append((node, params))
        if not definitions:
            return UNKNOWN, None
        states, pointer = set(), None
        for node, params in definitions:
            p = params[index]
            if not p.name or not _is_view(p.type_text):
                return UNKNOWN, None
            if (node.id, p.name) in visiting:
                return UNKNOWN, None  # (recursion)
            state, found = self.usage(node, p.name, depth + 1, visiting)
            states.add(state)
            pointer = pointer or found
        if UNKNOWN in states:
            return UNKNOWN, None
        if states == {VERIFIED}:
            return VERIFIED, pointer
        return PLAIN, pointer

    def _address_only(self, call) -> bool:
        """Is the `.data_ptr()` call `call` an argument of a CUDA call that takes the address
        alone (`cudaHostGetDevicePointer`, `cudaPointerGetAttributes`, ...): no data read?"""
        args = self.facts.parent(call)
        outer = self.facts.parent(args) if args is not None else None
        return (
            args is not None
            and args.type == "argument_list"
            and outer is not None
            and outer.type == "call_expression"
            and _callee_name(outer) in ADDRESS_ONLY
        )

    def _in_check(self, node) -> bool:
        """Is `node` inside a hand-written check: an argument of `RuntimeCheck(...)` and its
        kin, or the condition of an `if` whose body throws or calls `Panic`?"""
        parent = self.facts.parent
        n, child = parent(node), node
        while n is not None and n.type not in ("compound_statement", "function_definition"):
            if n.type == "call_expression" and child.type == "argument_list":
                name = _callee_name(n)
                if name in CHECKS or name.startswith(_CHECK_PREFIXES):
                    return True
            if n.type == "if_statement":
                cond = n.child_by_field_name("condition")
                consequence = n.child_by_field_name("consequence")
                if cond is not None and cond.id == child.id and consequence is not None:
                    text = consequence.text
                    return b"throw" in text or b"Panic(" in text
            n, child = parent(n), n
        return False


def _field_name(field_expression) -> str:
    field = field_expression.child_by_field_name("field")
    text = field.text.decode("utf-8", "replace") if field is not None else ""
    return text.split("<")[0].strip()


def _callee_name(call) -> str:
    """`f`, `ns::f<T>`, `obj.f`, `TensorMatcher(...).verify` -> the called name."""
    fn = call.child_by_field_name("function")
    if fn is not None and fn.type == "field_expression":
        return _field_name(fn)
    return simple_name(fn)
