"""Versioned schemas: the wire format of one kind in one version.

Plugin schemas subclass :class:`Schema` and declare fields with Python names; the wire name is
the camelCase form unless a field sets ``data_key``. A schema is compiled once into a
:class:`Shape`, a plain tree of name mappings and marshmallow fields used on the hot paths:

* :func:`load` validates a client's body. It visits only the fields present (marshmallow's own
  ``Schema.load`` visits every declared field, and a pod template declares well over a hundred),
  type-checks each with the schema's own marshmallow field, and reports unknown fields in the
  same pass. Schemas with ``@pre_load``/``@post_load``/``@validates_schema`` hooks are loaded by
  marshmallow itself, so their hooks run.
* :func:`wire_to_python` and :func:`python_to_wire` rename keys without validating: the read path.

:func:`python_to_wire` writes what Go's ``encoding/json`` writes for the Kubernetes type, so that
stored objects and responses have kube-apiserver's fields: unset fields are left out
(``omitempty``), except those Go always writes (:func:`always_written`): a struct held by value
(a ``Nested`` field without ``pointer: True`` metadata, such as ``status``, whose ``omitempty``
Go ignores) as its zero object, and a field whose metadata says ``omitempty: False`` (no
``omitempty`` in its JSON tag, or a ``metav1.Time`` held by value) as Go's zero value of its
type (:func:`kplane.core.runtime.fields.go_zero`). :func:`zero_object` is what Go writes for the empty
object.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import marshmallow
from marshmallow import EXCLUDE, ValidationError, fields

from kplane.core.meta.errors import FieldError, FieldErrorType
from kplane.core.runtime.objects import build, nesting, unbuild
from kplane.core.runtime.fields import INT32_MAX, INT32_MIN, INT64_MAX, INT64_MIN, Bool, Int, Int32, ReportsUnknown, Str, go_zero


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
    field: fields.Field
    child: Shape | None  # set when the field holds schema-shaped values
    container: str  # ONE, LIST or MAP: how ``child`` values are held
    written: bool = False  # Go writes it when unset (:func:`always_written`)
    zero: Any = None  # what Go writes then, for a field that is not a value struct
    # A leaf whose valid values load as they are (:func:`plain_leaf`): a value of this type
    # (within ``bounds``, for integers) is taken without marshmallow; any other goes through it.
    plain: type | None = None
    bounds: tuple[int, int] | None = None


@dataclass(slots=True)
class Shape:
    """The name mappings of one schema, compiled for speed."""

    schema: Schema
    by_key: dict[str, FieldShape] = field(default_factory=dict)
    by_attr: dict[str, FieldShape] = field(default_factory=dict)
    required: list[FieldShape] = field(default_factory=list)
    has_hooks: bool = False  # marshmallow must load it, so the hooks run
    # What other layers compute once per shape (the field manager's struct types), kept here so
    # that it lives exactly as long as the shape: schemas made at run time (custom resources)
    # come and go.
    derived: dict[Any, Any] = field(default_factory=dict)


_SHAPE = "__kplane_shape__"  # the class attribute holding a schema class's compiled Shape


def _nested_schema(f: fields.Field) -> tuple[Schema | None, str]:
    if isinstance(f, fields.Nested):
        return f.schema, LIST if f.many else ONE
    if isinstance(f, fields.List) and isinstance(f.inner, fields.Nested):
        return f.inner.schema, LIST
    if isinstance(f, fields.Dict) and isinstance(f.value_field, fields.Nested):
        return f.value_field.schema, MAP
    return None, ONE


def shape_of(schema: Schema | type[Schema]) -> Shape:
    """The compiled :class:`Shape` of a schema (cached on its class, so a class made at run time
    takes its shape with it when it goes; recursive schemas are fine)."""
    cls = schema if isinstance(schema, type) else type(schema)
    shape = cls.__dict__.get(_SHAPE)
    if shape is not None:
        return shape
    instance = schema() if isinstance(schema, type) else schema
    shape = Shape(instance, has_hooks=any(instance._hooks.values()))
    setattr(cls, _SHAPE, shape)
    for attr, f in instance.fields.items():
        nested, container = _nested_schema(f)
        fs = FieldShape(attr, f.data_key or attr, f, shape_of(nested) if nested else None, container)
        fs.written = always_written(f)
        fs.zero = go_zero(f)
        if nested is None:
            fs.plain, fs.bounds = plain_leaf(f)
        shape.by_key[fs.key] = fs
        shape.by_attr[attr] = fs
        if f.required:
            shape.required.append(fs)
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


#: The leaf fields whose ``deserialize`` returns a valid value unchanged: the type such a
#: value has, and the range of an integer. Exact classes only: a subclass may load otherwise.
_PLAIN_LEAVES: dict[type, tuple[type, tuple[int, int] | None]] = {
    fields.String: (str, None),
    Str: (str, None),
    Bool: (bool, None),
    Int: (int, (INT64_MIN, INT64_MAX)),
    Int32: (int, (INT32_MIN, INT32_MAX)),
}


def plain_leaf(f: fields.Field) -> tuple[type | None, tuple[int, int] | None]:
    """What lets :func:`load` take a leaf's value without marshmallow (its type and bounds),
    or ``(None, None)``: a field with validators, or one whose loading changes or checks more.
    Each request's leaves are most of a body; marshmallow's calls for each were most of a
    decode's time."""
    if f.validators or type(f) not in _PLAIN_LEAVES:
        return None, None
    return _PLAIN_LEAVES[type(f)]


def always_written(f: fields.Field) -> bool:
    """Whether Go writes the field even when it is unset: a struct held by value (Go ignores
    ``omitempty`` on structs), or a field whose metadata says ``omitempty: False``."""
    if f.metadata.get("omitempty", True) is False:
        return True
    return isinstance(f, fields.Nested) and not f.many and not f.metadata.get("pointer")


def _value_struct(fs: FieldShape) -> bool:
    return fs.child is not None and fs.container == ONE and not fs.field.metadata.get("pointer")


def python_to_wire(shape: Shape, data: dict[str, Any]) -> dict[str, Any]:
    """Rename Python names to wire keys in schema order, as Go's encoder writes the type: unset
    (None) values and empty lists are left out (``omitempty``, which every Kubernetes list field
    carries) unless Go always writes the field (module doc)."""
    out = {}
    for attr, fs in shape.by_attr.items():
        value = data.get(attr)
        if value is not None and (value != [] or fs.written):
            out[fs.key] = _convert(value, fs, True)
        elif fs.written:
            out[fs.key] = python_to_wire(fs.child, {}) if _value_struct(fs) else fs.zero  # type: ignore[arg-type]
    return out


def object_to_wire(shape: Shape, obj: Any) -> dict[str, Any]:
    """``python_to_wire(shape, unbuild(obj))`` of an internal object in one walk, without the
    Python-named dict in between: encoding is on every write (twice: the request's version for
    managedFields, the storage version) and on every read of an internal object."""
    plan = shape.derived.get((_TO_WIRE, type(obj)))
    if plan is None:
        plan = shape.derived[(_TO_WIRE, type(obj))] = _wire_plan(shape, type(obj))
    out = {}
    for attr, fs, nested, container in plan:
        value = getattr(obj, attr) if nested is not _ABSENT else None
        if value is None:
            if fs.written:
                out[fs.key] = python_to_wire(fs.child, {}) if _value_struct(fs) else fs.zero  # type: ignore[arg-type]
            continue
        if nested is not None:  # a dataclass (a value is never set where the class lacks the field)
            if fs.child is not None and container == fs.container:
                if container == ONE:
                    value = object_to_wire(fs.child, value)
                elif container == LIST:
                    value = [object_to_wire(fs.child, v) for v in value]
                else:
                    value = {k: object_to_wire(fs.child, v) for k, v in value.items()}
                if value != [] or fs.written:
                    out[fs.key] = value
                continue
            value = unbuild(value) if container == ONE else [unbuild(v) for v in value] if container == LIST else {
                k: unbuild(v) for k, v in value.items()}
        if value != [] or fs.written:
            out[fs.key] = _convert(value, fs, True)
    return out


_ABSENT: Any = object()  # a schema field the internal class does not have: always unset


def _wire_plan(shape: Shape, cls: type) -> list[tuple[str, FieldShape, Any, str]]:
    """Each field of ``shape`` in schema order, with what ``cls`` nests in it (or _ABSENT)."""
    held = nesting(cls)
    return [(attr, fs, *held.get(attr, (_ABSENT, ""))) for attr, fs in shape.by_attr.items()]


def wire_to_object(shape: Shape, cls: type, wire: dict[str, Any]) -> Any:
    """``build(cls, wire_to_python(shape, wire))`` in one walk, without the Python-named dict
    in between: what every stored object read into an internal one costs."""
    plan = shape.derived.get((_FROM_WIRE, cls))
    if plan is None:
        held = nesting(cls)
        plan = shape.derived[(_FROM_WIRE, cls)] = {
            key: (fs, *held[fs.attr]) for key, fs in shape.by_key.items() if fs.attr in held}
    kwargs = {}
    for key, value in wire.items():
        entry = plan.get(key)
        if entry is None or value is None:
            continue
        fs, nested, container = entry
        if nested is not None and fs.child is not None and container == fs.container:
            child = fs.child
            if container == ONE:
                value = wire_to_object(child, nested, value) if isinstance(value, dict) else build(nested, value)
            elif container == LIST:
                value = [wire_to_object(child, nested, v) if isinstance(v, dict) else build(nested, v) for v in value]
            else:
                value = {k: wire_to_object(child, nested, v) if isinstance(v, dict) else build(nested, v)
                         for k, v in value.items()}
        else:
            value = _convert(value, fs, False)
            if nested is not None:
                value = build(nested, value) if container == ONE else [build(nested, v) for v in value] if container == LIST else {
                    k: build(nested, v) for k, v in value.items()}
        kwargs[fs.attr] = value
    return cls(**kwargs)


_TO_WIRE, _FROM_WIRE = "to wire", "from wire"  # the keys of the plans in ``Shape.derived``


def zero_object(shape: Shape) -> dict[str, Any]:
    """The empty object of a schema as Go writes it: ``{"metadata": {"creationTimestamp": null},
    "spec": {"containers": null}, "status": {}}`` for a Pod. A new dict on every call."""
    return python_to_wire(shape, {})


def _flatten(messages: Any, path: str, out: list[FieldError]) -> None:
    """marshmallow's nested error messages as field errors with kube-style paths."""
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


@dataclass(slots=True)
class Loaded:
    """What :func:`load` found: the Python-named data, type errors and unknown field paths."""

    data: dict[str, Any]
    errors: list[FieldError]
    unknown: list[str]
    # The first container mismatch as apimachinery's unstructured converter words it
    # ("cannot restore map from string"): strategic merge patch errors quote it.
    conversion: str | None = None


def load(shape: Shape, wire: dict[str, Any], skip: frozenset[str] = frozenset()) -> Loaded:
    """Validate a client's object against its schema (``skip``: top-level keys to pass over)."""
    result = Loaded({}, [], [])
    result.data = _load(shape, {k: v for k, v in wire.items() if k not in skip} if skip else wire, "", result)
    return result


def _load(shape: Shape, wire: dict[str, Any], path: str, result: Loaded) -> dict[str, Any]:
    if shape.has_hooks:
        return _load_with_marshmallow(shape, wire, path, result)
    out: dict[str, Any] = {}
    for key, value in wire.items():
        where = f"{path}.{key}" if path else key
        fs = shape.by_key.get(key)
        if fs is None:
            result.unknown.append(where)
        elif value is None:
            out[fs.attr] = None
        elif type(value) is fs.plain and (fs.bounds is None or fs.bounds[0] <= value <= fs.bounds[1]):
            out[fs.attr] = value
        elif fs.child is None:
            try:
                if isinstance(fs.field, ReportsUnknown):
                    out[fs.attr], unknown = fs.field.load(value)
                    result.unknown += (f"{where}.{p}" for p in unknown)
                else:
                    out[fs.attr] = fs.field.deserialize(value, key, wire)
            except ValidationError as err:
                _flatten(err.messages, where, result.errors)
                go_kind = _go_container(fs.field)
                if go_kind and not isinstance(value, (dict, list)):
                    _conversion_error(go_kind, value, result)
        else:
            loaded = _load_nested(fs, value, where, result)
            if loaded is not None:
                out[fs.attr] = loaded
    for fs in shape.required:
        if wire.get(fs.key) is None:
            result.errors.append(FieldError(FieldErrorType.REQUIRED, f"{path}.{fs.key}" if path else fs.key))
    return out


def _load_nested(fs: FieldShape, value: Any, where: str, result: Loaded) -> Any:
    child = fs.child
    assert child is not None
    if fs.container == LIST:
        if not isinstance(value, list):
            return _type_error(where, "list", result, value, "slice")
        out: Any = [_load_item(child, item, f"{where}[{i}]", result) for i, item in enumerate(value)]
    elif not isinstance(value, dict):
        return _type_error(where, "object", result, value, "struct" if fs.container == ONE else "map")
    elif fs.container == ONE:
        out = _load(child, value, where, result)
    else:
        out = {k: _load_item(child, item, f"{where}.{k}", result) for k, item in value.items()}
    for validator in fs.field.validators:
        try:
            validator(out)
        except ValidationError as err:
            _flatten(err.messages, where, result.errors)
    return out


def _load_item(child: Shape, item: Any, where: str, result: Loaded) -> Any:
    if item is None:
        return None
    if not isinstance(item, dict):
        return _type_error(where, "object", result, item, "struct")
    return _load(child, item, where, result)


def _type_error(where: str, kind: str, result: Loaded, value: Any = None, go_kind: str = "") -> None:
    result.errors.append(FieldError(FieldErrorType.TYPE_INVALID, where, f"must be a JSON {kind}"))
    if go_kind:
        _conversion_error(go_kind, value, result)


def _conversion_error(go_kind: str, value: Any, result: Loaded) -> None:
    """Record the converter's message for a ``go_kind`` ("map", "slice", "struct") given ``value``."""
    if result.conversion is None:
        source = _reflect_kind(value)
        result.conversion = f"cannot restore struct from: {source}" if go_kind == "struct" else f"cannot restore {go_kind} from {source}"


def _go_container(f: fields.Field) -> str:
    """"map" or "slice" for leaf fields that are Go maps or slices; "" where the Go type is not
    known (an untyped ``Dict`` may stand for a struct, such as a pod's securityContext)."""
    if isinstance(f, fields.Dict) and f.key_field is not None:
        return "map"
    return "slice" if isinstance(f, fields.List) else ""


def _reflect_kind(value: Any) -> str:
    """The reflect.Kind Go's JSON decoding gives ``value`` (integers are int64, as kube decodes patches)."""
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int64"
    if isinstance(value, float):
        return "float64"
    if isinstance(value, list):
        return "slice"
    if isinstance(value, dict):
        return "map"
    return "string"


def _load_with_marshmallow(shape: Shape, wire: dict[str, Any], path: str, result: Loaded) -> dict[str, Any]:
    for key in wire:
        if key not in shape.by_key:
            result.unknown.append(f"{path}.{key}" if path else key)
    try:
        return shape.schema.load(wire)
    except ValidationError as err:
        _flatten(err.messages, path, result.errors)
        return {}
