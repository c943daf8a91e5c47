"""Kernels that cannot be built on their own, and ones that can (tests/test_compile_triton.py)."""

import triton
import triton.language as tl

from .helpers import fast_exp  # noqa: F401  (a helper from another module)

raise SystemExit("kernlint must never import this module")

SCALE = float(len("computed at import time"))
CONST_BLOCK = tl.constexpr(256)
ANNOTATED_BLOCK: tl.constexpr = 256


@triton.jit
def _square(x):
    return x * x


@triton.jit
def reads_import(X, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(X + offs, fast_exp(tl.load(X + offs)))


@triton.jit
def reads_computed(X, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(X + offs, tl.load(X + offs) * SCALE)


@triton.jit
def uses_literals(X):
    # A constexpr global and a @triton.jit helper of the same file: both available.
    offs = tl.arange(0, CONST_BLOCK)
    tl.store(X + offs, _square(tl.load(X + offs)))


@triton.jit
def reads_annotated(X):
    offs = tl.arange(0, ANNOTATED_BLOCK)
    tl.store(X + offs, tl.load(X + offs))


@triton.jit
def bad_body(X, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(X + offs)
    y = tl.reshape(x, (3, 5))
    tl.store(X + offs, y)


if hasattr(tl, "no_such_function"):  # (kernlint runs the body whatever the condition)
    missing_fn = tl.no_such_function


@triton.jit
def reads_failed(X):
    missing_fn(X)


@triton.jit
def default_from_global(X, LIMIT: tl.constexpr = SCALE):
    tl.store(X, LIMIT)


@triton.jit
def _scaled(x):
    return x * SCALE


@triton.jit
def calls_bad_helper(X):
    tl.store(X, _scaled(tl.load(X)))


@triton.jit
def bad_asm(X):
    x = tl.load(X)
    y = tl.inline_asm_elementwise(
        "bogus.instr.b32 $0, $1;", "=r,r", [x], dtype=tl.int32, is_pure=True, pack=1
    )
    tl.store(X, y)
