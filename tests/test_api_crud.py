"""The REST API over real HTTP and real SQLite: discovery, CRUD, strategies, conversion."""

from __future__ import annotations

import asyncio

import pytest

from tests.builders import DEPLOYMENTS, UNSCHEDULED, configmap, deployment

AGGREGATED = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"


async def test_health_version_and_readiness(api):
    assert (await api.get("/healthz")).body == "ok"
    assert (await api.get("/livez")).body == "ok"
    assert (await api.get("/readyz")).body == "ok"
    version = (await api.get("/version")).body
    assert (version["major"], version["minor"]) == ("1", "32")


async def test_legacy_discovery(api):
    assert (await api.get("/api")).body["versions"] == ["v1"]
    groups = (await api.get("/apis")).body
    apps = next(g for g in groups["groups"] if g["name"] == "apps")
    assert [v["version"] for v in apps["versions"]] == ["v1"]  # apps/v1beta2 is off by default
    assert apps["preferredVersion"]["groupVersion"] == "apps/v1"
    resources = (await api.get("/apis/apps/v1")).body
    names = {r["name"]: r for r in resources["resources"]}
    assert names["deployments"]["namespaced"] is True
    assert names["deployments"]["shortNames"] == ["deploy"]
    assert names["deployments"]["categories"] == ["all"]
    assert "deployments/status" in names
    core = {r["name"]: r for r in (await api.get("/api/v1")).body["resources"]}
    assert core["namespaces"]["namespaced"] is False
    assert {"pods", "events", "configmaps", "secrets", "serviceaccounts", "namespaces/status"} <= set(core)
    assert (await api.get("/apis/apps")).body["preferredVersion"]["version"] == "v1"
    assert (await api.get("/apis/nope.example.com/v1")).status == 404


async def test_aggregated_discovery_uses_the_exact_media_type(api):
    reply = await api.get("/apis", headers={"Accept": AGGREGATED + ",application/json"})
    assert reply.headers["Content-Type"] == AGGREGATED
    apps = next(i for i in reply.body["items"] if i["metadata"]["name"] == "apps")
    v1 = apps["versions"][0]
    assert v1["version"] == "v1"
    deploy = next(r for r in v1["resources"] if r["resource"] == "deployments")
    assert deploy["scope"] == "Namespaced"
    assert deploy["responseKind"] == {"group": "apps", "version": "v1", "kind": "Deployment"}
    assert {s["subresource"]: s["responseKind"]["kind"] for s in deploy["subresources"]} == {"status": "Deployment", "scale": "Scale"}
    assert "watch" in deploy["verbs"]
    core = await api.get("/api", headers={"Accept": AGGREGATED})
    ns = next(r for r in core.body["items"][0]["versions"][0]["resources"] if r["resource"] == "namespaces")
    assert ns["scope"] == "Cluster" and ns["shortNames"] == ["ns"]


async def test_create_sets_system_fields_and_strategy_defaults(api):
    reply = await api.post(DEPLOYMENTS, deployment(replicas=None) | {"status": {"replicas": 9}})
    assert reply.status == 201, reply
    meta = reply.body["metadata"]
    assert meta["uid"] and meta["creationTimestamp"].endswith("Z")
    assert meta["generation"] == 1 and meta["namespace"] == "default"
    assert int(meta["resourceVersion"]) > 0
    assert reply.body["spec"]["replicas"] == 1  # defaulted
    assert reply.body["spec"]["strategy"]["rollingUpdate"] == {"maxUnavailable": "25%", "maxSurge": "25%"}
    assert reply.body["status"] == {}  # create clears status
    got = await api.get(f"{DEPLOYMENTS}/web")
    assert got.body == reply.body


async def test_update_bumps_generation_only_on_spec_change_and_keeps_status(api):
    created = (await api.post(DEPLOYMENTS, deployment())).body
    created["metadata"]["labels"]["extra"] = "yes"
    same_spec = await api.put(f"{DEPLOYMENTS}/web", created)
    assert same_spec.status == 200, same_spec
    assert same_spec.body["metadata"]["generation"] == 1
    body = same_spec.body
    body["spec"]["replicas"] = 4
    body["status"] = {"replicas": 4}
    changed = (await api.put(f"{DEPLOYMENTS}/web", body)).body
    assert changed["metadata"]["generation"] == 2
    assert changed["status"] == {}  # the main resource cannot write status


async def test_status_subresource_changes_only_status(api):
    created = (await api.post(DEPLOYMENTS, deployment())).body
    created["status"] = {"replicas": 2, "readyReplicas": 1, "observedGeneration": 1}
    created["spec"]["replicas"] = 7
    reply = await api.put(f"{DEPLOYMENTS}/web/status", created)
    assert reply.status == 200, reply
    assert reply.body["status"]["readyReplicas"] == 1
    assert reply.body["spec"]["replicas"] == 2
    assert reply.body["metadata"]["generation"] == 1
    patched = await api.patch(f"{DEPLOYMENTS}/web/status", {"status": {"availableReplicas": 1}})
    assert patched.body["status"]["availableReplicas"] == 1
    assert (await api.get(f"{DEPLOYMENTS}/web/status")).body["status"]["readyReplicas"] == 1
    negative = await api.patch(f"{DEPLOYMENTS}/web/status", {"status": {"replicas": -1}})
    assert negative.status == 422 and negative.body["details"]["causes"][0]["field"] == "status.replicas"


@pytest.mark.runtime_config("apps/v1beta2=true")
async def test_written_in_one_version_read_in_the_other(api):
    beta = "/apis/apps/v1beta2/namespaces/default/deployments"
    created = await api.post(beta, deployment(version="apps/v1beta2"))
    assert created.status == 201 and created.body["apiVersion"] == "apps/v1beta2"
    as_v1 = (await api.get(f"{DEPLOYMENTS}/web")).body
    assert as_v1["apiVersion"] == "apps/v1"
    as_beta = (await api.get(f"{beta}/web")).body
    assert {k: v for k, v in as_v1.items() if k != "apiVersion"} == {k: v for k, v in as_beta.items() if k != "apiVersion"}
    listed = (await api.get(beta)).body
    assert listed["kind"] == "DeploymentList" and listed["apiVersion"] == "apps/v1beta2"
    assert listed["items"][0]["apiVersion"] == "apps/v1beta2"
    as_beta["spec"]["replicas"] = 3  # write back through v1beta2: nothing lost, v1 sees it
    assert (await api.put(f"{beta}/web", as_beta)).status == 200
    again = (await api.get(f"{DEPLOYMENTS}/web")).body
    assert again["spec"] == {**as_v1["spec"], "replicas": 3}


async def test_validation_errors_are_422_with_causes_and_store_nothing(api):
    bad = deployment(replicas=-1)
    bad["spec"]["template"]["metadata"]["labels"] = {"app": "other"}
    bad["spec"]["template"]["spec"]["containers"][0]["image"] = ""
    reply = await api.post(DEPLOYMENTS, bad)
    assert reply.status == 422 and reply.body["reason"] == "Invalid"
    fields = {c["field"] for c in reply.body["details"]["causes"]}
    assert {"spec.replicas", "spec.template.metadata.labels", "spec.template.spec.containers[0].image"} <= fields
    assert reply.body["message"].startswith('Deployment.apps "web" is invalid: [')
    assert reply.body["details"]["kind"] == "Deployment" and reply.body["details"]["group"] == "apps"
    no_selector = deployment()
    del no_selector["spec"]["selector"]
    reply = await api.post(DEPLOYMENTS, no_selector)
    assert reply.status == 422 and reply.body["details"]["causes"][0] == {
        "reason": "FieldValueRequired", "message": "Required value", "field": "spec.selector"}
    assert (await api.get(DEPLOYMENTS)).body["items"] == []


async def test_selector_is_immutable(api):
    created = (await api.post(DEPLOYMENTS, deployment())).body
    created["spec"]["selector"] = {"matchLabels": {"app": "web", "x": "y"}}
    created["spec"]["template"]["metadata"]["labels"]["x"] = "y"
    reply = await api.put(f"{DEPLOYMENTS}/web", created)
    assert reply.status == 422
    assert reply.body["details"]["causes"][0]["field"] == "spec.selector"
    assert "field is immutable" in reply.body["message"]


async def test_invalid_names(api):
    reply = await api.post(DEPLOYMENTS, deployment(name="Bad_Name"))
    assert reply.status == 422
    assert any(c["field"] == "metadata.name" for c in reply.body["details"]["causes"])
    ns = await api.post("/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "a.b"}})
    assert ns.status == 422  # namespaces are DNS-1123 labels: no dots


async def test_conflict_on_stale_resource_version(api):
    created = (await api.post(DEPLOYMENTS, deployment())).body
    first = dict(created, spec={**created["spec"], "replicas": 3})
    assert (await api.put(f"{DEPLOYMENTS}/web", first)).status == 200
    stale = dict(created, spec={**created["spec"], "replicas": 4})
    reply = await api.put(f"{DEPLOYMENTS}/web", stale)
    assert reply.status == 409 and reply.body["reason"] == "Conflict"
    assert reply.body["message"] == (
        'Operation cannot be fulfilled on deployments.apps "web": the object has been modified; '
        "please apply your changes to the latest version and try again")
    assert (await api.get(f"{DEPLOYMENTS}/web")).body["spec"]["replicas"] == 3


async def test_unconditional_update_is_allowed_for_deployments(api):
    await api.post(DEPLOYMENTS, deployment())
    body = deployment(replicas=5)
    reply = await api.put(f"{DEPLOYMENTS}/web", body)
    assert reply.status == 200 and reply.body["spec"]["replicas"] == 5


async def test_concurrent_patches_lose_no_update(api):
    await api.post("/api/v1/namespaces/default/configmaps", configmap("counter", {}))

    async def add(i: int) -> int:
        return (await api.patch("/api/v1/namespaces/default/configmaps/counter", {"data": {f"k{i}": "v"}})).status

    assert set(await asyncio.gather(*(add(i) for i in range(20)))) == {200}
    data = (await api.get("/api/v1/namespaces/default/configmaps/counter")).body["data"]
    assert len(data) == 20


async def test_noop_patch_keeps_resource_version(api):
    created = (await api.post(DEPLOYMENTS, deployment())).body
    reply = await api.patch(f"{DEPLOYMENTS}/web", {"spec": {"replicas": 2}})
    assert reply.body["metadata"]["resourceVersion"] == created["metadata"]["resourceVersion"]


async def test_json_patch_and_its_errors(api):
    await api.post(DEPLOYMENTS, deployment())
    ok = await api.patch(f"{DEPLOYMENTS}/web", [{"op": "replace", "path": "/spec/replicas", "value": 6}],
                         content_type="application/json-patch+json")
    assert ok.status == 200 and ok.body["spec"]["replicas"] == 6
    failed = await api.patch(f"{DEPLOYMENTS}/web", [{"op": "test", "path": "/spec/replicas", "value": 1}],
                             content_type="application/json-patch+json")
    assert failed.status == 422 and failed.body["reason"] == "Invalid"
    bad_pointer = await api.patch(f"{DEPLOYMENTS}/web", [{"op": "remove", "path": "/spec/nope/deeper"}],
                                  content_type="application/json-patch+json")
    assert bad_pointer.status == 422
    not_a_patch = await api.patch(f"{DEPLOYMENTS}/web", {"op": "x"}, content_type="application/json-patch+json")
    assert not_a_patch.status == 400
    wrong_type = await api.patch(f"{DEPLOYMENTS}/web", {"spec": {"replicas": "many"}})
    # kube-apiserver's merge patcher: 422 on field "patch" quoting the patched object
    assert wrong_type.status == 422 and wrong_type.body["details"]["causes"][0]["field"] == "patch"
    assert "spec.replicas" in wrong_type.body["message"]
    assert (await api.get(f"{DEPLOYMENTS}/web")).body["spec"]["replicas"] == 6


async def test_dry_run_validates_and_stores_nothing(api):
    reply = await api.post(DEPLOYMENTS, deployment(), params={"dryRun": "All"})
    assert reply.status == 201 and reply.body["metadata"]["uid"]
    assert (await api.get(f"{DEPLOYMENTS}/web")).status == 404
    invalid = await api.post(DEPLOYMENTS, deployment(replicas=-3), params={"dryRun": "All"})
    assert invalid.status == 422
    await api.post(DEPLOYMENTS, deployment())
    patched = await api.patch(f"{DEPLOYMENTS}/web", {"spec": {"replicas": 9}}, params={"dryRun": "All"})
    assert patched.body["spec"]["replicas"] == 9
    assert (await api.get(f"{DEPLOYMENTS}/web")).body["spec"]["replicas"] == 2
    deleted = await api.delete(f"{DEPLOYMENTS}/web", params={"dryRun": "All"})
    assert deleted.status == 200
    assert (await api.get(f"{DEPLOYMENTS}/web")).status == 200
    assert (await api.post(DEPLOYMENTS, deployment(), params={"dryRun": "Some"})).status == 422


async def test_generate_name(api):
    body = configmap("")
    body["metadata"] = {"generateName": "cfg-"}
    names = set()
    for _ in range(5):
        reply = await api.post("/api/v1/namespaces/default/configmaps", body)
        assert reply.status == 201, reply
        names.add(reply.body["metadata"]["name"])
    assert len(names) == 5 and all(n.startswith("cfg-") and len(n) == 9 for n in names)


async def test_already_exists(api):
    await api.post(DEPLOYMENTS, deployment())
    reply = await api.post(DEPLOYMENTS, deployment())
    assert reply.status == 409 and reply.body["reason"] == "AlreadyExists"
    assert reply.body["message"] == 'deployments.apps "web" already exists'


async def test_delete_returns_status_and_honours_preconditions(api):
    created = (await api.post(DEPLOYMENTS, deployment())).body
    wrong = await api.delete(f"{DEPLOYMENTS}/web", {"kind": "DeleteOptions", "apiVersion": "v1", "preconditions": {"uid": "nope"}})
    assert wrong.status == 409 and wrong.body["message"] == (
        f'Operation cannot be fulfilled on Deployment.apps "web": the UID in the precondition (nope) does not match '
        f'the UID in record ({created["metadata"]["uid"]}). The object might have been deleted and then recreated')
    stale = await api.delete(f"{DEPLOYMENTS}/web", {"preconditions": {"resourceVersion": "1"}})
    assert stale.status == 409
    bad_policy = await api.delete(f"{DEPLOYMENTS}/web", params={"propagationPolicy": "Sometimes"})
    assert bad_policy.status == 422
    reply = await api.delete(f"{DEPLOYMENTS}/web", {"propagationPolicy": "Background",
                                                    "preconditions": {"uid": created["metadata"]["uid"]}})
    assert reply.status == 200 and reply.body["status"] == "Success"
    assert reply.body["details"] == {"name": "web", "group": "apps", "kind": "deployments", "uid": created["metadata"]["uid"]}
    assert (await api.get(f"{DEPLOYMENTS}/web")).status == 404
    assert (await api.delete(f"{DEPLOYMENTS}/web")).status == 404


async def test_finalizers_hold_deletion_until_removed(api):
    path = "/api/v1/namespaces/default/configmaps"
    await api.post(path, configmap("held", finalizers=["example.com/hold"]))
    first = await api.delete(f"{path}/held")
    assert first.status == 200 and first.body["metadata"]["deletionTimestamp"]
    kept = (await api.get(f"{path}/held")).body
    assert kept["metadata"]["finalizers"] == ["example.com/hold"]
    added = await api.patch(f"{path}/held", {"metadata": {"finalizers": ["example.com/hold", "another"]}})
    assert added.status == 422  # no new finalizers while deleting
    gone = await api.patch(f"{path}/held", {"metadata": {"finalizers": None}})
    assert gone.status == 200
    assert (await api.get(f"{path}/held")).status == 404


async def test_deletecollection_with_selector(api):
    for name, tier in (("a", "x"), ("b", "x"), ("c", "y")):
        await api.post("/api/v1/namespaces/default/configmaps", configmap(name, labels={"tier": tier}))
    reply = await api.delete("/api/v1/namespaces/default/configmaps", params={"labelSelector": "tier=x"})
    assert reply.status == 200 and {i["metadata"]["name"] for i in reply.body["items"]} == {"a", "b"}
    left = (await api.get("/api/v1/namespaces/default/configmaps")).body["items"]
    assert [i["metadata"]["name"] for i in left] == ["c"]


async def test_deletecollection_answers_the_list_it_read(api):
    """As Store.DeleteCollection: the list before the deletes, with its resourceVersion; with
    ``limit`` only that page is deleted and its continue token comes back."""
    cms = "/api/v1/namespaces/default/configmaps"
    held = (await api.post(cms, configmap("held", finalizers=["example.com/hold"]))).body
    for name in ("p1", "p2", "p3"):
        await api.post(cms, configmap(name, labels={"page": "yes"}))
    reply = await api.delete(cms, params={"fieldSelector": "metadata.name=held"})
    assert reply.status == 200 and int(reply.body["metadata"]["resourceVersion"]) > int(held["metadata"]["resourceVersion"])
    # the object as listed, not as the delete left it (Terminating, with a deletionTimestamp)
    assert [i["metadata"] for i in reply.body["items"]] == [held["metadata"]]
    first = await api.delete(cms, params={"labelSelector": "page=yes", "limit": "2"})
    assert [i["metadata"]["name"] for i in first.body["items"]] == ["p1", "p2"] and first.body["metadata"]["continue"]
    left = (await api.get(cms, params={"labelSelector": "page=yes"})).body["items"]
    assert [i["metadata"]["name"] for i in left] == ["p3"]


async def test_cluster_scoped_namespaces_and_all_namespace_lists(api):
    ns = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team-a"}}
    created = await api.post("/api/v1/namespaces", ns)
    assert created.status == 201
    assert created.body["status"]["phase"] == "Active"
    assert created.body["metadata"]["labels"] == {"kubernetes.io/metadata.name": "team-a"}
    assert "namespace" not in created.body["metadata"]
    await api.post("/api/v1/namespaces/team-a/configmaps", configmap("one"))
    await api.post("/api/v1/namespaces/default/configmaps", configmap("two"))
    everywhere = (await api.get("/api/v1/configmaps")).body["items"]
    assert {(i["metadata"]["namespace"], i["metadata"]["name"]) for i in everywhere} == {("team-a", "one"), ("default", "two")}
    names = {i["metadata"]["name"] for i in (await api.get("/api/v1/namespaces")).body["items"]}
    assert {"default", "kube-system", "kube-public", "kube-node-lease", "team-a"} <= names


async def test_namespaces_are_enforced(api):
    missing = await api.post("/api/v1/namespaces/nowhere/configmaps", configmap("x"))
    assert missing.status == 404 and missing.body["message"] == 'namespaces "nowhere" not found'
    immortal = await api.delete("/api/v1/namespaces/default")
    assert immortal.status == 403
    # A terminating namespace refuses content: see tests/test_namespace_deletion.py.


async def test_pods_secrets_events_service_accounts(api):
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
           "spec": {"schedulerName": UNSCHEDULED, "containers": [{"name": "c", "image": "busybox"}]}}
    created = (await api.post("/api/v1/namespaces/default/pods", pod)).body
    assert created["status"]["phase"] == "Pending"
    assert created["spec"]["restartPolicy"] == "Always"
    assert created["spec"]["containers"][0]["imagePullPolicy"] == "Always"
    created["spec"]["containers"][0]["name"] = "renamed"
    forbidden = await api.put("/api/v1/namespaces/default/pods/p", created)
    assert forbidden.status == 422 and "pod updates may not change fields" in forbidden.body["message"]
    secret = {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"}, "stringData": {"user": "admin"}}
    stored = (await api.post("/api/v1/namespaces/default/secrets", secret)).body
    assert stored["data"] == {"user": "YWRtaW4="} and stored["type"] == "Opaque" and "stringData" not in stored
    bad = await api.post("/api/v1/namespaces/default/secrets",
                         {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "b"}, "data": {"k": "not base64!"}})
    assert bad.status == 400
    event = {"apiVersion": "v1", "kind": "Event", "metadata": {"name": "e1"}, "reason": "Started", "type": "Normal",
             "involvedObject": {"kind": "Pod", "name": "p", "namespace": "default", "uid": created["metadata"]["uid"]}}
    assert (await api.post("/api/v1/namespaces/default/events", event)).status == 201
    sa = {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "robot"}}
    assert (await api.post("/api/v1/namespaces/default/serviceaccounts", sa)).status == 201
