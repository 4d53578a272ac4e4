"""OpenAPI v3: the index, the generated documents, their caching, and what the real kubectl does with them."""

from __future__ import annotations

import email.utils
import hashlib
import http.client
import json
import os
import re
import shutil
import subprocess
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from kplane.core.meta.schemas import ObjectMetaSchema
from kplane.core.registry.registry import Endpoint
from kplane.core.registry.scale import ScaleAdapter, ScaleREST
from kplane.core.registry.strategy import RESOURCE_VERBS, SUBRESOURCE_VERBS
from kplane.core.runtime import fields
from kplane.core.runtime.gvk import GroupVersion
from kplane.core.runtime.schema import Schema
from kplane.core.runtime.scheme import Scheme
from kplane.core.serving.apiserver import APIServer
from kplane.core.server.openapi import OpenAPI, build_document, group_prefix
from kplane.plugins.apps.v1.schemas import DeploymentSpecSchema, DeploymentStrategySchema
from kplane.plugins.core import types as core_types
from kplane.plugins.core.v1.schemas import ContainerSchema, PodSchema, PodTemplateSpecSchema
from tests.conftest import Client
from tests.servers import serving
from tests.kubectl_cli import DEPLOYMENT
from tests.waiting import wait_until

HASH = re.compile(r"^[0-9A-F]{128}$")
PATCH_TYPES = {
    "application/json-patch+json",
    "application/merge-patch+json",
    "application/strategic-merge-patch+json",
    "application/apply-patch+yaml",
}
DEPLOYMENT_ITEM = "/apis/apps/v1/namespaces/{namespace}/deployments/{name}"
CORE_V1 = "io.k8s.api.core.v1."
APPS_V1 = "io.k8s.api.apps.v1."
META_V1 = "io.k8s.apimachinery.pkg.apis.meta.v1."
RESOURCE, STATUS = Endpoint(tuple(sorted(RESOURCE_VERBS))), Endpoint(tuple(sorted(SUBRESOURCE_VERBS)))
SCALE_ENDPOINT = Endpoint.of(ScaleREST(None, ScaleAdapter()))  # type: ignore[arg-type]  # the class declares it all


async def _document(api: Client, key: str) -> dict[str, Any]:
    url = (await api.get("/openapi/v3")).body["paths"][key]["serverRelativeURL"]
    reply = await api.get(url)
    assert reply.status == 200, reply
    return reply.body


def refs_in(node: Any) -> Iterator[str]:
    """Every ``$ref`` in a document, however deep (the OpenAPI v2 tests use it too)."""
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "$ref":
                yield value
            else:
                yield from refs_in(value)
    elif isinstance(node, list):
        for item in node:
            yield from refs_in(item)


def _target(document: dict[str, Any], ref: str) -> dict[str, Any]:
    assert ref.startswith("#/components/schemas/"), ref
    return document["components"]["schemas"][ref.removeprefix("#/components/schemas/")]


def _all_refs_resolve(document: dict[str, Any]) -> None:
    refs = set(refs_in(document))
    assert refs
    missing = {r for r in refs if r.removeprefix("#/components/schemas/") not in document["components"]["schemas"]}
    assert not missing


def _operations(document: dict[str, Any]) -> Iterator[tuple[str, str, dict[str, Any]]]:
    for path, item in document["paths"].items():
        for method, operation in item.items():
            if method != "parameters":
                yield path, method, operation


def _query_params(operation: dict[str, Any]) -> set[str]:
    return {p["name"] for p in operation["parameters"] if p["in"] == "query"}


# -- the index and the documents ----------------------------------------------------------------------
async def test_index_lists_every_served_group_version(api: Client, server: APIServer) -> None:
    reply = await api.get("/openapi/v3")
    assert reply.status == 200 and reply.headers["Content-Type"].startswith("application/json")
    expected = {f"apis/{g}/{v}" if g else f"api/{v}" for g, versions in server.scheme.groups().items() for v in versions}
    assert set(reply.body["paths"]) == expected >= {"api/v1", "apis/apps/v1"}
    assert "apis/apps/v1beta2" not in expected  # off by default, as in Kubernetes 1.32
    assert (await api.get("/openapi/v3/apis/apps/v1beta2")).status == 404
    for key, entry in reply.body["paths"].items():
        path, _, digest = entry["serverRelativeURL"].partition("?hash=")
        assert path == f"/openapi/v3/{key}" and HASH.match(digest)
    assert reply.headers["Cache-Control"] == "no-cache, private"
    assert reply.headers["ETag"] == '"%s"' % hashlib.sha512(json.dumps(reply.body, separators=(",", ":")).encode()).hexdigest().upper()
    unhashed = await api.get("/openapi/v3/apis/apps/v1")
    assert unhashed.status == 200 and unhashed.body["openapi"].startswith("3.0")
    assert (await api.get("/openapi/v3/apis/nope.example.com/v1")).status == 404


async def test_kinds_and_operations_carry_what_kubectl_looks_for(api: Client) -> None:
    doc = await _document(api, "apis/apps/v1")
    schemas = doc["components"]["schemas"]
    deployment = schemas[APPS_V1 + "Deployment"]
    assert deployment["x-kubernetes-group-version-kind"] == [{"group": "apps", "kind": "Deployment", "version": "v1"}]
    assert list(deployment["properties"])[:2] == ["apiVersion", "kind"]
    assert deployment["properties"]["spec"]["allOf"] == [{"$ref": f"#/components/schemas/{APPS_V1}DeploymentSpec"}]
    assert deployment["description"].startswith("A Deployment runs")
    assert schemas[APPS_V1 + "DeploymentList"]["x-kubernetes-group-version-kind"][0]["kind"] == "DeploymentList"
    surge = schemas[APPS_V1 + "RollingUpdateDeployment"]["properties"]["maxSurge"]
    assert surge["description"] and _target(doc, surge["allOf"][0]["$ref"])["x-kubernetes-int-or-string"] is True

    patch = doc["paths"][DEPLOYMENT_ITEM]["patch"]
    assert patch["x-kubernetes-group-version-kind"] == {"group": "apps", "kind": "Deployment", "version": "v1"}
    assert patch["x-kubernetes-action"] == "patch"
    assert {"fieldValidation", "dryRun", "fieldManager", "force"} <= _query_params(patch)
    assert set(patch["requestBody"]["content"]) == PATCH_TYPES
    for method in ("post", "put"):
        path = DEPLOYMENT_ITEM if method == "put" else DEPLOYMENT_ITEM.removesuffix("/{name}")
        assert {"fieldValidation", "dryRun", "fieldManager"} <= _query_params(doc["paths"][path][method])
    listing = doc["paths"]["/apis/apps/v1/namespaces/{namespace}/deployments"]["get"]
    assert listing["x-kubernetes-action"] == "list" and {"watch", "labelSelector", "limit"} <= _query_params(listing)
    actions = {(path, op["x-kubernetes-action"]) for path, _, op in _operations(doc) if "deployments" in path}
    assert {a for _, a in actions} == {"get", "list", "post", "put", "patch", "delete", "deletecollection"}
    assert all("x-kubernetes-group-version-kind" in op for _, _, op in _operations(doc))

    status = doc["paths"][DEPLOYMENT_ITEM + "/status"]
    assert set(status) == {"parameters", "get", "put", "patch"}
    assert "fieldValidation" in _query_params(status["patch"])
    scale = doc["paths"][DEPLOYMENT_ITEM + "/scale"]["patch"]
    assert scale["x-kubernetes-group-version-kind"] == {"group": "autoscaling", "kind": "Scale", "version": "v1"}
    assert schemas["io.k8s.api.autoscaling.v1.Scale"]["properties"]["spec"]["allOf"][0]["$ref"].endswith("autoscaling.v1.ScaleSpec")
    assert "/apis/apps/v1/deployments" in doc["paths"]  # across namespaces
    _all_refs_resolve(doc)


def _openapi_verbs(doc: dict[str, Any], collection: str, sub: str) -> tuple[set[str], dict[str, dict[str, Any]]]:
    """The Kubernetes verbs a resource's (or subresource's) OpenAPI paths offer, and its operations
    by verb; a list operation with a watch parameter serves watch too."""
    methods = {"get": "get", "put": "update", "patch": "patch", "delete": "delete", "post": "create"}  # post: a connect
    paths = [f"{collection}/{{name}}/{sub}"] if sub else [collection, f"{collection}/{{name}}"]
    found: dict[str, dict[str, Any]] = {}
    for path in paths:
        for method, op in (doc["paths"].get(path) or {}).items():
            if method in ("parameters", "head", "options"):  # the last two: a proxy's, standing for no verb
                continue
            action = op["x-kubernetes-action"]
            verb = {"list": "list", "deletecollection": "deletecollection", "post": "create"}.get(action) or methods[method]
            assert verb not in found, (path, verb)
            found[verb] = op
            if action == "list" and "watch" in _query_params(op):
                found["watch"] = op
    return set(found), found


async def test_operations_are_the_discovery_verbs_of_every_resource_and_subresource(api: Client, server: APIServer) -> None:
    """For every served group-version, each resource's and subresource's OpenAPI operations are
    exactly the verbs discovery lists for it, marked with the kind discovery names, and no path is
    left over; both are read from the running server."""
    compared = set()
    for group, versions in server.scheme.groups().items():
        for version in versions:
            gv = GroupVersion(group, version)
            key = f"apis/{group}/{version}" if group else f"api/{version}"
            doc = await _document(api, key)
            resources = (await api.get(f"/{key}")).body["resources"]
            covered: set[str] = set()
            for entry in resources:
                plural, _, sub = entry["name"].partition("/")
                root = f"/{key}"
                collection = f"{root}/namespaces/{{namespace}}/{plural}" if entry["namespaced"] else f"{root}/{plural}"
                verbs, ops = _openapi_verbs(doc, collection, sub)
                assert verbs == set(entry["verbs"]), (entry["name"], verbs, entry["verbs"])
                kind = {"group": entry.get("group", group), "kind": entry["kind"], "version": entry.get("version", version)}
                for verb, op in ops.items():
                    assert op["x-kubernetes-group-version-kind"] == kind, (entry["name"], verb)
                covered |= {f"{collection}/{{name}}/{sub}"} if sub else {collection, f"{collection}/{{name}}"}
                if entry["namespaced"] and not sub and "list" in entry["verbs"]:
                    covered.add(f"{root}/{plural}")
                    listed = doc["paths"][f"{root}/{plural}"]
                    assert set(listed) == {"get"} and listed["get"]["x-kubernetes-action"] == "list"
                compared.add((gv.api_version, entry["name"]))
            assert set(doc["paths"]) <= covered, set(doc["paths"]) - covered
    # the cases that differed: a POST-only subresource, a resource without deletecollection, an update-only one
    assert {("v1", "pods/binding"), ("v1", "namespaces"), ("v1", "namespaces/finalize"), ("apps/v1", "deployments/scale")} <= compared


async def test_bodies_and_answers_are_the_kinds_each_operation_takes(api: Client) -> None:
    core = await _document(api, "api/v1")
    pods = "/api/v1/namespaces/{namespace}/pods/{name}"

    def schema(op: dict[str, Any], code: str) -> str:
        return op["responses"][code]["content"]["application/json"]["schema"]["$ref"].rsplit("/", 1)[-1]

    binding = core["paths"][pods + "/binding"]
    assert set(binding) == {"parameters", "post"}
    post = binding["post"]
    assert post["requestBody"]["content"]["application/json"]["schema"]["$ref"].endswith(CORE_V1 + "Binding")
    assert set(post["responses"]) == {"201"} and schema(post, "201") == CORE_V1 + "Binding"
    assert post["x-kubernetes-group-version-kind"] == {"group": "", "kind": "Binding", "version": "v1"}
    assert {"dryRun", "fieldManager", "fieldValidation"} == _query_params(post)
    assert "target" in core["components"]["schemas"][CORE_V1 + "Binding"]["properties"]

    assert set(core["paths"]["/api/v1/namespaces"]) == {"get", "post"}  # no deletecollection
    assert set(core["paths"]["/api/v1/namespaces/{name}/finalize"]) == {"parameters", "put"}
    # DELETE answers: the object for kinds whose storage returns it, a Status for the others
    returned = {"pods": "Pod", "services": "Service", "serviceaccounts": "ServiceAccount"}
    for plural, kind in [*returned.items(), ("configmaps", "Status"), ("secrets", "Status")]:
        delete = core["paths"][f"/api/v1/namespaces/{{namespace}}/{plural}/{{name}}"]["delete"]
        wanted = (CORE_V1 + kind) if plural in returned else META_V1 + "Status"
        assert (schema(delete, "200"), schema(delete, "202")) == (wanted, wanted), plural
        assert _query_params(delete) == {"dryRun", "gracePeriodSeconds", "orphanDependents", "propagationPolicy"}
    namespace_delete = core["paths"]["/api/v1/namespaces/{name}"]["delete"]
    assert schema(namespace_delete, "200") == CORE_V1 + "Namespace"

    apps = await _document(api, "apis/apps/v1")
    scale = apps["paths"][DEPLOYMENT_ITEM + "/scale"]
    assert set(scale) == {"parameters", "get", "put", "patch"}
    assert scale["put"]["requestBody"]["content"]["application/json"]["schema"]["$ref"].endswith("io.k8s.api.autoscaling.v1.Scale")
    assert schema(scale["put"], "200") == schema(scale["patch"], "200") == "io.k8s.api.autoscaling.v1.Scale"
    collection = apps["paths"]["/apis/apps/v1/namespaces/{namespace}/deployments"]
    assert "orphanDependents" in _query_params(collection["delete"])
    assert "sendInitialEvents" not in _query_params(collection["get"])  # not served
    validation = next(p for p in collection["post"]["parameters"] if p["name"] == "fieldValidation")["description"]
    assert "Warn unless given" in validation and "Strict unless" not in validation
    _all_refs_resolve(core)


async def test_types_come_from_the_field_classes(api: Client) -> None:
    doc = await _document(api, "api/v1")
    schemas = doc["components"]["schemas"]
    containers = schemas[CORE_V1 + "PodSpec"]["properties"]["containers"]
    assert containers["type"] == "array" and containers["items"] == {"$ref": f"#/components/schemas/{CORE_V1}Container"}
    assert containers["x-kubernetes-patch-merge-key"] == "name" and containers["x-kubernetes-patch-strategy"] == "merge"
    assert containers["x-kubernetes-list-type"] == "map" and containers["x-kubernetes-list-map-keys"] == ["name"]
    ports = schemas[CORE_V1 + "Container"]["properties"]["ports"]
    assert ports["x-kubernetes-list-map-keys"] == ["containerPort", "protocol"]
    assert ports["description"] == ContainerSchema().fields["ports"].metadata["description"]
    meta = schemas[META_V1 + "ObjectMeta"]["properties"]
    assert meta["labels"] == {"description": meta["labels"]["description"], "type": "object", "additionalProperties": {"type": "string"}}
    assert meta["creationTimestamp"]["format"] == "date-time" and meta["generation"]["type"] == "integer"
    assert meta["finalizers"]["x-kubernetes-list-type"] == "set"
    container = schemas[CORE_V1 + "Container"]["properties"]
    assert container["livenessProbe"]["x-kubernetes-preserve-unknown-fields"] is True
    assert container["stdin"]["type"] == "boolean"
    limits = schemas[CORE_V1 + "ResourceRequirements"]["properties"]["limits"]["additionalProperties"]
    assert limits == {"$ref": "#/components/schemas/io.k8s.apimachinery.pkg.api.resource.Quantity"}
    assert {"string", "number"} == {t["type"] for t in _target(doc, limits["$ref"])["oneOf"]}
    namespace_paths = [p for p in doc["paths"] if "namespaces" in p and "{namespace}" not in p]
    assert set(namespace_paths) == {"/api/v1/namespaces", "/api/v1/namespaces/{name}", "/api/v1/namespaces/{name}/status",
                                    "/api/v1/namespaces/{name}/finalize"}
    assert "/api/v1/namespaces/{namespace}/pods/{name}" in doc["paths"] and "/api/v1/pods" in doc["paths"]
    _all_refs_resolve(doc)


@pytest.mark.runtime_config("apps/v1beta2=true")
async def test_apps_v1beta2_names_the_shared_classes_after_itself(api: Client) -> None:
    doc = await _document(api, "apis/apps/v1beta2")
    names = set(doc["components"]["schemas"])
    assert {"io.k8s.api.apps.v1beta2.Deployment", "io.k8s.api.apps.v1beta2.DeploymentSpec", "io.k8s.api.apps.v1beta2.ReplicaSet"} <= names
    assert not any(n.startswith(APPS_V1) for n in names)
    assert CORE_V1 + "PodTemplateSpec" in names and META_V1 + "LabelSelector" in names
    kinds = doc["components"]["schemas"]["io.k8s.api.apps.v1beta2.Deployment"]["x-kubernetes-group-version-kind"]
    assert kinds == [{"group": "apps", "kind": "Deployment", "version": "v1beta2"}]
    _all_refs_resolve(doc)


# -- caching ------------------------------------------------------------------------------------------
async def test_hashed_urls_are_immutable_and_stale_hashes_redirect(api: Client) -> None:
    url = (await api.get("/openapi/v3")).body["paths"]["apis/apps/v1"]["serverRelativeURL"]
    digest = url.partition("?hash=")[2]
    async with api.session.get(url) as resp:
        body = await resp.read()
        headers = resp.headers
    assert hashlib.sha512(body).hexdigest().upper() == digest
    assert headers["ETag"] == f'"{digest}"' and headers["Cache-Control"] == "public, immutable"
    expires = email.utils.parsedate_to_datetime(headers["Expires"]).timestamp()
    assert expires > time.time() + 364 * 24 * 3600

    plain = await api.get(url.partition("?")[0])
    assert plain.headers["ETag"] == f'"{digest}"' and plain.headers["Cache-Control"] == "no-cache, private"
    assert "Expires" not in plain.headers

    for path in (url, url.partition("?")[0]):
        again = await api.get(path, headers={"If-None-Match": f'"{digest}"'})
        assert again.status == 304 and again.headers["ETag"] == f'"{digest}"'
    index_etag = (await api.get("/openapi/v3")).headers["ETag"]
    assert (await api.get("/openapi/v3", headers={"If-None-Match": index_etag})).status == 304

    async with api.session.get(url.partition("?")[0] + "?hash=" + "0" * 128, allow_redirects=False) as stale:
        assert stale.status == 301 and stale.headers["Location"] == url
        assert "immutable" not in stale.headers.get("Cache-Control", "")


async def test_documents_follow_scheme_changes(api: Client, server: APIServer) -> None:
    before = (await api.get("/openapi/v3")).body["paths"]
    server.scheme.add_kind(group="gizmos.test.kplane.io", kind="Gizmo", plural="gizmos", internal=Widget,
                           versions={"v1": WidgetV1}, storage_version="v1")
    after = (await api.get("/openapi/v3")).body["paths"]
    assert set(after) == set(before) | {"apis/gizmos.test.kplane.io/v1"}
    assert after["apis/apps/v1"] == before["apis/apps/v1"]  # an unrelated change keeps the hash
    doc = await _document(api, "apis/gizmos.test.kplane.io/v1")
    assert "io.kplane.test.gizmos.v1.Gizmo" in doc["components"]["schemas"]
    server.scheme.remove_group("gizmos.test.kplane.io")
    assert "apis/gizmos.test.kplane.io/v1" not in (await api.get("/openapi/v3")).body["paths"]
    assert (await api.get("/openapi/v3/apis/gizmos.test.kplane.io/v1")).status == 404


async def test_only_json_is_served(api: Client) -> None:
    # (v2 is served in protobuf too: tests/test_openapi_v2.py)
    protobuf = await api.get("/openapi/v3/api/v1", headers={"Accept": "application/com.github.proto-openapi.spec.v3.v1.0+protobuf"})
    assert protobuf.status == 406
    assert (await api.get("/openapi/v3/api/v1", headers={"Accept": "application/json, */*"})).status == 200


# -- naming, with a throwaway scheme --------------------------------------------------------------------
@dataclass(slots=True)
class Widget:
    metadata: Any = None
    spec: Any = None


class PartSchema(Schema):
    """A part, made of parts."""

    name = fields.Str(required=True, metadata={"description": "Name of the part."})
    parts = fields.List(fields.Nested(lambda: PartSchema()))


class WidgetSpecV1(Schema):
    size = fields.Int()
    ratio = fields.Float()
    template = fields.Nested(PodTemplateSpecSchema)
    parts = fields.List(fields.Nested(PartSchema), metadata=fields.merge_by("name"))
    anything = fields.Raw()


class WidgetV1(Schema):
    """A widget.

    Made of parts.
    """

    metadata = fields.Nested(ObjectMetaSchema)
    spec = fields.Nested(WidgetSpecV1)


class WidgetSpecV1alpha1(Schema):
    count = fields.Int()


class WidgetV1alpha1(Schema):
    metadata = fields.Nested(ObjectMetaSchema)
    spec = fields.Nested(WidgetSpecV1alpha1)


def test_group_prefixes() -> None:
    assert group_prefix("") == "io.k8s.api.core"
    assert group_prefix("apps") == "io.k8s.api.apps"
    assert group_prefix("rbac.authorization.k8s.io") == "io.k8s.api.rbac"
    assert group_prefix("widgets.test.kplane.io") == "io.kplane.test.widgets"


def test_third_party_names_and_shared_classes() -> None:
    scheme = Scheme()
    scheme.add_kind(group="", kind="Pod", plural="pods", internal=core_types.Pod, versions={"v1": PodSchema}, storage_version="v1")
    scheme.add_kind(group="widgets.test.kplane.io", kind="Widget", plural="widgets", internal=Widget,
                    versions={"v1": WidgetV1, "v1alpha1": WidgetV1alpha1}, storage_version="v1")
    doc = build_document(scheme, GroupVersion("widgets.test.kplane.io", "v1"),
                         lambda group, plural, version: {"": RESOURCE, "scale": SCALE_ENDPOINT, "status": STATUS})
    schemas = doc["components"]["schemas"]
    widget = schemas["io.kplane.test.widgets.v1.Widget"]
    assert widget["x-kubernetes-group-version-kind"] == [{"group": "widgets.test.kplane.io", "kind": "Widget", "version": "v1"}]
    assert widget["description"] == "A widget.\n\nMade of parts."
    spec = schemas["io.kplane.test.widgets.v1.WidgetSpec"]["properties"]
    assert spec["template"]["allOf"][0]["$ref"] == f"#/components/schemas/{CORE_V1}PodTemplateSpec"
    assert spec["size"] == {"type": "integer", "format": "int64"} and spec["ratio"]["type"] == "number"
    assert spec["anything"] == {"x-kubernetes-preserve-unknown-fields": True}
    part = schemas["io.kplane.test.widgets.v1.Part"]
    assert part["required"] == ["name"] and part["properties"]["parts"]["items"]["$ref"].endswith("widgets.v1.Part")
    assert META_V1 + "ObjectMeta" in schemas and "io.k8s.api.autoscaling.v1.Scale" in schemas
    assert doc["paths"]["/apis/widgets.test.kplane.io/v1/namespaces/{namespace}/widgets/{name}/status"]["patch"][
        "x-kubernetes-group-version-kind"]["kind"] == "Widget"
    _all_refs_resolve(doc)

    alpha = build_document(scheme, GroupVersion("widgets.test.kplane.io", "v1alpha1"), lambda group, plural, version: {"": RESOURCE})
    assert {"io.kplane.test.widgets.v1alpha1.Widget", "io.kplane.test.widgets.v1alpha1.WidgetSpec"} <= set(alpha["components"]["schemas"])

    core = build_document(scheme, GroupVersion("", "v1"), lambda group, plural, version: {"": RESOURCE})
    assert CORE_V1 + "Pod" in core["components"]["schemas"] and "/api/v1/namespaces/{namespace}/pods" in core["paths"]


def test_documents_are_built_once_per_scheme_generation() -> None:
    scheme = Scheme()
    scheme.add_kind(group="", kind="Pod", plural="pods", internal=core_types.Pod, versions={"v1": PodSchema}, storage_version="v1")

    class OnlyResources:
        def endpoints(self, group: str, plural: str, version: str = "") -> dict[str, Endpoint]:
            return {"": RESOURCE}

    openapi = OpenAPI(scheme, OnlyResources())  # type: ignore[arg-type]
    index, documents = openapi.current()
    assert openapi.current()[0] is index and openapi.current()[1] is documents
    scheme.add_kind(group="widgets.test.kplane.io", kind="Widget", plural="widgets", internal=Widget,
                    versions={"v1": WidgetV1}, storage_version="v1")
    assert set(openapi.current()[1]) == {"api/v1", "apis/widgets.test.kplane.io/v1"}


# -- the real kubectl ----------------------------------------------------------------------------------
class _Recorder(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, upstream: int) -> None:
        super().__init__(("127.0.0.1", 0), _Forward)
        self.upstream = upstream
        self.seen: list[tuple[str, str]] = []


class _Forward(BaseHTTPRequestHandler):
    """Passes each request to the server unchanged and records it, so tests see what kubectl asked."""

    protocol_version = "HTTP/1.1"
    server: _Recorder

    def _forward(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else None
        self.server.seen.append((self.command, self.path))
        upstream = http.client.HTTPConnection("127.0.0.1", self.server.upstream, timeout=30)
        skip = {"host", "connection", "accept-encoding", "content-length"}
        upstream.request(self.command, self.path, body=body, headers={k: v for k, v in self.headers.items() if k.lower() not in skip})
        reply = upstream.getresponse()
        data = reply.read()
        self.send_response(reply.status)
        for key, value in reply.getheaders():
            if key.lower() not in ("transfer-encoding", "connection", "content-length"):
                self.send_header(key, value)
        if reply.status != 304:
            self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        if reply.status != 304:
            self.wfile.write(data)
        upstream.close()

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = _forward

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: the test reads ``seen``."""


@dataclass
class Kubectl:
    env: dict[str, str]
    workdir: Path
    recorder: _Recorder

    def run(self, *args: str, stdin: str | None = None, check: bool = True) -> subprocess.CompletedProcess[str]:
        done = subprocess.run(["kubectl", *args], input=stdin, capture_output=True, text=True, env=self.env, timeout=60)
        if check and done.returncode != 0:
            raise AssertionError(f"kubectl {' '.join(args)} failed ({done.returncode}): {done.stderr}")
        return done

    def requests(self, *args: str, stdin: str | None = None, check: bool = True) -> tuple[subprocess.CompletedProcess[str], list[tuple[str, str]]]:
        """Run kubectl; also return the requests it sent."""
        start = len(self.recorder.seen)
        done = self.run(*args, stdin=stdin, check=check)
        return done, self.recorder.seen[start:]


def _openapi_gets(seen: list[tuple[str, str]]) -> list[str]:
    return [path.partition("?")[0] for method, path in seen if method == "GET" and path.startswith("/openapi/")]


@pytest.fixture(scope="module")
def kubectl(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Kubectl]:
    if shutil.which("kubectl") is None:
        pytest.skip("kubectl is not on PATH")
    workdir = tmp_path_factory.mktemp("openapi-kubectl")
    with serving(workdir / "data") as served:
        recorder = _Recorder(served.port)
        threading.Thread(target=recorder.serve_forever, daemon=True).start()
        try:
            proxied = workdir / "kubeconfig"
            proxied.write_text(served.kubeconfig.read_text().replace(f":{served.port}", f":{recorder.server_address[1]}"))
            env = {**os.environ, "KUBECONFIG": str(proxied), "KUBECACHEDIR": str(workdir / "cache"), "HOME": str(workdir)}
            yield Kubectl(env, workdir, recorder)
        finally:
            recorder.shutdown()


def _flat(text: str) -> str:
    return " ".join(text.split())


def _wait_rolled_out(kubectl: Kubectl, name: str, limit: float = 30.0) -> None:
    """Poll (the recording proxy does not stream watches) until the deployment is available."""
    def rolled_out() -> bool:
        live = json.loads(kubectl.run("get", "deploy", name, "-o", "json").stdout)
        status = live.get("status", {})
        return bool(status.get("observedGeneration") == live["metadata"]["generation"]
                    and status.get("availableReplicas") == live["spec"]["replicas"])
    wait_until(rolled_out, limit, every=0.2, what=f"deployment {name} to roll out")


def test_kubectl_writes_with_default_validation(kubectl: Kubectl) -> None:
    done, seen = kubectl.requests("create", "-f", "-", stdin=DEPLOYMENT)
    assert done.stdout.strip() == "deployment.apps/web created"
    assert _openapi_gets(seen) == ["/openapi/v3", "/openapi/v3/apis/apps/v1"]
    assert any(m == "POST" and "fieldValidation=Strict" in p for m, p in seen)

    other = DEPLOYMENT.replace("name: web", "name: api", 1)
    done, seen = kubectl.requests("apply", "-f", "-", stdin=other)
    assert done.stdout.strip() == "deployment.apps/api created"
    assert _openapi_gets(seen) == ["/openapi/v3"]  # the document comes from kubectl's cache

    _wait_rolled_out(kubectl, "web")  # replace sends the live resourceVersion: let the controller settle
    done, seen = kubectl.requests("replace", "-f", "-", stdin=DEPLOYMENT.replace("replicas: 2", "replicas: 3"))
    assert done.stdout.strip() == "deployment.apps/web replaced"
    assert _openapi_gets(seen) == ["/openapi/v3"]
    assert json.loads(kubectl.run("get", "deploy", "web", "-o", "json").stdout)["spec"]["replicas"] == 3

    unknown = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: typo}\ndata: {a: b}\ncolour: blue\n"
    refused = kubectl.run("create", "-f", "-", stdin=unknown, check=False)
    assert refused.returncode == 1 and 'unknown field "colour"' in refused.stderr


def test_kubectl_explain(kubectl: Kubectl) -> None:
    strategy, seen = kubectl.requests("explain", "deployment.spec.strategy")
    text = _flat(strategy.stdout)
    assert "FIELD: strategy <DeploymentStrategy>" in text and "rollingUpdate <RollingUpdateDeployment>" in text
    assert _flat(DeploymentSpecSchema().fields["strategy"].metadata["description"]) in text
    assert _flat(DeploymentStrategySchema().fields["type"].metadata["description"]) in text
    assert "/openapi/v3" in _openapi_gets(seen)

    containers = _flat(kubectl.run("explain", "pods.spec.containers").stdout)
    assert "FIELD: containers <[]Container>" in containers and "image <string>" in containers
    assert _flat(ContainerSchema().fields["image"].metadata["description"]) in containers
    assert "ports <[]ContainerPort>" in containers

    rolling = _flat(kubectl.run("explain", "deployment.spec.strategy.rollingUpdate").stdout)
    assert "maxSurge <IntOrString>" in rolling

    head = kubectl.run("explain", "deployment", "--recursive").stdout.splitlines()[:20]
    assert head[:3] == ["GROUP:      apps", "KIND:       Deployment", "VERSION:    v1"]
    assert any(line.strip().split() == ["metadata", "<ObjectMeta>"] for line in head)

    assert kubectl.run("explain", "deployment", "--api-version=apps/v1beta2", check=False).returncode != 0  # not served

    again, seen = kubectl.requests("explain", "pods.spec.containers")
    assert _openapi_gets(seen) == ["/openapi/v3"]
    assert _flat(again.stdout) == containers
