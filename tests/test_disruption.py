"""PodDisruptionBudgets, the disruption controller, pods/eviction and kubectl drain, through real
HTTP, a real server's controllers and the real kubectl."""

from __future__ import annotations

import json
import shutil
from typing import Any

import pytest

from tests.kubectl_cli import Kubectl
from tests.waiting import eventually, wait_until

PODS = "/api/v1/namespaces/default/pods"
PDBS = "/apis/policy/v1/namespaces/default/poddisruptionbudgets"
TABLE = {"Accept": "application/json;as=Table;v=v1;g=meta.k8s.io"}
needs_kubectl = pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl is not on PATH")


def pdb(name: str, **spec: Any) -> dict[str, Any]:
    return {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": name},
            "spec": {"selector": {"matchLabels": {"app": name}}, **spec}}


def eviction(name: str, api_version: str = "policy/v1", **options: Any) -> dict[str, Any]:
    body: dict[str, Any] = {"apiVersion": api_version, "kind": "Eviction", "metadata": {"name": name, "namespace": "default"}}
    if options:
        body["deleteOptions"] = options
    return body


def replica_set(name: str, replicas: int) -> dict[str, Any]:
    labels = {"app": name}
    return {"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": {"name": name},
            "spec": {"replicas": replicas, "selector": {"matchLabels": labels},
                     "template": {"metadata": {"labels": labels}, "spec": {"containers": [{"name": "c", "image": "nginx:1.25"}]}}}}


async def status_of(api, name: str, check) -> dict[str, Any]:
    async def holds() -> dict[str, Any] | None:
        found = (await api.get(f"{PDBS}/{name}")).body
        return found if check(found.get("status") or {}) else None

    return await eventually(holds, what=f"the status of {name}")


async def running(api, name: str, count: int) -> list[dict[str, Any]]:
    async def ready() -> list[dict[str, Any]] | None:
        pods = (await api.get(PODS, params={"labelSelector": f"app={name}"})).body["items"]
        live = [p for p in pods if not p["metadata"].get("deletionTimestamp")
                and any(c["type"] == "Ready" and c["status"] == "True" for c in p["status"].get("conditions", []))]
        return live if len(live) == count else None

    return await eventually(ready, what=f"{count} ready pods of {name}")


# -- the kind ----------------------------------------------------------------------------------
async def test_budgets_are_validated_and_keep_their_status(api):
    refused = await api.post(PDBS, pdb("both", minAvailable=1, maxUnavailable="10%"))
    assert refused.status == 422 and "spec: Invalid value" in refused.body["message"], refused
    assert "minAvailable and maxUnavailable cannot be both set" in refused.body["message"]
    refused = await api.post(PDBS, pdb("pct", maxUnavailable="120%", unhealthyPodEvictionPolicy="Sometimes"))
    assert refused.status == 422, refused
    fields = {c["field"] for c in refused.body["details"]["causes"]}
    assert fields == {"spec.maxUnavailable", "spec.unhealthyPodEvictionPolicy"}
    assert 'spec.maxUnavailable: Invalid value: "120%": must not be greater than 100%' in refused.body["message"]

    made = await api.post(PDBS, pdb("web", minAvailable="50%") | {"status": {"disruptionsAllowed": 9}})
    assert made.status == 201, made
    assert made.body["metadata"]["generation"] == 1 and made.body["status"]["disruptionsAllowed"] == 0  # status cleared
    changed = made.body | {"spec": {**made.body["spec"], "minAvailable": 2}}
    updated = (await api.put(f"{PDBS}/web", changed)).body
    assert updated["metadata"]["generation"] == 2 and updated["spec"]["minAvailable"] == 2
    status = updated | {"spec": {"minAvailable": 7}, "status": {"disruptionsAllowed": 3, "currentHealthy": 4, "desiredHealthy": 1, "expectedPods": 4}}
    written = (await api.put(f"{PDBS}/web/status", status)).body
    assert written["spec"]["minAvailable"] == 2 and written["status"]["disruptionsAllowed"] == 3
    negative = written | {"status": {**written["status"], "currentHealthy": -1}}
    refused = await api.put(f"{PDBS}/web/status", negative)
    assert refused.status == 422 and "status.currentHealthy: Invalid value: -1" in refused.body["message"]

    table = (await api.get(PDBS, headers=TABLE)).body
    assert [c["name"] for c in table["columnDefinitions"]] == ["Name", "Min Available", "Max Unavailable", "Allowed Disruptions", "Age"]
    assert table["rows"][0]["cells"][:4] == ["web", "2", "N/A", 3]
    resources = {r["name"]: r for r in (await api.get("/apis/policy/v1")).body["resources"]}
    assert resources["poddisruptionbudgets"]["shortNames"] == ["pdb"] and "poddisruptionbudgets/status" in resources
    core = {r["name"]: r for r in (await api.get("/api/v1")).body["resources"]}
    assert core["pods/eviction"]["verbs"] == ["create"]
    assert (core["pods/eviction"]["group"], core["pods/eviction"]["version"], core["pods/eviction"]["kind"]) == ("policy", "v1", "Eviction")


async def test_evictions_without_budgets_and_bad_bodies(api):
    body = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "lone", "labels": {"app": "lone"}},
            "spec": {"containers": [{"name": "c", "image": "nginx"}]}}
    assert (await api.post(PODS, body)).status == 201
    wrong = await api.post(f"{PODS}/lone/eviction", eviction("other"))
    assert wrong.status == 400 and wrong.body["message"] == "name in URL does not match name in Eviction object"
    bad = await api.post(f"{PODS}/lone/eviction", eviction("lone", gracePeriodSeconds="soon"))
    assert bad.status == 400 and "DeleteOptions.gracePeriodSeconds must be an integer" in bad.body["message"], bad
    dry = await api.post(f"{PODS}/lone/eviction", eviction("lone"), params={"dryRun": "All"})
    assert dry.status == 201 and (await api.get(f"{PODS}/lone")).status == 200
    done = await api.post(f"{PODS}/lone/eviction", eviction("lone", "policy/v1beta1", gracePeriodSeconds=0))
    assert done.status == 201 and done.body["status"] == "Success", done
    assert (await api.get(f"{PODS}/lone")).status == 404
    assert (await api.post(f"{PODS}/lone/eviction", eviction("lone"))).status == 404


# -- the controller and evictions honouring budgets --------------------------------------------
@pytest.mark.controllers
async def test_the_budget_status_and_evictions_it_refuses(api):
    assert (await api.post("/apis/apps/v1/namespaces/default/replicasets", replica_set("web", 3))).status == 201
    assert (await api.post(PDBS, pdb("web", maxUnavailable=1))).status == 201
    await running(api, "web", 3)
    found = await status_of(api, "web", lambda s: s.get("currentHealthy") == 3 and s.get("disruptionsAllowed") == 1)
    status = found["status"]
    assert (status["desiredHealthy"], status["expectedPods"], status["observedGeneration"]) == (2, 3, 1)
    (condition,) = status["conditions"]
    assert (condition["type"], condition["status"], condition["reason"], condition["observedGeneration"]) == (
        "DisruptionAllowed", "True", "SufficientPods", 1)

    first, second, _ = sorted(p["metadata"]["name"] for p in await running(api, "web", 3))
    evicted = await api.post(f"{PODS}/{first}/eviction", eviction(first))
    assert evicted.status == 201, evicted
    gone = (await api.get(f"{PODS}/{first}")).body
    if "metadata" in gone and gone.get("kind") == "Pod":  # still terminating
        target = next(c for c in gone["status"]["conditions"] if c["type"] == "DisruptionTarget")
        assert (target["reason"], target["message"]) == ("EvictionByEvictionAPI", "Eviction API: evicting")
    refused = await api.post(f"{PODS}/{second}/eviction", eviction(second))
    assert refused.status == 429, refused
    assert refused.body["reason"] == "TooManyRequests"
    assert refused.body["message"] == "Cannot evict pod as it would violate the pod's disruption budget."
    (cause,) = refused.body["details"]["causes"]
    assert cause["reason"] == "DisruptionBudget" and cause["message"].startswith("The disruption budget web needs 2 healthy pods and has ")
    assert (await api.get(f"{PODS}/{second}")).status == 200

    # the ReplicaSet replaces the evicted pod; once it is Ready a disruption is allowed again
    await status_of(api, "web", lambda s: s.get("currentHealthy") == 3 and s.get("disruptionsAllowed") == 1 and not s.get("disruptedPods"))
    assert (await api.post(f"{PODS}/{second}/eviction", eviction(second))).status == 201


@pytest.mark.controllers
async def test_percentages_count_the_controllers_replicas_and_unmanaged_pods_fail_safe(api):
    assert (await api.post("/apis/apps/v1/namespaces/default/replicasets", replica_set("pct", 4))).status == 201
    assert (await api.post(PDBS, pdb("pct", minAvailable="50%"))).status == 201
    await status_of(api, "pct", lambda s: s.get("expectedPods") == 4 and s.get("desiredHealthy") == 2 and s.get("disruptionsAllowed") == 2)

    lone = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "lone", "labels": {"app": "lone"}},
            "spec": {"containers": [{"name": "c", "image": "nginx"}]}}
    assert (await api.post(PODS, lone)).status == 201
    assert (await api.post(PDBS, pdb("lone", maxUnavailable="50%"))).status == 201
    await running(api, "lone", 1)
    found = await status_of(api, "lone", lambda s: any(c.get("type") == "DisruptionAllowed" for c in s.get("conditions") or []))
    assert found["status"]["disruptionsAllowed"] == 0

    async def warned() -> bool:
        events = (await api.get("/api/v1/namespaces/default/events", params={"fieldSelector": "involvedObject.name=lone"})).body["items"]
        return any(e["reason"] == "UnmanagedPods" and e["involvedObject"]["kind"] == "PodDisruptionBudget" for e in events)

    await eventually(warned, what="the UnmanagedPods event")


# -- kubectl -----------------------------------------------------------------------------------
DEPLOYMENT = """
apiVersion: apps/v1
kind: Deployment
metadata: {name: drained}
spec:
  replicas: 6
  selector: {matchLabels: {app: drained}}
  template:
    metadata: {labels: {app: drained}}
    spec:
      containers: [{name: c, image: nginx:1.25}]
"""


@needs_kubectl
def test_kubectl_create_get_and_describe_pdb(kubectl: Kubectl):
    kubectl.run("create", "pdb", "gen", "--selector=app=gen", "--min-available=50%")  # a protobuf body
    made = kubectl.json("get", "pdb", "gen")
    assert made["spec"] == {"minAvailable": "50%", "selector": {"matchLabels": {"app": "gen"}}}
    listed = kubectl.run("get", "pdb").stdout.splitlines()
    assert listed[0].split() == ["NAME", "MIN", "AVAILABLE", "MAX", "UNAVAILABLE", "ALLOWED", "DISRUPTIONS", "AGE"]
    assert listed[1].split()[:4] == ["gen", "50%", "N/A", "0"]
    described = kubectl.run("describe", "pdb", "gen").stdout
    assert "Min available:  50%" in described and "Selector:       app=gen" in described
    refused = kubectl.run("create", "pdb", "bad", "--selector=app=x", "--max-unavailable=150%", check=False)
    assert refused.returncode != 0 and "must not be greater than 100%" in refused.stderr


@needs_kubectl
def test_kubectl_drain_retries_evictions_the_budget_refuses(kubectl: Kubectl):
    kubectl.apply_file("apply", DEPLOYMENT)
    kubectl.run("create", "pdb", "drained", "--selector=app=drained", "--max-unavailable=1")
    kubectl.run("rollout", "status", "deployment/drained", "--timeout=30s")

    def allowed() -> bool:
        return kubectl.json("get", "pdb", "drained").get("status", {}).get("disruptionsAllowed") == 1

    wait_until(allowed, what="the budget to allow a disruption")
    pods = kubectl.json("get", "pods", "-l", "app=drained")["items"]
    node = max({p["spec"]["nodeName"] for p in pods}, key=lambda n: sum(p["spec"]["nodeName"] == n for p in pods))
    on_node = sorted(p["metadata"]["name"] for p in pods if p["spec"]["nodeName"] == node)
    assert len(on_node) >= 2  # six pods on three nodes: the budget lets one go at a time

    drained = kubectl.run("drain", node, "--timeout=60s", timeout=70)
    output = drained.stdout + drained.stderr
    assert f"node/{node} cordoned" in output and f"node/{node} drained" in output
    assert "Cannot evict pod as it would violate the pod's disruption budget." in output
    for name in on_node:
        assert f"pod/{name} evicted" in output
    nodes = kubectl.json("get", "node", node)
    assert nodes["spec"]["unschedulable"] is True
    left = kubectl.json("get", "pods", "-l", "app=drained", "--field-selector", f"spec.nodeName={node}")["items"]
    assert left == []
    kubectl.run("uncordon", node)


@needs_kubectl
def test_kubectl_evicts_through_the_raw_subresource(kubectl: Kubectl):
    kubectl.run("run", "solo", "--image=nginx:1.25", "--labels=app=solo")
    kubectl.run("create", "pdb", "solo", "--selector=app=solo", "--min-available=1")
    kubectl.run("wait", "--for=condition=Ready", "pod/solo", "--timeout=30s")

    def observed() -> bool:
        return kubectl.json("get", "pdb", "solo").get("status", {}).get("currentHealthy") == 1

    wait_until(observed, what="the budget's status")
    body = kubectl.workdir / "eviction.json"
    body.write_text(json.dumps(eviction("solo")))
    refused = kubectl.run("create", "--raw", "/api/v1/namespaces/default/pods/solo/eviction", "-f", str(body), check=False)
    assert refused.returncode != 0 and "Cannot evict pod as it would violate the pod's disruption budget." in refused.stderr
    assert kubectl.json("get", "pod", "solo")["metadata"]["name"] == "solo"
