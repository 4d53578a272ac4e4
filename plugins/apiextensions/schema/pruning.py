"""What a custom resource keeps of what it was sent: ``pkg/apiserver/schema/pruning``,
``defaulting.PruneNonNullableNullsWithoutDefaults`` and ``objectmeta.Coerce``, in the order
kube-apiserver's decoder runs them, on a request's body and on what is read from storage.

* Fields a structural schema does not declare are dropped and reported (``spec.foo``,
  ``spec.items[0].bar``, sorted), for ``fieldValidation`` to reject, warn about or ignore. Kept
  undeclared: ``apiVersion``, ``kind`` and ``metadata`` of an ``x-kubernetes-embedded-resource``
  object, and what a ``x-kubernetes-preserve-unknown-fields: true`` node does not describe
  (the fields it declares are still pruned by their own schemas). ``additionalProperties``
  keeps every key, pruning its value by that schema (by none for ``true``).
* ``null`` where the schema neither allows it (``nullable``) nor has a ``default`` to put
  there is dropped, silently.
* The ``metadata`` of an embedded resource becomes ObjectMeta: unknown fields are dropped and
  reported (``spec.template.metadata.foo``); a malformed one is a 400 on a request
  (:class:`MalformedMetadata`) and is dropped field by field when read from storage.
"""

from __future__ import annotations

from typing import Any

from kplane.api import FieldError, ObjectMetaSchema, invalid, load, python_to_wire, shape_of

_META = shape_of(ObjectMetaSchema)
_TYPE_META = frozenset(("apiVersion", "kind", "metadata"))


class MalformedMetadata(ValueError):
    """An embedded resource's ``metadata`` that is not ObjectMeta (a request's 400)."""

    def __init__(self, error: FieldError) -> None:
        super().__init__(str(error))
        self.error = error


def prune(obj: dict[str, Any], schema: dict[str, Any] | None, *, from_storage: bool = False,
          resource: bool = True) -> list[str]:
    """Drop from a resource's fields (``obj``, in place, without its own ``apiVersion``, ``kind``
    and ``metadata``) what ``schema`` does not keep; returns the unknown fields' paths. Raises
    :class:`MalformedMetadata` for a request (not ``from_storage``) with bad embedded metadata.
    ``resource=False``: ``obj`` is any object of ``schema`` (a default), not a resource's root."""
    root = dict(schema or {})
    if resource:
        root["x-kubernetes-embedded-resource"] = True
    unknown: list[str] = []
    _prune(obj, root, "", unknown)
    unknown.sort()
    _drop_nulls(obj, root)
    embedded: list[str] = []
    _coerce(obj, root, "", embedded, from_storage, top=True)
    return unknown + sorted(embedded)


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _prune(value: Any, schema: dict[str, Any] | None, path: str, unknown: list[str]) -> None:
    if schema is not None and schema.get("x-kubernetes-preserve-unknown-fields"):
        _skip_prune(value, schema, path, unknown)
    elif isinstance(value, dict):
        if schema is None:
            unknown.extend(_join(path, k) for k in value)
            value.clear()
            return
        embedded = schema.get("x-kubernetes-embedded-resource")
        properties = schema.get("properties") or {}
        additional = schema.get("additionalProperties")
        for key in list(value):
            if embedded and key in _TYPE_META:
                continue
            declared = properties.get(key)
            if isinstance(declared, dict):
                _prune(value[key], declared, _join(path, key), unknown)
            elif additional is not None:
                _prune(value[key], additional if isinstance(additional, dict) else None, _join(path, key), unknown)
            else:
                unknown.append(_join(path, key))
                del value[key]
    elif isinstance(value, list):
        items = schema.get("items") if schema is not None else None
        for i, item in enumerate(value):
            _prune(item, items if isinstance(items, dict) else None, f"{path}[{i}]", unknown)


def _skip_prune(value: Any, schema: dict[str, Any] | None, path: str, unknown: list[str]) -> None:
    """Under ``x-kubernetes-preserve-unknown-fields``: only what the schema declares is pruned."""
    if schema is None:
        return
    if isinstance(value, dict):
        embedded = schema.get("x-kubernetes-embedded-resource")
        properties = schema.get("properties") or {}
        additional = schema.get("additionalProperties")
        for key, item in value.items():
            if embedded and key in _TYPE_META:
                continue
            declared = properties.get(key)
            if isinstance(declared, dict):
                _prune(item, declared, _join(path, key), unknown)
            elif additional is not None:
                _prune(item, additional if isinstance(additional, dict) else None, _join(path, key), unknown)
    elif isinstance(value, list):
        items = schema.get("items")
        for i, item in enumerate(value):
            _skip_prune(item, items if isinstance(items, dict) else None, f"{path}[{i}]", unknown)


def _field_schema(schema: dict[str, Any] | None, key: str) -> dict[str, Any] | None:
    if schema is None:
        return None
    declared = (schema.get("properties") or {}).get(key)
    if isinstance(declared, dict):
        return declared
    additional = schema.get("additionalProperties")
    return additional if isinstance(additional, dict) else None


def _drop_nulls(value: Any, schema: dict[str, Any] | None) -> None:
    """``PruneNonNullableNullsWithoutDefaults``."""
    if isinstance(value, dict):
        for key in list(value):
            child = _field_schema(schema, key)
            if value[key] is None and child is not None and not child.get("nullable") and "default" not in child:
                del value[key]
            else:
                _drop_nulls(value[key], child)
    elif isinstance(value, list):
        items = schema.get("items") if schema is not None else None
        for item in value:
            _drop_nulls(item, items if isinstance(items, dict) else None)


def _coerce(value: Any, schema: dict[str, Any] | None, path: str, unknown: list[str], drop: bool, top: bool = False) -> None:
    """``objectmeta.Coerce``: embedded resources' ``apiVersion``/``kind`` must be strings and
    their ``metadata`` ObjectMeta (the resource's own metadata is not in ``value``)."""
    if schema is None:
        return
    if isinstance(value, dict):
        if schema.get("x-kubernetes-embedded-resource") and not top:
            for key in ("apiVersion", "kind"):
                if key in value and not isinstance(value[key], str):
                    if not drop:
                        raise MalformedMetadata(invalid(_join(path, key), value[key], "must be a string"))
                    del value[key]
            if "metadata" in value:
                _coerce_metadata(value, path, unknown, drop)
        properties = schema.get("properties") or {}
        additional = schema.get("additionalProperties")
        for key, item in value.items():
            declared = properties.get(key)
            if isinstance(declared, dict):
                _coerce(item, declared, _join(path, key), unknown, drop)
            elif isinstance(additional, dict):
                _coerce(item, additional, f"{path}[{key}]", unknown, drop)
    elif isinstance(value, list):
        items = schema.get("items")
        for i, item in enumerate(value):
            _coerce(item, items if isinstance(items, dict) else None, f"{path}[{i}]", unknown, drop)


def _coerce_metadata(obj: dict[str, Any], path: str, unknown: list[str], drop: bool) -> None:
    where = _join(path, "metadata")
    meta = obj["metadata"]
    if meta is None:
        meta = {}  # decodes as an empty ObjectMeta
    if not isinstance(meta, dict):
        if not drop:
            raise MalformedMetadata(invalid(where, meta, f"expected map[string]interface{{}}, got {_go_type(meta)}"))
        del obj["metadata"]
        return
    loaded = load(_META, meta)
    if loaded.errors:
        if not drop:
            raise MalformedMetadata(invalid(where, meta, "; ".join(map(str, loaded.errors))))
        bad = {e.field.split(".", 1)[0].split("[", 1)[0] for e in loaded.errors}
        loaded = load(_META, {k: v for k, v in meta.items() if k not in bad})
    unknown.extend(f"{where}.{p}" for p in loaded.unknown)
    coerced = python_to_wire(_META, loaded.data)
    if coerced.get("creationTimestamp") is None:
        coerced.pop("creationTimestamp", None)  # a zero time is left out, as kube-apiserver does
    obj["metadata"] = coerced


def _go_type(value: Any) -> str:
    return {str: "string", bool: "bool", int: "int64", float: "float64", list: "[]interface {}"}.get(type(value), "<nil>")
