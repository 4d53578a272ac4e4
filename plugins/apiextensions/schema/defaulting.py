"""Defaulting: ``default`` values of a structural schema filled in (``pkg/apiserver/schema/defaulting``).

A field absent from an object, or ``null`` where the schema does not say ``nullable: true``,
takes its schema's default (a copy); objects, array items and ``additionalProperties`` values are
walked, so nested defaults apply inside what is there (and inside defaults just filled in).
"""

from __future__ import annotations

import copy
from typing import Any


def has_defaults(schema: dict[str, Any] | None) -> bool:
    """Whether ``schema`` declares a default anywhere (else :func:`default` never changes anything)."""
    if not isinstance(schema, dict):
        return False
    if "default" in schema:
        return True
    children = [*(schema.get("properties") or {}).values(), schema.get("items"), schema.get("additionalProperties")]
    return any(has_defaults(child) for child in children if isinstance(child, dict))


def default(value: Any, schema: dict[str, Any] | None) -> None:
    """Fill in the defaults ``schema`` declares under ``value``, in place."""
    if not isinstance(schema, dict):
        return
    if isinstance(value, dict):
        for key, prop in (schema.get("properties") or {}).items():
            if not isinstance(prop, dict):
                continue
            if "default" in prop and (key not in value or (value[key] is None and not prop.get("nullable"))):
                value[key] = copy.deepcopy(prop["default"])
            if key in value:
                default(value[key], prop)
        additional = schema.get("additionalProperties")
        if isinstance(additional, dict):
            declared = schema.get("properties") or {}
            for key, item in value.items():
                if key not in declared:
                    default(item, additional)
    elif isinstance(value, list):
        items = schema.get("items")
        if isinstance(items, dict):
            for item in value:
                default(item, items)
