"""The C++ house conventions as configuration: `namespaces` / `third-party-namespaces`
(code-outside-sglang-namespace), `launch-wrappers` / `launch-check` (raw-kernel-launch) and
`primitives` / `drop-primitives` / `primitives-implementation` (raw-cuda-primitive)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from cli_support import run
from fixture_support import FIXTURES

from kernlint import jitscope
from kernlint.runner import lint_paths

JIT = 'jit-roots = ["**"]\n'


def _write(root, rel, text):
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def _lint(path, select, warnings=None):
    warn = (lambda m: warnings.append(m)) if warnings is not None else (lambda m: None)
    results = lint_paths([str(path)], select=list(select), preview=True, warn=warn)
    return [d for r in results for d in r.diagnostics]


def _found(path, select):
    return [(d.code, d.line, d.message) for d in _lint(path, select)]


def _same_as_default(tmp_path, fixture, select, keys):
    """The findings on a copy of a shipped fixture, without a setting and with `keys` set to
    SGLang's own values: they must be the same, messages included."""
    src = Path(FIXTURES) / fixture
    plain = tmp_path / "plain"
    explicit = tmp_path / "explicit"
    for root, config in ((plain, JIT), (explicit, JIT + keys)):
        _write(root, "kernlint.toml", config)
        shutil.copy(src, root / src.name)
    got = _found(plain / src.name, select)
    assert got, "the fixture reports nothing: the comparison would prove nothing"
    assert got == _found(explicit / src.name, select)


# -- namespaces, third-party-namespaces (CU002) ----------------------------------------------
GLOBAL = "struct Params {\n  int n;\n};\n"
VENDORED = "namespace tensorrt_llm::common {\nstruct Args {};\n}\n"
OWN = "namespace vllm {\nstruct Own {};\n}\n"


def test_sglang_namespaces_spelled_out_change_nothing(tmp_path):
    _same_as_default(
        tmp_path,
        "cpp/code-outside-sglang-namespace/bad.cuh",
        ["CU002"],
        'namespaces = ["sglang"]\n',
    )


def test_namespaces_name_the_house_namespace(tmp_path):
    _write(tmp_path, "kernlint.toml", JIT + 'namespaces = ["vllm"]\n')
    f = _write(tmp_path, "csrc/a.cuh", GLOBAL + OWN + "namespace sglang {\nstruct S {};\n}\n")
    assert _found(f, ["CU002"]) == [
        (
            "CU002",
            1,
            "struct `Params` is in the global namespace, not inside `namespace vllm`: enclose it "
            "in `namespace vllm { ... }`",
        ),
        (
            "CU002",
            8,
            "struct `S` is in namespace `sglang`, not inside `namespace vllm`: enclose it in "
            "`namespace vllm { ... }`",
        ),
    ]


def test_qualified_and_several_namespaces(tmp_path):
    _write(tmp_path, "kernlint.toml", JIT + 'namespaces = ["vllm", "::ext::kernels"]\n')
    f = _write(
        tmp_path,
        "a.cuh",
        OWN + "namespace ext::kernels::moe {\nstruct A {};\n}\nnamespace ext {\nstruct B {};\n}\n",
    )
    found = _found(f, ["CU002"])
    assert [(c, line) for c, line, _ in found] == [("CU002", 8)]
    assert "not inside `namespace vllm` or `namespace ext::kernels`" in found[0][2]


def test_third_party_namespaces_extend_the_builtin_list(tmp_path):
    f = _write(tmp_path, "a.cuh", VENDORED + "namespace std {\nstruct hash2 {};\n}\n")
    _write(tmp_path, "kernlint.toml", JIT)
    assert [(c, line) for c, line, _ in _found(f, ["CU002"])] == [("CU002", 2)]
    _write(tmp_path, "kernlint.toml", JIT + 'third-party-namespaces = ["tensorrt_llm"]\n')
    assert _found(f, ["CU002"]) == []  # (and `std` stays allowed)


def test_third_party_namespaces_also_exempt_launches(tmp_path):
    launch = "namespace tensorrt_llm {\nvoid f(cudaStream_t s) { k<<<1, 1, 0, s>>>(); }\n}\n"
    f = _write(tmp_path, "a.cu", launch)
    _write(tmp_path, "kernlint.toml", JIT)
    assert [(c, line) for c, line, _ in _found(f, ["CU006"])] == [("CU006", 2)]
    _write(tmp_path, "kernlint.toml", JIT + 'third-party-namespaces = ["tensorrt_llm"]\n')
    assert _found(f, ["CU006"]) == []


def test_empty_namespaces_turn_the_rule_off(tmp_path):
    _write(tmp_path, "kernlint.toml", JIT + "namespaces = []\n")
    f = _write(tmp_path, "a.cuh", GLOBAL)
    assert _found(f, ["CU002"]) == []


OLD_UTILS = "#pragma once\nnamespace host {\ninline void check(bool) {}\n}  // namespace host\n"


def test_sglang_headers_are_not_consulted_for_other_namespaces(tmp_path):
    """An older SGLang layout (its `include/sgl_kernel/utils.h` does not open `namespace
    sglang`) turns the SGLang convention off; a project's own namespaces stay in force."""
    _write(tmp_path, "include/sgl_kernel/utils.h", OLD_UTILS)
    f = _write(tmp_path, "csrc/a.cuh", GLOBAL)
    jitscope.reset()
    header = str(tmp_path / "include" / "sgl_kernel" / "utils.h")
    assert jitscope.namespace_convention(str(f)) == (False, header)
    assert jitscope.namespace_convention(str(f), ["sglang"]) == (False, header)
    assert jitscope.namespace_convention(str(f), ["vllm"]) == (True, None)
    assert jitscope.convention_fingerprint(str(f), ["vllm"]) == ""
    _write(tmp_path, "kernlint.toml", JIT)
    assert _found(f, ["CU002"]) == []
    _write(tmp_path, "kernlint.toml", JIT + 'namespaces = ["vllm"]\n')
    assert [(c, line) for c, line, _ in _found(f, ["CU002"])] == [("CU002", 1)]


# -- launch-wrappers, launch-check (CU006) ---------------------------------------------------
KERNEL = "__global__ void k(float* __restrict__ p) { p[0] = 0.0f; }\n"


def test_sglang_launch_wrapper_spelled_out_changes_nothing(tmp_path):
    _same_as_default(
        tmp_path,
        "cpp/raw-kernel-launch/bad.cu",
        ["CU006"],
        'launch-wrappers = ["host::LaunchKernel"]\n',
    )


def test_launch_wrappers_are_what_the_message_points_to(tmp_path):
    _write(
        tmp_path, "kernlint.toml", JIT + 'launch-wrappers = ["ops::launch", "ops::launch_pdl"]\n'
    )
    body = (
        KERNEL + "void f(float* p, cudaStream_t s, void** a) {\n  k<<<1, 1, 0, s>>>(p);\n"
        "  cudaLaunchKernel((const void*)k, dim3(1), dim3(1), a, 0, s);\n}\n"
        "#define L(p, s) k<<<1, 1, 0, s>>>(p)\n"
    )
    f = _write(tmp_path, "a.cu", body)
    assert _found(f, ["CU006"]) == [
        ("CU006", 3, "raw launch of `k`: use `ops::launch` or `ops::launch_pdl`"),
        ("CU006", 4, "`cudaLaunchKernel`: launch through `ops::launch` or `ops::launch_pdl`"),
        ("CU006", 6, "raw launch in the body of macro `L`: use `ops::launch` or `ops::launch_pdl`"),
    ]


def test_launch_check_alone_keeps_the_default_wrapper(tmp_path):
    _write(tmp_path, "kernlint.toml", JIT + 'launch-check = "cudaGetLastError"\n')
    body = (
        KERNEL + "cudaError_t f(float* p, cudaStream_t s) {\n  k<<<1, 1, 0, s>>>(p);\n"
        "  return cudaGetLastError();\n}\n"
        "cudaError_t g(float* p, cudaStream_t s) {\n  k<<<1, 1, 0, s>>>(p);\n  return cudaSuccess;\n}\n"
    )
    f = _write(tmp_path, "a.cu", body)
    assert _found(f, ["CU006"]) == [
        (
            "CU006",
            7,
            "raw launch of `k`: use `host::LaunchKernel(grid, block, device)(k, args...)`, or "
            "check it with `cudaGetLastError()` as the next statement",
        )
    ]


def test_launch_check_without_wrappers(tmp_path):
    """`launch-wrappers = []` with a check: the check must be the next statement (the shipped
    fixture fixtures/cpp/raw-kernel-launch/launch_check/ holds the statement forms)."""
    config = JIT + 'launch-wrappers = []\nlaunch-check = "C10_CUDA_KERNEL_LAUNCH_CHECK"\n'
    _write(tmp_path, "kernlint.toml", config)
    body = (
        KERNEL + "void f(float* p, cudaStream_t s) {\n  k<<<1, 1, 0, s>>>(p);\n"
        "  C10_CUDA_KERNEL_LAUNCH_CHECK();\n  k<<<2, 1, 0, s>>>(p);\n}\n"
    )
    f = _write(tmp_path, "a.cu", body)
    assert _found(f, ["CU006"]) == [
        (
            "CU006",
            5,
            "raw launch of `k` is not followed by a `C10_CUDA_KERNEL_LAUNCH_CHECK()` check: add "
            "one as the next statement",
        )
    ]
    # A qualified check matches its unqualified call (a `using` brings it in), and back.
    _write(tmp_path, "kernlint.toml", JIT + 'launch-wrappers = []\nlaunch-check = "c10::check"\n')
    f2 = _write(tmp_path, "b.cu", KERNEL + "void f(float* p) {\n  k<<<1, 1>>>(p);\n  check();\n}\n")
    assert _found(f2, ["CU006"]) == []


def test_no_wrapper_and_no_check_turns_the_rule_off(tmp_path):
    _write(tmp_path, "kernlint.toml", JIT + "launch-wrappers = []\n")
    f = _write(tmp_path, "a.cu", KERNEL + "void f(float* p) { k<<<1, 1>>>(p); }\n")
    assert _found(f, ["CU006"]) == []


def test_launch_wrapper_implementation_is_exempt(tmp_path):
    config = JIT + 'launch-wrappers = ["ops::launch"]\nprimitives-implementation = ["ops/**"]\n'
    _write(tmp_path, "kernlint.toml", config)
    launch = KERNEL + "void f(float* p) { k<<<1, 1>>>(p); }\n"
    inside = _write(tmp_path, "ops/launch.cuh", launch)
    outside = _write(tmp_path, "csrc/a.cu", launch)
    assert _found(inside, ["CU006"]) == []
    assert [(c, line) for c, line, _ in _found(outside, ["CU006"])] == [("CU006", 2)]
    # The default exemption (`include/sgl_kernel/`) is replaced, not kept.
    sgl = _write(tmp_path, "include/sgl_kernel/launch.cuh", launch)
    assert [(c, line) for c, line, _ in _found(sgl, ["CU006"])] == [("CU006", 2)]


# -- primitives, drop-primitives, primitives-implementation (CU007) --------------------------
def test_sglang_table_spelled_out_changes_nothing(tmp_path):
    _same_as_default(
        tmp_path,
        "cpp/raw-cuda-primitive/bad.cuh",
        ["CU007"],
        'drop-primitives = []\nprimitives-implementation = ["include/sgl_kernel/**"]\n',
    )


HOUSE = """[[primitives]]
name = "syncwarp"
pattern = '__syncwarp\\(\\)'
replacement = "cg::this_warp().sync()"
"""


def test_primitives_add_entries(tmp_path):
    _write(tmp_path, "kernlint.toml", JIT + HOUSE)
    # None of the shipped table's words is in this file: the rule runs for the entries anyway.
    body = (
        "__global__ void k(float* __restrict__ p) {\n  __syncwarp();\n"
        "  // __syncwarp() in a comment\n  p[0] = 1.0f;  /* é */ __syncwarp();\n}\n"
    )
    f = _write(tmp_path, "a.cu", body)
    found = _lint(f, ["CU007"])
    assert [(d.line, d.column, d.message) for d in found] == [
        (2, 3, "`__syncwarp()`: use `cg::this_warp().sync()`"),
        (4, 25, "`__syncwarp()`: use `cg::this_warp().sync()`"),
    ]
    assert f.read_bytes()[found[1].start : found[1].end] == b"__syncwarp()"


def test_primitive_message_placeholders(tmp_path):
    entry = (
        '[[primitives]]\nname = "exp"\npattern = "\\\\bexpf(?=\\\\()"\nreplacement = "math::exp"\n'
        'message = "{text} is slow here: call {replacement} ({replacement}); {other} stays"\n'
    )
    _write(tmp_path, "kernlint.toml", JIT + entry)
    f = _write(tmp_path, "a.cu", "__global__ void f(float* __restrict__ x) { *x = expf(*x); }\n")
    assert [d.message for d in _lint(f, ["CU007"])] == [
        "expf is slow here: call math::exp (math::exp); {other} stays"
    ]


def test_drop_primitives(tmp_path):
    shutil.copytree(Path(FIXTURES) / "cpp/raw-cuda-primitive/tree_new", tmp_path / "tree")
    f = tmp_path / "tree" / "csrc" / "primitives.cuh"
    _write(tmp_path, "kernlint.toml", JIT)
    every = _lint(f, ["CU007"])
    assert len({d.message.split(":")[0] for d in every}) > 2
    forceinline = [d for d in every if "__forceinline__" in d.message.split("`")[1]]
    assert forceinline
    _write(tmp_path, "kernlint.toml", JIT + 'drop-primitives = ["forceinline"]\n')
    assert _lint(f, ["CU007"]) == [d for d in every if d not in forceinline]
    _write(tmp_path, "kernlint.toml", JIT + 'drop-primitives = ["ALL"]\n')
    assert _lint(f, ["CU007"]) == []
    # `ALL` with `primitives`: the entries replace the table.
    _write(tmp_path, "kernlint.toml", JIT + 'drop-primitives = ["ALL"]\n' + HOUSE)
    g = _write(tmp_path, "tree/csrc/more.cuh", f.read_text() + "void h() { __syncwarp(); }\n")
    assert [d.message for d in _lint(g, ["CU007"])] == [
        "`__syncwarp()`: use `cg::this_warp().sync()`"
    ]


def test_primitives_implementation_replaces_the_exemption(tmp_path):
    config = JIT + 'primitives-implementation = ["csrc/compat/**", "*_impl.cuh"]\n' + HOUSE
    _write(tmp_path, "kernlint.toml", config)
    body = "__global__ void f() { __syncwarp(); }\n"
    exempt = [
        _write(tmp_path, "csrc/compat/warp.cuh", body),
        _write(tmp_path, "csrc/deep/warp_impl.cuh", body),
    ]
    checked = [
        _write(tmp_path, "csrc/warp.cuh", body),
        _write(tmp_path, "include/sgl_kernel/warp.cuh", body),
    ]
    assert [_lint(f, ["CU007"]) for f in exempt] == [[], []]
    assert [len(_lint(f, ["CU007"])) for f in checked] == [1, 1]


def test_primitives_implementation_is_relative_to_its_config(tmp_path):
    _write(tmp_path, "kernlint.toml", JIT + 'primitives-implementation = ["compat/**"]\n' + HOUSE)
    sub = tmp_path / "sub"
    _write(sub, "kernlint.toml", 'extend = "../kernlint.toml"\n')
    body = "__global__ void f() { __syncwarp(); }\n"
    assert _lint(_write(tmp_path, "compat/a.cuh", body), ["CU007"]) == []
    assert len(_lint(_write(sub, "compat/a.cuh", body), ["CU007"])) == 1


@pytest.mark.parametrize(
    "value,says",
    [
        ('["forceinlin"]', "`drop-primitives`: 'forceinlin' is not an entry of the table (known: "),
        ('["ALL", "x"]', "'x' is not an entry of the table"),
    ],
)
def test_unknown_drop_primitives(tmp_path, value, says):
    _write(tmp_path, "kernlint.toml", f"drop-primitives = {value}\n")
    _write(tmp_path, "a.cuh", "int x;\n")
    p = run("check", "--no-cache", "a.cuh", cwd=tmp_path)
    lines = p.stderr.strip().splitlines()
    assert p.returncode == 2 and len(lines) == 1, p.stderr
    assert "kernlint.toml" in lines[0] and says in lines[0] and "shfl-reduction" in lines[0]
    assert "Traceback" not in p.stderr


def test_launch_policy_reads_the_settings():
    from types import SimpleNamespace

    from kernlint_rules.cpp.raw_kernel_launch import Policy, launch_policy

    def policy(wrappers, check):
        return launch_policy(SimpleNamespace(launch_wrappers=wrappers, launch_check=check))

    assert policy(None, None) is None  # (SGLang's: the default code path)
    assert policy(None, "C") == Policy(("host::LaunchKernel",), ("C",))
    assert policy([], "C") == Policy((), ("C",))
    assert policy(["w"], None) == Policy(("w",), ())
    # (a list of checks, for a config that allows one: any of them checks a launch)
    assert policy([], ["A", "B"]) == Policy((), ("A", "B"))
