"""OpenAPI v2: one Swagger 2.0 document of every group-version served here, over real HTTP."""

from __future__ import annotations

import json
from typing import Any

from kplane.core.serving.apiserver import APIServer
from tests.conftest import Client
from tests.kubectl_cli import Kubectl
from tests.test_openapi import refs_in

PATCH_TYPES = {
    "application/json-patch+json",
    "application/merge-patch+json",
    "application/strategic-merge-patch+json",
    "application/apply-patch+yaml",
}
DEPLOYMENTS = "/apis/apps/v1/namespaces/{namespace}/deployments"
DEFINITIONS = "#/definitions/"




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
    assert "components" not in json.dumps(document)
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


async def test_protobuf_only_is_not_acceptable(api: Client) -> None:
    for protobuf in ("application/com.github.proto-openapi.spec.v2@v1.0+protobuf",
                     "application/com.github.proto-openapi.spec.v2.v1.0+protobuf"):
        refused = await api.get("/openapi/v2", headers={"Accept": protobuf})
        assert refused.status == 406, refused
        assert refused.body["kind"] == "Status" and refused.body["reason"] == "NotAcceptable"
        both = await api.get("/openapi/v2", headers={"Accept": f"{protobuf}, application/json"})
        assert both.status == 200 and both.body["swagger"] == "2.0"


def test_kubectl_reads_it(kubectl: Kubectl) -> None:
    raw = json.loads(kubectl.run("get", "--raw", "/openapi/v2").stdout)
    assert raw["swagger"] == "2.0" and DEPLOYMENTS in raw["paths"]
