"""Every way a Triton kernel is declared (read by find_kernels only; never compiled or run)."""
# Größe: non-ASCII text before the kernels, so byte offsets differ from character offsets.

import torch
import triton
import triton.language as tl
from triton import Config as Cfg
from triton import jit

HAS_TRITON = True
SHARED_CONFIGS = [triton.Config({"BLOCK": 64}, num_warps=2), Cfg({"BLOCK": 128})]


def configs_for(n):
    return [triton.Config({"BLOCK": b}) for b in (64, 128)]


@triton.jit
def plain(X, N):
    pass


@jit
def bare(X, BLOCK: tl.constexpr):
    pass


@triton.jit(do_not_specialize=["N"], do_not_specialize_on_alignment=[0])
def with_args(X, N, eps=1e-6, n: tl.int64 = 0, FLAG: tl.constexpr = True):
    pass


@triton.autotune(
    configs=[
        triton.Config({"BLOCK_M": 64, "BLOCK_N": 32}, num_warps=4, num_stages=2),
        triton.Config({"BLOCK_M": 128, "BLOCK_N": 64}, num_warps=8),
    ],
    key=["M"],
)
@triton.heuristics({"EVEN": lambda args: args["M"] % args["BLOCK_M"] == 0})
@triton.jit
def tuned(A, M, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, EVEN: tl.constexpr):
    pass


@triton.autotune(configs=SHARED_CONFIGS, key=["N"])
@triton.jit
def tuned_by_name(X, N, BLOCK: tl.constexpr):
    pass


@triton.autotune(configs=configs_for(4), key=["N"])
@triton.jit
def tuned_computed(X, N, BLOCK: tl.constexpr):
    pass


@triton.autotune(configs=[triton.Config({"BLOCK": b}) for b in (1, 2)], key=["N"])
@triton.jit
def tuned_comprehension(X, N, BLOCK: tl.constexpr):
    pass


if HAS_TRITON:

    @triton.jit
    def guarded(X):
        pass


@torch.jit.script
def not_triton(x):
    return x


class Holder:
    @triton.jit
    def method_kernel(X):  # (class members are not module kernels)
        pass
