"""`kernlint inspect FILE`: what kernlint understood of one file, and the parse-gap figures of
`kernlint check --statistics` / `--show-skipped`.

For C/C++/CUDA: the kernels with their parameters, the FFI-boundary functions and why they are
at the boundary, namespaces, launch sites, whether the file is a JIT source (and the
`jit-roots` glob that says so), and the regions tree-sitter could not parse after
normalization. For Python: the aiter imports with the guard kernlint believes protects each,
`load_jit` calls and their factories, and `register_*_ci` calls. Every fact comes from the
shared facts the rules read (`cpp/facts.py`, `cpp/params.py`, `python/facts.py`,
`python/guards.py`, `python/jit.py`, `project.py`); `reported_by` runs the rules themselves on
the file, so it says what `kernlint check --select ALL --preview FILE` reports there.

The JSON form is documented in docs/output-formats.md.
"""

from __future__ import annotations

import sys

SCHEMA_VERSION = 1
_EXCERPT = 72  # characters of source shown for a launch site or an unparsed region


class InspectError(Exception):
    """Input `kernlint inspect` cannot use (exit status 2)."""


# -- parse gaps in `kernlint check` ---------------------------------------------------------
def encode_unparsed(payload: str, unparsed) -> str:
    """A cache payload that also holds a file's unparsed regions (None: not parsed)."""
    import json

    regions = None if unparsed is None else [list(r) for r in unparsed]
    return json.dumps([payload, regions], separators=(",", ":"))


def decode_unparsed(text: str):
    """(payload, unparsed regions) from `encode_unparsed`'s text; None if it has another shape."""
    import json

    try:
        obj = json.loads(text)
    except ValueError:
        return None
    if type(obj) is not list or len(obj) != 2 or type(obj[0]) is not str:
        return None
    payload, regions = obj
    if regions is None:
        return payload, None
    if type(regions) is not list:
        return None
    out = []
    for r in regions:
        if (
            type(r) is not list
            or len(r) != 3
            or type(r[0]) is not int
            or type(r[1]) is not int
            or type(r[2]) is not str
        ):
            return None
        out.append((r[0], r[1], r[2]))
    return payload, out


def _region_line(path: str, region) -> str:
    start, end, reason = region
    return f"{path}:{start}-{end}: unparsed region" + (f" ({reason})" if reason else "")


def skipped_lines(results) -> list[str]:
    """`path:START-END: unparsed region` for each region of each file, and `path: not checked
    (generated file: WHY)` for each generated file (`--show-skipped`)."""
    out = []
    for r in results:
        if r.generated:
            out.append(f"{r.path}: not checked ({r.generated})")
        for region in r.unparsed or ():
            out.append(_region_line(r.path, region))
    return out


def _file_counts(results, checked) -> dict:
    by_language = {}
    for lang in ("cpp", "python"):
        parsed = [r for r in results if r.language == lang and r.unparsed is not None]
        by_language[lang] = {
            "parsed": len(parsed),
            "with_unparsed_regions": sum(1 for r in parsed if r.unparsed),
        }
    return {
        "checked": len(checked),
        "parsed": sum(v["parsed"] for v in by_language.values()),
        "with_unparsed_regions": sum(v["with_unparsed_regions"] for v in by_language.values()),
        "unparsed_regions": sum(len(r.unparsed) for r in results if r.unparsed),
        "by_language": by_language,
        "generated": sum(1 for r in results if r.generated),
    }


def statistics_tail(results, checked, show_skipped: bool = False) -> str:
    """The files line under `--statistics`' table (text)."""
    c = _file_counts(results, checked)
    cpp, py = c["by_language"]["cpp"], c["by_language"]["python"]
    line = (
        f"Files: {c['checked']} checked, {c['parsed']} parsed by the rules, "
        f"{c['with_unparsed_regions']} with regions no rule could judge "
        f"(C/C++/CUDA: {cpp['with_unparsed_regions']} of {cpp['parsed']}; "
        f"Python: {py['with_unparsed_regions']} of {py['parsed']})."
    )
    if c["generated"]:
        line += f" {c['generated']} generated, checked by no rule."
    if (c["with_unparsed_regions"] or c["generated"]) and not show_skipped:
        line += " `--show-skipped` lists them."
    return line + "\n"


def statistics_json(diagnostics, fix_available, results, checked, show_skipped: bool) -> str:
    """`--output-format json --statistics`: one object (see docs/output-formats.md)."""
    import json

    from .output import unicode_text

    counts: dict[str, list] = {}
    for d in diagnostics:
        entry = counts.setdefault(d.code, [0, d.name, 0])
        entry[0] += 1
        if fix_available(d):
            entry[2] += 1
    rows = sorted(counts.items(), key=lambda kv: (-kv[1][0], kv[0]))
    obj = {
        "rules": [
            {"code": code, "name": name, "count": n, "fixable": fixable > 0}
            for code, (n, name, fixable) in rows
        ],
        "total": len(diagnostics),
        "fixable": sum(v[2] for _, v in rows),
        "files": _file_counts(results, checked),
    }
    if show_skipped:
        obj["unparsed"] = [
            {
                "path": unicode_text(r.path),
                "start_line": start,
                "end_line": end,
                "reason": unicode_text(reason),
            }
            for r in results
            if r.unparsed
            for start, end, reason in r.unparsed
        ]
        obj["generated"] = [
            {"path": unicode_text(r.path), "reason": unicode_text(r.generated)}
            for r in results
            if r.generated
        ]
    return json.dumps(obj, indent=2) + "\n"


# -- `kernlint inspect` ---------------------------------------------------------------------
def cmd_inspect(args) -> int:
    from .config import ConfigError
    from .discovery import PathError

    try:
        report = inspect_path(args.file, config=args.config, wrappers_from=args.wrappers_from)
    except (InspectError, ConfigError, PathError) as exc:
        from .output import warn_line

        warn_line(sys.stderr, f"kernlint: error: {exc}")
        return 2
    if args.format == "json":
        import json

        sys.stdout.write(json.dumps(report, indent=2) + "\n")
    else:
        sys.stdout.write(render_text(report))
    return 0


def _read(path: str, limit: int):
    """The file's SourceFile, or InspectError naming the file."""
    import os

    from .engine import read_source
    from .source import language_of

    if not os.path.lexists(path):
        raise InspectError(f"{path}: no such file or directory")
    if os.path.isdir(path):
        raise InspectError(f"{path}: is a directory (inspect takes one file)")
    language = language_of(path)
    if language is None:
        raise InspectError(f"{path}: not a C/C++/CUDA or Python file (by its extension)")
    source, warning = read_source(os.path.abspath(path), path, language, limit)
    if source is None:
        raise InspectError(warning.removesuffix("; skipped"))
    if language == "python":
        _check_decodes(source)
    return source


def _check_decodes(source) -> None:
    """A Python file must decode in its declared encoding (PEP 263; UTF-8 by default)."""
    import io
    import tokenize

    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(source.data).readline)
    except SyntaxError as exc:  # (a bad cookie, or the first lines are not UTF-8)
        encoding, reason = "utf-8", exc.msg
    else:
        reason = None
    try:
        source.data.decode(encoding)
    except (LookupError, UnicodeDecodeError) as exc:
        reason = str(exc)
    if reason is not None:
        raise InspectError(f"{source.path}: cannot be decoded: {reason}")


def inspect_path(path: str, config: str | None = None, wrappers_from=None) -> dict:
    """What kernlint understood of the file at `path`, as a JSON-ready dict."""
    import os

    from .config import ConfigResolver, Overrides
    from .registry import load_registry

    registry = load_registry()
    resolver = ConfigResolver(registry, Overrides(), config)
    abspath = os.path.abspath(path)
    settings = resolver.for_file(abspath)
    source = _read(path, settings.max_file_size)
    if wrappers_from:
        _load_wrapper_targets(wrappers_from, resolver)
    from .engine import Context
    from .output import unicode_text

    jit = jit_status(settings, abspath)
    if jit["is_jit"]:  # (under the JIT roots, yet not SGLang JIT code: kernlint.jitscope)
        from .jitscope import jit_exemption

        jit["exempt"] = jit_exemption(settings, source.data, source.language)
        jit["is_jit"] = jit["exempt"] is None
    from .engine import generated_of

    ctx = Context(source, settings, jit["is_jit"])
    ctx.generated = generated_of(source, settings)  # (no rule checks a generated file)
    out = {
        "version": SCHEMA_VERSION,
        "path": unicode_text(source.path),
        "language": source.language,
        "lines": _line_count(source),
        "jit": jit,
        "generated": ctx.generated,
    }
    try:
        if source.language == "cpp":
            out.update(_inspect_cpp(ctx, registry))
        else:
            out.update(_inspect_python(ctx, registry))
    except RecursionError:
        raise InspectError(f"{source.path}: too deeply nested to analyze") from None
    return out


def _line_count(source) -> int:
    return max(1, len(source.line_starts) - (1 if source.data.endswith(b"\n") else 0))


def _load_wrapper_targets(paths, resolver) -> None:
    """The FFI targets named by `cuda_wrappers` in these Python files (as a `kernlint check`
    run that includes them collects them)."""
    from .discovery import discover
    from .project import collect, set_wrapper_targets

    found = [c.abspath for c in discover(list(paths), resolver, warn=lambda m: None)]
    set_wrapper_targets(collect([p for p in found if p.endswith((".py", ".pyi"))]))


def jit_status(settings, abspath: str) -> dict:
    """Is the file a JIT source, and which `jit-roots` glob decided it (the last one that
    matches wins, as in a .gitignore; a `!` glob takes a file out)."""
    import os

    from .config import _relative
    from .globmatch import matcher

    is_jit = settings.is_jit(abspath)
    candidates = []
    rel = _relative(abspath, settings.jit_root_base)
    if rel is not None:
        candidates.append(rel)
    candidates.append(abspath.replace(os.sep, "/").lstrip("/"))
    decided = None
    for path in candidates:
        last = None
        for glob in settings.jit_roots:
            positive = glob[1:] if glob.startswith("!") else glob
            if positive and matcher((positive,)).match_file(path):
                last = glob
        if last is not None and (decided is None or not last.startswith("!")):
            decided = last
            if not last.startswith("!"):
                break
    config = settings.raw.path
    return {
        "is_jit": is_jit,
        "glob": decided if is_jit else None,
        "excluded_by": decided if (not is_jit and decided and decided.startswith("!")) else None,
        "config": config,
        "jit_roots": list(settings.jit_roots),
    }


# -- rules' own verdicts ----------------------------------------------------------------------
def _rule_findings(ctx, registry, names) -> tuple[list, list[str]]:
    """The findings of these rules on the file (as `check --select ALL --preview` would run
    them on it alone: a JIT-scoped rule only in a JIT source; suppression comments applied),
    and notes on rules that failed."""
    findings, notes = [], []
    if getattr(ctx, "generated", None):
        return findings, notes  # (a generated file: `check` runs no rule on it)
    for name in names:
        rule = registry.by_name.get(name)
        if rule is None or rule.check is None and rule.visit is None:
            continue
        if rule.scope == "jit" and not ctx.is_jit:
            continue
        before = len(ctx.diagnostics)
        ctx.rule = rule
        try:
            if rule.check is not None:
                rule.check(ctx)
            elif ctx.tree is not None:
                from .engine import _dispatch

                _dispatch(ctx, [rule])
        except RecursionError:
            raise
        except Exception as exc:  # a rule's bug must not hide the facts
            notes.append(f"{rule.name} failed on this file: {type(exc).__name__}: {exc}")
        findings.extend(ctx.diagnostics[before:])
        ctx.rule = None
    if findings:  # (what `check` reports: a `kernlint: ignore[...]` comment is honoured)
        from .suppressions import apply_suppressions, find_suppressions

        findings = apply_suppressions(findings, find_suppressions(ctx.source, registry))
    return findings, notes


def _reported_by(findings, start: int, end: int) -> list[str]:
    return sorted({d.code for d in findings if start <= d.start <= end})


# -- C/C++/CUDA -------------------------------------------------------------------------------
CPP_RULES = (
    "kernel-pointer-not-restrict",
    "read-only-pointer-not-const",
    "ffi-non-fixed-width-int",
    "raw-kernel-launch",
)
LAUNCH_APIS = ("cudaLaunchKernel", "cudaLaunchKernelEx", "cudaLaunchKernelExC")


def _line(ctx, offset: int) -> int:
    return ctx.source.line_index(offset) + 1


def _text(ctx, node) -> str:
    return " ".join(ctx.text(node).split())


def _short(text: str, limit: int = _EXCERPT) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _scope(node) -> list[str]:
    """The namespaces and classes around a node, outermost first (`""`: anonymous)."""
    from .cpp.facts import namespace_components

    out: list[str] = []
    n = node.parent
    while n is not None:
        if n.type == "namespace_definition":
            out[:0] = list(namespace_components(n))
        elif n.type in ("struct_specifier", "class_specifier", "union_specifier"):
            name = n.child_by_field_name("name")
            out.insert(0, name.text.decode("utf-8", "replace") if name is not None else "")
        n = n.parent
    return out


def _namespace_of(node) -> str:
    from .cpp.facts import namespace_components

    parts: list[str] = []
    n = node.parent
    while n is not None:
        if n.type == "namespace_definition":
            parts[:0] = list(namespace_components(n))
        n = n.parent
    return "::".join(p or "(anonymous)" for p in parts)


def _param_json(ctx, p) -> dict:
    return {
        "index": p.index,
        "name": p.name,
        "type": " ".join(p.type_text.split()),
        "text": _text(ctx, p.node),
        "pointer_depth": p.pointer_depth,
        "const": p.pointee_const,
        "restrict": p.restrict,
        "reference": p.is_reference,
        "array": p.is_array,
    }


def _function_json(ctx, func, findings) -> dict:
    node = func.node
    holder = node.parent if node.parent is not None else node
    return {
        "name": func.name,
        "scope": "::".join(s or "(anonymous)" for s in _scope(node)),
        "line": _line(ctx, node.start_byte),
        "end_line": _line(ctx, max(node.start_byte, node.end_byte - 1)),
        "qualifiers": sorted(func.qualifiers),
        "template": holder.type == "template_declaration",
        "parameters": [_param_json(ctx, p) for p in ctx.facts.params_of(node)],
        "reported_by": _reported_by(findings, node.start_byte, node.end_byte),
    }


def _inspect_cpp(ctx, registry) -> dict:
    from .cpp.parser import nodes_of_types
    from .engine import unparsed_regions

    facts = ctx.facts
    findings, notes = _rule_findings(ctx, registry, CPP_RULES)
    kernels = [_function_json(ctx, f, findings) for f in facts.kernels]
    return {
        "namespaces": _namespaces(ctx, nodes_of_types(facts.root, ("namespace_definition",))),
        "kernels": kernels,
        "missed_kernels": _missed_kernels(ctx),
        **_ffi(ctx, findings),
        "launch_sites": _launch_sites(ctx, findings),
        "unparsed": [
            {"start_line": s, "end_line": e, "text": _short(ctx.source.line_text(s - 1))}
            for s, e, _ in unparsed_regions(ctx)
        ],
        "notes": notes,
    }


def _namespaces(ctx, nodes) -> list[dict]:
    from .cpp.facts import namespace_components

    facts = ctx.facts
    out = []
    for node in nodes:
        own = [p or "(anonymous)" for p in namespace_components(node)]
        outer = _namespace_of(node)
        name = "::".join(([outer] if outer else []) + own)
        out.append(
            {
                "name": name,
                "line": _line(ctx, node.start_byte),
                "end_line": _line(ctx, max(node.start_byte, node.end_byte - 1)),
                # (an ERROR inside: its items are not judged by namespace rules)
                "parsed": not node.has_error
                and not facts.inside_error(node.start_byte, node.end_byte),
            }
        )
    return out


def _missed_kernels(ctx) -> list[dict]:
    """`__global__` spelled in code (not a comment, string, directive or declaration) outside
    every kernel kernlint recognized: a kernel definition the parse lost (usually to an
    unparsed region)."""
    from .cpp.lexer import span_at
    from .engine import unparsed_regions

    data = ctx.data
    if b"__global__" not in data:
        return []
    spans = ctx.literal_spans
    known = [(f.node.start_byte, f.node.end_byte) for f in ctx.facts.kernels]
    regions = unparsed_regions(ctx)
    out = []
    i = data.find(b"__global__")
    while i >= 0:
        word = (i == 0 or not _ident(data[i - 1])) and not _ident_at(data, i + 10)
        if (
            word
            and span_at(spans, i) is None
            and not any(s <= i < e for s, e in known)
            and not _not_a_kernel(ctx, i)
        ):
            line = _line(ctx, i)
            here = any(s <= line <= e for s, e, _ in regions)
            out.append(
                {
                    "line": line,
                    "in_unparsed_region": here,
                    "why": _why_missed(ctx, i, here, regions),
                    "text": _short(ctx.source.line_text(line - 1)),
                }
            )
        i = data.find(b"__global__", i + 10)
    return out


def _why_missed(ctx, offset: int, here: bool, regions) -> str:
    if here:
        return "in an unparsed region"
    node = ctx.facts.root.descendant_for_byte_range(offset, offset + 1)
    while node is not None and node.type != "function_definition":
        node = node.parent
    if node is None:
        return "not parsed as a function definition"
    first, last = _line(ctx, node.start_byte), _line(ctx, max(node.start_byte, node.end_byte - 1))
    inside = [s for s, e, _ in regions if first <= s <= last]
    if inside:
        return f"its definition (lines {first}-{last}) holds an unparsed region at line {inside[0]}"
    return f"its definition (lines {first}-{last}) holds a parse error"


_DIRECTIVES = frozenset(("preproc_def", "preproc_function_def", "preproc_call"))
_DECLARATIONS = frozenset(("declaration", "field_declaration", "template_instantiation"))


def _not_a_kernel(ctx, offset: int) -> bool:
    """Is the `__global__` at `offset` in a preprocessor directive (`#define KERNEL __global__
    ...`) or in a declaration the parser understood (a kernel declared, not defined: no rule
    judges declarations)?"""
    if _directive_line(ctx.data, offset):
        return True
    node = ctx.facts.root.descendant_for_byte_range(offset, offset + 1)
    declared = False
    while node is not None:
        if node.type in _DIRECTIVES:
            return True
        if node.type == "ERROR":
            return False
        if node.type in _DECLARATIONS and not node.has_error:
            declared = True
        node = node.parent
    return declared


def _directive_line(data: bytes, offset: int) -> bool:
    """Is `offset` on a preprocessor line (`#...`, with its `\\` continuation lines)? Read
    from the bytes: inside an unparsed region the tree may not hold the directive."""
    start = data.rfind(b"\n", 0, offset) + 1
    while start > 0:
        end = start - 1  # (the line break of the line before)
        if data[end - 1 : end] == b"\r":
            end -= 1
        if data[end - 1 : end] != b"\\":
            break
        start = data.rfind(b"\n", 0, end) + 1  # (the line before continues onto this one)
    return data[start:offset].lstrip(b" \t").startswith(b"#")


def _ident(byte: int) -> bool:
    return byte == 0x5F or 0x30 <= byte <= 0x39 or 0x41 <= byte <= 0x5A or 0x61 <= byte <= 0x7A


def _ident_at(data: bytes, i: int) -> bool:
    return i < len(data) and _ident(data[i])


def _ffi(ctx, findings) -> dict:
    """FFI-boundary functions and the reasons, as ffi-non-fixed-width-int decides them."""
    from .cpp import ffi
    from .project import wrapper_targets

    targets = wrapper_targets()
    exported = ffi.exported_names(ctx)
    boundary, helpers = [], []
    for func in ctx.facts.functions:
        if func.is_kernel or ("device" in func.qualifiers and "host" not in func.qualifiers):
            continue
        simple = func.name.split("::")[-1]
        reasons = []
        if simple and simple in exported:
            reasons.append("exported by TVM_FFI_DLL_EXPORT_TYPED_FUNC")
        if ffi.is_wrapper_target(func, targets):
            reasons.append("named by a Python `cuda_wrappers` target")
        params = ctx.facts.params_of(func.node)
        views = [p for p in params if "TensorView" in p.type_text]
        if views:
            names = ", ".join(p.name or f"#{p.index + 1}" for p in views)
            stream = ffi.stream_parameter(params)
            if not simple:
                helpers.append((func, "TensorView parameters, but no name kernlint can read"))
            elif stream is not None:
                if not reasons:
                    what = f"`{stream.name}`" if stream.name else f"#{stream.index + 1}"
                    helpers.append(
                        (func, f"TensorView parameters ({names}), but takes a stream ({what})")
                    )
            elif ctx.facts.calls_named(simple.encode(), "identifier"):
                if not reasons:
                    helpers.append(
                        (func, f"TensorView parameters ({names}), but called in this file")
                    )
            else:
                reasons.append(f"TensorView parameters ({names}), not called in this file")
        if reasons:
            item = _function_json(ctx, func, findings)
            item["reasons"] = reasons
            boundary.append(item)
    return {
        "ffi_functions": boundary,
        "not_ffi": [
            {"name": f.name, "line": _line(ctx, f.node.start_byte), "why": why}
            for f, why in helpers
        ],
        "wrapper_targets": sorted(targets),
    }


def _launch_sites(ctx, findings) -> list[dict]:
    from .cpp.facts import calls_named

    facts = ctx.facts
    out = []
    for call in facts.launch_sites:
        fn = call.child_by_field_name("function")
        config = next((c for c in call.children if c.type == "kernel_call_syntax"), None)
        kernel = _text(ctx, fn) if fn is not None else None
        out.append(_site(ctx, call, "<<<>>>", kernel, config, findings))
    text = ctx.normalized.data
    for api in ("LaunchKernel", *LAUNCH_APIS):
        if api.encode() not in text:
            continue
        for call in calls_named(facts.root, text, api.encode()):
            if facts.inside_error(call.start_byte, call.end_byte):
                continue
            if api == "LaunchKernel":
                launch = _launch_call(call)
                kernel = _first_arg(ctx, launch) if launch is not None else None
                out.append(_site(ctx, launch or call, api, kernel, call, findings))
            else:  # (the Ex forms take the launch configuration first)
                index = 1 if api.startswith("cudaLaunchKernelEx") else 0
                out.append(_site(ctx, call, api, _first_arg(ctx, call, index), None, findings))
    out.sort(key=lambda s: (s["line"], s["column"]))
    return out


def _launch_call(call):
    """The call that launches the kernel in `host::LaunchKernel(grid, block, device)(kernel,
    args...)`, through configuration calls (`.enable_pdl(x)`); None when the launcher is
    kept in a variable (the launch is not in this expression)."""
    current, launch = call, None
    parent = call.parent
    while parent is not None:
        if parent.type == "field_expression" and parent.child_by_field_name("argument") == current:
            current = parent
        elif parent.type == "call_expression" and parent.child_by_field_name("function") == current:
            if current.type == "call_expression":
                launch = parent  # called with what a call returned: the kernel and its arguments
            current = parent
        else:
            break
        parent = current.parent
    return launch


def _first_arg(ctx, call, index: int = 0) -> str | None:
    """The text of a call's argument (the first by default), or None."""
    args = call.child_by_field_name("arguments")
    named = [c for c in args.named_children if c.type != "comment"] if args is not None else []
    return _short(_text(ctx, named[index])) if len(named) > index else None


def _config_text(ctx, node) -> str:
    """A launch configuration's text without its comments: `<<<grid, block>>>`, `(g, b, d)`."""
    if node.type == "call_expression":
        node = node.child_by_field_name("arguments") or node
    parts = [_text(ctx, c) for c in node.named_children if c.type != "comment"]
    opening, closing = ("<<<", ">>>") if node.type == "kernel_call_syntax" else ("(", ")")
    return _short(opening + ", ".join(parts) + closing)


def _site(ctx, call, kind, kernel, config, findings) -> dict:
    line, column = ctx.source.position(call.start_byte)
    return {
        "kind": kind,
        "line": line,
        "column": column,
        "kernel": kernel,
        "config": _config_text(ctx, config) if config is not None else None,
        "reported_by": _reported_by(findings, call.start_byte, call.end_byte),
    }


# -- Python -----------------------------------------------------------------------------------
PY_RULES = (
    "ungated-aiter-import",
    "jit-module-not-cached",
    "lru-cache-on-jit-module",
    "non-literal-ci-registration",
)


def _inspect_python(ctx, registry) -> dict:
    from .engine import unparsed_regions

    tree = ctx.tree
    out: dict = {"parsed": tree is not None}
    if tree is None:
        line, column = getattr(ctx, "_syntax_error_at", (1, 1))
        out["syntax_error"] = {"message": ctx.parse_error, "line": line, "column": column}
        out["unparsed"] = [
            {"start_line": s, "end_line": e, "reason": reason}
            for s, e, reason in unparsed_regions(ctx)
        ]
        return out
    findings, notes = _rule_findings(ctx, registry, PY_RULES)
    facts = ctx.facts
    from .config import import_time_policy

    policy = getattr(ctx.settings, "aiter_import_policy", "reachable")
    out["aiter_import_policy"] = "import-time" if import_time_policy(ctx.settings) else policy
    out["aiter_gates"] = sorted(facts.guards.gates)
    out["aiter_imports"] = [_aiter_import(ctx, n, m, findings) for n, m in facts.aiter_imports]
    if policy == "reachable":
        from .python.aiter_reach import explain

        verdicts = explain(ctx, reasons=True)[1]  # (one per aiter import, in order)
        for item, (_node, _name, v, why) in zip(out["aiter_imports"], verdicts, strict=True):
            item["reachable"] = f"reported: runs on {v.where()}" if v is not None else why
    out["load_jit_calls"] = _load_jit(ctx, findings)
    out["ci_registrations"] = _ci_registrations(ctx, findings)
    out["unparsed"] = []
    out["notes"] = notes
    return out


def _unparse(node) -> str:
    import ast

    try:
        return _short(ast.unparse(node))
    except Exception:  # (an exotic node: its position stands in)
        return f"<expression at line {node.lineno}>"


def _condition(guards, test, holds: bool) -> dict:
    from .python.aiter_reach import holding
    from .python.guards import hip_test

    v = guards.cuda_value(test)
    if guards.implies_aiter(test, holds):
        kind = "aiter-gate"
    elif holds and hip_test(test):
        kind = "hip-check"
    else:
        kind = "other"
    return {
        "test": _unparse(test),
        "holds": holds,
        "condition": holding(test, holds, _unparse),
        "kind": kind,
        # the condition's truth on a CUDA machine (_is_hip false, SGLANG_USE_AITER unset)
        "on_cuda": None if v is None else v == holds,
    }


def _span(ctx, node) -> tuple[int, int]:
    from .python.facts import node_span

    return node_span(ctx, node)


def _aiter_import(ctx, node, module, findings) -> dict:
    guards = ctx.facts.guards
    path = guards.path(node)
    conditions = [_condition(guards, t, pol) for t, pol in reversed(path)]  # outermost first
    func = guards.enclosing_function(node)
    if guards.aiter_gated(node):
        gate = next(c for c in reversed(conditions) if c["kind"] == "aiter-gate")
        guard = f"aiter gate `{gate['condition']}`"
    elif guards.in_import_guard(node):
        guard = "`try:` that catches ImportError"
    elif any(c["kind"] == "hip-check" for c in conditions):
        guard = "HIP check only"
    elif conditions:
        guard = "a condition that is not the aiter gate"
    else:
        guard = None
    start, end = _span(ctx, node)
    on_cuda = guards.on_cuda(node)
    return {
        "line": node.lineno,
        "end_line": getattr(node, "end_lineno", None) or node.lineno,
        "module": module,
        "statement": _unparse(node),
        "function": _function_name(func),
        "conditions": conditions,
        "guard": guard,
        "runs_on_cuda": on_cuda,
        "reported_by": _reported_by(findings, start, end),
    }


def _function_name(func) -> str | None:
    if func is None:
        return None
    return getattr(func, "name", "<lambda>")


def _load_jit(ctx, findings) -> list[dict]:
    from kernlint_rules.python.jit_module_not_cached import _decorator_callbacks

    from .python.jit import decorator_kind, enclosing_functions, load_jit_calls

    facts = ctx.facts
    callbacks = _decorator_callbacks(facts)
    out = []
    for call in load_jit_calls(facts):
        funcs = enclosing_functions(call, facts.guards)
        kinds = [
            {decorator_kind(d, facts) for d in getattr(f, "decorator_list", [])} for f in funcs
        ]
        cache = None
        if any("cache_once" in k for k in kinds):
            cache = "cache_once"
        elif kinds and "lru_cache" in kinds[0]:
            cache = "lru_cache"
        first = call.args[0] if call.args else None
        name = first.value if first is not None and _is_str(first) else None
        factory = funcs[0] if funcs else None
        start, end = _span(ctx, call)
        out.append(
            {
                "line": call.lineno,
                "module_name": name,
                "factory": _function_name(factory),
                "factory_line": factory.lineno if factory is not None else None,
                "enclosing": [_function_name(f) for f in reversed(funcs)],
                "cached": cache,
                "registration_callback": bool(
                    factory is not None and getattr(factory, "name", None) in callbacks
                ),
                "reported_by": _reported_by(findings, start, end),
            }
        )
    return out


def _is_str(node) -> bool:
    import ast

    return isinstance(node, ast.Constant) and isinstance(node.value, str)


def _ci_registrations(ctx, findings) -> list[dict]:
    import ast

    from kernlint_rules.python import non_literal_ci_registration as ci

    facts = ctx.facts
    if b"_ci" not in ctx.data:
        return []
    out = []
    for node in ast.walk(facts.tree):
        if not isinstance(node, ast.Call):
            continue
        name = ci._register_name(node, facts)
        if name is None:
            continue
        args = [
            ci.POSITIONAL[i]
            for i, a in enumerate(node.args[: len(ci.POSITIONAL)])
            if not ci._is_literal(a)
        ]
        args += [
            k.arg for k in node.keywords if k.arg in ci.CHECKED and not ci._is_literal(k.value)
        ]
        inside = None
        for n in facts.guards.ancestors(node):
            if isinstance(n, ast.ClassDef):
                inside = f"class `{n.name}`"
                break
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                inside = f"function `{_function_name(n)}`"
                break
        start, end = _span(ctx, node)
        out.append(
            {
                "line": node.lineno,
                "function": name,
                "module_level": inside is None,
                "inside": inside,
                "non_literal": args,
                "reported_by": _reported_by(findings, start, end),
            }
        )
    out.sort(key=lambda r: r["line"])
    return out


# -- text -------------------------------------------------------------------------------------
def render_text(r: dict) -> str:
    from .output import printable

    lang = "C/C++/CUDA" if r["language"] == "cpp" else "Python"
    lines = [f"{r['path']}: {lang}, {r['lines']} line{'s' if r['lines'] != 1 else ''}"]
    jit = r["jit"]
    if jit["config"]:
        from .engine import relpath_for_display

        where = f"from {relpath_for_display(jit['config'])}"
    else:
        where = "the default jit-roots"
    if jit["is_jit"]:
        lines.append(f"JIT source: yes (jit-roots glob `{jit['glob']}`, {where})")
    elif jit.get("exempt"):
        lines.append(f"JIT source: no ({jit['exempt']})")
    elif jit["excluded_by"]:
        lines.append(f"JIT source: no (excluded by `{jit['excluded_by']}`, {where})")
    else:
        lines.append(f"JIT source: no (no jit-roots glob matches, {where})")
    if r.get("generated"):
        lines.append(f"Checked by rules: no ({r['generated']}; see `generated-markers`)")
    if r["language"] == "cpp":
        _text_cpp(r, lines)
    else:
        _text_python(r, lines)
    for note in r.get("notes", ()):
        lines.append(f"note: {note}")
    return "".join(printable(line) + "\n" for line in lines)


def _codes(item) -> str:
    return f"  [reported: {', '.join(item['reported_by'])}]" if item.get("reported_by") else ""


def _lines(item) -> str:
    s, e = item["line"], item["end_line"]
    return f"line {s}" if s == e else f"lines {s}-{e}"


def _params_text(item, lines) -> None:
    for p in item["parameters"]:
        flags = []
        if p["pointer_depth"]:
            flags.append("pointer" + (f" x{p['pointer_depth']}" if p["pointer_depth"] > 1 else ""))
        for key in ("const", "restrict", "reference", "array"):
            if p[key]:
                flags.append(key)
        name = p["name"] or "(unnamed)"
        extra = f"  [{', '.join(flags)}]" if flags else ""
        lines.append(f"      #{p['index']} {name}: {p['text']}{extra}")


def _text_cpp(r, lines) -> None:
    lines.append(f"Namespaces ({len(r['namespaces'])}):")
    for ns in r["namespaces"]:
        broken = "" if ns["parsed"] else "  (holds an unparsed region)"
        lines.append(f"  {ns['name']}  {_lines(ns)}{broken}")
    lines.append(f"Kernels ({len(r['kernels'])}):")
    for k in r["kernels"]:
        scope = f" in {k['scope']}" if k["scope"] else ""
        template = "template " if k["template"] else ""
        lines.append(f"  {template}{k['name']}{scope}, {_lines(k)}{_codes(k)}")
        _params_text(k, lines)
    if r["missed_kernels"]:
        lines.append(f"Kernels the parse lost ({len(r['missed_kernels'])}):")
        for m in r["missed_kernels"]:
            lines.append(f"  line {m['line']}: {m['text']}")
            lines.append(f"      lost: {m['why']}")
    lines.append(f"FFI boundary ({len(r['ffi_functions'])}):")
    for f in r["ffi_functions"]:
        scope = f" in {f['scope']}" if f["scope"] else ""
        lines.append(f"  {f['name']}{scope}, {_lines(f)}{_codes(f)}")
        for reason in f["reasons"]:
            lines.append(f"      why: {reason}")
        _params_text(f, lines)
    for f in r["not_ffi"]:
        lines.append(f"  not FFI: {f['name']}, line {f['line']}: {f['why']}")
    if r["wrapper_targets"]:
        lines.append(f"  cuda_wrappers targets known: {', '.join(r['wrapper_targets'])}")
    lines.append(f"Launch sites ({len(r['launch_sites'])}):")
    for s in r["launch_sites"]:
        kernel = s["kernel"] or "(kernel not in this expression)"
        if s["kind"] == "<<<>>>":
            shown = f"{kernel}{s['config'] or ''}"
        else:
            shown = f"{s['kind']}{s['config'] or ''} -> {kernel}"
        lines.append(f"  line {s['line']}: {shown}{_codes(s)}")
    _unparsed_text(r, lines)


def _unparsed_text(r, lines) -> None:
    if not r["unparsed"]:
        lines.append("Unparsed regions: none")
        return
    lines.append(f"Unparsed regions ({len(r['unparsed'])}), no rule judges them:")
    for u in r["unparsed"]:
        span = f"line {u['start_line']}" if u["start_line"] == u["end_line"] else None
        span = span or f"lines {u['start_line']}-{u['end_line']}"
        detail = u.get("text") or u.get("reason") or ""
        lines.append(f"  {span}: {detail}" if detail else f"  {span}")


def _text_python(r, lines) -> None:
    if not r["parsed"]:
        e = r["syntax_error"]
        lines.append(f"Cannot parse: {e['message']} (line {e['line']}, column {e['column']})")
        _unparsed_text(r, lines)
        return
    lines.append(f"aiter import policy: {r['aiter_import_policy']}")
    lines.append(f"aiter gates: {', '.join(r['aiter_gates'])}")
    lines.append(f"aiter imports ({len(r['aiter_imports'])}):")
    for a in r["aiter_imports"]:
        where = f"in function `{a['function']}`" if a["function"] else "module level"
        guard = a["guard"] or "none"
        cuda = {True: "yes", False: "no", None: "unknown"}[a["runs_on_cuda"]]
        lines.append(
            f"  line {a['line']}: {a['module']} ({where}); guard: {guard}; "
            f"runs on CUDA: {cuda}{_codes(a)}"
        )
        for c in a["conditions"]:
            lines.append(f"      holds: {c['condition']}  [{c['kind']}]")
        if a.get("reachable"):
            lines.append(f"      reachable policy: {a['reachable']}")
    lines.append(f"load_jit calls ({len(r['load_jit_calls'])}):")
    for j in r["load_jit_calls"]:
        name = f'"{j["module_name"]}"' if j["module_name"] is not None else "(name not a literal)"
        if j["factory"] is None:
            where = "at module level"
        else:
            where = f"in factory `{j['factory']}` (line {j['factory_line']})"
        cached = f"cached by @{j['cached']}" if j["cached"] else "not cached"
        if j["registration_callback"]:
            cached += ", a registration callback"
        lines.append(f"  line {j['line']}: {name} {where}, {cached}{_codes(j)}")
    lines.append(f"CI registrations ({len(r['ci_registrations'])}):")
    for c in r["ci_registrations"]:
        where = "module level" if c["module_level"] else f"inside {c['inside']}"
        args = (
            f"non-literal: {', '.join(c['non_literal'])}"
            if c["non_literal"]
            else "literal arguments"
        )
        lines.append(f"  line {c['line']}: {c['function']} ({where}; {args}){_codes(c)}")
    _unparsed_text(r, lines)
