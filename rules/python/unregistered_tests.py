"""Reports files under SGLang's `test/registered/` that CI's collector finds no registration in.

## What it does
Reports a Python file under the registered-tests root (`test/registered/` by default; the
`registered-tests-roots` setting) that has no module-level `register_<backend>_ci(...)` call
SGLang's collector would read. The files judged are the ones the collector reads: every `*.py`
file under the root except `__init__.py` and `conftest.py`. The finding sits on the file's
first line. Configure: `ci-registration-functions` (docs/presets.md).

A registration counts the way the collector reads it: an expression statement directly in the
module's body (not inside a function, a class, or an `if`, `try` or `with` block) calling
`register_cpu_ci`, `register_cuda_ci`, `register_amd_ci`, `register_musa_ci`,
`register_npu_ci`, `register_xpu_ci` or `register_mlx_ci` by that very name (not renamed, not
as an attribute, not assigned).

Not reported, by design:
- the arguments of a registration (other rules check them);
- a kernel test whose registrations are all for other backends (AMD, CPU): the collector
  accepts any backend;
- a file that does not parse (kernlint warns that it cannot parse it).

## Why is this bad?
CI runs `test/run_suite.py`, which collects every file under `test/registered/` with a sanity
check: a file without a registration stops the whole run ("No CI registry found"). A file that
should only run by hand belongs in `test/manual/`; a helper module that must stay in the tree
registers with `disabled="reason"`.

## Example
```python
# test/registered/kernels/ops/elementwise/test_scale.py
import torch


def test_scale():
    assert torch.ones(4).sum() == 4
```

## Use instead
```python
# test/registered/kernels/ops/elementwise/test_scale.py
import sys

import pytest
import torch

from sglang.test.ci.ci_register import register_cuda_ci

register_cuda_ci(est_time=30, stage="base-b-kernel-unit", runner_config="1-gpu-large")


def test_scale():
    assert torch.ones(4).sum() == 4


if __name__ == "__main__":
    sys.exit(pytest.main([__file__, "-v"]))
```

## Fix safety
No automatic fix: the backend, suite and time estimate are the author's to choose.
"""

from __future__ import annotations

import ast

from kernlint.ci_layout import collected_test, may_be_collected_test, registration
from kernlint.model import Rule

from .non_literal_ci_registration import CI_LINES, DEFAULT, ci_names, module_level_calls

# The lines naming a registration function (for a skeleton: module-level statements are kept
# whatever the pattern), those configured in this process included.
CI_LINE = CI_LINES


RULE = Rule(
    code="PY014",
    name="test-not-registered",
    language="python",
    summary="file under `test/registered/` without a module-level `register_*_ci(...)`",
    # No trigger: a file is reported for what it lacks. The file name is fixed; the folders
    # (`registered-tests-roots`) are the config's.
    path_filter=may_be_collected_test,
    partial_lines=CI_LINE,
    needs_tree=False,
)


def registrations(ctx):
    """The file's registrations as the collector reads them: (call, line offset of the snippet
    it was parsed from) per module-level expression statement calling a REGISTER_MAPPING name.
    Found without parsing the file where every mention of a registration function is an import
    or a statement at column 0; else from the (skeleton) tree. None when the file does not
    parse."""
    collected = ci_names(ctx.settings).collected
    calls = module_level_calls(ctx)
    if calls is not None:
        return [
            (call, offset)
            for call, offset in calls
            if isinstance(call.func, ast.Name) and call.func.id in collected
        ]
    tree = ctx.tree
    if tree is None:
        return None
    return [(call, 0) for call in (registration(s, collected) for s in tree.body) if call]


def check(ctx) -> None:
    if not collected_test(ctx):
        return
    ci = ci_names(ctx.settings)
    if ci.named_in(ctx.data):
        found = registrations(ctx)
        if found is None or found:
            return  # (unparsable: the engine warns about it)
    data = ctx.data
    end = data.find(b"\n")
    end = len(data) if end < 0 else end
    if ci is DEFAULT:
        message = (
            "no module-level `register_<backend>_ci(...)` call: SGLang's CI collector rejects "
            "the file (`No CI registry found`); register it, or move it to test/manual/"
        )
    else:
        names = ", ".join(f"`{n}(...)`" for n in ctx.settings.ci_registration_functions)
        message = (
            f"no module-level registration call ({names or 'none configured'}): CI's "
            "collector rejects the file; register it, or move it out of the registered tests"
        )
    ctx.report(0, end, message)
