"""Semantic mode (libclang): types through headers, callee-aware constness, graceful failure.
Each behaviour uses small self-contained headers written here."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

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


# -- precompiled headers (kernlint.semantic.pch) ------------------------------------------------
SGL_TENSOR_H = """\
#pragma once
#include <cstdint>
namespace tvm::ffi {
struct TensorView {};
}  // namespace tvm::ffi
using index_t = int ;
__device__ float read_it(const float* p);
__device__ void write_it(float* p);
"""


def _pch_kernel(name: str) -> str:
    return f"""\
// {name}
#pragma once
#include <sgl_kernel/tensor.h>  // the shared first header
#include <cstddef>
namespace sglang {{
void run_{name}(tvm::ffi::TensorView x, index_t n, int64_t m, long k) {{}}
__global__ void k_{name}(float* __restrict__ a, float* __restrict__ b) {{
  b[0] = read_it(a);
  write_it(b);
}}
}}  // namespace sglang
"""


@pytest.fixture
def pch_tree(tmp_path):
    """An SGLang-like JIT tree: include/sgl_kernel/tensor.h, and kernels that start with it."""
    from kernlint.semantic import pch

    inc = tmp_path / "include" / "sgl_kernel"
    inc.mkdir(parents=True)
    (inc / "tensor.h").write_text(SGL_TENSOR_H)
    src = tmp_path / "kernels" / "jit" / "csrc"
    src.mkdir(parents=True)
    for name in ("a", "b", "c"):
        (src / f"{name}.cuh").write_text(_pch_kernel(name))
    _age(tmp_path)
    yield tmp_path
    pch.finish()


def _age(root) -> None:
    """Date every file under `root` an hour back (a PCH is not stored from files modified
    within seconds of its build: they may have changed while it read them)."""
    old = time.time() - 3600
    for path in root.rglob("*"):
        if path.is_file():
            os.utime(path, (old, old))


def _store(tmp_path, name="cache"):
    """What the pass needs of a `kernlint.cache.Cache`: its directory and key."""
    from types import SimpleNamespace

    return SimpleNamespace(directory=str(tmp_path / name), key=b"\x07" * 32)


def _signature(sem):
    """Everything the rules can ask of a SemanticFile: its problems, every parameter's integer
    verdict and every call's callee constness, by offset."""
    sem._index()
    params = {off: repr(sem.param_integer(off)) for off in sorted(sem._params)}
    calls = {off: [sem.callee_param_const(off, i) for i in range(3)] for off in sorted(sem._calls)}
    return sem.problems, params, calls, sorted(sem.unresolved_calls)


def _parse(paths, cache=None, plan=True):
    """One run's semantic parses of `paths` (planned as the runner plans them)."""
    from kernlint.semantic import SemanticFile, pch

    if plan:
        pch.prepare([(str(p), [], []) for p in paths], cache)
    try:
        return [SemanticFile(str(p), p.read_bytes()) for p in paths]
    finally:
        pch.finish()


def _files(tree):
    return sorted((tree / "kernels/jit/csrc").glob("*.cuh"))


def test_pch_is_shared_and_results_are_identical(pch_tree):
    files = _files(pch_tree)
    plain = _parse(files, plan=False)
    with_pch = _parse(files)
    assert all(s.pch is None for s in plain)
    assert with_pch[0].pch is not None and {s.pch for s in with_pch} == {with_pch[0].pch}
    assert [_signature(s) for s in with_pch] == [_signature(s) for s in plain]
    # (what the rules are built on is there: an alias of int, a const callee parameter)
    problems, params, calls, _ = _signature(with_pch[0])
    assert problems == [] and "('index_t', 'int32_t')" in params.values()
    assert [True, None, None] in calls.values() and [False, None, None] in calls.values()


def test_pch_is_reused_by_a_later_run(pch_tree, monkeypatch):
    from kernlint.semantic import pch

    files = _files(pch_tree)
    cache = _store(pch_tree)
    first = _parse(files, cache)
    stored = first[0].pch
    assert stored is not None and stored.startswith(cache.directory)
    inode = os.stat(stored).st_ino

    def no_build(node):
        raise AssertionError("rebuilt a stored PCH")

    monkeypatch.setattr(pch, "_build", no_build)
    again = _parse(files[:1], cache)  # (one changed file: a small run)
    assert again[0].pch == stored and os.stat(stored).st_ino == inode
    assert _signature(again[0]) == _signature(first[0])
    assert (pch_tree / "cache" / ".gitignore").read_text() == "*\n"


def _same_size_same_mtime(path, old: str, new: str) -> None:
    """Edit `path` keeping its size and mtime (what a stat-only check would miss)."""
    st = os.stat(path)
    text = path.read_text()
    assert len(old) == len(new) and old in text
    path.write_text(text.replace(old, new))
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))


def test_stale_pch_is_never_used_after_a_header_change(pch_tree):
    files = _files(pch_tree)
    cache = _store(pch_tree)
    stored = _parse(files, cache)[0].pch
    _same_size_same_mtime(pch_tree / "include/sgl_kernel/tensor.h", "= int ;", "= long;")
    after = _parse(files, cache)
    plain = _parse(files, plan=False)
    assert [_signature(s) for s in after] == [_signature(s) for s in plain]
    assert "('index_t', 'int64_t')" in _signature(after[0])[1].values()  # the new header's
    assert stored not in {s.pch for s in after}


def test_stale_pch_is_never_used_after_a_new_header_shadows_one(pch_tree):
    """A header created earlier on the search path than one the PCH read (here `<cstdint>`,
    in the SGLang include root) changes what a parse reads: the PCH is not used."""
    files = _files(pch_tree)
    cache = _store(pch_tree)
    stored = _parse(files, cache)[0].pch
    (pch_tree / "include" / "cstdint").write_text("#pragma once\ntypedef long int64_t;\n")
    _age(pch_tree)
    after = _parse(files, cache)
    plain = _parse(files, plan=False)
    assert [_signature(s) for s in after] == [_signature(s) for s in plain]
    assert stored not in {s.pch for s in after}


def test_file_directory_that_shadows_a_pch_header_gets_none(pch_tree):
    """The file's own directory is searched first in its parse, not in the PCH's: a
    `cstdint` there is what tensor.h's `#include <cstdint>` reads in that file's parse."""
    files = _files(pch_tree)
    cache = _store(pch_tree)
    before = _parse(files, cache)
    stored = before[0].pch
    (pch_tree / "kernels/jit/csrc/cstdint").write_text("#pragma once\nusing int64_t = int;\n")
    _age(pch_tree)
    with_pch = _parse(files, cache)
    plain = _parse(files, plan=False)
    assert stored is not None and stored not in {s.pch for s in with_pch}
    assert [_signature(s) for s in with_pch] == [_signature(s) for s in plain]
    assert _signature(plain[0]) != _signature(before[0])  # (the shadowing header is read)


def test_header_read_by_its_own_first_header_is_parsed_without_it(tmp_path):
    """y.h starts with x.h, which includes y.h: a PCH of x.h holds y.h, so y.h (linted itself)
    cannot use it (it gets the prelude's); the kernel that starts with x.h can."""
    from kernlint.semantic import pch

    inc = tmp_path / "include" / "sgl_kernel"
    inc.mkdir(parents=True)
    (inc / "x.h").write_text("#pragma once\n#include <sgl_kernel/y.h>\nusing x_t = int;\n")
    (inc / "y.h").write_text("#pragma once\n#include <sgl_kernel/x.h>\nusing y_t = long;\n")
    (tmp_path / "csrc").mkdir()
    kernel = tmp_path / "csrc" / "k.cuh"
    kernel.write_text("#include <sgl_kernel/x.h>\nvoid f(x_t a, y_t b) {}\n")
    _age(tmp_path)
    files = [inc / "y.h", kernel]
    try:
        with_pch = _parse(files, _store(tmp_path))
        plain = _parse(files, plan=False)
    finally:
        pch.finish()
    assert with_pch[1].pch is not None and with_pch[0].pch != with_pch[1].pch
    assert [_signature(s) for s in with_pch] == [_signature(s) for s in plain]


def test_pch_with_errors_is_not_used(pch_tree):
    header = pch_tree / "include/sgl_kernel/tensor.h"
    header.write_text(SGL_TENSOR_H + "unknown_t broken;\n")
    _age(pch_tree)
    files = _files(pch_tree)
    with_pch = _parse(files, _store(pch_tree))
    plain = _parse(files, plan=False)
    assert plain[0].problems  # (the header's error is reported by every file's parse)
    assert [_signature(s) for s in with_pch] == [_signature(s) for s in plain]
    used = {s.pch for s in with_pch} - {None}
    assert not any(str(header) in _pch_inputs(p) for p in used)  # (the prelude's, if any)
    manifests = [json.loads(p.read_text()) for p in (pch_tree / "cache/semantic").glob("*.json")]
    assert any(not json.loads(m["body"])["usable"] for m in manifests)


def _pch_inputs(path):
    """The input files a stored PCH's manifest lists."""
    key = os.path.basename(path).split("-")[0]
    outer = json.loads(open(os.path.join(os.path.dirname(path), key + ".json")).read())
    return {p for p, *_ in json.loads(outer["body"])["inputs"]}


def test_falls_back_when_no_pch_can_be_built_or_loaded(pch_tree, monkeypatch, capfd):
    from kernlint.semantic import pch

    files = _files(pch_tree)
    plain = _parse(files, plan=False)
    # The store cannot be created (the cache directory is a file).
    (pch_tree / "cache").write_text("not a directory")
    blocked = _parse(files, _store(pch_tree))
    assert all(s.pch is None for s in blocked)
    # The stored PCH is damaged: its digest no longer matches, it is built again.
    cache = _store(pch_tree, "cache2")
    stored = _parse(files, cache)[0].pch
    with open(stored, "r+b") as fh:
        fh.seek(4096)
        fh.write(b"\0" * 64)
    damaged = _digest(stored)
    rebuilt = _parse(files, cache)
    assert rebuilt[0].pch is not None and _digest(rebuilt[0].pch) != damaged
    # libclang cannot load the PCH it is given: each file is parsed without it.
    garbage = pch_tree / "garbage.pch"
    garbage.write_bytes(b"CPCH" + b"\0" * 1000)
    real = pch._use_args
    monkeypatch.setattr(pch, "_use_args", lambda args, path: real(args, str(garbage)))
    unloadable = _parse(files, _store(pch_tree, "cache3"))
    assert all(s.pch is None for s in unloadable)
    for got in (blocked, rebuilt, unloadable):
        assert [_signature(s) for s in got] == [_signature(s) for s in plain]
    out, err = capfd.readouterr()
    assert out == "" and err == ""


def _digest(path):
    import hashlib

    return hashlib.sha256(open(path, "rb").read()).hexdigest()


def test_cli_semantic_with_and_without_pch_agree_and_the_cache_keeps_it(pch_tree):
    (pch_tree / "kernlint.toml").write_text("")
    args = ("check", "kernels", "--semantic", "--select", "CU004,CU005", "--output-format", "json")
    env_off = {**os.environ, "KERNLINT_SEMANTIC_PCH": "0"}
    off = subprocess.run(
        [sys.executable, "-m", "kernlint", *args, "--no-cache"],
        cwd=pch_tree,
        capture_output=True,
        text=True,
        env=env_off,
        timeout=300,
    )
    on = run(*args, "--no-cache", cwd=pch_tree)
    assert on.stdout == off.stdout and on.stderr == off.stderr
    assert len(_findings(on)) >= 6  # (index_t and long per file, a read-only `a` per kernel)
    cached = run(*args, "--cache-dir", ".cache", cwd=pch_tree)
    assert cached.stdout == off.stdout and cached.stderr == off.stderr
    pchs = sorted((pch_tree / ".cache" / "semantic").glob("*.pch"))
    assert len(pchs) == 1
    inode = pchs[0].stat().st_ino
    edited = pch_tree / "kernels/jit/csrc/a.cuh"
    edited.write_text(edited.read_text().replace("long k", "long k2"))
    again = run(*args, "--cache-dir", ".cache", cwd=pch_tree)
    assert "k2" in again.stdout
    assert sorted((pch_tree / ".cache" / "semantic").glob("*.pch")) == pchs
    assert pchs[0].stat().st_ino == inode


def test_a_header_first_include_serves_the_files_that_reach_it(pch_tree, monkeypatch):
    """p.cuh and q.cuh start with a local header whose first include is tensor.h: they share
    tensor.h's PCH (read where local.cuh includes it, then skipped there: tensor.h has
    `#pragma once`). A header without a guard is not skipped: files that reach it through
    another header do not use its PCH; the files that start with it do."""
    from kernlint.semantic import pch

    monkeypatch.setattr(pch, "BUILD_BYTES", 0)  # (small headers: build whatever is shared)
    src = pch_tree / "kernels/jit/csrc"
    (src / "local.cuh").write_text(
        "// local\n#pragma once\n#include <sgl_kernel/tensor.h>\nusing local_t = long;\n"
    )
    guardless = pch_tree / "include/sgl_kernel/noguard.h"
    guardless.write_text("#include <cstdint>\nusing noguard_t = int;\n")
    (src / "local2.cuh").write_text("#include <sgl_kernel/noguard.h>\n")
    for name, first in (("p", '"local.cuh"'), ("q", '"local.cuh"')):
        (src / f"{name}.cuh").write_text(
            f"#include {first}\nvoid ffi_{name}(tvm::ffi::TensorView x, local_t n) {{}}\n"
        )
    for name, first in (("r", '"local2.cuh"'), ("s", '"local2.cuh"')):
        (src / f"{name}.cuh").write_text(f"#include {first}\nvoid g_{name}(noguard_t n) {{}}\n")
    for name in ("t", "u"):
        (src / f"{name}.cuh").write_text(
            f"#include <sgl_kernel/noguard.h>\nvoid h_{name}(noguard_t n) {{}}\n"
        )
    _age(pch_tree)
    files = _files(pch_tree)
    with_pch = dict(zip([f.name for f in files], _parse(files), strict=True))
    plain = _parse(files, plan=False)
    assert [_signature(s) for s in with_pch.values()] == [_signature(s) for s in plain]
    shared = with_pch["a.cuh"].pch
    assert shared is not None and with_pch["p.cuh"].pch == with_pch["q.cuh"].pch == shared
    assert with_pch["t.cuh"].pch is not None and with_pch["t.cuh"].pch == with_pch["u.cuh"].pch
    assert with_pch["t.cuh"].pch not in {with_pch["r.cuh"].pch, with_pch["s.cuh"].pch}
    assert "('local_t', 'int64_t')" in _signature(with_pch["p.cuh"])[1].values()


def test_conditionals_before_the_first_include(pch_tree):
    """`#ifndef USE_ROCM / #error / #endif` before the first include (SGLang's HIP kernels):
    the PCH is used where its headers define none of the names tested, and the `#error` is
    reported as without it; a name the PCH's headers define keeps the file off that PCH."""
    header = pch_tree / "include/sgl_kernel/tensor.h"
    header.write_text(SGL_TENSOR_H + "#define SGL_TENSOR_READY 1\n")
    src = pch_tree / "kernels/jit/csrc"
    (src / "hip.cuh").write_text(
        '#pragma once\n#ifndef USE_ROCM\n#error "HIP only"\n#endif\n'
        "#include <sgl_kernel/tensor.h>\nvoid run_hip(tvm::ffi::TensorView x, index_t n) {}\n"
    )
    (src / "ready.cuh").write_text(
        "#if defined(SGL_TENSOR_READY)\n#error ready too early\n#endif\n"
        "#include <sgl_kernel/tensor.h>\nvoid run_ready(tvm::ffi::TensorView x) {}\n"
    )
    _age(pch_tree)
    files = _files(pch_tree)
    with_pch = dict(zip([f.name for f in files], _parse(files, _store(pch_tree)), strict=True))
    plain = _parse(files, plan=False)
    assert [_signature(s) for s in with_pch.values()] == [_signature(s) for s in plain]
    assert with_pch["hip.cuh"].pch == with_pch["a.cuh"].pch is not None
    assert with_pch["hip.cuh"].problems == ['"HIP only"']
    assert with_pch["ready.cuh"].pch != with_pch["a.cuh"].pch
    assert with_pch["ready.cuh"].problems == []  # (defined only after the check, as without)


def test_lead_reads_what_a_file_starts_with(tmp_path):
    from kernlint.semantic.pch import lead

    (tmp_path / "here.h").write_text("")
    cases = {
        b"// c\n/* d */\n#pragma once\n#include <a/b.h>  // why\n": ("<a/b.h>", set()),
        b'#include "here.h"\n': (f'"{tmp_path}/here.h"', set()),
        b'#include "elsewhere.h"\n': ("<elsewhere.h>", set()),
        b"#ifndef USE_ROCM\n#error no\n#endif\n#include <x.h>\n": ("<x.h>", {"USE_ROCM"}),
        b"#if A && defined(B)\n#elif C\n#else\n#endif\n#include <x.h>\n": (
            "<x.h>",
            {"A", "B", "C"},
        ),
    }
    for data, (operand, macros) in cases.items():
        found = lead(data, str(tmp_path))
        assert (found.operand, set(found.macros)) == (operand, macros), data
        assert data[found.start : found.end].startswith(b"#include")
    for data in (
        b"#define X 1\n#include <x.h>\n",  # (a definition before the include)
        b"#ifndef G\n#define G\n#include <x.h>\n#endif\n",  # (inside a conditional)
        b"int x;\n#include <x.h>\n",
        b"#include MACRO\n",
        b"#if __COUNTER__\n#endif\n#include <x.h>\n",
        b"// continued \\\n#include <x.h>\n",
    ):
        assert lead(data, str(tmp_path)) is None, data
    assert lead(b"#ifndef A\n#endif\n#include <x.h>\n", str(tmp_path), conditionals=False) is None


def test_pch_is_not_stored_from_a_header_modified_during_its_build(pch_tree):
    """A header modified within seconds of the build (maybe while libclang read it): its PCH
    is not stored; the files are parsed without it."""
    header = pch_tree / "include/sgl_kernel/tensor.h"
    header.write_text(header.read_text())
    files = _files(pch_tree)
    with_pch = _parse(files, _store(pch_tree))
    plain = _parse(files, plan=False)
    assert not any(s.pch and str(header) in _pch_inputs(s.pch) for s in with_pch)
    assert not list((pch_tree / "cache/semantic").glob("*.pch")) or all(
        str(header) not in _pch_inputs(p) for p in (pch_tree / "cache/semantic").glob("*.pch")
    )
    assert [_signature(s) for s in with_pch] == [_signature(s) for s in plain]
