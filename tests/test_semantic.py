"""Semantic mode (libclang): types through headers, callee-aware constness, graceful failure.
Each behaviour uses small self-contained headers written here."""

from __future__ import annotations

import json

import pytest
from cli_support import run as cli_run

pytest.importorskip("clang.cindex")

TENSOR_H = "#pragma once\nnamespace tvm::ffi {\nstruct TensorView {};\n}  // namespace tvm::ffi\n"
TYPES_H = """\
#pragma once
#include <cstdint>
using index_t = int;
using wide_t = int64_t;
typedef long my_long;
using count_t = index_t;
"""
DEV_H = """\
#pragma once
__device__ float read_it(const float* p);
__device__ void write_it(float* p);
"""
FFI_CUH = """\
#pragma once
#include <cstddef>
#include <tvm/ffi/container/tensor.h>
#include "types.h"
namespace sglang {
void run(tvm::ffi::TensorView x, index_t n, wide_t m, my_long k, count_t c, unsigned long s, size_t z) {}
}  // namespace sglang
"""
KERNEL_CUH = """\
#pragma once
#include "dev.h"
namespace sglang {
__global__ void k(float* __restrict__ a, float* __restrict__ b, float* __restrict__ out) {
  out[0] = read_it(a);
  write_it(b);
}
}  // namespace sglang
"""


def run(*args, cwd):
    return cli_run(*args, cwd=cwd, timeout=300)  # libclang parses take a while


def check(project, code, *extra):
    """`kernlint check kernels --select CODE --output-format json --no-cache [extra]`."""
    return run(
        "check",
        "kernels",
        "--select",
        code,
        "--output-format",
        "json",
        "--no-cache",
        *extra,
        cwd=project,
    )


@pytest.fixture
def project(tmp_path):
    inc = tmp_path / "include"
    (inc / "tvm" / "ffi" / "container").mkdir(parents=True)
    (inc / "tvm" / "ffi" / "container" / "tensor.h").write_text(TENSOR_H)
    src = tmp_path / "kernels" / "jit" / "csrc"
    src.mkdir(parents=True)
    (src / "types.h").write_text(TYPES_H)
    (src / "dev.h").write_text(DEV_H)
    (src / "ffi.cuh").write_text(FFI_CUH)
    (src / "kernel.cuh").write_text(KERNEL_CUH)
    (tmp_path / "kernlint.toml").write_text('include-paths = ["include"]\n')
    return tmp_path


def _findings(proc):
    return sorted((f["code"], f["line"], f["message"]) for f in json.loads(proc.stdout))


def test_aliases_resolve_through_headers(project):
    plain = check(project, "CU005")
    semantic = check(project, "CU005", "--semantic")
    assert "Traceback" not in semantic.stderr
    plain_f = _findings(plain)
    sem_f = _findings(semantic)
    # Without types only `unsigned long` is visible; with them, index_t, my_long and count_t too
    # (`size_t` is fine at the boundary: SGLang's guide lists it among the preferred types).
    assert [m.split("`")[3] for _, _, m in plain_f] == ["s"]
    names = sorted(m.split("`")[3] for _, _, m in sem_f)
    assert names == ["c", "k", "n", "s"], sem_f
    assert not any("`m`" in m for _, _, m in sem_f)  # wide_t -> int64_t is fixed width
    assert any("`index_t`" in m and "int32_t" in m for _, _, m in sem_f)
    assert any("`my_long`" in m and "int64_t" in m for _, _, m in sem_f)
    assert len(sem_f) == len(set(sem_f))  # one finding per parameter: passes merged


def test_callee_const_from_a_header(project):
    plain = check(project, "CU004")
    semantic = check(project, "CU004", "--semantic")
    assert _findings(plain) == []  # unknown callees: the syntactic pass stays silent
    sem_f = _findings(semantic)
    assert len(sem_f) == 1 and "through `a`" in sem_f[0][2], sem_f  # b goes to a `float*`


def test_config_key_turns_it_on(project):
    (project / "kernlint.toml").write_text('semantic = true\ninclude-paths = ["include"]\n')
    p = check(project, "CU004")
    assert len(_findings(p)) == 1


def test_missing_headers_degrade_with_one_note(project):
    src = project / "kernels" / "jit" / "csrc"
    for i in range(3):
        (src / f"broken{i}.cuh").write_text(
            '#pragma once\n#include "not_there.h"\nnamespace sglang {\n'
            "void f(tvm::ffi::TensorView x, long n) {}\n}  // namespace sglang\n"
        )
    p = check(project, "CU005", "--semantic")
    assert "Traceback" not in p.stderr
    assert p.stderr.count("semantic:") == 1, p.stderr  # once per run, not per file
    assert "not_there.h" in p.stderr
    # The syntactic findings stand for the files libclang could not resolve.
    assert sum(1 for c, _, m in _findings(p) if "`long`" in m) == 3


def test_builtin_headers_resolve_without_a_clang_install(tmp_path, monkeypatch):
    """The libclang wheel ships no builtin headers: kernlint's stand-ins make stddef.h,
    limits.h, stdarg.h, stdint.h and float.h resolve."""
    from kernlint import semantic

    monkeypatch.setattr(semantic, "builtin_include", lambda: semantic.SHIPPED_INCLUDE)
    f = tmp_path / "b.cuh"
    f.write_text(
        "#include <stddef.h>\n#include <limits.h>\n#include <stdarg.h>\n#include <stdint.h>\n"
        "#include <float.h>\n#include <cstddef>\n"
        'static_assert(sizeof(size_t) == 8 && INT_MAX > 0 && FLT_MAX > 0, "");\n'
        "int64_t f(va_list) { return CHAR_BIT; }\n"
    )
    sem = semantic.SemanticFile(str(f), f.read_bytes())
    assert sem.problems == []


def _problems(path):
    from kernlint import semantic

    return semantic.SemanticFile(str(path), path.read_bytes()).problems


def test_inline_ptx_and_launches_in_included_headers_are_read_as_host_code(tmp_path):
    """A vendored header with inline PTX (register constraints the host target rejects, also
    inside a macro definition) and a `<<<...>>>` launch: the file resolves after the pass reads
    those headers' host views; without them it would not."""
    from kernlint import semantic

    (tmp_path / "vendor_ptx.h").write_text(
        "#pragma once\n"
        "inline unsigned short to_half_bits(float f) {\n"
        "  unsigned short h;\n"
        '  asm volatile("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(f));\n'
        "  return h;\n"
        "}\n"
        "#define LOAD_GLOBAL(out, ptr) \\\n"
        '  asm volatile("ld.global.b16 %0, [%1];" : "=h"(out) : "l"(ptr))\n'
        "inline unsigned short load_it(const unsigned short* p) {\n"
        "  unsigned short v;\n"
        "  LOAD_GLOBAL(v, p);\n"
        "  return v;\n"
        "}\n"
        "__global__ void child(int* p) {}\n"
        "inline void launch_child(int* p) { child<<<1, 32>>>(p); }\n"
    )
    f = tmp_path / "user.cuh"
    f.write_text(
        '#include "vendor_ptx.h"\n'
        "namespace sglang {\n"
        "inline unsigned short g(float x) { launch_child(nullptr); return to_half_bits(x); }\n"
        "}  // namespace sglang\n"
    )
    assert _problems(f) == []
    # The same header, read as is, is what libclang rejects.
    raw = (
        semantic.cindex()
        .Index.create()
        .parse(str(f), args=semantic.compile_args(str(f)), options=0)
    )
    errors = [d.spelling for d in raw.diagnostics if d.severity >= 3]
    assert any("constraint" in e for e in errors), errors


def test_cooperative_groups_and_device_intrinsics_resolve(tmp_path):
    """What nvcc declares only for the device pass: cooperative groups (kernlint's stand-in
    header), half/bf16 arithmetic, SIMD-in-a-word, dp4a, warp reductions, named barriers."""
    f = tmp_path / "cg.cuh"
    f.write_text(
        "#include <cooperative_groups.h>\n"
        "#include <cooperative_groups/reduce.h>\n"
        "namespace cg = cooperative_groups;\n"
        "struct pair16 { unsigned short a, b; };\n"
        "namespace sglang {\n"
        "__device__ float f(float v, unsigned m, pair16 h, float* smem) {\n"
        "  auto warp = cg::tiled_partition<32>(cg::this_thread_block());\n"
        "  float s = cg::reduce(warp, v, cg::plus<float>());\n"
        "  const auto cluster = cg::this_cluster();\n"
        "  float* peer = cluster.map_shared_rank(smem, 0);\n"
        "  cluster.sync();\n"
        "  pair16 r = __hfma2(h, h, h);\n"
        "  unsigned x = __vminu2(m, m) + __vabs4(m) + __reduce_add_sync(0xffffffffu, m);\n"
        "  __barrier_sync(1);\n"
        "  return s + *peer + __dp4a(1, 2, 3) + x + r.a + cluster.block_rank();\n"
        "}\n"
        "}  // namespace sglang\n"
    )
    assert _problems(f) == []


def test_jit_dependency_headers_are_found_where_sglang_looks(tmp_path, monkeypatch):
    """CUTLASS/flashinfer headers from an installed `flashinfer` (data/cutlass/include, ...),
    DeepGEMM's from `deep_gemm`: the places SGLang's own JIT build uses."""
    import sys

    from kernlint import semantic

    site = tmp_path / "site"
    (site / "flashinfer" / "data" / "cutlass" / "include" / "cutlass").mkdir(parents=True)
    (site / "flashinfer" / "__init__.py").write_text("")
    (site / "flashinfer" / "data" / "cutlass" / "include" / "cutlass" / "numeric.h").write_text(
        "#pragma once\nnamespace cutlass { using half_t = unsigned short; }\n"
    )
    (site / "deep_gemm" / "include" / "deep_gemm").mkdir(parents=True)
    (site / "deep_gemm" / "__init__.py").write_text("")
    (site / "deep_gemm" / "include" / "deep_gemm" / "api.h").write_text(
        "#pragma once\nnamespace deep_gemm { inline int version() { return 1; } }\n"
    )
    monkeypatch.syspath_prepend(str(site))
    for name in ("flashinfer", "deep_gemm"):
        monkeypatch.delitem(sys.modules, name, raising=False)
    semantic._dependency_includes.cache_clear()
    try:
        includes = semantic._dependency_includes()
        assert str(site / "flashinfer" / "data" / "cutlass" / "include") in includes
        assert str(site / "deep_gemm" / "include") in includes
        f = tmp_path / "uses_deps.cuh"
        f.write_text(
            "#include <cutlass/numeric.h>\n#include <deep_gemm/api.h>\n"
            "namespace sglang { cutlass::half_t h = deep_gemm::version(); }\n"
        )
        assert _problems(f) == []
    finally:
        semantic._dependency_includes.cache_clear()


def test_host_view_keeps_line_continuations():
    from kernlint.semantic import host_view

    data = b'#define X(o) \\\n  asm volatile("mov.b32 %0, 1;" : "=r"(o))\nint y;\n'
    view = host_view(data)
    assert len(view) == len(data) and view.count(b"\n") == data.count(b"\n")
    assert b"\\\n" in view and b"asm" not in view and view.endswith(b"int y;\n")


DIM_CUH = """\
#pragma once
#include <cstdint>
#include <tvm/ffi/container/tensor.h>
namespace sglang {
constexpr int kHeadDim = JIT_HEAD_DIM;  // the JIT loader passes -DJIT_HEAD_DIM=...
#if JIT_HEAD_DIM == 128
using dim_t = int;
#else
using dim_t = int64_t;
#endif
void run_dim(tvm::ffi::TensorView x, dim_t n) {}
}  // namespace sglang
"""


def _dim_project(project):
    src = project / "kernels" / "jit" / "csrc"
    for name in ("types.h", "dev.h", "ffi.cuh", "kernel.cuh"):
        (src / name).unlink()
    (src / "dim.cuh").write_text(DIM_CUH)
    return project


def test_defines_reach_the_semantic_parse(project):
    _dim_project(project)
    # Without the macro: libclang cannot resolve `JIT_HEAD_DIM` (one note) and `#if` takes the
    # int64_t branch: no finding.
    bare = check(project, "CU005", "--semantic")
    assert "Traceback" not in bare.stderr
    assert "JIT_HEAD_DIM" in bare.stderr and bare.stderr.count("semantic:") == 1, bare.stderr
    assert _findings(bare) == []
    # With it, as the build passes it: the file resolves, and the value picks the `int` branch.
    defined = check(project, "CU005", "--semantic", "-D", "JIT_HEAD_DIM=128")
    assert "semantic:" not in defined.stderr, defined.stderr
    got = _findings(defined)
    assert len(got) == 1 and "`n`" in got[0][2] and "`dim_t`" in got[0][2], got
    other = check(project, "CU005", "--semantic", "--define", "JIT_HEAD_DIM=64")
    assert "semantic:" not in other.stderr and _findings(other) == []


def test_defines_config_key_and_cache(project):
    _dim_project(project)
    cache = str(project / "cache")
    args = ("check", "kernels", "--select", "CU005", "--output-format", "json", "--semantic")
    toml = 'include-paths = ["include"]\ndefines = ["JIT_HEAD_DIM={}"]\n'
    (project / "kernlint.toml").write_text(toml.format(128))
    first = run(*args, "--cache-dir", cache, cwd=project)
    assert len(_findings(first)) == 1, first.stdout + first.stderr
    # Same bytes, another macro value: the cached result must not be replayed.
    (project / "kernlint.toml").write_text(toml.format(64))
    second = run(*args, "--cache-dir", cache, cwd=project)
    assert _findings(second) == [], second.stdout


def test_bad_defines_are_errors(project):
    (project / "kernlint.toml").write_text('defines = ["1BAD=2"]\n')
    p = check(project, "CU005")
    assert p.returncode == 2 and "kernlint.toml" in p.stderr and "1BAD=2" in p.stderr, p.stderr
    (project / "kernlint.toml").write_text('defines = ["OK=1"]\n')
    p = check(project, "CU005", "-D", "NOT A NAME")
    assert p.returncode == 2 and "--define" in p.stderr and "Traceback" not in p.stderr, p.stderr


# -- types libclang could not resolve are not judged -------------------------------------------

MISSING_CUH = """\
#pragma once
#include <tvm/ffi/container/tensor.h>
#include "missing.h"
#include "present.h"
#include <string>
namespace sglang {
using my_t = missing_t;
typedef missing_t your_t;
void f(tvm::ffi::TensorView x, missing_t a, my_t b, your_t c, std::string d, present_t e) {}
}  // namespace sglang
"""
PRESENT_H = "#pragma once\ntypedef long present_t;\n"
PRESENT_CUH = """\
#pragma once
#include <tvm/ffi/container/tensor.h>
#include "present.h"
namespace sglang {
void g(tvm::ffi::TensorView x, present_t e) {}
}  // namespace sglang
"""


def _missing_project(project, *files):
    src = project / "kernels" / "jit" / "csrc"
    for name in ("types.h", "dev.h", "ffi.cuh", "kernel.cuh"):
        (src / name).unlink()
    (src / "present.h").write_text(PRESENT_H)
    for name, text in files:
        (src / name).write_text(text)
    return project


def test_types_from_a_missing_header_are_not_judged(project):
    """`missing.h` is not found: its names (and aliases of them, and whatever libclang then
    cannot instantiate, such as `std::string`) come out of error recovery as `int`. None of
    them is reported; the alias from a header that exists still is, and the note counts what
    was left to the syntactic pass."""
    _missing_project(project, ("missing.cuh", MISSING_CUH))
    plain = check(project, "CU005")
    semantic = check(project, "CU005", "--semantic")
    assert "Traceback" not in semantic.stderr
    assert _findings(plain) == []
    got = _findings(semantic)
    assert [m.split("`")[3] for _, _, m in got] == ["e"], got
    assert "`present_t`" in got[0][2] and "int64_t" in got[0][2]
    assert semantic.stderr.count("semantic:") == 1, semantic.stderr
    assert "missing.h" in semantic.stderr
    # a, b, c and d: not judged, and said so.
    assert "not judged" in semantic.stderr and "4 FFI parameter(s)" in semantic.stderr, (
        semantic.stderr
    )


def test_an_alias_from_a_header_that_exists_is_judged(project):
    _missing_project(project, ("present.cuh", PRESENT_CUH))
    semantic = check(project, "CU005", "--semantic")
    got = _findings(semantic)
    assert len(got) == 1 and "`present_t`" in got[0][2], got
    assert "semantic:" not in semantic.stderr, semantic.stderr  # everything resolved


def test_alias_chains_through_unresolved_names(tmp_path):
    """Every form of a type behind a missing header is UNRESOLVED, never `int`; a declaration
    after the missing include in the same file is not trusted either (the header could have
    changed what follows), one from a clean header is."""
    from kernlint import semantic

    (tmp_path / "present.h").write_text(PRESENT_H)
    f = tmp_path / "chains.cuh"
    f.write_text(
        '#include "missing.h"\n'
        '#include "present.h"\n'
        "using a_t = missing_t;\n"
        "typedef missing_t b_t;\n"
        "using c_t = decltype(missing_fn());\n"
        "using d_t = missing_ns::type;\n"
        "using e_t = a_t;\n"
        "using g_t = IDX_FROM_MISSING_H;\n"
        "using ok_t = long;\n"
        "void f(missing_t x0, a_t x1, b_t x2, c_t x3, d_t x4, e_t x5, g_t x6, ok_t x7,\n"
        "       present_t x8) {}\n"
    )
    sem = semantic.SemanticFile(str(f), f.read_bytes())
    assert sem.problems and "missing.h" in sem.problems[0]
    sem._index()
    got = {cur.spelling: sem.param_integer(off) for off, cur in sem._params.items()}
    assert got.pop("x8") == ("present_t", "int64_t")
    assert got == {f"x{i}": semantic.UNRESOLVED for i in range(8)}, got


def test_clean_aliases_are_not_marked_unresolved(tmp_path):
    from kernlint import semantic

    f = tmp_path / "clean.cuh"
    f.write_text(
        "#include <cstdint>\n#include <cstddef>\n"
        "template <class T> struct S { using type = long; };\n"
        "using s_t = S<int>::type;\n"
        "using ok_t = unsigned;\n"
        "using w_t = int64_t;\n"
        "void f(s_t x0, ok_t x1, w_t x2, std::size_t x3) {}\n"
    )
    sem = semantic.SemanticFile(str(f), f.read_bytes())
    assert sem.problems == []
    sem._index()
    got = {cur.spelling: sem.param_integer(off) for off, cur in sem._params.items()}
    assert got == {
        "x0": ("s_t", "int64_t"),
        "x1": ("ok_t", "uint32_t"),
        "x2": None,
        "x3": None,  # (`size_t` is an accepted name, as `int64_t` is)
    }, got


DEV_BAD_H = """\
#pragma once
#include "missing_dev.h"
__device__ float read_bad(const float* p);
"""
KERNEL_BAD_CUH = """\
#pragma once
#include "dev.h"
#include "dev_bad.h"
namespace sglang {
__global__ void k(float* __restrict__ a, float* __restrict__ c, float* __restrict__ out) {
  out[0] = read_it(a);
  out[1] = read_bad(c);
}
}  // namespace sglang
"""


def test_callee_behind_a_missing_header_stays_unknown(project):
    """`read_bad` is declared in a header whose own include was not found: its `const float*`
    is not trusted (the missing header could change what follows), so `c` stays unknown as
    without `--semantic`; `read_it`, from a clean header, still makes `a` a read."""
    src = project / "kernels" / "jit" / "csrc"
    (src / "ffi.cuh").unlink()
    (src / "kernel.cuh").unlink()
    (src / "dev_bad.h").write_text(DEV_BAD_H)
    (src / "kernel_bad.cuh").write_text(KERNEL_BAD_CUH)
    semantic = check(project, "CU004", "--semantic")
    got = _findings(semantic)
    assert len(got) == 1 and "through `a`" in got[0][2], got
    assert "1 callee(s)" in semantic.stderr and "not judged" in semantic.stderr, semantic.stderr
