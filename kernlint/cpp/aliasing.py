"""Where `__restrict__` on a kernel pointer parameter would be wrong or could do nothing: the
evidence kernel-pointer-not-restrict reads before it reports a parameter.

A parameter is left alone when

* it is **aliased**, by the file's own evidence:
  - a launch in the file passes the same argument to it and to another pointer parameter
    (`k<<<g, b>>>(state, cu, state)`, `hipLaunchKernelGGL(k, g, b, 0, s, state, state)`,
    `LaunchKernel(g, b, d)(k, state, state)`);
  - a comment inside the parameter list says so ("may be `out` itself", "in place",
    "aliases"): the parameter it annotates and every parameter it names;
  - another by-value parameter is a struct defined in the file with a pointer member to the
    same struct type of the file (`Signal* self` next to `RankSignals sg` holding
    `Signal* signals[8]`): both reach the same objects; or a by-value parameter of a type
    the file does not define whose name holds the pointee type's name (`aiter::RankSignals`
    next to `aiter::Signal*`);
* it points to **`volatile`** data: every access is volatile already (`volatile_pointee`);
* it is a **scalar slot** (`scalar_slot`): every use a null test or an access to one element
  the whole block shares (`*p`, `p[0]`, `p[blockIdx.x]`), at most two accesses, in a kernel
  that takes a pointer to `volatile` data, or written once and read at most once through a
  pointer to non-const data;
* it is the kernel's **only data pointer** and every other parameter is a scalar (a builtin
  arithmetic type, a fixed-width integer name, the pointee type itself, or a struct or struct
  template of this file whose fields are all scalars or arrays of them): there is no other
  pointer for it to alias;
* it is **never dereferenced** by C++ code in the kernel: every use is an operand of inline
  asm, a comparison, pointer arithmetic whose result is stored into memory as a value
  (`offsets[i] = base + k`), a cast to an integer, a `volatile` cast, the global-address
  argument of a TMA-descriptor setter (which stores it as an integer), or an argument of a
  memory-ordering accessor (a callee named `*volatile*`, `*acquire*`, `*release*`) or the
  address of a cache-hinted load or store (`__ldg`, `__ldca`, `__stcs`, ...: inline asm),
  whose accesses the compiler may not cache or reorder anyway; a local pointer initialized from it
  (`T* q = p + k;`) is followed through its own uses.

Every answer errs toward "not shown": an unknown use counts as a dereference, and a kernel
body with parse errors as one that dereferences everything.
"""

from __future__ import annotations

import re

from ..lazyre import lazy_compile
from .parser import Seeker, identifier_nodes, keyword_nodes
from .writes import COMPARISON_OPS, STATEMENT_PARENTS

# Builtin and fixed-width names a scalar parameter is spelled with (no pointer inside).
SCALAR_TYPES = frozenset(
    {
        "bool",
        "char",
        "short",
        "int",
        "long",
        "float",
        "double",
        "signed",
        "unsigned",
        "int8_t",
        "int16_t",
        "int32_t",
        "int64_t",
        "uint8_t",
        "uint16_t",
        "uint32_t",
        "uint64_t",
        "size_t",
        "ssize_t",
        "ptrdiff_t",
        "half",
        "__half",
        "__nv_bfloat16",
        "nv_bfloat16",
        "__half2",
        "__nv_bfloat162",
        "float2",
        "float4",
        "int2",
        "int4",
        "uint2",
        "uint4",
        "dim3",
    }
)
_ALIAS_COMMENT = lazy_compile(
    r"\bin[- ]?place\b|\balias(es|ed|ing)?\b|\bmay\s+be\s+`?\w+`?\s+itself\b"
    r"|\bsame\s+(buffer|memory|pointer|storage)\s+as\b",
    re.I,
)
_WORD = lazy_compile(r"[A-Za-z_][A-Za-z0-9_]*")
_ORDERING_ACCESSOR = lazy_compile(r"volatile|acquire|release", re.I)
# TMA-descriptor setters that store a global address into the descriptor as an integer, and
# the position of that address among their arguments (the descriptor itself is written).
_TMA_ADDRESS_ARG = {
    "cudaSetTmaTileDescriptor": 1,
    "cudaSetTmaIm2ColDescriptor": 1,
    "cuTensorMapEncodeTiled": 3,
    "cuTensorMapEncodeIm2col": 3,
    "cuTensorMapEncodeIm2colWide": 3,
    "cuTensorMapReplaceAddress": 1,
}
# Cache-hinted loads and stores: inline asm in CUDA's headers, whose address argument the
# compiler does not dereference (so `__restrict__` cannot change those accesses).
_ASM_ACCESSORS = frozenset(
    {
        "__ldg",
        "__ldca",
        "__ldcg",
        "__ldcs",
        "__ldlu",
        "__ldcv",
        "__stcg",
        "__stcs",
        "__stwb",
        "__stwt",
    }
)
_CASTS = frozenset({"static_cast", "reinterpret_cast", "const_cast", "bit_cast"})
_CAST_TEMPLATE = lazy_compile(r"\b(static|reinterpret|const)_cast\s*<[^()]*?>\s*")
_NULL = frozenset({"nullptr", "NULL", "0", "0L"})
_MEMORY_TARGETS = frozenset({"subscript_expression", "field_expression", "pointer_expression"})


class Aliasing:
    """The evidence of one file (computed once, on the first question)."""

    def __init__(self, ctx) -> None:
        self.ctx = ctx
        self._launches: dict[str, list[list[str]]] | None = None
        self._structs: dict[str, list] | None = None

    # -- aliased parameters ------------------------------------------------------------------
    def aliased(self, kernel, params) -> set[int]:
        """The indices of `params` (the kernel's parameters) shown aliased with another."""
        pointers = [p for p in params if p.pointer_depth and not p.is_reference]
        if len(pointers) < 2:
            return set()
        out = self._aliased_at_launches(kernel, pointers)
        out |= self._aliased_by_comments(kernel, params, pointers)
        out |= self._aliased_through_structs(params, pointers)
        return out

    def _aliased_at_launches(self, kernel, pointers) -> set[int]:
        simple = kernel.name.split("::")[-1].split("<")[0].strip()
        out: set[int] = set()
        for args in self.launches().get(simple, ()):
            seen: dict[str, int] = {}
            for p in pointers:
                if p.index >= len(args):
                    continue
                text = args[p.index]
                if not text or text in _NULL:
                    continue
                if text in seen:
                    out.update((seen[text], p.index))
                else:
                    seen[text] = p.index
        return out

    def _aliased_by_comments(self, kernel, params, pointers) -> set[int]:
        plist = _parameter_list(kernel.node)
        if plist is None or b"/" not in plist.text:
            return set()
        names = {p.name: p.index for p in pointers if p.name}
        out: set[int] = set()
        children = list(plist.named_children)
        for i, c in enumerate(children):
            if c.type != "comment":
                continue
            text = c.text.decode("utf-8", "replace")
            m = _ALIAS_COMMENT.search(text)
            if m is None:
                continue
            annotated = _annotated_param(children, i, c)
            own = next((p.index for p in pointers if annotated and p.node.id == annotated.id), None)
            named = {names[w] for w in _WORD.findall(text) if w in names} - {own}
            # "in place" alone says the parameter is read and written, not that another one
            # reaches its memory: the comment must name one, or say "alias".
            if not named and not m.group().lower().startswith("alias"):
                continue
            out |= named
            if own is not None:
                out.add(own)
        return out

    def _aliased_through_structs(self, params, pointers) -> set[int]:
        structs = self.structs()
        if not structs:
            return set()
        out: set[int] = set()
        for p in params:
            if p.pointer_depth or p.is_reference or p.type_node is None:
                continue
            fields = structs.get(_bare_type(p.type_text))
            if not fields:
                continue
            # (only pointers to a struct of the file: `float*` members next to `float*`
            # parameters are the ordinary params-struct layout, not evidence of aliasing)
            held = {t for t, is_pointer in fields if is_pointer and t in structs}
            for q in pointers:
                if _bare_type(q.type_text) in held:
                    out.add(q.index)
        out |= self._aliased_through_foreign_structs(params, pointers, structs)
        return out

    def _aliased_through_foreign_structs(self, params, pointers, structs) -> set[int]:
        """A by-value parameter of a class type the file does not define, whose name holds
        the name of a pointer parameter's pointee type (`aiter::RankSignals signals` next to
        `aiter::Signal* self`): a collection of such pointers, declared in a header, that
        may reach the same objects."""
        out: set[int] = set()
        for p in params:
            if p.pointer_depth or p.is_reference or p.type_node is None:
                continue
            holder = _simple_type(p.type_text)
            if not holder or holder in structs or self._scalar(_bare_type(p.type_text), ""):
                continue
            for q in pointers:
                pointee = _simple_type(q.type_text)
                if len(pointee) >= 3 and pointee not in SCALAR_TYPES and pointee in holder:
                    if pointee != holder:
                        out.add(q.index)
        return out

    # -- the only pointer ----------------------------------------------------------------------
    def sole_pointer(self, params, param) -> bool:
        """Is `param` the kernel's only data pointer, with only scalars beside it?"""
        pointee = _bare_type(param.type_text)
        for p in params:
            if p is param:
                continue
            if p.pointer_depth or p.is_reference or p.is_array or p.type_node is None:
                return False
            if not self._scalar(_bare_type(p.type_text), pointee):
                return False
        return True

    def _scalar(self, type_text: str, pointee: str, depth: int = 0) -> bool:
        if type_text in SCALAR_TYPES or type_text == pointee:
            return True
        words = type_text.split()
        if words and all(w in SCALAR_TYPES for w in words):
            return True  # `unsigned long long`
        # (a struct template of the file, `InputArray<N>`: its members decide, and a member
        # spelled with a template parameter is not a known scalar)
        fields = self.structs().get(type_text.split("<")[0].strip())
        if fields is None or depth > 2:
            return False
        return all(not is_pointer and self._scalar(t, "", depth + 1) for t, is_pointer in fields)

    # -- file facts --------------------------------------------------------------------------
    def launches(self) -> dict[str, list[list[str]]]:
        """Kernel simple name -> the argument texts of each launch of it in the file."""
        if self._launches is None:
            self._launches = _launches(self.ctx)
        return self._launches

    def structs(self) -> dict[str, list]:
        """Struct/class name -> [(member type, is a pointer)] for the structs defined in the
        file (a name defined twice, e.g. in preprocessor variants: the union of the members)."""
        if self._structs is None:
            out: dict[str, list] = {}
            facts = self.ctx.facts
            root, text, seeker = facts.root, facts.normalized.data, facts.seeker
            found = keyword_nodes(root, text, "struct", "struct_specifier", seeker)
            found += keyword_nodes(root, text, "class", "class_specifier", seeker)
            found.sort(key=lambda n: (n.start_byte, -n.end_byte))  # (document order)
            for node in found:
                name = node.child_by_field_name("name")
                body = node.child_by_field_name("body")
                if name is None or body is None:
                    continue
                key = name.text.decode("utf-8", "replace").split("<")[0].split("::")[-1]
                out.setdefault(key, []).extend(_members(body))
            self._structs = out
        return self._structs


# -- volatile pointee --------------------------------------------------------------------------
def volatile_pointee(param) -> bool:
    """Is `param` a pointer to `volatile` data (`volatile int* flag`, `int volatile* flag`)?
    Every access through it is a volatile access the compiler may not cache, merge or reorder,
    `__restrict__` or not. (`int* volatile p`, a volatile pointer variable, is not.)"""
    if param.pointer_depth != 1:
        return False
    return any(
        c.type == "type_qualifier" and c.text == b"volatile"
        for c in param.node.children
        if c is not param.type_node
    )


# -- scalar slots -----------------------------------------------------------------------------
_PER_BLOCK_INDEX = lazy_compile(
    r"(?:\s|[-+*()]|\d+[uUlL]*|blockIdx\s*\.\s*[xyz]|gridDim\s*\.\s*[xyz])*"
)
_NULLS = frozenset({"nullptr", "NULL", "0"})


def scalar_slot(body, params, param) -> bool:
    """Is `param` a scalar slot, whose one load or one store `__restrict__` cannot change?
    Every use is a null test or an access to one element the whole block shares (`*p`,
    `p[0]`, `p[blockIdx.x]`), with at most two accesses, and

    * the kernel takes a pointer to `volatile` data (a signalling kernel: the slots beside the
      flag are a target to wait for, a timeout flag, a sequence counter), or
    * the pointee is not const, the slot is written once and read at most once (a per-block
      result or counter: `if (tid == 0) *scale_out = s;`, `c = counters[blockIdx.x]; ...;
      counters[blockIdx.x] = c + n;`). A const slot read once stays reported: `const T*
      __restrict__` lets that load take the read-only path."""
    if body is None or body.has_error or not param.name or param.pointer_depth != 1:
        return False
    signalling = any(p is not param and volatile_pointee(p) for p in params)
    if not signalling and param.pointee_const:
        return False
    uses = identifier_nodes(body, param.name.encode(), body.text)
    if not uses:
        return False
    reads = writes = 0
    for ident in uses:
        if ident.type != "identifier":
            return False
        node, parent = ident, ident.parent
        while parent is not None and parent.type == "parenthesized_expression":
            node, parent = parent, parent.parent
        if parent is None:
            return False
        if _null_test(parent, node):
            continue
        if parent.type == "pointer_expression":
            op = parent.child_by_field_name("operator")
            if op is None or op.type != "*":
                return False
        elif parent.type == "subscript_expression" and _is_field(parent, "argument", node):
            index = parent.child_by_field_name("indices")
            text = index.text.decode("utf-8", "replace")[1:-1] if index is not None else ""
            if not _PER_BLOCK_INDEX.fullmatch(text):
                return False
        else:
            return False
        access, up = parent, parent.parent
        while up is not None and up.type == "parenthesized_expression":
            access, up = up, up.parent
        if up is not None and up.type == "assignment_expression" and _is_field(up, "left", access):
            op = up.child_by_field_name("operator")
            writes += 1
            if op is not None and op.type != "=":
                reads += 1  # (`+=`: read and written)
        elif up is not None and up.type == "update_expression":
            reads += 1
            writes += 1
        else:
            reads += 1
    if reads + writes > 2 or reads + writes == 0:
        return False
    if signalling:
        return True
    return writes == 1 and reads <= 1


def _null_test(parent, node) -> bool:
    """`p != nullptr`, `p == NULL`, `!p`, `if (p)`: a test of the pointer, no access."""
    if parent.type == "binary_expression":
        op = parent.child_by_field_name("operator")
        if op is None or op.type not in ("==", "!="):
            return False
        other = parent.child_by_field_name("right" if _is_field(parent, "left", node) else "left")
        return other is not None and (other.type == "null" or other.text.decode() in _NULLS)
    if parent.type == "unary_expression":
        op = parent.child_by_field_name("operator")
        return op is not None and op.type == "!"
    return parent.type in ("condition_clause",)


# -- never dereferenced ----------------------------------------------------------------------
def unused(body, name: str) -> bool:
    """Is the parameter `name` not used at all in a body that parsed cleanly?"""
    if body is None or body.has_error or not name:
        return False
    return not identifier_nodes(body, name.encode(), body.text)


def never_dereferenced(body, name: str) -> bool:
    """Does no C++ code in `body` access memory through the pointer `name`? (At least one
    use; every use one of those the module's docs list.)"""
    if body is None or body.has_error or not name:
        return False
    return _uses_never_access(body, name, Seeker(body), 0)


def _uses_never_access(body, name: str, seeker, depth: int, declared=None) -> bool:
    uses = [
        u
        for u in identifier_nodes(body, name.encode(), body.text, seeker)
        if declared is None or u.id != declared.id
    ]
    if not uses:
        return False
    for ident in uses:
        if ident.type != "identifier" or not _no_access(ident, seeker.parent, body, seeker, depth):
            return False
    return True


def _no_access(node, parent_of, body=None, seeker=None, depth: int = 0) -> bool:
    """Follow one use of the pointer value up the tree: True when it cannot reach memory
    through the pointer."""
    while True:
        parent = parent_of(node)
        if parent is None:
            return False
        t = parent.type
        if t in ("gnu_asm_input_operand", "gnu_asm_output_operand"):
            return True  # (the compiler does not dereference an asm operand)
        if t == "parenthesized_expression":
            node = parent
            continue
        if t == "subscript_expression" and _is_field(parent, "argument", node):
            up = parent_of(parent)
            if up is not None and up.type == "pointer_expression":
                op = up.child_by_field_name("operator")
                if op is not None and op.type == "&":
                    node = up  # `&p[i]`: the address `p + i`, no access
                    continue
            return False
        if t == "binary_expression":
            op = parent.child_by_field_name("operator")
            op = op.type if op is not None else ""
            if op in ("+", "-"):
                node = parent
                continue
            return op in COMPARISON_OPS
        if t == "conditional_expression":
            if _is_field(parent, "condition", node):
                return True
            node = parent
            continue
        if t == "unary_expression":
            op = parent.child_by_field_name("operator")
            return op is not None and op.type == "!"
        if t == "cast_expression":
            verdict = _cast(parent.child_by_field_name("type"))
            if verdict is not None:
                return verdict
            node = parent
            continue
        if t == "argument_list":
            call = parent_of(parent)
            if call is None or call.type != "call_expression":
                return False
            fn, targs = _callee(call)
            if fn in _CASTS and targs is not None:
                verdict = _cast(targs)
                if verdict is not None:
                    return verdict
                node = call
                continue
            if fn in _ASM_ACCESSORS:
                args = [c for c in parent.named_children if c.type != "comment"]
                return bool(args) and args[0].id == node.id
            position = _TMA_ADDRESS_ARG.get(fn)
            if position is not None:
                args = [c for c in parent.named_children if c.type != "comment"]
                return position < len(args) and args[position].id == node.id
            return bool(_ORDERING_ACCESSOR.search(fn))
        if t == "assignment_expression":
            if not _is_field(parent, "right", node):
                return False  # (re-pointing the parameter: its later uses are judged too)
            left = parent.child_by_field_name("left")
            return left is not None and left.type in _MEMORY_TARGETS
        if t == "init_declarator":
            # `T* local = p + k;`: the local carries the pointer on; its uses are judged too
            if body is None or depth >= 3 or not _is_field(parent, "value", node):
                return False
            local = _declared_pointer(parent)
            if local is None:
                return False
            name = local.text.decode("utf-8", "replace")
            return _uses_never_access(body, name, seeker, depth + 1, declared=local)
        if t in STATEMENT_PARENTS:
            return True
        return False


def _declared_pointer(init):
    """The identifier an `init_declarator` declares, when it declares a plain pointer
    variable (else None)."""
    d = init.child_by_field_name("declarator")
    if d is None or d.type != "pointer_declarator":
        return None
    while d is not None and d.type == "pointer_declarator":
        d = d.child_by_field_name("declarator")
    return d if d is not None and d.type == "identifier" else None


def _cast(type_node) -> bool | None:
    """A cast of the pointer: True (to an integer, or to a `volatile` pointer), None (to
    another pointer: follow the result)."""
    if type_node is None:
        return False
    text = type_node.text.decode("utf-8", "replace")
    if "&" in text:
        return False
    if "*" not in text:
        return True
    if "volatile" in text.split("*")[0].replace("<", " ").split():
        return True
    return None


def _callee(call) -> tuple[str, object | None]:
    fn = call.child_by_field_name("function")
    targs = None
    node = fn
    if node is not None and node.type == "field_expression":
        node = node.child_by_field_name("field")
    while node is not None and node.type in ("qualified_identifier", "template_function"):
        if node.type == "template_function":
            targs = node.child_by_field_name("arguments")
        node = node.child_by_field_name("name")
    name = node.text.decode("utf-8", "replace") if node is not None else ""
    return name, targs


def _is_field(parent, field: str, node) -> bool:
    child = parent.child_by_field_name(field)
    return child is not None and child.id == node.id


# -- helpers -----------------------------------------------------------------------------------
def _simple_type(text: str) -> str:
    """`aiter::Signal` -> `Signal`; `ns::Box<T, 4>` -> `Box`; `` for a builtin spelled in
    several words."""
    bare = _bare_type(text).split("<")[0].strip()
    if " " in bare:
        return ""
    return bare.split("::")[-1]


def _bare_type(text: str) -> str:
    words = [w for w in text.replace("struct ", " ").split() if w not in ("const", "volatile")]
    return " ".join(words)


def _parameter_list(func_node):
    from .params import function_declarator

    decl = function_declarator(func_node)
    return decl.child_by_field_name("parameters") if decl is not None else None


def _annotated_param(children, i, comment):
    """The parameter a comment in a parameter list annotates: the one before it on the same
    line (`float* p,  // ...`), else the next one."""
    before = next((c for c in reversed(children[:i]) if c.type != "comment"), None)
    if before is not None and before.end_point[0] == comment.start_point[0]:
        return before
    return next((c for c in children[i + 1 :] if c.type != "comment"), None)


def _members(body) -> list:
    """[(member type, is a pointer)] of a struct body's field declarations."""
    out = []
    for field in body.named_children:
        if field.type != "field_declaration":
            continue
        type_node = field.child_by_field_name("type")
        if type_node is None:
            continue
        type_text = _bare_type(type_node.text.decode("utf-8", "replace"))
        declarators = [
            c
            for c in field.named_children
            if c.type
            in (
                "pointer_declarator",
                "field_identifier",
                "array_declarator",
                "reference_declarator",
            )
        ]
        for d in declarators or [None]:
            is_pointer = d is not None and (
                d.type in ("pointer_declarator", "reference_declarator") or b"*" in d.text
            )
            out.append((type_text, is_pointer))
    return out


def _argument_texts(arglist, skip: int) -> list[str]:
    args = [c for c in arglist.named_children if c.type != "comment"][skip:]
    return [
        _CAST_TEMPLATE.sub("", "".join(a.text.decode("utf-8", "replace").split())) for a in args
    ]


def _launches(ctx) -> dict[str, list[list[str]]]:
    """Kernel simple name -> argument texts (whitespace and named casts removed) per launch:
    `k<<<...>>>(args)`, `hipLaunchKernelGGL(k, grid, block, shmem, stream, args...)`,
    `LaunchKernel(...)(k, args...)` and `cudaLaunchKernelEx(&config, k, args...)`."""
    facts = ctx.facts
    out: dict[str, list[list[str]]] = {}

    def add(fn, arglist, skip):
        if fn is None or arglist is None:
            return
        name = _simple(fn)
        if name:
            out.setdefault(name, []).append(_argument_texts(arglist, skip))

    for call in facts.launch_sites:
        add(call.child_by_field_name("function"), call.child_by_field_name("arguments"), 0)
    text = ctx.normalized.data
    for api, first in (("hipLaunchKernelGGL", 0), ("cudaLaunchKernelEx", 1)):
        if api.encode() not in text:
            continue
        for call in facts.calls_named(api.encode()):
            arglist = call.child_by_field_name("arguments")
            args = [c for c in arglist.named_children if c.type != "comment"] if arglist else []
            if len(args) > first:
                skip = first + (5 if api == "hipLaunchKernelGGL" else 1)
                add(args[first], arglist, skip)
    if b"LaunchKernel" in text:
        for call in facts.calls_named(b"LaunchKernel"):
            launch = facts.parent(call)
            if launch is None or launch.type != "call_expression":
                continue
            if not _is_field(launch, "function", call):
                continue
            arglist = launch.child_by_field_name("arguments")
            args = [c for c in arglist.named_children if c.type != "comment"] if arglist else []
            if args:
                add(args[0], arglist, 1)
    return out


def _simple(fn) -> str:
    node = fn
    while node is not None and node.type in (
        "qualified_identifier",
        "template_function",
        "parenthesized_expression",
        "pointer_expression",
    ):
        if node.type in ("parenthesized_expression", "pointer_expression"):
            named = [c for c in node.named_children if c.type != "comment"]
            node = named[-1] if named else None
        else:
            node = node.child_by_field_name("name")
    if node is None or node.type != "identifier":
        return ""
    return node.text.decode("utf-8", "replace")
