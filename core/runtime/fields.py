"""Field types for versioned schemas, strict the way Go's JSON decoder is strict.

marshmallow's stock Integer accepts ``"3"`` and its Boolean accepts ``"yes"``; a Kubernetes server
refuses both, and so do these. Every field accepts ``null`` as "not set", like Go's decoder.
Use them through ``from kplane.core.runtime import fields`` in plugin schemas.

What the server and clients need to know about a field beyond its type goes in marshmallow's
``metadata`` dict, under these keys (OpenAPI and strategic merge patch read them):

``description``
    Shown by ``kubectl explain``.
``patch_strategy`` / ``patch_merge_key``
    Strategic merge patch for lists: ``merge`` lists of objects are merged by the merge key
    (``metadata=merge_by("name")``); ``retainKeys`` on a union struct drops the keys a patch
    does not mention; ``merge`` on a list of strings makes it a set.
``list_type`` / ``list_map_keys``
    ``atomic``, ``set`` or ``map`` (with its keys), as ``x-kubernetes-list-type``.
``default``
    The value defaulting gives an unset field; published in OpenAPI, and used by server-side
    apply for list keys a client leaves out (``protocol: TCP`` of container ports).
``pointer``
    ``True`` on a ``Nested`` field that is a Go pointer to a struct (``*RollingUpdateDeployment``).
    Without it a ``Nested`` field is a struct held by value, which Go always writes (``{}`` when
    empty) and server-side apply never owns as a whole.
``omitempty``
    ``False`` on a field that Go writes even when unset, as its type's zero value (:func:`go_zero`):
    its JSON tag lacks ``omitempty`` (``reportingComponent: ""``, ``containers: null``), or it is a
    ``metav1.Time`` held by value (``omitempty`` does nothing on a struct: ``creationTimestamp:
    null``). Stored objects, responses and the empty object server-side apply starts a create
    from all follow it (``kplane.core.runtime.schema.python_to_wire``).
"""

from __future__ import annotations

import base64
import binascii
import re
from typing import Any

from marshmallow import ValidationError, fields
from marshmallow.fields import Dict, List, Nested, Raw

from kplane.core.meta import quantity

__all__ = [
    "Bool",
    "Bytes",
    "Dict",
    "Float",
    "INT64_MAX",
    "INT64_MIN",
    "INT32_MAX",
    "INT32_MIN",
    "Int",
    "Int32",
    "IntOrString",
    "List",
    "Nested",
    "Quantity",
    "Raw",
    "ReportsUnknown",
    "Str",
    "StrMap",
    "Time",
    "go_zero",
    "merge_by",
]


INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1  # Go's int64, the widest integer field of the API
INT32_MIN, INT32_MAX = -(2**31), 2**31 - 1  # Go's int32: replicas, ports, counts of the Kubernetes types


class Str(fields.String):
    """A JSON string (numbers are refused, not stringified)."""


class Int(fields.Integer):
    """A JSON integer that fits Go's int64 (larger ones cannot be stored or served)."""

    default_error_messages = {"too_large": "Number out of range for a 64-bit integer."}

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(strict=True, **kwargs)

    def _validated(self, value: Any) -> int:
        if isinstance(value, bool):  # bool is an int subclass in Python, never in JSON
            raise self.make_error("invalid", input=value)
        number = super()._validated(value)
        if not INT64_MIN <= number <= INT64_MAX:
            raise self.make_error("too_large")
        return number


class Int32(Int):
    """A JSON integer that fits Go's int32, for the fields that are int32 in the Kubernetes types
    (replicas, ports, priorities): Go's decoder refuses a larger number, so it is never stored."""

    default_error_messages = {"not_int32": "cannot unmarshal number {input} into Go value of type int32"}

    def _validated(self, value: Any) -> int:
        return _int32(self, super()._validated(value))


def _int32(field: fields.Field, number: int) -> int:
    """``number``, or the error Go's decoder gives for a JSON number an int32 cannot hold."""
    if not INT32_MIN <= number <= INT32_MAX:
        raise field.make_error("not_int32", input=number)
    return number


class Float(fields.Float):
    def _validated(self, value: Any) -> float:
        if isinstance(value, (bool, str)):
            raise self.make_error("invalid", input=value)
        return super()._validated(value)


class Bool(fields.Field):
    default_error_messages = {"invalid": "Not a valid boolean."}

    def _deserialize(self, value: Any, attr: str | None, data: Any, **kwargs: Any) -> bool:
        if not isinstance(value, bool):
            raise self.make_error("invalid")
        return value


class Bytes(fields.Field):
    """A Go ``[]byte``: standard base64 with padding. Like Go's decoder, line breaks anywhere are
    ignored (PEM-style 76-column wrapping, as in the docs' TLS Secret); the value is kept as Go
    writes it back, one unbroken canonical base64 string."""

    default_error_messages = {"invalid": "illegal base64 data"}

    def _deserialize(self, value: Any, attr: str | None, data: Any, **kwargs: Any) -> str:
        if not isinstance(value, str):
            raise self.make_error("invalid")
        try:
            decoded = base64.b64decode(value.replace("\r", "").replace("\n", ""), validate=True)
        except (binascii.Error, ValueError):
            raise self.make_error("invalid") from None
        return base64.b64encode(decoded).decode("ascii")


class IntOrString(fields.Field):
    """``intstr.IntOrString``: a JSON number or a string such as ``"25%"``. Its number is Go's
    int32 (``IntVal``), refused beyond it as :class:`Int32` refuses it, so clients can decode it."""

    default_error_messages = {"invalid": "Not a valid integer or string.", **Int32.default_error_messages}

    def _deserialize(self, value: Any, attr: str | None, data: Any, **kwargs: Any) -> int | str:
        if isinstance(value, bool) or not isinstance(value, (int, str)):
            raise self.make_error("invalid")
        return _int32(self, value) if isinstance(value, int) else value




class Quantity(fields.Field):
    """``resource.Quantity``: a number or a string like ``500m`` / ``1Gi``; stored as written."""

    default_error_messages = {"invalid": quantity.MESSAGE}

    def _deserialize(self, value: Any, attr: str | None, data: Any, **kwargs: Any) -> str | int | float:
        if isinstance(value, bool):
            raise self.make_error("invalid")
        if isinstance(value, (int, float)):
            return value
        if not isinstance(value, str) or not quantity.PATTERN.match(value):
            raise self.make_error("invalid")
        return value


_RFC3339 = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$")


class Time(fields.Field):
    """``metav1.Time``: an RFC 3339 timestamp kept as the string it is."""

    default_error_messages = {"invalid": "Not a valid RFC 3339 time."}

    def _deserialize(self, value: Any, attr: str | None, data: Any, **kwargs: Any) -> str:
        if not isinstance(value, str) or not _RFC3339.match(value):
            raise self.make_error("invalid")
        return value


class ReportsUnknown(fields.Field):
    """A field whose value is a document of its own (a JSON Schema) with fields Go's strict
    decoder knows: :meth:`load` returns the value as decoded (unknown keys dropped, as Go's
    decoder drops them) and the paths of the unknown keys, relative to the field, which
    :func:`kplane.core.runtime.schema.load` reports with the object's other unknown fields (so
    ``fieldValidation`` decides about them). Raises ``ValidationError`` for values of a wrong type."""

    def load(self, value: Any) -> tuple[Any, list[str]]:
        raise NotImplementedError

    @staticmethod
    def invalid(messages: dict[str, list[str]]) -> Exception:
        """The error :meth:`load` raises: messages keyed by paths relative to the field (``""`` for
        the field itself), such as ``{"properties.spec.type": ["cannot unmarshal number ..."]}``."""
        return ValidationError({key or "_schema": value for key, value in messages.items()})

    def _deserialize(self, value: Any, attr: str | None, data: Any, **kwargs: Any) -> Any:
        return self.load(value)[0]


def go_zero(f: fields.Field) -> Any:
    """The JSON Go writes for the zero value of a field's type: ``""``, ``0``, ``false``, or
    ``null`` (pointers, slices, maps, ``metav1.Time``); struct values are written as their own
    zero object instead (``kplane.core.runtime.schema.zero_object``)."""
    if isinstance(f, fields.String):
        return ""
    if isinstance(f, Bool):
        return False
    if isinstance(f, (fields.Integer, fields.Float)):
        return 0
    return None


def merge_by(key: str, *, retain_keys: bool = False, **more: Any) -> dict[str, Any]:
    """Field metadata for a list of objects merged by ``key`` (``patchMergeKey``)."""
    strategy = "merge,retainKeys" if retain_keys else "merge"
    return {"patch_strategy": strategy, "patch_merge_key": key, "list_type": "map", "list_map_keys": [key], **more}


def StrMap(**kwargs: Any) -> fields.Dict:
    """``map[string]string``, e.g. labels and annotations."""
    return fields.Dict(keys=Str(), values=Str(), **kwargs)

