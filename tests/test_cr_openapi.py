"""Custom resources in OpenAPI v3 and v2 as kube-apiserver publishes them, what kubectl does with
that (explain, validation, client-side apply), server-side apply on a CRD's list types, and the
generated classes going with their CRD."""

from __future__ import annotations

import copy
import gc
import json
import weakref
from pathlib import Path
from typing import Any

import yaml
from marshmallow import fields as mfields

from tests.waiting import eventually, wait_until

CRD = yaml.safe_load((Path(__file__).parent / "fixtures" / "crontab-crd.yaml").read_text())
CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
CRONTABS = "/apis/stable.example.com/v1/namespaces/default/crontabs"
KIND = "com.example.stable.v1.CronTab"
APPLY = "application/apply-patch+yaml"
META = "#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"


async def _served(api, crd: dict[str, Any]) -> dict[str, Any]:
    """Create or update ``crd`` and wait until OpenAPI publishes what it says now."""
    current = await api.get(f"{CRDS}/{crd['metadata']['name']}")
    if current.status == 404:
        reply = await api.post(CRDS, crd)
    else:
        crd = {**crd, "metadata": {**crd["metadata"], "resourceVersion": current.body["metadata"]["resourceVersion"]}}
        reply = await api.put(f"{CRDS}/{crd['metadata']['name']}", crd)
    assert reply.status in (200, 201), reply
    want = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"].get("description")

    async def published() -> dict[str, Any] | None:
        document = await api.get("/openapi/v3/apis/stable.example.com/v1")
        component = document.body["components"]["schemas"].get(KIND) if document.status == 200 else None
        return document.body if component is not None and component.get("description") == want else None

    return await eventually(published, what="the CRD in OpenAPI v3")


async def test_v3_publishes_the_crd_schema_as_kubernetes_does(api):
    document = await _served(api, CRD)
    schemas = document["components"]["schemas"]
    assert f"{KIND}List" in schemas
    kind = schemas[KIND]
    assert kind["description"] == "CronTab runs a job on a schedule.\nSecond line of the description."
    assert kind["required"] == ["spec"]
    assert kind["x-kubernetes-group-version-kind"] == [{"group": "stable.example.com", "kind": "CronTab", "version": "v1"}]
    assert kind["properties"]["metadata"]["allOf"] == [{"$ref": META}]
    assert {"apiVersion", "kind", "metadata", "spec", "status"} == set(kind["properties"])
    spec = kind["properties"]["spec"]
    written = CRD["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]
    assert spec["x-kubernetes-validations"] == written["x-kubernetes-validations"]
    fields = spec["properties"]
    # an int-or-string node gets the anyOf that says so (structural schemas' Unfold)
    assert fields["replicas"] == {"description": "How many, or a percentage.", "x-kubernetes-int-or-string": True,
                                  "anyOf": [{"type": "integer"}, {"type": "string"}]}
    for name in ("tags", "args", "selector", "labels", "extra", "note", "ports"):
        assert fields[name] == written["properties"][name], name  # verbatim: extensions, defaults, nullable
    template = fields["template"]  # an embedded resource gets apiVersion, kind and metadata
    assert template["required"] == ["kind", "apiVersion"]
    assert template["properties"]["metadata"]["allOf"] == [{"$ref": META}]
    assert template["properties"]["apiVersion"]["type"] == template["properties"]["kind"]["type"] == "string"
    assert template["properties"]["spec"] == written["properties"]["template"]["properties"]["spec"]
    patch = document["paths"][f"{CRONTABS.replace('default', '{namespace}')}/{{name}}"]["patch"]
    assert list(patch["requestBody"]["content"]) == [
        "application/json-patch+json", "application/merge-patch+json", "application/apply-patch+yaml"]
    assert "fieldValidation" in {p["name"] for p in patch["parameters"]}


async def test_v2_converts_the_schema_as_kubernetes_does(api):
    await _served(api, CRD)
    reply = await api.get("/openapi/v2")
    kind = reply.body["definitions"][KIND]
    assert kind["description"].startswith("CronTab runs a job")
    assert kind["properties"]["metadata"]["$ref"] == "#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
    fields = kind["properties"]["spec"]["properties"]
    assert fields["replicas"] == {"description": "How many, or a percentage.", "x-kubernetes-int-or-string": True}
    assert fields["extra"] == {"x-kubernetes-preserve-unknown-fields": True}  # no type: object, as kubectl needs
    assert fields["note"] == {}  # nullable: untyped, without its properties
    assert fields["template"] == {"description": "The pod the job runs.", "x-kubernetes-embedded-resource": True,
                                  "x-kubernetes-preserve-unknown-fields": True}
    assert fields["ports"]["items"]["properties"]["protocol"] == {"type": "string"}  # defaults pruned from v2
    assert fields["ports"]["x-kubernetes-list-map-keys"] == ["containerPort", "protocol"]
    assert "x-kubernetes-validations" in kind["properties"]["spec"]
    assert f"{KIND}List" in reply.body["definitions"]
    protobuf = await api.session.get("/openapi/v2", headers={"Accept": "application/com.github.proto-openapi.spec.v2@v1.0+protobuf"})
    body = await protobuf.read()
    assert protobuf.status == 200 and KIND.encode() in body and b"The schedule, in cron format." in body


async def test_a_changed_crd_changes_the_document_and_its_hash(api):
    await _served(api, CRD)
    index = (await api.get("/openapi/v3")).body["paths"]["apis/stable.example.com/v1"]["serverRelativeURL"]
    changed = copy.deepcopy(CRD)
    changed["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["description"] = "Now described otherwise."
    await _served(api, changed)
    now = (await api.get("/openapi/v3")).body["paths"]["apis/stable.example.com/v1"]["serverRelativeURL"]
    assert now != index
    async with api.session.get(index, allow_redirects=False) as stale:
        assert stale.status == 301 and stale.headers["Location"] == now
    await api.delete(f"{CRDS}/{CRD['metadata']['name']}")

    async def gone() -> bool:
        return "apis/stable.example.com/v1" not in (await api.get("/openapi/v3")).body["paths"]

    await eventually(gone, what="the group-version to leave OpenAPI")
    assert KIND not in (await api.get("/openapi/v2")).body["definitions"]


async def _apply(api, name: str, manager: str, spec: dict[str, Any], **params: str):
    body = {"apiVersion": "stable.example.com/v1", "kind": "CronTab", "metadata": {"name": name}, "spec": spec}
    return await api.request("PATCH", f"{CRONTABS}/{name}", raw=yaml.safe_dump(body).encode(), content_type=APPLY,
                             params={"fieldManager": manager, **params})


async def test_server_side_apply_merges_a_crds_list_types(api):
    await _served(api, CRD)
    first = await _apply(api, "job", "alice", {"cronSpec": "* * * * *", "tags": ["a"], "args": ["x", "y"],
                                               "selector": {"app": "web"}, "labels": {"team": "one"},
                                               "ports": [{"containerPort": 80}]})
    assert first.status == 201, first
    second = await _apply(api, "job", "bob", {"tags": ["b"], "labels": {"owner": "bob"},
                                              "ports": [{"containerPort": 80, "protocol": "UDP"}, {"containerPort": 443}]})
    assert second.status == 200, second
    spec = second.body["spec"]
    # ports is a map keyed by (containerPort, protocol), protocol defaulting to TCP: 80/TCP stays alice's
    assert spec["ports"] == [{"containerPort": 80, "protocol": "TCP"}, {"containerPort": 80, "protocol": "UDP"},
                             {"containerPort": 443, "protocol": "TCP"}]
    assert spec["tags"] == ["a", "b"] and spec["labels"] == {"team": "one", "owner": "bob"}
    managed = {e["manager"]: e["fieldsV1"] for e in second.body["metadata"]["managedFields"]}
    assert set(managed["alice"]["f:spec"]["f:ports"]) == {'k:{"containerPort":80,"protocol":"TCP"}'}
    assert set(managed["bob"]["f:spec"]["f:ports"]) == {'k:{"containerPort":80,"protocol":"UDP"}',
                                                        'k:{"containerPort":443,"protocol":"TCP"}'}
    assert managed["alice"]["f:spec"]["f:tags"] == {'v:"a"': {}} and managed["bob"]["f:spec"]["f:tags"] == {'v:"b"': {}}
    assert managed["alice"]["f:spec"]["f:args"] == {} and managed["alice"]["f:spec"]["f:selector"] == {}  # atomic
    # atomic list and atomic map: another value is a conflict on the whole field
    conflict = await _apply(api, "job", "bob", {"args": ["z"], "selector": {"app": "db"},
                                                "ports": [{"containerPort": 80, "protocol": "TCP"}]})
    assert conflict.status == 409 and conflict.body["reason"] == "Conflict", conflict
    assert conflict.body["message"] == (
        'Apply failed with 2 conflicts: conflicts with "alice":\n'
        "- .spec.args\n"
        "- .spec.selector")
    forced = await _apply(api, "job", "bob", {"args": ["z"], "selector": {"app": "db"}}, force="true")
    assert forced.status == 200 and forced.body["spec"]["args"] == ["z"] and forced.body["spec"]["selector"] == {"app": "db"}
    managed = {e["manager"]: e["fieldsV1"] for e in forced.body["metadata"]["managedFields"]}
    assert "f:args" not in managed["alice"]["f:spec"] and "f:selector" not in managed["alice"]["f:spec"]
    # bob no longer applies his ports: they go, alice's stays
    assert (await _apply(api, "job", "bob", {"args": ["z"], "selector": {"app": "db"}})).body["spec"]["ports"] == [
        {"containerPort": 80, "protocol": "TCP"}]


def _classes(server) -> list[weakref.ref[type]]:
    """Weak references to the classes serving the CronTab kind now, nested ones included."""
    rt = server.scheme.get("stable.example.com", "crontabs")
    found: list[type] = []
    todo = [type(version.schema) for version in rt.versions.values()]
    while todo:
        cls = todo.pop()
        found.append(cls)
        todo += [type(f.schema) for f in cls().fields.values()
                 if isinstance(f, mfields.Nested) and type(f.schema).__module__.startswith("kplane.customresources.")]
    return [weakref.ref(cls) for cls in found]


async def test_classes_made_for_a_crd_go_when_it_changes_or_goes(server, api):
    await _served(api, CRD)
    made = _classes(server)
    assert len(made) > 5  # the kinds of both versions and the objects inside them
    for n in range(12):
        changed = copy.deepcopy(CRD)
        changed["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["description"] = f"round {n}"
        await _served(api, changed)
        assert (await _apply(api, "job", "alice", {"cronSpec": "* * * * *", "ports": [{"containerPort": n}]})).status in (200, 201)
        made += _classes(server)
    current = {id(ref()) for ref in _classes(server)}
    gc.collect()
    assert [ref for ref in made if ref() is not None and id(ref()) not in current] == []
    await api.delete(f"{CRDS}/{CRD['metadata']['name']}")

    async def gone() -> bool:
        gc.collect()
        return (await api.get("/apis/stable.example.com/v1")).status == 404 and all(ref() is None for ref in made)

    await eventually(gone, what="the CRD's classes to be freed")


# -- kubectl ------------------------------------------------------------------------------------------
def _explain_ready(kubectl, *args: str) -> str:
    def done() -> str | None:
        ran = kubectl.run("explain", *args, check=False)
        return ran.stdout if ran.returncode == 0 else None

    return wait_until(done, what=f"kubectl explain {' '.join(args)}")


def test_kubectl_explain_validate_and_apply(kubectl):
    path = kubectl.workdir / "crontab-crd.yaml"
    path.write_text(yaml.safe_dump(CRD))
    kubectl.run("apply", "-f", str(path))
    nested = _explain_ready(kubectl, "crontabs.spec.template.spec.containers", "--api-version=stable.example.com/v1")
    assert "FIELD: containers <[]Object>" in nested and "The containers of the pod." in nested
    assert "image\t<string>" in nested and "The image to run." in nested and "name\t<string> -required-" in nested
    top = kubectl.run("explain", "crontab", "--api-version=stable.example.com/v1").stdout
    assert "CronTab runs a job on a schedule.\n    Second line of the description." in top and "VERSION:    v1" in top
    recursive = kubectl.run("explain", "crontabs.spec", "--recursive", "--api-version=stable.example.com/v1").stdout
    for line in ("cronSpec\t<string>", "replicas\t<Object>", "containerPort\t<integer> -required-", "image\t<string>"):
        assert line in recursive, line
    v2 = kubectl.run("explain", "crontabs.spec").stdout  # v2 is the preferred version, as Kubernetes sorts them
    assert "VERSION:    v2" in v2 and "The schedule of v2." in v2 and "cronSpec" not in v2
    # server-side validation, found through OpenAPI v3's fieldValidation parameter
    bad = {"apiVersion": "stable.example.com/v1", "kind": "CronTab", "metadata": {"name": "bad"},
           "spec": {"cronSpec": "* * * * *", "bogus": 1}}
    refused = kubectl.run("create", "-f", "-", stdin=json.dumps(bad), check=False)
    assert refused.returncode == 1 and 'strict decoding error: unknown field "spec.bogus"' in refused.stderr, refused.stderr
    # client-side apply: a JSON merge patch, as no strategic merge patch is offered for custom resources
    good = {"apiVersion": "stable.example.com/v1", "kind": "CronTab", "metadata": {"name": "good"},
            "spec": {"cronSpec": "* * * * *", "labels": {"a": "1", "b": "2"}}}
    kubectl.run("apply", "-f", "-", stdin=json.dumps(good))
    good["spec"]["labels"] = {"a": "1"}
    applied = kubectl.run("apply", "-f", "-", "-v=8", stdin=json.dumps(good))
    assert "application/merge-patch+json" in applied.stderr
    assert kubectl.json("get", "crontabs.v1.stable.example.com", "good")["spec"]["labels"] == {"a": "1"}  # v2 has no labels
    # a changed CRD: kubectl's cache follows the new hash
    changed = copy.deepcopy(CRD)
    changed["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]["cronSpec"][
        "description"] = "The schedule, changed."
    path.write_text(yaml.safe_dump(changed))
    kubectl.run("apply", "-f", str(path))
    wait_until(lambda: "The schedule, changed." in kubectl.run("explain", "crontabs.spec.cronSpec", "--api-version=stable.example.com/v1").stdout,
               what="explain to show the changed description")
    kubectl.run("delete", "-f", str(path))


async def test_each_version_publishes_the_subresources_it_serves(api):
    """A subresource (or selectable field) only some versions have is in those versions' documents (v3 and v2) only."""
    schema = {"openAPIV3Schema": {"type": "object", "properties": {
        "spec": {"type": "object", "properties": {"replicas": {"type": "integer"}}},
        "status": {"type": "object", "properties": {"replicas": {"type": "integer"}}}}}}
    scale = {"specReplicasPath": ".spec.replicas", "statusReplicasPath": ".status.replicas"}
    crd = {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
           "metadata": {"name": "widgets.parts.example.com"},
           "spec": {"group": "parts.example.com", "scope": "Namespaced",
                    "names": {"plural": "widgets", "singular": "widget", "kind": "Widget"},
                    "versions": [{"name": "v1", "served": True, "storage": True, "schema": schema,
                                  "subresources": {"status": {}, "scale": scale},
                                  "selectableFields": [{"jsonPath": ".spec.replicas"}]},
                                 {"name": "v2", "served": True, "storage": False,  # a schema of its own
                                  "schema": {"openAPIV3Schema": {**schema["openAPIV3Schema"], "description": "v2"}}}]}}
    assert (await api.post(CRDS, crd)).status == 201

    async def documents() -> dict[str, Any] | None:
        found = {v: await api.get(f"/openapi/v3/apis/parts.example.com/{v}") for v in ("v1", "v2")}
        return {v: d.body for v, d in found.items()} if all(d.status == 200 for d in found.values()) else None

    published = await eventually(documents, what="both versions in OpenAPI v3")
    for version, subresources in (("v1", {"status", "scale"}), ("v2", set())):
        base = f"/apis/parts.example.com/{version}/namespaces/{{namespace}}/widgets/{{name}}"
        paths = published[version]["paths"]
        assert base in paths
        assert {p.removeprefix(base + "/") for p in paths if p.startswith(base + "/")} == subresources, version
    assert "io.k8s.api.autoscaling.v1.Scale" in published["v1"]["components"]["schemas"]
    v2 = (await api.get("/openapi/v2")).body["paths"]
    assert "/apis/parts.example.com/v1/namespaces/{namespace}/widgets/{name}/status" in v2
    assert "/apis/parts.example.com/v1/namespaces/{namespace}/widgets/{name}/scale" in v2
    assert "/apis/parts.example.com/v2/namespaces/{namespace}/widgets/{name}" in v2
    assert "/apis/parts.example.com/v2/namespaces/{namespace}/widgets/{name}/status" not in v2

    # selectable fields, as Kubernetes publishes them: on the kind and its list, in v3 and v2
    selectable = [{"fieldPath": "spec.replicas"}]
    for kind in ("com.example.parts.v1.Widget", "com.example.parts.v1.WidgetList"):
        assert published["v1"]["components"]["schemas"][kind]["x-kubernetes-selectable-fields"] == selectable, kind
        assert "x-kubernetes-selectable-fields" not in published["v2"]["components"]["schemas"][kind.replace("v1", "v2")]
    definitions = (await api.get("/openapi/v2")).body["definitions"]
    assert definitions["com.example.parts.v1.Widget"]["x-kubernetes-selectable-fields"] == selectable
    assert definitions["com.example.parts.v1.WidgetList"]["x-kubernetes-selectable-fields"] == selectable
