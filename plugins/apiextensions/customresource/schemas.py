"""marshmallow schemas made from a CRD version's structural schema, for the parts of the server
that read a kind's shape rather than its objects: server-side apply (which fields are structs,
maps, associative lists keyed by what, sets, atomic: ``x-kubernetes-list-type``,
``-list-map-keys``, ``-map-type``) and OpenAPI.

OpenAPI publishes a custom resource as apiextensions-apiserver's builder does: the kind's
component is named after the reversed group (``com.example.stable.v1.CronTab``) and is the CRD's
schema as written, with ``apiVersion``, ``kind`` and ``metadata`` (ObjectMeta) set by the server.
Two things change on the way, as in Kubernetes:

* OpenAPI v3: an ``x-kubernetes-int-or-string`` node without the ``anyOf`` of integer and string
  gets it; a node with ``x-kubernetes-embedded-resource`` gets ``apiVersion``, ``kind`` and
  ``metadata`` properties and requires the first two;
* OpenAPI v2, which lacks them: ``allOf``/``anyOf``/``oneOf``/``not`` are dropped; a nullable node
  loses its type, items and properties (and is no longer required by its parent); a node keeping
  unknown fields loses its items and properties (and ``type: object``); an array left without
  items loses its type; embedded resources get their properties unless they keep unknown fields.
  Defaults are left out of v2 by the server for every kind.

The kind's schema class carries its root keys (``openapi``, ``openapi_v2``) and its component name
(``openapi_name``); each top-level field carries its schema in metadata ``openapi`` and
``openapi_v2``. Nested schemas are left unnamed, inline, as Kubernetes publishes them.

The classes never load objects (custom resources are validated against the schema itself,
:mod:`kplane.plugins.apiextensions.schema.validation`) and are kept out of marshmallow's class
registry, which would otherwise hold every class made for every CRD version ever served.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Any

from kplane.api import ObjectMetaSchema, Schema, fields

_TYPE_META = ("apiVersion", "kind", "metadata")
_serial = itertools.count()
_OBJECT_META_REF = "#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
_METADATA_TEXT = ("Standard object's metadata. More info: "
                  "https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata")
_EMBEDDED_TYPE_META = {
    "apiVersion": {"description": (
        "apiVersion defines the versioned schema of this representation of an object. More info: "
        "https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#resources"),
        "type": "string"},
    "kind": {"description": (
        "kind is a string value representing the type of this object. In CamelCase. More info: "
        "https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds"),
        "type": "string"},
    "metadata": {"description": _METADATA_TEXT, "allOf": [{"$ref": _OBJECT_META_REF}]},
}
_INT_OR_STRING_ANY_OF = [{"type": "integer"}, {"type": "string"}]
_JUNCTORS = ("allOf", "anyOf", "oneOf", "not")
_PRESERVE = "x-kubernetes-preserve-unknown-fields"
# Flags Kubernetes writes only when true (Go's omitempty): ``nullable: false`` is not published.
_FLAGS = ("nullable", "uniqueItems", "exclusiveMaximum", "exclusiveMinimum", _PRESERVE, "x-kubernetes-embedded-resource",
          "x-kubernetes-int-or-string")


class _Unregistered(Schema):
    """The base of generated classes: out of marshmallow's class registry, so they go with their CRD."""

    class Meta(Schema.Meta):
        register = False


SELECTABLE_FIELDS = "x-kubernetes-selectable-fields"


def model_name(group: str, version: str, kind: str) -> str:
    """The component name Kubernetes gives a custom resource's kind: ``com.example.stable.v1.CronTab``."""
    return ".".join([*reversed(group.split(".")), version, kind])


def kind_schema(group: str, version: str, kind: str, schema: dict[str, Any] | None,
                selectable_fields: Sequence[str] = ()) -> type[Schema]:
    """The schema class of ``kind`` in ``group/version``: ``metadata`` as ObjectMeta, every other
    property of ``schema`` (the version's ``openAPIV3Schema``) as a field carrying its own
    OpenAPI, the root's other keys on the class, with the version's ``selectable_fields`` (their
    paths without the leading dot) as ``x-kubernetes-selectable-fields``, as Kubernetes publishes
    them (its list's too)."""
    module = f"kplane.customresources.{group}.{version}"
    declared: dict[str, Any] = {"metadata": fields.Nested(ObjectMetaSchema, metadata={"description": _METADATA_TEXT})}
    root = schema or {}
    properties = {key: prop for key, prop in (root.get("properties") or {}).items()
                  if key not in _TYPE_META and isinstance(prop, dict)}
    declared.update(_fields(properties, module, top=True))
    cls = _schema_class(kind, module, declared)
    own = {key: value for key, value in root.items() if key != "properties"}
    cls.openapi_name = model_name(group, version, kind)
    cls.openapi = _v3(own)
    cls.openapi_v2 = _v2(own)
    if selectable_fields:
        cls.openapi[SELECTABLE_FIELDS] = cls.openapi_v2[SELECTABLE_FIELDS] = [{"fieldPath": f} for f in selectable_fields]
    return cls


def _fields(properties: dict[str, Any], module: str, top: bool = False) -> dict[str, Any]:
    """One field per property, under an attribute name of its own (``p0``, ``p1``...): JSON names
    may be anything, including the names of a Schema's own methods (``fields``, ``load``)."""
    return {f"p{i}": _field(prop, key, module, top) for i, (key, prop) in enumerate(properties.items())
            if isinstance(prop, dict)}


def _schema_class(name: str, module: str, declared: dict[str, Any]) -> type[Schema]:
    return type(name, (_Unregistered,), {"__module__": module, **declared})


def _field(prop: dict[str, Any], key: str, module: str, top: bool = False) -> Any:
    """The field for one property: ``data_key`` is the JSON name itself (no camelCase mapping)."""
    metadata = _metadata(prop)
    if top:
        metadata["openapi"] = _v3(prop)
        metadata["openapi_v2"] = _v2(prop)
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
    """SMD's view of a node: an object with properties is a struct (keys it does not declare are
    typed by their values, as under ``x-kubernetes-preserve-unknown-fields``), one with
    ``additionalProperties`` a map, an untyped node (int-or-string, preserve-unknown) by its value."""
    kind = prop.get("type")
    if prop.get("x-kubernetes-int-or-string") or not kind:
        return fields.Raw(metadata=metadata)
    if kind == "object":
        properties = prop.get("properties") or {}
        additional = prop.get("additionalProperties")
        if properties:
            name = f"Object{next(_serial)}"
            return fields.Nested(_schema_class(name, module, _fields(properties, module)), metadata=metadata)
        if isinstance(additional, dict):
            return fields.Dict(keys=fields.Str(), values=_typed(additional, module, _metadata(additional)), metadata=metadata)
        return fields.Dict(metadata=metadata)
    if kind == "array":
        items = prop.get("items")
        inner = _typed(items, module, _metadata(items)) if isinstance(items, dict) else fields.Raw()
        if isinstance(inner, fields.Nested):
            return fields.Nested(inner.nested, many=True, metadata={**metadata, **_item_map_type(inner)})
        return fields.List(inner, metadata=metadata)
    return fields.Raw(metadata=metadata)


def _item_map_type(item: fields.Nested) -> dict[str, Any]:
    """An atomic struct as a list's item: the list's items are leaves then."""
    return {"list_type": "atomic"} if item.metadata.get("map_type") == "atomic" else {}


# -- the schema as OpenAPI publishes it ------------------------------------------------------------
def _children(node: dict[str, Any], convert: Any) -> dict[str, Any]:
    """``node`` with its sub-schemas (properties, items, additionalProperties) converted."""
    out = dict(node)
    if isinstance(out.get("properties"), dict):
        out["properties"] = {k: convert(v) if isinstance(v, dict) else v for k, v in out["properties"].items()}
    if isinstance(out.get("items"), dict):
        out["items"] = convert(out["items"])
    if isinstance(out.get("additionalProperties"), dict):
        out["additionalProperties"] = convert(out["additionalProperties"])
    return out


def _tidy(node: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in node.items() if key not in _FLAGS or value}


def _unfold(node: dict[str, Any]) -> dict[str, Any]:
    """An int-or-string node with the ``anyOf`` that says so (structural schema's ``Unfold``)."""
    node = _tidy(node)
    if not node.get("x-kubernetes-int-or-string"):
        return node
    all_of = node.get("allOf") or []
    if node.get("anyOf") == _INT_OR_STRING_ANY_OF or (all_of and all_of[0].get("anyOf") == _INT_OR_STRING_ANY_OF):
        return node
    if "anyOf" not in node:
        return {**node, "anyOf": [dict(s) for s in _INT_OR_STRING_ANY_OF]}
    return {**node, "allOf": [{"anyOf": [dict(s) for s in _INT_OR_STRING_ANY_OF]}, *all_of]}


def _embed(node: dict[str, Any]) -> dict[str, Any]:
    """An embedded resource's node with the server's ``apiVersion``, ``kind`` and ``metadata``."""
    if not node.get("x-kubernetes-embedded-resource"):
        return node
    required = list(node.get("required") or [])
    required += [key for key in ("kind", "apiVersion") if key not in required]
    return {**node, "properties": {**(node.get("properties") or {}), **_EMBEDDED_TYPE_META}, "required": required}


def _v3(node: dict[str, Any]) -> dict[str, Any]:
    return _embed(_unfold(_children(node, _v3)))


def _v2(node: dict[str, Any]) -> dict[str, Any]:
    out = {key: value for key, value in _unfold(node).items() if key not in _JUNCTORS}
    properties = out.get("properties") if isinstance(out.get("properties"), dict) else {}
    nullable = {key for key, prop in properties.items() if isinstance(prop, dict) and prop.get("nullable")}
    additional = out.get("additionalProperties")
    if "required" in out and (nullable or (isinstance(additional, dict) and additional.get("nullable"))):
        kept = [] if isinstance(additional, dict) and additional.get("nullable") else \
            [key for key in out["required"] if key not in nullable]
        if kept:
            out["required"] = kept
        else:
            del out["required"]
    if out.pop("nullable", False):
        for key in ("type", "items", "properties"):
            out.pop(key, None)
    if out.get(_PRESERVE):
        out.pop("items", None)
        out.pop("properties", None)
    if out.get("type") == "array" and "items" not in out:
        del out["type"]
    if out.get(_PRESERVE) and out.get("type") == "object":
        del out["type"]
    out = _children(out, _v2)
    return out if out.get(_PRESERVE) else _embed(out)
