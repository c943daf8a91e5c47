"""`kernlint check --compile`: configuration, the instantiation sources, budgets, the build
cache, a missing toolchain, and the findings in the output formats (CUDA builds with pip's
nvcc; Triton in test_compile_triton.py, build directories in test_compile_build_dir.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

from kernlint.compile import budget_of
from kernlint.compile.run import instance_name
from kernlint.compile.toolchain import find_tool

NVCC = find_tool("nvcc")
needs_nvcc = pytest.mark.skipif(NVCC is None, reason="no nvcc (pip install 'kernlint[compile]')")

HEAVY = """\
  float v[{n}];
#pragma unroll
  for (int i = 0; i < {n}; ++i) v[i] = in[i * blockDim.x + threadIdx.x];
  float s = 0.0f;
#pragma unroll
  for (int i = 0; i < {n}; ++i)
#pragma unroll
    for (int j = 0; j < i; ++j) s += v[i] * v[j];
  out[threadIdx.x] = s;
"""


def plain_kernel(name: str, n: int, prefix: str = "") -> str:
    head = f"{prefix}__global__ void {name}(float* __restrict__ out, const float* __restrict__ in) {{\n"
    return head + HEAVY.format(n=n) + "}\n"


def template_file() -> str:
    return (
        "#pragma once\nnamespace sglang {\nusing fp32_t = float;\n"
        "template <typename T, int N>\n"
        "__global__ void pair_kernel(T* __restrict__ out, const T* __restrict__ in) {\n"
        + HEAVY.format(n="N").replace("float v", "T v").replace("float s = 0.0f", "T s = T(0)")
        + "}\n"
        "template <typename T, int N>\nstruct Pair {\n"
        "  static void run(T* out, const T* in) { pair_kernel<T, N><<<1, 128>>>(out, in); }\n"
        "};\n}  // namespace sglang\n"
    )


def kernlint(cwd, *args, env=None):
    environ = dict(os.environ)
    environ.update(env or {})
    return subprocess.run(
        [sys.executable, "-m", "kernlint", "check", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        env=environ,
        timeout=600,
    )


def write(root, rel: str, text: str):
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


# -- configuration ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "line,message",
    [
        ('compile = "yes"', "`compile` must be true or false"),
        ('compile-archs = ["sm90"]', "is not a CUDA architecture"),
        ("compile-archs = [90]", "`compile-archs` must be an array of strings"),
        ("register-budget = 0", "`register-budget` must be a number of registers from 1 to 255"),
        ("register-budget = 300", "from 1 to 255"),
        ("register-budget = true", "`register-budget` must be an integer"),
        (
            'per-file-register-budget = { "csrc/**" = "many" }',
            '`per-file-register-budget."csrc/**"` must be a number of registers',
        ),
        ('compile-instantiate = { "a.cuh" = [] }', "must be a non-empty array"),
        ('compile-instantiate = { "a.cuh" = [""] }', "item 1 is empty"),
        ('compile-instantiate = { "a.cuh" = [3] }', "must be a C++ symbol"),
        (
            'compile-instantiate = { "a.py" = [{ kernel = "k" }] }',
            "needs `kernel` and `signature`",
        ),
        (
            'compile-instantiate = { "a.py" = [{ kernel = "k", signature = {}, warps = 4 }] }',
            "unknown key `warps`",
        ),
        (
            'compile-instantiate = { "a.py" = [{ kernel = "k", signature = { X = 1 } }] }',
            "`signature.X` must be a type string",
        ),
    ],
)
def test_bad_config_values_name_the_file_and_key(tmp_path, line, message):
    write(tmp_path, "kernlint.toml", line + "\n")
    write(tmp_path, "a.cuh", "int x;\n")
    p = kernlint(tmp_path, "--no-cache", "a.cuh")
    assert p.returncode == 2, p.stdout + p.stderr
    assert "kernlint.toml" in p.stderr and message in p.stderr, p.stderr
    assert "Traceback" not in p.stderr


def test_good_config_values_are_accepted_and_compile_is_off_by_default(tmp_path):
    write(
        tmp_path,
        "kernlint.toml",
        'jit-roots = ["**"]\ncompile-archs = ["sm_90a", "sm_100"]\nregister-budget = 96\n'
        'per-file-register-budget = { "gemm/**" = 128 }\n'
        'compile-instantiate = { "a.cuh" = ["Pair<float, 8>::run"], '
        '"k.py" = [{ kernel = "k", signature = { X = "*fp32" }, num_warps = 4 }] }\n',
    )
    write(tmp_path, "a.cuh", "namespace sglang {\n" + plain_kernel("heavy", 96) + "}\n")
    p = kernlint(tmp_path, "--no-cache", "a.cuh")
    assert p.returncode == 0, p.stdout + p.stderr
    assert "compile:" not in p.stderr and "RB00" not in p.stdout  # (no `compile = true`)


# -- budgets -----------------------------------------------------------------------------------


class _Settings:
    def __init__(self, budget=64):
        self.budget = budget

    def register_budget_for(self, path):
        return self.budget, "register-budget"


@pytest.mark.parametrize(
    "text,budget,origin",
    [
        (b"__global__ void k(float* out) {}", 64, "`register-budget`"),
        (b"__global__ void __launch_bounds__(256, 2) k(float* out) {}", 128, "__launch_bounds__"),
        (b"__global__ void __launch_bounds__(512, 4) k(float* out) {}", 32, "__launch_bounds__"),
        (b"__global__ void __launch_bounds__(1024) k(float* out) {}", 64, "`register-budget`"),
        (b"__global__ void __launch_bounds__(128) k(float* out) {}", 64, "`register-budget`"),
        (b"__global__ void __launch_bounds__(128, 1) k(float* out) {}", 255, "__launch_bounds__"),
        (b"// kernlint: register-budget 96\n__global__ void k(float* out) {}", 96, "comment"),
        (
            b"// kernlint: register-budget 96\n// why: a compute-bound tile\n"
            b"__global__ void __launch_bounds__(256, 2) k(float* out) {}",
            96,
            "comment",
        ),
        # A comment above other code belongs to that code, not to the kernel.
        (
            b"// kernlint: register-budget 96\nint x;\n__global__ void k(float* out) {}",
            64,
            "`register",
        ),
    ],
)
def test_budget_sources(text, budget, origin):
    def_start = text.index(b"__global__")
    name_start = text.index(b" k(") + 1
    got, where = budget_of(_Settings(), "a.cuh", text, def_start, name_start)
    assert got == budget and origin in where


@pytest.mark.parametrize(
    "text,budget",
    [
        (
            b"constexpr int kThreads = 256;\n__global__ void __launch_bounds__(kThreads, 2) k(float* o) {}",
            128,
        ),
        (b"#define THREADS 512\n__global__ void __launch_bounds__(THREADS, 4) k(float* o) {}", 32),
        # A template parameter, an expression, a name the file does not define: not judged.
        (b"template <int T>\n__global__ void __launch_bounds__(T, 1) k(float* o) {}", None),
        (b"__global__ void __launch_bounds__(2 * 128) k(float* o) {}", None),
        (b"__global__ void __launch_bounds__(kElsewhere, 1) k(float* o) {}", None),
        # A macro where launch bounds would be: maybe them, not judged.
        (b"__global__ void SGL_LAUNCH_BOUNDS(256) k(float* o) {}", None),
        # An upper-case template parameter before `__global__` is no such macro.
        (b"template <int BLOCK_SIZE = 128>\n__global__ void k(float* o) {}", 64),
    ],
)
def test_launch_bounds_by_name_or_not_judged(text, budget):
    def_start = 0
    name_start = text.index(b" k(") + 1
    assert budget_of(_Settings(), "a.cuh", text, def_start, name_start)[0] == budget


def test_a_tighter_default_wins_over_loose_launch_bounds():
    text = b"__global__ void __launch_bounds__(128) k(float* out) {}"
    assert budget_of(_Settings(32), "a.cuh", text, 0, text.index(b" k(") + 1)[0] == 32
    text = b"__global__ void __launch_bounds__(1024) k(float* out) {}"
    assert budget_of(_Settings(96), "a.cuh", text, 0, text.index(b" k(") + 1)[0] == 64


@pytest.mark.parametrize(
    "demangled,shown",
    [
        ("void sglang::pair_kernel<float, 96>(float*, float const*)", "pair_kernel<float, 96>"),
        ("void ns::k<(anonymous namespace)::Op, 4>(int)", "ns::k<(anonymous namespace)::Op, 4>"),
        ("void sglang::plain(float*)", ""),
        ("_ZN6sglang5plainEPf", ""),
    ],
)
def test_instance_names(demangled, shown):
    assert instance_name(demangled) == shown


# -- builds ------------------------------------------------------------------------------------


@needs_nvcc
def test_missing_toolchain_is_one_note(tmp_path, monkeypatch):
    import kernlint.compile.toolchain as toolchain
    from kernlint.runner import lint_paths

    write(tmp_path, "kernlint.toml", 'jit-roots = ["**"]\ncompile = true\n')
    path = write(tmp_path, "a.cuh", "namespace sglang {\n" + plain_kernel("heavy", 96) + "}\n")
    monkeypatch.setattr(toolchain, "find_tool", lambda name: None)
    notes = []
    results = lint_paths([str(path)], select=["RB"], warn=notes.append)
    assert [d.code for r in results for d in r.diagnostics] == []
    missing = [n for n in notes if "not found" in n]
    assert len(missing) == 1 and "pip install 'kernlint[compile]'" in missing[0], notes


@needs_nvcc
def test_plain_kernels_cache_and_edits(tmp_path):
    write(tmp_path, "kernlint.toml", 'jit-roots = ["**"]\ncompile = true\n')
    write(tmp_path, "detail.cuh", "#pragma once\nconstexpr int kValues = 96;\n")
    kernel = write(
        tmp_path,
        "a.cuh",
        '#pragma once\n#include "detail.cuh"\nnamespace sglang {\n'
        + plain_kernel("heavy", "kValues")
        + "}  // namespace sglang\n",
    )
    cache = str(tmp_path / "cache")
    first = kernlint(tmp_path, "--cache-dir", cache, "--select", "RB", "a.cuh")
    assert first.returncode == 1, first.stderr
    assert "RB001" in first.stdout and "kernel `heavy` uses" in first.stdout
    assert "1 builds (1 of files as they are; 0 from the cache, 0 failed)" in first.stderr

    second = kernlint(tmp_path, "--cache-dir", cache, "--select", "RB", "a.cuh")
    assert "1 builds (1 of files as they are; 1 from the cache, 0 failed)" in second.stderr
    assert second.stdout == first.stdout

    # An included header changes: built again, and the finding follows it.
    write(tmp_path, "detail.cuh", "#pragma once\nconstexpr int kValues = 8;\n")
    third = kernlint(tmp_path, "--cache-dir", cache, "--select", "RB", "a.cuh")
    assert "1 builds (1 of files as they are; 0 from the cache, 0 failed)" in third.stderr
    assert "RB001" not in third.stdout
    assert kernel.exists()

    # `--no-cache` reads no entry either.
    fourth = kernlint(tmp_path, "--no-cache", "--select", "RB", "a.cuh")
    assert "1 builds (1 of files as they are; 0 from the cache, 0 failed)" in fourth.stderr


@needs_nvcc
def test_build_failure_is_a_note_naming_the_file(tmp_path):
    write(tmp_path, "kernlint.toml", 'jit-roots = ["**"]\ncompile = true\n')
    write(
        tmp_path,
        "a.cuh",
        "namespace sglang {\n__global__ void k(float* out) { out[0] = undeclared_name; }\n}\n",
    )
    p = kernlint(tmp_path, "--no-cache", "--select", "RB", "a.cuh")
    assert p.returncode == 0, p.stderr
    assert "a.cuh: `a.cuh` did not build for sm_90:" in p.stderr and "undeclared" in p.stderr
    assert "Traceback" not in p.stderr


@needs_nvcc
def test_config_instantiations_each_arch_and_json(tmp_path):
    write(
        tmp_path,
        "kernlint.toml",
        'jit-roots = ["**"]\ncompile = true\ncompile-archs = ["sm_90", "sm_100"]\n'
        '[compile-instantiate]\n"csrc/pair.cuh" = ["Pair<float, 96>::run", "Pair<float, 8>::run"]\n',
    )
    write(tmp_path, "csrc/pair.cuh", template_file())
    p = kernlint(tmp_path, "--no-cache", "--select", "RB001", "--output-format", "json", "csrc")
    assert p.returncode == 1, p.stderr
    found = json.loads(p.stdout)
    messages = sorted(d["message"] for d in found)
    assert len(found) == 2 and {d["code"] for d in found} == {"RB001"}
    for arch in ("sm_90", "sm_100"):
        assert any(
            f"as `pair_kernel<float, 96>` on {arch} (1 of 2 instantiations over)" in m
            for m in messages
        )
    assert {d["line"] for d in found} == {5}  # (the kernel's name, where it is defined)


@needs_nvcc
def test_load_jit_with_literal_template_arguments(tmp_path):
    jit = tmp_path / "pkg" / "kernels" / "jit"
    write(jit, "csrc/pair.cuh", template_file())
    (jit / "include").mkdir()
    write(tmp_path, "kernlint.toml", "compile = true\n")
    write(
        jit,
        "pair.py",
        textwrap.dedent(
            """\
            import torch

            from sglang.kernels.jit.utils import cache_once, load_jit, make_cpp_args


            @cache_once
            def _module():
                args = make_cpp_args(torch.float32, 96)
                return load_jit(
                    "pair", *args, cuda_files=["pair.cuh"], cuda_wrappers=[("run", f"Pair<{args}>::run")]
                )


            @cache_once
            def _module_for(dtype):
                args = make_cpp_args(dtype, 96)
                return load_jit(
                    "pair", *args, cuda_files=["pair.cuh"], cuda_wrappers=[("run", f"Pair<{args}>::run")]
                )
            """
        ),
    )
    p = kernlint(tmp_path, "--no-cache", "--select", "RB", "pkg")
    assert p.returncode == 1, p.stderr
    assert "pair.cuh:5:17: RB001" in p.stdout
    assert "as `pair_kernel<float, 96>` on sm_90" in p.stdout
    assert "1 `load_jit` calls with template arguments known only at run time" in p.stderr


@needs_nvcc
def test_compile_from_a_build_directory(tmp_path):
    # The checked tree holds the template; a build made elsewhere instantiated it.
    write(tmp_path, "kernlint.toml", 'jit-roots = ["src/**"]\ncompile = true\n')
    header = write(tmp_path, "src/pair.cuh", template_file())
    unit = write(
        tmp_path,
        "build/unit.cu",
        f'#include "{header}"\nnamespace sglang {{\nauto* instance = &Pair<float, 96>::run;\n}}\n',
    )
    out = tmp_path / "build" / "unit.cubin"
    subprocess.run(
        [NVCC, "-std=c++20", "-O3", "-cubin", "-arch=sm_90", str(unit), "-o", str(out)],
        check=True,
        capture_output=True,
        timeout=300,
    )
    if find_tool("cuobjdump") is None:
        pytest.skip("no cuobjdump (pip install nvidia-cuda-cuobjdump)")
    p = kernlint(tmp_path, "--no-cache", "--select", "RB", "--compile-from", "build", "src")
    assert p.returncode == 1, p.stderr
    assert "pair.cuh:5:17: RB001" in p.stdout, p.stdout + p.stderr
    assert "on sm_90" in p.stdout
    assert "build: 1 kernels read, 1 placed" in p.stderr


@needs_nvcc
def test_config_elsewhere_instantiates_through_star_star_globs(tmp_path):
    # A config kept outside the tree (`--config`): `**/` keys still name the tree's files.
    conf = write(
        tmp_path,
        "conf/kernlint.toml",
        'jit-roots = ["**"]\ncompile = true\n'
        '[compile-instantiate]\n"**/csrc/pair.cuh" = ["Pair<float, 96>::run"]\n'
        '"csrc/pair.cuh" = ["Pair<float, 8>::run"]\n',  # (relative: names conf/csrc/pair.cuh)
    )
    write(tmp_path, "tree/csrc/pair.cuh", template_file())
    p = kernlint(tmp_path / "tree", "--no-cache", "--select", "RB001", "--config", str(conf), ".")
    assert p.returncode == 1, p.stderr
    assert "as `pair_kernel<float, 96>` on sm_90;" in p.stdout  # (one build: the `**/` one)


TRITON_ROW = """\
import triton
import triton.language as tl


@triton.jit
def row_kernel(X, Y, N, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    m = offs < N
    x = tl.load(X + row * N + offs, mask=m, other=0.0)
    tl.store(Y + row * N + offs, x - tl.sum(x, axis=0) / N, mask=m)
"""


def test_triton_builds_are_cached_by_the_file_bytes(tmp_path, monkeypatch):
    pytest.importorskip("triton")
    import kernlint.compile as kc
    import kernlint.compile.triton as tr
    from kernlint.config import ConfigResolver, Overrides
    from kernlint.discovery import discover
    from kernlint.registry import load_registry

    write(
        tmp_path,
        "kernlint.toml",
        "compile = true\n[compile-instantiate]\n"
        '"k.py" = [{ kernel = "row_kernel", signature = { X = "*fp32", Y = "*fp32", N = "i32" }, '
        "constexprs = { BLOCK = 4096 }, num_warps = 1 }]\n",
    )
    source = write(tmp_path, "k.py", TRITON_ROW)
    cache = str(tmp_path / "cache")

    def measure():
        resolver = ConfigResolver(load_registry(), Overrides())
        candidates = list(discover([str(source)], resolver, warn=lambda m: None))
        kc.prepare(candidates, resolver, cache_dir=cache, warn=lambda m: None)
        return [
            (u.registers, u.instantiation) for p in kc.results_for(str(source)) for u in p.usages
        ]

    first = measure()
    assert first and first[0][0] > 64
    real = tr.compile_builds

    def no_build(*args, **kwargs):
        raise AssertionError("built again")

    monkeypatch.setattr(tr, "compile_builds", no_build)
    assert measure() == first  # (from the cache)
    source.write_text(TRITON_ROW.replace("x - tl.sum", "x * 2 - tl.sum"))
    with pytest.raises(AssertionError, match="built again"):
        measure()  # (the file changed: its builds are not taken from the cache)
    monkeypatch.setattr(tr, "compile_builds", real)
    assert measure()


@needs_nvcc
def test_findings_in_sarif_and_github_formats():
    import jsonschema

    fixtures = os.path.join(os.path.dirname(os.path.dirname(__file__)), "fixtures", "compile")
    target = os.path.join("register-spill", "spills.cuh")
    sarif = kernlint(fixtures, "--no-cache", "--select", "RB", "--output-format", "sarif", target)
    schema_path = os.path.join(os.path.dirname(__file__), "data", "sarif-schema-2.1.0.json")
    with open(schema_path, encoding="utf-8") as fh:
        schema = json.load(fh)
    log = json.loads(sarif.stdout)
    jsonschema.validate(log, schema)
    results = log["runs"][0]["results"]
    assert sorted(r["ruleId"] for r in results) == ["RB002", "RB002"]
    github = kernlint(fixtures, "--no-cache", "--select", "RB", "--output-format", "github", target)
    lines = github.stdout.splitlines()
    assert len(lines) == 2 and all(ln.startswith("::warning file=") for ln in lines)
    assert "title=RB002 register-spill::" in lines[0]


@needs_nvcc
def test_unreadable_launch_bounds_and_alternative_definitions(tmp_path):
    write(tmp_path, "kernlint.toml", 'jit-roots = ["**"]\ncompile = true\n')
    write(
        tmp_path,
        "a.cuh",
        "namespace sglang {\n"
        "template <int T>\n"
        "__global__ void __launch_bounds__(T, 1) bounded(float* __restrict__ out, "
        "const float* __restrict__ in) {\n" + HEAVY.format(n=96) + "}\n"
        "template <int T>\nvoid launch(float* o, const float* i) { bounded<T><<<1, T>>>(o, i); }\n"
        "#if defined(USE_TABLE_B)\n"
        "__global__ void pick(float* out, const int* idx) { out[0] = idx[0]; }\n"
        "#else\n"
        "__global__ void pick(float* out, const int* idx) {  // kernlint: the one built\n"
        "  float t[64];\n  for (int i = 0; i < 64; ++i) t[i] = i;\n"
        "  out[threadIdx.x] = t[idx[threadIdx.x] & 63];\n}\n"
        "#endif\n"
        "}  // namespace sglang\n",
    )
    write(
        tmp_path,
        "kernlint.toml",
        'jit-roots = ["**"]\ncompile = true\n[compile-instantiate]\n"a.cuh" = ["launch<128>"]\n',
    )
    p = kernlint(tmp_path, "--no-cache", "--select", "RB", "a.cuh")
    # `bounded` (106 registers) has launch bounds from a template parameter: not judged.
    assert "kernel `bounded`" not in p.stdout.replace("RB002", "")
    assert "1 kernels with launch bounds kernlint cannot read: registers not judged" in p.stderr
    # `pick`, defined twice under #if/#else in one file, is placed on its first definition.
    lines = (tmp_path / "a.cuh").read_text().splitlines()
    first = next(i for i, ln in enumerate(lines, 1) if ln.startswith("__global__ void pick"))
    assert f"a.cuh:{first}:17: RB002" in p.stdout and "kernel `pick` uses" in p.stdout
    assert "compile: nvcc " in p.stderr
