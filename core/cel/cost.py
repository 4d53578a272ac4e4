"""Static cost of a rule (cel-go's cost estimator as apiextensions-apiserver uses it), computed
from the checked tree and the schema's size bounds.

Each node costs about what cel-go charges (a call 1, a select 1, a list literal 10, a map
literal 30, string work a tenth of a unit per character), a comprehension its range's largest
size times its body, and a rule its cost times the most values its schema node can have in one
object (the product of the enclosing arrays' and maps' largest sizes). Sizes are ``maxItems``,
``maxProperties`` and ``maxLength`` where declared, else what fits in the largest request.
Functions that build strings carry their result's largest size on (cel-go's ``replace``: the
target's length over the shortest text replaced, times the longest replacement), so a rule that
grows a bounded string step by step is refused for what building its last step costs (a tenth
of a unit per character built): its cost is what stops it, as the binding cannot interrupt an evaluation.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

from kplane.core.cel.checked import Node

PER_EXPRESSION_LIMIT = 10_000_000  # StaticEstimatedCostLimit
PER_CRD_LIMIT = 100_000_000  # StaticEstimatedCRDCostLimit
MAX_REQUEST_BYTES = 3 * 1024 * 1024  # the largest object a request may carry
_STRING_WORK = {"matches", "contains", "find", "findAll", "split", "replace",
                "lowerAscii", "upperAscii", "trim", "indexOf", "lastIndexOf", "charAt", "substring", "reverse",
                "url", "isURL", "quantity", "isQuantity", "ip", "isIP", "cidr", "isCIDR", "format", "quote",
                "base64.encode", "base64.decode", "string", "bytes"}
_BY_SMALLER = {"startsWith", "endsWith", "_==_", "_!=_", "_<_", "_<=_", "_>_", "_>=_"}  # work stops at the shorter
_LIST_WORK = {"@in", "isSorted", "sum", "min", "max", "join"}
_REGEX = {"matches", "find", "findAll"}


def _min_size(schema: dict[str, Any] | None) -> int:
    """The fewest bytes a value of ``schema`` takes in JSON, with its separator."""
    kind = (schema or {}).get("type")
    return 2 if kind in ("integer", "number", "boolean") else 3


def max_size(schema: dict[str, Any] | None) -> int:
    """The most characters, items or entries a value of ``schema`` can have."""
    schema = schema or {}
    kind = schema.get("type")
    if kind in ("integer", "number", "boolean"):
        return 1
    if kind == "string":
        return int(schema.get("maxLength", MAX_REQUEST_BYTES))
    if kind == "array":
        return int(schema.get("maxItems", MAX_REQUEST_BYTES // _min_size(schema.get("items"))))
    if kind == "object" and schema.get("properties") and "maxProperties" not in schema:
        return len(schema["properties"])
    return int(schema.get("maxProperties", MAX_REQUEST_BYTES // 4))


@dataclasses.dataclass(frozen=True, slots=True)
class _Est:
    cost: int
    size: int  # the largest length/size of the value
    schema: dict[str, Any] | None = None  # what the value is, when it comes from self


def _select(schema: dict[str, Any] | None, name: str) -> dict[str, Any] | None:
    if not schema:
        return None
    if name in (schema.get("properties") or {}):
        return schema["properties"][name]
    extra = schema.get("additionalProperties")
    return extra if isinstance(extra, dict) else None


def _element(schema: dict[str, Any] | None) -> dict[str, Any] | None:
    """What a comprehension's variable is over ``schema``: an array's items, or a map's keys."""
    if schema and schema.get("type") == "array":
        return schema.get("items")
    if schema and schema.get("type") == "object":
        return {"type": "string", "maxLength": MAX_REQUEST_BYTES}
    return None


_Scope = dict[str, tuple[dict[str, Any] | None, int]]  # variable: (schema, largest size)


def _tenth(n: int) -> int:
    return math.ceil(n * 0.1)


def _grown(node: Node, args: list[_Est], size: int) -> int:
    """The largest result of a call that builds a string longer than its receiver."""
    if node.name == "replace" and node.target and len(args) >= 3:
        target, old, new = args[0], node.args[1], args[2]
        shortest = len(old.value) if old.kind == "const" and isinstance(old.value, str) else 0
        if shortest == 0:  # an empty text replaced: the replacement goes between every character
            return (target.size + 1) * new.size + target.size
        return math.ceil(target.size / shortest) * new.size + target.size % shortest
    if node.name == "join" and node.target and args:
        element = _element(args[0].schema)
        each = max_size(element) if element else MAX_REQUEST_BYTES
        separator = args[1].size if len(args) > 1 else 0
        return args[0].size * (each + separator)
    if node.name == "quote" and args:
        return 2 * args[-1].size + 2
    if node.name == "base64.encode" and args:
        return math.ceil(args[-1].size / 3) * 4
    return size


class Estimator:
    def __init__(self, schema: dict[str, Any] | None) -> None:
        self.schema = schema

    def cost(self, node: Node) -> int:
        whole = (self.schema, max_size(self.schema))
        return self._est(node, {"self": whole, "oldSelf": whole}).cost

    @staticmethod
    def cost_of(node: Node, variables: dict[str, dict[str, Any] | None]) -> int:
        """The cost of ``node`` with each of ``variables`` of its schema (admission expressions:
        :func:`schema_of` the values at hand, so the bound is the one of this evaluation)."""
        return Estimator(None)._est(node, {name: (s, max_size(s)) for name, s in variables.items()}).cost

    def _est(self, node: Node, scope: _Scope) -> _Est:
        if node.kind == "const":
            return _Est(0, len(node.value) if isinstance(node.value, (str, bytes)) else 1)
        if node.kind == "ident":
            if node.name in scope:
                schema, size = scope[node.name]
                return _Est(1, size, schema)
            return _Est(1, MAX_REQUEST_BYTES)
        if node.kind == "select":
            operand = self._est(node.args[0], scope) if node.args else _Est(0, MAX_REQUEST_BYTES)
            field = _select(operand.schema, node.name)
            return _Est(operand.cost + 1, max_size(field) if field else MAX_REQUEST_BYTES, field)
        if node.kind == "list":
            parts = [self._est(a, scope) for a in node.args]
            return _Est(10 + sum(p.cost for p in parts), len(parts))
        if node.kind == "struct":
            parts = [self._est(p, scope) for pair in node.entries for p in pair]
            return _Est(30 + sum(p.cost for p in parts), len(node.entries))
        if node.kind == "comprehension":
            return self._comprehension(node, scope)
        return self._call(node, scope)

    def _call(self, node: Node, scope: _Scope) -> _Est:
        args = [self._est(a, scope) for a in node.args]
        cost = 1 + sum(a.cost for a in args)
        first = args[0].size if args else 0
        size = first
        if node.name in _REGEX and len(args) > 1:
            cost += _tenth(first + 10) * math.ceil(0.25 * max(args[1].size, 1))
            size = first
        elif node.name in _STRING_WORK:
            cost += _tenth(max((a.size for a in args), default=0))
        elif node.name in _BY_SMALLER and args:
            cost += _tenth(min(a.size for a in args))
        if node.name in _LIST_WORK or node.name.startswith("sets."):
            if node.name.startswith("sets."):
                cost += math.prod(max(a.size, 1) for a in args)
            else:  # ``x in list`` scans the list, the others their receiver
                cost += args[-1].size if node.name == "@in" and args else first
        if node.name == "_+_":
            cost += _tenth(sum(a.size for a in args))
            size = sum(a.size for a in args)
        grown = _grown(node, args, size)
        if grown != size:  # building the longer result is work too
            cost, size = cost + _tenth(grown), grown
        if node.name == "_[_]" and args:
            element = _select(args[0].schema, "") if args[0].schema and args[0].schema.get("type") == "object" else _element(args[0].schema)
            return _Est(cost, max_size(element) if element else MAX_REQUEST_BYTES, element)
        return _Est(cost, size)

    def _comprehension(self, node: Node, scope: _Scope) -> _Est:
        assert node.iter_range is not None
        over = self._est(node.iter_range, scope)
        inner = dict(scope)
        element = _element(over.schema)
        if node.iter_var2:  # two-variable form: index/key, value
            value = element if over.schema and over.schema.get("type") == "array" else _select(over.schema, "")
            inner[node.name] = (None, MAX_REQUEST_BYTES)
            inner[node.iter_var2] = (value, max_size(value) if value else MAX_REQUEST_BYTES)
        else:
            inner[node.name] = (element, max_size(element) if element else MAX_REQUEST_BYTES)
        init = self._est(node.accu_init, scope) if node.accu_init else _Est(0, 0)
        # the accumulator grows by at most one element a step (map, filter) or is what it was bound to
        inner[node.accu_var] = (init.schema, max(init.size, over.size))
        body = sum(self._est(p, inner).cost for p in (node.condition, node.step) if p is not None)
        result = self._est(node.result, inner).cost if node.result else 0
        return _Est(over.cost + init.cost + over.size * body + result, over.size)


def schema_of(value: Any) -> dict[str, Any]:
    """A schema whose bounds are ``value``'s own sizes (lists' items and maps' values merged),
    for :meth:`Estimator.cost_of` on values at hand rather than declared ones."""
    if isinstance(value, str):
        return {"type": "string", "maxLength": len(value)}
    if isinstance(value, bool):
        return {"type": "boolean"}
    if isinstance(value, (int, float)) or value is None:
        return {"type": "number"}
    if isinstance(value, (list, tuple)):
        items: dict[str, Any] | None = None
        for element in value:
            items = _merged(items, schema_of(element))
        return {"type": "array", "maxItems": len(value), "items": items or {"type": "number"}}
    if isinstance(value, dict):
        values: dict[str, Any] | None = None
        properties = {}
        for key, element in value.items():
            properties[key] = schema_of(element)
            values = _merged(values, properties[key])
        return {"type": "object", "maxProperties": len(value), "properties": properties,
                "additionalProperties": values or {"type": "number"}}
    return {}


def _merged(a: dict[str, Any] | None, b: dict[str, Any]) -> dict[str, Any]:
    """The bounds of values of either schema (the larger sizes, every property)."""
    if a is None:
        return b
    if a.get("type") != b.get("type"):
        return {}  # of no one type: sized as the largest request
    out = dict(a)
    for bound in ("maxLength", "maxItems", "maxProperties"):
        if bound in b:
            out[bound] = max(a.get(bound, 0), b[bound])
    if "items" in b:
        out["items"] = _merged(a.get("items"), b["items"])
    if "properties" in b:
        props = dict(a.get("properties") or {})
        for key, schema in b["properties"].items():
            props[key] = _merged(props.get(key), schema)
        out["properties"] = props
        out["additionalProperties"] = _merged(a.get("additionalProperties"), b["additionalProperties"])
    return out


def factor(cost: int, limit: int) -> str:
    """How kube words by how much a cost is over its limit."""
    ratio = cost / limit
    if ratio > 100:
        return "more than 100x"
    if ratio < 1.5:
        return f"{ratio:f}x"
    return f"{ratio:.1f}x"


def exceeds(name: str, cost: int, limit: int) -> str:
    return (f"{name} exceeds budget by factor of {factor(cost, limit)} (try simplifying the rule, or adding "
            "maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)")
