"""Versioned schemas: the wire format of one kind in one version.

Plugin schemas subclass :class:`Schema` and declare fields with Python names; the wire name is
the camelCase form unless a field sets ``data_key``. A schema is compiled once into a
:class:`Shape`, a plain tree of name mappings used on the hot paths (renaming keys between the wire
and Python forms, finding unknown fields) so marshmallow's validating ``load`` runs only on writes.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import marshmallow
from marshmallow import EXCLUDE, fields

from core.meta.errors import FieldError, FieldErrorType


def camel_case(name: str) -> str:
    """``container_port`` -> ``containerPort``; a trailing ``_`` escapes keywords (``continue_``)."""
    head, *rest = name.rstrip("_").split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


class Schema(marshmallow.Schema):
    """Base class of every versioned schema.

    Unknown fields are excluded by marshmallow and reported separately (see
    :func:`unknown_fields`), so the ``fieldValidation`` mode decides whether they are an error,
    a warning or nothing. ``null`` is accepted everywhere and means "not set", as in Go.
    """

    class Meta:
        unknown = EXCLUDE
        ordered = True

    def on_bind_field(self, field_name: str, field_obj: fields.Field) -> None:
        if field_obj.data_key is None:
            field_obj.data_key = camel_case(field_name)
        field_obj.allow_none = True


ONE, LIST, MAP = "one", "list", "map"


@dataclass(slots=True)
class FieldShape:
    attr: str
    key: str
    child: Shape | None  # set when the field holds schema-shaped values
    container: str  # ONE, LIST or MAP: how ``child`` values are held


@dataclass(slots=True)
class Shape:
    """The name mappings of one schema, compiled for speed."""

    name: str
    by_key: dict[str, FieldShape] = field(default_factory=dict)
    by_attr: dict[str, FieldShape] = field(default_factory=dict)


_shapes: dict[type, Shape] = {}


def _nested_schema(f: fields.Field) -> tuple[Schema | None, str]:
    if isinstance(f, fields.Nested):
        return f.schema, LIST if f.many else ONE
    if isinstance(f, fields.List) and isinstance(f.inner, fields.Nested):
        return f.inner.schema, LIST
    if isinstance(f, fields.Dict) and isinstance(f.value_field, fields.Nested):
        return f.value_field.schema, MAP
    return None, ONE


def shape_of(schema: Schema | type[Schema]) -> Shape:
    """The compiled :class:`Shape` of a schema (cached per class; recursive schemas are fine)."""
    cls = schema if isinstance(schema, type) else type(schema)
    shape = _shapes.get(cls)
    if shape is not None:
        return shape
    instance = schema() if isinstance(schema, type) else schema
    shape = _shapes[cls] = Shape(cls.__name__)
    for attr, f in instance.fields.items():
        nested, container = _nested_schema(f)
        fs = FieldShape(attr, f.data_key or attr, shape_of(nested) if nested else None, container)
        shape.by_key[fs.key] = fs
        shape.by_attr[attr] = fs
    return shape


def _convert(value: Any, fs: FieldShape, to_wire: bool) -> Any:
    if fs.child is None or value is None:
        return value
    convert = wire_to_python if not to_wire else python_to_wire
    if fs.container == ONE:
        return convert(fs.child, value) if isinstance(value, dict) else value
    if fs.container == LIST:
        return [convert(fs.child, v) if isinstance(v, dict) else v for v in value]
    return {k: convert(fs.child, v) if isinstance(v, dict) else v for k, v in value.items()}


def wire_to_python(shape: Shape, wire: dict[str, Any]) -> dict[str, Any]:
    """Rename wire keys to Python names, dropping unknown keys. No validation: the read path."""
    out = {}
    for key, value in wire.items():
        fs = shape.by_key.get(key)
        if fs is not None:
            out[fs.attr] = _convert(value, fs, False)
    return out


def python_to_wire(shape: Shape, data: dict[str, Any]) -> dict[str, Any]:
    """Rename Python names to wire keys in schema order, leaving out unset (None) values."""
    out = {}
    for attr, fs in shape.by_attr.items():
        value = data.get(attr)
        if value is not None:
            out[fs.key] = _convert(value, fs, True)
    return out


def unknown_fields(shape: Shape, wire: Any, path: str = "", skip: frozenset[str] = frozenset()) -> list[str]:
    """Paths of fields the schema does not declare, as kube-apiserver spells them (``spec.foo``)."""
    found: list[str] = []
    if not isinstance(wire, dict):
        return found
    for key, value in wire.items():
        if key in skip:
            continue
        fs = shape.by_key.get(key)
        where = f"{path}.{key}" if path else key
        if fs is None:
            found.append(where)
        elif fs.child is not None and value is not None:
            if fs.container == ONE:
                found += unknown_fields(fs.child, value, where)
            elif fs.container == LIST and isinstance(value, list):
                for i, item in enumerate(value):
                    found += unknown_fields(fs.child, item, f"{where}[{i}]")
            elif fs.container == MAP and isinstance(value, dict):
                for k, item in value.items():
                    found += unknown_fields(fs.child, item, f"{where}.{k}")
    return found


def _flatten(messages: Any, path: str, out: list[FieldError]) -> None:
    if isinstance(messages, dict):
        for key, sub in messages.items():
            if key == "_schema":
                _flatten(sub, path, out)
            elif isinstance(key, int):
                _flatten(sub, f"{path}[{key}]", out)
            else:
                _flatten(sub, f"{path}.{key}" if path else str(key), out)
    elif isinstance(messages, list):
        for message in messages:
            if isinstance(message, (dict, list)):
                _flatten(message, path, out)
            else:
                out.append(FieldError(FieldErrorType.TYPE_INVALID, path, str(message)))


def load(schema: Schema, wire: dict[str, Any]) -> tuple[dict[str, Any], list[FieldError]]:
    """Validate the shape and types of ``wire``; returns Python-named data and the errors found."""
    try:
        return schema.load(wire), []
    except marshmallow.ValidationError as err:
        errors: list[FieldError] = []
        _flatten(err.messages, "", errors)
        return {}, errors
