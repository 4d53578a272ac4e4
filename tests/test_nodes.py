"""The Node kind, pods/binding, and the simulated nodes that schedule and "run" pods."""

from __future__ import annotations

import asyncio
import ipaddress
import shutil
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from kplane.core.client.informer import SharedInformerFactory
from kplane.core.client.rest import RESTClient
from kplane.core.serving.apiserver import APIServer
from kplane.plugins.core.controllers.nodes import SimulatedNodes
from tests.kubectl_cli import Kubectl
from tests.servers import server_config
from tests.waiting import eventually, wait_until

pytestmark = pytest.mark.controllers

NODES = "/api/v1/nodes"
PODS = "/api/v1/namespaces/default/pods"
TABLE = {"Accept": "application/json;as=Table;v=v1;g=meta.k8s.io"}
SIMULATED = ["kplane-node-1", "kplane-node-2", "kplane-node-3"]
needs_kubectl = pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl is not on PATH")


def pod(name: str, image: str = "nginx:1.25", **spec: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "labels": {"app": name}},
            "spec": {"containers": [{"name": "main", "image": image}], **spec}}


def binding(name: str, node: str, **meta: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Binding", "metadata": {"name": name, **meta}, "target": {"apiVersion": "v1", "kind": "Node", "name": node}}


def condition(obj: dict[str, Any], kind: str) -> dict[str, Any]:
    return next((c for c in obj.get("status", {}).get("conditions", []) if c["type"] == kind), {})


async def wait_for_pod(api, name: str, check) -> dict[str, Any]:
    """The pod once ``check(pod)`` holds."""
    found: dict[str, Any] = {}

    async def holds() -> bool:
        found.update((await api.get(f"{PODS}/{name}")).body)
        return bool(check(found))

    await eventually(holds)
    return found


async def nodes_registered(api) -> list[dict[str, Any]]:
    async def three() -> bool:
        return len((await api.get(NODES)).body["items"]) == 3

    await eventually(three)
    return (await api.get(NODES)).body["items"]


# -- the Node kind -----------------------------------------------------------------------------
async def test_simulated_nodes_are_registered_ready(api):
    nodes = await nodes_registered(api)
    assert [n["metadata"]["name"] for n in nodes] == SIMULATED
    version = (await api.get("/version")).body["gitVersion"]
    first = nodes[0]
    assert condition(first, "Ready")["status"] == "True" and condition(first, "Ready")["lastHeartbeatTime"]
    assert condition(first, "MemoryPressure")["status"] == "False"
    assert first["spec"]["podCIDR"] == "10.244.1.0/24" and first["spec"]["podCIDRs"] == ["10.244.1.0/24"]
    assert {"type": "InternalIP", "address": "10.244.0.1"} in first["status"]["addresses"]
    assert first["status"]["capacity"]["pods"] == "110" and first["status"]["allocatable"]["cpu"] == "8"
    assert first["status"]["daemonEndpoints"] == {"kubeletEndpoint": {"Port": 10250}}
    assert first["status"]["nodeInfo"]["kubeletVersion"] == version and first["status"]["nodeInfo"]["operatingSystem"] == "linux"

    table = (await api.get(NODES, headers=TABLE)).body
    columns = [c["name"] for c in table["columnDefinitions"]]
    assert columns == ["Name", "Status", "Roles", "Age", "Version", "Internal-IP", "External-IP", "OS-Image", "Kernel-Version", "Container-Runtime"]
    assert [c["priority"] for c in table["columnDefinitions"]] == [0] * 5 + [1] * 5
    cells = table["rows"][0]["cells"]
    assert cells[:3] == ["kplane-node-1", "Ready", "<none>"] and cells[4:7] == [version, "10.244.0.1", "<none>"]

    resources = {r["name"]: r for r in (await api.get("/api/v1")).body["resources"]}
    assert resources["nodes"]["shortNames"] == ["no"] and not resources["nodes"]["namespaced"]
    assert "nodes/status" in resources and "pods/binding" in resources


async def test_node_status_columns_and_rules(api):
    node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "edge", "labels": {"node-role.kubernetes.io/control-plane": ""}},
            "spec": {"podCIDR": "10.9.0.0/24", "unschedulable": True},
            "status": {"conditions": [{"type": "Ready", "status": "False"}]}}
    created = await api.post(NODES, node)
    assert created.status == 201, created
    assert created.body["spec"]["podCIDRs"] == ["10.9.0.0/24"]  # kept in step with podCIDR
    assert created.body["status"]["conditions"][0]["status"] == "False"  # a kubelet registers with its status
    row = (await api.get(f"{NODES}/edge", headers=TABLE)).body["rows"][0]["cells"]
    assert row[1:3] == ["NotReady,SchedulingDisabled", "control-plane"]

    changed = created.body | {"status": {"conditions": [{"type": "Ready", "status": "True"}]}}
    changed["metadata"]["labels"]["team"] = "a"
    stored = (await api.put(f"{NODES}/edge", changed)).body
    assert stored["metadata"]["labels"]["team"] == "a" and stored["status"]["conditions"][0]["status"] == "False"
    through_status = stored | {"spec": {"unschedulable": False}, "status": {"conditions": [{"type": "Ready", "status": "True"}]}}
    stored = (await api.put(f"{NODES}/edge/status", through_status)).body
    assert stored["spec"]["unschedulable"] is True and stored["status"]["conditions"][0]["status"] == "True"

    moved = stored | {"spec": {**stored["spec"], "podCIDR": "10.10.0.0/24", "podCIDRs": ["10.10.0.0/24"]}}
    refused = await api.put(f"{NODES}/edge", moved)
    assert refused.status == 422 and "spec.podCIDRs" in refused.body["message"]
    tainted = stored | {"spec": {**stored["spec"], "taints": [{"key": "dedicated", "value": "gpu", "effect": "Sometimes"}]}}
    refused = await api.put(f"{NODES}/edge", tainted)
    assert refused.status == 422 and 'spec.taints[0].effect: Unsupported value: "Sometimes"' in refused.body["message"]


# -- scheduling and running pods ---------------------------------------------------------------
async def test_a_pod_is_scheduled_and_becomes_ready(api):
    await nodes_registered(api)
    assert (await api.post(PODS, pod("web"))).status == 201
    running = await wait_for_pod(api, "web", lambda p: condition(p, "Ready").get("status") == "True")
    spec, status = running["spec"], running["status"]
    assert spec["nodeName"] in SIMULATED and status["phase"] == "Running"
    number = SIMULATED.index(spec["nodeName"]) + 1
    assert status["hostIP"] == f"10.244.0.{number}" and status["hostIPs"] == [{"ip": status["hostIP"]}]
    assert ipaddress.ip_address(status["podIP"]) in ipaddress.ip_network(f"10.244.{number}.0/24")
    assert status["podIPs"] == [{"ip": status["podIP"]}] and status["startTime"]
    assert {c["type"]: c["status"] for c in status["conditions"]} == {
        "PodScheduled": "True", "Initialized": "True", "ContainersReady": "True", "Ready": "True"}
    (container,) = status["containerStatuses"]
    assert container["ready"] is True and container["started"] is True and container["restartCount"] == 0
    assert container["image"] == "docker.io/library/nginx:1.25" and container["imageID"].startswith("docker.io/library/nginx@sha256:")
    assert container["containerID"].startswith("containerd://") and container["state"]["running"]["startedAt"]
    row = (await api.get(f"{PODS}/web", headers=TABLE)).body["rows"][0]["cells"]
    assert row[1:3] == ["1/1", "Running"]

    events = (await api.get("/api/v1/namespaces/default/events", params={"fieldSelector": "involvedObject.name=web"})).body["items"]
    assert any(e["reason"] == "Scheduled" and e["source"]["component"] == "default-scheduler" for e in events)


async def test_pods_go_to_the_node_with_the_fewest_pods(api):
    await nodes_registered(api)
    for i in range(6):
        await api.post(PODS, pod(f"spread-{i}"))

    async def all_bound() -> bool:
        return all(p["spec"].get("nodeName") for p in (await api.get(PODS)).body["items"])

    await eventually(all_bound)
    placed = sorted(p["spec"]["nodeName"] for p in (await api.get(PODS)).body["items"])
    assert placed == sorted(SIMULATED * 2)

    async def all_have_ips() -> bool:
        return all(p["status"].get("podIP") for p in (await api.get(PODS)).body["items"])

    await eventually(all_have_ips)
    assert len({p["status"]["podIP"] for p in (await api.get(PODS)).body["items"]}) == 6


async def test_a_fail_image_never_becomes_ready(api):
    await nodes_registered(api)
    await api.post(PODS, pod("broken", image="nginx:fail"))
    stuck = await wait_for_pod(api, "broken", lambda p: p["status"].get("containerStatuses", [{}])[0].get("state", {}).get("waiting", {}).get("reason") == "ImagePullBackOff")
    await asyncio.sleep(0.5)  # well past ready_delay
    stuck = (await api.get(f"{PODS}/broken")).body
    (container,) = stuck["status"]["containerStatuses"]
    assert container["state"]["waiting"]["message"] == 'Back-off pulling image "nginx:fail"'
    assert container["ready"] is False and stuck["status"]["phase"] == "Pending"
    assert condition(stuck, "Ready") | {"lastTransitionTime": ""} == {
        "type": "Ready", "status": "False", "reason": "ContainersNotReady", "message": "containers with unready status: [main]",
        "lastProbeTime": None, "lastTransitionTime": ""}
    assert stuck["spec"]["nodeName"] in SIMULATED and stuck["status"]["podIP"]
    assert (await api.get(f"{PODS}/broken", headers=TABLE)).body["rows"][0]["cells"][1:3] == ["0/1", "ImagePullBackOff"]


async def test_init_containers_complete_and_host_network_pods_get_the_node_ip(api):
    await nodes_registered(api)
    await api.post(PODS, pod("init", initContainers=[{"name": "setup", "image": "busybox"}], hostNetwork=True))
    running = await wait_for_pod(api, "init", lambda p: p["status"].get("phase") == "Running")
    (setup,) = running["status"]["initContainerStatuses"]
    assert setup["state"]["terminated"]["reason"] == "Completed" and setup["image"] == "docker.io/library/busybox:latest"
    assert running["status"]["podIP"] == running["status"]["hostIP"]


async def test_readiness_gates_hold_ready_until_their_condition_is_true(api):
    await nodes_registered(api)
    await api.post(PODS, pod("gated", readinessGates=[{"conditionType": "example.com/warm"}]))
    held = await wait_for_pod(api, "gated", lambda p: condition(p, "ContainersReady").get("status") == "True")
    assert condition(held, "Ready")["status"] == "False" and condition(held, "Ready")["reason"] == "ReadinessGatesNotReady"
    gate = {"type": "example.com/warm", "status": "True"}
    await api.patch(f"{PODS}/gated/status", {"status": {"conditions": [gate]}}, content_type="application/strategic-merge-patch+json")
    await wait_for_pod(api, "gated", lambda p: condition(p, "Ready").get("status") == "True")


async def test_a_pod_that_fits_nowhere_waits_until_a_node_fits(api):
    await nodes_registered(api)
    await api.post(PODS, pod("picky", nodeSelector={"disk": "ssd"}))
    waiting = await wait_for_pod(api, "picky", lambda p: condition(p, "PodScheduled").get("reason") == "Unschedulable")
    assert condition(waiting, "PodScheduled")["message"] == "0/3 nodes are available: 3 node(s) didn't match Pod's node affinity/selector."
    assert "nodeName" not in waiting["spec"]
    await api.patch(f"{NODES}/kplane-node-2", {"metadata": {"labels": {"disk": "ssd"}}})
    bound = await wait_for_pod(api, "picky", lambda p: p["spec"].get("nodeName"))
    assert bound["spec"]["nodeName"] == "kplane-node-2"


# -- pods/binding ------------------------------------------------------------------------------
async def test_binding_sets_the_node_once(api):
    await nodes_registered(api)
    created = (await api.post(PODS, pod("manual", schedulerName="my-scheduler"))).body  # not ours to schedule
    await asyncio.sleep(0.2)
    assert "nodeName" not in (await api.get(f"{PODS}/manual")).body["spec"]

    wrong_uid = await api.post(f"{PODS}/manual/binding", binding("manual", "kplane-node-2", uid="00000000-0000-0000-0000-000000000000"))
    assert wrong_uid.status == 409, wrong_uid
    assert (await api.post(f"{PODS}/manual/binding", binding("other", "kplane-node-2"))).status == 400
    bad_target = await api.post(f"{PODS}/manual/binding", {**binding("manual", "kplane-node-2"), "target": {"kind": "Pod", "name": "x"}})
    assert bad_target.status == 422 and "target.kind" in bad_target.body["message"]
    unknown = await api.post(f"{PODS}/manual/binding", {**binding("manual", "kplane-node-2"), "extra": 1})
    assert unknown.status == 400 and 'unknown field "extra"' in unknown.body["message"]

    bound = await api.post(f"{PODS}/manual/binding", binding("manual", "kplane-node-2", uid=created["metadata"]["uid"], annotations={"by": "test"}))
    assert bound.status == 201 and bound.body["status"] == "Success", bound
    stored = (await api.get(f"{PODS}/manual")).body
    assert stored["spec"]["nodeName"] == "kplane-node-2" and stored["metadata"]["annotations"] == {"by": "test"}
    assert condition(stored, "PodScheduled")["status"] == "True"

    again = await api.post(f"{PODS}/manual/binding", binding("manual", "kplane-node-3"))
    assert again.status == 409 and again.body["reason"] == "Conflict"
    assert again.body["message"] == 'Operation cannot be fulfilled on pods/binding "manual": pod manual is already assigned to node "kplane-node-2"'
    assert (await api.get(f"{PODS}/manual/binding")).status == 405
    assert (await api.put(f"{PODS}/manual/binding", stored)).status == 405
    assert (await api.post("/api/v1/namespaces/default/pods/ghost/binding", binding("ghost", "kplane-node-1"))).status == 404
    running = await wait_for_pod(api, "manual", lambda p: p["status"].get("phase") == "Running")  # its node's kubelet runs it
    assert running["status"]["hostIP"] == "10.244.0.2"


async def test_spec_node_name_stays_immutable_outside_binding(api):
    created = (await api.post(PODS, pod("pinned", schedulerName="my-scheduler"))).body
    created["spec"]["nodeName"] = "kplane-node-1"
    refused = await api.put(f"{PODS}/pinned", created)
    assert refused.status == 422 and "pod updates may not change fields" in refused.body["message"]


# -- the controller on its own: heartbeats and re-registration ---------------------------------
@pytest.fixture
async def bare_server(tmp_path: Path) -> AsyncIterator[APIServer]:
    """A server whose controller-manager runs no simulated nodes."""
    srv = APIServer(server_config(data_dir=tmp_path / "state", port=0, simulated_nodes=0))
    await srv.start()
    try:
        yield srv
    finally:
        await srv.stop()


async def test_a_deleted_node_registers_again_on_its_next_heartbeat(bare_server):
    client = RESTClient(bare_server.url)
    informers = SharedInformerFactory(client)
    nodes = client.resource("", "v1", "nodes")
    controller = SimulatedNodes(client, informers, count=1, prefix="solo-", heartbeat=0.05, ready_delay=0)
    task = asyncio.create_task(controller.run())
    try:
        async def registered() -> bool:
            return [n["metadata"]["name"] for n in (await nodes.list())["items"]] == ["solo-1"]

        await eventually(registered)
        first_uid = (await nodes.get("solo-1"))["metadata"]["uid"]
        await nodes.delete("solo-1")

        async def back() -> bool:
            items = (await nodes.list())["items"]
            return len(items) == 1 and items[0]["metadata"]["uid"] != first_uid

        await eventually(back)
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        await informers.stop()
        await client.close()


# -- kubectl -----------------------------------------------------------------------------------
@needs_kubectl
def test_kubectl_get_nodes_and_pods_wide(kubectl: Kubectl) -> None:
    def registered() -> list[str] | None:  # the controllers start once the server is ready: a moment later
        out = kubectl.run("get", "nodes").stdout.splitlines()
        return out if len(out) > len(SIMULATED) else None

    lines = wait_until(registered, what="the simulated Nodes")
    assert lines[0].split() == ["NAME", "STATUS", "ROLES", "AGE", "VERSION"]
    assert [line.split()[:3] for line in lines[1:]] == [[name, "Ready", "<none>"] for name in SIMULATED]
    wide = kubectl.run("get", "no", "-o", "wide").stdout.splitlines()
    assert wide[0].split()[5:] == ["INTERNAL-IP", "EXTERNAL-IP", "OS-IMAGE", "KERNEL-VERSION", "CONTAINER-RUNTIME"]
    kubectl.run("run", "solo", "--image=nginx:1.25", "--restart=Never")
    kubectl.run("wait", "--for=condition=Ready", "pod/solo", "--timeout=10s")
    row = kubectl.run("get", "pod", "solo", "-o", "wide").stdout.splitlines()[1].split()
    assert row[1:3] == ["1/1", "Running"] and row[6] in SIMULATED and row[5].startswith("10.244.")
    kubectl.run("delete", "pod", "solo")
