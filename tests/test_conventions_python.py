"""The Python house names as configuration: `aiter-gates`, `jit-loaders`,
`jit-cache-decorators`, `ci-registration-functions`. A configured name changes what the rules
accept and say; unset, the rules keep SGLang's names (the fixtures: tests/test_fixtures.py)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from kernlint.runner import lint_paths


def _write(root, files):
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def _lint(root, select=("PY001",), *rels):
    paths = [str(root / rel) for rel in rels] or [str(root)]
    results = lint_paths(paths, select=select, preview=True, warn=lambda m: None)
    return sorted(
        (r.path.replace(str(root) + "/", ""), d.line, d.code, d.message)
        for r in results
        for d in r.diagnostics
    )


def _project(root, config, files):
    root.mkdir(parents=True, exist_ok=True)
    (root / "kernlint.toml").write_text(config)
    _write(root, files)
    return root


def _lines(found, code=None):
    return [(path, line) for path, line, c, _ in found if code is None or c == code]


# -- aiter-gates ----------------------------------------------------------------------------
TRITON_GATED = (
    "from myproj.envs import USE_TRITON_ROCM\n"
    "\n"
    "if USE_TRITON_ROCM:\n"
    "    from aiter import rmsnorm2d_fwd\n"
)
# (`_use_aiter` by its name only: one assigned from `SGLANG_USE_AITER` stays a gate)
SGLANG_GATED = (
    "from sglang.srt.layers.utils import _use_aiter\n"
    "\n"
    "\n"
    "if _use_aiter:\n"
    "    from aiter import rmsnorm2d_fwd\n"
)
# A gate read as an attribute and one called as a function.
OTHER_SPELLINGS = (
    "from myproj import envs\n"
    "from myproj.platform import rocm_aiter_enabled\n"
    "\n"
    "if envs.USE_TRITON_ROCM:\n"
    "    import aiter\n"
    "\n"
    "\n"
    "def kernel():\n"
    "    if not rocm_aiter_enabled():\n"
    "        return None\n"
    "    from aiter import ops\n"
    "    return ops\n"
)


@pytest.mark.parametrize("policy", ["reachable", "lexical"])
def test_aiter_gates_replace_use_aiter(tmp_path, policy):
    files = {"triton.py": TRITON_GATED, "sglang_style.py": SGLANG_GATED}
    policy_line = f'aiter-import-policy = "{policy}"\n'
    default = _lint(_project(tmp_path / "default", policy_line, files), ["PY001"])
    assert _lines(default) == [("triton.py", 4)]  # (`USE_TRITON_ROCM` is no gate by default)
    config = policy_line + 'aiter-gates = ["USE_TRITON_ROCM"]\n'
    found = _lint(_project(tmp_path / "configured", config, files), ["PY001"])
    # The configured gate is the gate now, and `_use_aiter` no longer is (`reachable` still
    # reads a condition naming aiter as one that selected aiter).
    want = [("sglang_style.py", 5)] if policy == "lexical" else []
    assert _lines(found) == want
    assert default[0][3].endswith("put it under `if _use_aiter:`")
    # The message names the configured gate.
    found = _lint(_project(tmp_path / "other", config, {"t.py": TRITON_GATED + "import aiter\n"}))
    assert [line for _, line, _, _ in found] == [5]
    assert found[0][3].endswith("put it under an aiter gate (`USE_TRITON_ROCM`)")


def test_aiter_gates_match_attributes_and_calls(tmp_path):
    files = {"spellings.py": OTHER_SPELLINGS}
    plain = _lint(_project(tmp_path / "default", "", files), ["PY001"])
    assert _lines(plain) == [("spellings.py", 5)]  # (the function's name says nothing)
    config = 'aiter-gates = ["USE_TRITON_ROCM", "rocm_aiter_enabled"]\n'
    assert _lint(_project(tmp_path / "configured", config, files), ["PY001"]) == []
    lexical = 'aiter-import-policy = "lexical"\n'
    assert len(_lint(_project(tmp_path / "lex", lexical, files), ["PY001"])) == 2
    config = lexical + 'aiter-gates = ["USE_TRITON_ROCM", "rocm_aiter_enabled"]\n'
    assert _lint(_project(tmp_path / "lex-configured", config, files), ["PY001"]) == []


def test_aiter_gates_guard_the_importers_of_a_module(tmp_path):
    """The package's import graph judges the importers of a module by the configured gates."""
    files = {
        "pkg/__init__.py": "",
        "pkg/rocm_ops.py": "import aiter\n",
        "pkg/layer.py": (
            "from myproj.envs import USE_TRITON_ROCM\n"
            "\n"
            "if USE_TRITON_ROCM:\n"
            "    from pkg import rocm_ops\n"
        ),
    }
    default = _lint(_project(tmp_path / "default", "", files), ["PY001"], "pkg/rocm_ops.py")
    assert _lines(default) == [("pkg/rocm_ops.py", 1)]
    assert "`pkg.layer` imports it" in default[0][3]
    config = 'aiter-gates = ["USE_TRITON_ROCM"]\n'
    root = _project(tmp_path / "configured", config, files)
    assert _lint(root, ["PY001"], "pkg/rocm_ops.py") == []  # (its only importer is gated)


def test_a_configured_gate_implies_hip_for_the_flag_rule(tmp_path):
    files = {
        "flags.py": (
            "from myproj import envs\n"
            "from sglang.srt.utils import get_bool_env_var\n"
            "\n"
            '_fast = get_bool_env_var("SGLANG_USE_AITER") and envs.USE_TRITON_ROCM\n'
        )
    }
    default = _lint(_project(tmp_path / "default", "", files), ["PY002"])
    assert _lines(default) == [("flags.py", 4)]
    config = 'aiter-gates = ["USE_TRITON_ROCM"]\n'
    assert _lint(_project(tmp_path / "configured", config, files), ["PY002"]) == []


def test_aiter_gates_in_cuda_path_unbound_name(tmp_path):
    """A file naming only a configured gate is checked, and the gate is false on CUDA."""
    files = {
        "layer.py": (
            "from myproj.envs import USE_FAST_KERNELS\n"
            "\n"
            "if USE_FAST_KERNELS:\n"
            "    from aiter import rmsnorm2d_fwd as rms_norm\n"
            "\n"
            "\n"
            "def forward(x):\n"
            "    return rms_norm(x)\n"
        )
    }
    assert _lint(_project(tmp_path / "default", "", files), ["PY003"]) == []
    config = 'aiter-gates = ["USE_FAST_KERNELS"]\n'
    found = _lint(_project(tmp_path / "configured", config, files), ["PY003"])
    assert [(p, line) for p, line, _, _ in found] == [("layer.py", 8)]
    assert found[0][3].startswith("`rms_norm` is bound only when `USE_FAST_KERNELS`")


# -- jit-loaders and jit-cache-decorators ---------------------------------------------------
def _padding(n=40):
    """Functions with nothing of interest: the file is parsed as a skeleton (Rule.partial_lines)."""
    return "".join(f"\n\ndef helper_{i}(x):\n    return x + {i}\n" for i in range(n))


OWN_LOADER = (
    "from myproj.jit import build_jit, load_jit\n" + _padding() + "\n\ndef scale(x):\n"
    '    module = build_jit("scale", cuda_files=["scale.cuh"])\n'
    "    return module.run(x)\n"
    "\n\ndef legacy(x):\n"
    '    return load_jit("legacy", cuda_files=["legacy.cuh"]).run(x)\n'
)


def test_jit_loaders_name_the_loader(tmp_path):
    files = {"ops.py": OWN_LOADER}
    default = _lint(_project(tmp_path / "default", "", files), ["PY004"])
    assert [line for _, line, _, _ in default] == [OWN_LOADER.count("\n")]  # (`legacy` only)
    config = 'jit-loaders = ["build_jit"]\n'
    found = _lint(_project(tmp_path / "configured", config, files), ["PY004"])
    want = OWN_LOADER.splitlines().index(
        '    module = build_jit("scale", cuda_files=["scale.cuh"])'
    )
    assert [line for _, line, _, _ in found] == [want + 1]
    assert found[0][3] == (
        "`build_jit(...)` in function `scale` is not cached: build the module in a "
        "`@cache_once` factory"
    )


def test_a_file_without_the_default_trigger_word_is_checked(tmp_path):
    """A file that never says `load_jit` is checked for the configured loader (a skeleton of a
    large file keeps its lines), aliased too."""
    text = OWN_LOADER.replace(", load_jit", "").replace(
        '    return load_jit("legacy", cuda_files=["legacy.cuh"]).run(x)\n',
        "    return x\n",
    )
    aliased = text.replace("import build_jit\n", "import build_jit as bj\n").replace(
        "build_jit(", "bj("
    )
    files = {"ops.py": text, "aliased.py": aliased}
    config = 'jit-loaders = ["build_jit"]\n'
    found = _lint(_project(tmp_path / "configured", config, files), ["PY004", "PY005"])
    assert [(p, c) for p, _, c, _ in found] == [("aliased.py", "PY004"), ("ops.py", "PY004")]
    assert _lint(_project(tmp_path / "default", "", files), ["PY004"]) == []


def test_a_config_naming_loaders_leaves_other_configs_alone(tmp_path):
    """One run, two configs: the configured names change nothing for the default config."""
    files = {"ops.py": OWN_LOADER}
    alone = _lint(_project(tmp_path / "alone", "", files), ["PY004"])
    _project(tmp_path / "both" / "a", 'jit-loaders = ["build_jit"]\n', files)
    _project(tmp_path / "both" / "b", "", files)
    both = _lint(tmp_path / "both", ["PY004"])
    assert [(line, m) for p, line, _, m in both if p.startswith("b/")] == [
        (line, m) for _, line, _, m in alone
    ]
    assert [m.split("`")[1] for p, _, _, m in both if p.startswith("a/")] == ["build_jit(...)"]


CACHED = (
    "import functools\n"
    "\n"
    "from myproj.jit import memo_once, load_jit\n"
    "\n"
    "\n"
    "@memo_once\n"
    "def _module():\n"
    '    return load_jit("a", cuda_files=["a.cuh"])\n'
    "\n"
    "\n"
    "@functools.lru_cache(maxsize=None)\n"
    "def _other():\n"
    '    return load_jit("b", cuda_files=["b.cuh"])\n'
)


def test_jit_cache_decorators_name_the_cache(tmp_path):
    files = {"ops.py": CACHED}
    default = _lint(_project(tmp_path / "default", "", files), ["PY004", "PY005"])
    assert [(line, code) for _, line, code, _ in default] == [(8, "PY004"), (11, "PY005")]
    assert default[1][3].endswith("use `@cache_once`")
    config = 'jit-cache-decorators = ["memo_once"]\n'
    root = _project(tmp_path / "configured", config, files)
    found = _lint(root, ["PY004", "PY005"])
    assert [(line, code) for _, line, code, _ in found] == [(11, "PY005")]
    assert found[0][3].endswith("use `@memo_once`")
    # The fix uses the configured decorator, as the module imports it.
    results = lint_paths([str(root / "ops.py")], select=["PY005"], warn=lambda m: None)
    (diag,) = results[0].diagnostics
    assert [e.content for e in diag.fix.edits] == ["memo_once"]
    # A configured decorator that is an lru cache is the project's cache: not reported.
    config = 'jit-cache-decorators = ["memo_once", "lru_cache"]\n'
    assert _lint(_project(tmp_path / "lru", config, files), ["PY004", "PY005"]) == []


def test_jit_loaders_in_the_wiring_rules(tmp_path):
    """jit-source-not-found with a configured loader, resolved against `jit-source-root`."""
    files = {
        "jit/csrc/elementwise/scale.cuh": "void scale();\n",
        "jit/include/common.h": "",
        "ops.py": (
            "from myproj.jit import build_jit\n"
            "\n"
            'build_jit("scale", cuda_files=["elementwise/scale.cuh", "elementwise/missing.cuh"])\n'
        ),
    }
    config = 'jit-source-root = "jit"\n'
    assert _lint(_project(tmp_path / "default", config, files), ["PY008"]) == []
    config += 'jit-loaders = ["build_jit"]\n'
    found = _lint(_project(tmp_path / "configured", config, files), ["PY008"])
    assert [(p, line) for p, line, _, _ in found] == [("ops.py", 3)]
    assert found[0][3].startswith("`elementwise/missing.cuh` names no file under the JIT sources")


# -- ci-registration-functions --------------------------------------------------------------
def test_ci_registration_functions_name_the_registrations(tmp_path):
    files = {
        "test/registered/test_a.py": (
            "from myproj.ci import register_test\n"
            "\n"
            "EST = 30\n"
            'register_test(est_time=EST, suite="unit")\n'
        ),
        "test/registered/test_b.py": (
            "from sglang.test.ci.ci_register import register_cuda_ci\n"
            "\n"
            "EST = 30\n"
            'register_cuda_ci(est_time=EST, suite="unit")\n'
        ),
    }
    default = _lint(_project(tmp_path / "default", "", files), ["PY006", "PY014"])
    assert [(p, line, c) for p, line, c, _ in default] == [
        ("test/registered/test_a.py", 1, "PY014"),  # (no registration SGLang's CI knows)
        ("test/registered/test_b.py", 4, "PY006"),
    ]
    config = 'ci-registration-functions = ["register_test"]\n'
    found = _lint(_project(tmp_path / "configured", config, files), ["PY006", "PY014"])
    assert [(p, line, c) for p, line, c, _ in found] == [
        ("test/registered/test_a.py", 4, "PY006"),
        ("test/registered/test_b.py", 1, "PY014"),
    ]
    assert found[0][3].startswith("`register_test` argument `est_time` is not a literal")
    assert found[1][3].startswith("no module-level registration call (`register_test(...)`)")


def test_ci_registration_functions_in_the_collector_rules(tmp_path):
    """invalid-ci-registration reads the configured functions, parsed whole or by statement."""
    body = 'register_test(est_time=-5, suite="unit")\n'
    files = {
        "test/registered/test_a.py": "from myproj.ci import register_test\n\n" + body,
        "test/registered/test_b.py": (
            "from myproj.ci import register_test\n\nif True:\n    " + body + _padding()
        ),
    }
    assert _lint(_project(tmp_path / "default", "", files), ["PY011"]) == []
    config = 'ci-registration-functions = ["register_test"]\n'
    found = _lint(_project(tmp_path / "configured", config, files), ["PY011"])
    assert [(p, line) for p, line, _, _ in found] == [
        ("test/registered/test_a.py", 3),
        ("test/registered/test_b.py", 4),
    ]
    assert found[0][3].startswith("signed `est_time`")
    assert "under a module-level `if`" in found[1][3]


# -- values the config cannot hold ----------------------------------------------------------
@pytest.mark.parametrize(
    "content,says",
    [
        ('aiter-gates = ["a::b"]\n', "`aiter-gates`: 'a::b' is not a Python name"),
        ('jit-loaders = ["my.loader"]\n', "`jit-loaders`: 'my.loader' is not a C++ or Python name"),
        ("jit-cache-decorators = [3]\n", "`jit-cache-decorators` must be an array of strings"),
        ('ci-registration-functions = "register_test"\n', "`ci-registration-functions`"),
    ],
)
def test_bad_values(tmp_path, content, says):
    (tmp_path / "kernlint.toml").write_text(content)
    (tmp_path / "a.py").write_text("x = 1\n")
    p = subprocess.run(
        [sys.executable, "-m", "kernlint", "check", "--no-cache", "a.py"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert p.returncode == 2 and "kernlint.toml" in p.stderr and says in p.stderr, p.stderr
    assert "Traceback" not in p.stderr
