"""kernlint.python.unbound_scan, the fast paths of cuda-path-unbound-name: its statement walk
judges every binding as `Guards.on_cuda(binding, others=False)` does, and `build_scopes` gives
what `scopes.build` gives, in the same order (the rule's findings depend on both)."""

from __future__ import annotations

import ast
import textwrap

import pytest

from kernlint.python import parse
from kernlint.python.guards import Guards
from kernlint.python.scopes import build
from kernlint.python.unbound_scan import build_scopes, statement_bindings

HEAD = """\
from sglang.srt.utils import get_bool_env_var, is_cuda, is_hip

_is_hip = is_hip()
_is_cuda = is_cuda()
_use_aiter = get_bool_env_var("SGLANG_USE_AITER") and _is_hip
"""

SOURCES = {
    "statements": """
    if _use_aiter:
        from aiter import a1, a2 as b2
        import aiter.ops as ops, aiter
        (t1, [t2, *t3]) = 1, [2, 3]
        t4: int = 1
        t5 += 1
        del t6
        for f1, f2 in x:
            w1 = 1
        else:
            w2 = 2
        with ctx() as (c1, c2), other() as c3:
            pass
        try:
            tr1 = 1
        except (ValueError, KeyError) as e1:
            tr2 = 1
        else:
            tr3 = 1
        finally:
            tr4 = 1
        def fn(p1, /, p2=1, *args, k1=2, **kw):
            global g1
            g1 = p1
            inner = p1
            def nested():
                nonlocal inner
                inner = 2
            return inner
        class K(Base):
            attr = 1
            def m(self):
                return attr
    elif _is_cuda:
        a1 = 1
    else:
        z1 = 2
    if not _is_cuda:
        both = 1
    else:
        both = 2
    def exits(x):
        if x:
            early = 0
        if not _use_aiter:
            return
        late = 1
        while x:
            if _is_hip:
                continue
            looped = 2
        assert _is_hip, "ROCm only"
        checked = 2
        match x:
            case [m1, *m2] if m1:
                mm = 1
            case {"k": m3, **m4}:
                pass
            case P(m5, k=m6) | m7:
                pass
            case _ as m8:
                pass
        return early, late, looped, checked, mm
    def chain(x):
        if x == 1:
            v = 1
        elif x == 2 and _is_hip:
            v = 2
        elif _is_cuda:
            only_cuda_else = 1
        else:
            only_cuda_else = 2
        return v, only_cuda_else
    if not _is_hip:
        raise SystemExit
    after_exit = 1
    """,
    "assignment expressions": """
    def f(x, b=(d1 := 1) if _is_hip else 0, *, k=(d2 := 2)) -> (ann := int):
        v = (q1 := 1) if _is_hip else (q2 := 2)
        u = _is_hip and (q3 := 3) and (q4 := 4)
        u2 = (q5 := 5) and _is_hip
        o = _is_hip or (q6 := 6)
        lam = lambda a, b=(q7 := 7): (q8 := a) if _use_aiter else (q9 := b)
        comp = [(q10 := i) for i in range(3) if _is_hip]
        cond = [(q11 := i) if _is_hip else 0 for i in range(3)]
        while (q12 := next(it)) and _is_hip:
            wb = 1
        match x:
            case [m1] if not _is_cuda and (q13 := m1):
                pass
        if _is_hip:
            hip = (q14 := 1)
        return q1, q2, q3, q4, q5, q6, q8, q9, q10, q11, q12, q13, q14
    @deco((dq := 1) if _is_hip else 0)
    def decorated():
        pass
    class C(Base, metaclass=(mk := M) if _is_hip else M):
        pass
    """,
    "star import": """
    if _is_hip:
        from aiter import *
        hip_name = 1
    def g():
        if _is_hip:
            local = 1
        return local, hip_name
    """,
}


def _reference(tree, guards):
    """(on, only_off) as the rule judged them before the fast path: `scopes.build` and
    `Guards.on_cuda` binding by binding."""
    on, only_off = set(), set()
    for scope in build(tree):
        if scope.kind == "comprehension":
            continue
        key = id(scope.node)
        for name, bindings in scope.bindings.items():
            off = [guards.on_cuda(b, others=False) is False for b in bindings]
            if not all(off):
                on.add((key, name))
            elif (
                scope.kind != "class"
                and not scope.unknown
                and name not in scope.params
                and name not in scope.declared
            ):
                only_off.add((key, name))
    return on, only_off


def _names(pairs):
    return sorted(name for _key, name in pairs)


@pytest.mark.parametrize("name", sorted(SOURCES))
def test_statement_bindings_judge_as_on_cuda_does(name):
    data = (HEAD + textwrap.dedent(SOURCES[name])).encode()
    tree = parse(data)
    found = statement_bindings(tree, Guards(tree), data)
    assert found is not None
    on, only_off = _reference(tree, Guards(tree))
    assert _names(found.only_off) == _names(only_off)
    assert found.only_off == only_off and found.on == on


def test_statement_bindings_find_what_the_rule_needs():
    """The cases above are not vacuous: names bound only off CUDA, by statements and by `:=`
    under conditions, and names made safe by a binding on the CUDA path."""
    for name, expected, safe in [
        (
            "statements",
            {"b2", "ops", "aiter", "t1", "t3", "e1", "tr4", "fn", "K", "z1", "late", "checked"},
            {"a1", "both", "early", "v", "only_cuda_else", "g1", "p1"},
        ),
        (
            "assignment expressions",
            {"d1", "q1", "q3", "q4", "q8", "q11", "q13", "q14", "dq", "mk"},
            {"q2", "q5", "q6", "q7", "q9", "q10", "q12", "d2", "ann"},
        ),
        ("star import", {"local"}, {"hip_name"}),
    ]:
        data = (HEAD + textwrap.dedent(SOURCES[name])).encode()
        tree = parse(data)
        only_off = set(_names(statement_bindings(tree, Guards(tree), data).only_off))
        assert expected <= only_off, (name, expected - only_off)
        assert not safe & only_off, (name, safe & only_off)


@pytest.mark.parametrize(
    "source",
    [
        "def g():\n    try:\n        pass\n    except (e := ValueError):\n        pass\n",
        '_is_hip = 1\ndef g():\n    s = f"{(w := 1) if _is_hip else 0}"\n    return w\n',
    ],
)
def test_statement_bindings_leave_what_they_cannot_judge_to_the_guard_model(source):
    data = source.encode()
    tree = parse(data)
    assert statement_bindings(tree, Guards(tree), data) is None


def _shape(scopes):
    index = {id(s): i for i, s in enumerate(scopes)}
    return [
        (
            s.node,
            s.kind,
            None if s.parent is None else index[id(s.parent)],
            [(name, [id(b) for b in bs]) for name, bs in s.bindings.items()],
            sorted(s.params),
            sorted(s.declared),
            [(name, id(u)) for name, u in s.uses],
            s.unknown,
        )
        for s in scopes
    ]


@pytest.mark.parametrize("name", sorted(SOURCES))
def test_build_scopes_is_scopes_build(name):
    tree = parse((HEAD + textwrap.dedent(SOURCES[name])).encode())
    extra = ast.parse(
        textwrap.dedent(
            """
            x = {k: v for k, v in d.items() if k} | {**base, None: [*a, *b]}
            y = [[i, j] for i in r for j in s(i) if j > i]
            z = (lambda q, *, w=1: q(w))(obj.attr[1:2, ::3].call(k=v)["s"])
            print(f"{x!r:>{width}} {y}", sep=(yield_ if cond else other))
            """
        )
    )
    for t in (tree, extra):
        assert _shape(build_scopes(t)) == _shape(build(t))
