"""Kubernetes' JSONPath (client-go ``util/jsonpath``), the part a CRD's columns and selectable
fields use: one expression, evaluated with missing keys allowed.

    path = JSONPath.parse('.status.conditions[?(@.type=="Ready")].status')
    path.find(obj)  # every value it reaches, in order; [] when none

Supported: fields (``.a``, ``['a']``, ``\\.`` for a dot in a name), ``$`` and ``@``, indexes
and slices (``[0]``, ``[-1]``, ``[1:3]``, ``[::2]``), unions (``[0,2]``, ``['a','b']``),
wildcards (``.*``, ``[*]``), recursive descent (``..name``) and filters
(``[?(@.x)]``, ``[?(@.x == "y")]`` with ``== != < <= > >=`` against quoted strings, numbers,
``true``/``false`` or another path). As in client-go, a comparison of values of different types
is an error, and so is a filter over something that is not a list: the caller shows nothing.

It is written here rather than taken from a JSONPath library because those implement RFC 9535
or Goessner's dialect, whose filters, literals and missing-key rules differ from client-go's,
and columns must print what kube-apiserver prints. Paths come from a CRD (bounded by its size)
and are parsed once, when the CRD is served. An evaluation reaches at most
:data:`MAX_VALUES` values (recursive descent over a large object, or one chained: ``..a..a``),
then fails like any other evaluation error: a column's cell is empty rather than the event loop
busy for seconds on one hostile object.
"""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

Step = Callable[[Any, Any], Iterator[Any]]  # (value, root) -> the values it leads to

_OPERATORS = ("==", "!=", "<=", ">=", "<", ">")
_FIELD_END = set(" .,[]{}()=!<>|&\"'$@")
_INT = re.compile(r"-?\d+$")
_FLOAT = re.compile(r"-?(\d+\.\d*|\.\d+|\d+)([eE][-+]?\d+)?$")
MAX_VALUES = 10_000  # values one evaluation may reach, over all its steps


class JSONPathError(ValueError):
    """A path that does not parse, or a value it cannot evaluate on (client-go's errors)."""


@dataclass(frozen=True, slots=True)
class JSONPath:
    """One parsed expression; :meth:`find` evaluates it."""

    text: str
    steps: tuple[Step, ...]

    @classmethod
    def parse(cls, text: str) -> JSONPath:
        """The path of a column or selectable field (``.spec.replicas``); JSONPathError when it does not parse."""
        inner = text.strip()
        if inner.startswith("{") and inner.endswith("}"):
            inner = inner[1:-1]
        return cls(text, tuple(_Parser(inner).steps()))

    def find(self, obj: Any) -> list[Any]:
        """Every value the path reaches in ``obj``; JSONPathError where client-go's evaluation fails."""
        values = [obj]
        budget = MAX_VALUES
        for step in self.steps:
            reached: list[Any] = []
            for value in values:
                for found in step(value, obj):
                    reached.append(found)
                    budget -= 1
                    if budget < 0:
                        raise JSONPathError(f"{self.text}: more than {MAX_VALUES} values")
            values = reached
        return values

    def first(self, obj: Any) -> tuple[bool, Any]:
        """(found, value) of the first value reached; (False, None) when none is, or on an error."""
        try:
            found = self.find(obj)
        except JSONPathError:
            return False, None
        return (True, found[0]) if found else (False, None)


# -- steps ----------------------------------------------------------------------------------------
def _field(name: str) -> Step:
    def step(value: Any, root: Any) -> Iterator[Any]:
        if isinstance(value, dict) and name in value:
            yield value[name]
    return step


def _wildcard(value: Any, root: Any) -> Iterator[Any]:
    if isinstance(value, dict):
        yield from value.values()
    elif isinstance(value, list):
        yield from value


def _recursive(value: Any, root: Any) -> Iterator[Any]:
    """The value and everything beneath it (``..``); the next step picks from them."""
    pending = deque([value])
    while pending:
        current = pending.popleft()
        yield current
        if isinstance(current, dict):
            pending.extend(current.values())
        elif isinstance(current, list):
            pending.extend(current)


def _slice(start: int | None, stop: int | None, stride: int | None, single: bool) -> Step:
    def step(value: Any, root: Any) -> Iterator[Any]:
        if not isinstance(value, list):
            return
        length = len(value)
        if single:
            index = start + length if start is not None and start < 0 else start
            if index is not None and 0 <= index < length:
                yield value[index]
            return
        if stride == 0:
            raise JSONPathError("step must be > 0")
        yield from value[slice(start, stop, stride)]
    return step


def _union(steps: list[Step]) -> Step:
    def step(value: Any, root: Any) -> Iterator[Any]:
        for each in steps:
            yield from each(value, root)
    return step


@dataclass(frozen=True, slots=True)
class _Operand:
    path: JSONPath | None = None  # from @ (the item) or $ (the root)
    relative: bool = True
    literal: Any = None

    def values(self, item: Any, root: Any) -> list[Any]:
        if self.path is None:
            return [self.literal]
        return self.path.find(item if self.relative else root)


def _filter(left: _Operand, operator: str, right: _Operand | None) -> Step:
    def step(value: Any, root: Any) -> Iterator[Any]:
        if not isinstance(value, list):
            raise JSONPathError(f"{value!r} is not array or slice")
        for item in value:
            lefts = left.values(item, root)
            if right is None:
                if lefts:
                    yield item
                continue
            if not lefts:
                continue
            rights = right.values(item, root)
            if len(lefts) > 1 or len(rights) > 1:
                raise JSONPathError("can only compare one element at a time")
            if rights and _compare(lefts[0], operator, rights[0]):
                yield item
    return step


def _kind(value: Any) -> str:
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int"
    if isinstance(value, float):
        return "float"
    if isinstance(value, str):
        return "string"
    return "other"


def _compare(a: Any, operator: str, b: Any) -> bool:
    """client-go's template comparisons: values of one basic kind only; order for numbers and strings."""
    kind = _kind(a)
    if kind != _kind(b) or kind == "other":
        raise JSONPathError("incompatible types for comparison")
    if operator == "==":
        return bool(a == b)
    if operator == "!=":
        return bool(a != b)
    if kind == "bool":
        raise JSONPathError("invalid type for comparison")
    return {"<": a < b, "<=": a <= b, ">": a > b, ">=": a >= b}[operator]


# -- parsing --------------------------------------------------------------------------------------
class _Parser:
    def __init__(self, text: str) -> None:
        self.text, self.at = text, 0

    def fail(self, why: str) -> JSONPathError:
        return JSONPathError(f"{why} in {self.text!r} at {self.at}")

    def steps(self) -> Iterator[Step]:
        text = self.text
        if not text:
            raise self.fail("empty path")
        while self.at < len(text):
            char = text[self.at]
            if char in "$@" and self.at == 0:
                self.at += 1
            elif text.startswith("..", self.at):
                self.at += 1  # the next "." starts the field the descent looks for
                yield _recursive
            elif char == ".":
                self.at += 1
                if text.startswith("*", self.at):
                    self.at += 1
                    yield _wildcard
                elif self.at < len(text) and text[self.at] not in _FIELD_END:
                    yield _field(self.name())
                elif self.at < len(text) and text[self.at] == "[":
                    continue
                elif self.at < len(text):
                    raise self.fail("unexpected character")
            elif char == "[":
                yield self.bracket()
            elif char.isspace():
                self.at += 1
            else:
                raise self.fail("unrecognized character")

    def name(self) -> str:
        out = []
        text = self.text
        while self.at < len(text) and text[self.at] not in _FIELD_END:
            if text[self.at] == "\\" and self.at + 1 < len(text):
                self.at += 1
            out.append(text[self.at])
            self.at += 1
        return "".join(out)

    def bracket(self) -> Step:
        text = self.text
        end = self._closing(self.at)
        inner = text[self.at + 1:end].strip()
        self.at = end + 1
        if inner.startswith("?"):
            return self._filter(inner[1:].strip())
        if inner == "*":
            return _wildcard
        if not inner:
            raise self.fail("empty brackets")
        parts = [self._element(p.strip()) for p in _split(inner, ",")]
        return _union(parts) if len(parts) > 1 else parts[0]

    def _closing(self, start: int) -> int:
        """The index of the ``]`` closing the bracket at ``start``, quotes and nesting respected."""
        depth, quote = 0, ""
        for index in range(start, len(self.text)):
            char = self.text[index]
            if quote:
                if char == quote:
                    quote = ""
            elif char in "'\"":
                quote = char
            elif char == "[":
                depth += 1
            elif char == "]":
                depth -= 1
                if depth == 0:
                    return index
        raise self.fail("unterminated array")

    def _element(self, part: str) -> Step:
        if len(part) >= 2 and part[0] == part[-1] and part[0] in "'\"":
            return _field(part[1:-1])
        bounds = part.split(":")
        if len(bounds) > 3:
            raise self.fail(f"invalid array index {part}")
        try:
            numbers = [int(b) if b.strip() else None for b in bounds]
        except ValueError:
            raise self.fail(f"invalid array index {part}") from None
        numbers += [None] * (3 - len(numbers))
        return _slice(numbers[0], numbers[1], numbers[2], single=len(bounds) == 1)

    def _filter(self, inner: str) -> Step:
        if not (inner.startswith("(") and inner.endswith(")")):
            raise self.fail("unclosed filter")
        body = inner[1:-1].strip()
        split = _split_comparison(body)
        if split is None:
            return _filter(self._operand(body), "exists", None)
        left, operator, right = split
        return _filter(self._operand(left), operator, self._operand(right))

    def _operand(self, text: str) -> _Operand:
        text = text.strip()
        if not text:
            raise self.fail("empty filter operand")
        if text[0] in "@$":
            return _Operand(JSONPath.parse(text) if len(text) > 1 else JSONPath(text, ()), relative=text[0] == "@")
        if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
            return _Operand(literal=text[1:-1])
        if text in ("true", "false"):
            return _Operand(literal=text == "true")
        if _INT.match(text):
            return _Operand(literal=int(text))
        if _FLOAT.match(text):
            return _Operand(literal=float(text))
        raise self.fail(f"unrecognized filter operand {text}")


def _split(text: str, separator: str) -> list[str]:
    """``text`` split at ``separator`` outside quotes."""
    parts, current, quote = [], [], ""
    for char in text:
        if quote:
            quote = "" if char == quote else quote
        elif char in "'\"":
            quote = char
        elif char == separator:
            parts.append("".join(current))
            current = []
            continue
        current.append(char)
    parts.append("".join(current))
    return parts


def _split_comparison(text: str) -> tuple[str, str, str] | None:
    """(left, operator, right) of a filter's comparison, the operator outside quotes; None: an existence test."""
    quote = ""
    for index, char in enumerate(text):
        if quote:
            quote = "" if char == quote else quote
        elif char in "'\"":
            quote = char
        else:
            for operator in _OPERATORS:
                if text.startswith(operator, index):
                    return text[:index], operator, text[index + len(operator):]
    return None
