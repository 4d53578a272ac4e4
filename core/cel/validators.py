"""What kube refuses in an expression that type-checks: cel-go's literal validators, which
k8s.io/apiserver's base environment adds (``cel.ASTValidators`` since 1.29), and the constant
patterns cel-go's regex optimisation cannot compile when a program is made.

- ``duration('1d')``, ``timestamp('2020-13-01T00:00:00Z')``: a conversion of a literal that
  would fail at every evaluation ("invalid duration argument", "invalid timestamp argument");
- ``self.matches('a(b')``: a constant pattern RE2 refuses ("invalid matches argument");
- ``[1, 'a']``, ``{'k': 1, 'j': 'x'}``: a list or map literal whose elements' types differ
  ("expected type 'int' but found 'string'"), except inside ``format``'s arguments;
- ``self.find('a(b')``, ``findAll``: kube's program instantiation fails
  (:class:`InstantiationError`).

kplane types a custom resource's objects as ``map(string, dyn)`` where kube knows each field's
type, so a ``dyn`` element matches any type here: what kube's typing would call a mismatch
among fields is left to kube's stricter checker, never refused when kube would take it.
"""

from __future__ import annotations

import functools
import json
from typing import Any

from kplane.core.cel import checked, regex

#: Calls whose list and map literals may mix types (cel-go's exemptions: ext's string
#: formatting and cel.@block).
_MIXED_ARGUMENTS = frozenset({"format", "cel.@block"})
_LITERAL_CHECKS = {"duration": "invalid duration argument", "timestamp": "invalid timestamp argument",
                   "matches": "invalid matches argument"}


class InstantiationError(RuntimeError):
    """An expression that checks but of which no program can be made (cel-go's ``env.Program``
    error): its message is the reason, as kube words it after "program instantiation failed: "."""


def check(env: Any, source: str, serialized: bytes, constructions: frozenset[int] = frozenset()) -> None:
    """Raise RuntimeError (the checker's wording, with the source excerpt) for what the
    validators refuse in a checked expression, or :class:`InstantiationError`.

    ``constructions``: offsets in ``source`` of map literals that stand for typed objects
    (kplane rewrites a mutation's ``Object{...}`` to one): neither they nor a literal holding
    one are checked for homogeneous types, as kube's typed objects are not."""
    root = checked.tree(serialized)
    where = checked.source(serialized)
    issues: list[tuple[int, str]] = []  # expression id, message
    refused_pattern: str | None = None
    types: dict[int, checked.Type] | None = None
    stack: list[tuple[checked.Node, bool]] = [(root, False)]
    while stack:
        node, mixed_allowed = stack.pop()
        if node.kind == "call":
            literal = _argument(node, 0)
            if literal is not None and node.name in _LITERAL_CHECKS and not _valid_literal(env, node.name, literal.value):
                issues.append((literal.id, _LITERAL_CHECKS[node.name]))
            pattern = _argument(node, 0)
            if node.name in ("find", "findAll") and refused_pattern is None and pattern is not None and isinstance(pattern.value, str):
                refused_pattern = _refusal(pattern.value)
            mixed_allowed = mixed_allowed or node.name in _MIXED_ARGUMENTS
        elif (node.kind == "list" or node.kind == "struct" and not node.name) and not mixed_allowed \
                and not _holds_construction(node, where, constructions):
            types = checked.types(serialized) if types is None else types
            issues.extend(_mismatches(node, types))
        stack.extend((child, mixed_allowed) for child in reversed(node.children()))
    if issues:
        raise RuntimeError(f"INVALID_ARGUMENT: {_display(source, where, issues)}")  # the binding's form
    if refused_pattern is not None:
        raise InstantiationError(refused_pattern)


def _holds_construction(node: checked.Node, where: checked.Source, constructions: frozenset[int]) -> bool:
    if not constructions:
        return False
    parts = (node, *node.args, *(value for _, value in node.entries))
    return any(part.kind == "struct" and where.positions.get(part.id) in constructions for part in parts)


def _argument(call: checked.Node, index: int) -> checked.Node | None:
    """The call's ``index``-th argument (the receiver not counted) when it is a literal."""
    args = call.args[1:] if call.target else call.args
    if len(args) > index and args[index].kind == "const":
        return args[index]
    return None


def _valid_literal(env: Any, function: str, value: Any) -> bool:
    if function == "matches":
        return not isinstance(value, str) or _refusal(value) is None
    return _converts(env, function, json.dumps(value) if isinstance(value, str) else repr(value))


@functools.lru_cache(maxsize=1024)
def _converts(env: Any, function: str, literal: str) -> bool:
    """Whether ``function(literal)`` evaluates: cel-go checks a literal conversion by running it."""
    try:
        return env.compile(f"{function}({literal})").eval(data={}).type().name() != "ERROR"
    except RuntimeError:
        return False


def _refusal(pattern: str) -> str | None:
    """RE2's refusal of a pattern, in Go's words, or None."""
    try:
        regex.compiled(pattern, constant=True)
    except ValueError as err:
        return str(err)
    return None


def _mismatches(node: checked.Node, types: dict[int, checked.Type]) -> list[tuple[int, str]]:
    """cel-go's homogeneous-literal check of one list or map literal: the first element whose
    type differs from the first one's; in a map, each key and value that differ."""
    if node.kind == "list":
        columns = [[(e.id, _element_type(types, e.id, i in node.optional)) for i, e in enumerate(node.args)]]
        first_only = True
    else:
        columns = [[(k.id, types.get(k.id)) for k, _ in node.entries],
                   [(v.id, _element_type(types, v.id, i in node.optional)) for i, (_, v) in enumerate(node.entries)]]
        first_only = False
    out = []
    for column in columns:
        expected = column[0][1] if column else None
        for expr_id, found in column[1:]:
            if expected is not None and found is not None and not _equivalent(expected, found):
                out.append((expr_id, f"expected type '{expected}' but found '{found}'"))
                if first_only:
                    break
    return out


def _element_type(types: dict[int, checked.Type], expr_id: int, optional: bool) -> checked.Type | None:
    found = types.get(expr_id)
    if optional and found is not None and found.name == "optional_type" and found.params:
        return found.params[0]
    return found


def _equivalent(a: checked.Type, b: checked.Type) -> bool:
    if a.name == "dyn" or b.name == "dyn":
        return True
    return a.name == b.name and len(a.params) == len(b.params) and all(map(_equivalent, a.params, b.params))


def _display(source: str, where: checked.Source, issues: list[tuple[int, str]]) -> str:
    """The issues as cel-go prints them: ``ERROR: <input>:line:column: message``, the source
    line and a caret under the column; in source order."""
    lines = source.split("\n")
    located = sorted((*where.location(expr_id), message) for expr_id, message in issues)
    out = []
    for line, column, message in located:
        text = lines[line - 1] if line <= len(lines) else ""
        out.append(f"ERROR: <input>:{line}:{column + 1}: {message}\n | {text}\n | {'.' * column}^")
    return "\n".join(out)
