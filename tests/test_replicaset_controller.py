"""The ReplicaSet controller against a real server with its simulated nodes, plus its pure parts."""

from __future__ import annotations

import asyncio
import contextlib
import json
import shutil
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from kplane.core.client.rest import ApiError
from kplane.core.hookspecs import hookimpl
from kplane.core.registry.admission import AdmissionChain, AdmissionRequest, Operation, deny
from kplane.core.registry.registry import Registry
from kplane.core.serving.apiserver import APIServer
from kplane.plugins.apps.controllers.replicaset import Expectations, _pods_to_delete, slow_start
from tests.conftest import Client
from tests.kubectl_cli import Kubectl
from tests.waiting import eventually
from tests.servers import server_config

pytestmark = pytest.mark.controllers

RSS = "/apis/apps/v1/namespaces/default/replicasets"
PODS = "/api/v1/namespaces/default/pods"
EVENTS = "/api/v1/namespaces/default/events"


def replica_set(name: str, replicas: int, image: str = "nginx:1.25", **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "ReplicaSet",
        "metadata": {"name": name},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": name}},
            "template": {"metadata": {"labels": {"app": name, "tier": "web"}}, "spec": {"containers": [{"name": "main", "image": image}]}},
            **spec,
        },
    }


async def pods_of(api, app: str) -> list[dict[str, Any]]:
    return (await api.get(PODS, params={"labelSelector": f"app={app}"})).body["items"]


async def create(api, body: dict[str, Any]) -> dict[str, Any]:
    reply = await api.post(RSS, body)
    assert reply.status == 201, reply
    return reply.body


async def settled(api, name: str, replicas: int, timeout: float = 10.0) -> dict[str, Any]:
    """The ReplicaSet once its status says every replica is available for its current generation."""
    found: dict[str, Any] = {}

    async def done() -> bool:
        found.update((await api.get(f"{RSS}/{name}")).body)
        status = found.get("status", {})
        return (status.get("observedGeneration") == found["metadata"]["generation"] and status.get("replicas", 0) == replicas
                and status.get("availableReplicas", 0) == replicas and len(await pods_of(api, name)) == replicas)

    await eventually(done, timeout)
    return found


def controller_ref(rs: dict[str, Any]) -> dict[str, Any]:
    return {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": rs["metadata"]["name"], "uid": rs["metadata"]["uid"],
            "controller": True, "blockOwnerDeletion": True}


async def test_replicas_are_created_owned_and_become_available(api):
    rs = await create(api, replica_set("web", 3))
    done = await settled(api, "web", 3)
    assert done["status"] == {"replicas": 3, "fullyLabeledReplicas": 3, "readyReplicas": 3, "availableReplicas": 3, "observedGeneration": 1}
    pods = await pods_of(api, "web")
    for pod in pods:
        assert pod["metadata"]["ownerReferences"] == [controller_ref(rs)]
        assert pod["metadata"]["generateName"] == "web-" and pod["metadata"]["labels"] == {"app": "web", "tier": "web"}
        assert pod["spec"]["containers"][0]["image"] == "nginx:1.25"
    events = (await api.get(EVENTS, params={"fieldSelector": "involvedObject.name=web,reason=SuccessfulCreate"})).body["items"]
    assert sorted(e["message"] for e in events) == sorted(f"Created pod: {p['metadata']['name']}" for p in pods)
    assert {e["source"]["component"] for e in events} == {"replicaset-controller"}
    assert {e["involvedObject"]["uid"] for e in events} == {rs["metadata"]["uid"]}


async def test_scaling_up_and_down(api):
    await create(api, replica_set("scaled", 2))
    await settled(api, "scaled", 2)
    await api.patch(f"{RSS}/scaled", {"spec": {"replicas": 5}})
    assert (await settled(api, "scaled", 5))["status"]["observedGeneration"] == 2
    await api.patch(f"{RSS}/scaled/scale", {"spec": {"replicas": 1}})
    assert (await settled(api, "scaled", 1))["status"]["observedGeneration"] == 3
    deletions = (await api.get(EVENTS, params={"fieldSelector": "involvedObject.name=scaled,reason=SuccessfulDelete"})).body["items"]
    assert len(deletions) == 4


async def test_surplus_pods_go_not_ready_first(api):
    rs = await create(api, replica_set("keep", 2))
    await settled(api, "keep", 2)
    ready = {p["metadata"]["name"] for p in await pods_of(api, "keep")}
    straggler = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "straggler", "labels": {"app": "keep"}},
                 "spec": {"containers": [{"name": "main", "image": "nginx:fail"}]}}
    await api.post(PODS, straggler)  # an orphan the selector matches: adopted, one too many, and never ready

    async def straggler_gone() -> bool:
        return (await api.get(f"{PODS}/straggler")).status == 404

    await eventually(straggler_gone)
    await settled(api, "keep", 2)
    assert {p["metadata"]["name"] for p in await pods_of(api, "keep")} == ready
    deletion = (await api.get(EVENTS, params={"fieldSelector": "involvedObject.name=keep,reason=SuccessfulDelete"})).body["items"]
    assert [e["message"] for e in deletion] == ["Deleted pod: straggler"] and deletion[0]["involvedObject"]["uid"] == rs["metadata"]["uid"]


async def test_a_deleted_pod_is_replaced(api):
    await create(api, replica_set("heal", 2))
    await settled(api, "heal", 2)
    victim = (await pods_of(api, "heal"))[0]["metadata"]["name"]
    deleted = await api.delete(f"{PODS}/{victim}")
    assert deleted.status == 200 and deleted.body["metadata"]["deletionTimestamp"]  # terminating, for its kubelet to stop

    async def victim_gone() -> bool:
        return (await api.get(f"{PODS}/{victim}")).status == 404

    await eventually(victim_gone)
    await settled(api, "heal", 2)
    assert victim not in {p["metadata"]["name"] for p in await pods_of(api, "heal")}


async def test_a_matching_orphan_is_adopted(api):
    orphan = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "orphan", "labels": {"app": "adopter"}},
              "spec": {"containers": [{"name": "main", "image": "nginx:1.25"}]}}
    await api.post(PODS, orphan)

    async def running() -> bool:  # so the controllers' shared pod cache has it before the ReplicaSet exists
        return (await api.get(f"{PODS}/orphan")).body["status"].get("phase") == "Running"

    await eventually(running)
    rs = await create(api, replica_set("adopter", 2))
    await settled(api, "adopter", 2)
    adopted = (await api.get(f"{PODS}/orphan")).body
    assert adopted["metadata"]["ownerReferences"] == [controller_ref(rs)]
    creations = (await api.get(EVENTS, params={"fieldSelector": "involvedObject.name=adopter,reason=SuccessfulCreate"})).body["items"]
    assert len(creations) == 1


async def test_a_relabelled_pod_is_released_and_replaced(api):
    await create(api, replica_set("label", 2))
    await settled(api, "label", 2)
    stray = (await pods_of(api, "label"))[0]["metadata"]["name"]
    await api.patch(f"{PODS}/{stray}", {"metadata": {"labels": {"app": "elsewhere"}}})

    async def released() -> bool:
        return not (await api.get(f"{PODS}/{stray}")).body["metadata"].get("ownerReferences")

    await eventually(released)
    await settled(api, "label", 2)
    assert stray not in {p["metadata"]["name"] for p in await pods_of(api, "label")}
    assert (await api.get(f"{PODS}/{stray}")).status == 200  # released, not deleted


async def test_deleting_the_replica_set_collects_its_pods(api):
    await create(api, replica_set("doomed", 3))
    await settled(api, "doomed", 3)
    reply = await api.delete(f"{RSS}/doomed")
    assert reply.status == 200 and reply.body["status"] == "Success"

    async def collected() -> bool:
        return await pods_of(api, "doomed") == []

    await eventually(collected)


async def test_a_burst_never_creates_a_pod_twice(api):
    """The simulated nodes update every pod twice while the creates are in flight: each event
    syncs the ReplicaSet again, and only expectations keep those syncs from creating more."""
    seen: set[str] = set()
    start = (await api.get(PODS)).body["metadata"]["resourceVersion"]

    async def watch() -> None:
        async with api.session.get(PODS, params={"watch": "1", "resourceVersion": start, "labelSelector": "app=burst"}) as reply:
            async for line in reply.content:
                if line.strip():
                    event = json.loads(line)
                    seen.add(event["object"]["metadata"]["name"])

    watcher = asyncio.create_task(watch())
    try:
        await create(api, replica_set("burst", 20))
        await settled(api, "burst", 20)
        await asyncio.sleep(0.5)  # time for any late, duplicate create to show
    finally:
        watcher.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await watcher
    assert len(await pods_of(api, "burst")) == 20
    assert len(seen) == 20, f"{len(seen)} pods were created for 20 replicas"


async def test_min_ready_seconds_delays_availability(api):
    await create(api, replica_set("patient", 1, minReadySeconds=2))
    status: dict[str, Any] = {}

    async def ready() -> bool:
        status.update((await api.get(f"{RSS}/patient")).body.get("status", {}))
        return status.get("readyReplicas") == 1

    await eventually(ready)
    assert status.get("availableReplicas", 0) == 0
    await settled(api, "patient", 1)


# -- creation failures: a quota-like admission plugin ----------------------------------------------
class PodQuota:
    """Admits ``allowed`` pod creations, then refuses them (counting) until ``lifted``."""

    def __init__(self, allowed: int) -> None:
        self.allowed = allowed
        self.refused = 0
        self.lifted = False

    @hookimpl
    def kplane_register_admission(self, chain: AdmissionChain, registry: Registry) -> None:
        async def quota(request: AdmissionRequest) -> None:
            if self.lifted or request.resource.plural != "pods" or request.operation != Operation.CREATE:
                return
            if self.allowed > 0:
                self.allowed -= 1
                return
            self.refused += 1
            raise deny(request, "exceeded quota: pods")

        chain.add_validating("TestPodQuota", quota)


@pytest.fixture
async def quota_server(tmp_path: Path) -> AsyncIterator[tuple[APIServer, PodQuota]]:
    quota = PodQuota(allowed=3)
    srv = APIServer(server_config(data_dir=tmp_path / "state", port=0, extra_plugins=[("test-quota", quota)]))
    await srv.start()
    try:
        yield srv, quota
    finally:
        await srv.stop()


async def test_failed_creates_set_replica_failure_and_back_off(quota_server):
    server, quota = quota_server
    async with aiohttp.ClientSession(base_url=server.url) as session:
        api = Client(session)
        await create(api, replica_set("quota", 8))
        failure: dict[str, Any] = {}

        async def failing() -> bool:
            conditions = (await api.get(f"{RSS}/quota")).body.get("status", {}).get("conditions", [])
            failure.update(next((c for c in conditions if c["type"] == "ReplicaFailure"), {}))
            return bool(failure)

        await eventually(failing)
        assert failure["status"] == "True" and failure["reason"] == "FailedCreate"
        assert failure["message"].startswith('pods "quota-') and failure["message"].endswith('" is forbidden: exceeded quota: pods')
        await asyncio.sleep(0.5)
        assert len(await pods_of(api, "quota")) == 3
        # Slow start: the first sync got 1 + 2 pods, then its batch of 4 failed; every later sync (a
        # backed-off retry, or an update of one of the 3 pods) tries one. Creating all 5 missing pods
        # at each of those syncs would have been refused over 60 times.
        assert 4 <= quota.refused <= 30, quota.refused
        events = (await api.get(EVENTS, params={"fieldSelector": "involvedObject.name=quota,reason=FailedCreate"})).body["items"]
        assert {e["type"] for e in events} == {"Warning"} and f"Error creating: {failure['message']}" in {e["message"] for e in events}
        quota.lifted = True
        # Any change to the ReplicaSet syncs it at once; otherwise the retry waits out its backoff.
        await api.patch(f"{RSS}/quota", {"metadata": {"annotations": {"quota": "raised"}}})
        done = await settled(api, "quota", 8)
        assert "conditions" not in done["status"]


# -- the pure parts --------------------------------------------------------------------------------
class FakeClock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_expectations_wait_for_every_create_and_delete_or_time_out() -> None:
    clock = FakeClock()
    expectations = Expectations(timeout=300, clock=clock)
    assert expectations.satisfied("ns/rs")
    expectations.expect("ns/rs", creates=2)
    expectations.creation_observed("ns/rs")
    assert not expectations.satisfied("ns/rs")
    expectations.creation_observed("ns/rs")
    assert expectations.satisfied("ns/rs")
    expectations.expect("ns/rs", deletes=["ns/a", "ns/b"])
    expectations.deletion_observed("ns/rs", "ns/a")
    expectations.deletion_observed("ns/rs", "ns/a")
    assert not expectations.satisfied("ns/rs")
    clock.now = 301
    assert expectations.satisfied("ns/rs")  # too old to trust
    expectations.expect("ns/rs", creates=1)
    expectations.forget("ns/rs")
    assert expectations.satisfied("ns/rs")


def _pod(name: str, node: str = "", phase: str = "Running", ready: bool = True, ready_since: str = "2024-01-01T00:00:00Z",
         created: str = "2024-01-01T00:00:00Z", restarts: int = 0) -> dict[str, Any]:
    return {"metadata": {"name": name, "creationTimestamp": created}, "spec": {"nodeName": node} if node else {},
            "status": {"phase": phase, "conditions": [{"type": "Ready", "status": "True" if ready else "False", "lastTransitionTime": ready_since}],
                       "containerStatuses": [{"restartCount": restarts}]}}


def test_surplus_pods_are_ranked_as_kubernetes_ranks_them() -> None:
    pods = [
        _pod("old-ready", "n1"),
        _pod("unscheduled", phase="Pending", ready=False),
        _pod("pending", "n2", phase="Pending", ready=False),
        _pod("not-ready", "n3", ready=False),
        _pod("crowded", "n1", created="2023-01-01T00:00:00Z"),
        _pod("newly-ready", "n4", ready_since="2024-06-01T00:00:00Z"),
        _pod("restarted", "n5", restarts=3),
        _pod("newer", "n6", created="2024-06-01T00:00:00Z"),
        _pod("oldest", "n7", created="2022-01-01T00:00:00Z"),
    ]
    order = [p["metadata"]["name"] for p in _pods_to_delete(pods, len(pods) - 1)]
    assert order == ["unscheduled", "pending", "not-ready", "old-ready", "crowded", "newly-ready", "restarted", "newer"]


async def test_slow_start_doubles_batches_and_stops_at_a_failure() -> None:
    calls: list[int] = []

    async def create() -> None:
        calls.append(len(calls))
        if len(calls) == 5:
            raise ApiError(403, {"message": "quota"})

    done, failure = await slow_start(20, create)
    assert calls == [0, 1, 2, 3, 4, 5, 6]  # batches of 1, 2 and 4; the third failed, the fourth never ran
    assert done == 6 and failure is not None and failure.code == 403
    calls.clear()
    assert await slow_start(3, create) == (3, None)


# -- kubectl -----------------------------------------------------------------------------------
RS_YAML = """
apiVersion: apps/v1
kind: ReplicaSet
metadata: {name: frontend}
spec:
  replicas: 3
  selector: {matchLabels: {app: frontend}}
  template:
    metadata: {labels: {app: frontend}}
    spec:
      containers: [{name: nginx, image: "nginx:1.25"}]
"""


@pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl is not on PATH")
def test_kubectl_create_scale_and_describe(kubectl: Kubectl) -> None:
    kubectl.apply_file("create", RS_YAML)
    kubectl.run("wait", "--for=jsonpath={.status.availableReplicas}=3", "rs/frontend", "--timeout=15s")
    rows = [line.split() for line in kubectl.run("get", "pods", "-l", "app=frontend", "-o", "wide").stdout.splitlines()[1:]]
    assert len(rows) == 3 and all(r[1:3] == ["1/1", "Running"] and r[6].startswith("kplane-node-") for r in rows)
    assert kubectl.run("get", "rs", "frontend").stdout.splitlines()[1].split()[1:4] == ["3", "3", "3"]
    kubectl.run("scale", "rs", "frontend", "--replicas=1")
    kubectl.run("wait", "--for=jsonpath={.status.replicas}=1", "rs/frontend", "--timeout=15s")
    described = kubectl.run("describe", "rs", "frontend").stdout
    assert "SuccessfulCreate" in described and "SuccessfulDelete" in described and "replicaset-controller" in described
    kubectl.run("delete", "rs", "frontend")
    with contextlib.suppress(AssertionError):
        kubectl.run("wait", "--for=delete", "pod", "-l", "app=frontend", "--timeout=15s")
    assert kubectl.run("get", "pods", "-l", "app=frontend", "-o", "name").stdout.strip() == ""
