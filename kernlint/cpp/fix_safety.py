"""Does the fixed file still compile? Syntactic checks behind the unsafe fixes of the C++ rules.

An unsafe fix may change what a kernel means; it must not turn a file that compiled into one
that does not. A fix that changes a declaration must therefore change everything that has to
match it, and this module finds those places:

* `const` on a kernel's pointer parameter (read-only-pointer-not-const) must reach the casts that
  convert the pointer to a non-const type (`reinterpret_cast<float4*>(p)` becomes
  `reinterpret_cast<const float4*>(p)`), the local pointer variables it initializes
  (`float* row = p + k;` becomes `const float* row = p + k;`), the other definitions, the forward
  declarations and the explicit instantiations of the kernel in the file;
* a fixed-width integer that is a different type (`long long` -> `int64_t`, which is `long` on
  LP64) must reach every declaration of the function in the file;
* `__restrict__` on a parameter (kernel-pointer-not-restrict) is a top-level qualifier, so the
  declarations need not change, but a reference to the parameter or its address no longer binds.

Each check returns the edits the fix must carry (possibly none), or None when the analysis cannot
show that the fixed file compiles: the rule then reports its finding without a fix. The checks
see one file: a declaration in another file or a header is not seen.
"""

from __future__ import annotations

import re

from ..lazyre import lazy_compile
from ..model import Edit
from .lexer import span_at
from .params import function_declarator
from .parser import Seeker, identifier_nodes
from .writes import COMPARISON_OPS, DECLARATOR_PARENTS, STATEMENT_PARENTS

# Callees that take a pointer to const (`const void*`, `const T*`): SGLang's `load_as` and
# `AlignedVector::load`, the read-only cache loads, printf.
CONST_POINTER_CALLEES = frozenset(
    {"load", "load_as", "__ldg", "__ldca", "__ldcg", "__ldcs", "__ldlu", "__ldcv", "printf"}
)
# Functions of values: an element passed to them is copied.
VALUE_FUNCTIONS = frozenset(
    {
        "__half2float",
        "__bfloat162float",
        "__float2half",
        "__float2bfloat16",
        "__float2half_rn",
        "__float2bfloat16_rn",
        "__half22float2",
        "__bfloat1622float2",
        "__low2float",
        "__high2float",
        "max",
        "min",
        "fmaxf",
        "fminf",
        "fabsf",
        "abs",
        "expf",
        "__expf",
        "logf",
        "__logf",
        "sqrtf",
        "rsqrtf",
        "tanhf",
        "exp2f",
        "powf",
        "isnan",
        "isinf",
        "__shfl_sync",
        "__shfl_xor_sync",
        "__shfl_down_sync",
        "__shfl_up_sync",
    }
)
_INTEGER_TYPES = frozenset(
    {
        "int",
        "long",
        "long long",
        "unsigned",
        "unsigned int",
        "unsigned long",
        "size_t",
        "ptrdiff_t",
        "int32_t",
        "int64_t",
        "uint32_t",
        "uint64_t",
        "bool",
    }
)
# Where a function's declarator sits: a definition, or a declaration of some kind.
_OWNERS = frozenset(
    {"function_definition", "declaration", "field_declaration", "template_instantiation"}
)
_WRAPPING_DECLARATORS = frozenset(
    {"pointer_declarator", "reference_declarator", "parenthesized_declarator"}
)
_TYPE_PARAMETERS = frozenset(
    {
        "type_parameter_declaration",
        "variadic_type_parameter_declaration",
        "optional_type_parameter_declaration",
    }
)
_WORDS = lazy_compile(rb"\w+")
_FIXED_WIDTH_HEADER = lazy_compile(
    rb"^[ \t]*#[ \t]*include[ \t]*[<\"](?:cstdint|stdint\.h|cinttypes|inttypes\.h|tvm/ffi/[^>\"]*"
    rb"|sgl_kernel/[^>\"]*)[>\"]",
    re.M,
)


class Declared:
    """One function declarator of a name in the file."""

    __slots__ = ("node", "owner", "params", "variadic")

    def __init__(self, node, owner) -> None:
        self.node = node  # function_declarator
        self.owner = owner  # function_definition, declaration, field_declaration, ...
        plist = node.child_by_field_name("parameters")
        children = plist.named_children if plist is not None else []
        self.params = [
            c
            for c in children
            if c.type in ("parameter_declaration", "optional_parameter_declaration")
        ]
        self.variadic = any(c.type == "variadic_parameter_declaration" for c in children) or (
            plist is not None and any(c.type == "..." for c in plist.children)
        )

    @property
    def is_definition(self) -> bool:
        return self.owner.type == "function_definition"


class Shape:
    """The declarator shape of one parameter (named or not)."""

    __slots__ = ("pointers", "pointee_const", "reference", "array_of_pointers", "function")

    def __init__(self, param) -> None:
        self.pointers = 0
        self.reference = False
        self.array_of_pointers = False
        self.function = False
        type_node = param.child_by_field_name("type")
        self.pointee_const = any(
            c.type == "type_qualifier" and c.text == b"const" and c is not type_node
            for c in param.children
        )
        d = param.child_by_field_name("declarator")
        while d is not None:
            t = d.type
            if t in ("pointer_declarator", "abstract_pointer_declarator"):
                self.pointers += 1
            elif t in ("reference_declarator", "abstract_reference_declarator"):
                self.reference = True
            elif t in ("array_declarator", "abstract_array_declarator"):
                if self.pointers:
                    self.array_of_pointers = True  # `T* p[4]`: a pointer to pointers
            elif t in ("function_declarator", "abstract_function_declarator"):
                self.function = True
                break
            elif t in ("identifier", "field_identifier"):
                break
            nxt = d.child_by_field_name("declarator")
            if nxt is None:
                named = [c for c in d.named_children if c.type != "type_qualifier"]
                nxt = named[-1] if named else None
            d = nxt

    @property
    def plain_pointer(self) -> bool:
        """`T* p`, `const T* p`, `T (*p)[4]`: one level of pointer, no reference or function."""
        return (
            self.pointers == 1
            and not self.reference
            and not self.array_of_pointers
            and not self.function
        )

    @property
    def by_value(self) -> bool:
        return not (self.pointers or self.reference or self.array_of_pointers or self.function)


def function_name_node(func_node):
    """The identifier naming a function definition or declaration (`a::b<T>` -> `b`)."""
    decl = function_declarator(func_node)
    return _declared_name(decl) if decl is not None else None


def display_name(func) -> str:
    """A `Function`'s name for messages: its declarator's text where facts give none (an
    explicit specialization, `k<int32_t>`)."""
    if func.name:
        return func.name
    decl = function_declarator(func.node)
    target = decl.child_by_field_name("declarator") if decl is not None else None
    return " ".join(target.text.decode("utf-8", "replace").split()) if target is not None else ""


def _declared_name(fdecl):
    node = fdecl.child_by_field_name("declarator")
    while node is not None and node.type in ("qualified_identifier", "template_function"):
        node = node.child_by_field_name("name")
    if node is None or node.type not in ("identifier", "field_identifier"):
        return None
    return node


def _field_is(parent, field: str, node) -> bool:
    child = parent.child_by_field_name(field)
    return child is not None and child.id == node.id


def _name_expression(node):
    """From a name up through `a::b`, `b<T>` and `obj.b` to the expression it names."""
    while True:
        parent = node.parent
        if parent is None:
            return node
        t = parent.type
        if t in ("qualified_identifier", "template_function", "template_method"):
            if not _field_is(parent, "name", node):
                return node
        elif t == "field_expression":
            if not _field_is(parent, "field", node):
                return node
        else:
            return node
        node = parent


def _is_auto(type_node) -> bool:
    return type_node is not None and type_node.type == "placeholder_type_specifier"


def _accepts_any_function(declared: Declared, param) -> bool:
    """Does this parameter take a function of any type: a deduced template type (`F`, `F&&`,
    `auto`), or `void*` / `const void*`?"""
    type_node = param.child_by_field_name("type")
    if type_node is None:
        return False
    if _is_auto(type_node):
        return True
    shape = Shape(param)
    text = type_node.text
    if text == b"void":
        return shape.plain_pointer
    if shape.pointers or shape.function or shape.array_of_pointers:
        return False
    template = declared.owner.parent
    if template is None or template.type != "template_declaration":
        return False
    plist = template.child_by_field_name("parameters")
    names = set()
    for p in plist.named_children if plist is not None else ():
        if p.type in _TYPE_PARAMETERS:
            names.update(c.text for c in p.named_children if c.type == "type_identifier")
    return text in names


def _declares_reference(declarator) -> bool:
    """Does a variable's declarator make it a reference (`T& r`, `T*& r`)?"""
    d = declarator
    while d is not None and d.type not in ("identifier", "field_identifier"):
        if d.type == "reference_declarator":
            return True
        nxt = d.child_by_field_name("declarator")
        if nxt is None:
            named = [c for c in d.named_children if c.type != "type_qualifier"]
            nxt = named[-1] if named else None
        d = nxt
    return False


def _has_function_declarator(node) -> bool:
    stack = [node]
    while stack:
        n = stack.pop()
        if n.type in ("function_declarator", "abstract_function_declarator"):
            return True
        stack.extend(n.named_children)
    return False


def _callee(call):
    """(simple name, template_argument_list or None, function node) of a call expression."""
    fn = call.child_by_field_name("function")
    node = fn
    targs = None
    if node is not None and node.type == "field_expression":
        node = node.child_by_field_name("field")
    while node is not None and node.type in (
        "qualified_identifier",
        "template_function",
        "template_method",
    ):
        if node.type in ("template_function", "template_method"):
            targs = node.child_by_field_name("arguments")
        node = node.child_by_field_name("name")
    name = node.text.decode("utf-8", "replace") if node is not None else ""
    return name, targs, fn


def _arg_index(arglist, node) -> int:
    i = 0
    for child in arglist.named_children:
        if child.type == "comment":
            continue
        if child.id == node.id:
            return i
        i += 1
    return -1


def _single_type(targs):
    """The one type_descriptor of a cast's template argument list, or None."""
    named = [c for c in targs.named_children if c.type != "comment"]
    if len(named) != 1 or named[0].type != "type_descriptor":
        return None
    return named[0]


def _type_pointee_const(td) -> bool:
    return any(c.type == "type_qualifier" and c.text == b"const" for c in td.children)


def _single_abstract_pointer(td) -> bool:
    """`float4*`, `T* __restrict__`: one pointer level and nothing else."""
    d = td.child_by_field_name("declarator")
    if d is None or d.type != "abstract_pointer_declarator":
        return False
    return d.child_by_field_name("declarator") is None


class FixSafety:
    """Per-file checks; create one per rule run (`FixSafety(ctx)`)."""

    # After this many distinct names looked up one by one, index every word of the file once.
    _LOOKUPS_BEFORE_INDEX = 32

    def __init__(self, ctx) -> None:
        self.ctx = ctx
        self.data = ctx.data
        self.root = ctx.facts.root
        self._occurrences: dict[str, list[int]] = {}
        self._words: dict[bytes, list[int]] | None = None
        self._lookups = 0
        self._declared: dict[str, list[Declared] | None] = {}
        self._declared_any: dict[str, list[Declared]] = {}

    # -- names in the file -------------------------------------------------------------------
    def occurrences(self, name: str) -> list[int]:
        """Offsets of `name` as a whole word, outside comments and string literals."""
        found = self._occurrences.get(name)
        if found is not None:
            return found
        key = name.encode()
        data = self.data
        if self._words is None and self._lookups >= self._LOOKUPS_BEFORE_INDEX:
            words: dict[bytes, list[int]] = {}
            for m in _WORDS.finditer(data):
                words.setdefault(m.group(), []).append(m.start())
            self._words = words
        if self._words is not None:
            raw = self._words.get(key, [])
        else:
            self._lookups += 1
            raw = []
            size = len(key)
            i = data.find(key)
            while i >= 0:
                before = data[i - 1 : i] if i else b""
                after = data[i + size : i + size + 1]
                if not _WORDS.fullmatch(before or b" ") and not _WORDS.fullmatch(after or b" "):
                    raw.append(i)
                i = data.find(key, i + size)
        spans = self.ctx.literal_spans if raw else []
        found = [i for i in raw if span_at(spans, i) is None]
        self._occurrences[name] = found
        return found

    def _name_nodes(self, name: str) -> list | None:
        """The identifier nodes of every occurrence of `name`, or None when one occurrence is
        not an identifier of the tree (in a macro body, a preprocessor line, an ERROR)."""
        size = len(name.encode())
        out = []
        lookup = self.root.descendant_for_byte_range
        for i in self.occurrences(name):
            node = lookup(i, i + size)
            if (
                node is None
                or node.start_byte != i
                or node.end_byte != i + size
                or node.type not in ("identifier", "field_identifier")
            ):
                return None
            out.append(node)
        return out

    def declared(self, name: str) -> list[Declared] | None:
        """Every function declarator of `name` in the file, or None when the name is used in a
        way a changed signature could break: an explicitly typed function pointer, a template
        argument, a macro body, `decltype`. Calls, launches, arguments (`cudaFuncSetAttribute(k,
        ...)`, `TVM_FFI_DLL_EXPORT_TYPED_FUNC(name, fn)`), casts and `auto` variables are fine."""
        if name in self._declared:
            return self._declared[name]
        nodes = self._name_nodes(name)
        out: list[Declared] | None = [] if nodes is not None else None
        for node in nodes or ():
            expr = _name_expression(node)
            parent = expr.parent
            if parent is None:
                out = None
                break
            t = parent.type
            if t == "function_declarator" and _field_is(parent, "declarator", expr):
                owner = parent.parent
                while owner is not None and owner.type in _WRAPPING_DECLARATORS:
                    owner = owner.parent
                if owner is None or owner.type not in _OWNERS:
                    out = None
                    break
                out.append(Declared(parent, owner))
                continue
            # `&k`, `(k)`, `(&A<T>::run)`
            while parent is not None and (
                parent.type == "parenthesized_expression"
                or (parent.type == "pointer_expression" and parent.children[0].type == "&")
            ):
                expr, parent = parent, parent.parent
            if parent is None:
                out = None
                break
            t = parent.type
            if t == "call_expression" and _field_is(parent, "function", expr):
                continue
            if t == "cast_expression":
                continue
            if t == "argument_list":
                # Passed on (`cudaFuncSetAttribute(k, ...)`, `LaunchKernel(...)(k, ...)`): fine
                # unless a function of this file takes it as a spelled type (`void launch(void
                # (*k)(float*))`, `launch(KernelFn k)`) rather than a deduced one or `void*`.
                call = parent.parent
                callee = ""
                if call is not None and call.type == "call_expression":
                    callee = _callee(call)[0]
                index = _arg_index(parent, expr)
                if all(
                    index >= len(d.params) or _accepts_any_function(d, d.params[index])
                    for d in (self.declared_any(callee) if callee else ())
                ):
                    continue
            if t == "init_declarator" and _field_is(parent, "value", expr):
                decl = parent.parent
                declarator = parent.child_by_field_name("declarator")
                if (
                    decl is not None
                    and decl.type == "declaration"
                    and _is_auto(decl.child_by_field_name("type"))
                    and declarator is not None
                    and not _has_function_declarator(declarator)
                ):
                    continue
            out = None
            break
        self._declared[name] = out
        return out

    def declared_any(self, name: str) -> list[Declared]:
        """The function declarators of `name` that the tree shows (for callee lookups)."""
        found = self._declared_any.get(name)
        if found is not None:
            return found
        out = []
        size = len(name.encode())
        lookup = self.root.descendant_for_byte_range
        for i in self.occurrences(name):
            node = lookup(i, i + size)
            if node is None or node.type not in ("identifier", "field_identifier"):
                continue
            parent = node.parent
            while parent is not None and parent.type in (
                "qualified_identifier",
                "template_function",
            ):
                node, parent = parent, parent.parent
            if parent is not None and parent.type == "function_declarator":
                if _field_is(parent, "declarator", node):
                    owner = parent.parent
                    while owner is not None and owner.type in _WRAPPING_DECLARATORS:
                        owner = owner.parent
                    if owner is not None:
                        out.append(Declared(parent, owner))
        self._declared_any[name] = out
        return out

    def _same_arity(self, func_node) -> tuple[object, list[Declared]] | None:
        """(this function's Declared, every declarator of its name with as many parameters), or
        None when the name's uses cannot be checked or a declarator is variadic."""
        fdecl = function_declarator(func_node)
        name_node = _declared_name(fdecl) if fdecl is not None else None
        if name_node is None:
            return None
        found = self.declared(name_node.text.decode("utf-8", "replace"))
        if found is None:
            return None
        this = next((d for d in found if d.node.id == fdecl.id), None)
        if this is None or this.variadic:
            return None
        group = []
        for d in found:
            if len(d.params) == len(this.params):
                if d.variadic:
                    return None
                group.append(d)
        return this, group

    # -- read-only-pointer-not-const ---------------------------------------------------------
    def const_param_edits(self, func_node, index: int, read_only) -> list[Edit] | None:
        """The edits that add `const` to the pointee of parameter `index` of the kernel
        `func_node` and keep the file compiling: on every definition and declaration of the
        kernel's name with as many parameters (each definition's parameter must be read-only:
        `read_only(definition_node, index)`), and on the casts and local pointer variables the
        parameter flows into. None when that cannot be shown."""
        found = self._same_arity(func_node)
        if found is None:
            return None
        edits: list[Edit] = []
        for d in found[1]:
            param = d.params[index]
            shape = Shape(param)
            if not shape.plain_pointer:
                return None
            if shape.pointee_const:
                continue
            if d.is_definition:
                if not read_only(d.owner, index):
                    return None
                body = d.owner.child_by_field_name("body")
                name = _param_name(param)
                if name and body is not None:
                    flow = _ConstFlow(self, body)
                    if body.has_error or not flow.name_ok(name, body.start_byte):
                        return None
                    edits += flow.edits
            edits.append(Edit(param.start_byte, param.start_byte, "const "))
        return _unique(edits)

    # -- kernel-pointer-not-restrict ---------------------------------------------------------
    def restrict_ok(self, func_node, name: str) -> bool:
        """Does `__restrict__` on parameter `name` keep the body compiling? It does not where
        the parameter is bound to an explicitly typed reference (`float*& r = p;`, a callee of
        this file taking `float*&`) or its address is taken (`&p` is `float* __restrict__*`)."""
        body = func_node.child_by_field_name("body")
        if body is None or not name:
            return True
        seeker = Seeker(body)  # (parents without a lookup from the root each: see Seeker)
        parent_of = seeker.parent
        for ident in identifier_nodes(body, name.encode(), seeker=seeker):
            node = ident
            parent = parent_of(node)
            while parent is not None and parent.type == "parenthesized_expression":
                node, parent = parent, parent_of(parent)
            if parent is None:
                return False
            t = parent.type
            if t == "pointer_expression":
                op = parent.child_by_field_name("operator")
                if op is not None and op.type == "&":
                    return False
            elif t == "init_declarator" and _field_is(parent, "value", node):
                declarator = parent.child_by_field_name("declarator")
                decl = parent_of(parent)
                if _declares_reference(declarator) and not (
                    decl is not None and _is_auto(decl.child_by_field_name("type"))
                ):
                    return False
            elif t == "argument_list":
                call = parent_of(parent)
                if call is None or call.type != "call_expression":
                    continue
                callee, _, _ = _callee(call)
                index = _arg_index(parent, node)
                for d in self.declared_any(callee) if callee else ():
                    if index < len(d.params) and Shape(d.params[index]).reference:
                        return False
        return True

    # -- ffi-non-fixed-width-int -------------------------------------------------------------
    def fixed_width_names_declared(self, replacement: str) -> bool:
        """Is `int64_t` (etc.) declared for this file: a `<cstdint>`-like or TVM FFI / SGLang
        header is included, or the name is already used in code."""
        return bool(_FIXED_WIDTH_HEADER.search(self.data)) or bool(self.occurrences(replacement))

    def int_type_edits(
        self, func_node, index: int | None, spelled: str, replacement: str, normalize
    ) -> list[Edit] | None:
        """For a replacement that is a different type (`long long` -> `int64_t`): replace the
        type of parameter `index` (None: the return type) in every declaration of the function's
        name with as many parameters. Each must spell the same type there (`normalize(type
        node)` == `spelled`), else an overload would collide or a declaration stop matching:
        None."""
        found = self._same_arity(func_node)
        if found is None:
            return None
        edits = []
        for d in found[1]:
            if index is None:
                if d.node.parent is None or d.node.parent.id != d.owner.id:
                    return None  # returns a pointer or a reference
                type_node = d.owner.child_by_field_name("type")
            else:
                param = d.params[index]
                if not Shape(param).by_value:
                    return None
                type_node = param.child_by_field_name("type")
            if type_node is None or normalize(type_node) != spelled:
                return None
            edits.append(Edit(type_node.start_byte, type_node.end_byte, replacement))
        return _unique(edits)


def _param_name(param) -> str:
    d = param.child_by_field_name("declarator")
    while d is not None and d.type not in ("identifier", "field_identifier"):
        nxt = d.child_by_field_name("declarator")
        if nxt is None:
            named = [c for c in d.named_children if c.type != "type_qualifier"]
            nxt = named[-1] if named else None
        d = nxt
    return d.text.decode("utf-8", "replace") if d is not None else ""


def _unique(edits: list[Edit]) -> list[Edit]:
    seen = set()
    out = []
    for e in sorted(edits, key=lambda e: (e.start, e.end, e.content)):
        key = (e.start, e.end, e.content)
        if key not in seen:
            seen.add(key)
            out.append(e)
    return out


_POINTER, _ELEMENT = "pointer", "element"


class _ConstFlow:
    """Does every use of a pointer in a body still compile once its pointee is `const`? Collects
    the edits the uses need: `const` in the target type of a `static_cast`/`reinterpret_cast`
    to a non-const pointer, and in the type of a local pointer variable it initializes.

    Operators applied to an element (`p[i] + x`, `p[i][j]`) are taken to be the built-in ones
    or const-correct class operators; a method called on an element is not proven (it may be
    non-const)."""

    _MAX_ALIASES = 16

    def __init__(self, safety: FixSafety, body) -> None:
        self.safety = safety
        self.body = body
        self.edits: list[Edit] = []
        self._aliases: set[str] = set()
        # (parents known without a lookup from the root: `node.parent` costs the depth)
        self._seeker = Seeker(body)
        self._parent = self._seeker.parent

    def name_ok(self, name: str, after: int) -> bool:
        for ident in identifier_nodes(self.body, name.encode(), seeker=self._seeker):
            if ident.start_byte < after:
                continue
            parent = self._parent(ident)
            if ident.type != "identifier" or parent is None:
                return False
            if parent.type in ("lambda_capture_specifier", "lambda_default_capture"):
                continue
            if parent.type in DECLARATOR_PARENTS and (
                parent.type == "structured_binding_declarator"
                or _field_is(parent, "declarator", ident)
            ):
                return False  # shadowed or redeclared
            if not self._use(ident):
                return False
        return True

    # A use is followed up the tree one step at a time (iteratively: expressions nest deeply):
    # each step answers True (compiles), False (not shown), or the next node and whether it is
    # the pointer (`_POINTER`) or an element reached through it (`_ELEMENT`).
    def _use(self, node) -> bool:
        step = (_POINTER, node)
        while True:
            kind, node = step
            step = self._pointer(node) if kind is _POINTER else self._element(node)
            if step is True or step is False:
                return step

    # The pointer value (now `const T*`).
    def _pointer(self, node):
        parent = self._parent(node)
        if parent is None:
            return False
        t = parent.type
        if t == "parenthesized_expression":
            return _POINTER, parent
        if t == "binary_expression":
            op = parent.child_by_field_name("operator")
            op = op.type if op is not None else ""
            if op in ("+", "-"):
                return _POINTER, parent
            return op in COMPARISON_OPS
        if t == "conditional_expression":
            if _field_is(parent, "condition", node):
                return True
            return _POINTER, parent
        if t == "subscript_expression":
            return (_ELEMENT, parent) if _field_is(parent, "argument", node) else False
        if t == "pointer_expression":
            op = parent.child_by_field_name("operator")
            return (_ELEMENT, parent) if op is not None and op.type == "*" else False
        if t == "field_expression":
            op = parent.child_by_field_name("operator")
            if _field_is(parent, "argument", node) and op is not None and op.type == "->":
                return _ELEMENT, parent
            return False
        if t == "cast_expression":
            return True  # a C-style cast compiles from a const operand; its type is unchanged
        if t == "argument_list":
            return self._argument(parent, node)
        if t == "init_declarator":
            return _field_is(parent, "value", node) and self._init(parent)
        if t == "assignment_expression":
            return _field_is(parent, "left", node)  # re-pointing it: any `T*` converts
        if t == "update_expression":
            return True
        if t == "unary_expression":
            op = parent.child_by_field_name("operator")
            return op is not None and op.type == "!"
        return t in STATEMENT_PARENTS

    def _argument(self, arglist, node):
        call = arglist.parent
        if call is None or call.type != "call_expression":
            return False
        name, targs, _ = _callee(call)
        if name in ("static_cast", "reinterpret_cast"):
            td = _single_type(targs) if targs is not None else None
            if td is None:
                return False
            text = td.text
            if b"&" in text:
                return False
            if b"*" not in text:
                return True  # to an integer: `reinterpret_cast<uintptr_t>(p)`
            if _type_pointee_const(td):
                return True
            if not _single_abstract_pointer(td):
                return False
            self.edits.append(Edit(td.start_byte, td.start_byte, "const "))
            return _POINTER, call
        if name == "const_cast":
            return targs is not None  # its result type is spelled, and compiles from const
        if name in CONST_POINTER_CALLEES:
            return True
        index = _arg_index(arglist, node)
        if index < 0 or not name:
            return False
        shapes = [
            Shape(d.params[index]) for d in self.safety.declared_any(name) if index < len(d.params)
        ]
        if shapes and all(s.plain_pointer and s.pointee_const for s in shapes):
            return True
        sem = self.safety.ctx.semantic if not shapes else None
        if sem is not None:
            return sem.callee_param_const(call.start_byte, index) is True
        return False

    def _init(self, init) -> bool:
        decl = init.parent
        if decl is None or decl.type != "declaration":
            return False
        if len(decl.children_by_field_name("declarator")) != 1:
            return False  # `float *a = p, *b = q;`: one type for several variables
        declarator = init.child_by_field_name("declarator")
        type_node = decl.child_by_field_name("type")
        if declarator is None or type_node is None:
            return False
        auto = _is_auto(type_node)
        if declarator.type == "identifier":
            if auto:
                return self._alias(declarator, decl)
            text = " ".join(type_node.text.decode("utf-8", "replace").split())
            return text.replace("std::", "") in _INTEGER_TYPES  # `int64_t d = p - q;`
        if declarator.type != "pointer_declarator":
            return False
        inner = declarator.child_by_field_name("declarator")
        if inner is None or inner.type != "identifier":
            return False
        if any(c.type == "type_qualifier" and c.text == b"const" for c in decl.children):
            return True  # `const T* q = p;`: its uses compiled with const already
        if not auto:
            self.edits.append(Edit(type_node.start_byte, type_node.start_byte, "const "))
        return self._alias(inner, decl)

    def _alias(self, ident, decl) -> bool:
        name = ident.text.decode("utf-8", "replace")
        if name in self._aliases or len(self._aliases) >= self._MAX_ALIASES:
            return False
        self._aliases.add(name)
        declared = sum(
            1
            for i in identifier_nodes(self.body, name.encode())
            if i.parent is not None
            and i.parent.type in DECLARATOR_PARENTS
            and (
                i.parent.type == "structured_binding_declarator"
                or _field_is(i.parent, "declarator", i)
            )
        )
        return declared == 1 and self.name_ok(name, decl.end_byte)

    # An element reached through the pointer (now a const lvalue).
    def _element(self, node):
        parent = self._parent(node)
        if parent is None:
            return False
        t = parent.type
        if t == "parenthesized_expression":
            return _ELEMENT, parent
        if t == "assignment_expression":
            return not _field_is(parent, "left", node)
        if t == "update_expression":
            return False
        if t == "field_expression":
            if not _field_is(parent, "argument", node):
                return False
            grand = parent.parent
            if grand is not None and grand.type == "call_expression":
                if _field_is(grand, "function", parent):
                    return False  # a method call: it may be non-const
            return _ELEMENT, parent
        if t == "subscript_expression":
            return (_ELEMENT, parent) if _field_is(parent, "argument", node) else True
        if t == "subscript_argument_list":
            return True
        if t == "pointer_expression":
            op = parent.child_by_field_name("operator")
            return (_POINTER, parent) if op is not None and op.type == "&" else False
        if t in ("binary_expression", "unary_expression"):
            return True
        if t == "conditional_expression":
            if _field_is(parent, "condition", node):
                return True
            return _ELEMENT, parent
        if t == "cast_expression":
            type_node = parent.child_by_field_name("type")
            return type_node is not None and b"&" not in type_node.text
        if t == "init_declarator":
            if not _field_is(parent, "value", node):
                return True
            declarator = parent.child_by_field_name("declarator")
            if declarator is None:
                return False
            if declarator.type == "reference_declarator":
                decl = parent.parent
                return decl is not None and any(
                    c.type == "type_qualifier" and c.text == b"const" for c in decl.children
                )
            return declarator.type in ("identifier", "array_declarator")
        if t == "argument_list":
            return self._element_argument(parent, node)
        if t == "initializer_list":
            return True
        return t in STATEMENT_PARENTS

    def _element_argument(self, arglist, node) -> bool:
        call = arglist.parent
        if call is None or call.type != "call_expression":
            return False
        name, targs, fn = _callee(call)
        if name in ("static_cast", "reinterpret_cast", "const_cast", "bit_cast"):
            td = _single_type(targs) if targs is not None else None
            return td is not None and b"&" not in td.text and b"*" not in td.text
        if name in VALUE_FUNCTIONS:
            return True
        if fn is not None and fn.type in ("primitive_type", "type_identifier"):
            return True  # a functional cast, `float(x)`
        index = _arg_index(arglist, node)
        if index < 0 or not name:
            return False
        shapes = [
            Shape(d.params[index]) for d in self.safety.declared_any(name) if index < len(d.params)
        ]
        return bool(shapes) and all(
            s.by_value or (s.reference and s.pointee_const and not s.pointers) for s in shapes
        )
