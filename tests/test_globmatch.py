"""kernlint's own gitignore-style matcher agrees with pathspec's GitIgnoreSpec."""

from __future__ import annotations

import itertools

import pathspec

from kernlint.globmatch import GitIgnoreMatcher

PATTERNS = [
    "**/kernels/jit/csrc/**",
    "**/kernels/jit/include/**",
    "!**/vendor/**",
    "!**/3rdparty/**",
    "**",
    "!**/not_jit/**",
    "build/",
    "*.cuh",
    "csrc/*.cu",
    "/top.py",
    "a/**/b",
    "doc?.md",
    "[ab]x.h",
    "dir",
    "x/y/",
    "**/z",
    "**/dist/",
    "/site",
    "bench*/data",
    "docs/images/*.png",
    "# a comment",
    "",
]
PATHS = [
    "kernels/jit/csrc/a.cuh",
    "x/kernels/jit/csrc/vendor/b.cuh",
    "kernels/jit/include/sgl_kernel/utils.cuh",
    "a.cuh",
    "build/x.o",
    "src/build/y",
    "csrc/m.cu",
    "q/csrc/m.cu",
    "top.py",
    "sub/top.py",
    "a/b",
    "a/c/d/b",
    "a/b/c",
    "doc1.md",
    "docs.md",
    "ax.h",
    "cx.h",
    "dir/f",
    "p/dir",
    "x/y/f",
    "x/y",
    "q/z",
    "z",
    "not_jit/a.cuh",
    "t/not_jit/b.cu",
    "kernels/jit/csrc/3rdparty/k.cu",
    "p/dist/q",
    "dist",
    "site/x",
    "q/site",
    "bench1/data",
    "docs/images/a.png",
    "docs/images/sub/a.png",
]


DIRS = ["build", "src/build", "dir", "x/y", "kernels/jit/csrc", "not_jit", "a/b", "p/dist", "site"]


def test_same_answers_as_pathspec():
    compared = 0
    for size in (1, 2, 3):
        for combo in itertools.combinations(PATTERNS, size):
            theirs = pathspec.GitIgnoreSpec.from_lines(combo)
            ours = GitIgnoreMatcher(combo)
            for path in PATHS + [p + "/" for p in DIRS]:
                assert ours.match_file(path) == theirs.match_file(path), (combo, path)
                # The three-way answer discovery uses for nested .gitignore files.
                assert ours.check(path) == theirs.check_file(path).include, (combo, path)
                compared += 1
    assert compared > 20000


def test_long_pattern_lists_agree_with_pathspec():
    """Consecutive patterns of one polarity are matched as combined regexes: long lists with
    runs of every kind of pattern and `!` between them decide as pathspec does."""
    import random

    rng = random.Random(7)
    plain = [p for p in PATTERNS if p and not p.startswith(("#", "!"))]
    compared = 0
    for _ in range(300):
        lines = []
        for _ in range(rng.randint(4, 30)):
            p = rng.choice(plain)
            lines.append("!" + p if rng.random() < 0.15 else p)
        theirs = pathspec.GitIgnoreSpec.from_lines(lines)
        ours = GitIgnoreMatcher(lines)
        for path in PATHS + [p + "/" for p in DIRS]:
            assert ours.check(path) == theirs.check_file(path).include, (lines, path)
            compared += 1
    assert compared > 9000


def test_a_pattern_git_cannot_compile_matches_nothing(tmp_path):
    from kernlint.globmatch import GitIgnoreMatcher

    m = GitIgnoreMatcher(["[z-a]", "*.tmp"])
    assert m.match_file("a.tmp") and not m.match_file("z")
    (tmp_path / ".gitignore").write_text("[z-a]\nskip.cu\n")
    (tmp_path / "kernlint.toml").write_text('jit-roots = ["**"]\n')  # (CU001 is JIT-scoped)
    (tmp_path / "skip.cu").write_text("// \u2014\n", encoding="utf-8")
    (tmp_path / "k.cu").write_text("// \u2014\n", encoding="utf-8")
    from cli_support import run

    p = run("check", "--no-cache", str(tmp_path))
    assert "Traceback" not in p.stderr
    assert p.returncode == 1 and "k.cu" in p.stdout and "skip.cu" not in p.stdout


def test_name_patterns_agree_with_pathspec():
    """Slash-free patterns are matched per path component: plain names by lookup, `*suffix`
    and `prefix*` by string comparison, the rest by regex; all decide as pathspec does."""
    patterns = [
        "__pycache__",
        "*.py[cod]",
        "*$py.class",
        "*.egg-info",
        ".coverage.*",
        "tmp*.txt",
        "env",
        "*.a",
        "lib*",
        "*",
        "a+b",
        "x{1}",
        "!keep.a",
    ]
    paths = [
        "__pycache__/m.pyc",
        "p/__pycache__",
        "m.pyc",
        "q/m.pyo",
        "m.py",
        "k$py.class",
        "kpy.class",
        "x.egg-info/PKG",
        "x.egg_info",
        ".coverage.1",
        ".coverage",
        "tmp1.txt",
        "tmp/x.txt",
        "env/bin",
        "envs",
        "lib.a",
        "keep.a",
        "libfoo/x",
        "a+b",
        "aab",
        "x{1}",
        "x",
        ".a",
        "d/",
    ]
    compared = 0
    for size in (1, 2, 3):
        for combo in itertools.combinations(patterns, size):
            theirs = pathspec.GitIgnoreSpec.from_lines(combo)
            ours = GitIgnoreMatcher(combo)
            for path in paths:
                assert ours.check(path) == theirs.check_file(path).include, (combo, path)
                compared += 1
    assert compared > 8000
