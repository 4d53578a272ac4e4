"""apps/v1 DaemonSets through real HTTP: defaults, validation and the strategy without controllers;
the daemon set controller with the simulated nodes (placement by nodeSelector, affinity and taints,
rolling updates with maxUnavailable and maxSurge, OnDelete, revisions); the system pods; and the
pure placement and rolling-update decisions."""

from __future__ import annotations

import copy
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from kplane.core.serving.apiserver import APIServer
from kplane.plugins.apps.controllers.daemonset import placement, rolling
from kplane.plugins.core.controllers.nodes.predicates import misfit
from tests.conftest import Client
from tests.servers import server_config
from tests.waiting import eventually

DSS = "/apis/apps/v1/namespaces/default/daemonsets"
PODS = "/api/v1/namespaces/default/pods"
NODES = "/api/v1/nodes"
REVISIONS = "/apis/apps/v1/namespaces/default/controllerrevisions"
TABLE = {"Accept": "application/json;as=Table;v=v1;g=meta.k8s.io"}
NODE_NAMES = ["kplane-node-1", "kplane-node-2", "kplane-node-3"]


def daemon_set(name: str, image: str = "fluentd:v1", **spec: Any) -> dict[str, Any]:
    template_spec = spec.pop("pod", {})
    return {
        "apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": name},
        "spec": {
            "selector": {"matchLabels": {"app": name}},
            "template": {"metadata": {"labels": {"app": name}},
                         "spec": {"containers": [{"name": "agent", "image": image}], **template_spec}},
            **spec,
        },
    }


async def create(api: Client, body: dict[str, Any]) -> dict[str, Any]:
    reply = await api.post(DSS, body)
    assert reply.status == 201, reply
    return reply.body


async def pods_of(api: Client, name: str) -> list[dict[str, Any]]:
    items = (await api.get(PODS, params={"labelSelector": f"app={name}"})).body["items"]
    return [p for p in items if not p["metadata"].get("deletionTimestamp")]


async def settled(api: Client, name: str, desired: int, timeout: float = 15.0) -> dict[str, Any]:
    """The DaemonSet once every node that should run its pod runs an available, updated one, and
    no other pod of it is left."""
    found: dict[str, Any] = {}

    async def done() -> bool:
        found.update((await api.get(f"{DSS}/{name}")).body)
        s = found["status"]
        return (s.get("observedGeneration") == found["metadata"]["generation"] and s["desiredNumberScheduled"] == desired
                and s.get("updatedNumberScheduled", 0) == desired and s.get("numberAvailable", 0) == desired
                and len((await api.get(PODS, params={"labelSelector": f"app={name}"})).body["items"]) == desired)

    await eventually(done, timeout, what=f"daemon set {name} on {desired} nodes")
    return found


def nodes_of(pods: list[dict[str, Any]]) -> list[str]:
    return sorted(p["spec"].get("nodeName", "") for p in pods)


# -- the API, without controllers ------------------------------------------------------------
async def test_create_fills_kube_defaults_status_and_template_generation(api: Client) -> None:
    ds = await create(api, daemon_set("agent"))
    assert ds["spec"]["updateStrategy"] == {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 1, "maxSurge": 0}}
    assert ds["spec"]["revisionHistoryLimit"] == 10
    assert ds["spec"]["template"]["spec"]["restartPolicy"] == "Always"
    assert ds["metadata"]["generation"] == 1
    assert ds["metadata"]["annotations"] == {"deprecated.daemonset.template.generation": "1"}
    assert ds["status"] == {"currentNumberScheduled": 0, "numberMisscheduled": 0, "desiredNumberScheduled": 0, "numberReady": 0}
    table = (await api.get(DSS, headers=TABLE)).body
    assert [c["name"] for c in table["columnDefinitions"]] == [
        "Name", "Desired", "Current", "Ready", "Up-to-date", "Available", "Node Selector", "Age", "Containers", "Images", "Selector"]
    assert table["rows"][0]["cells"][:7] == ["agent", 0, 0, 0, 0, 0, "<none>"]
    on_delete = await create(api, daemon_set("od", updateStrategy={"type": "OnDelete"}, pod={"nodeSelector": {"disk": "ssd", "a": "b"}}))
    assert on_delete["spec"]["updateStrategy"] == {"type": "OnDelete"}
    rows = {r["cells"][0]: r["cells"] for r in (await api.get(DSS, headers=TABLE)).body["rows"]}
    assert rows["od"][6] == "a=b,disk=ssd"


@pytest.mark.parametrize(("change", "field", "message"), [
    ({"updateStrategy": {"rollingUpdate": {"maxSurge": 1}}}, "spec.updateStrategy.rollingUpdate.maxSurge",
     "Invalid value: 1: may not be set when maxUnavailable is non-zero"),
    ({"updateStrategy": {"rollingUpdate": {"maxUnavailable": 0}}}, "spec.updateStrategy.rollingUpdate.maxUnavailable",
     "Required value: cannot be 0 when maxSurge is 0"),
    ({"updateStrategy": {"rollingUpdate": {"maxUnavailable": "120%"}}}, "spec.updateStrategy.rollingUpdate.maxUnavailable",
     'Invalid value: "120%": must not be greater than 100%'),
    ({"updateStrategy": {"type": "Recreate"}}, "spec.updateStrategy", 'Unsupported value: {"type":"Recreate"}'),
    ({"minReadySeconds": -1}, "spec.minReadySeconds", "Invalid value: -1: must be greater than or equal to 0"),
    ({"pod": {"restartPolicy": "Never"}}, "spec.template.spec.restartPolicy", 'Unsupported value: "Never"'),
    ({"pod": {"activeDeadlineSeconds": 5}}, "spec.template.spec.activeDeadlineSeconds",
     "Forbidden: activeDeadlineSeconds in DaemonSet is not Supported"),
])
async def test_invalid_daemon_sets_are_refused_with_kubes_causes(api: Client, change: dict[str, Any], field: str, message: str) -> None:
    reply = await api.post(DSS, daemon_set("bad", **copy.deepcopy(change)))
    assert reply.status == 422, reply
    assert field in [c["field"] for c in reply.body["details"]["causes"]], reply
    assert f"{field}: {message}" in reply.body["message"]
    assert (await api.get(f"{DSS}/bad")).status == 404


async def test_updates_count_template_changes_and_keep_selector_and_collision_count(api: Client) -> None:
    ds = await create(api, daemon_set("agent"))
    ds["spec"]["minReadySeconds"] = 3
    ds["metadata"]["annotations"]["deprecated.daemonset.template.generation"] = "7"  # not the client's to set
    ds = (await api.put(f"{DSS}/agent", ds)).body
    assert (ds["metadata"]["generation"], ds["metadata"]["annotations"]["deprecated.daemonset.template.generation"]) == (2, "1")
    ds["spec"]["template"]["spec"]["containers"][0]["image"] = "fluentd:v2"
    ds = (await api.put(f"{DSS}/agent", ds)).body
    assert (ds["metadata"]["generation"], ds["metadata"]["annotations"]["deprecated.daemonset.template.generation"]) == (3, "2")
    moved = copy.deepcopy(ds)
    moved["spec"]["selector"] = {"matchLabels": {"app": "agent", "x": "y"}}
    moved["spec"]["template"]["metadata"]["labels"]["x"] = "y"
    reply = await api.put(f"{DSS}/agent", moved)
    assert reply.status == 422 and "spec.selector: Invalid value" in reply.body["message"] and "field is immutable" in reply.body["message"]
    ds["status"] = {"collisionCount": 2, "desiredNumberScheduled": 0, "currentNumberScheduled": 0, "numberMisscheduled": 0, "numberReady": 0}
    ds = (await api.put(f"{DSS}/agent/status", ds)).body
    assert ds["status"]["collisionCount"] == 2 and ds["metadata"]["generation"] == 3
    ds["status"]["collisionCount"] = 1
    reply = await api.put(f"{DSS}/agent/status", ds)
    assert reply.status == 422 and "status.collisionCount: Invalid value: 1: cannot be decremented" in reply.body["message"]


# -- the controller ------------------------------------------------------------------------
@pytest.mark.controllers
async def test_one_pod_per_node_pinned_by_affinity_with_the_daemon_tolerations(api: Client) -> None:
    ds = await create(api, daemon_set("agent", pod={"hostNetwork": True, "tolerations": [{"key": "dedicated", "operator": "Exists"}]}))
    done = await settled(api, "agent", 3)
    assert done["status"] == {"currentNumberScheduled": 3, "numberMisscheduled": 0, "desiredNumberScheduled": 3, "numberReady": 3,
                              "observedGeneration": 1, "updatedNumberScheduled": 3, "numberAvailable": 3, "numberUnavailable": 0}
    pods = await pods_of(api, "agent")
    assert nodes_of(pods) == NODE_NAMES
    revisions = (await api.get(REVISIONS)).body["items"]
    assert [r["revision"] for r in revisions] == [1]
    hash_ = revisions[0]["metadata"]["labels"]["controller-revision-hash"]
    for pod in pods:
        assert pod["metadata"]["generateName"] == "agent-"
        assert pod["metadata"]["labels"] == {"app": "agent", "pod-template-generation": "1", "controller-revision-hash": hash_}
        assert pod["metadata"]["ownerReferences"] == [{"apiVersion": "apps/v1", "kind": "DaemonSet", "name": "agent",
                                                       "uid": ds["metadata"]["uid"], "controller": True, "blockOwnerDeletion": True}]
        terms = pod["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]
        assert terms == [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": [pod["spec"]["nodeName"]]}]}]
        keys = [(t.get("key"), t.get("effect")) for t in pod["spec"]["tolerations"]]
        assert keys == [("dedicated", None), *placement.DEFAULT_TOLERATIONS, placement.HOST_NETWORK_TOLERATION]
    events = (await api.get("/api/v1/namespaces/default/events")).body["items"]
    assert sorted(e["message"] for e in events if e["reason"] == "SuccessfulCreate" and e["involvedObject"]["kind"] == "DaemonSet") == \
        sorted(f"Created pod: {p['metadata']['name']}" for p in pods)


@pytest.mark.controllers
async def test_node_labels_and_taints_decide_where_the_pods_run(api: Client) -> None:
    await eventually(lambda: _nodes_listed(api), what="the simulated nodes")
    await api.patch(f"{NODES}/kplane-node-1", {"metadata": {"labels": {"disk": "ssd"}}})
    await create(api, daemon_set("ssd", pod={"nodeSelector": {"disk": "ssd"}}))
    affinity = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
        {"matchExpressions": [{"key": "kubernetes.io/hostname", "operator": "NotIn", "values": ["kplane-node-2"]}]}]}}}
    await create(api, daemon_set("spread", pod={"affinity": affinity}))
    await settled(api, "ssd", 1)
    assert nodes_of(await pods_of(api, "ssd")) == ["kplane-node-1"]
    await settled(api, "spread", 2)
    assert nodes_of(await pods_of(api, "spread")) == ["kplane-node-1", "kplane-node-3"]
    # a node that gains the label gets a pod, one that loses it loses it
    await api.patch(f"{NODES}/kplane-node-2", {"metadata": {"labels": {"disk": "ssd"}}})
    await api.patch(f"{NODES}/kplane-node-1", {"metadata": {"labels": {"disk": None}}})
    await eventually(lambda: _on_nodes(api, "ssd", ["kplane-node-2"]), what="the ssd pod to move to node 2")
    # NoSchedule keeps new pods away and leaves running ones; NoExecute takes them off
    await api.patch(f"{NODES}/kplane-node-3", {"spec": {"taints": [{"key": "gpu", "value": "yes", "effect": "NoSchedule"}]}})
    await create(api, daemon_set("later"))
    await settled(api, "later", 2)
    assert nodes_of(await pods_of(api, "later")) == ["kplane-node-1", "kplane-node-2"]
    assert "kplane-node-3" in nodes_of(await pods_of(api, "spread"))
    await api.patch(f"{NODES}/kplane-node-3", {"spec": {"taints": [{"key": "gpu", "value": "yes", "effect": "NoExecute"}]}})
    await eventually(lambda: _on_nodes(api, "spread", ["kplane-node-1"]), what="the NoExecute taint to evict the spread pod")
    done = (await api.get(f"{DSS}/spread")).body
    assert done["status"]["desiredNumberScheduled"] == 1
    assert done["status"]["numberMisscheduled"] == 0


async def _nodes_listed(api: Client) -> bool:
    return len((await api.get(NODES)).body["items"]) == 3


async def _on_nodes(api: Client, name: str, nodes: list[str]) -> bool:
    return len((await api.get(PODS, params={"labelSelector": f"app={name}"})).body["items"]) == len(nodes) and \
        nodes_of(await pods_of(api, name)) == nodes


@pytest.mark.controllers
async def test_surge_starts_the_new_pod_before_the_old_one_stops(api: Client) -> None:
    strategy = {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 0, "maxSurge": 1}}
    await create(api, daemon_set("surge", updateStrategy=strategy))
    await settled(api, "surge", 3)
    await api.patch(f"{DSS}/surge", {"spec": {"template": {"spec": {"containers": [{"name": "agent", "image": "fluentd:v2"}]}}}},
                    content_type="application/strategic-merge-patch+json")
    most_on_a_node, fewest_available = 0, 3

    async def rolled() -> bool:
        nonlocal most_on_a_node, fewest_available
        pods = (await api.get(PODS, params={"labelSelector": "app=surge"})).body["items"]
        per_node = Counter(placement.target_node(p) for p in pods)
        most_on_a_node = max([most_on_a_node, *per_node.values()])
        ready = [p for p in pods if any(c["type"] == "Ready" and c["status"] == "True" for c in p.get("status", {}).get("conditions", []))]
        fewest_available = min(fewest_available, len({p["spec"]["nodeName"] for p in ready}))
        s = (await api.get(f"{DSS}/surge")).body["status"]
        return s.get("observedGeneration") == 2 and s.get("updatedNumberScheduled") == 3 and s.get("numberAvailable") == 3 and len(pods) == 3

    await eventually(rolled, 20, every=0.02, what="the surge rollout")
    assert most_on_a_node == 2  # old and new side by side
    assert fewest_available == 3  # maxUnavailable 0: every node kept a ready pod
    assert {p["spec"]["containers"][0]["image"] for p in await pods_of(api, "surge")} == {"fluentd:v2"}


@pytest.mark.controllers
async def test_on_delete_replaces_only_deleted_pods_and_history_is_trimmed(api: Client) -> None:
    await create(api, daemon_set("od", updateStrategy={"type": "OnDelete"}, revisionHistoryLimit=1))
    await settled(api, "od", 3)
    for image in ("fluentd:v2", "fluentd:v3"):
        await api.patch(f"{DSS}/od", {"spec": {"template": {"spec": {"containers": [{"name": "agent", "image": image}]}}}},
                        content_type="application/strategic-merge-patch+json")
    status = await eventually(lambda: _status_when(api, "od", observedGeneration=3), what="generation 3 observed")
    assert status["updatedNumberScheduled"] == 0 and status["numberAvailable"] == 3
    # limit 1: one old revision too many; the pods run revision 1, so revision 2 goes
    await eventually(lambda: _revisions(api, [1, 3]), what="revision 2 trimmed")
    victim = (await pods_of(api, "od"))[0]
    await api.delete(f"{PODS}/{victim['metadata']['name']}")
    status = await eventually(lambda: _status_when(api, "od", updatedNumberScheduled=1, numberAvailable=3), what="a new pod")
    images = sorted(p["spec"]["containers"][0]["image"] for p in await pods_of(api, "od"))
    assert images == ["fluentd:v1", "fluentd:v1", "fluentd:v3"]


async def _revisions(api: Client, numbers: list[int]) -> bool:
    return sorted(r["revision"] for r in (await api.get(REVISIONS)).body["items"]) == numbers


async def _status_when(api: Client, name: str, **wanted: int) -> dict[str, Any] | None:
    status = (await api.get(f"{DSS}/{name}")).body["status"]
    return status if all(status.get(k) == v for k, v in wanted.items()) else None


async def test_system_pods_run_in_kube_system_when_asked(tmp_path: Path) -> None:
    import aiohttp

    srv = APIServer(server_config(data_dir=tmp_path / "state", port=0, system_pods=True))
    await srv.start()
    try:
        async with aiohttp.ClientSession(base_url=srv.url) as session:
            api = Client(session)

            async def running() -> dict[str, Any] | bool:
                pods = (await api.get("/api/v1/namespaces/kube-system/pods")).body["items"]
                ready = [p["metadata"]["name"] for p in pods
                         if any(c["type"] == "Ready" and c["status"] == "True" for c in p.get("status", {}).get("conditions", []))]
                proxy = (await api.get("/apis/apps/v1/namespaces/kube-system/daemonsets/kube-proxy")).body
                return (sum(n.startswith("coredns-") for n in ready) == 2 and sum(n.startswith("kube-proxy-") for n in ready) == 3
                        and proxy["status"].get("numberAvailable") == 3 and proxy)

            proxy = await eventually(running, 45, what="CoreDNS and kube-proxy running")
            assert proxy["spec"]["template"]["spec"]["hostNetwork"] is True
            dns = (await api.get("/api/v1/namespaces/kube-system/services/kube-dns")).body
            assert dns["spec"]["clusterIP"] == "10.96.0.10" and dns["spec"]["selector"] == {"k8s-app": "kube-dns"}
    finally:
        await srv.stop()


async def test_the_test_servers_start_without_system_pods(api: Client) -> None:
    assert (await api.get("/apis/apps/v1/namespaces/kube-system/daemonsets")).body["items"] == []
    assert (await api.get("/apis/apps/v1/namespaces/kube-system/deployments")).body["items"] == []


# -- the pure decisions ---------------------------------------------------------------------
def _node(name: str, labels: dict[str, str] | None = None, taints: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    return {"metadata": {"name": name, "labels": labels or {}}, "spec": {"taints": taints or []},
            "status": {"conditions": [{"type": "Ready", "status": "True"}], "allocatable": {"pods": "110"}}}


def test_should_run_weighs_affinity_terms_node_names_and_taints() -> None:
    ds = daemon_set("x", pod={"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
        {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}, {"key": "cores", "operator": "Gt", "values": ["4"]}]},
        {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["special"]}]},
    ]}}}})
    pod = placement.candidate(ds)
    assert placement.should_run(_node("n", {"zone": "a", "cores": "8"}), pod) == (True, True)
    assert placement.should_run(_node("n", {"zone": "a", "cores": "2"}), pod) == (False, False)
    assert placement.should_run(_node("special"), pod) == (True, True)
    assert placement.should_run(_node("n", {"zone": "a", "cores": "8"}, [{"key": "k", "effect": "NoSchedule"}]), pod) == (False, True)
    assert placement.should_run(_node("n", {"zone": "a", "cores": "8"}, [{"key": "k", "effect": "NoExecute"}]), pod) == (False, False)
    # the daemon tolerations: cordoned and pressured nodes still run the pod
    taints = [{"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"},
              {"key": "node.kubernetes.io/not-ready", "effect": "NoExecute"}]
    assert placement.should_run(_node("special", taints=taints), pod) == (True, True)
    named = placement.candidate(daemon_set("y", pod={"nodeName": "other"}))
    assert placement.should_run(_node("special"), named) == (False, False)


def test_the_scheduler_honours_required_terms_and_match_fields() -> None:
    pod = {"metadata": {}, "spec": {}}
    placement.pin_to_node(pod["spec"], "n2")
    assert misfit(_node("n1"), pod, 0) == "node(s) didn't match Pod's node affinity/selector"
    assert misfit(_node("n2"), pod, 0) == ""
    empty = {"metadata": {}, "spec": {"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": [{}]}}}}}
    assert misfit(_node("n1"), empty, 0) != ""  # an empty term matches no node
    assert placement.target_node(pod) == "n2"
    for hostile in (5, {"nodeAffinity": "x"}, {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
            7, {"matchExpressions": "x"}, {"matchFields": [{"key": "metadata.name", "operator": "In", "values": "n1"}]},
            {"matchExpressions": [{"key": 1, "operator": "Exists"}]}]}}}):
        odd = {"metadata": {}, "spec": {"affinity": hostile}}  # the affinity is kept as sent: never a crash
        assert placement.target_node(odd) == ""
        assert misfit(_node("n1"), odd, 0) in ("", "node(s) didn't match Pod's node affinity/selector")


def _pod(node: str, hash_: str, ready: bool = True, created: str = "2024-01-01T00:00:00Z") -> dict[str, Any]:
    conditions = [{"type": "Ready", "status": "True" if ready else "False", "lastTransitionTime": "2024-01-01T00:00:00Z"}]
    return {"metadata": {"name": f"{node}-{hash_}", "labels": {"controller-revision-hash": hash_}, "creationTimestamp": created},
            "spec": {"nodeName": node}, "status": {"phase": "Running", "conditions": conditions}}


def test_rolling_update_without_surge_stays_within_max_unavailable() -> None:
    ds = daemon_set("x", updateStrategy={"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "50%", "maxSurge": 0}})
    nodes = {f"n{i}": [_pod(f"n{i}", "old")] for i in range(4)}
    delete, surge = rolling.plan_update(ds, nodes, "new", now=2e9)
    assert (len(delete), surge) == (2, [])  # 50% of 4
    nodes["n0"] = [_pod("n0", "new", ready=False)]
    nodes["n1"] = [_pod("n1", "old", ready=False)]  # not available anyway: replaced at once
    delete, _ = rolling.plan_update(ds, nodes, "new", now=2e9)
    assert [p["metadata"]["name"] for p in delete] == ["n1-old", "n2-old"]


def test_rolling_update_with_surge_deletes_an_old_pod_once_its_new_one_is_available() -> None:
    ds = daemon_set("x", updateStrategy={"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 0, "maxSurge": 1}})
    nodes = {"a": [_pod("a", "old"), _pod("a", "new")], "b": [_pod("b", "old")], "c": [_pod("c", "old")]}
    delete, surge = rolling.plan_update(ds, nodes, "new", now=2e9)
    assert [p["metadata"]["name"] for p in delete] == ["a-old"] and surge == ["b"]
    nodes["a"][1] = _pod("a", "new", ready=False)  # still surging on a: no room elsewhere
    assert rolling.plan_update(ds, nodes, "new", now=2e9) == ([], [])
    plan = placement.NodePlan()
    placement.plan_node(plan, _node("a"), [_pod("a", "old"), _pod("a", "new", created="2024-01-02T00:00:00Z")], (True, True),
                        hash_="new", surge=True, min_ready_seconds=0, now=2e9)
    assert [p["metadata"]["name"] for p in plan.delete] == ["a-old"]
