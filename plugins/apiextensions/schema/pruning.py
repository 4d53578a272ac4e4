"""Pruning: fields a structural schema does not declare are dropped (``pkg/apiserver/schema/pruning``).

What is kept without being declared: ``apiVersion``, ``kind`` and ``metadata`` at the root of a
resource and of every ``x-kubernetes-embedded-resource`` object (their metadata is ObjectMeta,
checked elsewhere), and everything under ``x-kubernetes-preserve-unknown-fields: true`` that the
schema does not describe. Declared fields under such a node are still pruned by their own schemas.
"""

from __future__ import annotations

from typing import Any

_TYPE_META = ("apiVersion", "kind", "metadata")


def prune(obj: dict[str, Any], schema: dict[str, Any] | None, *, root: bool = True) -> list[str]:
    """Drop from ``obj`` (a resource's or an embedded object's fields, in place) what ``schema``
    does not declare; returns the dropped fields' paths (``spec.foo``, ``spec.items[0].bar``),
    as kube-apiserver reports them for ``fieldValidation``."""
    pruned: list[str] = []
    _prune_object(obj, schema or {}, "", pruned, root)
    return pruned


def _prune(value: Any, schema: dict[str, Any], path: str, pruned: list[str]) -> None:
    if isinstance(value, dict):
        _prune_object(value, schema, path, pruned, bool(schema.get("x-kubernetes-embedded-resource")))
    elif isinstance(value, list):
        items = schema.get("items")
        if isinstance(items, dict):
            for i, item in enumerate(value):
                _prune(item, items, f"{path}[{i}]", pruned)
        elif not schema.get("x-kubernetes-preserve-unknown-fields"):
            for i, item in enumerate(value):  # an array without items' schema: objects in it are empty
                if isinstance(item, dict):
                    _prune_object(item, {}, f"{path}[{i}]", pruned, False)


def _prune_object(obj: dict[str, Any], schema: dict[str, Any], path: str, pruned: list[str], root: bool) -> None:
    properties = schema.get("properties") or {}
    additional = schema.get("additionalProperties")
    preserve = bool(schema.get("x-kubernetes-preserve-unknown-fields"))
    for key in list(obj):
        where = f"{path}.{key}" if path else key
        if root and key in _TYPE_META:
            continue
        declared = properties.get(key)
        if isinstance(declared, dict):
            _prune(obj[key], declared, where, pruned)
        elif isinstance(additional, dict):
            _prune(obj[key], additional, where, pruned)
        elif not preserve and additional is not True:
            del obj[key]
            pruned.append(where)
