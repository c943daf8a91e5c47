"""Python rules end to end: the `import-time` aiter policy across a package, its config key,
the cache, and the byte prefilter (most files are never parsed)."""

from __future__ import annotations

import json
import os

from cli_support import run

GATE = (
    "from sglang.srt.utils import get_bool_env_var, is_hip\n"
    "_is_hip = is_hip()\n"
    '_use_aiter = get_bool_env_var("SGLANG_USE_AITER") and _is_hip\n'
)

PACKAGE = {
    "pkg/__init__.py": "",
    # An aiter-only backend: fine under import-time as long as nothing imports it unguarded.
    "pkg/aiter_backend.py": "import aiter\n\n\ndef run(x):\n    return aiter.op(x)\n",
    # Imports the backend at module level, unguarded: the CUDA path imports aiter.
    "pkg/user.py": "from pkg import aiter_backend\n",
    # ... and this one imports `user` unguarded: aiter arrives through two hops.
    "pkg/chain.py": "import pkg.user\n",
    # Guarded, function-local, try/except and HIP-only imports of the backend: all fine.
    "pkg/guarded.py": GATE + "if _use_aiter:\n    from pkg import aiter_backend\n",
    "pkg/lazy.py": "def f():\n    from pkg import aiter_backend\n    return aiter_backend\n",
    "pkg/soft.py": "try:\n    from pkg import aiter_backend\nexcept ImportError:\n    pass\n",
    "pkg/hip_only.py": GATE + "if _is_hip:\n    import aiter\n",
    # A package whose __init__ imports aiter: importing anything under it imports aiter.
    "pkg/rocm/__init__.py": "import aiter.ops\n",
}


def _write(root, files):
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def _findings(proc):
    return sorted((f["path"].replace("\\\\", "/"), f["line"]) for f in json.loads(proc.stdout))


def test_lexical_policy_reports_every_ungated_import(tmp_path):
    _write(tmp_path, PACKAGE)
    (tmp_path / "kernlint.toml").write_text('aiter-import-policy = "lexical"\n')
    p = run(
        "check", "pkg", "--select", "PY001", "--output-format", "json", "--no-cache", cwd=tmp_path
    )
    got = _findings(p)
    assert got == [
        ("pkg/aiter_backend.py", 1),
        ("pkg/hip_only.py", 5),
        ("pkg/rocm/__init__.py", 1),
    ], p.stdout + p.stderr


def test_import_time_policy_follows_module_imports(tmp_path):
    _write(tmp_path, PACKAGE)
    (tmp_path / "kernlint.toml").write_text('aiter-import-policy = "import-time"\n')
    p = run(
        "check", "pkg", "--select", "PY001", "--output-format", "json", "--no-cache", cwd=tmp_path
    )
    got = _findings(p)
    assert got == [
        ("pkg/chain.py", 1),
        ("pkg/rocm/__init__.py", 1),
        ("pkg/user.py", 1),
    ], p.stdout + p.stderr
    messages = {f["path"]: f["message"] for f in json.loads(p.stdout)}
    assert "pkg.aiter_backend -> aiter" in messages["pkg/user.py"]
    assert "pkg.user -> pkg.aiter_backend -> aiter" in messages["pkg/chain.py"]


def test_import_time_results_are_not_replayed_from_a_stale_cache(tmp_path):
    _write(tmp_path, PACKAGE)
    (tmp_path / "kernlint.toml").write_text('aiter-import-policy = "import-time"\n')
    args = ["check", "pkg", "--select", "PY001", "--output-format", "json"]
    first = _findings(run(*args, cwd=tmp_path))
    assert ("pkg/user.py", 1) in first
    # user.py's bytes do not change, but the module it imports stops importing aiter.
    (tmp_path / "pkg" / "aiter_backend.py").write_text("def run(x):\n    return x\n")
    second = _findings(run(*args, cwd=tmp_path))
    assert ("pkg/user.py", 1) not in second
    assert ("pkg/chain.py", 1) not in second


def test_bad_policy_value_is_a_config_error(tmp_path):
    _write(tmp_path, {"m.py": "x = 1\n"})
    (tmp_path / "kernlint.toml").write_text('aiter-import-policy = "sometimes"\n')
    p = run("check", "m.py", cwd=tmp_path)
    assert p.returncode == 2
    assert "aiter-import-policy" in p.stderr and "kernlint.toml" in p.stderr
    assert "Traceback" not in p.stderr


def test_prefilters_keep_most_files_unparsed(tmp_path, monkeypatch):
    """Files without a rule's bytes are never parsed: count `ast.parse` calls."""
    import ast

    from kernlint.runner import lint_paths

    files = {f"plain_{i}.py": f"def f{i}(x):\n    return x + {i}\n" for i in range(30)}
    files["uses_aiter.py"] = "import aiter\n"
    files["mentions.py"] = "# aiter is mentioned in a comment, never imported\n"
    _write(tmp_path, files)
    calls = []
    real = ast.parse

    def counting(source, *a, **k):
        calls.append(1)
        return real(source, *a, **k)

    monkeypatch.setattr(ast, "parse", counting)
    results = lint_paths([str(tmp_path)], warn=lambda m: None)
    assert sum(len(r.diagnostics) for r in results) == 1
    assert len(calls) == 1  # only uses_aiter.py: the comment fails the import prefilter


def test_module_level_registrations_are_read_without_parsing_the_file(tmp_path, monkeypatch):
    """A test file whose registrations are statements of their own at column 0 is not parsed
    whole for non-literal-ci-registration: each statement is (the file's own parse would fail
    here); an indented registration sends the file to the parser."""
    import kernlint.python
    from kernlint.runner import lint_paths

    head = "from sglang.test.ci.ci_register import register_cuda_ci\nEST = 1\n"
    broken = "def later(:\n    pass\n"  # (a file parse would fail: no findings, a warning)
    files = {
        "test_a.py": head + "register_cuda_ci(est_time=EST, suite='s')\n" + broken,
        "test_b.py": head + "if True:\n    register_cuda_ci(est_time=EST, suite='s')\n",
    }
    _write(tmp_path, files)
    parsed = []
    real = kernlint.python.parse

    def counting(data, *a, **k):
        parsed.append(1)
        return real(data, *a, **k)

    monkeypatch.setattr(kernlint.python, "parse", counting)
    (tmp_path / "kernlint.toml").write_text('select = ["PY006"]\n')
    results = {os.path.basename(r.path): r for r in lint_paths([str(tmp_path)], warn=print)}
    a, b = results["test_a.py"], results["test_b.py"]
    assert [(d.line, d.code) for d in a.diagnostics] == [(3, "PY006")]
    assert [(d.line, d.code) for d in b.diagnostics] == [(4, "PY006")]
    assert len(parsed) == 1  # test_b.py only
