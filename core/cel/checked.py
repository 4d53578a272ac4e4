"""The syntax tree of a compiled expression, read from its serialized ``cel.expr.CheckedExpr``.

The CEL binding exposes no tree, only ``Expression.serialize()`` (a ``google.protobuf.Any``
holding the checked expression). Cost estimation needs the tree, and kube's validators
(``validators.py``) the tree, the checker's types and the source positions, so this reads the few
messages of ``cel/expr/syntax.proto`` and ``checked.proto`` they need straight from the protobuf wire format.

It also writes one change back: :func:`with_own_calls` points the calls of a function the
binding runs slowly at kplane's implementation of it (declared by ``libraries.py``), for
``Env.deserialize`` to plan. The binding lets no function of the standard library be replaced,
and its ``matches`` compiles the pattern at every evaluation (70 ms a call for
``^\\p{L}{0,60}$``), where cel-go compiles a constant pattern once. :func:`tree` names such a
call by its CEL name.
"""

from __future__ import annotations

import dataclasses
import functools
import struct
from typing import Any

_Fields = dict[int, list[Any]]
_Record = tuple[int, int, Any]  # field number, wire type, value (bytes for length-delimited and fixed)

#: CEL function -> kplane's implementations of it: for a constant pattern, for a computed one
#: (``matches``: every call leaves the binding's RE2, which logs to stderr what it cannot fit).
OWN_CALLS = {"matches": ("kplane.matches", "kplane.matchesComputed"), "find": ("kplane.find", "find"),
             "findAll": ("kplane.findAll", "findAll")}
_CEL_NAMES = {own: name for name, owns in OWN_CALLS.items() for own in owns}


def own_name(function: str, constant: bool) -> str:
    """kplane's name for a call of ``function`` (a key of :data:`OWN_CALLS`) on a constant pattern or a computed one."""
    return OWN_CALLS[function][0 if constant else 1]


def _varint(data: bytes, pos: int) -> tuple[int, int]:
    result = shift = 0
    while True:
        byte = data[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return result, pos
        shift += 7


def _records(data: bytes) -> list[_Record]:
    """One message's fields, in order."""
    out: list[_Record] = []
    pos = 0
    while pos < len(data):
        key, pos = _varint(data, pos)
        number, wire = key >> 3, key & 7
        value: Any
        if wire == 0:
            value, pos = _varint(data, pos)
        elif wire == 1:
            value, pos = data[pos:pos + 8], pos + 8
        elif wire == 2:
            size, pos = _varint(data, pos)
            value, pos = data[pos:pos + size], pos + size
        elif wire == 5:
            value, pos = data[pos:pos + 4], pos + 4
        else:
            raise ValueError(f"unsupported wire type {wire}")
        out.append((number, wire, value))
    return out


def _fields(data: bytes) -> _Fields:
    """One message's fields by number; length-delimited ones stay bytes (parsed on demand)."""
    out: _Fields = {}
    for number, _, value in _records(data):
        out.setdefault(number, []).append(value)
    return out


def _varint_bytes(value: int) -> bytes:
    out = bytearray()
    while value > 0x7F:
        out.append(value & 0x7F | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def _encode(records: list[_Record]) -> bytes:
    out = bytearray()
    for number, wire, value in records:
        out += _varint_bytes(number << 3 | wire)
        if wire == 0:
            out += _varint_bytes(value)
        elif wire == 2:
            out += _varint_bytes(len(value)) + value
        else:
            out += value
    return bytes(out)


def _rewrite(data: bytes, parts: dict[int, Any]) -> bytes:
    """``data`` with each length-delimited field numbered in ``parts`` passed through its function."""
    return _encode([(n, w, parts[n](v) if w == 2 and n in parts else v) for n, w, v in _records(data)])


def _is_string_constant(expr: bytes) -> bool:
    constant = _fields(expr).get(3)
    return bool(constant) and 6 in _fields(constant[-1])


def _own_expr(data: bytes) -> bytes:
    return _rewrite(data, _EXPR_PARTS)


def _own_call(data: bytes) -> bytes:
    """A call of a function of :data:`OWN_CALLS`, renamed to kplane's for its pattern: a constant
    is compiled once, a pattern computed at run time at each call, as cel-go does. The runtime
    finds a function by its name and argument types: reference_map's overload ids stay as they were."""
    records = _records(data)
    name = next((v.decode() for n, w, v in records if n == 2 and w == 2), "")
    args = [v for n, w, v in records if n == 3 and w == 2]
    pattern = args[0 if any(n == 1 for n, _, _ in records) else 1:][:1]  # text.f(pattern, ...) or f(text, pattern)
    if name in OWN_CALLS and pattern:
        own = own_name(name, _is_string_constant(pattern[0])).encode()
        records = [(n, w, own) if n == 2 and w == 2 else (n, w, v) for n, w, v in records]
    return _rewrite(_encode(records), {1: _own_expr, 3: _own_expr})


# Expr's sub-expressions: select's operand, call, list elements, struct entries' keys and values,
# a comprehension's range, init, condition, step and result.
_EXPR_PARTS: dict[int, Any] = {
    5: lambda d: _rewrite(d, {1: _own_expr}),
    6: _own_call,
    7: lambda d: _rewrite(d, {1: _own_expr}),
    8: lambda d: _rewrite(d, {2: lambda e: _rewrite(e, {3: _own_expr, 4: _own_expr})}),
    9: lambda d: _rewrite(d, {n: _own_expr for n in (2, 4, 5, 6, 7)}),
}


def with_own_calls(serialized: bytes) -> bytes:
    """``Expression.serialize()``'s bytes with the calls of :data:`OWN_CALLS` renamed to kplane's functions."""
    return _rewrite(serialized, {2: lambda checked: _rewrite(checked, {4: _own_expr})})


@dataclasses.dataclass(frozen=True, slots=True)
class Node:
    """One expression: ``kind`` is const, ident, select, call, list, struct or comprehension."""

    kind: str
    id: int = 0  # the expression's id: its key in the source positions and the type map
    name: str = ""  # ident name, selected field, called function, iteration variable, a struct's message (a map: "")
    args: tuple[Node, ...] = ()  # call: receiver first when there is one; list: elements
    target: bool = False  # call: args[0] is the receiver
    test_only: bool = False  # select: has()
    value: Any = None  # const: the literal (str, bytes, int, float, bool or None)
    # comprehension parts
    iter_range: Node | None = None
    accu_init: Node | None = None
    condition: Node | None = None
    step: Node | None = None
    result: Node | None = None
    accu_var: str = ""
    iter_var2: str = ""
    entries: tuple[tuple[Node, Node], ...] = ()  # struct/map literal: (key, value)
    optional: frozenset[int] = frozenset()  # list: the indices of ``?x`` elements; struct: of ``?k: v`` entries

    def children(self) -> tuple[Node, ...]:
        """Every sub-expression: receiver and arguments, entries, a comprehension's parts."""
        parts = (*self.args, *(p for pair in self.entries for p in pair),
                 self.iter_range, self.accu_init, self.condition, self.step, self.result)
        return tuple(p for p in parts if p is not None)


def _one(fields: _Fields, number: int, default: Any = None) -> Any:
    return fields[number][-1] if number in fields else default


def _text(fields: _Fields, number: int) -> str:
    return bytes(_one(fields, number, b"")).decode()


def _constant(data: bytes) -> Any:
    f = _fields(data)
    if 2 in f:
        return bool(_one(f, 2))
    if 3 in f:
        raw = _one(f, 3)
        return raw - (1 << 64) if raw >= 1 << 63 else raw
    if 4 in f:
        return _one(f, 4)
    if 5 in f:
        return struct.unpack("<d", _one(f, 5))[0]
    if 6 in f:
        return _text(f, 6)
    if 7 in f:
        return bytes(_one(f, 7))
    return None


def _node(data: bytes) -> Node:
    f = _fields(data)
    expr_id = _one(f, 2, 0)
    if 3 in f:
        return Node("const", expr_id, value=_constant(_one(f, 3)))
    if 4 in f:
        return Node("ident", expr_id, name=_text(_fields(_one(f, 4)), 1))
    if 5 in f:
        s = _fields(_one(f, 5))
        operand = (_node(_one(s, 1)),) if 1 in s else ()
        return Node("select", expr_id, name=_text(s, 2), args=operand, test_only=bool(_one(s, 3, 0)))
    if 6 in f:
        c = _fields(_one(f, 6))
        receiver = (_node(_one(c, 1)),) if 1 in c else ()
        args = tuple(_node(a) for a in c.get(3, []))
        name = _text(c, 2)
        return Node("call", expr_id, name=_CEL_NAMES.get(name, name), args=receiver + args, target=bool(receiver))
    if 7 in f:
        items = _fields(_one(f, 7))
        optional = frozenset(_packed(items.get(2, [])))
        return Node("list", expr_id, args=tuple(_node(e) for e in items.get(1, [])), optional=optional)
    if 8 in f:
        entries, optional = [], set()
        created = _fields(_one(f, 8))
        for raw in created.get(2, []):
            e = _fields(raw)
            key = _node(_one(e, 3)) if 3 in e else Node("const", value=_text(e, 2))
            entries.append((key, _node(_one(e, 4))))
            if _one(e, 5, 0):
                optional.add(len(entries) - 1)
        return Node("struct", expr_id, name=_text(created, 1), entries=tuple(entries), optional=frozenset(optional))
    if 9 in f:
        c = _fields(_one(f, 9))
        part = lambda n: _node(_one(c, n)) if n in c else None  # noqa: E731
        return Node("comprehension", expr_id, name=_text(c, 1), iter_range=part(2), accu_var=_text(c, 3),
                    accu_init=part(4), condition=part(5), step=part(6), result=part(7), iter_var2=_text(c, 8))
    return Node("const", expr_id)


def _checked(serialized: bytes) -> _Fields:
    return _fields(_one(_fields(serialized), 2, serialized))


@functools.lru_cache(maxsize=1024)
def tree(serialized: bytes) -> Node:
    """The expression tree of ``Expression.serialize()``'s bytes (kept for the last 1,024: the
    validators, cost estimation and the callers of ``environment.compile`` read the same one)."""
    return _node(_one(_checked(serialized), 4, b""))


def _packed(values: list[Any]) -> list[int]:
    """A repeated integer field's values, packed (bytes) or not."""
    out: list[int] = []
    for value in values:
        if isinstance(value, int):
            out.append(value)
            continue
        pos = 0
        while pos < len(value):
            number, pos = _varint(value, pos)
            out.append(number)
    return out


@dataclasses.dataclass(frozen=True, slots=True)
class Source:
    """Where each expression of a checked expression starts in its source: code points from the
    start (``positions``, by expression id) and the offsets at which lines 2, 3, ... begin."""

    positions: dict[int, int]
    line_offsets: tuple[int, ...]

    def location(self, expr_id: int) -> tuple[int, int]:
        """Line (from 1) and column (from 0) of an expression, as cel-go reports them."""
        offset = self.positions.get(expr_id, 0)
        line, start = 1, 0
        for next_line in self.line_offsets:
            if next_line > offset:
                break
            line, start = line + 1, next_line
        return line, offset - start


def source(serialized: bytes) -> Source:
    """The source positions recorded in ``Expression.serialize()``'s bytes."""
    info = _fields(_one(_checked(serialized), 5, b""))
    positions = {}
    for entry in info.get(4, []):
        e = _fields(entry)
        positions[_one(e, 1, 0)] = _one(e, 2, 0)
    return Source(positions, tuple(_packed(info.get(3, []))))


#: cel.expr.Type's primitive and well-known type enums, by the names cel-go formats them with.
_PRIMITIVES = {1: "bool", 2: "int", 3: "uint", 4: "double", 5: "string", 6: "bytes"}
_WELL_KNOWN = {1: "any", 2: "timestamp", 3: "duration"}


@dataclasses.dataclass(frozen=True, slots=True)
class Type:
    """A checked expression's type: ``name`` as cel-go formats it, and its type parameters."""

    name: str
    params: tuple[Type, ...] = ()

    def __str__(self) -> str:
        return f"{self.name}({', '.join(map(str, self.params))})" if self.params else self.name


def _type(data: bytes) -> Type:
    f = _fields(data)
    if 3 in f:
        return Type(_PRIMITIVES.get(_one(f, 3), "!error!"))
    if 4 in f:
        return Type("wrapper", (Type(_PRIMITIVES.get(_one(f, 4), "!error!")),))
    if 5 in f:
        return Type(_WELL_KNOWN.get(_one(f, 5), "!error!"))
    if 6 in f:
        return Type("list", (_type(_one(_fields(_one(f, 6)), 1, b"")),))
    if 7 in f:
        m = _fields(_one(f, 7))
        return Type("map", (_type(_one(m, 1, b"")), _type(_one(m, 2, b""))))
    if 9 in f or 10 in f:
        return Type(_text(f, 9 if 9 in f else 10))
    if 11 in f:
        return Type("type", (_type(_one(f, 11)),))
    if 14 in f:
        a = _fields(_one(f, 14))
        return Type(_text(a, 1), tuple(_type(p) for p in a.get(2, [])))
    if 2 in f:
        return Type("null")
    if 12 in f:
        return Type("!error!")
    return Type("dyn")


def types(serialized: bytes) -> dict[int, Type]:
    """The type the checker gave each expression of ``Expression.serialize()``'s bytes, by id."""
    out = {}
    for entry in _checked(serialized).get(3, []):
        e = _fields(entry)
        out[_one(e, 1, 0)] = _type(_one(e, 2, b""))
    return out
