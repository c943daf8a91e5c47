"""Precision of the Python rules on forms the SGLang tree holds: aiter-flag-without-hip-check
(literals that set the variable, saved-and-restored reads), direct-triton-benchmark (scoped to
`jit-benchmark-roots`, configurable) and cuda-path-unbound-name (guards it could not see)."""

from __future__ import annotations

import json
import textwrap

import pytest
from cli_support import run

from kernlint.runner import lint_paths


def _lint(root, rel, text, select, preview=False):
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text))
    results = lint_paths([str(path)], select=select, preview=preview, warn=lambda m: None)
    return sorted(d.line for r in results for d in r.diagnostics if d.code in select)


# -- PY002 aiter-flag-without-hip-check -------------------------------------------------------

SETS_THE_VARIABLE = """\
import os
from sglang.srt.utils import get_bool_env_var

ENV_VARS = {"SGLANG_USE_AITER": "1", "SGLANG_INT4_WEIGHT": "0"}
MODELS = [ModelConfig(model_path="m", env_vars={"SGLANG_USE_AITER": "1"})]
env = {**os.environ, "SGLANG_USE_AITER": "1"}


class TestX:
    @classmethod
    def setUpClass(cls):
        cls.model_config = {"env_vars": {"SGLANG_USE_AITER": "1"}}
        cls._old_use_aiter = os.environ.get("SGLANG_USE_AITER")
        os.environ["SGLANG_USE_AITER"] = "1"

    @classmethod
    def tearDownClass(cls):
        if cls._old_use_aiter is None:
            os.environ.pop("SGLANG_USE_AITER", None)
"""


def test_py002_literals_that_set_the_variable_and_saved_reads_are_not_flags(tmp_path):
    assert _lint(tmp_path, "test_env.py", SETS_THE_VARIABLE, ["PY002"]) == []


@pytest.mark.parametrize(
    "value",
    [
        'get_bool_env_var("SGLANG_USE_AITER")',
        'os.environ.get("SGLANG_USE_AITER") == "1"',
        'os.environ.get("SGLANG_USE_AITER", "0").lower() in ("1", "true")',
        'bool(os.getenv("SGLANG_USE_AITER"))',
        'int(os.environ["SGLANG_USE_AITER"])',
        '"SGLANG_USE_AITER" in os.environ',
        "envs.SGLANG_USE_AITER.get()",
        "envs.SGLANG_USE_AITER.value",
    ],
)
def test_py002_every_flag_read_without_hip_is_reported(tmp_path, value):
    text = f"import os\n_use_aiter = {value}\n"
    assert _lint(tmp_path, "flag.py", text, ["PY002"]) == [2]
    # The same read and-ed with a HIP check is fine.
    text = f"import os\n_is_hip = is_hip()\n_use_aiter = {value} and _is_hip\n"
    assert _lint(tmp_path, "flag_ok.py", text, ["PY002"]) == []


# -- PY007 direct-triton-benchmark ------------------------------------------------------------

BENCH = """\
import triton.testing


def bench(fn):
    return triton.testing.do_bench(fn)
"""


@pytest.mark.parametrize(
    "rel,reported",
    [
        ("test/registered/kernels/benchmark/elementwise/bench_scale.py", True),
        ("python/sglang/kernels/jit/benchmark/bench_scale.py", True),
        ("sglang/jit_kernel/benchmark/bench_scale.py", True),
        # AOT benchmarks and the top-level model/kernel study folder are out of scope.
        ("python/sglang/kernels/aot/benchmark/bench_scale.py", False),
        ("benchmark/kernels/quantization/bench_fp8.py", False),
        ("benchmark/bench_scale.py", False),
        ("test/registered/kernels/benchmark/elementwise/scale.py", False),
    ],
)
def test_py007_default_jit_benchmark_roots(tmp_path, rel, reported):
    assert _lint(tmp_path, rel, BENCH, ["PY007"]) == ([5] if reported else [])


def _py007(root, *extra):
    p = run("check", ".", "--select", "PY007", "--output-format", "json", *extra, cwd=root)
    assert p.returncode in (0, 1), p.stderr
    return sorted(f["path"].replace("\\", "/") for f in json.loads(p.stdout))


def test_py007_roots_are_configurable_and_the_cache_follows_them(tmp_path):
    for rel in ("my_benches/bench_a.py", "test/registered/kernels/benchmark/x/bench_b.py"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(BENCH)
    default = ["test/registered/kernels/benchmark/x/bench_b.py"]
    assert _py007(tmp_path) == default
    (tmp_path / "kernlint.toml").write_text('extend-jit-benchmark-roots = ["my_benches/**"]\n')
    assert _py007(tmp_path) == ["my_benches/bench_a.py", *default]
    (tmp_path / "kernlint.toml").write_text('jit-benchmark-roots = ["my_benches/**"]\n')
    assert _py007(tmp_path) == ["my_benches/bench_a.py"]
    # Same answers without the cache: the cached entries followed the config.
    assert _py007(tmp_path, "--no-cache") == ["my_benches/bench_a.py"]


@pytest.mark.parametrize("key", ["jit-benchmark-roots", "extend-jit-benchmark-roots"])
def test_py007_roots_are_validated(tmp_path, key):
    (tmp_path / "kernlint.toml").write_text(f'{key} = ["[z-a]/**"]\n')
    p = run("check", ".", cwd=tmp_path)
    assert p.returncode == 2
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and "kernlint.toml" in lines[0] and f"`{key}`" in lines[0], p.stderr
    assert "invalid glob" in lines[0] and "Traceback" not in p.stderr
