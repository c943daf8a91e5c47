"""The FFI entry points of a JIT module: the host functions Python calls through TVM FFI.

The same decision `ffi-non-fixed-width-int` documents: a host function is an entry point when

* it has a `tvm::ffi::TensorView` parameter, is not called from another function of the same
  file (a helper of the launcher) and takes no stream (`cudaStream_t`, `hipStream_t`,
  `CUstream`: the FFI passes none, an entry gets its stream from the environment); or
* it is exported with `TVM_FFI_DLL_EXPORT_TYPED_FUNC(name, fn)`; or
* it is a target named in a Python `load_jit(..., cuda_wrappers=[...])` among the files checked.

With `ffi-boundaries` set, `boundary_entry_points` gives the entry points of the boundaries it
names: the TVM-FFI ones above ("tvm-ffi") and the functions registered with PyTorch's
dispatcher ("torch-library", kernlint.cpp.registrations).
"""

from __future__ import annotations

from functools import lru_cache

from ..lazyre import lazy_compile
from .lexer import span_at
from .params import function_declarator

STREAM_TYPES = frozenset(
    {"cudaStream_t", "hipStream_t", "CUstream", "cudaStream", "at::cuda::CUDAStream"}
)
_EXPORT = lazy_compile(rb"\bTVM_FFI_DLL_EXPORT_TYPED_FUNC\s*\(\s*\w+\s*,\s*\(?\s*&?\s*([\w:]+)")


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


# -- configured boundaries (`ffi-boundaries`) ---------------------------------------------------
TVM_FFI = "tvm-ffi"
TORCH_LIBRARY = "torch-library"
_WORD = lazy_compile(rb"[A-Za-z_]\w*")
_SCOPE_TYPES = ("struct_specifier", "class_specifier", "union_specifier")


def boundary_entry_points(ctx) -> list[tuple[object, str]]:
    """(`facts.Function`, boundary kind) for the file's entry points at the boundaries the
    config's `ffi-boundaries` names, in document order: "tvm-ffi" (`entry_points`) and
    "torch-library" (functions registered with PyTorch's dispatcher, `torch_entry_points`); a
    function at both is given once, as "torch-library". "pybind11" bindings are not judged:
    pybind11 converts a Python int to any C++ integer type and raises on overflow."""
    kinds = ctx.settings.ffi_boundaries
    torch = torch_entry_points(ctx) if TORCH_LIBRARY in kinds else []
    tvm = entry_points(ctx) if TVM_FFI in kinds else []
    if not torch:
        return [(f, TVM_FFI) for f in tvm]
    seen = {f.node.id for f in torch}
    out = [(f, TORCH_LIBRARY) for f in torch] + [(f, TVM_FFI) for f in tvm if f.node.id not in seen]
    out.sort(key=lambda pair: pair[0].node.start_byte)
    return out


def torch_entry_points(ctx) -> list:
    """The file's host functions registered with PyTorch's dispatcher (`TORCH_LIBRARY*`
    blocks: kernlint.cpp.registrations) in the files of the run or in this file. A function
    with internal linkage (`static`, an anonymous namespace) counts only when this file
    registers it."""
    from .registrations import registered, registered_in

    run = registered()
    own = frozenset(registered_in(ctx.data))
    if not run and not own:
        return []
    simple = _simple_names(run) | _simple_names(own)
    if simple.isdisjoint(_WORD.findall(ctx.data)):
        return []
    facts = ctx.facts
    found = getattr(facts, "_torch_entry_points", None)
    if found is not None:
        return found
    out = []
    for func in facts.functions:
        if func.is_kernel or ("device" in func.qualifiers and "host" not in func.qualifiers):
            continue
        if func.name.split("::")[-1].encode() not in simple:
            continue
        qualified, internal = qualified_name(func)
        if qualified in own or (not internal and qualified in run):
            out.append(func)
    facts._torch_entry_points = out
    return out


@lru_cache(maxsize=8)
def _simple_names(names: frozenset) -> frozenset:
    return frozenset(n.split("::")[-1].encode() for n in names)


def qualified_name(func) -> tuple[str, bool]:
    """(The function's name qualified with its enclosing named namespaces and classes,
    template arguments removed; does it have internal linkage: `static` at namespace scope or
    an anonymous namespace)."""
    from ..project import _without_template_args

    parts = [p.strip() for p in _without_template_args(func.name).split("::") if p.strip()]
    internal = False
    node = func.node
    member = False
    while node.parent is not None:
        node = node.parent
        if node.type == "namespace_definition":
            from .facts import namespace_components

            names = namespace_components(node)
            if names == ("",):
                internal = True
            else:
                parts[:0] = names
        elif node.type in _SCOPE_TYPES:
            member = True
            name = node.child_by_field_name("name")
            if name is not None:
                parts.insert(0, _without_template_args(name.text.decode("utf-8", "replace")))
    if not member and any(
        c.type == "storage_class_specifier" and c.text == b"static" for c in func.node.children
    ):
        internal = True
    return "::".join(parts), internal
