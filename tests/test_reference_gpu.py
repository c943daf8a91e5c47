"""The reference kernels on a real GPU (marker `gpu`; run with `python -m pytest -m gpu`).

Correctness of the CUDA and Triton kernels against torch for bf16 and fp16: the residual is
updated in place exactly as torch rounds `x + residual`, the output matches a float32 RMSNorm
within the dtype's precision, across odd shapes (1 row, 64K rows, non-power-of-two and odd
hidden sizes, misaligned views, PDL on and off), including the two-pass kernel that the
launcher picks for large batches at hidden 4096 and 8192, which must give the one-pass
kernel's results bit for bit, full or partial rows, and the Triton two-pass kernel, forced on
small inputs.
"""

from __future__ import annotations

import importlib.util
import os

import pytest
from reference_support import REFERENCE, compile_reference, instantiations_wrapper

pytestmark = pytest.mark.gpu

torch = pytest.importorskip("torch")
if not torch.cuda.is_available():
    pytest.skip("no CUDA GPU", allow_module_level=True)

SHAPES = [
    (1, 4096),
    (7, 5120),
    (16, 8192),
    (33, 130),
    (5, 4099),
    (3, 16384),
    (65536, 128),
    (256, 8192),  # 4 MiB per tensor: still one vector per thread
    (257, 8192),  # past 4 MiB from 256 rows: two vectors per thread
    (600, 5000),  # the same, the second vector of the last lanes past the row
    (8191, 4096),  # one row short of the two-pass kernel
    (8192, 4096),  # two-pass, one vector per thread
    (4095, 8192),  # one row short of the two-pass kernel
    (4096, 8192),  # two-pass, two vectors per thread
]
DTYPES = [torch.bfloat16, torch.float16]
EPS = 1e-6


@pytest.fixture(scope="module")
def cuda_kernel(tmp_path_factory):
    import tvm_ffi

    major, minor = torch.cuda.get_device_capability()
    out = tmp_path_factory.mktemp("gpu_build")
    compile_reference(major * 10 + minor, str(out), shared=True)
    module = tvm_ffi.load_module(str(out / "fused_add_rmsnorm.so"))
    return {
        torch.bfloat16: module.fused_add_rmsnorm_bf16,
        torch.float16: module.fused_add_rmsnorm_fp16,
    }


# Explicit bf16 instantiations (the launcher picks one by shape), one-pass and two-pass, with
# one or two 16-byte vectors per thread.
VARIANTS_WRAPPER = instantiations_wrapper(
    {
        f"{kind}_v{v}": (v, False, two)
        for v in (1, 2)
        for kind, two in (("one_pass", False), ("two_pass", True))
    }
)


@pytest.fixture(scope="module")
def cuda_variants(tmp_path_factory):
    import tvm_ffi

    major, minor = torch.cuda.get_device_capability()
    out = tmp_path_factory.mktemp("gpu_variants")
    compile_reference(major * 10 + minor, str(out), True, VARIANTS_WRAPPER, "variants")
    return tvm_ffi.load_module(str(out / "variants.so"))


@pytest.fixture(scope="module")
def triton_module():
    pytest.importorskip("triton")
    path = os.path.join(REFERENCE, "triton", "fused_add_rmsnorm.py")
    spec = importlib.util.spec_from_file_location("reference_triton", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _inputs(rows, hidden, dtype, seed=0):
    g = torch.Generator(device="cuda").manual_seed(seed)
    x = torch.randn(rows, hidden, dtype=dtype, device="cuda", generator=g)
    residual = torch.randn(rows, hidden, dtype=dtype, device="cuda", generator=g)
    weight = torch.rand(hidden, dtype=dtype, device="cuda", generator=g) + 0.5
    return x, residual, weight


def _reference(x, residual, weight):
    z = (x.float() + residual.float()).to(x.dtype)
    zf = z.float()
    out = zf * torch.rsqrt(zf.pow(2).mean(-1, keepdim=True) + EPS) * weight.float()
    return out.to(x.dtype), z


def _check(out, residual, want_out, want_residual):
    torch.testing.assert_close(residual, want_residual, atol=0, rtol=0)
    tol = 1.6e-2 if out.dtype == torch.bfloat16 else 2e-3
    torch.testing.assert_close(out, want_out, atol=tol, rtol=tol)


@pytest.mark.parametrize("dtype", DTYPES, ids=["bf16", "fp16"])
@pytest.mark.parametrize("rows,hidden", SHAPES)
@pytest.mark.parametrize("use_pdl", [False, True], ids=["plain", "pdl"])
def test_cuda_kernel_matches_torch(cuda_kernel, dtype, rows, hidden, use_pdl):
    x, residual, weight = _inputs(rows, hidden, dtype)
    want_out, want_residual = _reference(x, residual, weight)
    out = torch.empty_like(x)
    cuda_kernel[dtype](out, residual, x, weight, EPS, use_pdl)
    torch.cuda.synchronize()
    _check(out, residual, want_out, want_residual)


@pytest.mark.parametrize("dtype", DTYPES, ids=["bf16", "fp16"])
def test_cuda_kernel_on_misaligned_views(cuda_kernel, dtype):
    """A view starting one element into its storage cannot use 16-byte vectors: the launcher
    falls back to the scalar instantiation and the result is still exact."""
    rows, hidden = 9, 4096
    x, residual, weight = _inputs(rows, hidden, dtype, seed=1)
    storage = torch.empty(rows * hidden + 1, dtype=dtype, device="cuda")
    shifted = storage[1:].view(rows, hidden)
    shifted.copy_(residual)
    want_out, want_residual = _reference(x, shifted, weight)
    out = torch.empty_like(x)
    cuda_kernel[dtype](out, shifted, x, weight, EPS, False)
    torch.cuda.synchronize()
    _check(out, shifted, want_out, want_residual)


# hidden 4104 and 6000 leave lanes past the end of the row (544 threads for 513 vectors, 384
# for 750 in pairs): the two-pass kernel's masked loads and stores.
@pytest.mark.parametrize(
    "rows,hidden,per_thread", [(64, 4096, 1), (64, 8192, 2), (33, 4104, 1), (17, 6000, 2)]
)
def test_two_pass_kernel_matches_one_pass_bit_for_bit(cuda_variants, rows, hidden, per_thread):
    x, residual, weight = _inputs(rows, hidden, torch.bfloat16, seed=2)
    want_out, want_residual = _reference(x, residual, weight)
    results = {}
    for kind in ("one_pass", "two_pass"):
        res = residual.clone()
        out = torch.full_like(x, float("nan"))
        getattr(cuda_variants, f"{kind}_v{per_thread}")(out, res, x, weight, EPS)
        torch.cuda.synchronize()
        _check(out, res, want_out, want_residual)
        results[kind] = (out, res)
    assert torch.equal(results["one_pass"][0], results["two_pass"][0])
    assert torch.equal(results["one_pass"][1], results["two_pass"][1])


@pytest.mark.parametrize("dtype", DTYPES, ids=["bf16", "fp16"])
@pytest.mark.parametrize("rows,hidden", SHAPES)
def test_triton_kernel_matches_torch(triton_module, dtype, rows, hidden):
    x, residual, weight = _inputs(rows, hidden, dtype)
    want_out, want_residual = _reference(x, residual, weight)
    out = triton_module.fused_add_rmsnorm(x, residual, weight, EPS)
    torch.cuda.synchronize()
    _check(out, residual, want_out, want_residual)


# The Triton two-pass kernel, forced, on small inputs: whole 2048-element chunks, a partial last
# chunk (5000, 6000), a row shorter than one chunk (300) and the largest row (16384).
@pytest.mark.parametrize("dtype", DTYPES, ids=["bf16", "fp16"])
@pytest.mark.parametrize("rows,hidden", [(16, 8192), (3, 5000), (17, 6000), (5, 300), (2, 16384)])
def test_triton_two_pass_kernel_matches_torch(triton_module, dtype, rows, hidden):
    x, residual, weight = _inputs(rows, hidden, dtype, seed=3)
    want_out, want_residual = _reference(x, residual, weight)
    out = triton_module.fused_add_rmsnorm(x, residual, weight, EPS, two_pass=True)
    torch.cuda.synchronize()
    _check(out, residual, want_out, want_residual)
