"""ungated-aiter-import's default `reachable` policy: the import graph of a package, read from
disk whatever is checked; environment defaults; the cache; the same answers in any process."""

from __future__ import annotations

import json
import os
import time

import pytest
from cli_support import run

from kernlint import aiter_graph

GATES = (
    "from sglang.srt.utils import get_bool_env_var, is_hip\n"
    "_is_hip = is_hip()\n"
    '_use_aiter = get_bool_env_var("SGLANG_USE_AITER") and _is_hip\n'
)

PACKAGE = {
    "pkg/__init__.py": "from pkg import layers\n",
    "pkg/gates.py": GATES,
    # loaded at start-up: pkg/__init__ -> pkg.layers -> pkg.quant
    "pkg/layers.py": (
        "from pkg import quant\n"
        "from pkg.gates import _use_aiter\n"
        "if _use_aiter:\n"
        "    from pkg import rocm_utils\n"
        "try:\n"
        "    from pkg import flydsl\n"
        "except ImportError:\n"
        "    flydsl = None\n"
        "\n\n"
        "def lazy():\n"
        "    from pkg import helper\n"
        "    return helper\n"
    ),
    "pkg/quant.py": "from pkg.gates import _is_hip\nif _is_hip:\n    from aiter import shuffle\n",
    # every import of these is guarded: aiter-only
    "pkg/rocm_utils.py": "import aiter\n",
    "pkg/flydsl/__init__.py": "from pkg.flydsl import kernels\n",
    "pkg/flydsl/kernels.py": "from aiter import flydsl_op\n",
    # imported by a function with no condition of its own: loaded whenever it is called
    "pkg/helper.py": "from pkg.gates import _is_hip\nif _is_hip:\n    import aiter.ops\n",
    # nothing imports these: loaded by name
    "pkg/model.py": "import aiter.triton\n",
    "pkg/backends/__init__.py": "",
    "pkg/backends/aiter.py": "from aiter import mha_fwd\n",
}


def _write(root, files):
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def _check(cwd, *paths, cache=False, extra=()):
    args = ["check", *paths, "--select", "PY001", "--output-format", "json", *extra]
    if not cache:
        args.append("--no-cache")
    p = run(*args, cwd=cwd)
    assert p.returncode in (0, 1), p.stderr
    assert "Traceback" not in p.stderr, p.stderr
    return {(f["path"].replace("\\", "/"), f["line"]): f["message"] for f in json.loads(p.stdout)}


def test_the_import_graph_decides_module_level_imports(tmp_path):
    _write(tmp_path, PACKAGE)
    got = _check(tmp_path, "pkg")
    assert sorted(got) == [("pkg/helper.py", 3), ("pkg/model.py", 1), ("pkg/quant.py", 3)]
    # the finding names the import that loads the module, and the machines it runs on
    assert "`pkg.layers` imports it at import time, line 1" in got[("pkg/quant.py", 3)]
    assert "under a HIP check only" in got[("pkg/quant.py", 3)]
    assert "on ROCm without aiter enabled" in got[("pkg/quant.py", 3)]
    assert "`pkg.layers` imports it in a function" in got[("pkg/helper.py", 3)]
    assert "on CUDA and on ROCm" in got[("pkg/model.py", 1)]


def test_one_file_checked_alone_gets_the_whole_package_answer(tmp_path):
    _write(tmp_path, PACKAGE)
    whole = _check(tmp_path, "pkg")
    for rel in PACKAGE:
        alone = _check(tmp_path, rel)
        assert alone == {k: v for k, v in whole.items() if k[0] == rel}, rel


def test_an_importer_gaining_a_gate_is_seen_through_the_cache(tmp_path):
    _write(tmp_path, PACKAGE)
    cache = ["--cache-dir", str(tmp_path / "cache")]
    assert ("pkg/quant.py", 3) in _check(tmp_path, "pkg", cache=True, extra=cache)
    # quant.py's bytes do not change; its only importer now imports it under the aiter gate
    (tmp_path / "pkg" / "layers.py").write_text(
        PACKAGE["pkg/layers.py"].replace(
            "from pkg import quant\nfrom pkg.gates import _use_aiter\n",
            "from pkg.gates import _use_aiter\nif _use_aiter:\n    from pkg import quant\n",
        )
    )
    again = _check(tmp_path, "pkg", cache=True, extra=cache)
    assert ("pkg/quant.py", 3) not in again
    assert again == _check(tmp_path, "pkg")


ENVIRON = (
    "class EnvBool:\n    def __init__(self, default):\n        self.default = default\n\n\n"
    "class Envs:\n    ON = EnvBool(True)\n    OFF = EnvBool(False)\n    LATE = EnvBool(_f)\n\n\n"
    "envs = Envs()\n"
)
USES_ENVS = (
    "from pkg.environ import envs\n"
    "from pkg.gates import _is_hip\n\n\n"
    "def f(x):\n"
    "    if _is_hip and envs.ON.get():\n"
    "        from aiter import on\n"  # 7: on by default
    "    if envs.OFF.get():\n"
    "        from aiter import off\n"  # 9: an explicit opt-in
    "    if _is_hip and envs.LATE.get():\n"
    "        from aiter import late\n"  # 11: default not known: silent
    "    if _is_hip and not envs.LATE.get():\n"
    "        from aiter import not_late\n"  # 13: off or turned off: reported either way
    "    if not envs.ON.get():\n"
    "        from aiter import turned_off\n"  # 15: turning a switch off selects nothing
    "    return x\n"
)


def test_environment_switches_take_their_declared_defaults(tmp_path):
    files = {"pkg/__init__.py": "", "pkg/gates.py": GATES, "pkg/environ.py": ENVIRON}
    files["pkg/model.py"] = USES_ENVS
    files["tool/run.py"] = USES_ENVS.replace("pkg.environ", "other.environ")
    _write(tmp_path, files)
    got = _check(tmp_path, "pkg")
    assert sorted(line for _, line in got) == [7, 13, 15]
    assert "`ON` is on by default" in got[("pkg/model.py", 7)]
    # a script importing `envs` from a package the run does not hold: no default is known,
    # so a path open only when a switch is on is not reported (7); one open when it is off is
    got = _check(tmp_path, "tool/run.py")
    assert sorted(line for _, line in got) == [13, 15]


def test_findings_do_not_depend_on_the_process_or_order(tmp_path, monkeypatch):
    """A pool of workers, or one process: the same findings and messages."""
    import kernlint.runner as runner

    files = dict(PACKAGE)
    for i in range(60):  # (enough files for the pool)
        files[f"pkg/m{i}.py"] = f"from pkg import quant, helper\nx = {i}\n"
    _write(tmp_path, files)

    def findings():
        results = runner.lint_paths([str(tmp_path / "pkg")], select=["PY001"], warn=lambda m: 0)
        return sorted((r.path, d.line, d.message) for r in results for d in r.diagnostics)

    pooled = findings()
    monkeypatch.setattr(runner, "_jobs", lambda: 1)
    assert findings() == pooled and pooled


def test_a_package_without_aiter_is_not_indexed(tmp_path, monkeypatch):
    import kernlint.runner as runner

    built = []
    real = aiter_graph.Package.__init__

    def counting(self, top, *args, **kwargs):
        built.append(top)
        real(self, top, *args, **kwargs)

    monkeypatch.setattr(aiter_graph.Package, "__init__", counting)
    _write(tmp_path, {"plain/__init__.py": "", "plain/a.py": "import os\n"})
    runner.lint_paths([str(tmp_path / "plain")], select=["PY001"], warn=lambda m: 0)
    assert built == []
    _write(tmp_path, PACKAGE)
    runner.lint_paths([str(tmp_path / "pkg")], select=["PY001"], warn=lambda m: 0)
    assert built == [str(tmp_path / "pkg")]


@pytest.mark.parametrize(
    "policy,want", [("reachable", [5]), ("lexical", [5, 11]), ("import-time", [])]
)
def test_policies_side_by_side(tmp_path, policy, want):
    script = (
        GATES  # lines 1-3
        + "if _is_hip:\n    import aiter\n"  # 5: HIP only, at module level
        + "try:\n    import aiter.x\nexcept Exception:\n    pass\n"  # 7: a failure is caught
        + "def f():\n    import aiter.y\n"  # 11: no condition of its own
    )
    _write(tmp_path, {"s.py": script, "kernlint.toml": f'aiter-import-policy = "{policy}"\n'})
    assert sorted(line for _, line in _check(tmp_path, "s.py")) == want


def test_inspect_says_why_an_import_is_not_reported(tmp_path):
    _write(tmp_path, PACKAGE)
    p = run("inspect", "pkg/rocm_utils.py", "--format", "json", cwd=tmp_path)
    doc = json.loads(p.stdout)
    assert doc["aiter_import_policy"] == "reachable"
    (item,) = doc["aiter_imports"]
    assert "every import of it is guarded" in item["reachable"]
    p = run("inspect", "pkg/quant.py", cwd=tmp_path)
    assert "reachable policy: reported: runs on ROCm without aiter enabled" in p.stdout


def test_gated_imports_alone_do_not_index_the_package(tmp_path, monkeypatch):
    """A check of a few files whose aiter imports are all silent on their own evidence (under
    the gate, in an ImportError guard) reads no import graph: pre-commit stays fast."""
    import kernlint.runner as runner

    built = []
    real = aiter_graph.Package.__init__

    def counting(self, top, *args, **kwargs):
        built.append(top)
        real(self, top, *args, **kwargs)

    monkeypatch.setattr(aiter_graph.Package, "__init__", counting)
    _write(tmp_path, PACKAGE)
    res = runner.lint_paths([str(tmp_path / "pkg" / "layers.py")], select=["PY001"], warn=print)
    assert [d for r in res for d in r.diagnostics] == [] and built == []
    res = runner.lint_paths([str(tmp_path / "pkg" / "quant.py")], select=["PY001"], warn=print)
    assert [d.line for r in res for d in r.diagnostics] == [3]  # (needs the graph: read)
    assert built == [str(tmp_path / "pkg")]


@pytest.mark.parametrize("files,named", [(1, 1), (10**6, 1), (10**6, 10**6)])
def test_indexing_up_front_or_on_demand_gives_the_same_findings(
    tmp_path, monkeypatch, files, named
):
    """Indexed while the files are read (a large run), once enough files name aiter, or on
    demand (a few files): the same findings."""
    import kernlint.runner as runner

    _write(tmp_path, PACKAGE)
    monkeypatch.setattr(aiter_graph, "EAGER_FILES", files)
    monkeypatch.setattr(aiter_graph, "EAGER_INDEX", named)
    res = runner.lint_paths([str(tmp_path / "pkg")], select=["PY001"], warn=print)
    got = sorted((os.path.relpath(r.path, tmp_path), d.line) for r in res for d in r.diagnostics)
    assert got == [("pkg/helper.py", 3), ("pkg/model.py", 1), ("pkg/quant.py", 3)]


@pytest.mark.skipif(not hasattr(os, "fork"), reason="the pool forks its workers")
def test_a_pool_gathers_the_index_from_the_files_it_lints(tmp_path, monkeypatch):
    """A large run without a cache, in a pool: the workers compute each file's part of the
    index from the bytes they lint (no package file is read twice), the files that need the
    whole index are linted again once it is built, and the findings are those of one process
    reading every package first. A package file the run does not check is read for it."""
    import kernlint.forkpool as forkpool
    import kernlint.runner as runner

    _write(tmp_path, PACKAGE)
    _write(tmp_path, {"pkg/unchecked.py": "from pkg import model\n"})
    # (a C++ file: linted by the workers while the parent builds the index)
    _write(tmp_path, {"csrc/k.cu": "__global__ void k(float* x, float* y) { x[0] = y[0]; }\n"})
    (tmp_path / "kernlint.toml").write_text('exclude = ["pkg/unchecked.py"]\n')

    def findings():
        paths = [str(tmp_path / "pkg"), str(tmp_path / "csrc")]
        res = runner.lint_paths(paths, select=["PY001", "CU003"], warn=print)
        return sorted(
            (os.path.relpath(r.path, tmp_path), d.line, d.message)
            for r in res
            for d in r.diagnostics
        )

    expected = findings()  # (one process)
    assert [f[:2] for f in expected] == [
        ("csrc/k.cu", 1),
        ("pkg/helper.py", 3),
        ("pkg/model.py", 1),
        ("pkg/quant.py", 3),
    ]
    assert "pkg.unchecked" in expected[2][2]  # (the unchecked file imports `model`)
    monkeypatch.setattr(runner, "PARALLEL_THRESHOLD", 1)
    monkeypatch.setattr(runner, "DEFER_WRAPPER_SCAN", 1)
    monkeypatch.setattr(runner, "_jobs", lambda: 2)
    monkeypatch.setattr(aiter_graph, "EAGER_FILES", 1)
    pieces, later = [], []
    real_finish, real_imap = aiter_graph.gather_finish, forkpool.imap_unordered

    def finish(got):  # (top package -> its files' pieces, packed)
        pieces.append({p for parts in got.values() for p in aiter_graph.unpack_pieces(parts)})
        real_finish(got)

    def imap(fn, items, jobs, meanwhile=None):
        for out in real_imap(fn, items, jobs, meanwhile):
            candidates = runner._POOL_STATE["candidates"]  # (the waiting files, by number)
            later.extend(os.path.relpath(candidates[i].abspath, tmp_path) for i in out[3])
            yield out

    monkeypatch.setattr(aiter_graph, "gather_finish", finish)
    monkeypatch.setattr(forkpool, "imap_unordered", imap)
    assert findings() == expected
    checked = {str(tmp_path / rel) for rel in PACKAGE if rel.endswith(".py")}
    assert len(pieces) == 1 and pieces[0] == checked  # (the unchecked file: read by the parent)
    assert "pkg/quant.py" in later and "pkg/layers.py" not in later


def test_a_warm_run_reads_no_unchanged_file_for_aiter_names(tmp_path, monkeypatch):
    """Whether a file names aiter (what its cache key depends on) is kept in the cache by
    size and modification time: a warm run scans no unchanged file, a changed one is read."""
    import kernlint.engine as engine
    from kernlint.cli import main

    _write(tmp_path, PACKAGE)
    old = time.time() - 600  # (files written just now are racy: read again, by design)
    for rel in PACKAGE:
        os.utime(tmp_path / rel, (old, old))
    args = ["check", str(tmp_path / "pkg"), "--select", "PY001", "-q", "--exit-zero"]
    args += ["--cache-dir", str(tmp_path / "cache")]
    assert main(args) == 0
    scanned = []
    real = engine.contains

    def counting(data, word):
        if word == b"aiter":
            scanned.append(data)
        return real(data, word)

    monkeypatch.setattr(engine, "contains", counting)
    assert main(args) == 0
    assert scanned == []
    (tmp_path / "pkg" / "model.py").write_text("import aiter.triton\nimport os\n")
    assert main(args) == 0
    assert len(scanned) >= 1


def _gathering_pool(monkeypatch):
    """Make even a small run lint in a pool that gathers the aiter index from its workers."""
    import kernlint.runner as runner

    monkeypatch.setattr(runner, "PARALLEL_THRESHOLD", 1)
    monkeypatch.setattr(runner, "DEFER_WRAPPER_SCAN", 1)
    monkeypatch.setattr(runner, "_jobs", lambda: 2)
    monkeypatch.setattr(aiter_graph, "EAGER_FILES", 1)


def _findings(root, *paths):
    import kernlint.runner as runner

    res = runner.lint_paths([str(root / p) for p in paths], select=["PY001"], warn=print)
    return sorted(
        (os.path.relpath(r.path, root), d.line, d.message) for r in res for d in r.diagnostics
    )


@pytest.mark.skipif(not hasattr(os, "fork"), reason="the pool forks its workers")
def test_a_gathered_index_keeps_defaults_it_cannot_tell(tmp_path, monkeypatch):
    """An `Env*` default that is an expression is "cannot tell" in a gathered index too (its
    marker crossed from a worker): the import it guards stays silent, as in one process."""
    files = {"pkg/__init__.py": "", "pkg/gates.py": GATES, "pkg/environ.py": ENVIRON}
    files["pkg/model.py"] = USES_ENVS
    _write(tmp_path, files)
    alone = _findings(tmp_path, "pkg")
    assert [line for _, line, _ in alone] == [7, 13, 15]
    _gathering_pool(monkeypatch)
    assert _findings(tmp_path, "pkg") == alone


@pytest.mark.skipif(not hasattr(os, "fork"), reason="the pool forks its workers")
def test_a_gathered_run_holds_one_package_index_at_a_time(tmp_path, monkeypatch):
    """Two packages of one name (copies of a tree, one switch's default changed): after a
    pool gathered the index, each package's index is built for its own files and dropped
    before the next is built, and each file's findings come from its own package (its `envs`
    included)."""
    for copy in ("a", "b"):
        files = {f"{copy}/{rel}": text for rel, text in PACKAGE.items()}
        files[f"{copy}/pkg/environ.py"] = ENVIRON
        files[f"{copy}/pkg/uses.py"] = USES_ENVS
        _write(tmp_path, files)
    (tmp_path / "b/pkg/environ.py").write_text(
        ENVIRON.replace("ON = EnvBool(True)", "ON = EnvBool(False)")
    )
    # (one copy alone: what its files get)
    alone, other = _findings(tmp_path, "a"), _findings(tmp_path, "b")
    assert ("a/pkg/quant.py", 3) in {f[:2] for f in alone}
    assert [f[1] for f in alone if f[0] == "a/pkg/uses.py"] == [7, 13, 15]
    assert [f[1] for f in other if f[0] == "b/pkg/uses.py"] == [13, 15]
    built = []
    real = aiter_graph.Package.__init__

    def counting(self, top, *args, **kwargs):
        built.append((os.path.relpath(top, tmp_path), len(aiter_graph._PACKAGES)))
        real(self, top, *args, **kwargs)

    monkeypatch.setattr(aiter_graph.Package, "__init__", counting)
    _gathering_pool(monkeypatch)
    assert _findings(tmp_path, "a", "b") == sorted(alone + other)
    assert sorted(built) == [("a/pkg", 0), ("b/pkg", 0)]


def test_a_module_is_a_directory_as_isdir_says(tmp_path):
    """The index keeps a `from X import ...` list only where X is a directory: told from one
    listing of X's parent, with the answers `os.path.isdir` gives (a link to a directory
    counts, a file or a missing path does not)."""
    pkg = tmp_path / "pkg"
    (pkg / "sub" / "deeper").mkdir(parents=True)
    (pkg / "mod.py").write_text("")
    (pkg / "sub" / "leaf.py").write_text("")
    (pkg / "linked").symlink_to(pkg / "sub", target_is_directory=True)
    (pkg / "dangling").symlink_to(tmp_path / "nowhere", target_is_directory=True)
    aiter_graph.reset()
    above = str(tmp_path)
    modules = [
        "pkg",
        "pkg.sub",
        "pkg.sub.deeper",
        "pkg.linked",
        "pkg.linked.deeper",
        "pkg.mod",
        "pkg.sub.leaf",
        "pkg.missing",
        "pkg.missing.sub",
        "pkg.dangling",
        "pkg.mod.x",
    ]
    for module in modules:
        want = os.path.isdir(os.path.join(above, *module.split(".")))
        assert aiter_graph._is_directory(above, module) is want, module
    assert [m for m in modules if aiter_graph._is_directory(above, m)] == [
        "pkg",
        "pkg.sub",
        "pkg.sub.deeper",
        "pkg.linked",
        "pkg.linked.deeper",
    ]
    aiter_graph.reset()


def test_the_files_judged_by_reachability_follow_per_file_ignores(tmp_path):
    """Which files the pool gathers the import index for is asked once per settings object,
    except where per-file-ignores can take the rule off a file: the same files as asking each."""
    from kernlint import runner
    from kernlint.config import ConfigResolver, Overrides
    from kernlint.discovery import discover
    from kernlint.registry import load_registry

    for name in ("a", "b", "c"):
        (tmp_path / "pkg" / name).mkdir(parents=True)
        (tmp_path / "pkg" / name / "__init__.py").write_text("import aiter\n")
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "kernlint.toml").write_text('ignore = ["PY001"]\n')
    (tmp_path / "other" / "x.py").write_text("import aiter\n")
    registry = load_registry()
    answers = []
    for config in ("", '[per-file-ignores]\n"pkg/b/*" = ["PY001"]\n'):
        (tmp_path / "kernlint.toml").write_text(config)
        resolver = ConfigResolver(registry, Overrides())
        candidates = list(discover([str(tmp_path)], resolver))
        python = [k for k, c in enumerate(candidates) if c.language == "python"]
        got = runner._reachable_files(candidates, python, resolver)
        assert got == [k for k in python if runner._reachable_policy(candidates[k], resolver)]
        answers.append(sorted(os.path.relpath(candidates[k].abspath, tmp_path) for k in got))
    assert answers[0] == [f"pkg{os.sep}__init__.py"] + [
        os.path.join("pkg", n, "__init__.py") for n in ("a", "b", "c")
    ]
    assert answers[1] == [f"pkg{os.sep}__init__.py"] + [
        os.path.join("pkg", n, "__init__.py") for n in ("a", "c")
    ]
