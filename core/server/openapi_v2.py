"""``/openapi/v2``: one Swagger 2.0 document, converted from the OpenAPI v3 documents.

kube-aggregator downloads it from every backend and older clients (and kubectl's fallback) read it.
The v3 documents of :mod:`kplane.core.server.openapi` are the one source of paths and schemas; this
module only rewrites them in v2's terms, as kube-openapi writes them:

* a schema that gives a v2 form of its own (a component's keys, a property's schema: see
  :mod:`kplane.core.server.openapi`) is published in it, as a CRD's schema is;
* defaults are left out, as kube-apiserver prunes them from v2;
* ``#/components/schemas/X`` -> ``#/definitions/X``; a ``$ref`` wrapped in a one-item ``allOf``
  (v3's way of giving it siblings) is unwrapped; ``anyOf``/``oneOf`` of scalars, which v2 lacks,
  become a string (``format: int-or-string`` for IntOrString) as in kube-apiserver's swagger.json;
* an operation's ``requestBody`` becomes a ``body`` parameter and its media types ``consumes``;
  each answer's content becomes its ``schema``, their media types ``produces``; a non-body
  parameter carries its schema's keys itself;
* ``x-kubernetes-action`` and ``x-kubernetes-group-version-kind`` stay as they are.

Every group-version served here is merged (a definition found in several documents keeps every
``x-kubernetes-group-version-kind`` mark); group-versions the plugins' sources serve elsewhere are
not.

The document is served as JSON and, for ``Accept:
application/com.github.proto-openapi.spec.v2[@.]v1.0+protobuf`` (what client-go's
``OpenAPISchema()`` sends), as gnostic's protobuf message
(:mod:`kplane.core.server.openapi_v2_protobuf`), picked from the Accept header as kube-openapi
picks, with ``Vary: Accept``. Each form has the ETag of its own bytes (kube-openapi reuses the
JSON's for both; a strong ETag names one representation, and a cache that ignored ``Vary`` could
otherwise answer one form's If-None-Match with the other).
"""

from __future__ import annotations

import asyncio
import hashlib
from typing import Any

import orjson
from aiohttp import web

from kplane.core.meta import errors
from kplane.core.server import negotiation
from kplane.core.server.openapi import REF, OpenAPI, Served, reply
from kplane.core.server.openapi_v2_protobuf import DEPRECATED_MEDIA_TYPE, MEDIA_TYPE, encode_document

DEFINITIONS = "#/definitions/"
# kube-openapi's order: JSON for */*; client-go's protobuf type is answered under the current name.
OFFERS = (negotiation.JSON, DEPRECATED_MEDIA_TYPE, MEDIA_TYPE)
_GVK = "x-kubernetes-group-version-kind"


def _schema(node: Any) -> Any:
    """A v3 schema (and every schema inside it) in v2's terms, without defaults (kube-apiserver
    prunes them from v2). Only schema positions are walked: a property, enum value, default or
    extension named ``$ref`` or ``anyOf`` is data, not a schema."""
    if not isinstance(node, dict):
        return node
    out = {key: value for key, value in node.items() if key != "default"}
    properties = out.get("properties")
    if isinstance(properties, dict):
        out["properties"] = {key: _schema(value) for key, value in properties.items()}
    for key in ("items", "additionalProperties", "not"):
        if isinstance(out.get(key), dict):
            out[key] = _schema(out[key])
    for key in ("allOf", "anyOf", "oneOf"):
        if isinstance(out.get(key), list):
            out[key] = [_schema(item) for item in out[key]]
    ref = out.get("$ref")
    if isinstance(ref, str) and ref.startswith(REF):
        out["$ref"] = DEFINITIONS + ref.removeprefix(REF)
    wrapped = out.get("allOf")
    if isinstance(wrapped, list) and len(wrapped) == 1 and isinstance(wrapped[0], dict) and "$ref" in wrapped[0]:
        del out["allOf"]
        out = {**wrapped[0], **out}
    for choice in ("anyOf", "oneOf"):
        if choice in out:
            del out[choice]
            out["type"] = "string"
            if out.get("x-kubernetes-int-or-string"):
                out["format"] = "int-or-string"
    return out


def _v2_form(schema: dict[str, Any], given: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """A component with the v2 forms its schema gives in place of its own keys and properties."""
    out = dict(schema)
    own = given.get("")
    if own is not None:
        out = {**own, **{key: out[key] for key in ("properties", _GVK) if key in out}}
    properties = out.get("properties")
    if isinstance(properties, dict):
        out["properties"] = {key: given.get(key, value) for key, value in properties.items()}
    return out


def _parameter(parameter: dict[str, Any]) -> dict[str, Any]:
    converted = {key: value for key, value in parameter.items() if key != "schema"}
    return {**converted, **_schema(parameter.get("schema", {}))}


def _media_types(*contents: dict[str, Any]) -> list[str]:
    seen: dict[str, None] = {}
    for content in contents:
        seen.update(dict.fromkeys(content))
    return list(seen)


def _operation(operation: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    body = operation.get("requestBody")
    if body is not None:
        out["consumes"] = _media_types(body["content"])
    out["description"] = operation["description"]
    out["operationId"] = operation["operationId"]
    out["tags"] = operation["tags"]
    parameters = [_parameter(p) for p in operation.get("parameters", [])]
    if body is not None:
        schema = next(iter(body["content"].values()))["schema"]
        parameters.insert(0, {"name": "body", "in": "body", "required": body.get("required", False), "schema": _schema(schema)})
    out["parameters"] = parameters
    answers = operation["responses"].values()
    out["produces"] = _media_types(*(answer.get("content", {}) for answer in answers))
    responses = {}
    for code, answer in operation["responses"].items():
        responses[code] = {"description": answer["description"]}
        if answer.get("content"):
            responses[code]["schema"] = _schema(next(iter(answer["content"].values()))["schema"])
    out["responses"] = responses
    out.update({key: value for key, value in operation.items() if key.startswith("x-")})
    return out


def _path(item: dict[str, Any]) -> dict[str, Any]:
    return {method: [_parameter(p) for p in value] if method == "parameters" else _operation(value)
            for method, value in item.items()}


def swagger(documents: list[dict[str, Any]], version: str,
            v2_forms: dict[str, dict[str, dict[str, Any]]] | None = None) -> dict[str, Any]:
    """The v3 documents merged into one Swagger 2.0 document; ``v2_forms`` are the v2 forms
    schemas give of their components (:func:`kplane.core.server.openapi.build_documents`)."""
    paths: dict[str, Any] = {}
    definitions: dict[str, Any] = {}
    for document in documents:
        for path, item in document["paths"].items():
            paths[path] = _path(item)
        for name, schema in document["components"]["schemas"].items():
            given = (v2_forms or {}).get(name)
            converted = _schema(_v2_form(schema, given) if given else schema)
            known = definitions.setdefault(name, converted)
            for mark in converted.get(_GVK, []):
                if mark not in known.setdefault(_GVK, []):
                    known[_GVK].append(mark)
    return {
        "swagger": "2.0",
        "info": {"title": "Kubernetes", "version": version},
        "paths": dict(sorted(paths.items())),
        "definitions": dict(sorted(definitions.items())),
    }


class OpenAPIV2:
    """``GET /openapi/v2``, rebuilt from the v3 documents when the scheme changes; the protobuf
    form is made from the same document on its first request after that."""

    def __init__(self, v3: OpenAPI, version: str) -> None:
        self.v3 = v3
        self.version = version
        self._generation = -1
        self._document: dict[str, Any] = {}
        self._served = Served(b"", "")
        self._protobuf: tuple[int, Served] = (-1, Served(b"", ""))

    def current(self) -> Served:
        _, documents = self.v3.current()
        if self._generation != self.v3.scheme.generation:
            parsed = [orjson.loads(served.body) for served in documents.values()]
            self._document = swagger(parsed, self.version, self.v3.v2_forms)
            self._served = Served.of(self._document)
            self._generation = self.v3.scheme.generation
        return self._served

    async def protobuf(self) -> Served:
        """The protobuf form, encoded in a thread (tens of milliseconds for the built-in kinds)."""
        self.current()
        generation, document = self._generation, self._document
        if self._protobuf[0] != generation:
            body = await asyncio.to_thread(encode_document, document)
            self._protobuf = (generation, Served(body, hashlib.sha512(body).hexdigest().upper()))
        return self._protobuf[1]

    async def handle(self, request: web.Request) -> web.Response:
        offer = negotiation.preferred(request.headers.get("Accept", ""), OFFERS)
        if offer is None:
            raise errors.APIError(406, errors.StatusReason.NOT_ACCEPTABLE,
                                  f"only application/json and {MEDIA_TYPE} are served here")
        if offer == negotiation.JSON:
            return reply(request, self.current(), immutable=False)
        return reply(request, await self.protobuf(), immutable=False, content_type=MEDIA_TYPE)
