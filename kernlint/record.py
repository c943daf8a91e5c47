"""Plain record classes: the part of `dataclasses` kernlint uses, at a fraction of the cost.

`import dataclasses` pulls in `inspect` (with `dis`, `tokenize`, `linecache`): about 8 ms at
every start-up, and each `@dataclass` takes 0.3 to 1.4 ms to build (one `exec` per generated
method, an `inspect.signature` for a class without a docstring): 18 ms of kernlint's serial
start-up, all before the first file is read. `record` builds the same methods from one small
`exec` per class.

    @record(frozen=True)
    class Span:
        kind: str
        start: int
        end: int = 0
        notes: list = field(default_factory=list, compare=False)

What is generated, as `dataclasses` would (fields are the class's own annotations, in order;
a method the class defines itself is kept):
- `__init__(self, kind, start, end=0, notes=<fresh list>)`;
- `__repr__`: `Span(kind='comment', start=1, end=2, notes=[])` (fields with `repr=True`);
- `__eq__`: same class and equal `compare=True` fields (`eq=True`, the default);
- `__hash__`: frozen and `eq`: hash of the compared fields; `eq` without `frozen`: None
  (unhashable); neither: object identity;
- frozen: assigning or deleting a field raises `FrozenInstanceError` (an AttributeError).
`replace(obj, **changes)` makes a copy with some fields changed, like `dataclasses.replace`.
Instances pickle as plain objects (the workers send findings back this way).
"""

from __future__ import annotations

__all__ = ["FrozenInstanceError", "field", "record", "replace"]


class FrozenInstanceError(AttributeError):
    """A field of a frozen record was assigned or deleted."""


class _Missing:
    __slots__ = ()

    def __repr__(self) -> str:
        return "<missing>"


_MISSING = _Missing()


class _Field:
    __slots__ = ("default", "default_factory", "compare", "repr")

    def __init__(self, default, default_factory, compare: bool, repr: bool) -> None:
        self.default = default
        self.default_factory = default_factory
        self.compare = compare
        self.repr = repr


def field(*, default=_MISSING, default_factory=_MISSING, compare=True, repr=True):
    """A field's options, as the class attribute's value: a default (or a factory for a
    mutable default), and whether it takes part in `==`/`hash` and in `repr`."""
    if default is not _MISSING and default_factory is not _MISSING:
        raise ValueError("a field cannot have both a default and a default_factory")
    return _Field(default, default_factory, compare, repr)


def _frozen_setattr(self, name, value):
    raise FrozenInstanceError(f"cannot assign to field {name!r}")


def _frozen_delattr(self, name):
    raise FrozenInstanceError(f"cannot delete field {name!r}")


def _build(cls, frozen: bool, eq: bool, slots: bool = False):
    own = cls.__dict__
    names = list(own.get("__annotations__", {}))
    fields = []
    for name in names:
        value = own.get(name, _MISSING)
        if isinstance(value, _Field):
            spec = value
        else:
            spec = _Field(value, _MISSING, True, True)
        fields.append((name, spec))
        # As with dataclasses: a plain default stays a class attribute; an explicit field()
        # leaves its default there (or nothing, for a factory). (With slots: no default is.)
        if isinstance(value, _Field) and not slots:
            if spec.default is _MISSING:
                delattr(cls, name)
            else:
                setattr(cls, name, spec.default)
    if slots:  # (a new class: slots cannot be added to one that exists)
        skip = {*names, "__dict__", "__weakref__"}
        ns = {k: v for k, v in own.items() if k not in skip}
        ns["__slots__"] = tuple(names)
        new = type(cls)(cls.__name__, cls.__bases__, ns)
        new.__qualname__ = cls.__qualname__
        cls, own = new, new.__dict__

    env = {"_MISSING": _MISSING, "_cls": cls, "_set": object.__setattr__}
    params, body = [], []
    seen_default = False
    for name, spec in fields:
        if spec.default_factory is not _MISSING:
            env[f"_f_{name}"] = spec.default_factory
            params.append(f"{name}=_MISSING")
            value = f"_f_{name}() if {name} is _MISSING else {name}"
            seen_default = True
        elif spec.default is not _MISSING:
            env[f"_d_{name}"] = spec.default
            params.append(f"{name}=_d_{name}")
            value = name
            seen_default = True
        else:
            if seen_default:
                raise TypeError(f"non-default field {name!r} follows a default field")
            params.append(name)
            value = name
        if frozen and slots:
            body.append(f"  _set(self, {name!r}, {value})")
        elif frozen:
            body.append(f"  _d[{name!r}] = {value}")
        else:
            body.append(f"  self.{name} = {value}")
    lines = [f"def __init__(self, {', '.join(params)}):" if params else "def __init__(self):"]
    if frozen and body and not slots:
        lines.append("  _d = self.__dict__")
    lines += body or ["  pass"]

    shown = [name for name, spec in fields if spec.repr]
    parts = ", ".join(f"{name}={{self.{name}!r}}" for name in shown)
    lines.append("def __repr__(self):")
    lines.append(f"  return f'{{self.__class__.__qualname__}}({parts})'")
    compared = [name for name, spec in fields if spec.compare]
    key = "(" + "".join(f"self.{name}, " for name in compared) + ")"
    other = "(" + "".join(f"other.{name}, " for name in compared) + ")"
    lines.append("def __eq__(self, other):")
    lines.append("  if other.__class__ is self.__class__:")
    lines.append(f"    return {key} == {other}")
    lines.append("  return NotImplemented")
    lines.append("def __hash__(self):")
    lines.append(f"  return hash({key})")
    exec("\n".join(lines), env)

    def put(name, value):
        if name not in own:
            setattr(cls, name, value)

    env["__init__"].__qualname__ = f"{cls.__qualname__}.__init__"
    put("__init__", env["__init__"])
    put("__repr__", env["__repr__"])
    if eq:
        put("__eq__", env["__eq__"])
        if "__hash__" not in own or own["__hash__"] is None:
            cls.__hash__ = env["__hash__"] if frozen else None
    if frozen:
        put("__setattr__", _frozen_setattr)
        put("__delattr__", _frozen_delattr)
    if slots:
        put("__getstate__", _slots_getstate)
        put("__setstate__", _slots_setstate)
    cls.__record_fields__ = tuple(name for name, _ in fields)
    return cls


def _slots_getstate(self):
    return tuple(getattr(self, name) for name in self.__record_fields__)


def _slots_setstate(self, state) -> None:
    for name, value in zip(self.__record_fields__, state, strict=True):
        object.__setattr__(self, name, value)  # (a frozen record's own setattr refuses)


def record(cls=None, /, *, frozen: bool = False, eq: bool = True, slots: bool = False):
    """Class decorator: `@record` or `@record(frozen=True)` (see the module's docs).
    `slots`: the instances have `__slots__` and no `__dict__` (a smaller object, for a class
    a run makes one of per file)."""

    def wrap(c):
        return _build(c, frozen, eq, slots)

    return wrap if cls is None else wrap(cls)


def replace(obj, /, **changes):
    """A new record of `obj`'s class with `changes` applied to its fields."""
    names = obj.__class__.__record_fields__
    for name in changes:
        if name not in names:
            raise TypeError(f"{obj.__class__.__qualname__} has no field {name!r}")
    values = {name: getattr(obj, name) for name in names}
    values.update(changes)
    return obj.__class__(**values)
