"""Patterns compiled on first use (kernlint.lazyre), and the start-up they keep cheap."""

from __future__ import annotations

import json
import os
import pickle
import re
import subprocess
import sys

from kernlint.lazyre import LazyPattern, lazy_compile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_a_lazy_pattern_answers_as_the_compiled_one():
    lazy = lazy_compile(rb"(?P<word>[a-z]+)_ci\b", re.I)
    real = re.compile(rb"(?P<word>[a-z]+)_ci\b", re.I)
    data = b"x = register_CUDA_ci(1); REGISTER_amd_ci(2)"
    assert lazy.search(data).group("word") == real.search(data).group("word")
    assert [m.span() for m in lazy.finditer(data)] == [m.span() for m in real.finditer(data)]
    assert lazy.findall(data) == real.findall(data)
    assert lazy.sub(b"-", data) == real.sub(b"-", data)
    assert lazy.split(data) == real.split(data)
    assert lazy.match(data) is None and real.match(data) is None
    assert lazy.fullmatch(b"amd_ci").group(1) == b"amd"
    assert lazy.groups == real.groups and lazy.groupindex == real.groupindex
    assert lazy.search(data, 20).span() == real.search(data, 20).span()  # (pos arguments)


def test_it_compiles_at_its_first_use_only():
    lazy = lazy_compile(r"a+b")
    assert "compiled" not in lazy.__dict__
    assert lazy.pattern == r"a+b" and lazy.flags == 0  # (read without compiling)
    assert "compiled" not in lazy.__dict__
    assert lazy.search("xaab").span() == (1, 4)
    assert isinstance(lazy.compiled, re.Pattern)
    # From then on the compiled pattern's own bound methods answer, the same object each time
    # (rules that share a pattern share its search by equality of that method).
    assert lazy.search is lazy.search
    assert lazy.search == lazy.compiled.search


def test_an_invalid_pattern_fails_at_its_first_use():
    lazy = lazy_compile(r"(unclosed")
    try:
        lazy.search("x")
    except re.error:
        pass
    else:
        raise AssertionError("an invalid pattern compiled")


def test_a_missing_attribute_is_an_attribute_error():
    lazy = lazy_compile(r"x")
    for name in ("no_such_method", "__no_such_dunder__"):
        try:
            getattr(lazy, name)
        except AttributeError:
            continue
        raise AssertionError(name)


def test_it_pickles_before_and_after_compiling():
    lazy = lazy_compile(rb"ab+")
    copy = pickle.loads(pickle.dumps(lazy))
    assert isinstance(copy, LazyPattern) and copy.search(b"xabb").span() == (1, 4)
    copy = pickle.loads(pickle.dumps(lazy))  # (now compiled: its bound methods go along)
    assert copy.search(b"ab").span() == (0, 2)


# Loading every shipped rule compiles no pattern of theirs: a rule module that compiled its
# patterns at import again would put their cost back into every run's start-up.
_LOAD = """
import json, re, sys
sys.path.insert(0, sys.argv[1])
import kernlint.registry as registry
compiled = []
real = re._compile
def counting(pattern, flags):
    compiled.append(repr(pattern)[:80])
    return real(pattern, flags)
re._compile = counting
registry.load_registry()
print(json.dumps(compiled))
"""


def test_loading_the_rules_compiles_no_pattern():
    out = subprocess.run(
        [sys.executable, "-c", _LOAD, ROOT], capture_output=True, text=True, check=True
    ).stdout
    compiled = json.loads(out)
    assert compiled == [], compiled
