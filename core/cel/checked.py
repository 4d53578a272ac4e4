"""The syntax tree of a compiled expression, read from its serialized ``cel.expr.CheckedExpr``.

The CEL binding exposes no tree, only ``Expression.serialize()`` (a ``google.protobuf.Any``
holding the checked expression). Cost estimation needs the tree, so this reads the few messages
of ``cel/expr/syntax.proto`` it needs straight from the protobuf wire format.

It also writes one change back: :func:`with_own_calls` points the calls of a function the
binding runs slowly at kplane's implementation of it (declared by ``libraries.py``), for
``Env.deserialize`` to plan. The binding lets no function of the standard library be replaced,
and its ``matches`` compiles the pattern at every evaluation (70 ms a call for
``^\\p{L}{0,60}$``), where cel-go compiles a constant pattern once. :func:`tree` names such a
call by its CEL name.
"""

from __future__ import annotations

import dataclasses
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
    name: str = ""  # ident name, selected field, called function, iteration variable
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
    if 3 in f:
        return Node("const", value=_constant(_one(f, 3)))
    if 4 in f:
        return Node("ident", name=_text(_fields(_one(f, 4)), 1))
    if 5 in f:
        s = _fields(_one(f, 5))
        operand = (_node(_one(s, 1)),) if 1 in s else ()
        return Node("select", name=_text(s, 2), args=operand, test_only=bool(_one(s, 3, 0)))
    if 6 in f:
        c = _fields(_one(f, 6))
        receiver = (_node(_one(c, 1)),) if 1 in c else ()
        args = tuple(_node(a) for a in c.get(3, []))
        name = _text(c, 2)
        return Node("call", name=_CEL_NAMES.get(name, name), args=receiver + args, target=bool(receiver))
    if 7 in f:
        return Node("list", args=tuple(_node(e) for e in _fields(_one(f, 7)).get(1, [])))
    if 8 in f:
        entries = []
        for raw in _fields(_one(f, 8)).get(2, []):
            e = _fields(raw)
            key = _node(_one(e, 3)) if 3 in e else Node("const", value=_text(e, 2))
            entries.append((key, _node(_one(e, 4))))
        return Node("struct", entries=tuple(entries))
    if 9 in f:
        c = _fields(_one(f, 9))
        part = lambda n: _node(_one(c, n)) if n in c else None  # noqa: E731
        return Node("comprehension", name=_text(c, 1), iter_range=part(2), accu_var=_text(c, 3),
                    accu_init=part(4), condition=part(5), step=part(6), result=part(7), iter_var2=_text(c, 8))
    return Node("const")


def tree(serialized: bytes) -> Node:
    """The expression tree of ``Expression.serialize()``'s bytes."""
    wrapper = _fields(serialized)
    checked = _fields(_one(wrapper, 2, serialized))
    return _node(_one(checked, 4, b""))
