"""Python inputs that are legal but extreme, suppressions at scale, and suppressions with odd
line endings: each completes without a traceback and with the right findings or warnings.
(Speed is measured by bench/growth.py; the timeouts here only catch a hang.)"""

from __future__ import annotations

import ast
import io
import json
import random
import re
import tokenize

import pytest
from cli_support import run

from kernlint.project import _without_template_args, targets_in_snippets, wrapper_snippets
from kernlint.python import line_starts as python_line_starts
from kernlint.python.guards import Guards, hip_test, module_level
from kernlint.python.skeleton import _string_line_ranges
from kernlint.source import line_starts
from kernlint.suppressions import _tokenize_comment_ranges, python_comment_ranges

ALL = ("check", "--no-cache", "--select", "ALL", "--preview", "--output-format", "json")
GATES = (
    b"from sglang.srt.utils import get_bool_env_var, is_hip\n\n"
    b"_is_hip = is_hip()\n"
    b'_use_aiter = get_bool_env_var("SGLANG_USE_AITER") and _is_hip\n'
)


def _check(tmp_path, files: dict[str, bytes], *args: str):
    """Write the files, run `kernlint check` on the directory; (findings, stderr)."""
    for name, data in files.items():
        (tmp_path / name).write_bytes(data)
    p = run(*(args or ALL), ".", cwd=str(tmp_path))
    assert "Traceback" not in p.stderr, p.stderr[-2000:]
    assert p.returncode in (0, 1), (p.returncode, p.stderr[-2000:])
    return json.loads(p.stdout), p.stderr


def _codes(findings) -> list[tuple[int, str]]:
    return sorted((f["line"], f["code"]) for f in findings)


def _too_deep_for_python(data: bytes) -> bool:
    try:
        ast.parse(data)
    except (RecursionError, MemoryError):
        return True
    return False


# -- suppressions at scale --------------------------------------------------------------------
def test_many_unused_suppressions_are_each_reported(tmp_path):
    n = 20_000
    findings, _ = _check(tmp_path, {"s.py": b"x = 1  # kernlint: ignore[PY001]\n" * n})
    assert _codes(findings) == [(k, "KL001") for k in range(1, n + 1)]


def test_lone_cr_line_endings_count_lines_as_python_does(tmp_path):
    n = 5_000
    findings, _ = _check(tmp_path, {"s.py": b"x = 1  # kernlint: ignore[PY001]\r" * n})
    assert _codes(findings) == [(k, "KL001") for k in range(1, n + 1)]
    assert {f["column"] for f in findings} == {10}


def test_many_suppressed_aiter_imports(tmp_path):
    n = 5_000
    top = b"import aiter  # kernlint: ignore[PY001]\n" * n
    hip = b"if _is_hip:\n" + b"    import aiter.ops  # kernlint: ignore[PY001]\n" * n
    data = GATES + top + hip + b"    import aiter.last\n"
    findings, _ = _check(tmp_path, {"a.py": data})
    last = data.count(b"\n")
    assert _codes(findings) == [(last, "PY001")]
    assert "under a HIP check only" in findings[0]["message"]


# -- nesting ------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "name,data",
    [
        ("unary_minus.py", b"x = " + b"-" * 6000 + b"1\n"),
        (
            "elif_chain.py",
            b"import aiter\nif x == 0:\n    pass\n"
            + b"".join(b"elif x == %d:\n    pass\n" % i for i in range(1, 6000)),
        ),
    ],
)
@pytest.mark.parametrize("preview", [True, False])
def test_nested_deeper_than_the_parser_is_a_warning(tmp_path, name, data, preview):
    args = ALL if preview else ("check", "--no-cache", "--output-format", "json")
    assert _too_deep_for_python(data)
    if b"aiter" not in data:
        data = b"import aiter\n" + data  # (a rule that parses it)
    findings, stderr = _check(tmp_path, {name: data}, *args)
    assert findings == []  # not a syntax-error finding: the file is valid Python
    assert f"{name}: too deeply nested to parse; skipped" in stderr


def test_deep_but_parsable_elif_chain_is_analyzed(tmp_path):
    n = 2000
    out = [GATES, b"if _use_aiter:\n    import aiter\n    y = 0\n"]
    out += [b"elif x == %d:\n    import aiter.ops\n    y = %d\n" % (i, i) for i in range(1, n)]
    out.append(b"print(y)\n")
    data = b"".join(out)
    if _too_deep_for_python(data):
        pytest.skip("this Python's parser does not go this deep")
    findings, stderr = _check(tmp_path, {"e.py": data})
    assert "too deeply" not in stderr
    lines = [f["line"] for f in findings if f["code"] == "PY001"]
    assert lines == [6 + 3 * i for i in range(1, n)]  # every elif's import, not the gated one
    assert all("not the aiter gate" in f["message"] for f in findings)


@pytest.mark.parametrize(
    "expr",
    [
        b"-" * 1500 + b"1",
        b"a" + b".b" * 1500,
        b"f" + b"()" * 1500,
        b"lambda: " * 700 + b"y",
        b"a if _is_hip else " * 700 + b"b",
    ],
    ids=["unary", "attribute", "call", "lambda", "ifexp"],
)
def test_deep_expressions_are_analyzed(tmp_path, expr):
    data = GATES + b"import aiter\nx = " + expr + b"\n"
    if _too_deep_for_python(data):
        pytest.skip("this Python's parser does not go this deep")
    findings, stderr = _check(tmp_path, {"d.py": data})
    assert "too deeply" not in stderr
    assert _codes(findings) == [(5, "PY001")]


def test_deep_conditions_are_evaluated_without_recursion():
    depth = 1500
    src = GATES + b"if " + b"not " * depth + b"_use_aiter:\n    import aiter\n"
    tree = ast.parse(src)
    guards = Guards(tree)
    imp = tree.body[-1].body[0]
    assert guards.aiter_gated(imp) is (depth % 2 == 0)
    assert guards.on_cuda(imp) is (depth % 2 == 1)
    # Nested statements without recursion: 2,000 `elif`s, listed at module level.
    chain = b"if a:\n    pass\n" + b"".join(
        b"elif b%d:\n    x = %d\n" % (i, i) for i in range(2000)
    )
    tree = ast.parse(chain)
    assigns = [s for s, _ in module_level(tree) if isinstance(s, ast.Assign)]
    assert len(assigns) == 2000
    last, (literals, _) = next((s, info) for s, info in module_level(tree) if s is assigns[-1])
    assert len(list(literals)) == 2001  # `a` false, b0..b1998 false, b1999 true


# -- the cross-file wrapper scan ------------------------------------------------------------------
KERNEL = {"k.cu": b"__global__ void k(float* __restrict__ x) { x[0] = 1.0f; }\n"}


def test_deep_wrapper_expression_is_skipped_and_reported(tmp_path):
    deep = b'm = load_jit("m", cuda_wrappers=[(' + b"+".join([b"1"] * 3000) + b', "&K::run")])\n'
    good = b'n = load_jit("n", cuda_wrappers=[("ok", "&sglang::Good<T>::run")])\n'
    data = b"from sglang.jit_kernel.utils import load_jit\n" + deep + good
    assert targets_in_snippets(data) == {"Good::run"}
    findings, stderr = _check(tmp_path, {"w.py": data, **KERNEL})
    if _too_deep_for_python(data):
        assert "w.py: too deeply nested to parse; skipped" in stderr
    assert all(f["path"].endswith("k.cu") or f["code"] != "KL003" for f in findings)


def test_unbalanced_wrappers_are_scanned_once(tmp_path):
    data = b"f(cuda_wrappers=[\n" * (256 * 1024 // 18)
    assert wrapper_snippets(data) == []
    inner = data + b'g(cuda_wrappers=[("a", "&K::run")])\n'
    assert wrapper_snippets(inner) == [b'[("a", "&K::run")]']
    _check(tmp_path, {"u.py": data, **KERNEL})


def test_wrapper_snippets_follow_comments_and_strings():
    data = (
        b'# cuda_wrappers=[("c", "&Comment::run")]\n'
        b"s = \"cuda_wrappers=[('s', '&String::run')]\"\n"
        b'm = load_jit(cuda_wrappers=[("a", f"&sglang::A<{t}>::run"), ("b", "&B<X<1>>::go")])\n'
        b'n = load_jit(cuda_wrappers=(("c", "c::d"),  # ) and \' in a comment\n'
        b'    ("e", """&E::f"""),\n))\n'
    )
    assert targets_in_snippets(data) == {"A::run", "B::go", "c::d", "E::f"}


def test_template_arguments_are_removed_in_one_pass():
    rng = random.Random(7)
    ref = re.compile(r"<[^<>]*>")
    for _ in range(2000):
        text = "".join(rng.choice("ab<>:") for _ in range(rng.randrange(0, 30)))
        want, prev = text, None
        while prev != want:
            prev, want = want, ref.sub("", want)
        assert _without_template_args(text) == want, text
    deep = "K" + "<" * 20_000 + ">" * 20_000 + "::run"
    assert _without_template_args(deep) == "K::run"


# -- the skeleton ---------------------------------------------------------------------------------
def test_triple_quotes_on_one_long_line(tmp_path):
    line = b"s = (" + b'"""a""" ' * 8192 + b")\n"
    head = b"import aiter  # kernlint: ignore[PY001]\n\n\ndef f():\n    return 1\n\n\n"
    data = head + line + b'"""\nopen\n"""\n'
    assert _string_line_ranges(data, line_starts(data)) == [(9, 10)]
    args = ("check", "--no-cache", "--select", "ALL", "--output-format", "json")
    findings, _ = _check(tmp_path, {"t.py": data}, *args)
    assert findings == []


# -- suppressions and line endings ----------------------------------------------------------------
BOM = b"\xef\xbb\xbf"


def test_bom_line_one_suppression(tmp_path):
    findings, _ = _check(
        tmp_path,
        {
            "bom.py": BOM + b"import aiter  # kernlint: ignore[PY001]\nimport aiter.x\n",
            "bom_only.py": BOM + b"import aiter\n",
        },
    )
    got = sorted((f["path"], f["line"], f["code"]) for f in findings)
    assert got == [("bom.py", 2, "PY001"), ("bom_only.py", 1, "PY001")]
    (only,) = [f for f in findings if f["path"] == "bom_only.py"]
    assert (only["column"], only["end_column"]) == (2, 14)  # `import aiter`, after the BOM


@pytest.mark.parametrize("eol", [b"\r", b"\r\n", b"\n"])
def test_line_endings_do_not_change_findings(tmp_path, eol):
    lines = [
        b"import os",
        b"import aiter",
        b"x = 1  # kernlint: ignore[PY001]",
        b"import aiter.ops  # kernlint: ignore[PY001]",
        b'"""a',
        b"import aiter.doc",
        b'"""',
        b"def f():",
        b"    import aiter.fn",
        b"",
    ]
    # (the lexical policy reports the function-local import too: a finding on the last line)
    lexical = b'aiter-import-policy = "lexical"\n'
    findings, _ = _check(tmp_path, {"e.py": eol.join(lines), "kernlint.toml": lexical})
    got = sorted((f["line"], f["column"], f["code"]) for f in findings)
    assert got == [(2, 1, "PY001"), (3, 10, "KL001"), (9, 5, "PY001")]


def test_misspelt_directives_are_reported(tmp_path):
    data = (
        b"import aiter  # kernlint: ignore-nextline[PY001]\n"
        b"import aiter.a  # kernlint: ignore_file[PY001]\n"
        b"import aiter.b  # kernlint: ignore-line[PY001]\n"
        b"import aiter.c  # kernlint:ignore [PY001]\n"
        b"import aiter.d  # kernlint: Ignore\n"
        b"# kernlint: the linter that reads this file\n"
        b's = "# kernlint: ignore_x[PY001]"\n'
    )
    findings, _ = _check(tmp_path, {"m.py": data})
    assert _codes(findings) == [
        (1, "KL002"),
        (1, "PY001"),
        (2, "KL002"),
        (2, "PY001"),
        (3, "KL002"),
        (3, "PY001"),
        (5, "KL002"),
        (5, "PY001"),
    ]
    messages = {f["line"]: f["message"] for f in findings if f["code"] == "KL002"}
    assert messages[1] == (
        "`kernlint: ignore-nextline` is not a suppression directive: "
        "the known ones are `ignore`, `ignore-next-line`, `ignore-file`"
    )
    assert "`kernlint: ignore_file`" in messages[2] and "`kernlint: Ignore`" in messages[5]


def test_misspelt_directive_in_cpp(tmp_path):
    data = b"int a = 0;  // kernlint: ignore-nextline[CU002]\n/* kernlint: ignorefile */\n"
    findings, _ = _check(tmp_path, {"m.cu": data})
    assert [(f["line"], f["code"]) for f in findings if f["code"] == "KL002"] == [
        (1, "KL002"),
        (2, "KL002"),
    ]


# -- the comment lexer is tokenize's --------------------------------------------------------------
TRICKY = [
    b"x = 1  # c\n",
    b"s = '#' + \"#\"  # real\n",
    b"s = '''a # not\n# not\n'''  # yes\n",
    b's = """a\\""" # not\n"""  # yes\n',
    b"s = 'a\\\nb # not'  # yes\n",
    b"s = 'a\\\r\nb # not'  # yes\r\n",
    b"s = r'\\'' # yes\n",
    b"s = rb'x' f'{y}' u'#'  # yes\n",
    b"x = 'unterminated # yes\ny = 2  # yes\n",
    b"if x:\n    y = 1\n  z = 2  # after a bad dedent\n",
    b"s = '\xc3\xa9'  # \xc3\xa9 caf\xc3\xa9\nt = 1  # b\n",
    b"# -*- coding: latin-1 -*-\ns = '\xe9'  # \xe9\n",
    b"\xef\xbb\xbf# first\nx = 1  # second\n",
]


@pytest.mark.parametrize("data", TRICKY)
def test_comment_lexer_matches_tokenize(data):
    try:
        list(tokenize.tokenize(io.BytesIO(data).readline))
    except (tokenize.TokenError, SyntaxError):
        want = None  # tokenize gives up: the lexer still finds the real comments
    else:
        want = _tokenize_comment_ranges(data, len(data))
        if data.startswith(BOM):  # (the tokenize path counts line 1 after the BOM)
            want = [(s + 3, e + 3) if s < data.find(b"\n") else (s, e) for s, e in want]
    got = python_comment_ranges(data)
    assert all(data[s : s + 1] == b"#" for s, _ in got)
    if want is not None:
        assert got == want
    for s, e in got:
        assert b"not" not in data[s:e]


def test_lone_cr_lines():
    data = b"a\rb\r\nc\n\rd"
    assert python_line_starts(data) == [0, 2, 5, 7, 8]


# -- the guard queries agree with their definitions -----------------------------------------------
def test_guard_queries_match_the_path():
    src = GATES + (
        b"import aiter\n"
        b"assert _is_hip\n"
        b"if not _use_aiter:\n"
        b"    raise ImportError\n"
        b"import aiter.after_exit\n"
        b"def f(x):\n"
        b"    if _is_hip and x:\n"
        b"        import aiter.hip\n"
        b"    elif _use_aiter:\n"
        b"        import aiter.gated\n"
        b"    else:\n"
        b"        y = aiter.z if _is_cuda else (_use_aiter and aiter.w)\n"
        b"    try:\n"
        b"        import aiter.tried\n"
        b"    except ImportError:\n"
        b"        pass\n"
        b"    if x:\n"
        b"        if not _is_hip:\n"
        b"            return\n"
        b"        import aiter.late\n"
    )
    tree = ast.parse(src)
    guards = Guards(tree)
    reference = Guards(tree)  # a second instance: its answers come from `path` alone
    nodes = list(ast.walk(tree))
    for node in nodes:
        if not hasattr(node, "lineno"):
            continue
        path = reference.path(node)
        assert guards.aiter_gated(node) == any(reference.implies_aiter(t, p) for t, p in path), (
            ast.dump(node)
        )
        assert guards.hip_only(node) == any(p and hip_test(t) for t, p in path)
        assert guards.conditioned(node) == bool(path)
        for others in (True, False):
            values = [reference.cuda_value(t, others) for t, _ in path]
            want = True
            if any(v is not None and v != p for v, (_, p) in zip(values, path, strict=True)):
                want = False
            elif None in values:
                want = None
            assert guards.on_cuda(node, others) is want
        ancestors = reference.ancestors(node)
        funcs = [n for n in ancestors if isinstance(n, (ast.FunctionDef, ast.Lambda))]
        assert guards.enclosing_function(node) is (funcs[0] if funcs else None)
