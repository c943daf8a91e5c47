"""`ffi-boundaries`: the FFI boundary kinds of ffi-non-fixed-width-int (CU005).

"tvm-ffi" is the default (unset: today's detection, kernlint.cpp.ffi.entry_points);
"torch-library" adds the functions `TORCH_LIBRARY*` blocks register, in the files of the run
(kernlint.cpp.registrations); "pybind11" bindings are not judged (pybind11 range-checks every
integer conversion)."""

from __future__ import annotations

import os

import pytest
from cli_support import run

from kernlint.cpp.registrations import function_ref, registered_in
from kernlint.runner import lint_paths

HEADER = "#include <cstdint>\n#include <torch/library.h>\n"
MARKERS_OFF = "jit-exempt-markers = false\n"  # (a TORCH_LIBRARY file is a torch extension)


def _tree(tmp_path, files: dict[str, str], config: str | None) -> str:
    for rel, text in files.items():
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    toml = 'jit-roots = ["**"]\n' + MARKERS_OFF + (config or "")
    (tmp_path / "kernlint.toml").write_text(toml)
    return str(tmp_path)


def _found(paths) -> list[tuple[str, int, str]]:
    results = lint_paths(list(paths), select=["CU005"], warn=lambda m: None)
    return sorted(
        (os.path.basename(r.path), d.line, d.message) for r in results for d in r.diagnostics
    )


TORCH = 'ffi-boundaries = ["torch-library"]\n'
DEFINITION = (
    HEADER + "void scale(at::Tensor& out, int n) {}\nvoid helper(at::Tensor& out, int n) {}\n"
)
REGISTRATION = HEADER + (
    'void scale(at::Tensor& out, int n);\nTORCH_LIBRARY(demo, m) {\n  m.def("scale(Tensor! out, '
    'int n) -> ()");\n  m.impl("scale", torch::kCUDA, &scale);\n}\n'
)


def test_cross_file_registration_makes_the_definition_an_entry_point(tmp_path):
    root = _tree(tmp_path, {"ops.cu": DEFINITION, "bindings.cpp": REGISTRATION}, TORCH)
    found = _found([root])
    assert [(f, line) for f, line, _ in found] == [("ops.cu", 3)]
    message = found[0][2]
    assert "`scale` is registered with PyTorch's dispatcher" in message
    assert "takes `n` as `int`" in message and message.endswith("use `int64_t`")


def test_a_definition_checked_without_its_registration_is_not_judged(tmp_path):
    root = _tree(tmp_path, {"ops.cu": DEFINITION, "bindings.cpp": REGISTRATION}, TORCH)
    assert _found([os.path.join(root, "ops.cu")]) == []
    # (the registration file itself declares but does not define `scale`)
    assert _found([os.path.join(root, "bindings.cpp")]) == []


def test_default_and_tvm_only_do_not_judge_registered_functions(tmp_path):
    files = {"ops.cu": DEFINITION, "bindings.cpp": REGISTRATION}
    assert _found([_tree(tmp_path / "a", files, None)]) == []
    assert _found([_tree(tmp_path / "b", files, 'ffi-boundaries = ["tvm-ffi"]\n')]) == []


TVM_FILE = (
    "#include <cstdint>\n#include <tvm/ffi/container/tensor.h>\n"
    "void run(tvm::ffi::TensorView out, long n) {}\n"
)


def test_tvm_ffi_is_on_by_default_and_off_when_not_named(tmp_path):
    default = _tree(tmp_path / "a", {"k.cuh": TVM_FILE}, None)
    assert [(f, line) for f, line, _ in _found([default])] == [("k.cuh", 3)]
    both = _tree(
        tmp_path / "b", {"k.cuh": TVM_FILE}, 'ffi-boundaries = ["tvm-ffi", "torch-library"]\n'
    )
    assert _found([both]) == _found([default])
    torch_only = _tree(tmp_path / "c", {"k.cuh": TVM_FILE}, TORCH)
    assert _found([torch_only]) == []


def test_pybind11_bindings_are_not_reported(tmp_path):
    text = HEADER + (
        "#include <pybind11/pybind11.h>\nint add(int a, long b) { return a + b; }\n"
        'PYBIND11_MODULE(demo, m) { m.def("add", &add); }\n'
    )
    root = _tree(tmp_path, {"ext.cpp": text}, 'ffi-boundaries = ["pybind11"]\n')
    assert _found([root]) == []
    # (the same function registered with the dispatcher is reported)
    torch = text + 'TORCH_LIBRARY(demo, m) { m.def("add(int a, int b) -> int", &add); }\n'
    root = _tree(
        tmp_path / "t", {"ext.cpp": torch}, 'ffi-boundaries = ["pybind11", "torch-library"]\n'
    )
    assert [line for _, line, _ in _found([root])] == [4, 4, 4]  # return, `a`, `b`


def test_internal_linkage_counts_only_for_the_file_own_registrations(tmp_path):
    definition = HEADER + (
        "static void hidden(at::Tensor& out, int n) {}\n"
        "namespace {\nvoid anon(at::Tensor& out, int n) {}\n}\n"
    )
    registration = HEADER + (
        "TORCH_LIBRARY_IMPL(demo, CUDA, m) {\n"
        '  m.impl("hidden", &hidden);\n  m.impl("anon", &anon);\n}\n'
    )
    root = _tree(tmp_path, {"ops.cu": definition, "bindings.cpp": registration}, TORCH)
    assert _found([root]) == []
    same_file = _tree(tmp_path / "s", {"ops.cu": definition + registration}, TORCH)
    assert [(f, line) for f, line, _ in _found([same_file])] == [("ops.cu", 3), ("ops.cu", 5)]


def test_namespaces_must_match(tmp_path):
    definition = HEADER + (
        "namespace vllm {\nvoid op(at::Tensor& out, int n) {}\n}\n"
        "namespace other {\nvoid op(at::Tensor& out, int n) {}\n}\n"
        "void op(at::Tensor& out, int n) {}\n"
    )
    registration = HEADER + 'TORCH_LIBRARY(demo, m) { m.impl("op", TORCH_BOX(&vllm::op)); }\n'
    root = _tree(tmp_path, {"ops.cu": definition, "bindings.cpp": registration}, TORCH)
    assert [(f, line) for f, line, _ in _found([root])] == [("ops.cu", 4)]


def test_types_judged_at_the_torch_boundary(tmp_path):
    text = HEADER + (
        "int64_t op(at::Tensor& out, int64_t a, bool b, double c, int32_t d, unsigned e,\n"
        "           long f, long long g, uint64_t h, ptrdiff_t i, const int64_t& j,\n"
        "           int* k, std::optional<int64_t> l) { return 0; }\n"
        'TORCH_LIBRARY(demo, m) { m.def("op", &op); }\n'
    )
    root = _tree(tmp_path, {"ops.cu": text}, TORCH)
    found = _found([root])
    names = [m.split("takes ")[1].split(" as ")[0] for _, _, m in found]
    assert names == ["`d`", "`e`", "`f`", "`g`", "`h`"]
    by_name = dict(zip(names, (m for _, _, m in found), strict=True))
    assert "32 bits on Windows" in by_name["`f`"]
    assert "not `int64_t` on LP64" in by_name["`g`"]
    assert "signed `int64_t`" in by_name["`h`"]


def test_unsafe_fix_changes_the_declarations_in_the_file(tmp_path):
    text = HEADER + (
        "void op(at::Tensor& out, int n);\nvoid op(at::Tensor& out, int n) {}\n"
        'TORCH_LIBRARY(demo, m) { m.def("op(Tensor! out, int n) -> ()", &op); }\n'
    )
    root = _tree(tmp_path, {"ops.cu": text}, TORCH)
    proc = run("check", "--select", "CU005", "--fix", "--unsafe-fixes", "--no-cache", root)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    fixed = (tmp_path / "ops.cu").read_text()
    assert fixed == text.replace("Tensor& out, int n)", "Tensor& out, int64_t n)")
    assert fixed.count("int64_t n") == 2


def test_results_cache_follows_the_registrations(tmp_path):
    root = _tree(tmp_path, {"ops.cu": DEFINITION, "bindings.cpp": REGISTRATION}, TORCH)
    cache = str(tmp_path / "cache")
    args = ("check", "--select", "CU005", "--output-format", "concise", "--cache-dir", cache, root)
    first = run(*args)
    assert first.returncode == 1 and "ops.cu:3:" in first.stdout
    # The registration goes: the definition's cached result must not be reused.
    (tmp_path / "bindings.cpp").write_text(HEADER + "void scale(at::Tensor& out, int n);\n")
    second = run(*args)
    assert second.returncode == 0, second.stdout
    (tmp_path / "bindings.cpp").write_text(REGISTRATION)
    third = run(*args)
    assert third.returncode == 1 and "ops.cu:3:" in third.stdout


def test_parallel_run_sees_registrations_of_other_files(tmp_path, monkeypatch):
    import kernlint.runner as runner

    if not runner._can_fork():
        pytest.skip("no fork")
    monkeypatch.setattr(runner, "PARALLEL_THRESHOLD", 4)
    monkeypatch.setattr(runner, "_jobs", lambda: 2)
    files = {f"ops{i}.cu": DEFINITION.replace("scale", f"scale{i}") for i in range(6)}
    impls = "".join(f'  m.impl("scale{i}", &scale{i});\n' for i in range(6))
    files["bindings.cpp"] = HEADER + "TORCH_LIBRARY(demo, m) {\n" + impls + "}\n"
    root = _tree(tmp_path, files, TORCH)
    assert [(f, line) for f, line, _ in _found([root])] == [(f"ops{i}.cu", 3) for i in range(6)]


def test_project_facts_state_carries_the_registrations(tmp_path):
    from kernlint.cpp import registrations
    from kernlint.runner import project_facts_state, restore_project_facts

    root = _tree(tmp_path, {"ops.cu": DEFINITION, "bindings.cpp": REGISTRATION}, TORCH)
    _found([root])
    saved = project_facts_state()
    assert "scale" in registrations.registered()
    registrations.set_registered(())
    restore_project_facts(saved)
    assert "scale" in registrations.registered()


def test_bad_value_names_the_file_and_key(tmp_path):
    (tmp_path / "k.cu").write_text("int x;\n")
    (tmp_path / "kernlint.toml").write_text('ffi-boundaries = ["torch"]\n')
    proc = run("check", str(tmp_path))
    assert proc.returncode == 2
    line = proc.stderr.strip().splitlines()[-1]
    assert "kernlint.toml" in line and "`ffi-boundaries`" in line and "'torch'" in line


# -- the registration scanner -------------------------------------------------------------


@pytest.mark.parametrize(
    "arg,want",
    [
        ("&fn", "fn"),
        (" & ns::fn ", "ns::fn"),
        ("fn", "fn"),
        ("TORCH_FN(fn)", "fn"),
        ("TORCH_BOX(&vllm::fn)", "vllm::fn"),
        ("torch::dispatch(c10::DispatchKey::CUDA, TORCH_FN(fn))", "fn"),
        ("static_cast<void (*)(at::Tensor&, int64_t)>(&fn)", "fn"),
        ("&fn<float, 4>", "fn"),
        ("(&fn)", "fn"),
        ("make_pytorch_shim(&fn)", None),  # (an adapter: the dispatcher sees other types)
        ("[](int64_t n) { return n; }", None),
        ("torch::kCUDA", None),
        ("", None),
    ],
)
def test_function_ref(arg, want):
    assert function_ref(arg) == want


def test_registered_in_reads_blocks_only():
    text = b"""
#define TORCH_LIBRARY_EXPAND(NAME, MODULE) TORCH_LIBRARY(NAME, MODULE)
void outside() { other.impl("x", &not_this); }
// TORCH_LIBRARY(ns, m) { m.impl("x", &in_comment); }
using namespace vllm;
TORCH_LIBRARY_EXPAND(TORCH_EXTENSION_NAME, ops) {
  ops.def("a(int x) -> int", &with_def);
  ops.def("b(Tensor x, int y, float z) -> ()");
  ops.impl("b", torch::kCUDA, &with_impl);
  m.impl("c", &other_variable);
  ops.impl("s", "&in_string");
#ifndef USE_ROCM
  ops.impl("d", TORCH_BOX(&under_if));
#endif
}
namespace machete {
STABLE_TORCH_LIBRARY_IMPL(_C, CUDA, m) { m.impl("mm", TORCH_BOX(&mm)); }
}  // namespace machete
"""
    assert registered_in(text) == {
        "with_def",
        "with_impl",
        "under_if",
        "vllm::with_def",
        "vllm::with_impl",
        "vllm::under_if",
        "machete::mm",
        "mm",
        "vllm::machete::mm",
        "vllm::mm",
    }


def test_registered_in_unbalanced_block_is_skipped():
    assert registered_in(b'TORCH_LIBRARY(ns, m) {\n  m.impl("x", &fn);\n') == set()
    assert registered_in(b'TORCH_LIBRARY(ns, m {\n  m.impl("x", &fn);\n}') == set()
