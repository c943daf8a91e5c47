"""Reports CI test registrations inside the importable `sglang` package.

## What it does
Reports each module-level `register_<backend>_ci(...)` call (`register_cuda_ci`,
`register_amd_ci`, `register_cpu_ci`, `register_npu_ci`, `register_xpu_ci`,
`register_musa_ci`, `register_mlx_ci`, called by that name as an expression statement directly
in the module's body) in a file of the `sglang` package, whatever its arguments: a malformed
registration marks a misplaced test all the same. The finding sits on the called name. Configure: `ci-registration-functions` (docs/presets.md).

The package is `python/sglang/` in SGLang's source tree (the `sglang-package-roots` setting,
default `**/python/sglang/**`) and, for an installed or unpacked wheel, the files below a
directory named `sglang` that holds an `__init__.py` (unless the config sets
`sglang-package-roots`).

Not reported, by design: the definitions of the registration functions (a `def` is not a
call), a registration inside a function, a class or an `if` block, or one called under
another name or as an attribute: SGLang's collector reads none of those as a registration.

## Why is this bad?
Registered tests and benchmarks live under `test/registered/` (JIT kernel tests under
`test/registered/kernels/ops/`, their benchmarks under `test/registered/kernels/benchmark/`).
A registered file inside the package ships to every user in the wheel and is never run:
`test/run_suite.py` only collects `test/registered/`. SGLang's
`check-no-registered-tests-in-package` pre-commit hook rejects it.

## Example
```python
# python/sglang/kernels/jit/benchmark/bench_scale.py
from sglang.test.ci.ci_register import register_cuda_ci

register_cuda_ci(est_time=10, stage="base-b-kernel-benchmark", runner_config="1-gpu-large")
```

## Use instead
```python
# test/registered/kernels/benchmark/elementwise/bench_scale.py
from sglang.test.ci.ci_register import register_cuda_ci

register_cuda_ci(est_time=10, stage="base-b-kernel-benchmark", runner_config="1-gpu-large")
```

## Fix safety
No automatic fix: the file has to move, and its imports may change with it.
"""

from __future__ import annotations

from kernlint.ci_layout import CI_FUNCTIONS, in_sglang_package
from kernlint.lazyre import lazy_compile
from kernlint.model import Rule
from kernlint.python.conventions import NamePattern

from .non_literal_ci_registration import snippet_span, when_ci_configured
from .unregistered_tests import CI_LINE, registrations

RULE = Rule(
    code="PY012",
    name="registered-test-in-package",
    language="python",
    summary="`register_*_ci(...)` in a file of the `sglang` package (tests live in `test/registered/`)",
    triggers=(b"register_",),
    untriggered_when=when_ci_configured,  # (`ci-registration-functions`: other names)
    prefilter=NamePattern(
        lazy_compile(rb"register_(?:cpu|cuda|amd|musa|npu|xpu|mlx)_ci\b"), CI_FUNCTIONS
    ),
    partial_lines=CI_LINE,
    needs_tree=False,
)


def check(ctx) -> None:
    if not in_sglang_package(ctx.source.abspath or ctx.source.path, ctx.settings):
        return
    for call, offset in registrations(ctx) or ():
        ctx.report(
            *snippet_span(ctx, call.func, offset),
            f"`{call.func.id}` registers a CI test inside the `sglang` package: it ships in "
            "the wheel and CI never runs it; move the file under test/registered/",
        )
