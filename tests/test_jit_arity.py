"""jit-wrapper-arity-mismatch: a warm cached run follows edits of the C++ files a Python
file's export calls are checked against (the named file and the JIT headers it includes)."""

from __future__ import annotations

import json

import pytest
from cli_support import write_old as _write

from kernlint.cli import main

PY = (
    "from sglang.kernels.jit.utils import cache_once, load_jit\n\n\n"
    "@cache_once\ndef _module():\n    return load_jit(\n"
    '        "scale",\n        cuda_files=["elementwise/scale.cuh"],\n'
    '        cuda_wrappers=[("scale", "ScaleKernel::run"), ("helper", "scale_helper")],\n'
    "    )\n\n\n"
    "def scale(out, src, n):\n"
    "    _module().scale(out, src, n)\n"
    "    m = _module()\n"
    "    m.helper(n)\n"
)
CUH = (
    '#pragma once\n#include "common.cuh"\n\nnamespace sglang {\n'
    "struct ScaleKernel {\n  static void run(tvm::ffi::TensorView out, tvm::ffi::TensorView src,"
    " int64_t n);\n};\n}  // namespace sglang\n"
)
COMMON = "#pragma once\nnamespace sglang {\nvoid scale_helper(int64_t n);\n}  // namespace sglang\n"


@pytest.fixture
def tree(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.chdir(tmp_path)
    jit = tmp_path / "repo" / "python" / "sglang" / "kernels" / "jit"
    (jit / "include").mkdir(parents=True)
    _write(jit / "csrc" / "elementwise" / "scale.cuh", CUH, 1)
    _write(jit / "csrc" / "elementwise" / "common.cuh", COMMON, 1)
    py = tmp_path / "repo" / "python" / "sglang" / "kernels" / "ops" / "scale.py"
    _write(py, PY, 1)

    def check(*paths, cache=True):
        capsys.readouterr()
        args = ["check", *(paths or ["repo"]), "--select", "PY019", "--preview"]
        args += ["--output-format", "json"]
        args += ["--cache-dir", str(tmp_path / "cache")] if cache else ["--no-cache"]
        rc = main(args)
        out, err = capsys.readouterr()
        assert rc in (0, 1) and "Traceback" not in err, err
        return sorted((d["line"], d["message"]) for d in json.loads(out))

    class T:
        pass

    t = T()
    t.jit, t.py, t.check = jit, py, check
    return t


def _same_as_uncached(t, *paths):
    warm = t.check(*paths)
    assert warm == t.check(*paths, cache=False)
    return warm


def test_warm_run_follows_a_parameter_added_in_the_named_file(tree):
    assert _same_as_uncached(tree) == []
    assert tree.check() == []  # (warm)
    cuh = tree.jit / "csrc" / "elementwise" / "scale.cuh"
    _write(cuh, CUH.replace("int64_t n);", "int64_t n, double eps);"), 2)
    found = _same_as_uncached(tree)
    assert len(found) == 1 and found[0][0] == 14
    assert "called with 3 arguments" in found[0][1] and "takes 4 parameters" in found[0][1]
    assert "csrc/elementwise/scale.cuh:6" in found[0][1]
    assert found[0][1].endswith("the call is a TypeError; pass 4 arguments")
    _write(cuh, CUH, 3)
    assert _same_as_uncached(tree) == []


def test_warm_run_follows_edits_of_an_included_header(tree):
    assert tree.check() == []
    common = tree.jit / "csrc" / "elementwise" / "common.cuh"
    _write(common, COMMON.replace("(int64_t n)", "(void)"), 4)
    found = _same_as_uncached(tree)
    assert [row for row, _ in found] == [16]
    assert "takes 0 parameters" in found[0][1] and "common.cuh:3" in found[0][1]
    assert found[0][1].endswith("; call it without arguments")


def test_a_default_argument_does_not_make_the_call_valid(tree):
    """TVM-FFI calls the exported function through its type, which has no defaults."""
    cuh = tree.jit / "csrc" / "elementwise" / "scale.cuh"
    _write(cuh, CUH.replace("int64_t n);", "int64_t n, double eps = 1e-6);"), 5)
    found = _same_as_uncached(tree)
    assert len(found) == 1 and "1 with defaults, which TVM-FFI does not apply" in found[0][1]


def test_an_overload_added_silences_the_rule(tree):
    common = tree.jit / "csrc" / "elementwise" / "common.cuh"
    overloads = COMMON.replace(
        "void scale_helper(int64_t n);", "void scale_helper(int64_t n);\nvoid scale_helper();"
    )
    _write(common, overloads, 6)
    assert _same_as_uncached(tree) == []
    _write(tree.py, PY.replace("m.helper(n)", "m.helper(n, n)"), 7)
    assert _same_as_uncached(tree) == []  # (two parameter counts: not known which)
    _write(common, COMMON, 8)
    assert [row for row, _ in _same_as_uncached(tree)] == [16]


def test_one_python_file_alone_reads_the_cpp_from_disk(tree):
    """Pre-commit with one changed Python file: the C++ is read where the loader finds it."""
    _write(tree.py, PY.replace("scale(out, src, n)\n", "scale(out, src)\n"), 9)
    found = _same_as_uncached(tree, str(tree.py))
    assert [row for row, _ in found] == [14]
