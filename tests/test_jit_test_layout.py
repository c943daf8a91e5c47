"""jit-test-misplaced (PY020): where a registered JIT kernel test or benchmark sits against the
group of the wrappers it imports, read from the checked repository; a warm cached run follows
edits of those wrapper modules; the registered-tests root follows the config."""

from __future__ import annotations

import json
import os

import pytest
from cli_support import write_old as _write

from kernlint.ci_layout import registered_root
from kernlint.cli import main

WRAPPER = (
    "from sglang.kernels.jit.utils import cache_once, load_jit\n\n\n"
    "@cache_once\ndef _module():\n"
    '    return load_jit("scale", cuda_files=["elementwise/scale.cuh"])\n\n\n'
    "def scale(x, f):\n    return _module().scale(x, f)\n"
)
PLAIN = "def scale(x, f):\n    return x * f\n"
TEST = (
    "from sglang.kernels.ops.elementwise.scale import scale\n"
    "from sglang.test.ci.ci_register import register_cuda_ci\n\n"
    'register_cuda_ci(est_time=30, stage="base-b-kernel-unit", runner_config="1-gpu-large")\n\n\n'
    "def test_scale():\n    assert scale is not None\n"
)


@pytest.fixture
def tree(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.chdir(tmp_path)
    ops = tmp_path / "repo" / "python" / "sglang" / "kernels" / "ops"
    _write(ops / "elementwise" / "scale.py", WRAPPER)

    def check(*paths, cache=True):
        capsys.readouterr()
        args = ["check", *(paths or ["repo"]), "--select", "PY020", "--preview"]
        args += ["--output-format", "json"]
        args += ["--cache-dir", str(tmp_path / "cache")] if cache else ["--no-cache"]
        rc = main(args)
        out, err = capsys.readouterr()
        assert rc in (0, 1) and "Traceback" not in err, err
        return sorted((d["path"], d["message"]) for d in json.loads(out))

    class T:
        pass

    t = T()
    t.root, t.ops, t.check = tmp_path, ops, check
    return t


def _same_as_uncached(t, *paths):
    warm = t.check(*paths)
    assert warm == t.check(*paths, cache=False)
    return warm


def test_reports_where_the_test_is_and_where_it_belongs(tree):
    _write(tree.root / "repo" / "test" / "registered" / "lora" / "test_scale.py", TEST)
    found = tree.check(cache=False)
    assert len(found) == 1
    message = found[0][1]
    assert "`test/registered/lora/test_scale.py`" in message
    assert "`test/registered/kernels/ops/elementwise/test_scale.py`" in message


def test_warm_run_follows_edits_of_the_wrapper(tree):
    _write(tree.root / "repo" / "test" / "registered" / "lora" / "test_scale.py", TEST)
    assert len(_same_as_uncached(tree)) == 1
    assert len(tree.check()) == 1  # (warm)
    _write(tree.ops / "elementwise" / "scale.py", PLAIN, 2)  # no longer a JIT wrapper
    assert _same_as_uncached(tree) == []
    _write(tree.ops / "elementwise" / "scale.py", WRAPPER, 3)
    assert len(_same_as_uncached(tree)) == 1


def test_warm_run_follows_a_wrapper_module_appearing(tree):
    """`from sglang.kernels.ops.elementwise import fused`: the module `fused.py`, once it
    exists, is what the import names (before, the group's package)."""
    test = TEST.replace(
        "from sglang.kernels.ops.elementwise.scale import scale",
        "from sglang.kernels.ops.elementwise import fused",
    ).replace("assert scale", "assert fused")
    _write(tree.root / "repo" / "test" / "registered" / "unit" / "test_fused.py", test)
    _write(tree.ops / "elementwise" / "__init__.py", "")
    assert _same_as_uncached(tree) == []
    _write(tree.ops / "elementwise" / "fused.py", WRAPPER, 2)
    assert len(_same_as_uncached(tree)) == 1
    os.remove(tree.ops / "elementwise" / "fused.py")
    assert _same_as_uncached(tree) == []


def test_silent_without_the_kernel_tree_above(tree):
    _write(tree.root / "other" / "test" / "registered" / "lora" / "test_scale.py", TEST)
    assert tree.check("other", cache=False) == []


def test_registered_root_follows_the_config(tree):
    _write(tree.root / "repo" / "ci" / "lora" / "test_scale.py", TEST)
    assert tree.check() == []  # (not under the default root)
    (tree.root / "kernlint.toml").write_text('registered-tests-roots = ["repo/ci/**"]\n')
    found = _same_as_uncached(tree)
    assert len(found) == 1 and "`ci/kernels/ops/elementwise/test_scale.py`" in found[0][1]
    _write(tree.root / "repo" / "ci" / "kernels" / "ops" / "elementwise" / "test_scale.py", TEST)
    os.remove(tree.root / "repo" / "ci" / "lora" / "test_scale.py")
    assert _same_as_uncached(tree) == []


def test_registered_root_helper():
    assert registered_root("/r/test/registered/a/test_x.py") == os.path.join(
        os.sep, "r", "test", "registered"
    )
    assert registered_root("/r/test/manual/test_x.py") is None


def test_warm_run_follows_a_group_directory_removed(tree):
    # `from sglang.kernels.ops import norm`, `ops/norm/` an empty directory: a group of its own,
    # so the test (under norm/) imports wrappers of two groups and is not reported; without
    # the directory `norm` is no group, and the test belongs with the `elementwise` wrapper.
    test = tree.root / "repo" / "test" / "registered" / "kernels" / "ops" / "norm"
    _write(
        test / "test_scale.py",
        TEST.replace("import scale\n", "import scale\nfrom sglang.kernels.ops import norm\n"),
    )
    (tree.ops / "norm").mkdir()
    assert _same_as_uncached(tree, "repo/test") == []
    (tree.ops / "norm").rmdir()
    found = _same_as_uncached(tree, "repo/test")
    assert len(found) == 1 and "elementwise/test_scale.py" in found[0][1]
