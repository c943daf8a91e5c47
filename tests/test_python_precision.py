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


# -- PY003 cuda-path-unbound-name (preview) ---------------------------------------------------

HEAD = """\
from sglang.srt import envs
from sglang.srt.utils import get_bool_env_var, is_gfx95_supported, is_hip, mxfp_supported

_is_hip = is_hip()
_use_aiter = get_bool_env_var("SGLANG_USE_AITER") and _is_hip
_is_shuffle = is_gfx95_supported()
if _use_aiter:
    from aiter import e8m0_shuffle
"""


def _py003(tmp_path, body, name="mod.py"):
    text = HEAD + textwrap.dedent(body)
    return _lint(tmp_path, name, text, ["PY003"], preview=True)


def _line(body, marker):
    lines = (HEAD + textwrap.dedent(body)).splitlines()
    return [i for i, line in enumerate(lines, 1) if marker in line]


@pytest.mark.parametrize(
    "body",
    [
        # a) a private helper whose every call site is gated (or that nothing calls)
        """
        def _helper(x):
            return e8m0_shuffle(x)


        def forward(x):
            if _use_aiter and x is not None:
                return _helper(x)
            return x
        """,
        """
        def _unused(x):
            return e8m0_shuffle(x)
        """,
        """
        class Layer:
            def _shuffle(self, x):
                return e8m0_shuffle(x)

            def forward(self, x):
                if _use_aiter:
                    return self._shuffle(x)
                return x
        """,
        # b) the class cannot be constructed off HIP
        """
        class Method:
            def __init__(self):
                if not _is_hip:
                    raise NotImplementedError("only on AMD GPUs")

            def apply(self, x):
                return e8m0_shuffle(x)
        """,
        # c) an early raise under a HIP-only predicate, or one whose message requires aiter
        """
        def apply(x):
            if not mxfp_supported():
                raise RuntimeError("MX types need gfx95")
            return e8m0_shuffle(x)
        """,
        """
        class Method:
            def apply(self, x):
                if not getattr(self, "_owns_runner", False):
                    raise RuntimeError("preshuffling requires an owned AITER runner")
                return e8m0_shuffle(x)
        """,
        # d) an alias of an arch check, at module level or local
        """
        def process(x):
            if _is_shuffle:
                return e8m0_shuffle(x)
            return x
        """,
        """
        def process(x):
            is_shuffled = _is_shuffle
            if is_shuffled:
                return e8m0_shuffle(x)
            return x
        """,
        # a method whose every return is false on CUDA
        """
        class Attn:
            def _fused(self):
                return _use_aiter and self.backend == "dsa"

            def forward(self, x):
                if self._fused() and x is not None:
                    return e8m0_shuffle(x)
                return x
        """,
        # a function documented as running only on one platform
        '''
        def apply_ptpc(x):
            """FP8 per-token linear. Only used with the aiter (ROCm) backend."""
            return e8m0_shuffle(x)
        ''',
        # an aiter-named environment flag: unknown on CUDA (it may default to true)
        """
        def process(x):
            if envs.SGLANG_USE_AITER_MOE_GU_ITLV.get():
                return x
            else:
                return e8m0_shuffle(x)
        """,
    ],
    ids=[
        "helper-gated-calls",
        "helper-uncalled",
        "method-gated-calls",
        "ctor-raises-off-hip",
        "raise-unless-mxfp",
        "raise-requires-aiter",
        "module-arch-alias",
        "local-arch-alias",
        "method-returns-gate",
        "docstring-only-aiter",
        "aiter-env-flag-unknown",
    ],
)
def test_py003_guards_it_now_sees(tmp_path, body):
    assert _py003(tmp_path, body) == []


@pytest.mark.parametrize(
    "body",
    [
        # An early return under an aiter-named condition guards nothing after it: the CUDA
        # path is the one that does not return (the 0.5.23 quark_w4a4_mxfp4 misses).
        """
        def apply(layer, x):
            if getattr(layer, "use_aiter_asm_fp4_gemm", False):
                return x
            return e8m0_shuffle(x)  # here
        """,
        # A helper with one call site on the CUDA path.
        """
        def _helper(x):
            return e8m0_shuffle(x)  # here


        def forward(x):
            if _use_aiter:
                return _helper(x)
            return _helper(x + 1)
        """,
        # A class whose constructor only sometimes raises.
        """
        class Method:
            def __init__(self, online):
                if online and not _is_hip:
                    raise NotImplementedError("online needs AMD")

            def apply(self, x):
                return e8m0_shuffle(x)  # here
        """,
        # A negated local alias is true on CUDA.
        """
        def process(x):
            use_triton = not _use_aiter
            if use_triton:
                return e8m0_shuffle(x)  # here
            return x
        """,
        # Words inside other words do not name a platform: `input` (npu), `ship` (hip).
        """
        def process_input(input_ids, relationship):
            if input_ids is not None and relationship:
                return e8m0_shuffle(input_ids)  # here
            return input_ids
        """,
        # "CUDA and HIP only" does not make a function ROCm-only.
        '''
        def apply(x):
            """Works on CUDA and HIP only."""
            return e8m0_shuffle(x)  # here
        ''',
    ],
    ids=[
        "return-under-aiter-attr",
        "helper-one-cuda-call",
        "ctor-sometimes-raises",
        "negated-alias",
        "words-inside-words",
        "docstring-cuda-and-hip",
    ],
)
def test_py003_cuda_paths_still_reported(tmp_path, body):
    assert _py003(tmp_path, body) == _line(body, "# here")


@pytest.mark.parametrize("kind", ["aliases", "helpers", "predicates"])
def test_py003_long_chains_are_bounded_not_skipped(tmp_path, kind):
    """Chains of aliases, helpers or predicate functions longer than the analysis follows
    leave the answer unknown (the use reachable); the file is analysed, not skipped as too
    deep, and the shallow form of each chain is still followed."""
    n = 3000

    def source(depth):
        out = [
            "_is_hip = is_hip()",
            "_use_aiter = _is_hip",
            "if _is_hip:",
            "    from aiter import op",
        ]
        if kind == "aliases":
            out += ["a0 = _is_hip"] + [f"a{i} = a{i - 1}" for i in range(1, depth)]
            out += ["def f(x):", f"    if a{depth - 1}:", "        return op(x)", "    return x"]
        elif kind == "helpers":
            out += ["def _h0(x):", "    return op(x)"]
            for i in range(1, depth):
                out += [f"def _h{i}(x):", f"    return _h{i - 1}(x)"]
            out += ["def main(x):", "    if _use_aiter:", f"        return _h{depth - 1}(x)"]
        else:
            out += ["def _r0():", "    return _is_hip"]
            for i in range(1, depth):
                out += [f"def _r{i}():", f"    return _r{i - 1}()"]
            out += ["def main(x):", f"    if _r{depth - 1}():", "        return op(x)"]
        return "\n".join(out) + "\n"

    assert _lint(tmp_path, "short.py", source(3), ["PY003"], preview=True) == []
    warnings = []
    path = tmp_path / "long.py"
    path.write_text(source(n))
    results = lint_paths([str(path)], select=["PY003"], preview=True, warn=warnings.append)
    assert [d.code for r in results for d in r.diagnostics] == ["PY003"]
    assert not any("too deeply" in w for w in warnings), warnings
