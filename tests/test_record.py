"""kernlint.record builds what `dataclasses` would: checked against dataclasses itself."""

from __future__ import annotations

import dataclasses
import pickle

import pytest

from kernlint.record import FrozenInstanceError, field, record, replace


def _reference(frozen: bool):
    """The class the tests build with `record`, written with `dataclasses`."""

    @dataclasses.dataclass(frozen=frozen)
    class Span:
        kind: str
        start: int
        end: int = 0
        notes: list = dataclasses.field(default_factory=list, compare=False)
        hidden: int = dataclasses.field(default=7, repr=False)

    return Span


@pytest.mark.parametrize("frozen", [False, True])
def test_same_behaviour_as_dataclasses(frozen):
    @record(frozen=frozen)
    class Span:
        kind: str
        start: int
        end: int = 0
        notes: list = field(default_factory=list, compare=False)
        hidden: int = field(default=7, repr=False)

    Ref = _reference(frozen)
    for args, kwargs in [
        (("comment", 1), {}),
        (("string", 2, 5), {"notes": [1]}),
        ((), {"kind": "c", "start": 0, "hidden": 1}),
    ]:
        a, b = Span(*args, **kwargs), Ref(*args, **kwargs)
        # (the qualified names differ: both classes are local to a function)
        assert repr(a).endswith(".Span(" + repr(b).partition(".Span(")[2])
        assert (a.kind, a.start, a.end, a.notes, a.hidden) == (
            b.kind,
            b.start,
            b.end,
            b.notes,
            b.hidden,
        )
    # Equality uses the compared fields only, and only within the class.
    assert Span("c", 1, notes=[1]) == Span("c", 1, notes=[2])
    assert Span("c", 1) != Span("c", 2)
    assert Span("c", 1) != Ref("c", 1)
    assert (Span("c", 1) == object()) is False
    # A default factory gives each instance its own object.
    x, y = Span("c", 1), Span("c", 1)
    assert x.notes == [] and x.notes is not y.notes
    # The plain default stays a class attribute, as with dataclasses.
    assert Span.end == Ref.end == 0
    assert not hasattr(Span, "notes") and not hasattr(Ref, "notes")
    with pytest.raises(TypeError):
        Span("c")
    with pytest.raises(TypeError):
        Span("c", 1, bogus=2)


def test_frozen_records_are_hashable_and_read_only():
    @record(frozen=True)
    class P:
        a: int
        b: str = "x"
        c: list = field(default=None, compare=False)

    p = P(1)
    assert hash(p) == hash(P(1, "x", c=[1, 2]))
    assert len({p, P(1), P(2)}) == 2
    with pytest.raises(FrozenInstanceError):
        p.a = 2
    with pytest.raises(AttributeError):
        del p.b
    assert p.a == 1


def test_mutable_records_are_unhashable_and_eq_false_keeps_identity():
    @record
    class M:
        a: int

    m = M(1)
    m.a = 3
    assert m == M(3)
    with pytest.raises(TypeError):
        hash(m)

    @record(eq=False)
    class Scope:
        name: str

    s = Scope("f")
    assert s != Scope("f") and s == s and hash(s) == object.__hash__(s)


def test_replace_and_pickle():
    @record(frozen=True)
    class Rule:
        code: str
        triggers: tuple = ()
        check: object = field(default=None, compare=False)

    globals()["Rule"] = Rule  # (pickle finds the class by its module and name)
    Rule.__qualname__ = "Rule"
    try:
        r = Rule("CU001", (b"x",))
        r2 = replace(r, triggers=(b"y",))
        assert (r2.code, r2.triggers) == ("CU001", (b"y",)) and r.triggers == (b"x",)
        with pytest.raises(TypeError, match="no field 'bogus'"):
            replace(r, bogus=1)
        back = pickle.loads(pickle.dumps(r2))
        assert back == r2 and back is not r2
        with pytest.raises(FrozenInstanceError):
            back.code = "x"
    finally:
        del globals()["Rule"]


def test_field_order_and_options_are_checked():
    with pytest.raises(TypeError, match="non-default field 'b'"):

        @record
        class Bad:
            a: int = 0
            b: int

    with pytest.raises(ValueError):
        field(default=1, default_factory=list)


def test_a_method_the_class_defines_is_kept():
    @record(frozen=True)
    class K:
        a: int

        def __repr__(self) -> str:
            return "custom"

    assert repr(K(1)) == "custom" and K(1) == K(1)


@record(frozen=True, slots=True)
class Slim:
    name: str
    size: int = 0
    tags: list = field(default_factory=list, compare=False)


@record(slots=True)
class SlimMutable:
    items: list = field(default_factory=list)


def test_slotted_records_have_no_dict_and_pickle():
    a = Slim("a", 2)
    assert not hasattr(a, "__dict__") and Slim.__slots__ == ("name", "size", "tags")
    assert (a.name, a.size, a.tags) == ("a", 2, []) and Slim("b").size == 0
    assert a == Slim("a", 2, ["ignored"]) and hash(a) == hash(Slim("a", 2))
    assert repr(a) == "Slim(name='a', size=2, tags=[])"
    with pytest.raises(FrozenInstanceError):
        a.size = 3
    with pytest.raises(AttributeError):
        a.other = 1  # (no __dict__ to hold it)
    b = pickle.loads(pickle.dumps(a))
    assert b == a and b.tags == [] and type(b) is Slim

    m = SlimMutable()
    m.items.append(1)
    m.items = [2]
    assert SlimMutable().items == [] and m.items == [2] and not hasattr(m, "__dict__")
    assert pickle.loads(pickle.dumps(m)).items == [2]
