"""`jit` decorators of other libraries: no Triton kernels here."""

import cutlass.cute as cute
from numba import jit


@jit
def numba_kernel(x):
    return x


@cute.jit
def cute_kernel(x):
    pass
