"""Internal objects: building dataclasses from Python-named dicts and back.

Internal types are plain (slotted) dataclasses. A version whose shape equals the internal one
converts automatically through these two functions; hand-written conversions only reshape the
dict on the way in or out.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from typing import Any

# How a dataclass field holds nested dataclasses: (attribute, nested class or None, container).
_Plan = list[tuple[str, type | None, str]]
_plans: dict[type, _Plan] = {}


def _strip_optional(hint: Any) -> Any:
    if typing.get_origin(hint) in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(hint) if a is not type(None)]
        if len(args) == 1:
            return args[0]
    return hint


def _plan(cls: type) -> _Plan:
    plan = _plans.get(cls)
    if plan is None:
        hints = typing.get_type_hints(cls)
        plan = []
        for f in dataclasses.fields(cls):
            hint = _strip_optional(hints[f.name])
            origin, args = typing.get_origin(hint), typing.get_args(hint)
            if dataclasses.is_dataclass(hint):
                plan.append((f.name, hint, "one"))
            elif origin is list and args and dataclasses.is_dataclass(args[0]):
                plan.append((f.name, args[0], "list"))
            elif origin is dict and len(args) == 2 and dataclasses.is_dataclass(args[1]):
                plan.append((f.name, args[1], "map"))
            else:
                plan.append((f.name, None, "one"))
        _plans[cls] = plan
    return plan


def nesting(cls: type) -> dict[str, tuple[type | None, str]]:
    """Each field of an internal class: the dataclass it nests (or None) and how ("one",
    "list", "map"), as :func:`unbuild` reads it."""
    return {name: (nested, container) for name, nested, container in _plan(cls)}


def field_names(cls: type) -> dict[str, type | None]:
    """Each field of an internal class, with the dataclass it nests (or None)."""
    return {name: nested for name, nested, _ in _plan(cls)}


def build(cls: type, data: dict[str, Any]) -> Any:
    """A ``cls`` instance from Python-named data; None and absent values take the defaults."""
    kwargs = {}
    for name, nested, container in _plan(cls):
        value = data.get(name)
        if value is None:
            continue
        if nested is not None:
            if container == "one":
                value = build(nested, value)
            elif container == "list":
                value = [build(nested, v) for v in value]
            else:
                value = {k: build(nested, v) for k, v in value.items()}
        kwargs[name] = value
    return cls(**kwargs)


def unbuild(obj: Any) -> dict[str, Any]:
    """Python-named data from an internal object, leaving out unset (None) fields."""
    out = {}
    for name, nested, container in _plan(type(obj)):
        value = getattr(obj, name)
        if value is None:
            continue
        if nested is not None:
            if container == "one":
                value = unbuild(value)
            elif container == "list":
                value = [unbuild(v) for v in value]
            else:
                value = {k: unbuild(v) for k, v in value.items()}
        out[name] = value
    return out
