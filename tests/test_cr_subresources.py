"""Custom resources' subresources and presentation, as apiextensions-apiserver serves them:
status and scale (per version), printer columns, selectable fields, short names, categories,
deprecated versions' warnings and a terminating CRD's refusal of new objects."""

from __future__ import annotations

import asyncio
import copy
import json
import time
from pathlib import Path
from typing import Any

import pytest
import yaml

from kplane.plugins.apiextensions.customresource.columns import go_float, printed, typed_cell
from kplane.plugins.apiextensions.customresource.jsonpath import JSONPath, JSONPathError
from tests.crds import CRDS, create_served

CRD = yaml.safe_load((Path(__file__).parent / "fixtures" / "crd-widgets-subresources.yaml").read_text())
V1 = "/apis/example.com/v1/namespaces/default/gizmos"
V1BETA1 = "/apis/example.com/v1beta1/namespaces/default/gizmos"
TABLE = {"Accept": "application/json;as=Table;v=v1;g=meta.k8s.io"}


def gizmo(name: str, **spec: Any) -> dict[str, Any]:
    return {"apiVersion": "example.com/v1", "kind": "Gizmo", "metadata": {"name": name}, "spec": spec}


async def served(api, crd: dict[str, Any], path: str) -> None:
    await create_served(api, crd, path)


@pytest.fixture
async def gizmos(api):
    await served(api, CRD, V1)
    return api


# -- status ---------------------------------------------------------------------------------------
async def test_status_is_reset_on_the_resource_and_alone_changed_through_status(gizmos):
    api = gizmos
    made = await api.post(V1, {**gizmo("a", color="blue", replicas=1), "status": {"replicas": 9}})
    assert made.status == 201 and "status" not in made.body and made.body["metadata"]["generation"] == 1

    with_status = copy.deepcopy(made.body)
    with_status["status"] = {"replicas": 2}
    set_status = await api.put(f"{V1}/a/status", with_status)
    assert set_status.status == 200 and set_status.body["status"] == {"replicas": 2}
    assert set_status.body["metadata"]["generation"] == 1  # a status change is no new generation

    main = copy.deepcopy(set_status.body)
    main["status"] = {"replicas": 5}
    main["metadata"]["labels"] = {"tier": "x"}
    relabelled = await api.put(f"{V1}/a", main)
    assert relabelled.body["status"] == {"replicas": 2}  # the main resource ignores status
    assert relabelled.body["metadata"]["generation"] == 1 and relabelled.body["metadata"]["labels"] == {"tier": "x"}

    spec = copy.deepcopy(relabelled.body)
    spec["spec"]["color"] = "red"
    assert (await api.put(f"{V1}/a", spec)).body["metadata"]["generation"] == 2

    through_status = await api.patch(f"{V1}/a/status", {"spec": {"color": "green"}, "metadata": {"labels": {"tier": "y"}},
                                                       "status": {"replicas": 3}})
    body = through_status.body
    assert through_status.status == 200 and body["status"] == {"replicas": 3}
    assert body["spec"]["color"] == "red" and body["metadata"]["labels"] == {"tier": "x"}
    assert body["metadata"]["generation"] == 2
    managers = {(m["manager"], m.get("subresource", "")) for m in body["metadata"]["managedFields"]}
    assert any(sub == "status" for _, sub in managers)


async def test_an_update_must_name_the_resource_version(gizmos):
    api = gizmos
    made = (await api.post(V1, gizmo("b", color="blue"))).body
    del made["metadata"]["resourceVersion"]
    reply = await api.put(f"{V1}/b", made)
    assert reply.status == 422 and "metadata.resourceVersion" in reply.body["message"], reply


# -- scale ----------------------------------------------------------------------------------------
async def test_scale_reads_and_writes_the_paths(gizmos):
    api = gizmos
    await api.post(V1, gizmo("s", replicas=2))
    await api.patch(f"{V1}/s/status", {"status": {"replicas": 1, "selector": "app=s"}})
    scale = await api.get(f"{V1}/s/scale")
    assert scale.status == 200 and scale.body["kind"] == "Scale" and scale.body["apiVersion"] == "autoscaling/v1"
    assert scale.body["spec"] == {"replicas": 2} and scale.body["status"] == {"replicas": 1, "selector": "app=s"}

    scale.body["spec"]["replicas"] = 4
    put = await api.put(f"{V1}/s/scale", scale.body)
    assert put.status == 200 and put.body["spec"]["replicas"] == 4
    patched = await api.patch(f"{V1}/s/scale", {"spec": {"replicas": 6}})
    assert patched.status == 200 and patched.body["spec"]["replicas"] == 6
    obj = (await api.get(f"{V1}/s")).body
    assert obj["spec"]["replicas"] == 6 and obj["metadata"]["generation"] == 3
    negative = await api.patch(f"{V1}/s/scale", {"spec": {"replicas": -1}})
    assert negative.status == 422, negative


async def test_scale_of_an_object_without_its_count(gizmos):
    api = gizmos
    await api.post(V1, gizmo("empty", color="blue"))
    missing = await api.get(f"{V1}/empty/scale")
    assert missing.status == 500
    assert missing.body["message"] == 'Internal error occurred: the spec replicas field ".spec.replicas" does not exist'
    scaled = await api.patch(f"{V1}/empty/scale", {"spec": {"replicas": 3}})
    assert scaled.status == 200 and (await api.get(f"{V1}/empty")).body["spec"]["replicas"] == 3


LOOSE = {
    "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
    "metadata": {"name": "loose.example.org"},
    "spec": {
        "group": "example.org", "scope": "Cluster",
        "names": {"kind": "Loose", "plural": "loose", "singular": "loose"},
        "versions": [{
            "name": "v1", "served": True, "storage": True,
            "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}},
            "subresources": {"scale": {"specReplicasPath": ".spec.count", "statusReplicasPath": ".status.count",
                                       "labelSelectorPath": ".status.pick"}},
        }],
    },
}


async def test_scale_paths_holding_other_types_are_refused_in_kubernetes_words(api):
    path = "/apis/example.org/v1/loose"
    await served(api, LOOSE, path)
    obj = {"apiVersion": "example.org/v1", "kind": "Loose", "metadata": {"name": "x"},
           "spec": {"count": "three"}, "status": {"count": -1, "pick": {"app": "x"}}}
    reply = await api.post(path, obj)
    assert reply.status == 422, reply
    assert reply.body["message"] == (
        'Loose.example.org "x" is invalid: [.spec.count: Invalid value: 0: .spec.count accessor error: three is of the '
        'type string, expected int64, .status.count: Invalid value: -1: should be a non-negative integer, '
        '.status.pick: Invalid value: "": .status.pick accessor error: map[app:x] is of the type '
        'map[string]interface {}, expected string]')
    assert (await api.get(f"{path}/x")).status == 404
    over = await api.post(path, {**obj, "spec": {"count": 2**31}, "status": {}})
    assert over.status == 422 and "should be less than or equal to 2147483647" in over.body["message"]


# -- per version ----------------------------------------------------------------------------------
async def test_subresources_are_served_in_the_versions_that_declare_them(gizmos):
    api = gizmos
    await api.post(V1, gizmo("v", replicas=1))
    assert (await api.get(f"{V1}/v/status")).status == 200
    assert (await api.get(f"{V1BETA1}/v")).status == 200
    assert (await api.get(f"{V1BETA1}/v/status")).status == 404
    assert (await api.get(f"{V1BETA1}/v/scale")).status == 404
    assert (await api.put(f"{V1BETA1}/v/status", {})).status == 404
    v1 = {r["name"] for r in (await api.get("/apis/example.com/v1")).body["resources"]}
    beta = {r["name"] for r in (await api.get("/apis/example.com/v1beta1")).body["resources"]}
    assert v1 == {"gizmos", "gizmos/status", "gizmos/scale"} and beta == {"gizmos"}
    aggregated = await api.get("/apis", headers={"Accept": "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"})
    group = next(g for g in aggregated.body["items"] if g["metadata"]["name"] == "example.com")
    subs = {v["version"]: [s["subresource"] for s in v["resources"][0].get("subresources", [])] for v in group["versions"]}
    assert subs == {"v1": ["scale", "status"], "v1beta1": []}
    resource = next(r for r in group["versions"][0]["resources"])
    assert resource["shortNames"] == ["gz"] and resource["categories"] == ["gadgets"]


async def test_a_deprecated_version_warns_on_every_request(gizmos):
    api = gizmos
    listed = await api.get(V1BETA1)
    assert listed.headers.getall("Warning") == ['299 - "example.com/v1beta1 Gizmo is deprecated; use example.com/v1 Gizmo"']
    missing = await api.get(f"{V1BETA1}/nothing")
    assert missing.status == 404 and len(missing.headers.getall("Warning")) == 1
    assert "Warning" not in (await api.get(V1)).headers


async def test_a_deprecation_warning_of_the_crds_own(api):
    crd = copy.deepcopy(CRD)
    crd["spec"]["versions"][1]["deprecationWarning"] = "v1beta1 goes in 2030"
    await served(api, crd, V1)
    assert (await api.get(V1BETA1)).headers.getall("Warning") == ['299 - "v1beta1 goes in 2030"']


# -- columns --------------------------------------------------------------------------------------
async def test_printer_columns_in_kubernetes_cells(gizmos):
    api = gizmos
    await api.post(V1, gizmo("t", color="blue", replicas=2, size=2.0, enabled=False, tags=["a", "b"]))
    await api.patch(f"{V1}/t/status", {"status": {"since": "2000-01-01T00:00:00Z",
                                                  "conditions": [{"type": "Other", "status": "False"},
                                                                 {"type": "Ready", "status": "True"}]}})
    await api.post(V1, gizmo("u"))
    table = (await api.get(V1, headers=TABLE)).body
    columns = [(c["name"], c["type"], c["priority"]) for c in table["columnDefinitions"]]
    assert columns == [("Name", "string", 0), ("Color", "string", 0), ("Replicas", "integer", 0), ("Size", "number", 0),
                       ("Enabled", "boolean", 0), ("Ready", "string", 0), ("Tags", "string", 1), ("Since", "date", 0)]
    assert table["columnDefinitions"][1]["description"] == "Custom resource definition column (in JSONPath format): .spec.color"
    cells = {row["cells"][0]: row["cells"] for row in table["rows"]}
    assert cells["t"][:7] == ["t", "blue", 2, 2, False, "True", '["a","b"]'] and cells["t"][7].endswith("y")
    assert cells["u"] == ["u", None, None, None, None, None, None, None]

    beta = (await api.get(V1BETA1, headers=TABLE)).body
    assert [(c["name"], c["type"]) for c in beta["columnDefinitions"]] == [("Name", "string"), ("Age", "date")]
    assert beta["rows"][0]["cells"][1].endswith("s")


def test_cells_of_each_type():
    assert typed_cell("integer", 2.7) == 2 and typed_cell("integer", "2") is None and typed_cell("integer", True) is None
    assert typed_cell("number", 3) == 3 and typed_cell("number", 1.5) == 1.5 and typed_cell("boolean", "true") is None
    assert typed_cell("date", "yesterday") == "<invalid>" and typed_cell("date", "") == "<unknown>"
    assert printed(None) == "<no value>" and printed(1e6) == "1e+06" and printed(True) == "true"
    assert printed({"b": 1, "a": "<"}) == '{"a":"\\u003c","b":1}'
    assert [go_float(f) for f in (0.5, 123456.7, 1234567.0, 0.00001)] == ["0.5", "123456.7", "1.234567e+06", "1e-05"]


def test_jsonpath_as_client_go_evaluates_it():
    obj = {"spec": {"items": [1, 2, 3], "a.b": "dot"},
           "status": {"conditions": [{"type": "A", "n": 1}, {"type": "Ready", "status": "True", "n": 2}]}}
    assert JSONPath.parse('.status.conditions[?(@.type=="Ready")].status').find(obj) == ["True"]
    assert JSONPath.parse(".status.conditions[?(@.n > 1)].type").find(obj) == ["Ready"]
    assert JSONPath.parse(".status.conditions[?(@.status)].type").find(obj) == ["Ready"]
    assert JSONPath.parse(".spec.items[-1]").find(obj) == [3] and JSONPath.parse(".spec.items[0:2]").find(obj) == [1, 2]
    assert JSONPath.parse(".spec.items[*]").find(obj) == [1, 2, 3] and JSONPath.parse("..type").find(obj) == ["A", "Ready"]
    assert JSONPath.parse(r".spec.a\.b").find(obj) == ["dot"] and JSONPath.parse("['spec']['a.b']").find(obj) == ["dot"]
    assert JSONPath.parse(".spec.missing.deeper").find(obj) == [] and JSONPath.parse(".spec.items[7]").find(obj) == []
    assert JSONPath.parse('.status.conditions[?(@.n=="1")].type').first(obj) == (False, None)  # int against string
    with pytest.raises(JSONPathError):
        JSONPath.parse(".spec.items[x]")


# -- selectable fields ----------------------------------------------------------------------------
async def test_field_selectors_on_selectable_fields(gizmos):
    api = gizmos
    await api.post(V1, gizmo("blue", color="blue", replicas=1))
    await api.post(V1, gizmo("red", color="red", replicas=2))

    async def names(query: str, path: str = V1) -> list[str]:
        reply = await api.get(path, params={"fieldSelector": query})
        assert reply.status == 200, reply
        return [i["metadata"]["name"] for i in reply.body["items"]]

    assert await names("spec.color=blue") == ["blue"]
    assert await names("spec.replicas=2") == ["red"] and await names("spec.color!=blue") == ["red"]
    assert await names("metadata.name=red,metadata.namespace=default") == ["red"]
    refused = await api.get(V1, params={"fieldSelector": "spec.size=1"})
    assert refused.status == 400 and refused.body["message"].endswith("field label not supported: spec.size"), refused
    beta = await api.get(V1BETA1, params={"fieldSelector": "spec.color=blue"})  # v1beta1 declares none
    assert beta.status == 400 and beta.body["message"].endswith("field label not supported: spec.color")

    watch = await api.get(V1, params={"watch": "1", "fieldSelector": "spec.color=green", "timeoutSeconds": "2"})
    assert watch.status == 200 and watch.body is None  # nothing green yet: an empty stream
    async def green() -> None:
        await asyncio.sleep(0.3)
        await api.post(V1, gizmo("green", color="green"))
        await api.post(V1, gizmo("grey", color="grey"))
    task = asyncio.create_task(green())
    streamed = await api.get(V1, params={"watch": "1", "fieldSelector": "spec.color=green", "timeoutSeconds": "2"})
    await task
    events = [json.loads(line) for line in streamed.body.splitlines()] if isinstance(streamed.body, str) else [streamed.body]
    assert [(e["type"], e["object"]["metadata"]["name"]) for e in events] == [("ADDED", "green")]


# -- a terminating CRD ----------------------------------------------------------------------------
async def test_a_terminating_crd_refuses_new_objects(gizmos):
    api = gizmos
    await api.post(V1, gizmo("old"))
    await api.patch(f"{CRDS}/gizmos.example.com", {"metadata": {"finalizers": ["example.com/hold"]}})
    assert (await api.delete(f"{CRDS}/gizmos.example.com")).status == 200
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        reply = await api.post(V1, gizmo("new"))
        if reply.status == 403:
            break
        if reply.status == 201:
            await api.delete(f"{V1}/new")
        await asyncio.sleep(0.1)
    assert reply.status == 403 and reply.body["reason"] == "Forbidden", reply
    assert reply.body["message"] == ('gizmos.example.com "new" is forbidden: '
                                     "create not allowed while custom resource definition is terminating")
    await api.patch(f"{CRDS}/gizmos.example.com", {"metadata": {"finalizers": None}})


# -- the real kubectl -----------------------------------------------------------------------------
GIZMO = """
apiVersion: example.com/v1
kind: Gizmo
metadata: {name: k1}
spec: {color: blue, replicas: 2, tags: [a, b]}
"""


@pytest.fixture(scope="module")
def kubectl_gizmos(kubectl):
    kubectl.run("apply", "-f", str(Path(__file__).parent / "fixtures" / "crd-widgets-subresources.yaml"))
    kubectl.run("wait", "--for=condition=Established", "crd/gizmos.example.com", "--timeout=20s")
    for _ in range(100):
        if kubectl.run("get", "gizmos", check=False).returncode == 0:
            break
        time.sleep(0.1)
    kubectl.apply_file("apply", GIZMO)
    return kubectl


def test_kubectl_short_names_categories_and_wide_columns(kubectl_gizmos):
    kubectl = kubectl_gizmos
    short = kubectl.run("get", "gz").stdout.splitlines()
    assert short[0].split() == ["NAME", "COLOR", "REPLICAS", "SIZE", "ENABLED", "READY", "SINCE"]
    assert short[1].split() == ["k1", "blue", "2"]
    wide = kubectl.run("get", "gadgets", "-o", "wide").stdout.splitlines()
    assert "TAGS" in wide[0].split() and '["a","b"]' in wide[1]
    old = kubectl.run("get", "gizmos.v1beta1.example.com")
    assert old.stdout.splitlines()[0].split() == ["NAME", "AGE"]
    assert "Warning: example.com/v1beta1 Gizmo is deprecated; use example.com/v1 Gizmo" in old.stderr


def test_kubectl_status_scale_and_field_selectors(kubectl_gizmos):
    kubectl = kubectl_gizmos
    kubectl.run("patch", "gizmo", "k1", "--subresource=status", "--type=merge", "-p",
                '{"status":{"replicas":1,"selector":"app=k1","conditions":[{"type":"Ready","status":"True"}]},'
                '"spec":{"color":"red"}}')
    obj = kubectl.json("get", "gizmo", "k1")
    assert obj["spec"]["color"] == "blue" and obj["status"]["replicas"] == 1 and obj["metadata"]["generation"] == 1
    assert kubectl.run("get", "gz", "k1", "--no-headers").stdout.split()[-1] == "True"  # Ready (Since is empty)
    assert kubectl.run("scale", "gizmo", "k1", "--replicas=5").stdout.strip() == "gizmo.example.com/k1 scaled"
    scale = json.loads(kubectl.run("get", "--raw", "/apis/example.com/v1/namespaces/default/gizmos/k1/scale").stdout)
    assert scale["spec"] == {"replicas": 5} and scale["status"] == {"replicas": 1, "selector": "app=k1"}
    assert kubectl.json("get", "gizmo", "k1")["metadata"]["generation"] == 2
    assert kubectl.run("get", "gz", "--field-selector", "spec.color=blue", "-o", "name").stdout.split() == ["gizmo.example.com/k1"]
    assert kubectl.run("get", "gz", "--field-selector", "spec.color=red", "-o", "name").stdout == ""
    refused = kubectl.run("get", "gz", "--field-selector", "spec.size=1", check=False)
    assert refused.returncode == 1 and "field label not supported: spec.size" in refused.stderr
