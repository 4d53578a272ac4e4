"""Path elements of field paths: how list items are named, ordered and printed.

A path element is ``f:<field>``, ``k:<json of the key fields>`` for an associative-list item or
``v:<json>`` for a set item, written byte for byte as SMD writes them, because they are the keys
of the ``fieldsV1`` sets clients read and send back.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from functools import lru_cache, wraps
from typing import Any, ParamSpec, TypeVar

import orjson

from kplane.core.managedfields.fieldtypes import MISSING, SET, FieldType
from kplane.core.runtime.gojson import go_json

Path = list[str]


def key_pe(pairs: Iterable[tuple[str, Any]]) -> str:
    """``k:{"containerPort":80,"protocol":"TCP"}``: key fields sorted by name, compact JSON."""
    ordered = sorted(pairs, key=lambda p: p[0])
    return "k:{" + ",".join(go_json(name) + ":" + go_json(value) for name, value in ordered) + "}"


class TypedError(Exception):
    """An object that does not fit its schema's list semantics (SMD's ValidationError)."""

    def __init__(self, path: Sequence[str], message: str) -> None:
        super().__init__(f"{path_text(path)}: {message}")


# Path elements of list items, memoized for the length of one public call: every pass (merge,
# prune, compare) keys the same items again. Entries hold the item, so its id cannot be reused.
_item_pes: dict[tuple[int, int], tuple[Any, str]] = {}


P = ParamSpec("P")
R = TypeVar("R")


def one_call(fn: Callable[P, R]) -> Callable[P, R]:
    """Make ``fn`` a public call: the path elements it memoizes are forgotten when it returns."""

    @wraps(fn)
    def call(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return fn(*args, **kwargs)
        finally:
            _item_pes.clear()

    return call


def item_pe(item: Any, t: FieldType, path: Sequence[str], index: int) -> str:
    """The path element of list item ``index`` of ``path`` (a set or associative list of type ``t``)."""
    memo = (id(item), id(t))
    hit = _item_pes.get(memo)
    if hit is not None and hit[0] is item:
        return hit[1]
    pe = _set_item_pe(item, path, index) if t.kind == SET else _keyed_item_pe(item, t, path, index)
    _item_pes[memo] = (item, pe)
    return pe


def _set_item_pe(item: Any, path: Sequence[str], index: int) -> str:
    if isinstance(item, dict):
        raise TypedError(path, f"element {index}: associative list without keys has an element that's a map type")
    if isinstance(item, list):
        raise TypedError(path, f"element {index}: not supported: associative list with lists as elements")
    if item is None:
        raise TypedError(
            path, f"element {index}: associative list without keys has an element that's an explicit null"
        )
    return "v:" + go_json(item)


def _keyed_item_pe(item: Any, t: FieldType, path: Sequence[str], index: int) -> str:
    if item is None:
        raise TypedError(path, f"element {index}: associative list with keys may not have a null element")
    if not isinstance(item, dict):
        raise TypedError(path, f"element {index}: associative list with keys may not have non-map elements")
    parts = []
    for quoted, key, default in t.sorted_keys:  # already in name order, names already quoted
        value = item.get(key, MISSING)
        if value is MISSING:
            value = default
            if value is MISSING:
                continue
        parts.append(quoted + go_json(value))
    if not parts:
        listed = "[" + " ".join(go_json(k) for k in t.keys) + "]"
        raise TypedError(
            path,
            f"element {index}: associative list with keys has an element that omits all key fields {listed} "
            "(and doesn't have default values for any key fields)",
        )
    return "k:{" + ",".join(parts) + "}"


def index_items(items: list[Any], t: FieldType, path: Sequence[str]) -> dict[str, list[Any]]:
    """List items by path element, duplicates kept together in order."""
    out: dict[str, list[Any]] = {}
    for i, item in enumerate(items):
        out.setdefault(item_pe(item, t, path, i), []).append(item)
    return out


def _value_key(v: Any) -> tuple[Any, ...]:
    """SMD's total order of values: numbers, strings, bools, lists, maps, null."""
    if isinstance(v, bool):
        return (2, v)
    if isinstance(v, (int, float)):
        return (0, v)
    if isinstance(v, str):
        return (1, v)
    if isinstance(v, list):
        return (3, tuple(_value_key(x) for x in v))
    if isinstance(v, dict):
        return (4, tuple((k, _value_key(v[k])) for k in sorted(v)))
    return (5,)


@lru_cache(maxsize=16384)
def pe_key(pe: str) -> tuple[Any, ...]:
    """Sort key of a path element: ``.`` first, then fields, keys, values, indices (SMD order)."""
    if pe == ".":
        return (-1,)
    kind, body = pe[:2], pe[2:]
    if kind == "f:":
        return (0, body)
    if kind == "k:":
        return (1, tuple((k, _value_key(v)) for k, v in orjson.loads(body).items()))
    if kind == "v:":
        return (2, _value_key(orjson.loads(body)))
    return (3, int(body))


def _go_value_text(v: Any) -> str:
    """``value.ToString``: how SMD prints a key value in a path."""
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        text = repr(v)
        return text[:-2] if text.endswith(".0") else text
    if isinstance(v, str):
        return orjson.dumps(v).decode()
    if isinstance(v, list):
        return "[" + ",".join(_go_value_text(x) for x in v) + "]"
    return "".join(f"{k}={_go_value_text(x)}" for k, x in v.items())


def pe_text(pe: str) -> str:
    """One path element as ``fieldpath.Path.String`` prints it."""
    kind, body = pe[:2], pe[2:]
    if kind == "f:":
        return "." + body
    if kind == "k:":
        return "[" + ",".join(f"{k}={_go_value_text(v)}" for k, v in orjson.loads(body).items()) + "]"
    if kind == "v:":
        return "[=" + _go_value_text(orjson.loads(body)) + "]"
    return "[" + body + "]"


def path_text(path: Sequence[str]) -> str:
    """``.spec.template.spec.containers[name="nginx"].image``, as ``fieldpath.Path.String``."""
    return "".join(pe_text(pe) for pe in path)
