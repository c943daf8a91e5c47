"""Is the pointee of a kernel's pointer parameter ever written? A conservative, syntactic answer.

`pointee_use(func, param, index)` walks every use of the parameter's name in the function body and
classifies it:

* "read": the use cannot write through the pointer (a load, an arithmetic operand, a comparison,
  a pass to a callee whose matching parameter is `const T*`);
* "write": it does (an assignment or `++` through `p[i]`, `*p`, `*(p + i)`, `p->f`; an atomic; a
  project store; inline asm taking it as an operand; a pass to a callee whose parameter is `T*`);
* "unsure": anything else (an unknown callee, an alias the analysis cannot follow, a `return`, a
  reference bound to an element, a shadowing declaration, a body with parse errors).

The answer for the parameter is "read" only when every use is a read. Rules stay silent otherwise.
Simple pointer aliases (`auto q = p + off;`, `T* q = p;`) are followed one declaration at a time.
"""

from __future__ import annotations

from bisect import bisect_right

from .params import parameters
from .parser import Seeker, identifier_nodes

_POINTER, _ELEMENT = 0, 1  # what `_follow` is looking at: the pointer value or an element

READ, WRITE, UNSURE = "read", "write", "unsure"

# Callees that only read through a pointer argument.
POINTER_READERS = frozenset(
    {
        "load",
        "load_as",
        "__ldg",
        "__ldca",
        "__ldcg",
        "__ldcs",
        "__ldlu",
        "__ldcv",
        "printf",
        "prefetch",
    }
)
# Callees that write through their pointer arguments.
POINTER_WRITERS = frozenset(
    {
        "store",
        "store_as",
        "__stcs",
        "__stcg",
        "__stwb",
        "__stwt",
        "memcpy",
        "memset",
        "memmove",
        "cp_async",
    }
)
# Functions of values: passing an element to them reads it.
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
        "float",
        "int",
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
_CASTS = frozenset({"static_cast", "reinterpret_cast", "const_cast", "bit_cast", "cast"})
# (shared with kernlint.cpp.aliasing and kernlint.cpp.fix_safety)
COMPARISON_OPS = frozenset({"==", "!=", "<", ">", "<=", ">=", "&&", "||"})
# Where an expression's value is only tested or discarded: statements, conditions,
# `sizeof`/`alignof`, `static_assert`.
STATEMENT_PARENTS = frozenset(
    {
        "condition_clause",
        "if_statement",
        "while_statement",
        "do_statement",
        "for_statement",
        "expression_statement",
        "sizeof_expression",
        "alignof_expression",
        "static_assert_declaration",
    }
)
# The nodes a declared name can sit in (its declarator and what holds it).
DECLARATOR_PARENTS = frozenset(
    {
        "init_declarator",
        "declaration",
        "pointer_declarator",
        "reference_declarator",
        "array_declarator",
        "parameter_declaration",
        "optional_parameter_declaration",
        "structured_binding_declarator",
        "for_range_loop",
    }
)
_CONDITION_PARENTS = STATEMENT_PARENTS | {"decltype"}
_ATOMIC_PREFIXES = ("atomic", "red_", "__atomic")


def _is_atomic(name: str, qualified: str) -> bool:
    return name.startswith(_ATOMIC_PREFIXES) or "atomic::" in qualified


def _callee(call) -> tuple[str, str, object | None, object]:
    """(simple name, qualified text, template_argument_list or None, function node)."""
    fn = call.child_by_field_name("function")
    node = fn
    targs = None
    if node is not None and node.type == "field_expression":
        node = node.child_by_field_name("field")
    while node is not None and node.type in ("qualified_identifier", "template_function"):
        if node.type == "template_function":
            targs = node.child_by_field_name("arguments")
            node = node.child_by_field_name("name")
        else:
            node = node.child_by_field_name("name")
    if node is not None and node.type == "template_method":
        targs = node.child_by_field_name("arguments")
        node = node.child_by_field_name("name")
    name = node.text.decode("utf-8", "replace") if node is not None else ""
    qualified = fn.text.decode("utf-8", "replace") if fn is not None else ""
    return name, qualified, targs, fn


def _type_of_template_args(targs) -> str:
    return targs.text.decode("utf-8", "replace") if targs is not None else ""


def _arg_index(arglist, node) -> int:
    i = 0
    for child in arglist.named_children:
        if child.type == "comment":
            continue
        if child.id == node.id:
            return i
        i += 1
    return -1


class Analyzer:
    """Classifies uses of pointer parameters in one function body."""

    def __init__(
        self, body, local_functions: dict[str, list], depth: int = 0, callee_const=None
    ) -> None:
        self.body = body
        self.depth = depth
        # Semantic mode: callee_const(call_start_byte, arg_index) -> True (param is `const T*`),
        # False (`T*`) or None, from the callee's declaration in any included header.
        self.callee_const = callee_const
        self.local_functions = local_functions  # name -> [function_definition nodes]
        self._seen_aliases: set[str] = set()
        self._by_name: dict[bytes, list] = {}
        self._body_text: bytes | None = None
        self._seeker = Seeker(body) if body is not None else None
        self._parent = self._seeker.parent if self._seeker is not None else _node_parent
        self._asm: list[tuple[int, int, object]] | None = None
        self._asm_starts: list[int] = []
        # Verdicts of `_local_callee`, shared by every analyzer of the file when the facts
        # provide a memo (`local_functions.callee_memo`): a verdict depends only on the callee's
        # name, the argument, the depth and `callee_const`.
        memo = getattr(local_functions, "callee_memo", None)
        self._memo: dict = {} if memo is None else memo

    def _identifiers(self, name: str) -> list:
        """The `identifier`/`type_identifier` nodes named `name` in the body, in order."""
        key = name.encode()
        found = self._by_name.get(key)
        if found is None:
            # (the body's bytes are read once, not once per name)
            found = self._by_name[key] = identifier_nodes(
                self.body, key, self._text(), self._seeker
            )
        return found

    def _in_asm(self, ident) -> bool:
        """Is `ident` inside inline asm (a `gnu_asm_expression` above it, with no function or
        lambda between them)? The asm statements of the body are found once, from their
        keyword; only for a name inside one is the path down to it read. (Walking up from every
        use cost the square of the nesting depth per use: `node.parent` itself descends from
        the root.)"""
        if self._asm is None:
            self._asm = _asm_ranges(self.body, self._text(), self._seeker)
            self._asm_starts = [start for start, _end, _node in self._asm]
        if not self._asm:
            return False
        i = bisect_right(self._asm_starts, ident.start_byte) - 1
        if i < 0:
            return False
        _start, end, outer = self._asm[i]
        return ident.end_byte <= end and _asm_above(outer, ident)

    def _text(self) -> bytes:
        if self._body_text is None:
            self._body_text = self.body.text
        return self._body_text

    # -- entry point ------------------------------------------------------------------------
    def param_access(self, name: str) -> str:
        if self.body is None:
            return UNSURE
        if self.body.has_error:
            return UNSURE
        return self._name_access(name, self.body.start_byte)

    def _name_access(self, name: str, after: int) -> str:
        verdict = READ
        for ident in self._identifiers(name):
            if ident.start_byte < after:
                continue
            parent = self._parent(ident)
            if parent is None or ident.type == "type_identifier":
                return UNSURE  # e.g. `Epilogue e(p, n);` read as a function declaration
            if parent.type in DECLARATOR_PARENTS and _is_declarator_of(parent, ident):
                return UNSURE  # shadowed or redeclared
            if parent.type in ("lambda_capture_specifier", "lambda_default_capture"):
                continue
            if self._in_asm(ident):
                return WRITE
            result = self._pointer(ident)
            if result == WRITE:
                return WRITE
            if result == UNSURE:
                verdict = UNSURE
        return verdict

    # -- following a use up the tree ---------------------------------------------------------
    def _pointer(self, node) -> str:
        """The verdict for `node`, an expression whose value is the pointer."""
        return self._follow(node, _POINTER)

    def _element(self, node) -> str:
        """The verdict for `node`, an element (or a part of one) reached through the pointer."""
        return self._follow(node, _ELEMENT)

    def _follow(self, node, mode: int) -> str:
        """A loop, not recursion: each step either decides, or names the node above (and
        whether it is the pointer or an element) to look at next, however deep the use."""
        while True:
            step = self._pointer_step(node) if mode == _POINTER else self._element_step(node)
            if step.__class__ is str:
                return step
            mode, node = step

    # -- the pointer value (a step: a verdict, or (mode, node) to follow next) ---------------
    def _pointer_step(self, node) -> str | tuple:
        parent = self._parent(node)
        if parent is None:
            return UNSURE
        t = parent.type
        if t == "parenthesized_expression":
            return _POINTER, parent
        if t == "binary_expression":
            op = parent.child_by_field_name("operator")
            op = op.type if op is not None else ""
            if op in ("+", "-"):
                return _POINTER, parent
            if op in COMPARISON_OPS:
                return READ
            return UNSURE
        if t == "conditional_expression":
            if _field_is(parent, "condition", node):
                return READ
            return _POINTER, parent
        if t == "subscript_expression" and _field_is(parent, "argument", node):
            return _ELEMENT, parent
        if t == "subscript_argument_list":
            return UNSURE
        if t == "pointer_expression":
            op = parent.child_by_field_name("operator")
            if op is not None and op.type == "*":
                return _ELEMENT, parent
            return UNSURE  # `&p`: the address of the pointer variable escapes
        if t == "field_expression" and _field_is(parent, "argument", node):
            op = parent.child_by_field_name("operator")
            if op is not None and op.type == "->":
                return _ELEMENT, parent
            return UNSURE
        if t == "cast_expression":
            return self._after_cast(parent, parent.child_by_field_name("type"))
        if t == "argument_list":
            return self._pointer_argument(parent, node)
        if t == "init_declarator" and _field_is(parent, "value", node):
            return self._pointer_init(parent)
        if t == "assignment_expression":
            if _field_is(parent, "left", node):
                return READ  # re-pointing the parameter itself
            return UNSURE  # stored into another variable
        if t == "update_expression":
            return READ  # `p++`
        if t == "unary_expression":
            op = parent.child_by_field_name("operator")
            return READ if op is not None and op.type == "!" else UNSURE
        if t in _CONDITION_PARENTS:
            return READ
        return UNSURE

    def _after_cast(self, cast_node, type_node) -> str | tuple:
        text = type_node.text.decode("utf-8", "replace") if type_node is not None else ""
        if "*" not in text:
            return UNSURE  # to an integer (or a reference): the address escapes
        if _pointee_const_text(text):
            return READ
        return _POINTER, cast_node

    def _pointer_argument(self, arglist, node) -> str | tuple:
        call = self._parent(arglist)
        if call is None or call.type != "call_expression":
            return UNSURE
        name, qualified, targs, fn = _callee(call)
        if name in _CASTS and targs is not None:
            return self._after_cast(call, targs)
        if _is_atomic(name, qualified):
            return WRITE
        if name in POINTER_WRITERS:
            return WRITE
        if name in POINTER_READERS:
            return READ
        index = _arg_index(arglist, node)
        verdict = self._local_callee(name, index, element=False)
        if verdict == UNSURE and self.callee_const is not None and name not in self.local_functions:
            const = self.callee_const(call.start_byte, index)
            if const is not None:
                return READ if const else WRITE
        return verdict

    def _local_callee(self, name: str, index: int, element: bool) -> str:
        key = (name, index, element, self.depth, self.callee_const)
        verdict = self._memo.get(key)
        if verdict is None:
            verdict = self._memo[key] = self._local_callee_uncached(name, index, element)
        return verdict

    def _local_callee_uncached(self, name: str, index: int, element: bool) -> str:
        defs = self.local_functions.get(name)
        if not defs or index < 0:
            return UNSURE
        verdicts = set()
        for func in defs:
            params = parameters(func)
            if index >= len(params) or len(params) == 0:
                verdicts.add(UNSURE)
                continue
            param = params[index]
            if element:
                if param.is_reference and not param.pointee_const:
                    verdicts.add(UNSURE)
                elif param.pointer_depth == 0 and not param.is_array:
                    verdicts.add(READ)  # by value or by const reference
                else:
                    verdicts.add(UNSURE)
            elif param.pointer_depth == 1 and not param.is_reference:
                if not param.pointee_const:
                    verdicts.add(WRITE)
                elif self.depth >= 3 or not param.name:
                    verdicts.add(UNSURE)
                else:
                    # `const T*` is a promise the callee can break (inline asm stores, casts):
                    # read its body too.
                    body = func.child_by_field_name("body")
                    sub = Analyzer(body, self.local_functions, self.depth + 1, self.callee_const)
                    verdicts.add(sub.param_access(param.name))
            else:
                verdicts.add(UNSURE)
        if WRITE in verdicts:
            return WRITE
        return READ if verdicts == {READ} else UNSURE

    def _pointer_init(self, init) -> str:
        decl = self._parent(init)
        if decl is None or decl.type != "declaration":
            return UNSURE
        declarator = init.child_by_field_name("declarator")
        type_node = decl.child_by_field_name("type")
        type_text = type_node.text.decode("utf-8", "replace") if type_node is not None else ""
        decl_const = any(c.type == "type_qualifier" and c.text == b"const" for c in decl.children)
        if declarator is None:
            return UNSURE
        if declarator.type == "pointer_declarator":
            if decl_const:
                return READ
            inner = declarator.child_by_field_name("declarator")
            if inner is not None and inner.type == "identifier":
                return self._alias(inner, decl)
            return UNSURE
        if declarator.type == "identifier":
            if type_text in ("auto", "decltype(auto)"):
                return self._alias(declarator, decl)
            if type_text.replace("unsigned ", "").replace("std::", "") in _INTEGER_TYPES:
                return READ  # `int64_t n = p - q;`
        return UNSURE

    def _alias(self, ident, decl) -> str:
        name = ident.text.decode("utf-8", "replace")
        if name in self._seen_aliases or len(self._seen_aliases) > 16:
            return UNSURE
        self._seen_aliases.add(name)
        # Declared exactly once in the body, or we cannot tell which one a use refers to.
        count = sum(
            1
            for i in self._identifiers(name)
            if (up := self._parent(i)) is not None
            and up.type in DECLARATOR_PARENTS
            and _is_declarator_of(up, i)
        )
        if count != 1:
            return UNSURE
        return self._name_access(name, decl.end_byte)

    # -- an element reached through the pointer ---------------------------------------------
    def _element_step(self, node) -> str | tuple:
        parent = self._parent(node)
        if parent is None:
            return UNSURE
        t = parent.type
        if t == "parenthesized_expression":
            return _ELEMENT, parent
        if t == "assignment_expression":
            return WRITE if _field_is(parent, "left", node) else READ
        if t == "update_expression":
            return WRITE
        if t == "field_expression" and _field_is(parent, "argument", node):
            grand = self._parent(parent)
            if (
                grand is not None
                and grand.type == "call_expression"
                and _field_is(grand, "function", parent)
            ):
                return UNSURE  # a method call on the element may modify it
            return _ELEMENT, parent
        if t == "subscript_expression":
            if _field_is(parent, "argument", node):
                return _ELEMENT, parent
            return READ
        if t == "subscript_argument_list":
            return READ  # used as an index
        if t == "pointer_expression":
            op = parent.child_by_field_name("operator")
            if op is not None and op.type == "&":
                return _POINTER, parent
            return UNSURE
        if t in ("binary_expression", "unary_expression"):
            return READ
        if t == "conditional_expression":
            if _field_is(parent, "condition", node):
                return READ
            return _ELEMENT, parent
        if t == "cast_expression":
            type_node = parent.child_by_field_name("type")
            text = type_node.text.decode("utf-8", "replace") if type_node is not None else ""
            return UNSURE if "&" in text else READ
        if t == "init_declarator" and _field_is(parent, "value", node):
            declarator = parent.child_by_field_name("declarator")
            if declarator is not None and declarator.type == "reference_declarator":
                decl = self._parent(parent)
                if decl is not None and any(
                    c.type == "type_qualifier" and c.text == b"const" for c in decl.children
                ):
                    return READ
                return UNSURE
            if declarator is not None and declarator.type in ("identifier", "array_declarator"):
                return READ
            return UNSURE
        if t == "argument_list":
            call = self._parent(parent)
            if call is None or call.type != "call_expression":
                return UNSURE
            name, qualified, targs, fn = _callee(call)
            if name in _CASTS and targs is not None:
                text = _type_of_template_args(targs)
                return UNSURE if "&" in text or "*" in text else READ
            if _is_atomic(name, qualified):
                return UNSURE
            if name in VALUE_FUNCTIONS:
                return READ
            if fn is not None and fn.type in ("primitive_type", "type_identifier"):
                return READ  # functional cast, e.g. `float(x)`
            return self._local_callee(name, _arg_index(parent, node), element=True)
        if t in ("initializer_list", "init_declarator"):
            return READ
        if t in _CONDITION_PARENTS:
            return READ
        return UNSURE


_INTEGER_TYPES = frozenset(
    {
        "int",
        "long",
        "long long",
        "size_t",
        "ptrdiff_t",
        "int32_t",
        "int64_t",
        "uint32_t",
        "uint64_t",
        "bool",
    }
)


def _pointee_const_text(text: str) -> bool:
    """Does a spelled pointer type (`const float4*`, `float const *`, `<const T*>`) point to const?"""
    text = text.strip("<> ")
    star = text.find("*")
    head = text if star < 0 else text[:star]
    return "const" in head.replace("(", " ").replace(")", " ").split()


def _field_is(parent, field: str, node) -> bool:
    child = parent.child_by_field_name(field)
    return child is not None and child.id == node.id


def _is_declarator_of(parent, ident) -> bool:
    """Does `ident` name what `parent` declares (not a use inside it)?"""
    if parent.type == "structured_binding_declarator":
        return True  # `auto [a, b] = ...`: every identifier is a binding
    return _field_is(parent, "declarator", ident)


_SCOPES = frozenset(("function_definition", "lambda_expression"))


def _node_parent(node):
    return node.parent


def _asm_ranges(body, text: bytes, seeker: Seeker) -> list[tuple[int, int, object]]:
    """(start, end, node) of the outermost `gnu_asm_expression` nodes in `body` (`text`: the
    body's bytes; `seeker`: a Seeker of `body`), in order: each holds its `asm`/`__asm__`
    keyword as a child."""
    out: list[tuple[int, int, object]] = []
    base = body.start_byte
    i = text.find(b"asm")
    while i >= 0:
        token = seeker.smallest(base + i, base + i + 3)
        parent = seeker.parent(token) if token is not None else None
        if parent is not None and parent.type == "gnu_asm_expression":
            if not out or parent.start_byte >= out[-1][1]:
                out.append((parent.start_byte, parent.end_byte, parent))
            i = max(i + 1, out[-1][1] - base)  # (an asm nested in it is not outermost)
        else:
            i += 1
        i = text.find(b"asm", i)
    return out


def _asm_above(asm, ident) -> bool:
    """Going down from `asm` (which contains `ident`) to `ident`: is the last asm passed on the
    way not followed by a function or lambda? (What walking up from `ident` would find first.)"""
    target = ident.start_byte
    cursor = asm.walk()
    inside = True  # below an asm with no scope in between
    while True:
        node = cursor.node
        if node.id == ident.id:
            return inside
        if cursor.goto_first_child_for_byte(target) is None:
            return False  # (not reached: `ident` is not below `asm`)
        node = cursor.node
        if node.start_byte > target:
            return False
        if node.type == "gnu_asm_expression":
            inside = True
        elif node.type in _SCOPES:
            inside = False
