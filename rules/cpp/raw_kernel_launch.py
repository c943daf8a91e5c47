"""Reports raw CUDA kernel launches in JIT sources.

## What it does
In JIT sources, reports each triple-chevron launch `kernel<<<grid, block, smem, stream>>>(...)`
and each call to `cudaLaunchKernel`, `cudaLaunchKernelEx`, `cudaLaunchKernelExC`,
`cudaLaunchCooperativeKernel` and their HIP counterparts (`hipLaunchKernel`, `hipLaunchKernelEx`,
`hipLaunchKernelExC`, `hipLaunchCooperativeKernel`, `hipLaunchKernelGGL`: `host::LaunchKernel`
serves ROCm too). A `<<<...>>>` in the body of a `#define` is
reported on the chevrons, naming the macro (a launch API called inside a macro body is not
seen).

Never reported inside the abstractions' own implementation (`include/sgl_kernel/**`, where
`host::LaunchKernel` calls `cudaLaunchKernelEx`; `primitives-implementation`), inside a
third-party library's namespace (a CUTLASS device adapter in `cutlass::gemm::device`
launches the CUTLASS way), nor in code the parser could not understand. Files under the JIT
roots that are not SGLang JIT code (torch extensions, which have no `host::LaunchKernel`, and
marked verbatim copies; see `jit-exempt-markers`) are not checked.

## Why is this bad?
SGLang's JIT kernels launch through `host::LaunchKernel(grid, block, device)(kernel, args...)`.
It picks the stream of the tensors' device, checks the launch error with the file and line of
the call, and carries the launch attributes the project relies on (`.enable_pdl(...)`, dynamic
shared memory). A raw launch silently runs on the wrong stream or drops launch errors.

Configure: `launch-wrappers`, and `launch-check` to accept a raw launch whose next statement
calls that check (docs/presets.md).

## Example
```cpp
namespace sglang {
void launch(const float* in, float* out, int32_t n, cudaStream_t stream) {
  scale_kernel<<<(n + 255) / 256, 256, 0, stream>>>(out, in, n);
}
}  // namespace sglang
```

## Use instead
```cpp
namespace sglang {
void launch(const float* in, float* out, int32_t n, DLDevice device) {
  host::LaunchKernel((n + 255) / 256, 256, device)(scale_kernel, out, in, n);
}
}  // namespace sglang
```

## Fix safety
No automatic fix: `LaunchKernel` takes a device rather than a stream, so the launcher's
signature usually changes too.
"""

from __future__ import annotations

import re

from kernlint.cpp.facts import calls_named, in_abstractions, namespace_components
from kernlint.cpp.parser import STATEMENT_BLOCKS
from kernlint.jitscope import LIBRARY_NAMESPACES
from kernlint.lazyre import lazy_compile
from kernlint.model import Rule
from kernlint.record import record

from .raw_cuda_primitive import implementation_exempt

RULE = Rule(
    code="CU006",
    name="raw-kernel-launch",
    language="cpp",
    summary="raw `<<<...>>>` or `cudaLaunchKernel*` launch instead of `host::LaunchKernel`",
    scope="jit",
    triggers=(b"<<<", b"cudaLaunch", b"hipLaunch"),
)

LAUNCH_APIS = frozenset(
    {
        "cudaLaunchKernel",
        "cudaLaunchKernelEx",
        "cudaLaunchKernelExC",
        "cudaLaunchCooperativeKernel",
        "hipLaunchKernel",
        "hipLaunchKernelEx",
        "hipLaunchKernelExC",
        "hipLaunchCooperativeKernel",
        "hipLaunchKernelGGL",
    }
)


# How the messages spell a launch through a known wrapper (`{kernel}`: the launched kernel).
_WRAPPER_CALLS = {
    "host::LaunchKernel": "host::LaunchKernel(grid, block, device)({kernel}, args...)"
}


@record(frozen=True)
class Policy:
    """What a launch must go through (`launch-wrappers`, `launch-check` settings)."""

    wrappers: tuple[str, ...]
    checks: tuple[str, ...]  # calls that, as the next statement, make a raw launch checked


def launch_policy(settings) -> Policy | None:
    """The launch settings, or None when neither is set (SGLang's `host::LaunchKernel`)."""
    wrappers = getattr(settings, "launch_wrappers", None)
    check = getattr(settings, "launch_check", None)
    if wrappers is None and check is None:
        return None
    wrappers = ("host::LaunchKernel",) if wrappers is None else tuple(wrappers)
    checks = (check,) if isinstance(check, str) else tuple(check or ())
    return Policy(wrappers, tuple(c for c in checks if c))


def check(ctx) -> None:
    policy = launch_policy(ctx.settings)
    if policy is None:
        if in_abstractions(ctx.source.abspath or ctx.source.path):
            return
    elif implementation_exempt(ctx) or (not policy.wrappers and not policy.checks):
        return  # (`launch-wrappers = []` without `launch-check`: nothing to point to)
    libraries = _library_namespaces(ctx.settings)
    facts = ctx.facts
    # The calls to look at: those holding a `<<<...>>>`, and those whose callee is named like a
    # launch API (found from the name's occurrences, not by visiting every call).
    calls = [facts.parent(n) for n in facts.nodes("kernel_call_syntax")]
    text = ctx.normalized.data  # the bytes the tree was parsed from
    for api in LAUNCH_APIS:
        if api.encode() in text:
            calls += calls_named(facts.root, text, api.encode())
    seen = set()
    for node in calls:
        if node is None or node.type != "call_expression" or node.id in seen:
            continue
        seen.add(node.id)
        if facts.error_ranges and facts.inside_error(node.start_byte, node.end_byte):
            continue  # never fire on text the parser could not understand
        if _in_library_namespace(node, facts.parent, libraries):
            continue  # code extending a library (a CUTLASS device adapter) launches its way
        if policy is None:
            _launch(node, ctx)
        else:
            _configured_launch(node, ctx, policy)
    if b"<<<" in ctx.data and b"define" in ctx.data:
        _macro_launches(ctx, policy)


def _library_namespaces(settings) -> frozenset[str]:
    extra = getattr(settings, "third_party_namespaces", None)
    if extra is None:
        return LIBRARY_NAMESPACES
    return LIBRARY_NAMESPACES | {n.lstrip(":").split("::")[0] for n in extra}


def _in_library_namespace(node, parent_of, libraries=LIBRARY_NAMESPACES) -> bool:
    """Is the node inside a namespace whose outermost named part is a third-party library's
    (`namespace cutlass::gemm::device {`)? (`parent_of`: the facts' `parent`, known at once
    where `node.parent` goes down from the root: the square of the depth per launch.)"""
    outer = None
    node = parent_of(node)
    while node is not None:
        if node.type == "namespace_definition":
            parts = [p for p in namespace_components(node) if p]
            if parts:
                outer = parts[0]
        node = parent_of(node)
    return outer in libraries


def _launch(node, ctx) -> None:
    fn = node.child_by_field_name("function")
    chevrons = next((c for c in node.children if c.type == "kernel_call_syntax"), None)
    if chevrons is not None and fn is not None:
        name = " ".join(ctx.text(fn).split())
        if len(name) > 40:
            name = name.split("<")[0] + "<...>"
        ctx.report(
            fn.start_byte,
            chevrons.end_byte,
            f"raw launch of `{name}`: use "
            f"`host::LaunchKernel(grid, block, device)({name}, args...)`",
        )
        return
    if fn is None:
        return
    name = ctx.text(fn).lstrip(":")
    if name in LAUNCH_APIS:
        ctx.report_node(
            fn,
            f"`{name}`: launch through `host::LaunchKernel(grid, block, device)(kernel, args...)`",
        )


def _through(policy: Policy, kernel: str) -> str:
    """The wrappers, as the messages spell a launch through them."""
    return " or ".join(
        f"`{_WRAPPER_CALLS.get(w.lstrip(':'), w).format(kernel=kernel)}`" for w in policy.wrappers
    )


def _advice(policy: Policy, kernel: str, what: str, verb: str = "use") -> str:
    """What a message asks of a raw launch (`what`: how it names the launch) under `policy`
    (with SGLang's values, the default messages)."""
    if not policy.checks:
        return f"{what}: {verb} {_through(policy, kernel)}"
    check = " or ".join(f"`{c}()`" for c in policy.checks)
    if not policy.wrappers:
        return f"{what} is not followed by a {check} check: add one as the next statement"
    return (
        f"{what}: {verb} {_through(policy, kernel)}, or check it with {check} as the next statement"
    )


def _configured_launch(node, ctx, policy: Policy) -> None:
    """`_launch` under the `launch-wrappers` / `launch-check` settings."""
    fn = node.child_by_field_name("function")
    if fn is None:
        return
    chevrons = next((c for c in node.children if c.type == "kernel_call_syntax"), None)
    parent_of = ctx.facts.parent
    if chevrons is not None:
        if policy.checks and _checked_after(node, policy.checks, parent_of):
            return
        name = " ".join(ctx.text(fn).split())
        if len(name) > 40:
            name = name.split("<")[0] + "<...>"
        ctx.report(
            fn.start_byte, chevrons.end_byte, _advice(policy, name, f"raw launch of `{name}`")
        )
        return
    name = ctx.text(fn).lstrip(":")
    if name not in LAUNCH_APIS:
        return
    # A launch API returns its error: a launch whose result is used is checked.
    if policy.checks and (
        _result_used(node, parent_of) or _checked_after(node, policy.checks, parent_of)
    ):
        return
    what = f"`{name}` with its result unused" if policy.checks else f"`{name}`"
    ctx.report_node(fn, _advice(policy, "kernel", what, "launch through"))


def _result_used(node, parent_of) -> bool:
    parent = parent_of(node)
    while parent is not None and parent.type == "parenthesized_expression":
        parent = parent_of(parent)
    return parent is not None and parent.type not in ("expression_statement", "cast_expression")


# Nodes that hold a sequence of statements: the one after a statement is its next sibling.
_SEQUENCES = STATEMENT_BLOCKS | {"translation_unit"}
# A statement's branch or body ends: control goes on after the statement that holds it.
_HOLDERS = frozenset(
    {
        "if_statement",
        "else_clause",
        "for_statement",
        "for_range_loop",
        "while_statement",
        "do_statement",
        "switch_statement",
        "labeled_statement",
        "try_statement",
    }
)
_BRANCH_ENDS = frozenset({"preproc_else", "preproc_elif", "preproc_elifdef"})
_STATEMENT = lazy_compile(r"(_statement|^declaration)$")


def _checked_after(node, checks: tuple[str, ...], parent_of) -> bool:
    """Is the launch `node` followed, as the next statement its block runs, by a statement
    calling one of the `checks`? Where the launch ends a branch or a loop body (`if`/`else`,
    `case`, a preprocessor branch, a plain block), the statement after the one holding it
    counts; where it ends a lambda passed to a call (a dispatch macro), the statement after
    that call."""
    stmt = node
    while stmt is not None and not _STATEMENT.search(stmt.type):
        stmt = parent_of(stmt)
    for _ in range(64):  # (statements nest a few levels; never loop on a strange tree)
        if stmt is None:
            return False
        parent = parent_of(stmt)
        if parent is None:
            return False
        if parent.type in _SEQUENCES:
            nxt = stmt.next_named_sibling
            while nxt is not None and nxt.type == "comment":
                nxt = nxt.next_named_sibling
            if nxt is not None and nxt.type == "break_statement":
                stmt = _breaks_out_of(nxt, parent_of)
                continue
            if nxt is not None and nxt.type not in _BRANCH_ENDS and nxt.type != "case_statement":
                return _calls(nxt, checks)
            if parent.type == "compound_statement":
                holder = parent_of(parent)
                if holder is None or holder.type == "function_definition":
                    return False
                if holder.type == "lambda_expression":
                    stmt = _dispatching_statement(holder, parent_of)
                    continue
            elif parent.type == "case_statement":
                stmt = parent_of(parent)  # (falls through to the next case: leave the switch)
                stmt = parent_of(stmt) if stmt is not None else None
                continue
            elif parent.type in _BRANCH_ENDS:
                while parent is not None and parent.type in _BRANCH_ENDS:
                    parent = parent_of(parent)  # (up to the `#if` the branch belongs to)
            elif parent.type == "translation_unit":
                return False
            stmt = parent
        elif parent.type in _HOLDERS:
            stmt = parent
        else:
            return False
    return False


def _breaks_out_of(node, parent_of):
    """The `switch` or loop a `break` leaves, or None."""
    node = parent_of(node)
    while node is not None and node.type not in (
        "switch_statement",
        "for_statement",
        "for_range_loop",
        "while_statement",
        "do_statement",
        "function_definition",
        "lambda_expression",
    ):
        node = parent_of(node)
    if node is None or node.type in ("function_definition", "lambda_expression"):
        return None
    return node


def _dispatching_statement(lam, parent_of):
    """The expression statement of the call a lambda is an argument of (`DISPATCH(t, [&] {...});`:
    the call runs it), or None."""
    args = parent_of(lam)
    if args is None or args.type != "argument_list":
        return None
    call = parent_of(args)
    stmt = parent_of(call) if call is not None else None
    return stmt if stmt is not None and stmt.type == "expression_statement" else None


def _calls(stmt, checks: tuple[str, ...]) -> bool:
    """Does the statement call one of the `checks` (`C();`, `return C();`, `auto e = C();`,
    `CHECK(C());`, or in the condition of an `if`/`switch`/`while`)?"""
    if stmt.type in ("if_statement", "switch_statement", "while_statement"):
        stmt = stmt.child_by_field_name("condition")
    elif stmt.type not in ("expression_statement", "return_statement", "declaration"):
        return False
    stack = [stmt] if stmt is not None else []
    wants = [c.lstrip(":") for c in checks]
    while stack:
        n = stack.pop()
        if n.type == "lambda_expression":
            continue
        if n.type == "call_expression":
            fn = n.child_by_field_name("function")
            if fn is not None:
                spelled = "".join(fn.text.decode("utf-8", "replace").split())
                if any(_same_name(spelled, want) for want in wants):
                    return True
        stack.extend(n.named_children)
    return False


def _same_name(spelled: str, want: str) -> bool:
    spelled = spelled.lstrip(":")
    return spelled == want or spelled.endswith("::" + want) or want.endswith("::" + spelled)


_DEFINE = lazy_compile(rb"[ \t]*#[ \t]*define[ \t]+([A-Za-z_]\w*)")
_CHEVRONS = lazy_compile(rb"<<<(?:[^<>;{}]|<[^<>;{}]*>)*?>>>", re.S)


def _macro_launches(ctx, policy: Policy | None = None) -> None:
    """`<<<...>>>` in the body of a `#define` (the tree holds a macro body as opaque text):
    reported on the chevrons, naming the macro."""
    data = ctx.data
    spans = None
    for m in _CHEVRONS.finditer(data):
        start = _logical_line_start(data, m.start())
        define = _DEFINE.match(data, start)
        if define is None or define.end() > m.start():
            continue
        if spans is None:
            spans = ctx.literal_spans
        from kernlint.cpp.lexer import span_at

        if span_at(spans, m.start()) is not None:
            continue  # in a comment or a string literal
        macro = define.group(1).decode()
        if policy is None:
            ctx.report(
                m.start(),
                m.end(),
                f"raw launch in the body of macro `{macro}`: use "
                f"`host::LaunchKernel(grid, block, device)(kernel, args...)`",
            )
            continue
        if policy.checks and _macro_checked(data, m.end(), policy.checks):
            continue
        what = f"raw launch in the body of macro `{macro}`"
        ctx.report(m.start(), m.end(), _advice(policy, "kernel", what))


def _macro_checked(data: bytes, end: int, checks: tuple[str, ...]) -> bool:
    """In a macro body, is the launch whose chevrons end at `end` checked: the statement after
    it calls one of the `checks`, or nothing follows it in the body (the check may follow the
    macro's use)?"""
    body_end = data.find(b"\n", end)
    while body_end > 0 and data[:body_end].rstrip(b"\r").endswith(b"\\"):
        body_end = data.find(b"\n", body_end + 1)
    body = data[end : len(data) if body_end < 0 else body_end]
    # Past the launch's arguments and its `;`.
    depth, i = 0, 0
    while i < len(body):
        c = body[i : i + 1]
        if c == b"(":
            depth += 1
        elif c == b")":
            depth -= 1
            if depth == 0:
                i += 1
                break
        i += 1
    rest = re.sub(rb"\\\r?\n|/\*.*?\*/|//[^\n]*", b" ", body[i:], flags=re.S).strip()
    rest = rest[1:].strip() if rest.startswith(b";") else rest
    if not rest or rest in (b"}", b"})", b"} while (0)", b"} while (0);", b"} while(0)"):
        return True
    following = rest.split(b";", 1)[0]
    names = b"|".join(re.escape(c.lstrip(":").split("::")[-1].encode()) for c in checks)
    return re.search(rb"\b(?:" + names + rb")\s*\(", following) is not None


def _logical_line_start(data: bytes, pos: int) -> int:
    """The start of the logical line holding `pos` (physical lines joined by a backslash)."""
    start = data.rfind(b"\n", 0, pos) + 1
    while start > 0:
        prev = data.rfind(b"\n", 0, start - 1) + 1
        line = data[prev : start - 1].rstrip(b"\r")
        if not line.endswith(b"\\"):
            break
        start = prev
    return start
