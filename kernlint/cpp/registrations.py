"""Functions registered with PyTorch's dispatcher: the `torch-library` FFI boundary.

`ffi-non-fixed-width-int` judges these functions when `ffi-boundaries` names
"torch-library". A function is registered when a `TORCH_LIBRARY*` block (`TORCH_LIBRARY`,
`TORCH_LIBRARY_IMPL`, `TORCH_LIBRARY_FRAGMENT`, their `STABLE_` forms, vLLM's
`TORCH_LIBRARY_EXPAND`: any macro whose name holds `TORCH_LIBRARY`, followed by a `{...}`
body) names it through its module variable (the macro's last argument):

* `m.impl("op", &fn)`, `m.impl("op", torch::kCUDA, &fn)`, `m.impl("op", TORCH_FN(fn))`,
  `ops.impl("op", TORCH_BOX(&fn))`, `m.impl("op", torch::dispatch(key, &fn))`: the last
  argument;
* `m.def("schema", &fn)`: the second argument.

A name spelled through an unknown call (an adapter such as `make_pytorch_shim(&fn)` changes the
types the dispatcher sees) or a lambda is not a registration of a named function. The
registration usually sits in another file than the definition: the runner gathers the names
registered in the run's C++ files before the files are linted (`gather`), and a file's own
registrations count too (`registered_in`). A definition whose registration is not among the
checked files is not judged.
"""

from __future__ import annotations

import re

from ..lazyre import lazy_compile
from .lexer import literal_spans

_REGISTERED: frozenset[str] = frozenset()
_FINGERPRINT: str | None = None
_CACHE_KEY = "project:torch-registrations"
TORCH_LIBRARY = "torch-library"

_BLOCK = lazy_compile(rb"\b[A-Za-z_]*TORCH_LIBRARY\w*\s*\(")
_DIRECTIVE = lazy_compile(rb"^[ \t]*#(?:[^\n\\]|\\.)*", re.M | re.S)
_USING = lazy_compile(rb"\busing\s+namespace\s+((?:::)?\s*\w+(?:\s*::\s*\w+)*)\s*;")
_NAME = lazy_compile(r"&?\s*(?:::)?\s*([A-Za-z_]\w*(?:\s*::\s*[A-Za-z_]\w*)*)\s*(<.*>)?", re.S)
_CALL = lazy_compile(r"((?:::)?[A-Za-z_]\w*(?:\s*::\s*[A-Za-z_]\w*)*)\s*\((.*)\)", re.S)
_CAST = lazy_compile(r"(?:static_cast|reinterpret_cast)\s*<.*>\s*\((.*)\)", re.S)
# Calls that hand the dispatcher the function itself (its last argument), types unchanged.
_TRANSPARENT = frozenset({"TORCH_FN", "TORCH_BOX", "dispatch"})
_NOT_NEWLINE = lazy_compile(rb"[^\n]")
_OPEN = b"([{"
_CLOSE = b")]}"


def registered() -> frozenset[str]:
    """Qualified names (`fn`, `vllm::fn`) registered in the run's C++ files."""
    return _REGISTERED


def set_registered(names) -> None:
    global _REGISTERED, _FINGERPRINT
    _REGISTERED = frozenset(names)
    _FINGERPRINT = None


def fingerprint() -> str:
    """What a file's torch-library findings depend on beyond its bytes (the result cache)."""
    global _FINGERPRINT
    if _FINGERPRINT is None:
        import hashlib

        text = "\n".join(sorted(_REGISTERED)).encode()
        _FINGERPRINT = hashlib.sha256(text).hexdigest()[:12]
    return _FINGERPRINT


def state() -> frozenset[str]:
    return _REGISTERED


def restore(saved) -> None:
    set_registered(saved)


def wants_torch_library(settings) -> bool:
    kinds = getattr(settings, "ffi_boundaries", None)
    return kinds is not None and TORCH_LIBRARY in kinds


def _judges_torch_library(settings) -> bool:
    return wants_torch_library(settings) and any(
        r.name == FFI_RULE for r in getattr(settings, "enabled", ())
    )


FFI_RULE = "ffi-non-fixed-width-int"


def code_view(data: bytes) -> bytes:
    """`data` with comments, string and character literals and preprocessor directives
    blanked (spaces; line breaks kept): offsets are unchanged."""
    out = bytearray(data)
    for span in literal_spans(data):
        _blank(out, span.start, span.end)
    for m in _DIRECTIVE.finditer(bytes(out)):
        _blank(out, m.start(), m.end())
    return bytes(out)


def _blank(out: bytearray, start: int, end: int) -> None:
    out[start:end] = _NOT_NEWLINE.sub(b" ", bytes(out[start:end]))


def registered_in(data: bytes) -> set[str]:
    """The functions the `TORCH_LIBRARY*` blocks of one C++ file register, as qualified names
    (template arguments and `&` removed). An unqualified name also stands for the same name in
    each namespace the file opens with `using namespace`."""
    if b"TORCH_LIBRARY" not in data:
        return set()
    code = code_view(data)
    names: set[str] = set()
    scopes = _Namespaces(code)
    for m in _BLOCK.finditer(code):
        args_end = _closing(code, m.end() - 1)
        if args_end is None:
            continue
        args = _split_args(code[m.end() : args_end].decode("utf-8", "replace"))
        body = _skip_space(code, args_end + 1)
        if not args or body >= len(code) or code[body : body + 1] != b"{":
            continue  # (a macro's definition or use without a body)
        var = args[-1].strip()
        body_end = _closing(code, body)
        if not re.fullmatch(r"[A-Za-z_]\w*", var) or body_end is None:
            continue
        enclosing = scopes.at(m.start())
        for name in _registrations(code, body + 1, body_end, var):
            # Looked up from the block's namespace outwards (`fn` in `namespace a {` is
            # `a::fn` or `::fn`).
            names |= {"::".join((*enclosing[:i], name)) for i in range(len(enclosing) + 1)}
    if not names:
        return names
    usings = {
        "::".join(p.strip() for p in u.decode().split("::") if p.strip())
        for u in _USING.findall(code)
    }
    for name in list(names):
        names |= {f"{u}::{name}" for u in usings if u}
    return names


_NAMESPACE_EVENT = lazy_compile(rb"\bnamespace\b\s*((?:\w+(?:\s*::\s*\w+)*)?)\s*\{|[{}]")


class _Namespaces:
    """The named namespaces open at an offset of a code view (anonymous ones left out),
    read in one pass as offsets increase."""

    def __init__(self, code: bytes) -> None:
        self._events = _NAMESPACE_EVENT.finditer(code)
        self._stack: list[tuple[str, ...] | None] = []  # a namespace's names, or None: a brace
        self._next = next(self._events, None)

    def at(self, offset: int) -> tuple[str, ...]:
        while self._next is not None and self._next.start() < offset:
            m = self._next
            if m.group(0) == b"}":
                if self._stack:
                    self._stack.pop()
            elif m.group(0) == b"{":
                self._stack.append(None)
            else:
                text = m.group(1).decode("utf-8", "replace")
                self._stack.append(tuple(p.strip() for p in text.split("::") if p.strip()))
            self._next = next(self._events, None)
        return tuple(p for entry in self._stack if entry for p in entry)


def _registrations(code: bytes, start: int, end: int, var: str) -> set[str]:
    out: set[str] = set()
    call = re.compile(rb"\b" + re.escape(var.encode()) + rb"\s*\.\s*(impl|def)\s*\(")
    for m in call.finditer(code, start, end):
        close = _closing(code, m.end() - 1)
        if close is None or close > end:
            continue
        args = _split_args(code[m.end() : close].decode("utf-8", "replace"))
        if m.group(1) == b"impl":
            target = args[-1] if len(args) >= 2 else None
        else:
            target = args[1] if len(args) >= 2 else None
        name = function_ref(target) if target is not None else None
        if name:
            out.add(name)
    return out


def function_ref(arg: str) -> str | None:
    """The function an argument names (`&fn`, `ns::fn`, `TORCH_FN(fn)`, `TORCH_BOX(&fn)`,
    `static_cast<...>(&fn)`), or None (a lambda, an unknown call, a dispatch key)."""
    from ..project import _without_template_args

    arg = arg.strip()
    for _ in range(8):  # (wrappers nest a few deep at most)
        cast = _CAST.fullmatch(arg)
        if cast is not None:
            arg = cast.group(1).strip()
            continue
        call = _CALL.fullmatch(arg)
        if call is None:
            break
        callee = call.group(1).replace(" ", "").split("::")[-1]
        inner = _split_args(call.group(2))
        if callee not in _TRANSPARENT or not inner:
            return None
        arg = inner[-1].strip()
    while arg.startswith("(") and arg.endswith(")"):
        arg = arg[1:-1].strip()
    m = _NAME.fullmatch(arg)
    if m is None:
        return None
    name = _without_template_args(m.group(1))
    parts = [p.strip() for p in name.split("::") if p.strip()]
    if not parts or (parts[-1][:1] == "k" and parts[-1][1:2].isupper()):
        return None  # (`torch::kCUDA`: a dispatch key, not a function)
    return "::".join(parts)


def _skip_space(code: bytes, i: int) -> int:
    n = len(code)
    while i < n and code[i] in b" \t\r\n\f\v":
        i += 1
    return i


def _closing(code: bytes, open_at: int) -> int | None:
    """Offset of the bracket closing the one at `open_at` (literals already blanked), or None
    where the brackets do not balance."""
    stack = []
    for i in range(open_at, len(code)):
        c = code[i]
        if c in _OPEN:
            stack.append(_CLOSE[_OPEN.index(c)])
        elif c in _CLOSE:
            if not stack or stack.pop() != c:
                return None
            if not stack:
                return i
    return None


def _split_args(text: str) -> list[str]:
    """Top-level comma-separated arguments (brackets balanced; at the top level, a `<` right
    after a name opens template arguments: `fn<float, 4>` is one argument)."""
    out: list[str] = []
    depth = angle = start = 0
    for i, c in enumerate(text):
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
        elif depth:
            continue
        elif c == "<" and i > 0 and (text[i - 1].isalnum() or text[i - 1] == "_"):
            angle += 1
        elif c == ">" and angle:
            angle -= 1
        elif c == "," and angle == 0:
            out.append(text[start:i])
            start = i + 1
    tail = text[start:]
    if tail.strip() or out:
        out.append(tail)
    return out


def collect(paths, cache=None, stats=None) -> set[str]:
    """The functions registered in these C++ files; with a cache, files whose size and mtime
    are unchanged since the last run are not read again."""
    from ..project import cached_names

    return cached_names(paths, cache, stats, _CACHE_KEY, registered_in)


def gather(candidates, resolver, cache=None, stats=None) -> None:
    """Set `registered()` for a run: the registrations of its C++ files when some config of
    the run names the torch-library boundary, else none."""
    cpp = [k for k, c in enumerate(candidates) if c.language == "cpp"]
    for k in cpp:
        if candidates[k].explicit:
            resolver.for_file(candidates[k].abspath)  # (a named file's may not be built yet)
    if not cpp or not any(_judges_torch_library(s) for s in resolver.all_settings()):
        set_registered(())
        return
    paths = [candidates[k].abspath for k in cpp]
    found = collect(paths, cache, [stats[k] for k in cpp] if cache is not None else None)
    set_registered(found)
