"""Deletion as kube-apiserver does it: DeleteOptions from the body or the query, validated before
anything is deleted; what a DELETE answers; graceful deletion of pods, finished by the kubelet."""

from __future__ import annotations

import asyncio
import json
import shutil
from typing import Any

import pytest

from kplane.core.meta import clock
from tests.kubectl_cli import Kubectl
from tests.waiting import eventually

CMS = "/api/v1/namespaces/default/configmaps"
PODS = "/api/v1/namespaces/default/pods"
SERVICES = "/api/v1/namespaces/default/services"
DEPLOYMENTS = "/apis/apps/v1/namespaces/default/deployments"
needs_kubectl = pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl is not on PATH")


def configmap(name: str, **meta: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "labels": {"set": "a"}, **meta}, "data": {"k": "v"}}


def pod(name: str, **spec: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
            "spec": {"containers": [{"name": "main", "image": "nginx:1.25"}], **spec}}


async def bound_pod(api, name: str, **spec: Any) -> dict[str, Any]:
    """A pod bound to a node, as the scheduler leaves it (no kubelet runs in these tests)."""
    assert (await api.post(PODS, pod(name, **spec))).status == 201
    binding = {"apiVersion": "v1", "kind": "Binding", "metadata": {"name": name}, "target": {"kind": "Node", "name": "node-a"}}
    assert (await api.post(f"{PODS}/{name}/binding", binding)).status == 201
    return (await api.get(f"{PODS}/{name}")).body


def seconds_ahead(timestamp: str) -> float:
    return (clock.parse(timestamp) - clock.parse(clock.now())).total_seconds()


# -- DeleteOptions: body, query, validation ------------------------------------------------------
async def test_a_dry_run_in_the_body_deletes_nothing(api):
    await api.post(CMS, configmap("keep"))
    reply = await api.delete(f"{CMS}/keep", {"kind": "DeleteOptions", "apiVersion": "v1", "dryRun": ["All"]})
    assert reply.status == 200 and reply.body["status"] == "Success"
    assert (await api.get(f"{CMS}/keep")).status == 200
    await api.post(CMS, configmap("b"))
    listed = await api.delete(CMS, {"dryRun": ["All"]}, params={"labelSelector": "set=a"})
    assert listed.status == 200 and {i["metadata"]["name"] for i in listed.body["items"]} == {"keep", "b"}
    assert len((await api.get(CMS)).body["items"]) == 2
    held = configmap("held", finalizers=["example.com/hold"])
    await api.post(CMS, held)
    marked = await api.delete(f"{CMS}/held", {"dryRun": ["All"]})
    assert marked.status == 200 and marked.body["metadata"]["deletionTimestamp"]  # what it would be
    assert "deletionTimestamp" not in (await api.get(f"{CMS}/held")).body["metadata"]


async def test_a_dry_run_in_the_query_holds_beside_a_body(api):
    """kube-apiserver reads the query only without a body; a dry run asked for anywhere must hold."""
    await api.post(CMS, configmap("keep"))
    reply = await api.delete(f"{CMS}/keep", {"propagationPolicy": "Background"}, params={"dryRun": "All"})
    assert reply.status == 200 and (await api.get(f"{CMS}/keep")).status == 200
    assert (await api.delete(f"{CMS}/keep", params={"dryRun": "All"})).status == 200
    assert (await api.get(f"{CMS}/keep")).status == 200


BAD_BODIES = [
    (b"[1]", "must be a DeleteOptions object, not a list"),
    (b'"All"', "not a string"),
    (b"{", None),
    (b'{"gracePeriodSeconds": "x"}', "gracePeriodSeconds must be an integer, not a string"),
    (b'{"gracePeriodSeconds": 1.5}', "gracePeriodSeconds must be an integer"),
    (b'{"gracePeriodSeconds": true}', "gracePeriodSeconds must be an integer, not a boolean"),
    (b'{"gracePeriodSeconds": 9223372036854775808}', "out of range"),
    (b'{"preconditions": "x"}', "preconditions must be an object"),
    (b'{"preconditions": [1]}', "preconditions must be an object, not a list"),
    (b'{"preconditions": {"uid": 5}}', "preconditions.uid must be a string"),
    (b'{"dryRun": "All"}', "dryRun must be a list"),
    (b'{"dryRun": [1]}', "dryRun must be a list of strings"),
    (b'{"orphanDependents": "yes"}', "orphanDependents must be a boolean"),
    (b'{"propagationPolicy": 5}', "propagationPolicy must be a string"),
    (b'{"kind": "Pod", "apiVersion": "v1"}', 'not "Pod"'),
    (b'{"kind": "DeleteOptions", "apiVersion": "foo.example.com/v9"}', '"foo.example.com/v9"'),
]
INVALID_BODIES = [
    ({"dryRun": ["Some"]}, "dryRun", 'Unsupported value: ["Some"]'),
    ({"propagationPolicy": "Sometimes"}, "propagationPolicy", 'Unsupported value: "Sometimes"'),
    ({"orphanDependents": True, "propagationPolicy": "Orphan"}, "propagationPolicy", "orphanDependents and deletionPropagation cannot be both set"),
]


@pytest.mark.parametrize("collection", [False, True], ids=["delete", "deletecollection"])
@pytest.mark.parametrize(("raw", "says"), BAD_BODIES)
async def test_a_malformed_body_is_400_and_deletes_nothing(api, collection, raw, says):
    await api.post(CMS, configmap("keep"))
    reply = await api.request("DELETE", CMS if collection else f"{CMS}/keep", raw=raw)
    assert reply.status == 400 and reply.body["kind"] == "Status" and reply.body["reason"] == "BadRequest", reply
    assert says is None or says in reply.body["message"]
    assert "Traceback" not in reply.body["message"] and "<class" not in reply.body["message"]
    assert (await api.get(f"{CMS}/keep")).status == 200


@pytest.mark.parametrize("collection", [False, True], ids=["delete", "deletecollection"])
@pytest.mark.parametrize(("body", "field", "says"), INVALID_BODIES)
async def test_invalid_options_are_422_and_delete_nothing(api, collection, body, field, says):
    await api.post(CMS, configmap("keep"))
    reply = await api.delete(CMS if collection else f"{CMS}/keep", body)
    assert reply.status == 422 and reply.body["reason"] == "Invalid", reply
    assert reply.body["details"]["kind"] == "DeleteOptions" and reply.body["details"]["group"] == "meta.k8s.io"
    assert [(c["field"], says in c["message"]) for c in reply.body["details"]["causes"]] == [(field, True)]
    assert (await api.get(f"{CMS}/keep")).status == 200


@pytest.mark.parametrize("params", [{"dryRun": "Some"}, {"propagationPolicy": "Sometimes"}, {"gracePeriodSeconds": "x"},
                                    {"orphanDependents": "maybe"}, {"orphanDependents": "true", "propagationPolicy": "Orphan"}])
async def test_bad_query_options_delete_nothing(api, params):
    await api.post(CMS, configmap("keep"))
    for path in (f"{CMS}/keep", CMS):
        reply = await api.delete(path, params=params)
        assert reply.status in (400, 422) and reply.body["kind"] == "Status", reply
    assert (await api.get(f"{CMS}/keep")).status == 200


async def test_body_options_are_honoured(api):
    created = (await api.post(CMS, configmap("cm"))).body
    stale = await api.delete(f"{CMS}/cm", {"preconditions": {"resourceVersion": "1"}})
    assert stale.status == 409 and "the ResourceVersion in the precondition (1) does not match" in stale.body["message"]
    other = await api.delete(f"{CMS}/cm", {"preconditions": {"uid": "someone-else"}})
    assert other.status == 409 and (await api.get(f"{CMS}/cm")).status == 200
    done = await api.delete(f"{CMS}/cm", {"apiVersion": "meta.k8s.io/v1", "kind": "DeleteOptions",
                                          "preconditions": {"uid": created["metadata"]["uid"], "resourceVersion": created["metadata"]["resourceVersion"]}})
    assert done.status == 200 and (await api.get(f"{CMS}/cm")).status == 404


async def test_orphan_dependents_sets_the_orphan_finalizer_and_false_answers_202(api):
    deployment = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
                  "spec": {"selector": {"matchLabels": {"app": "web"}}, "template": {"metadata": {"labels": {"app": "web"}},
                           "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}}
    await api.post(DEPLOYMENTS, deployment)
    # a group's own apiVersion is accepted for its DeleteOptions, as typed clients send it
    orphaned = await api.delete(f"{DEPLOYMENTS}/web", {"kind": "DeleteOptions", "apiVersion": "apps/v1", "orphanDependents": True})
    assert orphaned.status == 200 and orphaned.body["metadata"]["finalizers"] == ["orphan"]
    await api.post(CMS, configmap("held", finalizers=["example.com/hold"]))
    cascading = await api.delete(f"{CMS}/held", {"orphanDependents": False})
    assert cascading.status == 202 and cascading.body["metadata"]["deletionTimestamp"]
    query = await api.delete(f"{CMS}/held", params={"orphanDependents": "true"})
    assert query.status == 200 and query.body["metadata"]["finalizers"] == ["example.com/hold", "orphan"]


# -- what a DELETE answers -------------------------------------------------------------------
async def test_kinds_whose_storage_returns_the_deleted_object(api):
    service = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web"}, "spec": {"ports": [{"port": 80}]}}
    created = (await api.post(SERVICES, service)).body
    reply = await api.delete(f"{SERVICES}/web")
    assert reply.status == 200 and reply.body["kind"] == "Service" and reply.body["metadata"]["uid"] == created["metadata"]["uid"]
    await api.post("/api/v1/namespaces/default/serviceaccounts", {"metadata": {"name": "robot"}})
    reply = await api.delete("/api/v1/namespaces/default/serviceaccounts/robot")
    assert reply.status == 200 and reply.body["kind"] == "ServiceAccount"
    await api.post("/api/v1/namespaces", {"metadata": {"name": "team"}})
    reply = await api.delete("/api/v1/namespaces/team")
    assert reply.status == 200 and reply.body["kind"] == "Namespace" and reply.body["status"]["phase"] == "Terminating"
    await api.post(CMS, configmap("cm"))  # and the others a Status
    reply = await api.delete(f"{CMS}/cm")
    assert reply.body["kind"] == "Status" and reply.body["details"]["kind"] == "configmaps"


# -- graceful deletion -------------------------------------------------------------------------
async def test_a_scheduled_pod_is_deleted_gracefully(api):
    before = await bound_pod(api, "web")
    reply = await api.delete(f"{PODS}/web")
    assert reply.status == 200 and reply.body["kind"] == "Pod"
    meta = reply.body["metadata"]
    assert meta["deletionGracePeriodSeconds"] == 30 and 28 <= seconds_ahead(meta["deletionTimestamp"]) <= 30
    assert meta["resourceVersion"] != before["metadata"]["resourceVersion"]
    stored = (await api.get(f"{PODS}/web")).body["metadata"]
    assert stored["deletionTimestamp"] == meta["deletionTimestamp"] and stored["deletionGracePeriodSeconds"] == 30

    longer = await api.delete(f"{PODS}/web", params={"gracePeriodSeconds": "60"})  # only shorter counts
    assert longer.status == 200 and longer.body["metadata"]["resourceVersion"] == stored["resourceVersion"]
    shorter = await api.delete(f"{PODS}/web", {"gracePeriodSeconds": 10})
    assert shorter.body["metadata"]["deletionGracePeriodSeconds"] == 10
    assert 8 <= seconds_ahead(shorter.body["metadata"]["deletionTimestamp"]) <= 10

    status = {**(await api.get(f"{PODS}/web")).body, "status": {"phase": "Running"}}
    assert (await api.put(f"{PODS}/web/status", status)).status == 200  # the kubelet reporting: no deletion
    assert (await api.get(f"{PODS}/web")).status == 200

    gone = await api.delete(f"{PODS}/web", {"gracePeriodSeconds": 0, "preconditions": {"uid": before["metadata"]["uid"]}})
    assert gone.status == 200 and gone.body["metadata"]["deletionGracePeriodSeconds"] == 0
    assert (await api.get(f"{PODS}/web")).status == 404


async def test_grace_comes_from_the_pod_or_the_request(api):
    await bound_pod(api, "quick", terminationGracePeriodSeconds=5)
    assert (await api.delete(f"{PODS}/quick")).body["metadata"]["deletionGracePeriodSeconds"] == 5
    await bound_pod(api, "negative")
    assert (await api.delete(f"{PODS}/negative", params={"gracePeriodSeconds": "-3"})).body["metadata"]["deletionGracePeriodSeconds"] == 1
    await bound_pod(api, "dry")
    assert (await api.delete(f"{PODS}/dry", {"dryRun": ["All"]})).body["metadata"]["deletionGracePeriodSeconds"] == 30
    assert "deletionTimestamp" not in (await api.get(f"{PODS}/dry")).body["metadata"]


async def test_an_int64_grace_period_is_kept_with_a_deadline_a_century_ahead(api):
    """A timedelta holds less than an int64 of seconds: the deletionTimestamp is capped, never a 500."""
    longest = 2**63 - 1
    await bound_pod(api, "patient", terminationGracePeriodSeconds=longest)
    meta = (await api.delete(f"{PODS}/patient")).body["metadata"]
    assert meta["deletionGracePeriodSeconds"] == longest and seconds_ahead(meta["deletionTimestamp"]) > 99 * 365 * 86400
    await bound_pod(api, "asked")
    reply = await api.delete(f"{PODS}/asked", params={"gracePeriodSeconds": str(longest)})
    assert reply.status == 200 and reply.body["metadata"]["deletionGracePeriodSeconds"] == longest
    shorter = await api.delete(f"{PODS}/asked", {"gracePeriodSeconds": 10})  # shortened from the capped deadline
    assert 8 <= seconds_ahead(shorter.body["metadata"]["deletionTimestamp"]) <= 10


async def test_pods_no_kubelet_runs_go_at_once(api):
    await api.post(PODS, pod("pending"))  # not scheduled
    assert (await api.delete(f"{PODS}/pending")).status == 200
    assert (await api.get(f"{PODS}/pending")).status == 404
    done = await bound_pod(api, "done")
    assert (await api.put(f"{PODS}/done/status", {**done, "status": {"phase": "Succeeded"}})).status == 200
    assert (await api.delete(f"{PODS}/done")).status == 200
    assert (await api.get(f"{PODS}/done")).status == 404


async def test_grace_zero_first_marks_then_removes(api):
    """kube-apiserver writes the deletionTimestamp before removing, so watchers see both."""
    pod_ = await bound_pod(api, "web")
    seen: list[tuple[str, dict[str, Any]]] = []

    async def watch() -> None:
        params = {"watch": "true", "resourceVersion": pod_["metadata"]["resourceVersion"], "timeoutSeconds": "10"}
        async with api.session.get(PODS, params=params) as reply:
            async for line in reply.content:
                event = json.loads(line)
                seen.append((event["type"], event["object"]["metadata"]))
                if event["type"] == "DELETED":
                    return

    watching = asyncio.create_task(watch())
    await asyncio.sleep(0.2)
    assert (await api.delete(f"{PODS}/web", {"gracePeriodSeconds": 0})).status == 200
    await asyncio.wait_for(watching, 15)
    assert [(t, m.get("deletionGracePeriodSeconds")) for t, m in seen] == [("MODIFIED", 0), ("DELETED", 0)]


async def test_finalizers_keep_a_pod_deleted_with_grace_zero(api):
    await bound_pod(api, "held")
    await api.patch(f"{PODS}/held", {"metadata": {"finalizers": ["example.com/hold"]}})
    reply = await api.delete(f"{PODS}/held", {"gracePeriodSeconds": 0})
    assert reply.status == 200 and reply.body["metadata"]["deletionGracePeriodSeconds"] == 0
    assert (await api.get(f"{PODS}/held")).status == 200
    assert (await api.patch(f"{PODS}/held", {"metadata": {"finalizers": None}})).status == 200
    assert (await api.get(f"{PODS}/held")).status == 404


@pytest.mark.controllers
async def test_the_kubelet_stops_a_deleted_pod_then_removes_it(api):
    assert (await api.post(PODS, pod("web"))).status == 201

    async def ready() -> bool:
        body = (await api.get(f"{PODS}/web")).body
        return any(c["type"] == "Ready" and c["status"] == "True" for c in body.get("status", {}).get("conditions", []))

    await eventually(ready)
    running = (await api.get(f"{PODS}/web")).body
    states: list[tuple[str, dict[str, Any]]] = []

    async def watch() -> None:
        params = {"watch": "true", "resourceVersion": running["metadata"]["resourceVersion"], "fieldSelector": "metadata.name=web",
                  "timeoutSeconds": "20"}
        async with api.session.get(PODS, params=params) as reply:
            async for line in reply.content:
                event = json.loads(line)
                states.append((event["type"], event["object"]))
                if event["type"] == "DELETED":
                    return

    watching = asyncio.create_task(watch())
    await asyncio.sleep(0.2)
    reply = await api.delete(f"{PODS}/web")
    assert reply.status == 200 and reply.body["metadata"]["deletionGracePeriodSeconds"] == 30
    await asyncio.wait_for(watching, 25)
    assert states[-1][0] == "DELETED" and (await api.get(f"{PODS}/web")).status == 404
    stopped = [obj for kind, obj in states if kind == "MODIFIED" and obj["metadata"].get("deletionTimestamp")
               and {c["type"]: c["status"] for c in obj["status"]["conditions"]}.get("Ready") == "False"]
    assert stopped, states
    (container,) = stopped[0]["status"]["containerStatuses"]
    assert container["ready"] is False and container["state"]["terminated"]["exitCode"] == 0
    assert stopped[0]["status"]["phase"] == "Succeeded"
    assert states[-1][1]["metadata"]["deletionGracePeriodSeconds"] == 0  # removed by the kubelet with grace 0


# -- kubectl -----------------------------------------------------------------------------------
@needs_kubectl
def test_kubectl_delete_dry_run_grace_period_and_cascade(kubectl: Kubectl) -> None:
    kubectl.run("create", "configmap", "x", "--from-literal=k=v")
    out = kubectl.run("delete", "configmap", "x", "--dry-run=server").stdout
    assert out.strip() == 'configmap "x" deleted (server dry run)'
    assert kubectl.json("get", "configmap", "x")["metadata"]["name"] == "x"

    kubectl.run("create", "deployment", "web", "--image=nginx:1.25", "--replicas=1")

    def replica_sets() -> list[dict[str, Any]]:
        return kubectl.json("get", "replicasets", "-l", "app=web")["items"]

    kubectl.run("wait", "--for=condition=Available", "deployment/web", "--timeout=30s")
    kubectl.run("delete", "deployment", "web", "--cascade=orphan", "--wait=true")
    assert kubectl.run("get", "deployment", "web", check=False).returncode != 0
    (rs,) = replica_sets()
    assert not rs["metadata"].get("ownerReferences")  # orphaned, not deleted

    kubectl.run("run", "sleeper", "--image=nginx:1.25")
    kubectl.run("wait", "--for=condition=Ready", "pod/sleeper", "--timeout=30s")
    out = kubectl.run("delete", "pod", "sleeper", "--grace-period=5", timeout=60).stdout
    assert out.strip() == 'pod "sleeper" deleted'  # kubectl waited until the kubelet removed it
    assert kubectl.run("get", "pod", "sleeper", check=False).returncode != 0
    kubectl.run("run", "other", "--image=nginx:1.25")
    kubectl.run("wait", "--for=condition=Ready", "pod/other", "--timeout=30s")
    assert kubectl.run("delete", "pod", "other", timeout=60).stdout.strip() == 'pod "other" deleted'
