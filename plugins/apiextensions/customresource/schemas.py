"""marshmallow schemas made from a CRD version's structural schema, for the parts of the server
that read a kind's shape rather than its objects: server-side apply (which fields are structs,
maps, associative lists keyed by what, sets, atomic: ``x-kubernetes-list-type``,
``-list-map-keys``, ``-map-type``) and OpenAPI (each top-level field carries its schema verbatim,
so ``kubectl explain`` reads the CRD's own descriptions, formats and extensions).

They never load objects: custom resources are validated against the schema itself
(:mod:`kplane.plugins.apiextensions.schema.validation`).
"""

from __future__ import annotations

import itertools
from typing import Any

from kplane.api import ObjectMetaSchema, Schema, fields

_TYPE_META = ("apiVersion", "kind", "metadata")
_serial = itertools.count()


def kind_schema(group: str, version: str, kind: str, schema: dict[str, Any] | None) -> type[Schema]:
    """The schema class of ``kind`` in ``group/version``: ``metadata`` as ObjectMeta, every other
    property of ``schema`` (the version's ``openAPIV3Schema``) as a field carrying its own
    OpenAPI. Named after the kind, in a module named after the group-version, for OpenAPI's
    component names (``com.example.stable.v1.CronTab``)."""
    module = f"kplane.customresources.{group}.{version}"
    declared: dict[str, Any] = {"metadata": fields.Nested(ObjectMetaSchema, metadata={"description": (
        "Standard object's metadata. More info: "
        "https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata"
    )})}
    properties = {key: prop for key, prop in ((schema or {}).get("properties") or {}).items()
                  if key not in _TYPE_META and isinstance(prop, dict)}
    declared.update(_fields(properties, module, top=True))
    return _schema_class(kind, module, declared, (schema or {}).get("description"))


def _fields(properties: dict[str, Any], module: str, top: bool = False) -> dict[str, Any]:
    """One field per property, under an attribute name of its own (``p0``, ``p1``...): JSON names
    may be anything, including the names of a Schema's own methods (``fields``, ``load``)."""
    return {f"p{i}": _field(prop, key, module, top) for i, (key, prop) in enumerate(properties.items())
            if isinstance(prop, dict)}


def _schema_class(name: str, module: str, declared: dict[str, Any], description: str | None) -> type[Schema]:
    attrs: dict[str, Any] = {"__module__": module, "__doc__": description or None, **declared}
    return type(name, (Schema,), attrs)


def _field(prop: dict[str, Any], key: str, module: str, top: bool = False) -> Any:
    """The field for one property: ``data_key`` is the JSON name itself (no camelCase mapping)."""
    metadata = _metadata(prop)
    if top:
        metadata["openapi"] = prop
    field = _typed(prop, module, metadata)
    field.data_key = key
    return field


def _metadata(prop: dict[str, Any]) -> dict[str, Any]:
    metadata: dict[str, Any] = {"pointer": True}
    if "description" in prop:
        metadata["description"] = prop["description"]
    if "default" in prop:
        metadata["default"] = prop["default"]
    list_type = prop.get("x-kubernetes-list-type")
    if list_type:
        metadata["list_type"] = list_type
    if prop.get("x-kubernetes-list-map-keys"):
        metadata["list_map_keys"] = list(prop["x-kubernetes-list-map-keys"])
    if prop.get("x-kubernetes-map-type") == "atomic":
        metadata["map_type"] = "atomic"
    return metadata


def _typed(prop: dict[str, Any], module: str, metadata: dict[str, Any]) -> Any:
    kind = prop.get("type")
    if prop.get("x-kubernetes-int-or-string") or prop.get("x-kubernetes-embedded-resource") or not kind:
        return fields.Raw(metadata=metadata)
    if kind == "object":
        properties = prop.get("properties") or {}
        additional = prop.get("additionalProperties")
        if properties:
            name = f"Object{next(_serial)}"
            return fields.Nested(_schema_class(name, module, _fields(properties, module), None), metadata=metadata)
        if isinstance(additional, dict):
            return fields.Dict(keys=fields.Str(), values=_typed(additional, module, _metadata(additional)), metadata=metadata)
        return fields.Dict(metadata=metadata)
    if kind == "array":
        items = prop.get("items")
        inner = _typed(items, module, _metadata(items)) if isinstance(items, dict) else fields.Raw()
        if isinstance(inner, fields.Nested):
            return fields.Nested(inner.nested, many=True, metadata=metadata)
        return fields.List(inner, metadata=metadata)
    return fields.Raw(metadata=metadata)
