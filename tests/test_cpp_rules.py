"""C++/CUDA rules end to end: cross-file FFI targets, the cache, unsafe fixes from the CLI."""

from __future__ import annotations

import json

import pytest
from cli_support import run

from kernlint.runner import DEFER_WRAPPER_SCAN

PROBE_PY = """\
from sglang.jit_kernel.utils import cache_once, load_jit


@cache_once
def _module(dtype):
    args = make_cpp_args(dtype)
    return load_jit(
        "probe",
        *args,
        cuda_files=["probe.cuh"],
        cuda_wrappers=[("fits", f"&sglang::ProbeKernel<{args}>::fits")],
    )
"""

PROBE_CUH = """\
#pragma once
#include <cstdint>

namespace sglang {
template <typename T>
struct ProbeKernel {
  static int fits(int64_t n) { return n > 0; }
  static int other(int n) { return n; }
};
}  // namespace sglang
"""

READ_ONLY_CUH = """\
#pragma once
#include <cstdint>

namespace sglang {
__global__ void add_kernel(float* __restrict__ out, float* __restrict__ a, int32_t n) {
  if (threadIdx.x < n) out[threadIdx.x] += a[threadIdx.x];
}
}  // namespace sglang
"""


def _tree(tmp_path):
    ops = tmp_path / "python" / "ops"
    ops.mkdir(parents=True)
    (ops / "probe.py").write_text(PROBE_PY)
    csrc = tmp_path / "python" / "kernels" / "jit" / "csrc"
    csrc.mkdir(parents=True)
    (csrc / "probe.cuh").write_text(PROBE_CUH)
    return tmp_path / "python", csrc / "probe.cuh"


def _findings(proc):
    return [(f["code"], f["line"], f["message"]) for f in json.loads(proc.stdout)]


def test_ffi_target_named_in_python_is_a_boundary(tmp_path):
    root, cuh = _tree(tmp_path)
    both = run("check", str(root), "--select", "CU005", "--output-format", "json", "--no-cache")
    assert both.returncode == 1, both.stderr
    got = _findings(both)
    assert [(c, r) for c, r, _ in got] == [("CU005", 7)]
    assert "`fits` returns `int`" in got[0][2]
    # The C++ file alone: `fits` has no TensorView and no export macro, so it is not a boundary.
    alone = run("check", str(cuh), "--select", "CU005", "--output-format", "json", "--no-cache")
    assert alone.returncode == 0, alone.stdout + alone.stderr
    assert _findings(alone) == []


@pytest.mark.parametrize("python_files", [60, DEFER_WRAPPER_SCAN + 5])
def test_ffi_targets_gathered_by_parallel_workers(tmp_path, python_files):
    """Enough files for the process pool. Without a cache, a few Python files are scanned for
    targets before the pool starts; many are scanned by the workers while they lint them, and
    the targets handed to the C++ files after. Same findings as with a cache (targets gathered
    first)."""
    root, cuh = _tree(tmp_path)
    ops = root / "ops"
    for i in range(python_files):
        (ops / f"filler_{i}.py").write_text(f"VALUE_{i} = {i}\n")
    for i in range(60):
        (cuh.parent / f"filler_{i}.cuh").write_text(
            f"#pragma once\nnamespace sglang {{\ninline int f{i}() {{ return {i}; }}\n}}\n"
        )
    args = ("check", str(root), "--select", "CU005", "--output-format", "json")
    cold = run(*args, "--no-cache")
    cached = run(*args, "--cache-dir", str(tmp_path / "cache"))
    got = _findings(cold)
    assert [(c, r) for c, r, _ in got] == [("CU005", 7)]
    assert "`fits` returns `int`" in got[0][2]
    assert _findings(cached) == got


def test_cached_results_follow_the_python_targets(tmp_path):
    root, cuh = _tree(tmp_path)
    cache = str(tmp_path / "cache")
    args = ["--select", "CU005", "--output-format", "json", "--cache-dir", cache]
    first = run("check", str(root), *args)
    assert len(_findings(first)) == 1
    # Same C++ bytes, but the Python file is gone: the cached finding must not be replayed.
    (root / "ops" / "probe.py").unlink()
    second = run("check", str(root), *args)
    assert _findings(second) == [], second.stdout


def test_unsafe_const_fix_needs_the_flag(tmp_path):
    d = tmp_path / "kernels" / "jit" / "csrc"
    d.mkdir(parents=True)
    f = d / "add.cuh"
    f.write_text(READ_ONLY_CUH)
    plain = run("check", str(f), "--select", "CU004", "--fix", "--no-cache")
    assert plain.returncode == 1
    assert f.read_text() == READ_ONLY_CUH
    assert "--unsafe-fixes" in plain.stdout + plain.stderr
    fixed = run("check", str(f), "--select", "CU004", "--fix", "--unsafe-fixes", "--no-cache")
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr
    assert "const float* __restrict__ a" in f.read_text()
    assert f.read_text().replace("const float* __restrict__ a", "float* __restrict__ a") == (
        READ_ONLY_CUH
    )
