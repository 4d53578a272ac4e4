"""Discovery as kube-apiserver 1.32 lists it: storageVersionHash, and verbs and kinds that say
what each resource and subresource really supports (and the router enforcing exactly those)."""

from __future__ import annotations

import pytest

from tests.builders import deployment

AGGREGATED = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"
ALL = ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"]
PODS = "/api/v1/namespaces/default/pods"
POD = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
       "spec": {"containers": [{"name": "c", "image": "busybox"}]}}


async def _entries(api, path: str) -> dict[str, dict]:
    return {r["name"]: r for r in (await api.get(path)).body["resources"]}


# The entries kube-apiserver 1.32 serves for these (of `kubectl get --raw /api/v1` and
# `/apis/apps/v1`), written out from a real cluster's discovery.
KUBE_CORE = {
    "pods": {"name": "pods", "singularName": "pod", "namespaced": True, "kind": "Pod", "verbs": ALL,
             "shortNames": ["po"], "categories": ["all"], "storageVersionHash": "xPOwRZ+Yhw8="},
    "pods/binding": {"name": "pods/binding", "singularName": "", "namespaced": True, "kind": "Binding", "verbs": ["create"]},
    "pods/status": {"name": "pods/status", "singularName": "", "namespaced": True, "kind": "Pod",
                    "verbs": ["get", "patch", "update"]},
    "configmaps": {"name": "configmaps", "singularName": "configmap", "namespaced": True, "kind": "ConfigMap",
                   "verbs": ALL, "shortNames": ["cm"], "storageVersionHash": "qFsyl6wFWjQ="},
    "namespaces": {"name": "namespaces", "singularName": "namespace", "namespaced": False, "kind": "Namespace",
                   "verbs": ["create", "delete", "get", "list", "patch", "update", "watch"], "shortNames": ["ns"],
                   "storageVersionHash": "Q3oi5N2YM8M="},
    "namespaces/finalize": {"name": "namespaces/finalize", "singularName": "", "namespaced": False, "kind": "Namespace",
                            "verbs": ["update"]},
    "namespaces/status": {"name": "namespaces/status", "singularName": "", "namespaced": False, "kind": "Namespace",
                          "verbs": ["get", "patch", "update"]},
}
KUBE_APPS = {
    "deployments": {"name": "deployments", "singularName": "deployment", "namespaced": True, "kind": "Deployment",
                    "verbs": ALL, "shortNames": ["deploy"], "categories": ["all"], "storageVersionHash": "8aSe+NMegvE="},
    "deployments/scale": {"name": "deployments/scale", "singularName": "", "namespaced": True, "group": "autoscaling",
                          "version": "v1", "kind": "Scale", "verbs": ["get", "patch", "update"]},
    "deployments/status": {"name": "deployments/status", "singularName": "", "namespaced": True, "kind": "Deployment",
                           "verbs": ["get", "patch", "update"]},
}


async def test_legacy_entries_are_kube_apiservers(api):
    core = await _entries(api, "/api/v1")
    assert {name: core[name] for name in KUBE_CORE} == KUBE_CORE
    assert list(core["pods/binding"]) == ["name", "singularName", "namespaced", "kind", "verbs"]
    apps = await _entries(api, "/apis/apps/v1")
    assert {name: apps[name] for name in KUBE_APPS} == KUBE_APPS
    assert list(apps["deployments/scale"]) == ["name", "singularName", "namespaced", "group", "version", "kind", "verbs"]


async def test_every_resource_has_a_storage_version_hash_and_no_subresource_does(api):
    for path in ("/api/v1", "/apis/apps/v1", "/apis/coordination.k8s.io/v1", "/apis/apiregistration.k8s.io/v1"):
        for entry in (await api.get(path)).body["resources"]:
            assert ("storageVersionHash" in entry) == ("/" not in entry["name"]), entry
    leases = (await _entries(api, "/apis/coordination.k8s.io/v1"))["leases"]
    assert leases["storageVersionHash"] == "gqkMMb/YqFM="  # as kube-apiserver 1.32 lists it


async def test_aggregated_entries_have_response_kinds_and_verbs_and_no_hash(api):
    core = (await api.get("/api", headers={"Accept": AGGREGATED})).body["items"][0]
    assert core["metadata"] == {"creationTimestamp": None}
    pods = next(r for r in core["versions"][0]["resources"] if r["resource"] == "pods")
    assert list(pods) == ["resource", "responseKind", "scope", "singularResource", "verbs", "shortNames", "categories", "subresources"]
    assert pods["verbs"] == ALL
    assert pods["subresources"] == [
        {"subresource": "attach", "responseKind": {"group": "", "version": "v1", "kind": "PodAttachOptions"}, "verbs": ["create", "get"]},
        {"subresource": "binding", "responseKind": {"group": "", "version": "v1", "kind": "Binding"}, "verbs": ["create"]},
        {"subresource": "eviction", "responseKind": {"group": "policy", "version": "v1", "kind": "Eviction"}, "verbs": ["create"]},
        {"subresource": "exec", "responseKind": {"group": "", "version": "v1", "kind": "PodExecOptions"}, "verbs": ["create", "get"]},
        {"subresource": "log", "responseKind": {"group": "", "version": "v1", "kind": "Pod"}, "verbs": ["get"]},
        {"subresource": "portforward", "responseKind": {"group": "", "version": "v1", "kind": "PodPortForwardOptions"},
         "verbs": ["create", "get"]},
        {"subresource": "proxy", "responseKind": {"group": "", "version": "v1", "kind": "PodProxyOptions"},
         "verbs": ["create", "delete", "get", "patch", "update"]},
        {"subresource": "status", "responseKind": {"group": "", "version": "v1", "kind": "Pod"}, "verbs": ["get", "patch", "update"]},
    ]
    groups = (await api.get("/apis", headers={"Accept": AGGREGATED})).body["items"]
    apps = next(g for g in groups if g["metadata"]["name"] == "apps")
    assert apps["metadata"] == {"name": "apps", "creationTimestamp": None}
    assert list(apps["versions"][0]) == ["version", "resources", "freshness"]
    deployments = next(r for r in apps["versions"][0]["resources"] if r["resource"] == "deployments")
    assert "storageVersionHash" not in deployments
    assert deployments["subresources"][0] == {"subresource": "scale", "verbs": ["get", "patch", "update"],
                                              "responseKind": {"group": "autoscaling", "version": "v1", "kind": "Scale"}}


async def _status(api, method: str, path: str, body=None, content_type="application/json") -> int:
    return (await api.request(method, path, body, content_type=content_type)).status


@pytest.mark.parametrize("method", ["GET", "PUT", "PATCH", "DELETE"])
async def test_pods_binding_takes_only_create(api, method):
    assert (await api.post(PODS, POD)).status == 201
    reply = await api.request(method, f"{PODS}/p/binding", {}, content_type="application/merge-patch+json" if method == "PATCH" else "application/json")
    assert reply.status == 405 and reply.body["reason"] == "MethodNotAllowed"
    assert reply.body["message"] == f"the server does not allow this method on the requested resource ({method} pods/binding)"
    binding = {"apiVersion": "v1", "kind": "Binding", "metadata": {"name": "p"}, "target": {"kind": "Node", "name": "n1"}}
    assert (await api.post(f"{PODS}/p/binding", binding)).status == 201
    assert (await api.get(f"{PODS}/p")).body["spec"]["nodeName"] == "n1"


async def test_status_and_scale_take_get_patch_update_only(api):
    assert (await api.post(PODS, POD)).status == 201
    pod = (await api.get(f"{PODS}/p/status")).body
    assert pod["kind"] == "Pod"
    assert (await api.put(f"{PODS}/p/status", pod)).status == 200
    assert (await api.patch(f"{PODS}/p/status", {"status": {"message": "m"}})).status == 200
    for method in ("POST", "DELETE"):
        assert await _status(api, method, f"{PODS}/p/status", {}) == 405
    deployments = "/apis/apps/v1/namespaces/default/deployments"
    assert (await api.post(deployments, deployment())).status == 201
    scale = (await api.get(f"{deployments}/web/scale")).body
    assert scale["kind"] == "Scale"
    assert (await api.put(f"{deployments}/web/scale", {**scale, "spec": {"replicas": 3}})).status == 200
    assert (await api.patch(f"{deployments}/web/scale", {"spec": {"replicas": 4}})).status == 200
    for method in ("POST", "DELETE"):
        assert await _status(api, method, f"{deployments}/web/scale", {}) == 405
    assert (await api.get(f"{deployments}/web")).body["spec"]["replicas"] == 4


async def test_namespaces_have_no_deletecollection_and_finalize_is_put_only(api):
    assert (await api.post("/api/v1/namespaces", {"metadata": {"name": "team"}})).status == 201
    reply = await api.delete("/api/v1/namespaces")
    assert reply.status == 405 and reply.body["reason"] == "MethodNotAllowed"
    assert (await api.get("/api/v1/namespaces/team")).status == 200  # nothing deleted
    assert await _status(api, "GET", "/api/v1/namespaces/team/finalize") == 405
    assert await _status(api, "PATCH", "/api/v1/namespaces/team/finalize", {}, "application/merge-patch+json") == 405
    namespace = (await api.get("/api/v1/namespaces/team")).body
    assert (await api.put("/api/v1/namespaces/team/finalize", namespace)).status == 200


async def test_a_plugin_cannot_declare_verbs_it_cannot_serve(server):
    from kplane.core.registry.strategy import Strategy

    class Listed(Strategy):
        verbs = frozenset({"list"})

    with pytest.raises(ValueError, match="verbs"):
        server.registry.add_strategy("", "pods", Listed(), subresource="listed")

    class Creating(Strategy):
        verbs = frozenset({"create"})

    with pytest.raises(ValueError, match="apply_post"):
        server.registry.add_strategy("", "pods", Creating(), subresource="creating")


def test_kubectl_api_resources_wide_lists_the_real_verbs(kubectl):
    rows: dict[str, list[str]] = {}
    for line in kubectl.run("api-resources", "-o", "wide").stdout.splitlines()[1:]:
        rows.setdefault(line.split()[0], line.split())  # core's first: metrics.k8s.io has pods and nodes too
    assert rows["pods"] == ["pods", "po", "v1", "true", "Pod", "create,delete,deletecollection,get,list,patch,update,watch", "all"]
    assert rows["namespaces"] == ["namespaces", "ns", "v1", "false", "Namespace", "create,delete,get,list,patch,update,watch"]


# -- served versions (--runtime-config) ------------------------------------------------------------
BETA_DEPLOYMENTS = "/apis/apps/v1beta2/namespaces/default/deployments"


async def _served_apps_versions(api) -> dict[str, object]:
    """What each way of asking says about apps/v1beta2: discovery (both forms), OpenAPI, routing."""
    aggregated = (await api.get("/apis", headers={"Accept": AGGREGATED})).body["items"]
    return {
        "group": [v["version"] for v in (await api.get("/apis/apps")).body["versions"]],
        "list": [v["version"] for g in (await api.get("/apis")).body["groups"] if g["name"] == "apps" for v in g["versions"]],
        "aggregated": [v["version"] for g in aggregated if g["metadata"]["name"] == "apps" for v in g["versions"]],
        "openapi": sorted(k for k in (await api.get("/openapi/v3")).body["paths"] if k.startswith("apis/apps/")),
        "resources": (await api.get("/apis/apps/v1beta2")).status,
        "route": (await api.get(BETA_DEPLOYMENTS)).status,
    }


async def test_apps_v1beta2_is_not_served_by_default(api):
    assert await _served_apps_versions(api) == {
        "group": ["v1"], "list": ["v1"], "aggregated": ["v1"], "openapi": ["apis/apps/v1"], "resources": 404, "route": 404}
    reply = await api.post(BETA_DEPLOYMENTS, deployment(version="apps/v1beta2"))
    assert reply.status == 404 and reply.body["reason"] == "NotFound"
    assert (await api.get("/apis/apps/v1/deployments")).body["items"] == []  # nothing stored


@pytest.mark.runtime_config("apps/v1beta2=true")
async def test_runtime_config_serves_apps_v1beta2_everywhere(api):
    assert await _served_apps_versions(api) == {
        "group": ["v1", "v1beta2"], "list": ["v1", "v1beta2"], "aggregated": ["v1", "v1beta2"],
        "openapi": ["apis/apps/v1", "apis/apps/v1beta2"], "resources": 200, "route": 200}
    created = await api.post(BETA_DEPLOYMENTS, deployment(version="apps/v1beta2"))
    assert created.status == 201 and created.body["apiVersion"] == "apps/v1beta2"
    beta = {r["name"]: r for r in (await api.get("/apis/apps/v1beta2")).body["resources"]}
    assert beta["deployments"]["storageVersionHash"] == "8aSe+NMegvE="  # stored as apps/v1 all the same


@pytest.mark.runtime_config("api/all=false,v1=true,apps/v1=true")
async def test_runtime_config_levels_and_exceptions(api):
    assert [g["name"] for g in (await api.get("/apis")).body["groups"]] == ["apps"]
    assert (await api.get("/apis/coordination.k8s.io/v1/leases")).status == 404
    assert (await api.get("/api/v1/namespaces")).status == 200


def test_kplane_serve_runtime_config_flag(tmp_path):
    import json
    import subprocess
    import sys
    import urllib.request

    from tests.servers import serving

    with serving(tmp_path / "on", "--runtime-config", "apps/v1beta2=true") as served:
        with urllib.request.urlopen(f"{served.url}/apis/apps") as reply:
            assert [v["version"] for v in json.loads(reply.read())["versions"]] == ["v1", "v1beta2"]
    unknown = subprocess.run([sys.executable, "-m", "kplane.core.cli", "serve", "--port", "0", "--data-dir", str(tmp_path / "x"),
                              "--no-controllers", "--runtime-config", "apps/v1beta3=true"], capture_output=True, text=True, timeout=60)
    assert unknown.returncode == 1
    assert unknown.stderr.strip().splitlines()[-1] == "kplane: --runtime-config names group/versions no plugin registers: apps/v1beta3"
    bad = subprocess.run([sys.executable, "-m", "kplane.core.cli", "serve", "--runtime-config", "apps/v1beta2=maybe"],
                         capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2 and "the value must be true or false" in bad.stderr
