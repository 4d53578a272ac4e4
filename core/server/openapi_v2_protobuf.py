"""The Swagger 2.0 document as gnostic's ``openapi.v2.Document`` protobuf message.

client-go's ``OpenAPISchema()`` (``kubectl explain --output=plaintext-openapiv2``, kubectl's
client-side validation and query-parameter checks when OpenAPI v3 cannot answer) asks
``/openapi/v2`` for protobuf only. kube-openapi makes that body by parsing its JSON with gnostic
(``openapi_v2.ParseDocument``) and marshalling the result; the tables below are the messages of
gnostic's ``OpenAPIv2.proto`` (field numbers and types), keyed by the JSON keys gnostic's
compiler reads them from, and :func:`encode_document` follows that compiler's mapping:

* an ``x-`` key becomes a ``NamedAny`` in the message's ``vendor_extension`` field, its value
  written as YAML text (``Any.yaml``), which clients parse back with a YAML parser;
* maps of names (``definitions``, ``properties``, ``paths``, ``responses``...) are repeated
  ``Named*`` messages in document order; ``Paths`` takes keys starting with ``/`` and
  ``Responses`` three-digit codes and ``default``, as gnostic's patterns do;
* the ``oneof`` wrappers pick their case as gnostic's matching does: ``additionalProperties``
  is a schema or a boolean, a parameter with ``in: body`` a ``BodyParameter`` and otherwise the
  sub-schema its ``in`` names, a ``$ref`` item a ``JsonReference``, ``type: file`` a ``FileSchema``,
  a security definition the scheme its ``type`` (and OAuth2 ``flow``) names;
* ``type`` may be one name or a list (``TypeItem``), ``items`` a single schema (``ItemsItem``);
* proto3 rules: zero scalars are left out, except as a ``oneof`` case
  (``additionalProperties: false``); a message present in the JSON is written even when empty;
  fields in field-number order.

A key gnostic would refuse (it fails the whole document) is an :class:`EncodeError` here, so a
mistake in the JSON converter shows up in the tests rather than as a document clients
silently read differently.
"""

from __future__ import annotations

import re
import struct
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import yaml

from kplane.core.runtime.protobuf import FIXED64, LENGTH, VARINT, encode_field

MEDIA_TYPE = "application/com.github.proto-openapi.spec.v2.v1.0+protobuf"
# What client-go sends; kube-openapi answers it under MEDIA_TYPE.
DEPRECATED_MEDIA_TYPE = "application/com.github.proto-openapi.spec.v2@v1.0+protobuf"

_SCALARS = frozenset({"string", "bool", "double", "int64", "any"})


class EncodeError(ValueError):
    """The JSON document holds something gnostic's ``openapi.v2`` compiler would refuse."""


class F(NamedTuple):
    """A field: its number, its kind (a scalar in ``_SCALARS`` or a message's name), repeated."""

    number: int
    kind: str
    repeated: bool = False


@dataclass(frozen=True, slots=True)
class Message:
    """A message read from a JSON object: ``fields`` by JSON key; ``extensions`` is the number of
    its ``vendor_extension`` field (0: none); ``named`` the field holding every other key as a
    ``Named*`` entry (its kind is the value's), only for keys matching ``pattern`` when given."""

    fields: dict[str, F] = field(default_factory=dict)
    extensions: int = 0
    named: F | None = None
    pattern: re.Pattern[str] | None = None


@dataclass(frozen=True, slots=True)
class OneOf:
    """A message of one ``oneof``: ``choose`` maps the JSON value to (field number, kind, value)."""

    choose: Callable[[Any], tuple[int, str, Any]]


def _type_item(value: Any) -> tuple[int, str, Any]:
    return 1, "string", [value] if isinstance(value, str) else value


def _items_item(value: Any) -> tuple[int, str, Any]:
    if not isinstance(value, dict):
        raise EncodeError("items must be one schema")
    return 1, "Schema", [value]


def _additional_properties(value: Any) -> tuple[int, str, Any]:
    return (2, "bool", value) if isinstance(value, bool) else (1, "Schema", value)


def _parameter(value: Any) -> tuple[int, str, Any]:
    return (1, "BodyParameter", value) if _get(value, "in") == "body" else (2, "NonBodyParameter", value)


_NON_BODY = {"header": (1, "HeaderParameterSubSchema"), "formData": (2, "FormDataParameterSubSchema"),
             "query": (3, "QueryParameterSubSchema"), "path": (4, "PathParameterSubSchema")}


def _non_body_parameter(value: Any) -> tuple[int, str, Any]:
    where = _get(value, "in")
    if where not in _NON_BODY:
        raise EncodeError(f"a parameter cannot be in {where!r}")
    return (*_NON_BODY[where], value)


def _or_reference(kind: str) -> Callable[[Any], tuple[int, str, Any]]:
    return lambda value: (2, "JsonReference", value) if "$ref" in _object(value) else (1, kind, value)


def _schema_item(value: Any) -> tuple[int, str, Any]:
    return (2, "FileSchema", value) if _get(value, "type") == "file" else (1, "Schema", value)


_SECURITY = {("basic", None): 1, ("apiKey", None): 2, ("oauth2", "implicit"): 3, ("oauth2", "password"): 4,
             ("oauth2", "application"): 5, ("oauth2", "accessCode"): 6}
_SECURITY_KINDS = {1: "BasicAuthenticationSecurity", 2: "ApiKeySecurity", 3: "Oauth2ImplicitSecurity",
                   4: "Oauth2PasswordSecurity", 5: "Oauth2ApplicationSecurity", 6: "Oauth2AccessCodeSecurity"}


def _security_definition(value: Any) -> tuple[int, str, Any]:
    kind = _get(value, "type")
    number = _SECURITY.get((kind, _get(value, "flow") if kind == "oauth2" else None))
    if number is None:
        raise EncodeError(f"unknown security definition type {kind!r}")
    return number, _SECURITY_KINDS[number], value


def _string_array(value: Any) -> tuple[int, str, Any]:
    return 1, "string", value


def _get(value: Any, key: str) -> Any:
    return _object(value).get(key)


def _object(value: Any) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise EncodeError(f"expected an object, found {type(value).__name__}")
    return value


def _primitive(*, parameter: bool = False, allow_empty: bool = False, description: int = 0) -> dict[str, F]:
    """The validation keys parameters, headers and primitive items share; their numbers run on
    from where each message's own leading fields stop (``PrimitivesItems`` starts at ``type``)."""
    keys = ["type", "format", "items", "collectionFormat", "default", "maximum", "exclusiveMaximum", "minimum",
            "exclusiveMinimum", "maxLength", "minLength", "pattern", "maxItems", "minItems", "uniqueItems", "enum",
            "multipleOf"]
    kinds = {"items": "PrimitivesItems", "default": "any", "maximum": "double", "minimum": "double",
             "multipleOf": "double", "exclusiveMaximum": "bool", "exclusiveMinimum": "bool", "uniqueItems": "bool",
             "maxLength": "int64", "minLength": "int64", "maxItems": "int64", "minItems": "int64"}
    leading = ["required", "in", "description", "name"] if parameter else []
    if allow_empty:  # query and formData parameters take allowEmptyValue after name
        leading.append("allowEmptyValue")
    out = {key: F(n, {"required": "bool", "allowEmptyValue": "bool"}.get(key, "string"))
           for n, key in enumerate(leading, 1)}
    for n, key in enumerate(keys, len(leading) + 1):
        out[key] = F(n, kinds.get(key, "string"), key == "enum")
    if description:
        out["description"] = F(description, "string")
    return out


def _named(kind: str, *, pattern: str | None = None) -> Message:
    return Message(named=F(1, kind, True), pattern=re.compile(pattern) if pattern else None)


MESSAGES: dict[str, Message | OneOf] = {
    "Document": Message({
        "swagger": F(1, "string"), "info": F(2, "Info"), "host": F(3, "string"), "basePath": F(4, "string"),
        "schemes": F(5, "string", True), "consumes": F(6, "string", True), "produces": F(7, "string", True),
        "paths": F(8, "Paths"), "definitions": F(9, "Definitions"), "parameters": F(10, "ParameterDefinitions"),
        "responses": F(11, "ResponseDefinitions"), "security": F(12, "SecurityRequirement", True),
        "securityDefinitions": F(13, "SecurityDefinitions"), "tags": F(14, "Tag", True),
        "externalDocs": F(15, "ExternalDocs")}, extensions=16),
    "Info": Message({
        "title": F(1, "string"), "version": F(2, "string"), "description": F(3, "string"),
        "termsOfService": F(4, "string"), "contact": F(5, "Contact"), "license": F(6, "License")}, extensions=7),
    "Contact": Message({"name": F(1, "string"), "url": F(2, "string"), "email": F(3, "string")}, extensions=4),
    "License": Message({"name": F(1, "string"), "url": F(2, "string")}, extensions=3),
    "ExternalDocs": Message({"description": F(1, "string"), "url": F(2, "string")}, extensions=3),
    "Tag": Message({"name": F(1, "string"), "description": F(2, "string"), "externalDocs": F(3, "ExternalDocs")},
                   extensions=4),
    "Paths": Message(extensions=1, named=F(2, "PathItem", True), pattern=re.compile(r"^/")),
    "PathItem": Message({
        "$ref": F(1, "string"), "get": F(2, "Operation"), "put": F(3, "Operation"), "post": F(4, "Operation"),
        "delete": F(5, "Operation"), "options": F(6, "Operation"), "head": F(7, "Operation"),
        "patch": F(8, "Operation"), "parameters": F(9, "ParametersItem", True)}, extensions=10),
    "Operation": Message({
        "tags": F(1, "string", True), "summary": F(2, "string"), "description": F(3, "string"),
        "externalDocs": F(4, "ExternalDocs"), "operationId": F(5, "string"), "produces": F(6, "string", True),
        "consumes": F(7, "string", True), "parameters": F(8, "ParametersItem", True),
        "responses": F(9, "Responses"), "schemes": F(10, "string", True), "deprecated": F(11, "bool"),
        "security": F(12, "SecurityRequirement", True)}, extensions=13),
    "ParametersItem": OneOf(_or_reference("Parameter")),
    "Parameter": OneOf(_parameter),
    "NonBodyParameter": OneOf(_non_body_parameter),
    "BodyParameter": Message({
        "description": F(1, "string"), "name": F(2, "string"), "in": F(3, "string"), "required": F(4, "bool"),
        "schema": F(5, "Schema")}, extensions=6),
    "HeaderParameterSubSchema": Message(_primitive(parameter=True), extensions=22),
    "FormDataParameterSubSchema": Message(_primitive(parameter=True, allow_empty=True), extensions=23),
    "QueryParameterSubSchema": Message(_primitive(parameter=True, allow_empty=True), extensions=23),
    "PathParameterSubSchema": Message(_primitive(parameter=True), extensions=22),
    "PrimitivesItems": Message(_primitive(), extensions=18),
    "Header": Message(_primitive(description=18), extensions=19),
    "JsonReference": Message({"$ref": F(1, "string"), "description": F(2, "string")}),
    "Responses": Message(extensions=2, named=F(1, "ResponseValue", True),
                         pattern=re.compile(r"^([0-9]{3})$|^(default)$")),
    "ResponseValue": OneOf(_or_reference("Response")),
    "Response": Message({
        "description": F(1, "string"), "schema": F(2, "SchemaItem"), "headers": F(3, "Headers"),
        "examples": F(4, "Examples")}, extensions=5),
    "SchemaItem": OneOf(_schema_item),
    "Schema": Message({
        "$ref": F(1, "string"), "format": F(2, "string"), "title": F(3, "string"), "description": F(4, "string"),
        "default": F(5, "any"), "multipleOf": F(6, "double"), "maximum": F(7, "double"),
        "exclusiveMaximum": F(8, "bool"), "minimum": F(9, "double"), "exclusiveMinimum": F(10, "bool"),
        "maxLength": F(11, "int64"), "minLength": F(12, "int64"), "pattern": F(13, "string"),
        "maxItems": F(14, "int64"), "minItems": F(15, "int64"), "uniqueItems": F(16, "bool"),
        "maxProperties": F(17, "int64"), "minProperties": F(18, "int64"), "required": F(19, "string", True),
        "enum": F(20, "any", True), "additionalProperties": F(21, "AdditionalPropertiesItem"),
        "type": F(22, "TypeItem"), "items": F(23, "ItemsItem"), "allOf": F(24, "Schema", True),
        "properties": F(25, "Properties"), "discriminator": F(26, "string"), "readOnly": F(27, "bool"),
        "xml": F(28, "Xml"), "externalDocs": F(29, "ExternalDocs"), "example": F(30, "any")}, extensions=31),
    "FileSchema": Message({
        "format": F(1, "string"), "title": F(2, "string"), "description": F(3, "string"), "default": F(4, "any"),
        "required": F(5, "string", True), "type": F(6, "string"), "readOnly": F(7, "bool"),
        "externalDocs": F(8, "ExternalDocs"), "example": F(9, "any")}, extensions=10),
    "Xml": Message({
        "name": F(1, "string"), "namespace": F(2, "string"), "prefix": F(3, "string"), "attribute": F(4, "bool"),
        "wrapped": F(5, "bool")}, extensions=6),
    "AdditionalPropertiesItem": OneOf(_additional_properties),
    "TypeItem": OneOf(_type_item),
    "ItemsItem": OneOf(_items_item),
    "Properties": _named("Schema"),
    "Definitions": _named("Schema"),
    "ParameterDefinitions": _named("Parameter"),
    "ResponseDefinitions": _named("Response"),
    "Headers": _named("Header"),
    "Examples": _named("any"),
    "SecurityDefinitions": _named("SecurityDefinitionsItem"),
    "SecurityDefinitionsItem": OneOf(_security_definition),
    "SecurityRequirement": _named("StringArray"),
    "StringArray": OneOf(_string_array),
    "Oauth2Scopes": _named("string"),
    "BasicAuthenticationSecurity": Message({"type": F(1, "string"), "description": F(2, "string")}, extensions=3),
    "ApiKeySecurity": Message({
        "type": F(1, "string"), "name": F(2, "string"), "in": F(3, "string"), "description": F(4, "string")},
        extensions=5),
    "Oauth2ImplicitSecurity": Message({
        "type": F(1, "string"), "flow": F(2, "string"), "scopes": F(3, "Oauth2Scopes"),
        "authorizationUrl": F(4, "string"), "description": F(5, "string")}, extensions=6),
    "Oauth2PasswordSecurity": Message({
        "type": F(1, "string"), "flow": F(2, "string"), "scopes": F(3, "Oauth2Scopes"), "tokenUrl": F(4, "string"),
        "description": F(5, "string")}, extensions=6),
    "Oauth2ApplicationSecurity": Message({
        "type": F(1, "string"), "flow": F(2, "string"), "scopes": F(3, "Oauth2Scopes"), "tokenUrl": F(4, "string"),
        "description": F(5, "string")}, extensions=6),
    "Oauth2AccessCodeSecurity": Message({
        "type": F(1, "string"), "flow": F(2, "string"), "scopes": F(3, "Oauth2Scopes"),
        "authorizationUrl": F(4, "string"), "tokenUrl": F(5, "string"), "description": F(6, "string")},
        extensions=7),
}


def encode_document(document: dict[str, Any]) -> bytes:
    """``document`` (a Swagger 2.0 object) as the bytes of an ``openapi.v2.Document``."""
    return _Encoder().message(document, "Document")


class _Encoder:
    """One document's encoding; the YAML text of repeated extension values is made once."""

    def __init__(self) -> None:
        self._yaml: dict[str, bytes] = {}

    def message(self, value: Any, kind: str) -> bytes:
        spec = MESSAGES[kind]
        if isinstance(spec, OneOf):
            number, case, chosen = spec.choose(value)
            return self.field(F(number, case, isinstance(chosen, list)), chosen, oneof=True)
        parts: dict[int, list[bytes]] = {}
        for key, item in _object(value).items():
            known = spec.fields.get(key)
            if known is not None:
                parts.setdefault(known.number, []).append(self.field(known, item))
            elif spec.extensions and key.startswith("x-"):
                parts.setdefault(spec.extensions, []).append(self.named(spec.extensions, key, item, "any"))
            elif spec.named is not None and (spec.pattern is None or spec.pattern.search(key)):
                parts.setdefault(spec.named.number, []).append(self.named(spec.named.number, key, item, spec.named.kind))
            else:
                raise EncodeError(f"{kind} has no property {key!r}")
        return b"".join(b"".join(parts[number]) for number in sorted(parts))

    def named(self, number: int, name: str, value: Any, kind: str) -> bytes:
        """Field ``number`` holding one ``Named*`` entry: {1: name, 2: value}."""
        entry = self.scalar(F(1, "string"), name, keep_zero=False) + self.field(F(2, kind), value)
        return encode_field(number, LENGTH, entry)

    def field(self, spec: F, value: Any, *, oneof: bool = False) -> bytes:
        """A field of any kind; zero scalars are written only as a oneof's case or a list's item."""
        if spec.repeated:
            if not isinstance(value, list):
                raise EncodeError(f"expected a list for field {spec.number}, found {type(value).__name__}")
            return b"".join(self.field(F(spec.number, spec.kind), item, oneof=True) for item in value)
        if spec.kind not in _SCALARS:
            return encode_field(spec.number, LENGTH, self.message(value, spec.kind))
        return self.scalar(spec, value, keep_zero=oneof)

    def scalar(self, spec: F, value: Any, *, keep_zero: bool) -> bytes:
        if spec.kind == "any":
            return encode_field(spec.number, LENGTH, encode_field(2, LENGTH, self.yaml(value)))
        if spec.kind == "string":
            if not isinstance(value, str):
                raise EncodeError(f"expected a string for field {spec.number}, found {value!r}")
            return encode_field(spec.number, LENGTH, value.encode()) if value or keep_zero else b""
        if spec.kind == "bool":
            if not isinstance(value, bool):
                raise EncodeError(f"expected a boolean for field {spec.number}, found {value!r}")
            return encode_field(spec.number, VARINT, int(value)) if value or keep_zero else b""
        if isinstance(value, bool) or not isinstance(value, int | float) or (spec.kind == "int64" and not isinstance(value, int)):
            raise EncodeError(f"expected a number for field {spec.number}, found {value!r}")
        if not value and not keep_zero:
            return b""
        if spec.kind == "int64":
            return encode_field(spec.number, VARINT, value)
        return encode_field(spec.number, FIXED64, struct.pack("<d", value))

    def yaml(self, value: Any) -> bytes:
        """The YAML text gnostic's ``NewAny`` keeps: block style, one document, no end marker."""
        key = repr(value)
        text = self._yaml.get(key)
        if text is None:
            dumped = yaml.safe_dump(value, sort_keys=False, allow_unicode=True, width=1 << 30)
            text = self._yaml[key] = dumped.removesuffix("...\n").encode()
        return text
