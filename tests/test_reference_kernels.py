"""The reference kernels (fixtures/reference): lint-clean, compiled without a GPU, run on CPU.

* kernlint with every rule (preview included) finds nothing in them;
* the CUDA kernel compiles for sm_90 (and sm_100) with pip's CUDA toolchain, the SGLang JIT
  headers and tvm-ffi, and ptxas reports <= 64 registers and no spills for every instantiation
  the launcher can select;
* the Triton kernel compiles for an sm_90 target without a GPU, and under TRITON_INTERPRET=1
  matches a float32 reference on the CPU.

GPU correctness and the benchmark live in tests/test_reference_gpu.py (marker `gpu`).
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import textwrap

import pytest
from reference_support import REFERENCE, ToolchainMissing, compile_reference, ptxas_report

from kernlint.runner import lint_paths

TRITON_SOURCE = os.path.join(REFERENCE, "triton", "fused_add_rmsnorm.py")


def test_reference_kernels_are_lint_clean():
    results = lint_paths([REFERENCE], select=["ALL"], preview=True, warn=lambda m: None)
    linted = sorted(os.path.relpath(r.path, REFERENCE) for r in results)
    assert linted == ["cuda/fused_add_rmsnorm.cuh", "triton/fused_add_rmsnorm.py"]
    findings = [
        f"{d.path}:{d.line}:{d.column} {d.code} {d.message}" for r in results for d in r.diagnostics
    ]
    assert findings == []
    assert not [w for r in results for w in r.warnings]


# -- CUDA ------------------------------------------------------------------------------------
# Every kernel the launcher can select: 2 dtypes x (one-pass vectorized with 1 or 2 vectors per
# thread, two-pass with 1 or 2, or scalar with 16 elements per thread) x PDL on/off.
EXPECTED_INSTANTIATIONS = 2 * 5 * 2


@pytest.fixture(scope="module")
def cuda_reports(tmp_path_factory):
    reports = {}
    for arch in (90, 100):
        out = tmp_path_factory.mktemp(f"sm{arch}")
        try:
            reports[arch] = ptxas_report(compile_reference(arch, str(out)))
        except ToolchainMissing as exc:
            pytest.skip(f"CUDA toolchain not installed: {exc}")
        except subprocess.CalledProcessError as exc:
            pytest.skip(f"cannot download the SGLang headers: {exc}")
    return reports


@pytest.mark.parametrize("arch", [90, 100])
def test_cuda_kernel_fits_the_register_budget(cuda_reports, arch):
    report = {k: v for k, v in cuda_reports[arch].items() if "fused_add_rmsnorm" in k}
    assert len(report) == EXPECTED_INSTANTIATIONS, sorted(report)
    for name, info in report.items():
        assert info["registers"] <= 64, (name, info)
        assert info["spill_stores"] == 0 and info["spill_loads"] == 0, (name, info)
        assert info["stack"] == 0, (name, info)


def test_ptxas_report_parser():
    text = textwrap.dedent(
        """\
        ptxas info    : Compiling entry function '_Z1kPf' for 'sm_90'
        ptxas info    : Function properties for _Z1kPf
            8 bytes stack frame, 4 bytes spill stores, 12 bytes spill loads
        ptxas info    : Used 72 registers, used 1 barriers, 128 bytes smem
        """
    )
    assert ptxas_report(text) == {
        "_Z1kPf": {"registers": 72, "stack": 8, "spill_stores": 4, "spill_loads": 12}
    }


# -- Triton ----------------------------------------------------------------------------------
def _triton_module():
    pytest.importorskip("torch")
    pytest.importorskip("triton")
    spec = importlib.util.spec_from_file_location("reference_triton", TRITON_SOURCE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("dtype", ["bf16", "fp16"])
@pytest.mark.parametrize(
    "kernel,block", [("one", 128), ("one", 1024), ("one", 16384), ("two", 2048)]
)
def test_triton_kernel_compiles_for_sm90(dtype, kernel, block):
    module = _triton_module()
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    pointers = {name: f"*{dtype}" for name in ("out_ptr", "residual_ptr", "x_ptr", "weight_ptr")}
    signature = {**pointers, "hidden": "i32", "eps": "fp32", "BLOCK": "constexpr"}
    if kernel == "one":
        fn = module.fused_add_rmsnorm_kernel
        num_warps = module.launch_config(module.torch.bfloat16, block)[1]
    else:
        fn = module.fused_add_rmsnorm_two_pass_kernel
        num_warps = module.TWO_PASS_WARPS
    source = ASTSource(fn=fn, signature=signature, constexprs={"BLOCK": block})
    compiled = triton.compile(
        source,
        target=GPUTarget("cuda", 90, 32),
        options={"num_warps": num_warps, "enable_fp_fusion": True},
    )
    ptx = compiled.asm["ptx"]
    assert ".target sm_90" in ptx
    assert len(compiled.asm["cubin"]) > 1000
    if kernel == "two":
        # The cache hints reach the PTX: keep on the first read, evict first on the second.
        assert "L1::evict_last" in ptx and "L1::evict_first" in ptx


INTERPRET_SCRIPT = """
import importlib.util, sys
import torch
spec = importlib.util.spec_from_file_location("reference_triton", sys.argv[1])
m = importlib.util.module_from_spec(spec)
spec.loader.exec_module(m)
torch.manual_seed(0)
# (rows, hidden, two_pass): None lets the wrapper pick (the one-pass kernel at these sizes);
# True forces the two-pass kernel, over whole 2048-element chunks and a partial last one.
shapes = [
    (1, 128, None), (3, 127, None), (2, 1000, None), (4, 5120, None), (2, 16384, None),
    (2, 4096, True), (3, 5000, True), (1, 300, True),
]
for dtype in (torch.bfloat16, torch.float16):
    for rows, hidden, two_pass in shapes:
        x = torch.randn(rows, hidden, dtype=dtype)
        residual = torch.randn(rows, hidden, dtype=dtype)
        weight = torch.rand(hidden, dtype=dtype) + 0.5
        want_out, want_residual = m.reference(x, residual, weight, 1e-6)
        out = m.fused_add_rmsnorm(x, residual, weight, 1e-6, two_pass=two_pass)
        # The interpreter's float -> bf16/fp16 conversion may round differently from the GPU's
        # round-to-nearest-even: allow one unit in the last place here (the GPU test is exact).
        ulp = 2.0**-7 if dtype == torch.bfloat16 else 2.0**-10
        torch.testing.assert_close(residual, want_residual, atol=ulp * 4, rtol=ulp)
        tol = 2e-2 if dtype == torch.bfloat16 else 2e-3
        torch.testing.assert_close(out, want_out, atol=tol, rtol=tol)
        print("ok", dtype, rows, hidden, two_pass)
"""


def test_triton_interpreter_matches_float32_reference(tmp_path):
    _triton_module()
    script = tmp_path / "interpret.py"
    script.write_text(INTERPRET_SCRIPT)
    env = dict(os.environ, TRITON_INTERPRET="1")
    proc = subprocess.run(
        [sys.executable, str(script), TRITON_SOURCE],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr[-4000:]
    assert proc.stdout.count("ok ") == 16


def test_triton_wrapper_validates_once_per_shape():
    module = _triton_module()
    torch = module.torch
    module.launch_config.cache_clear()
    assert module.launch_config(torch.bfloat16, 5120) == (8192, 16)
    assert module.launch_config(torch.float16, 100) == (128, 1)
    module.launch_config(torch.bfloat16, 5120)
    assert module.launch_config.cache_info().hits == 1
    with pytest.raises(ValueError, match="hidden size"):
        module.launch_config(torch.bfloat16, 16385)
    with pytest.raises(TypeError, match="dtype"):
        module.launch_config(torch.float32, 128)


def test_triton_wrapper_picks_the_two_pass_kernel_for_large_batches(monkeypatch):
    """The policy alone, on meta tensors (no memory, nothing runs): the two-pass kernel from
    8192 rows at hidden 4096 and 8192 only, in 2048-element chunks with 16 warps."""
    module = _triton_module()
    torch = module.torch
    launched = []

    class Recorder:
        def __init__(self, name):
            self.name = name

        def __getitem__(self, grid):
            return lambda *args, **meta: launched.append(
                (self.name, grid, meta["BLOCK"], meta["num_warps"])
            )

    monkeypatch.setattr(module, "fused_add_rmsnorm_kernel", Recorder("one"))
    monkeypatch.setattr(module, "fused_add_rmsnorm_two_pass_kernel", Recorder("two"))
    cases = [
        ((8191, 4096), None, ("one", (8191,), 4096, 16)),
        ((8192, 4096), None, ("two", (8192,), 2048, 16)),
        ((8191, 8192), None, ("one", (8191,), 8192, 16)),
        ((8192, 8192), None, ("two", (8192,), 2048, 16)),
        ((16384, 2048), None, ("one", (16384,), 2048, 8)),
        ((8192, 5120), None, ("one", (8192,), 8192, 16)),
        ((4096, 16384), None, ("one", (4096,), 16384, 16)),
        ((4, 5000), True, ("two", (4,), 2048, 16)),
        ((8192, 4096), False, ("one", (8192,), 4096, 16)),
    ]
    for (rows, hidden), two_pass, want in cases:
        x = torch.empty(rows, hidden, dtype=torch.bfloat16, device="meta")
        weight = torch.empty(hidden, dtype=torch.bfloat16, device="meta")
        module.fused_add_rmsnorm(x, torch.empty_like(x), weight, two_pass=two_pass)
        assert launched.pop() == want, (rows, hidden, two_pass)


@pytest.fixture(scope="module")
def cuda_module(tmp_path_factory):
    """The reference kernel built as a loadable TVM FFI module (no GPU needed to load it)."""
    torch = pytest.importorskip("torch")
    tvm_ffi = pytest.importorskip("tvm_ffi")
    out = tmp_path_factory.mktemp("module")
    try:
        compile_reference(90, str(out), shared=True)
    except ToolchainMissing as exc:
        pytest.skip(f"CUDA toolchain not installed: {exc}")
    except subprocess.CalledProcessError as exc:
        pytest.skip(f"cannot download the SGLang headers: {exc}")
    return torch, tvm_ffi.load_module(str(out / "fused_add_rmsnorm.so"))


def test_cuda_launcher_rejects_bad_tensors_with_clear_messages(cuda_module):
    """The FFI boundary end to end on the CPU: TensorMatcher names what is wrong."""
    torch, module = cuda_module
    x = torch.randn(4, 128, dtype=torch.bfloat16)
    w = torch.ones(128, dtype=torch.bfloat16)
    # `x` is verified first: shape, then strides, then dtype, then device.
    cases = [
        ((torch.empty_like(x), x.clone(), x, w), "Device value [cpu] not in the allowed options"),
        ((torch.empty_like(x), x.clone(), x.float(), w), "not in the allowed options: [bfloat16]"),
        ((torch.empty_like(x), x.clone(), x[0], w), "dimension mismatch: expected 2 but got 1"),
        ((torch.empty_like(x), x.clone(), x.t(), w), "stride#0('hidden_size')"),
    ]
    for args, message in cases:
        with pytest.raises(RuntimeError) as info:
            module.fused_add_rmsnorm_bf16(*args, 1e-6, False)
        assert message in str(info.value)
    with pytest.raises(RuntimeError, match="allowed options: \\[float16\\]"):
        module.fused_add_rmsnorm_fp16(torch.empty_like(x), x.clone(), x, w, 1e-6, False)
