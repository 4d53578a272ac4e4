"""OpenAPI v2: one Swagger 2.0 document of every group-version served here, over real HTTP."""

from __future__ import annotations

import hashlib
import json
import re
import struct
from typing import Any

import pytest
import yaml

from kplane.core.runtime.protobuf import read_fields
from kplane.core.server.openapi_v2_protobuf import EncodeError, encode_document
from kplane.core.serving.apiserver import APIServer
from tests.conftest import Client
from tests.kubectl_cli import Kubectl
from tests.test_openapi import Widget, WidgetV1, refs_in
from tests.test_protobuf import f, varint

PATCH_TYPES = {
    "application/json-patch+json",
    "application/merge-patch+json",
    "application/strategic-merge-patch+json",
    "application/apply-patch+yaml",
}
DEPLOYMENTS = "/apis/apps/v1/namespaces/{namespace}/deployments"
DEFINITIONS = "#/definitions/"
PROTOBUF = "application/com.github.proto-openapi.spec.v2.v1.0+protobuf"
CLIENT_GO = "application/com.github.proto-openapi.spec.v2@v1.0+protobuf"  # kubectl's; answered as PROTOBUF




def _definition(document: dict[str, Any], ref: str) -> dict[str, Any]:
    assert ref.startswith(DEFINITIONS), ref
    return document["definitions"][ref.removeprefix(DEFINITIONS)]


async def _swagger(api: Client) -> dict[str, Any]:
    reply = await api.get("/openapi/v2")
    assert reply.status == 200, reply
    assert reply.headers["Content-Type"].startswith("application/json")
    return reply.body


async def test_one_swagger_document_of_every_served_group_version(api: Client, server: APIServer) -> None:
    document = await _swagger(api)
    version = (await api.get("/version")).body["gitVersion"]
    assert set(document) == {"swagger", "info", "paths", "definitions"}
    assert document["swagger"] == "2.0"
    assert document["info"] == {"title": "Kubernetes", "version": version}
    for group, versions in server.scheme.groups().items():
        for v in versions:
            prefix = f"/apis/{group}/{v}/" if group else f"/api/{v}/"
            assert any(path.startswith(prefix) for path in document["paths"]), prefix


async def test_deployment_operations(api: Client) -> None:
    document = await _swagger(api)
    collection, item = document["paths"][DEPLOYMENTS], document["paths"][DEPLOYMENTS + "/{name}"]
    assert {"get", "post", "delete"} <= set(collection) and {"get", "put", "patch", "delete"} <= set(item)
    assert collection["get"]["operationId"] == "listAppsV1NamespacedDeployment"
    assert collection["get"]["x-kubernetes-action"] == "list"
    assert "application/json;stream=watch" in collection["get"]["produces"]
    listed = _definition(document, collection["get"]["responses"]["200"]["schema"]["$ref"])
    assert listed["x-kubernetes-group-version-kind"] == [{"group": "apps", "kind": "DeploymentList", "version": "v1"}]

    create = collection["post"]
    body = create["parameters"][0]
    assert body["in"] == "body" and body["name"] == "body" and body["required"] is True
    assert _definition(document, body["schema"]["$ref"])["x-kubernetes-group-version-kind"] == [
        {"group": "apps", "kind": "Deployment", "version": "v1"}]
    assert "application/json" in create["consumes"] and "application/json" in create["produces"]
    assert create["responses"]["201"]["schema"] == body["schema"]

    patch = item["patch"]
    assert set(patch["consumes"]) == PATCH_TYPES
    assert patch["x-kubernetes-action"] == "patch"
    assert patch["x-kubernetes-group-version-kind"] == {"group": "apps", "kind": "Deployment", "version": "v1"}
    assert patch["parameters"][0]["in"] == "body"
    assert _definition(document, patch["parameters"][0]["schema"]["$ref"]) is not None
    queries = {p["name"]: p for p in patch["parameters"] if p["in"] == "query"}
    assert {"fieldValidation", "fieldManager", "dryRun", "force"} <= set(queries)
    assert queries["fieldManager"]["type"] == "string" and "schema" not in queries["fieldManager"]
    assert item["get"]["operationId"] == "readAppsV1NamespacedDeployment"
    assert item["delete"]["parameters"][0]["in"] == "body"
    assert {p["name"] for p in item["parameters"]} == {"name", "namespace"}
    assert all(p["in"] == "path" and p["type"] == "string" and p["required"] for p in item["parameters"])


async def test_every_ref_resolves_and_kinds_are_marked(api: Client) -> None:
    document = await _swagger(api)
    refs = set(refs_in(document))
    assert refs and all(ref.startswith(DEFINITIONS) for ref in refs)
    assert not {ref for ref in refs if ref.removeprefix(DEFINITIONS) not in document["definitions"]}
    assert "#/components/" not in json.dumps(document)  # every v3 reference rewritten
    for name in ("io.k8s.api.apps.v1.Deployment", "io.k8s.api.core.v1.Pod", "io.k8s.api.core.v1.ConfigMap"):
        assert document["definitions"][name]["x-kubernetes-group-version-kind"]
    assert not any(key in json.dumps(document) for key in ('"anyOf"', '"oneOf"', '"requestBody"', '"content"'))
    int_or_string = document["definitions"]["io.k8s.apimachinery.pkg.util.intstr.IntOrString"]
    assert int_or_string["type"] == "string" and int_or_string["format"] == "int-or-string"
    spec = document["definitions"]["io.k8s.api.apps.v1.DeploymentSpec"]["properties"]
    assert spec["template"]["$ref"] == DEFINITIONS + "io.k8s.api.core.v1.PodTemplateSpec"


async def test_etag_and_not_modified(api: Client) -> None:
    first = await api.get("/openapi/v2")
    etag = first.headers["ETag"]
    assert etag.startswith('"') and first.headers["Cache-Control"] == "no-cache, private"
    again = await api.get("/openapi/v2", headers={"If-None-Match": etag})
    assert again.status == 304 and again.headers["ETag"] == etag


# -- the protobuf form --------------------------------------------------------------------------------
# Read with the wire reader alone and the field numbers of gnostic's OpenAPIv2.proto written out
# here; kubectl below is the independent Go decoder.
def _all(message: bytes, number: int) -> list[Any]:
    return [value for n, _, value in read_fields(message) if n == number]


def _one(message: bytes, number: int) -> Any:
    values = _all(message, number)
    assert len(values) == 1, (number, values)
    return values[0]


def _named(message: bytes, number: int) -> dict[str, bytes]:
    """A repeated Named* field (name = 1, value = 2) as a dict, in wire order."""
    return {_one(entry, 1).decode(): _one(entry, 2) for entry in _all(message, number)}


def _extension(message: bytes, number: int, name: str) -> Any:
    """A vendor extension's value: NamedAny.value is an Any whose yaml (2) holds it."""
    return yaml.safe_load(_one(_named(message, number)[name], 2).decode())


async def _fetch(api: Client, accept: str, **headers: str) -> tuple[int, bytes, Any]:
    async with api.session.get("/openapi/v2", headers={"Accept": accept, **headers}) as reply:
        return reply.status, await reply.read(), reply.headers


async def test_protobuf_for_both_media_types(api: Client) -> None:
    document = await _swagger(api)
    json_etag = (await api.get("/openapi/v2")).headers["ETag"]
    bodies = set()
    for accept in (CLIENT_GO, PROTOBUF):
        status, body, headers = await _fetch(api, accept)
        assert status == 200 and headers["Content-Type"] == PROTOBUF and headers["Vary"] == "Accept"
        assert headers["ETag"] == f'"{hashlib.sha512(body).hexdigest().upper()}"' != json_etag
        assert headers["Cache-Control"] == "no-cache, private"
        again, empty, _ = await _fetch(api, accept, **{"If-None-Match": headers["ETag"]})
        assert again == 304 and not empty
        bodies.add(body)
    (body,) = bodies
    assert _one(body, 1) == b"2.0"  # Document.swagger
    info = _one(body, 2)
    assert (_one(info, 1).decode(), _one(info, 2).decode()) == (document["info"]["title"], document["info"]["version"])
    assert list(_named(_one(body, 9), 1)) == list(document["definitions"])  # Definitions.additional_properties
    assert list(_named(_one(body, 8), 2)) == list(document["paths"])  # Paths.path
    assert not _all(body, 16) and not _all(_one(body, 8), 1)  # no vendor extensions at those levels


async def test_protobuf_operations_and_schemas(api: Client) -> None:
    status, body, _ = await _fetch(api, CLIENT_GO)
    assert status == 200
    item = _named(_one(body, 8), 2)[DEPLOYMENTS + "/{name}"]
    patch = _one(item, 8)  # PathItem.patch
    assert _one(patch, 5) == b"patchAppsV1NamespacedDeployment"  # Operation.operation_id
    assert {value.decode() for value in _all(patch, 7)} == PATCH_TYPES  # consumes
    assert _one(patch, 1) == b"apps_v1"  # tags
    assert _extension(patch, 13, "x-kubernetes-group-version-kind") == {"group": "apps", "kind": "Deployment", "version": "v1"}
    assert _extension(patch, 13, "x-kubernetes-action") == "patch"
    parameters = [_one(entry, 1) for entry in _all(patch, 8)]  # ParametersItem.parameter
    body_parameter = _one(parameters[0], 1)  # Parameter.body_parameter
    assert (_one(body_parameter, 2), _one(body_parameter, 3), _one(body_parameter, 4)) == (b"body", b"body", 1)
    assert _one(_one(body_parameter, 5), 1).startswith(b"#/definitions/")  # Schema._ref
    queries = {_one(q, 4).decode(): q for q in (_one(_one(p, 2), 3) for p in parameters[1:])}  # non-body, query
    assert {"fieldValidation", "fieldManager", "dryRun", "force"} <= set(queries)
    assert _one(queries["fieldManager"], 2) == b"query" and _one(queries["fieldManager"], 6) == b"string"
    assert not _all(queries["force"], 1)  # required: false is a proto3 zero, left out
    for path_parameter in (_one(_one(_one(entry, 1), 2), 4) for entry in _all(item, 9)):  # PathItem.parameters
        assert _one(path_parameter, 1) == 1 and _one(path_parameter, 2) == b"path"
    answer = _one(_named(_one(patch, 9), 1)["200"], 1)  # Responses.response_code -> ResponseValue.response
    assert _one(answer, 1) and _one(_one(_one(answer, 2), 1), 1).startswith(b"#/definitions/")  # SchemaItem.schema

    definitions = _named(_one(body, 9), 1)
    spec = _named(_one(definitions["io.k8s.api.apps.v1.DeploymentSpec"], 25), 1)  # Schema.properties
    assert _one(_one(spec["replicas"], 22), 1) == b"integer" and _one(spec["replicas"], 2) == b"int32"
    assert _one(spec["template"], 1) == b"#/definitions/io.k8s.api.core.v1.PodTemplateSpec"
    assert _one(spec["replicas"], 4).startswith(b"How many Pods")
    int_or_string = definitions["io.k8s.apimachinery.pkg.util.intstr.IntOrString"]
    assert _one(int_or_string, 2) == b"int-or-string" and _extension(int_or_string, 31, "x-kubernetes-int-or-string") is True
    labels = _named(_one(definitions["io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"], 25), 1)["labels"]
    assert _one(_one(_one(_one(labels, 21), 1), 22), 1) == b"string"  # additionalProperties -> schema -> type
    deployment = definitions["io.k8s.api.apps.v1.Deployment"]
    assert _extension(deployment, 31, "x-kubernetes-group-version-kind") == [{"group": "apps", "kind": "Deployment", "version": "v1"}]


def test_encoding_follows_gnostic_for_every_case() -> None:
    """The cases the served document has few or none of, against bytes written by hand."""
    document = {
        "swagger": "2.0", "info": {"title": "t", "version": "1", "x-logo": {"url": "u"}},
        "securityDefinitions": {"BearerToken": {"type": "apiKey", "name": "authorization", "in": "header"},
                                "oauth": {"type": "oauth2", "flow": "password", "tokenUrl": "https://t", "scopes": {"read": "r"}}},
        "security": [{"BearerToken": []}],
        "paths": {"/a": {"get": {"parameters": [{"$ref": "#/parameters/p"},
                                                {"name": "h", "in": "header", "type": "array", "items": {"type": "integer", "maximum": 1.5}}],
                                 "responses": {"200": {"$ref": "#/responses/r"},
                                               "default": {"description": "d", "schema": {"type": "file"}}}}},
                  "x-paths": True},
        "definitions": {"S": {"type": ["object", "null"], "additionalProperties": False, "minLength": -1,
                              "enum": ["a", 1], "items": {"type": "string"}, "required": [""]}},
    }
    encoded = encode_document(document)

    def entry(number: int, name: str, value: bytes) -> bytes:
        """Field ``number`` holding a Named* message: name = 1, value = 2."""
        return f(number, f(1, name) + f(2, value))

    definition = (  # fields in number order, whatever the JSON's order
        f(12, -1)  # min_length, int64 two's complement
        + f(19, "")  # required: a repeated string keeps empty items
        + f(20, f(2, "a\n")) + f(20, f(2, "1\n"))  # enum: each an Any with its YAML text
        + f(21, f(2, False))  # additionalProperties: false is the oneof's bool case, written though zero
        + f(22, f(1, "object") + f(1, "null"))  # TypeItem.value
        + f(23, f(1, f(22, f(1, "string"))))  # ItemsItem.schema
    )
    items = f(1, "integer") + varint(6 << 3 | 1) + struct.pack("<d", 1.5)  # PrimitivesItems: type, maximum (double)
    header = f(2, "header") + f(4, "h") + f(5, "array") + f(7, items)
    operation = (
        f(8, f(2, f(1, "#/parameters/p")))  # ParametersItem.json_reference
        + f(8, f(1, f(2, f(1, header))))  # ParametersItem.parameter -> non_body -> header sub-schema
        + f(9, entry(1, "200", f(2, f(1, "#/responses/r")))  # ResponseValue.json_reference
            + entry(1, "default", f(1, f(1, "d") + f(2, f(2, f(6, "file"))))))  # response, SchemaItem.file_schema
    )
    api_key = f(2, f(1, "apiKey") + f(2, "authorization") + f(3, "header"))
    password = f(4, f(1, "oauth2") + f(2, "password") + f(3, entry(1, "read", b"r")) + f(4, "https://t"))
    expected = (
        f(1, "2.0")
        + f(2, f(1, "t") + f(2, "1") + entry(7, "x-logo", f(2, "url: u\n")))
        + f(8, entry(1, "x-paths", f(2, "true\n")) + entry(2, "/a", f(2, operation)))
        + f(9, entry(1, "S", definition))
        + f(12, entry(1, "BearerToken", b""))  # SecurityRequirement -> an empty StringArray, still written
        + f(13, entry(1, "BearerToken", api_key) + entry(1, "oauth", password))
    )
    assert encoded == expected


def test_encoding_refuses_what_gnostic_refuses() -> None:
    for document, message in (
        ({"swagger": "2.0", "nullable": True}, "Document has no property 'nullable'"),
        ({"definitions": {"S": {"anyOf": []}}}, "Schema has no property 'anyOf'"),
        ({"paths": {"a": {}}}, "Paths has no property 'a'"),
        ({"definitions": {"S": {"items": [{}]}}}, "items must be one schema"),
        ({"definitions": {"S": {"maxLength": 1.5}}}, "expected a number"),
        ({"paths": {"/a": {"get": {"parameters": [{"in": "cookie"}]}}}}, "cannot be in 'cookie'"),
    ):
        with pytest.raises(EncodeError, match=re.escape(message)):
            encode_document(document)


async def test_accept_header_picks_the_form(api: Client) -> None:
    for accept, form in (
        ("", "json"), ("*/*", "json"), ("application/*", "json"),
        (f"{CLIENT_GO}, application/json", "protobuf"),  # the first clause wins, as in kube-openapi
        (f"application/json;q=0.5, {CLIENT_GO}", "protobuf"),
        (f"{PROTOBUF};q=0.5, application/json", "json"),
        (f"*/*, {PROTOBUF}", "protobuf"),  # an exact type before a wildcard of the same quality
        (f"{PROTOBUF};q=0, */*;q=0.1", "json"),
    ):
        status, body, headers = await _fetch(api, accept)
        assert status == 200, accept
        assert headers["Content-Type"].startswith("application/json" if form == "json" else PROTOBUF), accept
        assert (body.startswith(b"{")) == (form == "json"), accept
    for refused in ("text/html", f"{PROTOBUF};q=0", "application/vnd.kubernetes.protobuf;q=1"):
        reply = await api.get("/openapi/v2", headers={"Accept": refused})
        assert reply.status == 406, refused
        assert reply.body["kind"] == "Status" and reply.body["reason"] == "NotAcceptable"
        assert PROTOBUF in reply.body["message"]


async def test_protobuf_follows_scheme_changes(api: Client, server: APIServer) -> None:
    _, before, _ = await _fetch(api, CLIENT_GO)
    server.scheme.add_kind(group="gizmos.test.kplane.io", kind="Gizmo", plural="gizmos", internal=Widget,
                           versions={"v1": WidgetV1}, storage_version="v1")
    try:
        _, after, _ = await _fetch(api, CLIENT_GO)
        assert "io.kplane.test.gizmos.v1.Gizmo" in _named(_one(after, 9), 1)
        assert "/apis/gizmos.test.kplane.io/v1/gizmos" in _named(_one(after, 8), 2)
    finally:
        server.scheme.remove_group("gizmos.test.kplane.io")
    _, restored, _ = await _fetch(api, CLIENT_GO)
    assert restored == before


def test_kubectl_explain_reads_the_protobuf_form(kubectl: Kubectl) -> None:
    """``--output=plaintext-openapiv2`` decodes /openapi/v2 with gnostic's Go types."""
    explained = kubectl.run("explain", "deployments.spec.replicas", "--output=plaintext-openapiv2", "-v=7")
    assert f"Accept: {CLIENT_GO}" in explained.stderr and "Response Status: 200 OK" in explained.stderr
    assert "FIELD:    replicas <integer>" in explained.stdout and "How many Pods should run" in explained.stdout
    pods = kubectl.run("explain", "pods", "--recursive", "--output=plaintext-openapiv2").stdout
    assert "KIND:     Pod" in pods and "containers\t<[]Object>" in pods and "labels\t<map[string]string>" in pods
    flunders = kubectl.run("explain", "flunders.spec", "--api-version=wardle.example.com/v1beta1",
                           "--output=plaintext-openapiv2").stdout
    assert "KIND:     Flunder" in flunders and "VERSION:  wardle.example.com/v1beta1" in flunders


def test_kubectl_reads_it(kubectl: Kubectl) -> None:
    raw = json.loads(kubectl.run("get", "--raw", "/openapi/v2").stdout)
    assert raw["swagger"] == "2.0" and DEPLOYMENTS in raw["paths"]
