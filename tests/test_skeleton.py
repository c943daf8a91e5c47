"""Python skeletons: functions and classes without wanted lines are left out, everything kept
stays at its line and column, and the rules find the same things as with the whole file."""

from __future__ import annotations

import ast
import glob
import os

import pytest

from kernlint.python.skeleton import skeleton

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

SOURCE = '''\
"""Module docstring.
def not_a_function():
"""
import os
from aiter import a  # wanted: line 5

_use_aiter = True


@decorator(
    "arg",
)
def unrelated(x):
    """Doc.
class NotAClass:
"""
    y = """
text at column 0
"""
    return (x +
            1)


class Holder:
    attr = 1

    def kept(self):
        if _use_aiter:
            from aiter import b  # wanted: line 29
        return b

    def dropped(self):
        return 2


def tail(a, \\
         b):
    return a
'''


def test_blocks_without_wanted_lines_are_left_out():
    out = skeleton(SOURCE.encode(), [5, 29])
    assert out is not None
    text = out.decode()
    assert text.count("\n") == SOURCE.count("\n")
    tree = ast.parse(text)
    names = [n.name for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.ClassDef))]
    assert names == ["Holder", "kept"]
    # Kept lines are byte-identical, at the same line numbers.
    src_lines, out_lines = SOURCE.splitlines(), text.splitlines()
    for n in (4, 5, 7, 24, 25, 27, 28, 29, 30):
        assert out_lines[n - 1] == src_lines[n - 1], n
    imports = [n for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)]
    assert [(n.lineno, n.col_offset) for n in imports] == [(5, 0), (29, 12)]
    # The removed decorated function became one `pass` at its decorator's line.
    assert out_lines[9] == "pass" and all(line == "" for line in out_lines[10:23])
    assert out_lines[31] == "    pass" and out_lines[35] == "pass"


@pytest.mark.parametrize(
    "line",
    [
        '    #yield """text""" % x',  # a comment holding a whole triple-quoted string
        '    pat = \'"""\'',  # a triple quote inside a one-line string
    ],
)
def test_triple_quotes_in_comments_and_one_line_strings_open_nothing(line):
    src = (
        f"def first():\n{line}\n    return 1\n\n\n"
        "class Dropped:\n    y = 2\n\n\n"
        "class Wanted:\n    x = 1  # wanted: line 11\n"
    )
    out = skeleton(src.encode(), [11]).decode()
    tree = ast.parse(out)
    names = [n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef))]
    assert names == ["Wanted"]


def test_nothing_to_remove_gives_none():
    assert skeleton(b"import os\nx = 1\n", [1]) is None
    assert skeleton(b"def f():\n    return 1\n", [2]) is None


def test_wanted_line_inside_a_nested_function_keeps_the_chain():
    src = b"class A:\n    def f(self):\n        def g():\n            return 1\n        return g\n    def h(self):\n        pass\n"
    out = skeleton(src, [4]).decode()
    tree = ast.parse(out)
    names = [n.name for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.ClassDef))]
    assert names == ["A", "f", "g"]


@pytest.mark.parametrize(
    "src",
    [
        # A column-0 line inside brackets: the boundary is wrong, the skeleton must not parse.
        b"def f():\n    x = [\n1]\n    return x\n\n\ndef g():\n    from aiter import y\n",
    ],
)
def test_odd_layouts_give_invalid_skeletons_not_wrong_ones(src):
    out = skeleton(src, [8])
    if out is not None:
        with pytest.raises(SyntaxError):
            ast.parse(out)


def test_engine_falls_back_to_the_whole_file(tmp_path, monkeypatch):
    """When the skeleton does not parse, the whole file is parsed: same findings."""
    from cli_support import run

    body = "def f():\n    x = [\n1]\n    return x\n\n\ndef g():\n    from aiter import y\n"
    (tmp_path / "m.py").write_text(body + "\n" * 10 + "# " + "x" * 9000 + "\n")
    # (the lexical policy reports g's import, which has no condition of its own)
    (tmp_path / "kernlint.toml").write_text('aiter-import-policy = "lexical"\n')
    p = run("check", "m.py", "--select", "PY001", "--no-cache", cwd=tmp_path)
    assert "m.py:8:5: PY001" in p.stdout, p.stdout


def _findings_by_cli(tmp_path, files, min_bytes, monkeypatch):
    import contextlib
    import io
    import json

    from kernlint import cli, engine

    monkeypatch.setattr(engine, "SKELETON_MIN_BYTES", min_bytes)
    monkeypatch.chdir(tmp_path)
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        cli.main(["check", *files, "--no-cache", "--output-format", "json", "--exit-zero"])
    return sorted(
        (d["path"], d["line"], d["column"], d["end_line"], d["end_column"], d["code"], d["message"])
        for d in json.loads(buf.getvalue())
    )


def test_python_fixtures_give_the_same_findings_from_skeletons(tmp_path, monkeypatch):
    """Every Python fixture, linted from a skeleton (no size threshold) and from the whole
    file: identical findings. Padding with unrelated functions makes the skeleton remove code."""
    files = sorted(
        glob.glob(os.path.join(ROOT, "fixtures", "python", "**", "*.py"), recursive=True)
    )
    assert files
    names = []
    for i, path in enumerate(files):
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
        pad = "".join(f"\n\ndef _pad_{i}_{k}(x):\n    return x + {k}\n" for k in range(3))
        rel = os.path.relpath(path, os.path.join(ROOT, "fixtures"))
        dest = tmp_path / rel
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_text(pad + text + pad, encoding="utf-8")
        names.append(rel)
    whole = _findings_by_cli(tmp_path, names, 10**12, monkeypatch)
    partial = _findings_by_cli(tmp_path, names, 0, monkeypatch)
    assert whole, "the fixtures hold findings"
    assert partial == whole


def test_real_tree_gives_the_same_findings_from_skeletons(tmp_path_factory, monkeypatch):
    """The SGLang 0.5.23 Python tree (downloaded; skipped offline): identical findings."""
    from sglang_tree import sglang_root

    root = sglang_root(tmp_path_factory)
    whole = _findings_by_cli(root, ["srt"], 10**12, monkeypatch)
    partial = _findings_by_cli(root, ["srt"], 0, monkeypatch)
    assert len(whole) > 10  # (the default rules' findings under srt: enough to compare)
    assert partial == whole


def test_wanted_patterns_cover_what_rules_read():
    """The rules that accept skeletons say which lines they need."""
    from kernlint.registry import load_registry

    registry = load_registry()
    partial = {r.code for r in registry.rules if r.partial_lines is not None}
    assert {"PY001", "PY002", "PY004", "PY005"} <= partial
    # load_jit imported under another name: its calls do not say load_jit, whole file.
    jit = registry.by_code["PY004"].partial_lines
    assert jit(b"from x import load_jit as lj\n") is None
    found = jit(b"from x import load_jit\n")
    # (compiled patterns, or patterns that also match a config's own loader names)
    assert found and all(callable(getattr(p, "finditer", None)) for p in found)
    assert all(p.search(b"\n    return load_jit(") for p in found[:1])


def _statements(tree) -> set:
    return {
        (n.lineno, n.col_offset, type(n).__name__)
        for n in ast.walk(tree)
        if isinstance(n, ast.stmt)
    }


def _innermost(tree, line):
    best = None
    for n in ast.walk(tree):
        if isinstance(n, ast.stmt) and n.lineno <= line <= (n.end_lineno or n.lineno):
            if best is None or n.lineno >= best.lineno:
                best = n
    return best


def test_skeletons_of_the_standard_library_keep_what_was_asked():
    """Python's own standard library as a corpus of layouts nobody here wrote: for random wanted
    lines, every skeleton that parses has only statements the file has, at the same places, and
    keeps the innermost statement around every wanted line; one that does not parse is what the
    engine falls back from. (Run over all 13,680 files of a Python install and the 4,719 of
    SGLang during development: no violation, 13 invalid skeletons.)"""
    import random
    import sysconfig

    stdlib = sysconfig.get_paths()["stdlib"]
    files = sorted(
        os.path.join(d, f)
        for d, dirs, fs in os.walk(stdlib)
        if "site-packages" not in d
        for f in fs
        if f.endswith(".py")
    )
    rng = random.Random(7)
    sample = rng.sample(files, min(300, len(files)))
    checked = 0
    for path in sample:
        with open(path, "rb") as fh:
            data = fh.read()
        try:
            full = ast.parse(data)
        except (SyntaxError, ValueError):
            continue
        n = data.count(b"\n") + 1
        keep = sorted(rng.sample(range(1, n + 1), min(n, rng.randint(1, 5))))
        out = skeleton(data, keep)
        if out is None:
            continue
        assert out.count(b"\n") == data.count(b"\n"), path
        try:
            part = ast.parse(out)
        except SyntaxError:
            continue  # the engine parses the whole file instead
        original = _statements(full)
        kept = _statements(part)
        assert {k for k in kept if k[2] != "Pass"} <= original, path
        for line in keep:
            s = _innermost(full, line)
            if s is not None:
                assert (s.lineno, s.col_offset, type(s).__name__) in kept, (path, line)
        checked += 1
    assert checked > 100
