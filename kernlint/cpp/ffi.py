"""The FFI entry points of a JIT module: the host functions Python calls through TVM FFI.

The same decision `ffi-non-fixed-width-int` documents: a host function is an entry point when

* it has a `tvm::ffi::TensorView` parameter, is not called from another function of the same
  file (a helper of the launcher) and takes no stream (`cudaStream_t`, `hipStream_t`,
  `CUstream`: the FFI passes none, an entry gets its stream from the environment); or
* it is exported with `TVM_FFI_DLL_EXPORT_TYPED_FUNC(name, fn)`; or
* it is a target named in a Python `load_jit(..., cuda_wrappers=[...])` among the files checked.
"""

from __future__ import annotations

import re
from functools import lru_cache

from .lexer import span_at
from .params import function_declarator

STREAM_TYPES = frozenset(
    {"cudaStream_t", "hipStream_t", "CUstream", "cudaStream", "at::cuda::CUDAStream"}
)
_EXPORT = re.compile(rb"\bTVM_FFI_DLL_EXPORT_TYPED_FUNC\s*\(\s*\w+\s*,\s*\(?\s*&?\s*([\w:]+)")


def entry_points(ctx) -> list:
    """The file's FFI entry points (`facts.Function`s), in document order, computed once per
    file and shared by the rules that ask."""
    from ..project import wrapper_targets

    targets = wrapper_targets()
    data = ctx.data
    if b"TensorView" not in data and b"TVM_FFI_DLL_EXPORT" not in data:
        # (a target can only be defined here if its most specific name occurs: nothing to
        # parse otherwise)
        if not any(_target_token(t) in data for t in targets):
            return []
    facts = ctx.facts
    found = getattr(facts, "_ffi_entry_points", None)
    if found is None:
        found = facts._ffi_entry_points = _entry_points(ctx, targets)
    return found


def _entry_points(ctx, targets) -> list:
    exported = exported_names(ctx)
    facts = ctx.facts
    out = []
    for func in facts.functions:
        if func.is_kernel or ("device" in func.qualifiers and "host" not in func.qualifiers):
            continue
        simple = func.name.split("::")[-1]
        if simple in exported or is_wrapper_target(func, targets):
            out.append(func)
            continue
        if b"TensorView" not in _parameter_bytes(ctx, func.node):
            continue
        params = facts.params_of(func.node)
        if not any("TensorView" in p.type_text for p in params):
            continue
        if stream_parameter(params) is not None:
            continue
        if not simple or facts.calls_named(simple.encode(), "identifier"):
            continue
        out.append(func)
    return out


def stream_parameter(params):
    """The first parameter that is a stream handle (`cudaStream_t`, ...), or None."""
    return next((p for p in params if _bare(p.type_text) in STREAM_TYPES), None)


def _bare(type_text: str) -> str:
    words = [w for w in type_text.split() if w not in ("const", "volatile")]
    return " ".join(words).removeprefix("::")


def exported_names(ctx) -> set[str]:
    """Simple names of the functions `TVM_FFI_DLL_EXPORT_TYPED_FUNC` exports (outside
    comments and strings)."""
    if b"TVM_FFI_DLL_EXPORT" not in ctx.data:
        return set()
    spans = ctx.literal_spans
    out = set()
    for m in _EXPORT.finditer(ctx.data):
        if span_at(spans, m.start()) is None:
            out.add(m.group(1).decode().split("::")[-1])
    return out


def _enclosing_class(node) -> str:
    n = node.parent
    while n is not None:
        if n.type in ("struct_specifier", "class_specifier"):
            name = n.child_by_field_name("name")
            if name is None:
                return ""
            return name.text.decode("utf-8", "replace").split("<")[0].split("::")[-1]
        n = n.parent
    return ""


def is_wrapper_target(func, targets) -> bool:
    """Is `func` named by a `cuda_wrappers` target (`Kernel::run`, compared on its last two
    components, or a bare name)?"""
    if not targets:
        return False
    name = func.name
    simple = name.split("::")[-1]
    parts = [p.split("<")[0] for p in name.split("::")]
    cls = _enclosing_class(func.node) or (parts[-2] if len(parts) > 1 else "")
    wanted = f"{cls}::{simple}" if cls else simple
    return wanted in _target_tails(frozenset(targets))


@lru_cache(maxsize=4)
def _target_tails(targets: frozenset) -> frozenset:
    return frozenset("::".join(t.split("::")[-2:]) for t in targets)


def _target_token(target: str) -> bytes:
    parts = target.split("::")
    return (parts[-2] if len(parts) > 1 else parts[-1]).encode()


def _parameter_bytes(ctx, func_node) -> bytes:
    decl = function_declarator(func_node)
    plist = decl.child_by_field_name("parameters") if decl is not None else None
    return ctx.data[plist.start_byte : plist.end_byte] if plist is not None else b""
