"""Defaulting: ``default`` values of a structural schema filled in (``pkg/apiserver/schema/defaulting``).

A property absent from an object, or ``null`` where its schema is not ``nullable``, takes its
schema's default (a copy); so does a ``null`` array item or ``additionalProperties`` value whose
schema has one. Objects, array items and ``additionalProperties`` values are walked, so nested
defaults apply inside what is there, and inside defaults just filled in. kube-apiserver runs this
after pruning, on a request's body and on every object read from storage, so an object stored
before a default was added reads with it.

What defaults add to one object is bounded (:data:`MAX_DEFAULTED_BYTES`, their JSON size): a
small body of ``null`` items under a large default would otherwise grow without limit on the
server (kube-apiserver's etcd refuses the result at 1.5 MiB; here it is refused before it is
built, with a 413).
"""

from __future__ import annotations

from typing import Any

import orjson

from kplane.api import errors

MAX_DEFAULTED_BYTES = 1536 * 1024  # etcd's default request limit, which a stored object must fit


class _Budget:
    __slots__ = ("left",)

    def __init__(self) -> None:
        self.left = MAX_DEFAULTED_BYTES

    def copy(self, value: Any) -> Any:
        """A copy of a default to put in place, counted against what defaults may add."""
        if value is None or isinstance(value, (bool, int, float)):
            self.left -= 8
        elif isinstance(value, str):
            self.left -= len(value) + 2
        else:
            encoded = orjson.dumps(value)
            self.left -= len(encoded)
            if self.left >= 0:
                value = orjson.loads(encoded)
        if self.left < 0:
            raise errors.too_large(MAX_DEFAULTED_BYTES)
        return value


def default(value: Any, schema: dict[str, Any] | None) -> None:
    """Fill in the defaults ``schema`` declares under ``value``, in place; a 413 APIError
    (``value`` left partly defaulted) past :data:`MAX_DEFAULTED_BYTES`."""
    _default(value, schema, _Budget())


def _default(value: Any, schema: dict[str, Any] | None, budget: _Budget) -> None:
    if not isinstance(schema, dict):
        return
    if isinstance(value, dict):
        properties = schema.get("properties") or {}
        for key, prop in properties.items():
            if isinstance(prop, dict) and "default" in prop and prop["default"] is not None:
                if key not in value or (value[key] is None and not prop.get("nullable")):
                    value[key] = budget.copy(prop["default"])
        additional = schema.get("additionalProperties")
        for key, item in value.items():
            prop = properties.get(key)
            if isinstance(prop, dict):
                _default(item, prop, budget)
            elif isinstance(additional, dict):
                if item is None and not additional.get("nullable"):
                    value[key] = item = budget.copy(additional.get("default"))
                _default(item, additional, budget)
    elif isinstance(value, list):
        items = schema.get("items")
        if isinstance(items, dict):
            for i, item in enumerate(value):
                if item is None and not items.get("nullable"):
                    value[i] = item = budget.copy(items.get("default"))
                _default(item, items, budget)
