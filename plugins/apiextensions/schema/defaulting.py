"""Defaulting: ``default`` values of a structural schema filled in (``pkg/apiserver/schema/defaulting``).

A property absent from an object, or ``null`` where its schema is not ``nullable``, takes its
schema's default (a copy); so does a ``null`` array item or ``additionalProperties`` value whose
schema has one. Objects, array items and ``additionalProperties`` values are walked, so nested
defaults apply inside what is there, and inside defaults just filled in. kube-apiserver runs this
after pruning, on a request's body and on every object read from storage, so an object stored
before a default was added reads with it.
"""

from __future__ import annotations

from typing import Any

import orjson


def has_defaults(schema: dict[str, Any] | None) -> bool:
    """Whether ``schema`` declares a default anywhere (else :func:`default` never changes anything)."""
    if not isinstance(schema, dict):
        return False
    if "default" in schema:
        return True
    children = [*(schema.get("properties") or {}).values(), schema.get("items"), schema.get("additionalProperties")]
    return any(has_defaults(child) for child in children if isinstance(child, dict))


def _copy(value: Any) -> Any:
    return value if value is None or isinstance(value, (str, int, float)) else orjson.loads(orjson.dumps(value))


def default(value: Any, schema: dict[str, Any] | None) -> None:
    """Fill in the defaults ``schema`` declares under ``value``, in place."""
    if not isinstance(schema, dict):
        return
    if isinstance(value, dict):
        properties = schema.get("properties") or {}
        for key, prop in properties.items():
            if isinstance(prop, dict) and "default" in prop and prop["default"] is not None:
                if key not in value or (value[key] is None and not prop.get("nullable")):
                    value[key] = _copy(prop["default"])
        additional = schema.get("additionalProperties")
        for key, item in value.items():
            prop = properties.get(key)
            if isinstance(prop, dict):
                default(item, prop)
            elif isinstance(additional, dict):
                if item is None and not additional.get("nullable"):
                    value[key] = item = _copy(additional.get("default"))
                default(item, additional)
    elif isinstance(value, list):
        items = schema.get("items")
        if isinstance(items, dict):
            for i, item in enumerate(value):
                if item is None and not items.get("nullable"):
                    value[i] = item = _copy(items.get("default"))
                default(item, items)
