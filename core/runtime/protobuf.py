"""Kubernetes protobuf request bodies, decoded into the JSON the API would have received.

kubectl's generator commands (``kubectl create configmap|secret|service|deployment|...``) and
client-go programs configured for protobuf send ``application/vnd.kubernetes.protobuf`` and do
not retry as JSON on a 415, so the server reads it for every built-in kind, and for the
request kinds that are not objects of the scheme: ``DeleteOptions`` (the body of DELETE and
deletecollection, :mod:`kplane.core.meta.protobuf`), ``Binding`` (POST pods/binding, declared by its
strategy's ``response_protobuf``) and autoscaling/v1 ``Scale`` (PUT .../scale, :mod:`kplane.core.registry.scale`). Rather than depend on a protobuf library and generated classes, each kind declares a
small table per message (:class:`Message`: field number -> :class:`Field`) taken from the
published ``generated.proto`` files, and :func:`decode_message` turns the bytes into the
camelCase dict that Go's JSON encoder would have written for the same object. The server then
validates that dict on its ordinary JSON path, so protobuf adds no second validation path.

Go's JSON rules are followed where they matter to the server: zero scalars of plain (non
pointer) fields are omitted, as ``omitempty`` does; pointer fields present on the wire were set,
so their zero values are kept (``replicas: 0``, ``immutable: false``); embedded messages are
always rendered (``status: {}``), except where a message converts itself to nothing (a zero
``metav1.Time``). A field number a table does not know is an error, never silently dropped.
"""

from __future__ import annotations

import base64
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, Literal

import orjson

MEDIA_TYPE = "application/vnd.kubernetes.protobuf"
MAGIC = b"k8s\x00"

VARINT, FIXED64, LENGTH, START_GROUP, END_GROUP, FIXED32 = 0, 1, 2, 3, 4, 5

Kind = Literal["string", "bytes", "json", "bool", "int32", "int64"]
_VARINT_KINDS = frozenset({"bool", "int32", "int64"})


class ProtobufError(Exception):
    """The body is not valid protobuf, or holds a field its kind's tables do not know."""


@dataclass(frozen=True, slots=True)
class Field:
    """One field of a message.

    ``kind`` is a scalar kind or the nested :class:`Message`; for a ``map`` it is the value's
    kind (keys are always strings in Kubernetes). ``json`` is a bytes field holding JSON text
    (``fieldsV1``). ``pointer`` marks Go pointer fields, whose zero values are meaningful.
    ``inline`` marks a Go struct embedded with ``json:",inline"``: a message of its own in
    protobuf, its fields join the parent's in JSON (``configMapKeyRef.name``).
    """

    name: str
    kind: Kind | Message
    repeated: bool = False
    map: bool = False
    pointer: bool = False
    inline: bool = False

    def __post_init__(self) -> None:
        if self.repeated and self.map:
            raise ValueError(f"field {self.name!r} cannot be both repeated and a map")
        if self.inline and (self.repeated or self.map or not isinstance(self.kind, Message)):
            raise ValueError(f"field {self.name!r}: only a single message can be inlined")


@dataclass(frozen=True, slots=True, eq=False)
class Message:
    """A message table; ``to_json`` gives types with a custom JSON form (Time, Quantity,
    IntOrString) that form from their decoded fields, None meaning "leave the field out".

    Tables compare and hash by identity: each is defined once, and a dict field is unhashable.
    """

    name: str
    fields: dict[int, Field]
    to_json: Callable[[dict[str, Any]], Any] | None = None


TYPE_META = Message("TypeMeta", {1: Field("apiVersion", "string"), 2: Field("kind", "string")})


# -- the wire format ------------------------------------------------------------------------------
# Encoding is needed for one document only (``/openapi/v2`` as protobuf,
# :mod:`kplane.core.server.openapi_v2_protobuf`); objects are always answered in JSON.
def _varint(data: bytes, pos: int) -> tuple[int, int]:
    """The varint at ``pos`` and the position after it."""
    result = shift = 0
    while pos < len(data):
        byte = data[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        if byte < 0x80:
            return result, pos
        shift += 7
        if shift >= 70:
            raise ProtobufError("varint is longer than 10 bytes")
    raise ProtobufError("truncated varint")


def read_fields(data: bytes) -> Iterator[tuple[int, int, int | bytes]]:
    """Each field of a message as (number, wire type, value): an int for varint and fixed
    types, the bytes for length-delimited ones. Groups (deprecated, unused by Kubernetes) are
    refused."""
    pos = 0
    while pos < len(data):
        key, pos = _varint(data, pos)
        number, wire_type = key >> 3, key & 7
        if number == 0:
            raise ProtobufError("field number 0 is invalid")
        value: int | bytes
        if wire_type == VARINT:
            value, pos = _varint(data, pos)
        elif wire_type in (FIXED64, FIXED32):
            size = 8 if wire_type == FIXED64 else 4
            if pos + size > len(data):
                raise ProtobufError(f"truncated fixed-size field {number}")
            value, pos = int.from_bytes(data[pos : pos + size], "little"), pos + size
        elif wire_type == LENGTH:
            size, pos = _varint(data, pos)
            if pos + size > len(data):
                raise ProtobufError(f"truncated field {number}: {size} bytes announced, {len(data) - pos} left")
            value, pos = data[pos : pos + size], pos + size
        elif wire_type in (START_GROUP, END_GROUP):
            raise ProtobufError(f"field {number} is a group, which is not supported")
        else:
            raise ProtobufError(f"field {number} has the invalid wire type {wire_type}")
        yield number, wire_type, value


def encode_varint(value: int) -> bytes:
    """``value`` as a varint; a negative one as its 64-bit two's complement, as protobuf sends
    negative int32/int64 values (ten bytes)."""
    value &= (1 << 64) - 1
    out = bytearray()
    while value >= 0x80:
        out.append(value & 0x7F | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def encode_field(number: int, wire_type: int, payload: bytes | int) -> bytes:
    """One field: its key, then a varint (an int payload), a length-delimited payload
    (``LENGTH``) or the eight little-endian bytes of a ``FIXED64`` payload."""
    key = encode_varint(number << 3 | wire_type)
    if isinstance(payload, int):
        return key + encode_varint(payload)
    if wire_type == LENGTH:
        return key + encode_varint(len(payload)) + payload
    return key + payload


def _signed(value: int, bits: int) -> int:
    """Two's complement: negative int32/int64 values travel as 64-bit varints."""
    value &= (1 << bits) - 1
    return value - (1 << bits) if value >> (bits - 1) else value


# -- decoding with tables -----------------------------------------------------------------------------
def decode_envelope(body: bytes) -> tuple[str, str, bytes]:
    """(apiVersion, kind, raw object bytes) of a ``k8s\\0`` + ``runtime.Unknown`` body."""
    if not body.startswith(MAGIC):
        raise ProtobufError("the body does not start with the Kubernetes protobuf prefix k8s\\x00")
    api_version = kind = ""
    raw = b""
    for number, wire_type, value in read_fields(body[len(MAGIC) :]):
        if number == 1:
            type_meta = decode_message(_length(value, wire_type, "Unknown", number), TYPE_META)
            api_version, kind = type_meta.get("apiVersion", ""), type_meta.get("kind", "")
        elif number == 2:
            raw = _length(value, wire_type, "Unknown", number)
        elif number in (3, 4):
            text = _text(_length(value, wire_type, "Unknown", number), "Unknown", number)
            if text and not (number == 4 and text == MEDIA_TYPE):
                what = "contentEncoding" if number == 3 else "contentType"
                raise ProtobufError(f"unsupported {what} {text!r} in the envelope")
        else:
            raise ProtobufError(f"unknown field {number} in message Unknown")
    if not api_version or not kind:
        raise ProtobufError("the envelope names no apiVersion and kind")
    return api_version, kind, raw


def decode_message(raw: bytes, message: Message) -> dict[str, Any]:
    """The JSON form of one message's bytes, following Go's ``omitempty`` rules (module doc).

    A non-repeated field seen twice keeps its last value (protobuf would merge two copies of a
    message, but Kubernetes' encoder never writes a field twice).
    """
    out: dict[str, Any] = {}
    for number, wire_type, value in read_fields(raw):
        field = message.fields.get(number)
        if field is None:
            raise ProtobufError(f"unknown field {number} in message {message.name}")
        if field.map:
            key, item = _map_entry(_length(value, wire_type, message.name, number), field, message.name, number)
            out.setdefault(field.name, {})[key] = item
        elif field.repeated:
            out.setdefault(field.name, []).extend(_repeated(value, wire_type, field, message.name, number))
        elif field.inline:
            out.update(_value(value, wire_type, field.kind, message.name, number))
        else:
            out[field.name] = _value(value, wire_type, field.kind, message.name, number)
            if _omitted(out[field.name], field):
                del out[field.name]
    return out


def _omitted(value: Any, field: Field) -> bool:
    """None: a message's to_json (or empty JSON bytes) said "unset"; zero scalars: omitempty."""
    if value is None:
        return True
    return not isinstance(field.kind, Message) and not field.pointer and value in ("", 0, False)


def _value(value: int | bytes, wire_type: int, kind: Kind | Message, message: str, number: int) -> Any:
    if isinstance(kind, Message):
        decoded = decode_message(_length(value, wire_type, message, number), kind)
        return kind.to_json(decoded) if kind.to_json is not None else decoded
    if kind in _VARINT_KINDS:
        if wire_type != VARINT or not isinstance(value, int):
            raise ProtobufError(f"field {number} in message {message} has wire type {wire_type}, expected a varint")
        if kind == "bool":
            return value != 0
        return _signed(value, 32 if kind == "int32" else 64)
    data = _length(value, wire_type, message, number)
    if kind == "bytes":
        return base64.b64encode(data).decode("ascii")  # as Go's JSON encodes []byte
    if kind == "json":
        try:
            return orjson.loads(data) if data else None
        except orjson.JSONDecodeError as err:
            raise ProtobufError(f"field {number} in message {message} is not valid JSON: {err}") from None
    return _text(data, message, number)


def _repeated(value: int | bytes, wire_type: int, field: Field, message: str, number: int) -> list[Any]:
    """One element, or several when a repeated number arrives packed in one length field."""
    if field.kind in _VARINT_KINDS and wire_type == LENGTH and isinstance(value, bytes):
        items, pos = [], 0
        while pos < len(value):
            item, pos = _varint(value, pos)
            items.append(_value(item, VARINT, field.kind, message, number))
        return items
    return [_value(value, wire_type, field.kind, message, number)]


def _map_entry(entry: bytes, field: Field, message: str, number: int) -> tuple[str, Any]:
    """A map entry is a message {1: key, 2: value}; either may be missing and is then zero."""
    key, item = "", None
    for entry_number, wire_type, value in read_fields(entry):
        if entry_number == 1:
            key = _text(_length(value, wire_type, message, number), message, number)
        elif entry_number == 2:
            item = _value(value, wire_type, field.kind, message, number)
        else:
            raise ProtobufError(f"unknown field {entry_number} in an entry of map field {number} of message {message}")
    if item is None:  # Kubernetes maps hold strings, bytes or messages, all zero when empty
        item = _value(b"", LENGTH, field.kind, message, number)
    return key, item


def _length(value: int | bytes, wire_type: int, message: str, number: int) -> bytes:
    if wire_type != LENGTH or not isinstance(value, bytes):
        raise ProtobufError(f"field {number} in message {message} has wire type {wire_type}, expected length-delimited")
    return value


def _text(data: bytes, message: str, number: int) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise ProtobufError(f"field {number} in message {message} is not valid UTF-8") from None

