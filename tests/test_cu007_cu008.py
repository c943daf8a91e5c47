"""raw-cuda-primitive (CU007) and manual-tensor-validation (CU008): what the checked tree's own
sgl_kernel headers define (kernlint.sgl_headers), files adapted from other projects, vector
casts AlignedVector cannot express, and the TensorMatcher limits CU008 respects."""

from __future__ import annotations

import json
import os

import pytest
from cli_support import run
from kernlint_rules.cpp import manual_tensor_validation as cu008
from kernlint_rules.cpp import raw_cuda_primitive as cu007

from kernlint import sgl_headers
from kernlint.runner import lint_paths

FIXTURES = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "fixtures")
CU007_FIXTURES = os.path.join(FIXTURES, "cpp", "raw-cuda-primitive")


@pytest.fixture(autouse=True)
def _forget_trees():
    sgl_headers.reset()
    yield
    sgl_headers.reset()


# -- the tree's abstractions ------------------------------------------------------------------
def test_newer_tree_defines_more():
    new = sgl_headers.abstractions(os.path.join(CU007_FIXTURES, "tree_new", "csrc", "x.cuh"))
    old = sgl_headers.abstractions(os.path.join(CU007_FIXTURES, "tree_old", "csrc", "x.cuh"))
    assert new.header is not None and new.header.endswith(os.path.join("sgl_kernel", "utils.h"))
    assert {"SGL_DEVICE", "SGL_DEVICE_HOST", "CHECK_HOST", "reduce_min"} <= new.names
    assert "SGL_DEVICE" in old.names and "RuntimeCheck" in old.names
    assert not {"SGL_DEVICE_HOST", "CHECK_HOST", "reduce_min"} & old.names
    assert new.reduces("max", "integral") and new.reduces("max", "bf16x2_t")
    assert new.reduces("min", "fp32_t") and new.reduces("max", None)
    assert old.reduces("max", "fp32_t") and old.reduces("sum", "integral")
    assert not old.reduces("max", "integral") and not old.reduces("max", "fp16_t")
    assert not old.reduces("max", None) and not old.reduces("min", "fp32_t")
    assert not new.reduces("or", "integral")  # (no tree has reduce_or)
    assert new.fingerprint() != old.fingerprint()


def test_no_tree_means_what_every_tree_has(tmp_path):
    got = sgl_headers.abstractions(str(tmp_path / "a.cuh"))
    assert got is sgl_headers.UNIVERSAL and got.header is None
    assert "SGL_DEVICE_HOST" not in got.names and got.reduces("max", "fp32_t")
    assert not got.reduces("max", "integral") and not got.reduces("min", "fp32_t")


def test_comments_in_headers_define_nothing(tmp_path):
    inc = tmp_path / "include" / "sgl_kernel"
    inc.mkdir(parents=True)
    (inc / "utils.h").write_text("// CHECK_HOST is not here yet\n#pragma once\n")
    (inc / "utils.cuh").write_text(
        "#define SGL_DEVICE __forceinline__ __device__\n"
        "// #define SGL_DEVICE_HOST __forceinline__ __device__ __host__\n"
        "/* struct AlignedVector {}; */\n"
    )
    got = sgl_headers.abstractions(str(tmp_path / "csrc" / "a.cuh"))
    assert got.names == frozenset({"SGL_DEVICE"})


@pytest.mark.parametrize(
    "text,canonical",
    [
        ("float", "fp32_t"),
        ("const float", "fp32_t"),
        ("__nv_bfloat162", "bf16x2_t"),
        ("half2", "fp16x2_t"),
        ("unsigned int", "integral"),
        ("std::uint32_t", "integral"),
        ("const int64_t&", "integral"),
        ("T", None),
        ("auto", None),
        ("float*", None),
        ("vec_t<float, 4>", None),
    ],
)
def test_canonical_type(text, canonical):
    assert sgl_headers.canonical_type(text) == canonical


# -- CU007 in a tree --------------------------------------------------------------------------
UTILS_CUH = "#pragma once\n#define SGL_DEVICE __forceinline__ __device__\n"
HOST_FN = "__host__ __device__ __forceinline__ float both(float x) { return x; }\n"


def _cu007_tree(tmp_path, utils_cuh=UTILS_CUH):
    inc = tmp_path / "kernels" / "jit" / "include" / "sgl_kernel"
    inc.mkdir(parents=True, exist_ok=True)
    (inc / "utils.h").write_text("#pragma once\nnamespace sglang {}\n")
    (inc / "utils.cuh").write_text(utils_cuh)
    src = tmp_path / "kernels" / "jit" / "csrc"
    src.mkdir(parents=True, exist_ok=True)
    f = src / "k.cuh"
    f.write_text("namespace sglang {\n" + HOST_FN + "}\n")
    return inc / "utils.cuh", f


def _found(path, code="CU007"):
    results = lint_paths([str(path)], select=[code], warn=lambda m: None)
    return [(d.line, d.message) for r in results for d in r.diagnostics]


def test_sgl_device_host_only_where_defined(tmp_path):
    utils, f = _cu007_tree(tmp_path)
    assert _found(f) == []
    utils.write_text(UTILS_CUH + "#define SGL_DEVICE_HOST __forceinline__ __device__ __host__\n")
    sgl_headers.reset()
    assert _found(f) == [(2, "`__host__ __device__ __forceinline__`: use `SGL_DEVICE_HOST`")]


def test_cache_follows_the_tree_headers(tmp_path):
    """What the tree defines is a fact about other files: a cached result must follow it."""
    utils, _ = _cu007_tree(tmp_path)
    args = ("check", "--select", "CU007", "--output-format", "json", "kernels/jit/csrc")
    p = run(*args, cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout) == []
    utils.write_text(UTILS_CUH + "#define SGL_DEVICE_HOST __forceinline__ __device__ __host__\n")
    got = json.loads(run(*args, cwd=tmp_path).stdout)
    assert [(d["code"], d["line"]) for d in got] == [("CU007", 2)]
    utils.write_text(UTILS_CUH)
    assert json.loads(run(*args, cwd=tmp_path).stdout) == []


# -- files adapted from other projects --------------------------------------------------------
@pytest.mark.parametrize(
    "head",
    [
        "// Adapted from\n// https://github.com/NVIDIA/TensorRT-LLM/blob/abc/cpp/kernels/gemm.cu\n",
        "/*\n * Adapted from https://github.com/IST-DASLab/marlin\n */\n",
        "// Adapted from DeepSeek-AI/LPLB's `minilp.cu`. Templated on shapes.\n",
        "/*\n * Forked from flashinfer's ``finalizeKernel``\n * (trtllm_fused_moe_dev.cu:639), "
        "stripped of templating.\n */\n",
        "// Kernel body vendored from the NV optimization\n// package (KDA/kda_kernel.cu).\n",
        "/// Top-k for gfx950, adapted from aiter's\n/// coop_topk.cuh (MIT).\n",
    ],
)
def test_upstream_source(head):
    assert cu007.upstream_source((head + "#pragma once\nint x;\n").encode()) is not None


@pytest.mark.parametrize(
    "head",
    [
        "// Radix top-k adapted from https://github.com/x/y/blob/main/topk_selector.py.\n",
        "// JIT port of sgl-kernel's csrc/moe/topk.cu, itself adapted from vLLM v0.7.3.\n",
        "// Adapted from https://github.com/sgl-project/sglang/blob/main/x.cu\n",
        "// Adapted from the paper's algorithm.\n",
        "// Algorithm inspired by FlashMLA (https://github.com/deepseek-ai/FlashMLA).\n",
        # After the first line of code a comment does not describe the file.
        "int y;\n// Adapted from https://github.com/NVIDIA/TensorRT-LLM/blob/abc/gemm.cu\n",
        # A paragraph break ends the sentence that names the source.
        "// Adapted from upstream.\n\n// See dsv3.cu for the kernel.\n",
    ],
)
def test_not_upstream_source(head):
    assert cu007.upstream_source((head + "int x;\n").encode()) is None


# -- vector casts -----------------------------------------------------------------------------
def _kernel_file(tmp_path, body, name="v.cuh"):
    d = tmp_path / "kernels" / "jit" / "csrc"
    d.mkdir(parents=True, exist_ok=True)
    f = d / name
    f.write_text("namespace sglang {\n" + body + "}\n")
    return f


def _lines(path, code="CU007"):
    return [line for line, _ in _found(path, code)]


def test_pointer_aliases_reaching_a_hinted_access(tmp_path):
    f = _kernel_file(
        tmp_path,
        "__global__ void k(const char* s, char* d, bool up) {\n"
        "  const auto a = reinterpret_cast<const uint4*>(s);\n"  # 3: reaches load_nc via `src`
        "  const auto b = reinterpret_cast<const uint4*>(d);\n"  # 4: same
        "  const auto src = up ? a : b;\n"
        "  uint4 v = device::details::load_nc(src + threadIdx.x);\n"
        "  const auto c = reinterpret_cast<uint4*>(d);\n"  # 7: plain stores only: reported
        "  c[threadIdx.x] = v;\n"
        "}\n",
    )
    assert _lines(f) == [7]


def test_casts_feeding_cache_operator_intrinsics(tmp_path):
    f = _kernel_file(
        tmp_path,
        "__global__ void k(const float* w, float* o) {\n"
        "  float4 a = __ldg(reinterpret_cast<const float4*>(w) + threadIdx.x);\n"
        "  __stcs(reinterpret_cast<float4*>(o), a);\n"
        "  cp_async4(reinterpret_cast<int4*>(o), reinterpret_cast<const int4*>(w));\n"
        "  float4 b = softmax_load(reinterpret_cast<const float4*>(w));\n"  # 6: not hinted
        "}\n",
    )
    assert _lines(f) == [6]


def test_address_of_memory_and_of_registers(tmp_path):
    f = _kernel_file(
        tmp_path,
        "__global__ void k(const bf16_t* cp, float* o) {\n"
        "  float regs[8];\n"
        "  __shared__ float smem[2][64];\n"
        "  uint4 a = *reinterpret_cast<const uint4*>(&cp[8 * threadIdx.x]);\n"  # 5: global
        "  *reinterpret_cast<float4*>(&regs[4]) = float4{};\n"  # registers: silent
        "  *reinterpret_cast<float4*>(&(smem[1][0])) = float4{};\n"  # 7: shared memory
        "  *reinterpret_cast<uint4*>(smem) = a;\n"  # 8: shared memory
        "  *reinterpret_cast<uint4*>(&params.field[0]) = a;\n"  # a field: not judged
        "}\n",
    )
    assert _lines(f) == [5, 7, 8]


# -- CU008 ------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "text,kind",
    [
        ("tvm::ffi::TensorView", "view"),
        ("const tvm::ffi::TensorView&", "view"),
        ("TensorView", "view"),
        ("tvm::ffi::Optional<tvm::ffi::TensorView>", "optional"),
        ("const Optional<TensorView>&", "optional"),
        ("tvm::ffi::Tensor", None),
        ("std::vector<tvm::ffi::TensorView>", None),
    ],
)
def test_tensor_kinds(text, kind):
    assert cu008._tensor_kind(text) == kind


def test_helper_versus_entry_point(tmp_path):
    """A dtype check of a tensor of no stated shape: reported in an FFI entry point (a matcher
    would state the shape too), not in a helper the file's launchers call (it takes tensors of
    any shape), and not when the only caller is device code."""
    f = _kernel_file(
        tmp_path,
        "inline void check_i32(tvm::ffi::TensorView t) {\n"
        "  host::RuntimeCheck(host::is_type<int32_t>(t.dtype()));\n"  # 3: helper: silent
        "}\n"
        "struct K {\n"
        "  static void run(tvm::ffi::TensorView ids, tvm::ffi::TensorView x) {\n"
        "    check_i32(x);\n"
        "    host::RuntimeCheck(host::is_type<int32_t>(ids.dtype()));\n"  # 8: entry point
        "  }\n"
        "};\n"
        "void entry(tvm::ffi::TensorView y) {\n"
        "  host::RuntimeCheck(host::is_type<float>(y.dtype()));\n"  # 12: entry point
        "}\n"
        "__global__ void kern() { entry_dev(); }\n",
        name="h.cuh",
    )
    assert _lines(f, "CU008") == [8, 12]
