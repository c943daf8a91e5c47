"""Offset-preserving normalization (kernlint/cpp/normalize.py): the forms it rewrites so that
tree-sitter parses real kernels, the preprocessor branch it keeps, and the invariant that every
byte offset and line break stays where it was."""

from __future__ import annotations

import glob
import os
import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kernlint.cpp.normalize import choose_branch, evaluate, normalize
from kernlint.cpp.parser import error_nodes, parse
from kernlint.engine import Context
from kernlint.source import SourceFile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _errors(data: bytes) -> list:
    return error_nodes(parse(normalize(data).data).root_node)


def _facts(data: bytes):
    return Context(SourceFile("x.cu", data, "cpp"), None, True).facts


def _kernels(data: bytes) -> dict[str, list[str]]:
    """Kernel name -> its parameter names, as the rules see them."""
    facts = _facts(data)
    return {k.name: [p.name for p in facts.params_of(k.node)] for k in facts.kernels}


def _breaks(data: bytes) -> list[int]:
    return [i for i, b in enumerate(data) if b in (10, 13)]


# -- preprocessor conditionals --------------------------------------------------------------------

SPLIT_BRACES = b"""\
__global__ void k(float* out, const float* in, int n) {
#ifdef USE_ROCM
  if (n > 64) {
#else
  if (n > 32) {
#endif
    out[0] = in[0];
  }
}
"""

PARAM_LIST = b"""\
__global__ void reduce(RankData* _dp, RankSignals sg,
#ifndef USE_ROCM
    volatile
#endif
    Signal* self_sg, float* __restrict__ result, int size) {
  result[0] = self_sg->x + _dp->y;
}
"""

CONDITION = b"""\
template <typename T>
__global__ void scale(T* out, const T* act, int n) {
  if constexpr ((std::is_same_v<T, half>
#if (defined(__CUDA_ARCH__) && (__CUDA_ARCH__ >= 800) && defined(ENABLE_BF16))
                 || std::is_same_v<T, __nv_bfloat16>
#endif
                 ) && (n > 0)) {
    out[0] = act[0];
  }
}
"""

ARGUMENTS = b"""\
void launch(float* a, float* b) {
  run(a,
#if SPEC_DEC
      b,
#endif
      0);
}
"""


@pytest.mark.parametrize(
    "source",
    [SPLIT_BRACES, PARAM_LIST, CONDITION, ARGUMENTS],
    ids=["split-braces", "parameter-list", "if-constexpr-condition", "call-arguments"],
)
def test_conditionals_that_break_the_grammar_parse(source):
    assert error_nodes(parse(source).root_node), "the raw form must not parse (test premise)"
    assert _errors(source) == []


def test_the_cuda_branch_is_kept_for_rocm_guards():
    out = normalize(SPLIT_BRACES).data
    assert b"n > 32" in out and b"n > 64" not in out
    assert b"#ifdef" not in out and b"#else" not in out and b"#endif" not in out


def test_the_volatile_of_the_cuda_branch_stays_in_the_parameter_list():
    (params,) = _kernels(PARAM_LIST).values()
    assert params == ["_dp", "sg", "self_sg", "result", "size"]
    out = normalize(PARAM_LIST).data
    assert b"volatile" in out and b"#ifndef" not in out


def test_an_unknown_condition_keeps_its_first_branch():
    out = normalize(ARGUMENTS).data
    assert b"b," in out  # `#if SPEC_DEC`: SPEC_DEC is unknown, the `#if` branch is kept
    out = normalize(CONDITION).data
    assert b"__nv_bfloat16" in out


def test_balanced_conditionals_at_statement_level_are_left_to_the_grammar():
    data = b"""\
#ifndef X_H
#define X_H
__global__ void k(float* out) {
#ifdef USE_ROCM
  out[0] = 1.0f;
#else
  out[0] = 2.0f;
#endif
}
#if defined(USE_ROCM)
__global__ void only_rocm(float* p) { p[0] = 0; }
#endif
#endif
"""
    assert normalize(data).data == data  # nothing blanked: the parser sees both branches
    assert set(_kernels(data)) == {"k", "only_rocm"}


def test_if_0_is_dead_code():
    data = b"int a;\n#if 0\nint b;\n#else\nint c;\n#endif\n"
    out = normalize(data).data
    assert b"int b" not in out and b"int c" in out


def test_a_stub_branch_that_closes_the_namespace_keeps_its_kernel():
    """`#if __CUDA_ARCH__ < 800` holds a stub kernel and the namespace's `}`; `#else` holds the
    real kernel and leaves the `}` to the end of the file. The real branch is kept, and the stub
    stays visible with only its extra `}` blanked (both definitions are judged, as before)."""
    data = b"""\
namespace device {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800
__global__ void Marlin(int* locks) {}
}  // namespace device
#else
__global__ void Marlin(int* locks) { locks[0] = 1; }
#endif
}  // namespace device (real)
"""
    assert _errors(data) == []
    facts = _facts(data)
    assert [k.name for k in facts.kernels] == ["Marlin", "Marlin"]
    out = normalize(data).data
    assert out.count(b"}  // namespace device") == 1  # the stub branch's brace is blanked


@pytest.mark.parametrize(
    "condition, value",
    [
        (b"defined(USE_ROCM)", 0),
        (b"!defined(USE_ROCM)", 1),
        (b"defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800", 0),
        (b"(defined(__CUDA_ARCH__) && (__CUDA_ARCH__ >= 900))", 1),
        (b"__CUDA_ARCH__ == 1000", 1),
        (b"defined(__CUDACC_RTC__)", 0),
        (b"defined __HIP_PLATFORM_AMD__ || defined(__HIPCC__)", 0),
        (b"defined(__CUDA_ARCH__) and (__CUDA_ARCH__ == 900)", 0),
        (b"SPEC_DEC", None),
        (b"defined(ENABLE_BF16) && defined(__CUDA_ARCH__)", None),
        (b"defined(ENABLE_BF16) && defined(USE_ROCM)", 0),
        (b"defined(ENABLE_BF16) || !defined(USE_ROCM)", 1),
        (b'!__has_include("x.h")', None),
        (b"0x10 > 8 ? 1 : 0  // comment", 1),
        (b"1 +", None),
    ],
)
def test_conditions_evaluate_under_the_cuda_device_model(condition, value):
    assert evaluate(condition) == value


def test_the_branch_chosen_is_the_first_not_known_false():
    dirs = [
        (b"ifdef", 0, 0, b" USE_ROCM"),
        (b"elif", 0, 0, b" defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 700"),
        (b"elif", 0, 0, b" FEATURE_X"),
        (b"else", 0, 0, b""),
        (b"endif", 0, 0, b""),
    ]
    assert choose_branch(dirs) == 2
    assert choose_branch([(b"ifndef", 0, 0, b" USE_ROCM"), (b"endif", 0, 0, b"")]) == 0
    assert choose_branch([(b"ifdef", 0, 0, b" USE_ROCM"), (b"endif", 0, 0, b"")]) is None


def test_branches_that_go_on_with_the_code_before_them():
    data = b"""\
void f(int a) {
  if (a == 1) {
    g();
  }
#ifdef ENABLE_BF16
  else if (a == 2) {
    h();
  }
#endif
  int sizes[] = {1, 2
#ifdef ENABLE_BF16
      , 3
#endif
  };
}
"""
    assert error_nodes(parse(data).root_node)
    assert _errors(data) == []


def test_conditions_the_grammar_cannot_read_are_spelled_in_c():
    data = b'#if defined(A) and not defined(B) or __has_include("x.h")\nint a;\n#endif\n'
    out = normalize(data).data
    assert b"and" not in out and b"&& " in out and b"||" in out and b"__has_include" not in out
    assert _errors(data) == []


def test_attribute_words_on_preprocessor_lines_are_kept():
    data = b"#ifndef __grid_constant__\n#define __grid_constant__\n#endif\n"
    assert normalize(data).data == data
    assert _errors(data) == []


# -- macros where a declaration stands ----------------------------------------------------------


def test_a_function_like_macro_between_global_and_the_return_type():
    data = b"""\
#define FLASHINFER_SAMPLING_LAUNCH_BOUNDS(t) __launch_bounds__(t)
template <uint32_t BLOCK_THREADS, typename DType>
__global__ FLASHINFER_SAMPLING_LAUNCH_BOUNDS(BLOCK_THREADS) void SamplingKernel(
    DType* probs, int* output, uint32_t d) {
  output[0] = probs[0] > 0;
}
"""
    assert _kernels(data) == {"SamplingKernel": ["probs", "output", "d"]}


def test_attribute_macros_in_parameter_lists_and_before_declarations():
    data = b"""\
__global__ void gemm(CUTE_GRID_CONSTANT Params const params, float* out) { out[0] = 0; }
TVM_FFI_DLL_EXPORT int run(void* self, int n) { return n; }
FLASHINFER_INLINE float twice(float x) { return 2 * x; }
template <typename T>
__global__ __myproject_launch_bounds__ static void k2(T* a, T* b) { a[0] = b[0]; }
typedef struct __CUDA_ALIGN__(8) { float x, y; } pair_t;
"""
    assert _errors(data) == []
    facts = _facts(data)
    by_name = {f.name: f for f in facts.functions}
    assert by_name["twice"].qualifiers == {"device"}  # FLASHINFER_INLINE is a device function
    assert set(_kernels(data)) == {"gemm", "k2"}
    assert _kernels(data)["gemm"] == ["params", "out"]


def test_macros_that_add_parameters_after_the_last_one():
    data = b"""\
void run(TensorView q, int64_t window_left, bool enable_pdl ADDITIONAL_FUNC_PARAMS) {}
void plan(double scale ADDITIONAL_FUNC_PARAMS PROFILER_FUNC_PARAMS);
__global__ void k(float* out, const int N_PARAMS) { out[0] = N_PARAMS; }
"""
    out = normalize(data).data
    assert b"ADDITIONAL_FUNC_PARAMS" not in out and b"PROFILER_FUNC_PARAMS" not in out
    assert b"const int N_PARAMS" in out  # a parameter's own upper-case name is kept
    assert _errors(data) == []


def test_macro_statements_and_object_like_macro_lines():
    data = b"""\
void f(Params* params) {
  params[0].scale = 1.0f;
  // the setters expand to statements
  ADDITIONAL_PARAMS_SETTER
  PROFILER_PARAMS_SETTER
  __CALL_KERNEL_3D(torch::kBFloat16, cutlass::bfloat16_t)
  LOAD_SCALES_K(scales_k)
  // a comment before the next statement
  if (params) {
    CHECK(params != nullptr)
        << "params";
  }
}
"""
    out = normalize(data).data
    for gone in (b"ADDITIONAL_PARAMS_SETTER", b"PROFILER_PARAMS_SETTER", b"__CALL_KERNEL_3D"):
        assert gone not in out
    assert b"LOAD_SCALES_K" not in out
    assert b"CHECK(params != nullptr)" in out  # continued on the next line: left alone
    assert _errors(data) == []


def test_namespace_macros_are_left_alone():
    data = b"TRTLLM_NAMESPACE_BEGIN\nnamespace kernels {\nint a;\n}\nTRTLLM_NAMESPACE_END\n"
    assert b"TRTLLM_NAMESPACE_BEGIN" in normalize(data).data
    assert b"TRTLLM_NAMESPACE_END" in normalize(data).data


def test_builtin_type_arguments_of_macro_calls():
    data = b"""\
INSTANTIATE_KERNEL(at::BFloat16, at::Float8_e4m3fn, float);
void f(int x) {
  switch (x) {
    DTYPE_DISPATCH_CASE(torch::kFloat32, float);
    DTYPE_DISPATCH_CASE(torch::kUInt8, unsigned int);
  }
  DISPATCH(x, [&] {
    LAUNCH_KERNEL(scalar_t, int8_t);
    g(sizeof(float), h(int8_t(3)));
  });
}
"""
    assert _errors(data) == []
    out = normalize(data).data
    assert b"kFloat32, _____)" in out and b"kUInt8, ____________)" in out
    assert b"scalar_t, ______)" in out
    assert b"sizeof(float)" in out and b"int8_t(3)" in out  # not macro arguments


def test_grammar_gaps_in_declarations():
    data = b"""\
template <typename T> class Runner {};
template class Runner<float>;
extern template struct Runner<int>;
struct D : B {
  using typename Base::Params;
  enum : int { kA = 0, kB = 1 };
  __host__ __device__ friend int operator/(int a, D const& d);
  CUTE_HOST_DEVICE
  friend int operator*(int a, D const& d);
};
void f(Smem& s) { s.template store_128b(1, 2); }
"""
    assert _errors(data) == []
    out = normalize(data).data
    assert b"template <typename T> class Runner" in out  # a class template stays a class


def test_block_comments_in_a_define_body_are_blanks():
    """A `/* */` comment ends the grammar's token for a macro body: without the blanking, the
    rest of the body is parsed as code."""
    data = b"""\
#define INSTANTIATE(T)                                 \\
  struct Runner_##T : Base {                           \\
    using A = T;                                       \\
    /* using B = T; */                                 \\
    void run_##T(int p) { this->Base::operator()(p); } \\
  };
int after;
"""
    assert error_nodes(parse(data).root_node)
    assert _errors(data) == []
    assert b"/*" not in normalize(data).data


def test_value_initialized_temporaries_of_a_named_type():
    data = b"""\
template <typename M, typename A>
__device__ void f(M tiled_mma) {
  constexpr int N = cute::tile_size<1>(decltype(tiled_mma){});
  static constexpr int K = cute::size<2>(typename cute::MMA_Traits<A>::Shape_MNK{});
}
"""
    assert error_nodes(parse(data).root_node)
    assert _errors(data) == []


def test_a_struct_whose_body_is_one_macro():
    data = b"struct Closure {\n  PROFILER_CLOSURE_PARAMS_DECL\n};\nenum E {\n  ONLY_VALUE\n};\n"
    out = normalize(data).data
    assert b"PROFILER_CLOSURE_PARAMS_DECL" not in out
    assert b"ONLY_VALUE" in out  # an enum's only enumerator stays
    assert _errors(data) == []


# -- the invariant ------------------------------------------------------------------------------

FRAGMENTS = [
    SPLIT_BRACES,
    PARAM_LIST,
    CONDITION,
    ARGUMENTS,
    b"#if 0\n",
    b"#ifdef USE_ROCM\n",
    b"#ifndef USE_ROCM\n",
    b"#if defined(X) and not Y\n",
    b"#elif __has_include(<x>)\n",
    b"#else\n",
    b"#endif\n",
    b"#define A \\\n  B\n",
    b"{",
    b"}",
    b"(",
    b")",
    b",",
    b"\r\n",
    b"\n",
    b"/* c\n#if 1\n */",
    b"// c\n",
    b'"(#if"',
    b"__global__ FOO_BOUNDS(4) void k(float* x",
    b"  ADDITIONAL_PARAMS_SETTER\n",
    b"bool pdl ADDITIONAL_FUNC_PARAMS)",
    b"DISPATCH_CASE(torch::kFloat32, float);\n",
    b"template class A<int>;\n",
    b"__host__ __device__\n  friend int f();\n",
    b"CUTE_HOST_DEVICE friend int g();\n",
    b"x.template f(1);\n",
    b"enum : int { A };\n",
    b"__quick_device_inline__ C(int a) {}\n",
    b"TVM_FFI_DLL_EXPORT int f();\n",
    b"#define M(x) /* c */ \\\n  x\n",
    b"f(decltype(a){}, typename A<int>::B{});\n",
    b"struct S {\n  A_MACRO_DECL\n};\n",
]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(FRAGMENTS), min_size=1, max_size=30))
def test_any_mix_of_the_forms_keeps_every_offset_and_line_break(parts):
    data = b"".join(parts)
    out = normalize(data).data
    assert len(out) == len(data)
    assert _breaks(out) == _breaks(data)


def test_random_damage_of_real_files_keeps_every_offset_and_line_break():
    paths = sorted(glob.glob(os.path.join(ROOT, "fixtures", "**", "*.cu*"), recursive=True))
    paths = [p for p in paths if not p.endswith("fixed")]
    assert len(paths) >= 6
    rng = random.Random(21)
    for path in paths:
        with open(path, "rb") as fh:
            data = bytearray(fh.read())
        for _ in range(3):
            for _ in range(12):
                at = rng.randrange(len(data) + 1)
                data[at:at] = rng.choice(FRAGMENTS[4:])
            out = normalize(bytes(data)).data
            assert len(out) == len(data), path
            assert _breaks(out) == _breaks(bytes(data)), path


def test_unbalanced_preprocessor_text_at_scale_is_linear_enough():
    """12,000 `#if` never closed, `#endif` without `#if`, and 5,000 nested groups: no error,
    and the shape is kept (bench/growth.py measures the time; the timeout here catches a hang)."""
    data = b"#if X\n{ (\n" * 12_000 + b"#endif\n" * 13_000 + b"#if A\n" * 5000 + b"#endif\n" * 5000
    out = normalize(data).data
    assert len(out) == len(data) and _breaks(out) == _breaks(data)
