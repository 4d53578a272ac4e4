"""The syntax tree of a compiled expression, read from its serialized ``cel.expr.CheckedExpr``.

The CEL binding exposes no tree, only ``Expression.serialize()`` (a ``google.protobuf.Any``
holding the checked expression). Cost estimation needs the tree, so this reads the few messages
of ``cel/expr/syntax.proto`` it needs straight from the protobuf wire format.
"""

from __future__ import annotations

import dataclasses
import struct
from typing import Any

_Fields = dict[int, list[Any]]


def _varint(data: bytes, pos: int) -> tuple[int, int]:
    result = shift = 0
    while True:
        byte = data[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return result, pos
        shift += 7


def _fields(data: bytes) -> _Fields:
    """One message's fields by number; length-delimited ones stay bytes (parsed on demand)."""
    out: _Fields = {}
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
        out.setdefault(number, []).append(value)
    return out


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
        return Node("call", name=_text(c, 2), args=receiver + args, target=bool(receiver))
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
