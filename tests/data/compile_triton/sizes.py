"""Kernels of known register appetite, for tests/test_compile_triton.py."""

import triton
import triton.language as tl


@triton.jit
def add_kernel(X, Y, Z, N, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    m = offs < N
    tl.store(Z + offs, tl.load(X + offs, mask=m) + tl.load(Y + offs, mask=m), mask=m)


@triton.jit
def row_kernel(X, Y, N, BLOCK: tl.constexpr):
    # One row per program: the whole row stays in registers for the two passes.
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    m = offs < N
    x = tl.load(X + row * N + offs, mask=m, other=0.0).to(tl.float32)
    mean = tl.sum(x, axis=0) / N
    d = tl.where(m, x - mean, 0.0)
    var = tl.sum(d * d, axis=0) / N
    y = d * tl.rsqrt(var + 1e-6) * tl.exp(x) + tl.sqrt(tl.abs(x))
    tl.store(Y + row * N + offs, y, mask=m)


@triton.autotune(
    configs=[
        triton.Config({"BLOCK": 1024}, num_warps=4),
        triton.Config({"BLOCK": 2048}, num_warps=1, num_stages=2),
    ],
    key=["N"],
)
@triton.jit
def tuned_row_kernel(X, Y, N, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    m = offs < N
    x = tl.load(X + row * N + offs, mask=m, other=0.0).to(tl.float32)
    mean = tl.sum(x, axis=0) / N
    d = tl.where(m, x - mean, 0.0)
    var = tl.sum(d * d, axis=0) / N
    y = d * tl.rsqrt(var + 1e-6) * tl.exp(x) + tl.sqrt(tl.abs(x))
    tl.store(Y + row * N + offs, y, mask=m)


@triton.jit
def cast_kernel(X, Y, stride, N, OUT: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(X + offs * stride, mask=offs < N)
    tl.store(Y + offs, tl.exp(x).to(OUT), mask=offs < N)
