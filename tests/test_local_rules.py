"""Local rules: modules of a project's `rules-path` and of installed `kernlint.rules` entry
points, written like kernlint's own; broken modules, rules that raise, the result cache, the
parallel pool, `kernlint.testing`, and the tutorial of docs/local-rules.md run as written."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap

import pytest
from cli_support import check, run

from kernlint.cli import main
from kernlint.registry import entry_points, load_registry

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TUTORIAL_DATA = os.path.join(ROOT, "tests", "data", "local_rules", "tutorial")


@pytest.fixture(autouse=True)
def fresh_registry():
    """Each test loads its local rules into a registry of its own: the process-wide one is
    rebuilt afterwards, without them, for the other tests."""
    load_registry.cache_clear()
    yield
    load_registry.cache_clear()


# A byte rule for C/C++/CUDA: reports each `MAGIC` (its message from the `_words` helper).
MAGIC_RULE = '''
"""Reports the word MAGIC.

## What it does
Reports `MAGIC`.

## Why is this bad?
Nobody knows what it means.

## Example
```cpp
int x = MAGIC;
```

## Use instead
```cpp
int x = 42;
```

## Fix safety
No fix.
"""

import os

from kernlint.model import Rule

from ._words import MESSAGE

RULE = Rule(
    code="FX001",
    name="magic-word",
    language="cpp",
    summary="the word MAGIC",
    triggers=(b"MAGIC",),
    needs_tree=False,
)


def check(ctx):
    log = os.environ.get("FX_LOG")
    if log:  # (which process checked which file: the cache and pool tests read it)
        with open(os.path.join(log, f"{os.getpid()}-{os.path.basename(ctx.source.path)}"), "w"):
            pass
    at = ctx.data.find(b"MAGIC")
    while at >= 0:
        ctx.report(at, at + 5, MESSAGE)
        at = ctx.data.find(b"MAGIC", at + 5)
'''
WORDS = 'MESSAGE = "MAGIC is magic: name the number"\n'

# A Python rule with `visit` and a safe fix: `print(...)` calls become `log(...)`.
PRINT_RULE = '''
"""Reports print calls."""

from kernlint.model import Edit, Fix, Rule

RULE = Rule(
    code="FX002",
    name="print-call",
    language="python",
    summary="a print call",
    fix="safe",
    triggers=(b"print",),
    node_types=("Call",),
)


def visit(node, ctx):
    func = node.func
    if getattr(func, "id", None) == "print":
        src = ctx.source
        start = src.ast_offset(func.lineno, func.col_offset)
        end = src.ast_offset(func.end_lineno, func.end_col_offset)
        ctx.report(start, end, "a print call: use log", Fix((Edit(start, end, "log"),), "safe"))
'''

# Raises on a file holding BOOM.
RAISING_RULE = '''
"""Raises."""

from kernlint.model import Rule

RULE = Rule(code="FX003", name="boom", language="cpp", summary="raises", triggers=(b"BOOM",))


def check(ctx):
    raise ValueError("boom at " + str(ctx.data.find(b"BOOM")))
'''


def make_project(root, rules=None, config=None, files=None):
    """A project: `kernlint.toml` naming `tools/rules`, the rule modules, and source files."""
    rules = {"magic_word.py": MAGIC_RULE, "_words.py": WORDS} if rules is None else rules
    d = root / "tools" / "rules"
    d.mkdir(parents=True, exist_ok=True)
    for name, text in rules.items():
        (d / name).write_text(textwrap.dedent(text).lstrip())
    (root / "kernlint.toml").write_text(
        config if config is not None else 'rules-path = ["tools/rules"]\n'
    )
    for name, text in (files or {"src/a.cu": "int x = MAGIC;\n"}).items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


def findings(out) -> list[tuple[str, int, str]]:
    return sorted((d["path"], d["line"], d["code"]) for d in json.loads(out))


def error_line(rc, err) -> str:
    assert "Traceback" not in err, err
    assert rc == 2, err
    lines = err.splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("kernlint: error: "), err
    return lines[0]


# -- rules-path -------------------------------------------------------------------------------


def test_rules_path_rule_runs_like_a_shipped_one(tmp_path, monkeypatch, capsys):
    make_project(tmp_path)
    monkeypatch.chdir(tmp_path)
    rc, out, err = check(capsys, "--output-format", "json", ".")
    assert (rc, err) == (1, "")
    (d,) = json.loads(out)
    assert (d["code"], d["message"]) == ("FX001", "MAGIC is magic: name the number")
    assert (d["line"], d["column"]) == (1, 9)
    # Listed and documented, from the project's config.
    assert main(["rules"]) == 0
    listed = capsys.readouterr().out
    assert re.search(
        r"^FX001\s+magic-word\s+c\+\+/cuda\s+-\s+stable\s+the word MAGIC$", listed, re.M
    )
    assert main(["rule", "FX001"]) == 0
    doc = capsys.readouterr().out
    assert doc.startswith("# magic-word (FX001)") and "## Why is this bad?" in doc


def test_command_line_selects_a_local_rule(tmp_path, monkeypatch, capsys):
    """`--select FX001` is checked against the local rules of the configs of the paths, in a
    process that has not read any config yet; an unknown code still blames the option."""
    make_project(tmp_path, files={"src/a.cu": "int x = MAGIC; // \u2014\n"})
    monkeypatch.chdir(tmp_path / "src")
    rc, out, err = check(capsys, "--select", "FX001", "--output-format", "json", "a.cu")
    assert (rc, err) == (1, "")
    assert [d["code"] for d in json.loads(out)] == ["FX001"]
    rc, out, err = check(capsys, "--select", "FX", "--output-format", "json", "a.cu")
    assert [d["code"] for d in json.loads(out)] == ["FX001"]
    rc, out, err = check(capsys, "--select", "FX009", "a.cu")
    assert error_line(rc, err) == (
        "kernlint: error: --select: unknown rule or prefix `FX009` (see `kernlint rules`)"
    )
    # --config names the config (and so the rules) for every file.
    monkeypatch.chdir(tmp_path.parent)
    cfg = str(tmp_path / "kernlint.toml")
    rc, out, err = check(capsys, "--config", cfg, "--select", "FX001", str(tmp_path / "src"))
    assert rc == 1 and "FX001" in out


def test_rules_path_is_relative_to_the_config_that_sets_it(tmp_path, monkeypatch, capsys):
    make_project(tmp_path / "base")
    (tmp_path / "base" / "kernlint.toml").write_text('rules-path = ["tools/rules"]\n')
    project = tmp_path / "project"
    (project / "src").mkdir(parents=True)
    (project / "src" / "a.cu").write_text("int x = MAGIC;\n")
    (project / "kernlint.toml").write_text('extend = "../base/kernlint.toml"\n')
    monkeypatch.chdir(project)
    rc, out, err = check(capsys, "--output-format", "json", ".")
    assert (rc, err) == (1, "")
    assert findings(out) == [(os.path.join("src", "a.cu"), 1, "FX001")]


def test_local_rules_run_only_under_the_configs_naming_them(tmp_path, monkeypatch, capsys):
    """Two configs in one tree: only the one naming the directory runs its rules, whichever
    is read first; the other may not select them, though the command line may."""
    make_project(tmp_path / "a")
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "kernlint.toml").write_text("")
    (tmp_path / "b" / "b.cu").write_text("int y = MAGIC;\n")
    monkeypatch.chdir(tmp_path)
    for order in (["b", "a"], ["a", "b"]):
        load_registry.cache_clear()
        rc, out, err = check(capsys, "--output-format", "json", *order)
        assert (rc, err) == (1, "")
        assert findings(out) == [(os.path.join("a", "src", "a.cu"), 1, "FX001")]
    rc, out, err = check(capsys, "--select", "FX001", "--output-format", "json", "a", "b")
    assert findings(out) == [(os.path.join("a", "src", "a.cu"), 1, "FX001")]
    (tmp_path / "b" / "kernlint.toml").write_text('select = ["FX001"]\n')
    rc, out, err = check(capsys, "a", "b")
    line = error_line(rc, err)
    assert f"{tmp_path / 'b' / 'kernlint.toml'}: `select`: `FX001` is a local rule of " in line
    assert "which this config's `rules-path` does not name" in line


def test_suppressions_and_per_file_ignores_name_local_rules(tmp_path, monkeypatch, capsys):
    make_project(
        tmp_path,
        config='rules-path = ["tools/rules"]\n[per-file-ignores]\n"src/ignored.cu" = ["FX001"]\n',
        files={
            "src/a.cu": "int x = MAGIC;  // kernlint: ignore[FX001]\nint y = 1;  // kernlint: "
            "ignore[FX001]\nint z = MAGIC;\n",
            "src/ignored.cu": "int x = MAGIC;\n",
        },
    )
    monkeypatch.chdir(tmp_path)
    rc, out, err = check(capsys, "--output-format", "json", ".")
    assert (rc, err) == (1, "")
    src = os.path.join("src", "a.cu")
    assert findings(out) == [(src, 2, "KL001"), (src, 3, "FX001")]


def test_python_rule_with_visit_and_a_fix(tmp_path, monkeypatch, capsys):
    make_project(
        tmp_path,
        rules={"print_call.py": PRINT_RULE},
        files={"pkg/m.py": "def f(x):\n    print(x)\n    return [print(y) for y in x]\n"},
    )
    monkeypatch.chdir(tmp_path)
    rc, out, err = check(capsys, "--output-format", "json", ".")
    assert findings(out) == [
        (os.path.join("pkg", "m.py"), 2, "FX002"),
        (os.path.join("pkg", "m.py"), 3, "FX002"),
    ]
    rc, out, err = check(capsys, "--fix", ".")
    assert rc == 0, out + err
    assert (tmp_path / "pkg" / "m.py").read_text() == (
        "def f(x):\n    log(x)\n    return [log(y) for y in x]\n"
    )


# -- broken modules and bad configuration -----------------------------------------------------

_GOOD_HEAD = "from kernlint.model import Rule\n"
BROKEN = {
    "syntax-error": ("def check(ctx)\n    pass\n", r"bad\.py:1: cannot load .*SyntaxError"),
    "import-error": (
        "import no_such_module_kl\n",
        r"bad\.py: cannot load the local rule module: ModuleNotFoundError: No module named "
        "'no_such_module_kl'",
    ),
    "raises-on-import": ("raise RuntimeError('no GPU')\n", r"bad\.py: cannot load .*no GPU"),
    "no-RULE": ("def check(ctx):\n    pass\n", r"bad\.py: defines no `RULE`"),
    "RULE-not-a-Rule": (
        "RULE = {'code': 'FX009'}\ndef check(ctx):\n    pass\n",
        r"bad\.py: `RULE` must be a kernlint.model.Rule, not dict",
    ),
    "visit-without-node-types": (
        _GOOD_HEAD + "RULE = Rule(code='FX009', name='x', language='cpp', summary='s')\n"
        "def visit(node, ctx):\n    pass\n",
        r"bad\.py: defines visit\(\) but `RULE.node_types` is empty",
    ),
    "no-check-nor-visit": (
        _GOOD_HEAD + "RULE = Rule(code='FX009', name='x', language='cpp', summary='s')\n",
        r"bad\.py: defines neither check\(ctx\) nor visit\(node, ctx\)",
    ),
    "bad-code": (
        _GOOD_HEAD + "RULE = Rule(code='fx-9', name='x', language='cpp', summary='s')\n"
        "def check(ctx):\n    pass\n",
        r"bad\.py: `RULE.code` 'fx-9' is not a rule code",
    ),
    "bad-language": (
        _GOOD_HEAD + "RULE = Rule(code='FX009', name='x', language='cuda', summary='s')\n"
        "def check(ctx):\n    pass\n",
        r"bad\.py: `RULE.language` must be one of 'cpp', 'python', 'any', not 'cuda'",
    ),
    "str-triggers": (
        _GOOD_HEAD + "RULE = Rule(code='FX009', name='x', language='cpp', summary='s', "
        "triggers=('MAGIC',))\ndef check(ctx):\n    pass\n",
        r"bad\.py: `RULE.triggers` must be a tuple of non-empty bytes",
    ),
    "code-of-a-shipped-rule": (
        _GOOD_HEAD + "RULE = Rule(code='CU006', name='x', language='cpp', summary='s')\n"
        "def check(ctx):\n    pass\n",
        r"bad\.py: rule code `CU006` is already taken by kernlint's rule `raw-kernel-launch` "
        r"\(CU006, kernlint_rules\.cpp\.raw_kernel_launch\)",
    ),
    "name-of-a-shipped-rule": (
        _GOOD_HEAD + "RULE = Rule(code='FX009', name='raw-kernel-launch', language='cpp', "
        "summary='s')\ndef check(ctx):\n    pass\n",
        r"bad\.py: rule name `raw-kernel-launch` is already taken by kernlint's rule",
    ),
    "code-of-another-local-rule": (
        _GOOD_HEAD + "RULE = Rule(code='FX001', name='x', language='cpp', summary='s')\n"
        "def check(ctx):\n    pass\n",
        r"bad\.py: rule code `FX001` is already taken by the local rule `magic-word` \(FX001\) "
        r"of .*a_magic\.py",
    ),
    "newer-rule-api": (
        "RULE_API = 99\n" + _GOOD_HEAD,
        r"bad\.py: written for rule API 99; this kernlint has rule API 1: upgrade kernlint",
    ),
}


@pytest.mark.parametrize("case", sorted(BROKEN))
def test_a_broken_rule_module_is_one_error_line(tmp_path, monkeypatch, capsys, case):
    source, says = BROKEN[case]
    # (`a_` sorts before `bad`: the clash is with a module already loaded)
    rules = {"a_magic.py": MAGIC_RULE, "_words.py": WORDS, "bad.py": source}
    make_project(tmp_path, rules=rules)
    monkeypatch.chdir(tmp_path)
    rc, out, err = check(capsys, ".")
    line = error_line(rc, err)
    assert out == ""
    assert f"kernlint: error: {tmp_path / 'tools' / 'rules' / 'bad.py'}" in line
    assert re.search(says, line), line


def test_a_broken_module_through_the_real_entry_point(tmp_path):
    """`python -m kernlint`: the one line, no traceback, for `check` and for `rules`."""
    make_project(tmp_path, rules={"bad.py": "def check(ctx)\n"})
    for args in (["check", "."], ["rules"]):
        p = run(*args, cwd=tmp_path)
        assert p.returncode == 2
        assert p.stdout == ""
        (line,) = p.stderr.splitlines()
        assert line.startswith(f"kernlint: error: {tmp_path / 'tools' / 'rules' / 'bad.py'}:1: ")
        assert "SyntaxError" in line


@pytest.mark.parametrize(
    "config,says",
    [
        ('rules-path = ["missing"]\n', "`rules-path`: {root}/missing: no such directory"),
        ('rules-path = ["kernlint.toml"]\n', "`rules-path`: {root}/kernlint.toml: not a directory"),
        ('rules-path = [" "]\n', "`rules-path` must hold directory paths, not empty ones"),
        ('rules-path = "tools/rules"\n', "`rules-path` must be an array of strings, not a string"),
    ],
)
def test_rules_path_values_are_checked(tmp_path, monkeypatch, capsys, config, says):
    make_project(tmp_path, config=config)
    monkeypatch.chdir(tmp_path)
    rc, out, err = check(capsys, ".")
    line = error_line(rc, err)
    assert f"{tmp_path / 'kernlint.toml'}: {says.format(root=tmp_path)}" in line


# -- a rule that raises -----------------------------------------------------------------------


def test_a_local_rule_that_raises_is_named_and_the_run_goes_on(tmp_path, monkeypatch, capsys):
    make_project(
        tmp_path,
        rules={"magic_word.py": MAGIC_RULE, "_words.py": WORDS, "boom.py": RAISING_RULE},
        files={"src/a.cu": "int x = MAGIC;\n", "src/b.cu": "int BOOM = MAGIC;\n"},
    )
    monkeypatch.chdir(tmp_path)
    rc, out, err = check(capsys, "--output-format", "json", ".")
    assert rc == 1
    # The file it raised on is skipped; every other file is checked.
    assert findings(out) == [(os.path.join("src", "a.cu"), 1, "FX001")]
    (warning,) = [line for line in err.splitlines() if line.startswith("warning: ")]
    assert warning.startswith(
        f"warning: {os.path.join('src', 'b.cu')}: internal error in rule FX003 (ValueError: "
        "boom at 4); the file is skipped"
    )
    # The local rule is to blame, not kernlint.
    assert warning.endswith(".py)") and "bug in the local rule FX003 (" in warning
    assert "bug in kernlint" not in warning
    assert "Traceback" not in err


# -- the result cache and the parallel pool ---------------------------------------------------


def test_the_cache_key_covers_the_local_rules_source(tmp_path, monkeypatch):
    """An unchanged rule is answered from the cache (it does not run again); an edit of the
    rule's module, or of a helper it imports, is never answered from old results, even one that
    keeps the file's size and modification time."""
    make_project(tmp_path)
    log = tmp_path / "log"
    log.mkdir()
    # (no bytecode written: Python's own check of a cached module's bytecode is by size and
    # modification time, so the same-size edit below would import the old helper)
    env = {**os.environ, "FX_LOG": str(log), "PYTHONDONTWRITEBYTECODE": "1"}

    def lint():
        p = subprocess.run(
            [sys.executable, "-m", "kernlint", "check", "--output-format", "json", "src"],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert p.returncode == 1, p.stderr
        runs = len(os.listdir(log))
        for f in os.listdir(log):
            os.unlink(log / f)
        return [d["message"] for d in json.loads(p.stdout)], runs

    assert lint() == (["MAGIC is magic: name the number"], 1)
    assert (tmp_path / ".kernlint_cache").is_dir()
    assert lint() == (["MAGIC is magic: name the number"], 0)  # from the cache
    words = tmp_path / "tools" / "rules" / "_words.py"
    st = words.stat()
    words.write_text(WORDS.replace("name the number", "name the NUMBER"))  # same size
    os.utime(words, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert lint() == (["MAGIC is magic: name the NUMBER"], 1)
    rule = tmp_path / "tools" / "rules" / "magic_word.py"
    rule.write_text(rule.read_text().replace("at, at + 5, MESSAGE", "at, at + 5, MESSAGE + '!'"))
    assert lint() == (["MAGIC is magic: name the NUMBER!"], 1)


def test_a_parallel_run_reports_local_findings_from_the_workers(tmp_path):
    if len(os.sched_getaffinity(0)) < 2 or not hasattr(os, "fork"):
        pytest.skip("one CPU: kernlint does not start a pool of workers")
    n = 60  # (more than runner.PARALLEL_THRESHOLD files)
    make_project(tmp_path, files={f"src/k{i:02d}.cu": "int x = MAGIC;\n" for i in range(n)})
    log = tmp_path / "log"
    log.mkdir()
    p = subprocess.Popen(
        [sys.executable, "-m", "kernlint", "check", "--no-cache", "--output-format", "json", "src"],
        cwd=tmp_path,
        env={**os.environ, "FX_LOG": str(log)},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    out, err = p.communicate(timeout=300)
    assert p.returncode == 1, err
    assert sorted(d["path"] for d in json.loads(out)) == [
        os.path.join("src", f"k{i:02d}.cu") for i in range(n)
    ]
    pids = {int(name.split("-")[0]) for name in os.listdir(log)}
    assert pids and p.pid not in pids, "the files were not checked by forked workers"


# -- entry points -----------------------------------------------------------------------------


def _site(tmp_path, entry_points_txt, modules):
    """A directory for PYTHONPATH holding one distribution (`fxrules-0.1.dist-info`)."""
    site = tmp_path / "site"
    dist = site / "fxrules-0.1.dist-info"
    dist.mkdir(parents=True)
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: fxrules\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text(entry_points_txt)
    for name, text in modules.items():
        path = site / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip())
    return site


def _run_with(site, *args, cwd):
    env = {**os.environ, "PYTHONPATH": str(site)}
    return subprocess.run(
        [sys.executable, "-m", "kernlint", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_entry_point_rules_of_an_installed_distribution(tmp_path):
    site = _site(
        tmp_path,
        "[console_scripts]\nfx = fxrules:main\n\n[kernlint.rules]\nfx = fxrules.rules\n"
        "print = fxrules_print\n",
        {
            "fxrules/__init__.py": "",
            "fxrules/rules/__init__.py": "",
            "fxrules/rules/magic_word.py": MAGIC_RULE,
            "fxrules/rules/_words.py": WORDS,
            "fxrules_print.py": PRINT_RULE,
        },
    )
    project = tmp_path / "project"
    project.mkdir()
    (project / "a.cu").write_text("int x = MAGIC;\n")
    (project / "m.py").write_text("print(1)\n")
    p = _run_with(site, "check", "--no-cache", "--output-format", "json", ".", cwd=project)
    assert p.returncode == 1, p.stderr
    assert findings(p.stdout) == [("a.cu", 1, "FX001"), ("m.py", 1, "FX002")]
    p = _run_with(site, "rules", cwd=project)
    assert re.search(r"^FX001\s+magic-word", p.stdout, re.M)
    assert re.search(r"^FX002\s+print-call", p.stdout, re.M)
    # The entry points kernlint reads are those importlib.metadata finds.
    code = (
        "import importlib.metadata as m, json, sys\n"
        "from kernlint.registry import entry_points\n"
        "a = sorted((e.name, e.value) for e in m.entry_points(group='kernlint.rules'))\n"
        "b = sorted((n, v) for _, n, v in entry_points())\n"
        "print(json.dumps([a, b]))\n"
    )
    p = subprocess.run(
        [sys.executable, "-c", code],
        env={**os.environ, "PYTHONPATH": str(site)},
        capture_output=True,
        text=True,
        timeout=120,
        cwd=project,
    )
    ours, theirs = json.loads(p.stdout)
    assert ours == theirs == [["fx", "fxrules.rules"], ["print", "fxrules_print"]]


def test_entry_points_are_read_from_every_path_entry_first_name_wins(tmp_path):
    first = tmp_path / "first" / "fxrules-0.2.dist-info"
    second = tmp_path / "second" / "fxrules-0.1.dist-info"
    other = tmp_path / "second" / "Other.Rules-1.0.dist-info"
    for d, text in (
        (first, "[kernlint.rules]\nnew = a.b\n"),
        (second, "[kernlint.rules]\nold = c\n"),
        (other, "[kernlint.rules]\nother = d\n"),
    ):
        d.mkdir(parents=True)
        (d / "entry_points.txt").write_text(text)
    found = entry_points(
        path=[str(tmp_path / "first"), str(tmp_path / "missing"), str(tmp_path / "second")]
    )
    assert [(os.path.basename(d), n, v) for d, n, v in found] == [
        ("fxrules-0.2.dist-info", "new", "a.b"),
        ("Other.Rules-1.0.dist-info", "other", "d"),
    ]


@pytest.mark.parametrize(
    "value,says",
    [
        (
            "no_such_rules_kl",
            "no_such_rules_kl: cannot load the local rule module: "
            "ModuleNotFoundError: No module named 'no_such_rules_kl'",
        ),
        ("fxrules_print:RULE", "`fxrules_print:RULE` must name a rule module or a package"),
        ("fxrules_empty", "fxrules_empty.py: defines no `RULE`"),
    ],
)
def test_a_broken_entry_point_is_one_error_line(tmp_path, value, says):
    site = _site(
        tmp_path,
        f"[kernlint.rules]\nfx = {value}\n",
        {"fxrules_print.py": PRINT_RULE, "fxrules_empty.py": "X = 1\n"},
    )
    p = _run_with(site, "check", "--no-cache", ".", cwd=tmp_path)
    assert p.returncode == 2
    (line,) = p.stderr.splitlines()
    assert line.startswith("kernlint: error: ")
    assert says in line
    assert (
        f"(entry point `fx = {value}` of fxrules-0.1.dist-info, group kernlint.rules, in {site})"
        in line
    )


# -- kernlint.testing -------------------------------------------------------------------------


def test_check_fixture_passes_and_fails_readably(tmp_path):
    from kernlint.testing import check_fixture, fixture_cases

    make_project(tmp_path, files={})
    rule = tmp_path / "tools" / "rules" / "magic_word.py"
    fixtures = tmp_path / "fixtures"
    fixtures.mkdir()
    good = fixtures / "good.cu"
    good.write_text(
        "int a = MAGIC;  // kernlint-expect: FX001@9\n// kernlint-expect-next-line: FX001\n"
        "int b = MAGIC + MAGIC;  // kernlint-expect: FX001@17\nint c = 1;\n"
    )
    found = check_fixture(good, rule)
    assert [(d.line, d.column) for d in found] == [(1, 9), (3, 9), (3, 17)]
    assert check_fixture(good, "FX001") == found  # by code: the fixture's config names it
    bad = fixtures / "bad.cu"
    bad.write_text(
        "int a = MAGIC;  // kernlint-expect: FX001@3\nint b = 1;  // kernlint-expect: FX001\n"
    )
    with pytest.raises(AssertionError) as info:
        check_fixture(bad, rule)
    assert str(info.value) == (
        f"{bad}: the findings differ from the kernlint-expect annotations\n"
        "  annotated, not found: line 1 column 3 FX001\n"
        "  annotated, not found: line 2 FX001\n"
        "  found, not annotated: 1:9 FX001 MAGIC is magic: name the number\n"
        "  all findings:\n"
        "    1:9 FX001 MAGIC is magic: name the number"
    )
    (fixtures / "sub").mkdir()
    (fixtures / "sub" / "c.py").write_text("")
    (fixtures / "good.cu.fixed").write_text("")
    (fixtures / "notes.txt").write_text("")
    assert fixture_cases(fixtures) == [str(bad), str(good), str(fixtures / "sub" / "c.py")]


def test_check_fixture_checks_the_fixed_siblings(tmp_path):
    from kernlint.testing import check_fixture

    make_project(tmp_path, rules={"print_call.py": PRINT_RULE}, files={})
    rule = tmp_path / "tools" / "rules" / "print_call.py"
    fixture = tmp_path / "fix" / "m.py"
    fixture.parent.mkdir()
    fixture.write_text("print(1)  # kernlint-expect: FX002\n")
    (tmp_path / "fix" / "m.py.fixed").write_text("log(1)  # kernlint-expect: FX002\n")
    check_fixture(fixture, rule)
    (tmp_path / "fix" / "m.py.fixed").write_text("log(2)  # kernlint-expect: FX002\n")
    with pytest.raises(AssertionError, match=r"the safe fixes do not make the expected text"):
        check_fixture(fixture, rule)
    os.unlink(tmp_path / "fix" / "m.py.fixed")
    (tmp_path / "fix" / "m.py.unsafe-fixed").write_text("log(1)  # kernlint-expect: FX002\n")
    check_fixture(fixture, rule)


def test_check_fixture_raises_the_rules_own_exception(tmp_path):
    from kernlint.testing import check_fixture

    make_project(tmp_path, rules={"boom.py": RAISING_RULE}, files={})
    fixture = tmp_path / "b.cu"
    fixture.write_text("int BOOM;\n")
    with pytest.raises(ValueError, match="boom at 4"):
        check_fixture(fixture, tmp_path / "tools" / "rules" / "boom.py")


def test_check_rule_wants_the_doc_sections_and_real_node_types(tmp_path):
    from kernlint.testing import check_rule

    make_project(
        tmp_path,
        rules={"print_call.py": PRINT_RULE, "magic_word.py": MAGIC_RULE, "_words.py": WORDS},
        files={},
    )
    assert check_rule(tmp_path / "tools" / "rules" / "magic_word.py").code == "FX001"
    with pytest.raises(AssertionError, match=r"rule FX002 .*no `## What it does` section"):
        check_rule(tmp_path / "tools" / "rules" / "print_call.py")
    misspelt = (
        MAGIC_RULE.replace("needs_tree=False,", 'node_types=("call_expresion",),')
        .replace('code="FX001"', 'code="FX004"')
        .replace('"magic-word"', '"magic-call"')
    )
    misspelt += "\n\ndef visit(node, ctx):\n    pass\n"
    (tmp_path / "tools" / "rules" / "misspelt.py").write_text(textwrap.dedent(misspelt).lstrip())
    with pytest.raises(AssertionError, match=r"node type `call_expresion` does not exist \(cpp\)"):
        check_rule(tmp_path / "tools" / "rules" / "misspelt.py")


def test_kernlint_testing_does_not_import_pytest():
    code = "import sys, kernlint.testing; print('pytest' in sys.modules)"
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert p.stdout.strip() == "False", p.stderr


# -- the tutorial, as docs/local-rules.md writes it ---------------------------------------------


def _tutorial() -> tuple[dict[str, str], list[tuple[str, str]]]:
    """The files the tutorial shows (a `**`path`**` line, then a fenced block) and its console
    sessions ($ command, output)."""
    with open(os.path.join(ROOT, "docs", "local-rules.md"), encoding="utf-8") as fh:
        text = fh.read()
    blocks = re.findall(r"^\*\*`([^`]+)`\*\*\n\n(`{3,})\w+\n(.*?)^\2$", text, re.S | re.M)
    files = {path: body for path, _, body in blocks}
    sessions = re.findall(r"^```console\n\$ ([^\n]*)\n(.*?)^```", text, re.S | re.M)
    return files, sessions


def test_the_tutorial_data_is_the_tutorials_text():
    files, _ = _tutorial()
    on_disk = {}
    for d, _, names in os.walk(TUTORIAL_DATA):
        for n in names:
            if "__pycache__" not in d and not n.endswith(".pyc"):
                path = os.path.join(d, n)
                with open(path, encoding="utf-8") as fh:
                    on_disk[os.path.relpath(path, TUTORIAL_DATA).replace(os.sep, "/")] = fh.read()
    assert on_disk == files


def test_the_tutorial_runs_as_written(tmp_path):
    """The tutorial's files, copied out of its text into a project, and its console sessions
    run there: the pytest session passes, the kernlint session prints what the text shows."""
    files, sessions = _tutorial()
    assert len(files) == 4 and len(sessions) == 2
    rule = files["tools/kernlint_rules/dropped_launch_error.py"]
    code = rule[rule.index('"""\n\n', 3) + 5 :]
    assert len([line for line in code.splitlines() if line.strip()]) <= 30, "not a 30-line rule"
    for name, text in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    for command, output in sessions:
        tool, *args = command.split()
        if tool == "pytest":
            argv = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *args]
        else:
            assert tool == "kernlint"
            argv = [sys.executable, "-m", "kernlint", *args]
        p = subprocess.run(argv, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
        if tool == "pytest":
            assert p.returncode == 0, p.stdout + p.stderr
            want = output.splitlines()[-1]  # the summary ("2 passed"), without its time
            assert re.search(rf"^{re.escape(want)}( in [\d.]+s)?$", p.stdout, re.M), p.stdout
        else:
            assert p.returncode == 1, p.stderr
            assert p.stdout == output, p.stdout
