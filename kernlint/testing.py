"""Testing local rules the way kernlint tests its own (docs/local-rules.md).

A fixture is a source file whose expected findings are written inline, in a comment on the line
they concern (the syntax of kernlint's own fixtures, fixtures/README.md):

    cudaLaunchKernelEx(&config, kernel, params);  // kernlint-expect: FI001
    // kernlint-expect-next-line: FI001@5
        cudaLaunchKernel(kernel, grid, block, args, 0, stream);

Several codes may be listed, comma-separated; a code may carry `@column` (1-based), and the
column is then compared too. A fixture may choose the rules it runs with
`kernlint-fixture: select=CODE,CODE` (default: the rule under test). A sibling `<file>.fixed`
holds the file's expected text after the safe fixes, `<file>.unsafe-fixed` after the unsafe
ones as well.

    import pytest
    from kernlint.testing import check_fixture, fixture_cases

    @pytest.mark.parametrize("path", fixture_cases("tools/kernlint_rules/fixtures"))
    def test_fixture(path):
        check_fixture(path, "tools/kernlint_rules/dropped_launch_error.py")

Nothing here imports pytest: a failed check raises AssertionError with the findings listed.
"""

from __future__ import annotations

import os

from .lazyre import lazy_compile
from .model import Diagnostic, Rule

__all__ = ["check_fixture", "check_rule", "expectations", "fixture_cases", "load_rule"]

_EXPECT = lazy_compile(
    rb"kernlint-expect(-next-line)?:\s*([A-Z]+[0-9]+(?:@\d+)?(?:\s*,\s*[A-Z]+[0-9]+(?:@\d+)?)*)"
)
_SELECT = lazy_compile(rb"kernlint-fixture:\s*select=([A-Za-z0-9_,-]+)")
SECTIONS = (
    "## What it does",
    "## Why is this bad?",
    "## Example",
    "## Use instead",
    "## Fix safety",
)


def expectations(data: bytes) -> list[tuple[int, str, int | None]]:
    """(line, code, column or None) of every `kernlint-expect:` annotation in a fixture."""
    out = []
    for row, line in enumerate(data.split(b"\n"), start=1):
        for m in _EXPECT.finditer(line):
            target = row + 1 if m.group(1) else row
            for item in m.group(2).decode().split(","):
                code, _, col = item.strip().partition("@")
                out.append((target, code, int(col) if col else None))
    return sorted(out, key=lambda t: (t[0], t[1], t[2] or 0))


def fixture_cases(directory) -> list[str]:
    """The fixture sources under `directory` (every C/C++/CUDA or Python file, at any depth),
    sorted: the parameters of a test that checks each (`pytest.mark.parametrize`)."""
    from .source import language_of

    directory = os.fspath(directory)
    if not os.path.isdir(directory):
        raise FileNotFoundError(f"{directory}: no such fixture directory")
    out = []
    for d, subdirs, names in os.walk(directory):
        subdirs[:] = sorted(s for s in subdirs if s != "__pycache__" and not s.startswith("."))
        out += [os.path.join(d, n) for n in sorted(names) if language_of(n) is not None]
    return out


def load_rule(rule, near=None, config=None) -> Rule:
    """The registered Rule that `rule` stands for: a Rule, a rule module (or the path of its
    file: loaded like a module of `rules-path`), or a code or name (kernlint's, an installed
    entry point's, or a `rules-path` rule of the config that governs `near`, or of `config`)."""
    from .registry import load_local_rules_for, load_registry

    registry = load_registry()
    if isinstance(rule, Rule):
        rule = registry.by_code.get(rule.code, rule)
        if rule.check is None and rule.visit is None:
            raise ValueError(
                f"rule {rule.code}: a module's RULE alone has no check or visit: pass the "
                "module, the path of its file, or the rule's code"
            )
        return rule
    file = getattr(rule, "__file__", None)  # a module
    if file is None and isinstance(rule, (str, os.PathLike)):
        text = os.fspath(rule)
        if text.endswith(".py") or os.sep in text or "/" in text:
            file = text
    if file is not None:
        if not os.path.isfile(file):
            raise FileNotFoundError(f"{file}: no such rule module")
        loaded = _loaded_rule(registry, getattr(rule, "__name__", ""))
        return loaded if loaded is not None else registry.load_file(file)
    found = registry.get(str(rule))
    if found is None:
        load_local_rules_for(registry, config, [os.fspath(near)] if near else ["."])
        found = registry.get(str(rule))
    if found is None:
        raise LookupError(f"unknown rule `{rule}` (not kernlint's, installed, or in rules-path)")
    return found


def _loaded_rule(registry, module_name: str) -> Rule | None:
    """The rule of a module the registry imported itself (a `rules-path` or entry point one)."""
    if module_name:
        for r in registry.rules:
            if r.module == module_name:
                return r
    return None


def check_fixture(path, rule, *, config=None) -> list[Diagnostic]:
    """Lint the fixture `path` with `rule` selected (`load_rule`; or the fixture's own
    `kernlint-fixture: select=`) and assert that the findings are exactly its `kernlint-expect`
    annotations, and that its `.fixed` / `.unsafe-fixed` siblings are what the fixes make of it.
    The fixture's settings (`jit-roots`, ...) are those of the config that governs it, or of
    `config`. A rule that raises raises here, with its own traceback. Returns the findings."""
    from .config import ConfigResolver, Overrides
    from .engine import RuleCrash, lint_source, read_source
    from .registry import load_registry
    from .source import language_of

    path = os.fspath(path)
    abspath = os.path.abspath(path)
    language = language_of(path)
    if language is None:
        raise ValueError(f"{path}: not a C/C++/CUDA or Python file")
    registry = load_registry()
    target = load_rule(rule, near=path, config=config)
    with open(abspath, "rb") as fh:
        data = fh.read()
    m = _SELECT.search(data)
    selectors = m.group(1).decode().split(",") if m else [target.code]
    # The fixture's own settings; its rules are chosen here, whatever its config selects.
    settings = ConfigResolver(registry, Overrides(select=[], preview=True), config).for_file(
        abspath
    )
    registered = registry.by_code.get(target.code) is target
    others = [s for s in selectors if registered or s.strip().upper() != target.code]
    enabled = registry.resolve(
        others, [], [], preview=True, where=f"{path}: kernlint-fixture", local=_every_scope()
    )
    if not registered:  # (a Rule no module registered: run as given)
        enabled = sorted([*enabled, target], key=lambda r: r.code)
    is_jit = any(r.scope == "jit" for r in enabled) and settings.is_jit(abspath)
    source, warning = read_source(abspath, path, language, settings.max_file_size)
    if source is None:
        raise AssertionError(warning)
    try:
        result = lint_source(source, settings, is_jit, registry, enabled)
    except RuleCrash as exc:
        raise exc.__cause__ from None  # (the rule's own exception and traceback)
    found = result.diagnostics
    _compare(path, found, expectations(data), result.warnings)
    for suffix, unsafe in ((".fixed", False), (".unsafe-fixed", True)):
        if os.path.exists(abspath + suffix):
            _check_fixed(path, data, found, abspath + suffix, unsafe)
    return found


def _every_scope() -> set[str]:
    """Every `rules-path` directory loaded: a fixture may select any local rule."""
    from .registry import load_registry

    return set(load_registry().scope.values())


def _compare(path, found, want, warnings) -> None:
    """Every finding annotated and every annotation found: one with a column matches the
    finding at that column, one without matches any finding of its code on its line."""
    rest = sorted(found, key=lambda d: (d.line, d.column, d.code))
    missing = []
    for line, code, col in sorted(want, key=lambda t: t[2] is None):  # (columns first)
        match = next(
            (d for d in rest if (d.line, d.code) == (line, code) and col in (None, d.column)),
            None,
        )
        if match is None:
            missing.append((line, code, col))
        else:
            rest.remove(match)
    if not missing and not rest:
        return
    lines = [f"{path}: the findings differ from the kernlint-expect annotations"]
    for line, code, col in sorted(missing, key=lambda t: (t[0], t[1], t[2] or 0)):
        lines.append(f"  annotated, not found: line {line}{f' column {col}' if col else ''} {code}")
    lines += [f"  found, not annotated: {d.line}:{d.column} {d.code} {d.message}" for d in rest]
    lines += [f"  warning: {w}" for w in warnings]
    lines.append("  all findings:" if found else "  no findings")
    lines += [f"    {d.line}:{d.column} {d.code} {d.message}" for d in found]
    raise AssertionError("\n".join(lines))


def _check_fixed(path, data: bytes, found, expected_path: str, unsafe: bool) -> None:
    from .fixes import apply_fixes

    new, fixed, _ = apply_fixes(data, found, unsafe=unsafe)
    with open(expected_path, "rb") as fh:
        want = fh.read()
    kind = "unsafe and safe fixes" if unsafe else "safe fixes"
    if not fixed:
        raise AssertionError(f"{path}: {os.path.basename(expected_path)} exists, no {kind} apply")
    if new != want:
        import difflib

        diff = difflib.unified_diff(
            want.decode("utf-8", "replace").splitlines(),
            new.decode("utf-8", "replace").splitlines(),
            os.path.basename(expected_path),
            f"{os.path.basename(path)} after the {kind}",
            lineterm="",
        )
        raise AssertionError(
            f"{path}: the {kind} do not make the expected text:\n" + "\n".join(diff)
        )


def check_rule(rule) -> Rule:
    """Assert that a rule (as `load_rule` takes it) is documented as kernlint's are (its
    docstring has the sections `kernlint rule CODE` prints, in order) and names only node types
    that exist (tree-sitter-cuda type names for C/C++/CUDA, `ast` class names for Python): a
    misspelt one would never be visited. Returns the Rule."""
    rule = load_rule(rule)
    problems = [f"the docstring has no `{s}` section" for s in SECTIONS if s not in rule.doc]
    if not problems and rule.doc.index(SECTIONS[0]) > rule.doc.index(SECTIONS[-1]):
        problems.append(f"`{SECTIONS[0]}` must come before `{SECTIONS[-1]}`")
    for node_type in rule.node_types:
        if not _node_type_exists(node_type, rule.language):
            problems.append(f"node type `{node_type}` does not exist ({rule.language})")
    if problems:
        where = f"rule {rule.code} ({rule.module})"
        raise AssertionError(f"{where}: " + "; ".join(problems))
    return rule


def _node_type_exists(node_type: str, language: str) -> bool:
    import ast

    in_python = isinstance(getattr(ast, node_type, None), type) and issubclass(
        getattr(ast, node_type), ast.AST
    )
    if language == "python":
        return in_python
    from .cpp.parser import language as cpp_language

    in_cpp = cpp_language().id_for_node_kind(node_type, True) is not None
    return in_cpp if language == "cpp" else in_cpp or in_python
