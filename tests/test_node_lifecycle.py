"""Node Leases, the node lifecycle controller and taint-based eviction, against simulated nodes
whose kubelets report every 0.2 s and go Unknown after 1.5 s of silence; and `kubectl describe node`."""

from __future__ import annotations

import shutil
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from kplane.core.serving.apiserver import APIServer
from tests.conftest import Client
from tests.kubectl_cli import Kubectl
from tests.servers import server_config
from tests.waiting import eventually, wait_until

NODES = "/api/v1/nodes"
PODS = "/api/v1/namespaces/default/pods"
LEASES = "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases"
FAST = {"node_status_update_frequency": 0.2, "node_monitor_period": 0.1, "node_monitor_grace_period": 1.5}
needs_kubectl = pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl is not on PATH")


@pytest.fixture
async def fast(tmp_path: Path) -> AsyncIterator[Client]:
    srv = APIServer(server_config(data_dir=tmp_path / "state", port=0, run_controllers=True,
                                  plugin_settings={"core": FAST, "apiregistration": {"backends": True}}))
    await srv.start()
    try:
        async with aiohttp.ClientSession(base_url=srv.url) as session:
            yield Client(session)
    finally:
        await srv.stop()


def condition(obj: dict[str, Any], kind: str) -> dict[str, Any]:
    return next((c for c in obj.get("status", {}).get("conditions", []) if c["type"] == kind), {})


def pod(name: str, node: str, **spec: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
            "spec": {"nodeName": node, "containers": [{"name": "c", "image": "nginx:1.25"}], **spec}}


def tolerating(seconds: int | None) -> list[dict[str, Any]]:
    toleration: dict[str, Any] = {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute"}
    if seconds is not None:
        toleration["tolerationSeconds"] = seconds
    return [toleration]


async def get(api: Client, path: str) -> dict[str, Any]:
    return (await api.get(path)).body


async def test_a_silent_node_is_unknown_tainted_and_its_pods_evicted(fast: Client):
    api = fast
    leases = await eventually(lambda: _three_leases(api), what="the nodes' Leases")
    lease = next(item for item in leases if item["metadata"]["name"] == "kplane-node-2")
    node = await get(api, f"{NODES}/kplane-node-2")
    assert lease["spec"]["holderIdentity"] == "kplane-node-2" and lease["spec"]["leaseDurationSeconds"] == 40
    assert lease["metadata"]["ownerReferences"][0] | {} == {"apiVersion": "v1", "kind": "Node", "name": "kplane-node-2",
                                                           "uid": node["metadata"]["uid"]}

    async def renewed() -> bool:
        return (await get(api, f"{LEASES}/kplane-node-2"))["spec"]["renewTime"] != lease["spec"]["renewTime"]

    await eventually(renewed, what="the Lease to be renewed")

    for name, spec in (("at-once", {"tolerations": tolerating(0)}), ("soon", {"tolerations": tolerating(1)}),
                       ("forever", {"tolerations": tolerating(None)})):
        assert (await api.post(PODS, pod(name, "kplane-node-2", **spec))).status == 201

    async def ready() -> bool:
        pods = (await get(api, PODS))["items"]
        return len(pods) == 3 and all(condition(p, "Ready").get("status") == "True" for p in pods)

    await eventually(ready, timeout=30, what="the pods to run")  # three pods started under the other worker's load
    assert (await api.patch(f"{NODES}/kplane-node-2", {"metadata": {"annotations": {"kplane.io/simulated-kubelet": "stopped"}}})).status == 200

    async def unknown() -> dict[str, Any] | None:
        node = await get(api, f"{NODES}/kplane-node-2")
        taints = {(t["key"], t["effect"]) for t in node["spec"].get("taints", [])}
        return node if condition(node, "Ready").get("status") == "Unknown" and len(taints) == 2 else None

    node = await eventually(unknown, timeout=10, what="the node to be Unknown and tainted")
    ready_condition = condition(node, "Ready")
    assert (ready_condition["reason"], ready_condition["message"]) == ("NodeStatusUnknown", "Kubelet stopped posting node status.")
    assert condition(node, "MemoryPressure")["status"] == "Unknown"
    taints = {t["effect"]: t for t in node["spec"]["taints"]}
    assert {t["key"] for t in taints.values()} == {"node.kubernetes.io/unreachable"}
    assert taints["NoExecute"]["timeAdded"] and "timeAdded" not in taints["NoSchedule"]

    async def evicted(name: str) -> dict[str, Any] | None:
        found = await get(api, f"{PODS}/{name}")
        return found if found["metadata"].get("deletionTimestamp") else None

    for name in ("at-once", "soon"):  # the stopped kubelet leaves them Terminating
        gone = await eventually(lambda: evicted(name), timeout=10, what=f"{name} to be evicted")
        target = condition(gone, "DisruptionTarget")
        assert (target["status"], target["reason"]) == ("True", "DeletionByTaintManager")
        assert condition(gone, "Ready")["status"] == "False"  # marked not Ready with its node
    kept = await get(api, f"{PODS}/forever")
    assert not kept["metadata"].get("deletionTimestamp") and condition(kept, "Ready")["status"] == "False"

    events = (await api.get("/api/v1/events", params={"fieldSelector": "involvedObject.kind=Node,involvedObject.name=kplane-node-2"})).body["items"]
    assert {"RegisteredNode", "NodeNotReady"} <= {e["reason"] for e in events}
    assert all(e["involvedObject"]["uid"] == "kplane-node-2" and e["source"]["component"] == "node-controller" for e in events)
    marked = (await api.get("/api/v1/namespaces/default/events", params={"fieldSelector": "involvedObject.name=soon"})).body["items"]
    assert any(e["reason"] == "TaintManagerEviction" and e["message"] == "Marking for deletion Pod default/soon" for e in marked)

    # the kubelet comes back: Ready again, untainted, and it carries out the pending deletions
    assert (await api.patch(f"{NODES}/kplane-node-2", {"metadata": {"annotations": {"kplane.io/simulated-kubelet": None}}})).status == 200

    async def back() -> bool:
        node = await get(api, f"{NODES}/kplane-node-2")
        return condition(node, "Ready").get("status") == "True" and not node["spec"].get("taints")

    await eventually(back, timeout=10, what="the node to be Ready and untainted")

    async def deleted() -> bool:
        return {p["metadata"]["name"] for p in (await get(api, PODS))["items"]} == {"forever"}

    await eventually(deleted, timeout=10, what="the evicted pods to go")
    await eventually(lambda: _ready_pod(api, "forever"), what="the kept pod to be Ready again")


async def test_a_cordoned_node_is_tainted_unschedulable(fast: Client):
    api = fast
    await eventually(lambda: _three_leases(api), what="the nodes")
    assert (await api.patch(f"{NODES}/kplane-node-1", {"spec": {"unschedulable": True}})).status == 200

    async def tainted() -> list[dict[str, Any]] | None:
        return (await get(api, f"{NODES}/kplane-node-1"))["spec"].get("taints")

    assert await eventually(tainted) == [{"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"}]
    assert (await api.patch(f"{NODES}/kplane-node-1", {"spec": {"unschedulable": False}})).status == 200

    async def untainted() -> bool:
        return not (await get(api, f"{NODES}/kplane-node-1"))["spec"].get("taints")

    await eventually(untainted)


async def _three_leases(api: Client) -> list[dict[str, Any]] | None:
    items = (await get(api, LEASES)).get("items", [])
    return items if len(items) == 3 else None


async def _ready_pod(api: Client, name: str) -> bool:
    return condition(await get(api, f"{PODS}/{name}"), "Ready").get("status") == "True"


@needs_kubectl
def test_kubectl_describe_node(kubectl: Kubectl):
    kubectl.run("run", "described", "--image=nginx:1.25", "--overrides",
                '{"spec": {"nodeName": "kplane-node-3", "containers": [{"name": "described", "image": "nginx:1.25", '
                '"resources": {"requests": {"cpu": "500m", "memory": "1Gi"}}}]}}')
    kubectl.run("wait", "--for=condition=Ready", "pod/described", "--timeout=30s")

    def described() -> str:
        text = kubectl.run("describe", "node", "kplane-node-3").stdout
        return text if "RegisteredNode" in text and "RenewTime" in text else ""

    text = wait_until(described, what="the node's Lease and events")
    for expected in ("Name:               kplane-node-3", "HolderIdentity:  kplane-node-3", "Ready            True",
                     "KubeletReady", "InternalIP:  10.244.0.3", "Capacity:", "Allocatable:", "System Info:",
                     "Kernel Version:             6.8.0-kplane", "PodCIDR:                      10.244.3.0/24",
                     "Non-terminated Pods:", "default                     described", "500m (6%)",
                     "Allocated resources:", "Registered Node kplane-node-3 in Controller"):
        assert expected in text, (expected, text)
