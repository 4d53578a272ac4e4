"""How structured-merge-diff sees a schema field (its "atom"), derived once from our schemas.

Every walk over an object asks, at each field, whether it is a struct, a map, an associative
list, a set or atomic; this module answers from the compiled :class:`Shape` and caches the answer:

* a nested schema is a struct; a bare ``fields.Dict()`` stands for a Go struct the schema does
  not spell out: its keys are fields, its dict values are structs again and its lists atomic;
  ``fields.Raw()`` and keys missing from the schema take their type from the value the same way;
* a Dict with a value type (``StrMap``, quantities, a MAP of schemas) is a map;
* a list with ``list_type: "map"`` (or a merge strategy with a merge key) is an associative list
  keyed by ``list_map_keys`` (default ``[patch_merge_key]``); a key field missing from an item
  takes the item schema's ``metadata["default"]`` (as SMD uses OpenAPI defaults for
  ``protocol: TCP``); a list of scalars with ``list_type: "set"`` (or a merge strategy) is a set;
  any other list is atomic, and so is a Nested/Dict field whose metadata says
  ``map_type: "atomic"`` (``x-kubernetes-map-type``, e.g. ``LabelSelector`` in Kubernetes).

What Go's types say and JSON does not, schema metadata says: a nested schema held in a struct
field is a Go value struct (an Update never owns its ``.``) unless the field's metadata says
``pointer: True`` (``rollingUpdate``); a bare Dict is taken as a pointer struct (it owns its
``.``); a field Go writes when unset says ``omitempty: False`` (``containers``), so that a
create compares with the empty object as Go writes it (``kplane.core.runtime.schema.zero_object``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from marshmallow import fields as mfields

from kplane.core.runtime.gojson import go_json
from kplane.core.runtime.schema import LIST, ONE, FieldShape, Schema, Shape, shape_of, zero_object
from kplane.core.runtime.schema import MAP as MAP_CONTAINER


class _Missing:
    """An absent field (not the same as an explicit ``null``)."""

    def __repr__(self) -> str:
        return "MISSING"


MISSING: Any = _Missing()

# The kinds of field: SMD's atoms, plus UNTYPED (typed by the value it holds).
SCALAR, ATOMIC, STRUCT, MAP, ASSOC, SET, UNTYPED = range(7)
LEAVES = (SCALAR, ATOMIC)


class FieldType:
    """How SMD sees one field: kind, plus the struct's schema, the element type or list keys."""

    __slots__ = ("kind", "shape", "elem", "keys", "sorted_keys", "pointer", "_fields", "_zero")

    def __init__(
        self,
        kind: int,
        shape: Shape | None = None,
        elem: FieldType | None = None,
        keys: tuple[str, ...] = (),
        defaults: tuple[Any, ...] = (),
        pointer: bool = False,
    ) -> None:
        self.kind = kind
        self.pointer = pointer  # a struct a Go pointer field holds: it can be absent, so owned as a whole too
        self.shape = shape
        self.elem = elem
        self.keys = keys  # associative list keys, as declared
        # (quoted name + ":", name, default or MISSING), by name: how an item's key is written
        entries = ((go_json(k) + ":", k, d) for k, d in zip(keys, defaults))
        self.sorted_keys = tuple(sorted(entries, key=lambda e: e[1]))
        self._fields: dict[str, FieldType] | None = None
        self._zero: dict[str, Any] | None = None

    def field(self, key: str) -> FieldType:
        """The type of one struct field; undeclared fields are typed by their value."""
        if self.shape is None:
            return _UNTYPED_T
        fields = self._fields
        if fields is None:
            fields = self._fields = {k: _type_of_field(fs) for k, fs in self.shape.by_key.items()}
        return fields.get(key, _UNTYPED_T)

    def member(self, key: str) -> FieldType:
        """The type under ``key``: a map's value type, else the struct field's."""
        if self.kind == MAP:
            return self.item
        return self.field(key)

    @property
    def item(self) -> FieldType:
        """The element type of a map or list."""
        assert self.elem is not None
        return self.elem


_SCALAR_T = FieldType(SCALAR)
_ATOMIC_T = FieldType(ATOMIC)
_UNTYPED_T = FieldType(UNTYPED)
_BARE = FieldType(STRUCT)  # a struct the schema does not describe


def struct_type(shape: Shape, pointer: bool = False) -> FieldType:
    """The type of a struct described by ``shape`` (cached on the shape)."""
    key = (FieldType, pointer)
    t = shape.derived.get(key)
    if t is None:
        t = shape.derived[key] = FieldType(STRUCT, shape, pointer=pointer)
    return t


def _list_type(md: Mapping[str, Any], elem: FieldType) -> FieldType:
    list_type = md.get("list_type")
    merge = "merge" in (md.get("patch_strategy") or "").split(",")
    keys = tuple(md.get("list_map_keys") or ([md["patch_merge_key"]] if md.get("patch_merge_key") else ()))
    if list_type == "map" or (list_type is None and merge and keys):
        if not keys:
            return _ATOMIC_T
        item = _BARE if elem.kind == UNTYPED else elem
        if item.kind != STRUCT:
            return _ATOMIC_T
        defaults = tuple(_key_default(item, key) for key in keys)
        return FieldType(ASSOC, elem=item, keys=keys, defaults=defaults)
    if (list_type == "set" or (list_type is None and merge)) and elem.kind in (SCALAR, UNTYPED):
        return FieldType(SET, elem=_SCALAR_T)
    return _ATOMIC_T


def _key_default(item: FieldType, key: str) -> Any:
    fs = item.shape.by_key.get(key) if item.shape is not None else None
    return fs.field.metadata.get("default", MISSING) if fs is not None else MISSING


def _type_of_field(fs: FieldShape) -> FieldType:
    md = fs.field.metadata
    if md.get("map_type") == "atomic":
        return _ATOMIC_T
    if fs.child is not None:
        if fs.container == ONE:
            return struct_type(fs.child, bool(md.get("pointer")))
        if fs.container == MAP_CONTAINER:
            return FieldType(MAP, elem=struct_type(fs.child))
        assert fs.container == LIST
        return _list_type(md, struct_type(fs.child))
    return _type_of_marshmallow(fs.field)


def _type_of_marshmallow(f: mfields.Field[Any]) -> FieldType:
    md = f.metadata
    if md.get("map_type") == "atomic":
        return _ATOMIC_T
    if isinstance(f, mfields.Nested):
        schema = f.schema
        assert isinstance(schema, Schema)
        inner = struct_type(shape_of(schema))
        return _list_type(md, inner) if f.many else inner
    if isinstance(f, mfields.List):
        return _list_type(md, _type_of_marshmallow(f.inner))
    if isinstance(f, mfields.Dict):
        return _BARE if f.value_field is None else FieldType(MAP, elem=_type_of_marshmallow(f.value_field))
    if isinstance(f, mfields.Raw):
        return _UNTYPED_T
    return _SCALAR_T


def effective(t: FieldType, v: Any) -> tuple[int, FieldType]:
    """The kind a value is handled as: untyped values by their JSON type, mismatches as leaves."""
    kind = t.kind
    if kind == UNTYPED:
        if isinstance(v, dict):
            return STRUCT, _BARE
        return (ATOMIC if isinstance(v, list) else SCALAR), t
    if v is None or v is MISSING:
        return kind, t
    if kind in (STRUCT, MAP):
        return (kind if isinstance(v, dict) else ATOMIC), t
    if kind in (ASSOC, SET):
        return (kind if isinstance(v, list) else ATOMIC), t
    return kind, t


def is_value_struct(parent_kind: int, t: FieldType) -> bool:
    """A schema struct held as a struct field, not as a pointer: never absent in Go, so it
    never owns a ``.``."""
    return parent_kind == STRUCT and t.kind == STRUCT and t.shape is not None and not t.pointer


def empty_object(t: FieldType) -> dict[str, Any]:
    """The empty object as Go serializes it (``Creater.New``), the old side of a create: value
    structs are there and so are the fields Go always writes (``containers: null``), as the
    encoder writes them (``zero_object``). A write then owns ``containers``' items, not the list."""
    if t._zero is None:
        assert t.shape is not None
        t._zero = zero_object(t.shape)
    return t._zero
