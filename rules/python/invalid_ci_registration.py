"""Reports CI registrations that SGLang's test collector drops, misreads or rejects.

## What it does
Reports calls of SGLang's `ci_register` functions (`register_cuda_ci`, `register_amd_ci`,
`register_cpu_ci`, `register_musa_ci`, `register_npu_ci`, `register_xpu_ci`,
`register_mlx_ci`; `ci-registration-functions`, docs/presets.md, names others) that CI's
collector, reading the syntax tree without running the file, does not take as written:

- dropped: a registration under a module-level `if`, `try`, `with`, `for`, `while` or
  `match`; an assigned result or a call inside another expression; an attribute call
  (`ci_register.register_cuda_ci(...)`) or a renamed import;
- misread (only literals are read): a non-literal `nightly` (read as not nightly) or
  `disabled` (read as absent: the test runs);
- accepted, against the add-jit-kernel guide: `nightly=True` on `register_cuda_ci` (CUDA jobs
  never pass `--nightly`); a `stage` holding `-test-` (no job runs the doubled suite name);
  `suite=None`, `stage=None` or `runner_config=None`;
- rejected, stopping the collection: a signed, string, `None` or missing
  `est_time`; not exactly one of the `stage`/`runner_config` pair or `suite`; a `disabled`
  that is not a string, a `nightly` that is not `True`/`False`, a non-string literal
  `suite`, `stage` or `runner_config`; an unknown keyword, an argument given twice, over four
  positional arguments, a late `*` or a `**` argument.

Not reported: non-literal `est_time`/`suite`/`stage`/`runner_config`, registrations
inside functions or classes (`non-literal-ci-registration`); a function
imported under a registration name from elsewhere; other `register_*_ci` names; an
`est_time` of `True`/`False`; unknown suite names.

## Why is this bad?
SGLang's `test/run_suite.py` collects registrations by parsing files. A dropped
registration leaves the test unscheduled, a misread `disabled` runs a test meant to be
skipped, and a rejected one stops the collection for every suite.

## Example
```python
from sglang.test.ci.ci_register import register_cuda_ci

register_cuda_ci(est_time=30, stage="base-b-kernel-unit", runner_config="1-gpu-large", nightly=True)
```

## Use instead
```python
from sglang.test.ci.ci_register import register_cuda_ci

register_cuda_ci(est_time=30, stage="nightly", runner_config="1-gpu-large")
```

## Fix safety
No automatic fix: where the registration goes, and the value it needs, are the author's to
decide.
"""

from __future__ import annotations

import ast
import re

from kernlint.ci_layout import CI_FUNCTIONS
from kernlint.lazyre import lazy_compile
from kernlint.model import Rule
from kernlint.python.conventions import NamePattern

from .non_literal_ci_registration import (
    DEFAULT,
    _is_literal,
    _module_level_calls,
    _register_name,
    _span,
    _wanted_lines,
    ci_names,
    renames,
    when_ci_configured,
)

RULE = Rule(
    code="PY011",
    name="invalid-ci-registration",
    language="python",
    summary="`register_*_ci(...)` that CI's collector drops, misreads or rejects",
    triggers=(b"register_",),
    untriggered_when=when_ci_configured,  # (`ci-registration-functions`: other names)
    # A call to `register_<backend>_ci`, or an import of one under another name.
    prefilter=NamePattern(lazy_compile(rb"register_\w+_ci\b"), CI_FUNCTIONS),
    # The lines non-literal-ci-registration reads: the two rules share the parse.
    partial_lines=_wanted_lines,
    needs_tree=False,
)

# The names CI's collector knows (its REGISTER_MAPPING; `ci-registration-functions` names
# others: CiNames.collected), and its parameters.
COLLECTED = frozenset(
    {
        "register_cpu_ci",
        "register_cuda_ci",
        "register_amd_ci",
        "register_musa_ci",
        "register_npu_ci",
        "register_xpu_ci",
        "register_mlx_ci",
    }
)
PARAM_ORDER = ("est_time", "suite", "nightly", "disabled")
KWARG_ONLY = ("stage", "runner_config")
PARAMS = PARAM_ORDER + KWARG_ONLY

_BLOCKS = {
    ast.If: "if",
    ast.Try: "try",
    ast.With: "with",
    ast.AsyncWith: "async with",
    ast.For: "for",
    ast.AsyncFor: "async for",
    ast.While: "while",
}
if hasattr(ast, "TryStar"):
    _BLOCKS[ast.TryStar] = "try"
if hasattr(ast, "Match"):
    _BLOCKS[ast.Match] = "match"
_DEF_OR_CLASS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)

_COLLECTOR = "CI's collector"


def check(ctx) -> None:
    ci = ci_names(ctx.settings)
    if ci is not DEFAULT and not ci.named_in(ctx.data):
        return  # (run on every file of a config naming other functions: none named here)
    collected = ci.collected
    renamed = renames(ctx)
    calls = None if renamed else _module_level_calls(ctx)
    if calls is not None:
        for value, offset in calls:
            _check_statement_call(ctx, value, offset, collected)
        return
    if ctx.tree is None:
        return  # unparsable: the engine warns about it
    facts = ctx.facts
    pattern = ci.line
    names = facts.names if renamed else {}
    aliases = [n for n, o in names.items() if o.split(".")[-1] in collected and n not in collected]
    if aliases:
        pattern = re.compile(
            rb"\b(" + ci.word + b"|" + b"|".join(re.escape(a.encode()) for a in aliases) + rb")\b"
        )
    for node in facts.nodes_on_lines(pattern, (ast.Call,)):
        _check_call(ctx, node, names, collected, ci.is_name)


def _check_statement_call(ctx, value, offset: int, collected=COLLECTED) -> None:
    """A module-level statement of its own at column 0 that starts with a registration
    function's name (read without parsing the file): `value` is its expression."""
    if isinstance(value.func, ast.Name):
        if value.func.id in collected:
            _check_arguments(ctx, value, value.func.id, offset)
        return
    # (`register_cuda_ci(...).x()`: the registration is inside another expression)
    for node in ast.walk(value):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            if node.func.id in collected:
                ctx.report(*_span(ctx, node.func, offset), _inside_expression(node.func.id))


def _check_call(ctx, node, names, collected=COLLECTED, match=DEFAULT.is_name) -> None:
    facts = ctx.facts
    if isinstance(node.func, ast.Attribute):
        names = facts.names  # (the base of an attribute call must be an imported name)
        base = node.func
        while isinstance(base, ast.Attribute):
            base = base.value
        if not isinstance(base, ast.Name) or base.id not in names:
            return
    name = _register_name(node, facts, names, match)
    if name not in collected:
        return
    ancestors = facts.guards.ancestors(node)
    if any(isinstance(a, _DEF_OR_CLASS) for a in ancestors):
        return  # (not at module level: non-literal-ci-registration reports it)
    message = _dropped(node, name, ancestors)
    if message:
        ctx.report(*_span(ctx, node.func, 0), message)
    else:
        _check_arguments(ctx, node, name, 0)


def _dropped(node, name, ancestors) -> str | None:
    """Why the collector does not read the module-level registration `node`, or None."""
    stmt = next((a for a in ancestors if isinstance(a, ast.stmt)), None)
    top = ancestors[-2] if len(ancestors) >= 2 and isinstance(ancestors[-1], ast.Module) else None
    if top is not None and top is not stmt:
        kind = _BLOCKS.get(type(top), type(top).__name__)
        return (
            f"`{name}(...)` under a module-level `{kind}`: {_COLLECTOR} reads only the "
            "module's own statements and drops this registration; move it to module level"
        )
    if not (isinstance(stmt, ast.Expr) and stmt.value is node):
        if isinstance(stmt, (ast.Assign, ast.AnnAssign, ast.AugAssign)) and stmt.value is node:
            return (
                f"the result of `{name}(...)` is assigned: {_COLLECTOR} reads only a "
                "registration that is a statement of its own and drops this one; drop the "
                "assignment"
            )
        return _inside_expression(name)
    if isinstance(node.func, ast.Attribute):
        return (
            f"`{ast.unparse(node.func)}` called as an attribute: {_COLLECTOR} knows registrations by "
            f"their bare name and drops this one; import `{name}` and call it by name"
        )
    if isinstance(node.func, ast.Name) and node.func.id != name:
        return (
            f"`{node.func.id}` is `{name}` renamed: {_COLLECTOR} knows registrations by "
            f"name and drops this one; import `{name}` under its own name"
        )
    return None


def _inside_expression(name: str) -> str:
    return (
        f"`{name}(...)` inside another expression: {_COLLECTOR} reads only a registration "
        "that is a statement of its own and drops this one; make the call a statement of "
        "its own"
    )


def _constant(node):
    """(True, value) for a plain constant, else (False, None)."""
    if isinstance(node, ast.Constant):
        return True, node.value
    return False, None


def _check_arguments(ctx, call, name: str, offset: int) -> None:
    def report(node, message):
        ctx.report(*_span(ctx, node, offset), message)

    starred = False
    for i, arg in enumerate(call.args):
        if isinstance(arg, ast.Starred):
            starred = True
            if i >= 2:  # (in est_time's or suite's place non-literal-ci-registration reports it)
                report(
                    arg,
                    f"starred argument in `{name}(...)`: {_COLLECTOR} stops on it "
                    "('starred arguments are not supported'); write the arguments out",
                )
    if starred:
        return  # (which argument is which is unknown)
    given = dict(zip(PARAM_ORDER, call.args, strict=False))
    if len(call.args) > len(PARAM_ORDER):
        report(
            call.args[len(PARAM_ORDER)],
            f"`{name}` takes at most {len(PARAM_ORDER)} positional arguments "
            f"({', '.join(PARAM_ORDER)}): the call raises TypeError when the file is imported "
            f"and {_COLLECTOR} stops ('too many positional arguments'); pass the rest by "
            "keyword",
        )
    double_star = False
    for kw in call.keywords:
        if kw.arg is None:
            double_star = True
            report(
                kw,
                f"`**` argument in `{name}(...)`: {_COLLECTOR} stops on it ('**kwargs are not "
                "supported'); write the arguments out",
            )
        elif kw.arg not in PARAMS:
            report(
                kw,
                f"`{name}` has no argument `{kw.arg}`: the call raises TypeError when the file "
                f"is imported and {_COLLECTOR} stops ('unknown argument'); use one of "
                f"{', '.join(f'`{p}`' for p in PARAMS)}",
            )
        elif kw.arg in given:
            report(
                kw,
                f"`{kw.arg}` given twice to `{name}` (by position and by name): the call raises "
                f"TypeError when the file is imported and {_COLLECTOR} stops "
                f"('duplicated argument'); give `{kw.arg}` once",
            )
        else:
            given[kw.arg] = kw.value
    if double_star:
        return  # (what the `**` argument holds is unknown)
    _check_est_time(call, name, given, report)
    if _check_shape(call, name, given, report):
        _check_suite_values(name, given, report)
    _check_flags(name, given, report)


def _check_est_time(call, name, given, report) -> None:
    est = given.get("est_time")
    if est is None:
        report(
            call.func,
            f"`{name}(...)` without `est_time`: {_COLLECTOR} stops ('est_time is a required "
            "constant') and the call raises TypeError when the file is imported; add "
            "`est_time=<seconds>`",
        )
        return
    if not _is_literal(est):
        return  # (non-literal-ci-registration reports it)
    is_const, value = _constant(est)
    if not is_const:
        sign = "-" if isinstance(est.op, ast.USub) else "+"
        report(
            est,
            f"signed `est_time`: {_COLLECTOR} reads only a plain number (`{sign}` makes an "
            "expression) and stops ('est_time is a required constant'); write a positive "
            "number of seconds",
        )
    elif not isinstance(value, (int, float)):
        report(
            est,
            f"`est_time` is not a number: {_COLLECTOR} stops ('est_time must be a number'); "
            "write a positive number of seconds",
        )


def _check_shape(call, name, given, report) -> bool:
    """Exactly one of the (stage, runner_config) pair or suite, as the collector requires
    (an argument counts as given whatever its value). False where it reported."""
    stage, runner, suite = ("stage" in given, "runner_config" in given, "suite" in given)
    if (stage and runner and not suite) or (suite and not stage and not runner):
        return True
    if not (stage or runner or suite):
        what = "names no suite (no `stage`/`runner_config`, no `suite`)"
        do = "add `stage=` and `runner_config=`"
    elif suite:
        what = "gives both `suite` and `stage`/`runner_config`"
        do = "keep either `suite` or the `stage`/`runner_config` pair"
    elif stage:
        what = "gives `stage` without `runner_config`"
        do = "add `runner_config=`"
    else:
        what = "gives `runner_config` without `stage`"
        do = "add `stage=`"
    report(
        call.func,
        f"`{name}(...)` {what}: {_COLLECTOR} stops ('must specify exactly one of (stage, "
        f"runner_config) pair or suite'); {do}",
    )
    return False


def _check_suite_values(name, given, report) -> None:
    values = {}
    for key in ("suite", "stage", "runner_config"):
        node = given.get(key)
        if node is None or not _is_literal(node):
            continue  # (absent, or non-literal-ci-registration reports it)
        is_const, value = _constant(node)
        if is_const and isinstance(value, str):
            values[key] = value
        elif is_const and value is None:
            report(
                node,
                f"`{key}=None` names no suite: {_COLLECTOR} reads the registration with no "
                "suite, which no CI job runs (`run_suite.py` rejects it for CUDA, CPU, MUSA "
                f'and XPU); write `{key}="<name>"`',
            )
        else:
            report(
                node,
                f"`{key}` is not a string: {_COLLECTOR} stops ('{key} must be a string'); "
                f'write `{key}="<name>"`',
            )
    stage = values.get("stage")
    if stage is not None and ("-test-" in stage or stage.endswith("-test")):
        runner = values.get("runner_config", "<runner_config>")
        report(
            given["stage"],
            f"`stage` holds the `-test-` infix: CI names the suite "
            f"`{{stage}}-test-{{runner_config}}`, here `{stage}-test-{runner}`; leave `-test-` "
            "out of `stage`",
        )


def _check_flags(name, given, report) -> None:
    nightly = given.get("nightly")
    if nightly is not None:
        is_const, value = _constant(nightly)
        if not is_const:
            report(
                nightly,
                f"`nightly` is not a literal: {_COLLECTOR} reads only `True`/`False` here and "
                "takes this as not given: the registration is not a nightly one; write "
                "`nightly=True` or `nightly=False`",
            )
        elif not isinstance(value, bool):
            report(
                nightly,
                f"`nightly` is not `True`/`False`: {_COLLECTOR} stops ('nightly must be a "
                "boolean'); write `nightly=True` or `nightly=False`",
            )
        elif value and name == "register_cuda_ci":
            report(
                nightly,
                "`nightly=True` on a CUDA registration: CI's CUDA jobs select suites by name "
                "and never pass `--nightly`, so this registration is never run; register with "
                '`stage="nightly"` and a `runner_config` instead',
            )
    disabled = given.get("disabled")
    if disabled is not None:
        is_const, value = _constant(disabled)
        if not is_const:
            report(
                disabled,
                f"`disabled` is not a literal: {_COLLECTOR} reads only a string here and takes "
                "this as not given: the test is not disabled, and runs in CI; write "
                '`disabled="<why it is skipped>"`',
            )
        elif value is not None and not isinstance(value, str):
            report(
                disabled,
                f"`disabled` is not a reason string: {_COLLECTOR} stops ('disabled must be a "
                'string\'); write `disabled="<why it is skipped>"`',
            )
