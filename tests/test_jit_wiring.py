"""`load_jit` against the C++ files it names (jit-source-not-found, jit-wrapper-not-found,
jit-wrapper-namespace-prefix): the JIT root found from the checked file or the config, and a
warm cached run that follows edits of the C++ files a Python file's findings depend on."""

from __future__ import annotations

import json
import os

import pytest
from cli_support import write_old as _write

from kernlint.cli import main

SELECT = "PY008,PY009,PY010"

PY = (
    "from sglang.kernels.jit.utils import cache_once, load_jit\n\n\n"
    "@cache_once\ndef _module():\n    return load_jit(\n"
    '        "scale",\n        cuda_files=["elementwise/scale.cuh"],\n'
    '        cuda_wrappers=[("scale", "ScaleKernel::run"), ("helper", "scale_helper")],\n'
    "    )\n"
)
CUH = (
    '#pragma once\n#include "common.cuh"\n\nnamespace sglang {\n'
    "struct ScaleKernel {\n  static void run(const float* __restrict__ x, int n);\n};\n"
    "}  // namespace sglang\n"
)
COMMON = "#pragma once\nnamespace sglang {\nvoid scale_helper(int n);\n}  // namespace sglang\n"


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
        args = ["check", *(paths or ["repo"]), "--select", SELECT, "--output-format", "json"]
        args += ["--cache-dir", str(tmp_path / "cache")] if cache else ["--no-cache"]
        rc = main(args)
        out, err = capsys.readouterr()
        assert rc in (0, 1) and "Traceback" not in err, err
        return sorted((d["code"], d["message"]) for d in json.loads(out))

    class T:
        pass

    t = T()
    t.jit, t.py, t.check = jit, py, check
    return t


def _same_as_uncached(t, *paths):
    warm = t.check(*paths)
    assert warm == t.check(*paths, cache=False)
    return warm


def test_warm_run_follows_edits_of_the_named_file(tree):
    assert _same_as_uncached(tree) == []
    assert tree.check() == []  # (warm)
    cuh = tree.jit / "csrc" / "elementwise" / "scale.cuh"
    _write(cuh, CUH.replace("static void run(", "static void launch("), 2)
    found = _same_as_uncached(tree)
    assert [c for c, _ in found] == ["PY009"]
    assert "`run` in `ScaleKernel`" in found[0][1]
    assert found[0][1].endswith(
        ": fix the symbol, or add the file that declares it to `cuda_files`"
    )
    _write(cuh, CUH, 3)
    assert _same_as_uncached(tree) == []


def test_warm_run_follows_deleting_and_creating_the_named_file(tree):
    assert tree.check() == []
    cuh = tree.jit / "csrc" / "elementwise" / "scale.cuh"
    cuh.unlink()
    found = _same_as_uncached(tree)
    assert [c for c, _ in found] == ["PY008"]  # (and PY009 is silent: the file is missing)
    _write(cuh, CUH, 4)
    assert _same_as_uncached(tree) == []


def test_warm_run_follows_edits_of_an_included_header(tree):
    assert tree.check() == []
    common = tree.jit / "csrc" / "elementwise" / "common.cuh"
    _write(common, COMMON.replace("scale_helper", "scale_helper2"), 5)
    found = _same_as_uncached(tree)
    assert [c for c, _ in found] == ["PY009"] and "`scale_helper`" in found[0][1]


def test_an_edit_within_the_same_mtime_tick_is_seen(tree):
    """A dependency modified just now is keyed by its bytes: a same-size edit that keeps the
    mtime (a coarse clock) still recomputes the Python file's result."""
    cuh = tree.jit / "csrc" / "elementwise" / "scale.cuh"
    cuh.write_text(CUH, encoding="utf-8")  # (mtime: now)
    st = os.stat(cuh)
    assert tree.check() == []
    cuh.write_text(CUH.replace("run(", "rnu("), encoding="utf-8")  # same size
    os.utime(cuh, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert [c for c, _ in tree.check()] == ["PY009"]


def test_one_python_file_alone_reads_the_cpp_from_disk(tree):
    """Pre-commit with one changed Python file: the loader's own resolution, not a guess."""
    _write(tree.py, PY.replace("ScaleKernel::run", "ScaleKernel::rnu"), 6)
    found = _same_as_uncached(tree, str(tree.py))
    assert [c for c, _ in found] == ["PY009"]


def test_jit_source_root_setting(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.chdir(tmp_path)
    # A JIT tree that no search from the Python file finds.
    root = tmp_path / "third" / "kernel_tree"
    (root / "include").mkdir(parents=True)
    _write(root / "csrc" / "elementwise" / "scale.cuh", CUH, 1)
    _write(root / "csrc" / "elementwise" / "common.cuh", COMMON, 1)
    _write(tmp_path / "pkg" / "ops.py", PY.replace("scale.cuh", "scael.cuh"), 1)

    def codes():
        capsys.readouterr()
        rc = main(["check", "pkg", "--no-cache", "--select", SELECT, "--output-format", "json"])
        out, err = capsys.readouterr()
        assert rc in (0, 1), err
        return [d["code"] for d in json.loads(out)]

    assert codes() == []  # (no root found: silent, never guessed)
    (tmp_path / "kernlint.toml").write_text('jit-source-root = "third/kernel_tree"\n')
    assert codes() == ["PY008"]
    (tmp_path / "kernlint.toml").write_text('jit-source-root = ""\n')
    capsys.readouterr()
    assert main(["check", "pkg", "--no-cache", "--select", SELECT]) == 2
    err = capsys.readouterr().err
    assert "jit-source-root" in err and "kernlint.toml" in err and "Traceback" not in err


def test_warm_run_follows_look_alikes_of_a_missing_file_and_the_folder_shown(tree, monkeypatch):
    # jit-source-not-found names the JIT sources folder as seen from the working directory and
    # the files of the same name elsewhere under it: both are part of the file's cache key.
    (tree.jit / "csrc" / "elementwise" / "scale.cuh").unlink()
    _write(tree.jit / "csrc" / "other" / "scale.cuh", CUH, 1)
    found = _same_as_uncached(tree)
    assert [c for c, _ in found] == ["PY008"] and "`other/scale.cuh`?" in found[0][1]
    _write(tree.jit / "csrc" / "third" / "scale.cuh", CUH, 2)
    found = _same_as_uncached(tree)
    assert "`other/scale.cuh` or `third/scale.cuh`?" in found[0][1]
    monkeypatch.chdir(tree.jit.parents[3])  # (from inside `repo`)
    found = _same_as_uncached(tree, ".")
    assert "(`python/sglang/kernels/jit/csrc`)" in found[0][1]


def test_warm_run_follows_a_named_file_made_unreadable(tree):
    # (as root every file reads: the key's part is checked directly, by the file's mode)
    from kernlint import jit_wiring

    def key():
        jit_wiring.reset()  # (a new run: the stats memoized for a second are forgotten)
        return jit_wiring.dependency_key(str(tree.py), None)

    cuh = tree.jit / "csrc" / "elementwise" / "scale.cuh"
    before = key()
    mode = os.stat(cuh).st_mode
    os.chmod(cuh, 0)
    try:
        assert key() != before
    finally:
        os.chmod(cuh, mode)
    assert key() == before
