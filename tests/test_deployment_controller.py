"""The Deployment controller against a real server with simulated nodes: ReplicaSets, revisions,
rolling and Recreate rollouts, pausing, proportional scaling, progress deadlines, collisions."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest

from kplane.core.client.rest import ApiError, RESTClient, ResourceClient
from kplane.core.patching.mediatypes import JSON_PATCH
from kplane.core.serving.apiserver import APIServer
from kplane.core.meta.rand import SAFE_ALPHABET
from kplane.plugins.apps.controllers.deployment.revisions import pod_template_hash
from kplane.plugins.apps.controllers.deployment.scaling import fenceposts, new_rs_replicas
from tests.builders import deployment
from tests.waiting import eventually

pytestmark = pytest.mark.controllers

SMP = "application/strategic-merge-patch+json"
Obj = dict[str, Any]


@pytest.fixture
async def client(server: APIServer) -> AsyncIterator[RESTClient]:
    rest = RESTClient(server.url)
    try:
        yield rest
    finally:
        await rest.close()


def deployments(client: RESTClient) -> ResourceClient:
    return client.resource("apps", "v1", "deployments", "default")


def replica_sets(client: RESTClient) -> ResourceClient:
    return client.resource("apps", "v1", "replicasets", "default")


def pods(client: RESTClient) -> ResourceClient:
    return client.resource("", "v1", "pods", "default")


async def complete(client: RESTClient, name: str, timeout: float = 15.0) -> Obj:
    """The Deployment once its rollout is done, as ``kubectl rollout status`` judges it."""
    async def done() -> Obj | None:
        d = await deployments(client).get(name)
        s, want = d.get("status") or {}, d["spec"]["replicas"]
        ok = (s.get("observedGeneration", 0) >= d["metadata"]["generation"] and s.get("updatedReplicas", 0) == want
              and s.get("replicas", 0) == want and s.get("availableReplicas", 0) == want)
        return d if ok else None
    return await eventually(done, timeout)


async def owned(client: RESTClient, d: Obj) -> list[Obj]:
    """The Deployment's ReplicaSets, as kubectl finds them: controller reference with its uid; by revision."""
    items = (await replica_sets(client).list())["items"]
    mine = [rs for rs in items if any(r.get("controller") and r["uid"] == d["metadata"]["uid"] for r in rs["metadata"].get("ownerReferences") or [])]
    return sorted(mine, key=lambda rs: int(rs["metadata"]["annotations"]["deployment.kubernetes.io/revision"]))


def condition(d: Obj, type_: str) -> Obj:
    return next(c for c in d["status"]["conditions"] if c["type"] == type_)


async def set_image(client: RESTClient, name: str, image: str) -> None:
    await deployments(client).patch(name, {"spec": {"template": {"spec": {"containers": [{"name": "nginx", "image": image}]}}}}, content_type=SMP)


def is_ready(pod: Obj) -> bool:
    conditions = (pod.get("status") or {}).get("conditions") or []
    return not pod["metadata"].get("deletionTimestamp") and any(c["type"] == "Ready" and c["status"] == "True" for c in conditions)


@contextlib.asynccontextmanager
async def pod_history(client: RESTClient, on_change: Callable[[dict[str, Obj]], None]) -> AsyncIterator[None]:
    """Call ``on_change`` with every state of the namespace's pods, in the server's order, from a watch."""
    listing = await pods(client).list()
    state = {p["metadata"]["name"]: p for p in listing["items"]}

    async def follow() -> None:
        async for event in pods(client).watch(resource_version=listing["metadata"]["resourceVersion"]):
            if event.type == "BOOKMARK":
                continue
            if event.type == "DELETED":
                state.pop(event.object["metadata"]["name"], None)
            else:
                state[event.object["metadata"]["name"]] = event.object
            on_change(state)

    task = asyncio.create_task(follow())
    try:
        yield
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


# -- the arithmetic -------------------------------------------------------------------------
def test_template_hash_is_short_safe_and_ignores_defaulted_empties() -> None:
    template = {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [{"name": "nginx", "image": "nginx:1.25"}]}}
    undone = {"metadata": {"creationTimestamp": None, "labels": {"app": "web"}},
              "spec": {"containers": [{"name": "nginx", "image": "nginx:1.25", "resources": {}}]}}
    value = pod_template_hash(template)
    assert 1 <= len(value) <= 10 and set(value) <= set(SAFE_ALPHABET)
    assert pod_template_hash(undone) == value
    assert pod_template_hash(template, 1) != value != pod_template_hash(template, 0)
    other = {**template, "spec": {"containers": [{"name": "nginx", "image": "nginx:1.26"}]}}
    assert pod_template_hash(other) != value


@pytest.mark.parametrize(("replicas", "surge", "unavailable", "expected"), [
    (3, "25%", "25%", (1, 0)),  # surge rounds up, unavailable down
    (10, "25%", "25%", (3, 2)),
    (4, 2, 1, (2, 1)),
    (5, "0%", "0%", (0, 1)),  # never both 0: one may be unavailable
])
def test_fenceposts_round_like_kubernetes(replicas: int, surge: int | str, unavailable: int | str, expected: tuple[int, int]) -> None:
    d = deployment(replicas=replicas, strategy={"type": "RollingUpdate", "rollingUpdate": {"maxSurge": surge, "maxUnavailable": unavailable}})
    assert fenceposts(d) == expected


def test_new_replica_set_grows_within_surge() -> None:
    d = deployment(replicas=4, strategy={"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 2, "maxUnavailable": 0}})
    old, new = {"spec": {"replicas": 4}}, {"spec": {"replicas": 0}}
    assert new_rs_replicas(d, [old, new], new) == 2
    old["spec"]["replicas"], new["spec"]["replicas"] = 1, 3
    assert new_rs_replicas(d, [old, new], new) == 4  # never past spec.replicas
    recreate = deployment(replicas=4, strategy={"type": "Recreate"})
    assert new_rs_replicas(recreate, [old, new], new) == 4


# -- against the server ---------------------------------------------------------------------
async def test_new_deployment_gets_an_owned_hashed_replica_set_and_completes(client: RESTClient) -> None:
    await deployments(client).create(deployment("web", replicas=3))
    d = await complete(client, "web")
    [rs] = await owned(client, d)
    pod_hash = rs["metadata"]["labels"]["pod-template-hash"]
    assert rs["metadata"]["name"] == f"web-{pod_hash}" and set(pod_hash) <= set(SAFE_ALPHABET)
    assert rs["spec"]["selector"]["matchLabels"] == {"app": "web", "pod-template-hash": pod_hash}
    assert rs["spec"]["template"]["metadata"]["labels"] == {"app": "web", "pod-template-hash": pod_hash}
    assert rs["metadata"]["ownerReferences"] == [{"apiVersion": "apps/v1", "kind": "Deployment", "name": "web",
                                                  "uid": d["metadata"]["uid"], "controller": True, "blockOwnerDeletion": True}]
    annotations = rs["metadata"]["annotations"]
    assert annotations["deployment.kubernetes.io/revision"] == "1"
    assert annotations["deployment.kubernetes.io/desired-replicas"] == "3"
    assert annotations["deployment.kubernetes.io/max-replicas"] == "4"  # 3 + 25% rounded up
    assert d["metadata"]["annotations"]["deployment.kubernetes.io/revision"] == "1"
    status = d["status"]
    assert status["observedGeneration"] == d["metadata"]["generation"]
    assert (status["replicas"], status["updatedReplicas"], status["readyReplicas"], status["availableReplicas"]) == (3, 3, 3, 3)
    assert status.get("unavailableReplicas", 0) == 0
    assert (condition(d, "Available")["status"], condition(d, "Available")["reason"]) == ("True", "MinimumReplicasAvailable")
    progressing = condition(d, "Progressing")
    assert (progressing["status"], progressing["reason"]) == ("True", "NewReplicaSetAvailable")
    assert progressing["message"] == f'ReplicaSet "{rs["metadata"]["name"]}" has successfully progressed.'
    ready = [p for p in (await pods(client).list(labelSelector="app=web"))["items"] if is_ready(p)]
    assert len(ready) == 3


async def test_template_change_rolls_to_a_new_replica_set_within_max_unavailable(client: RESTClient) -> None:
    strategy = {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 0, "maxUnavailable": 1}}
    await deployments(client).create(deployment("web", replicas=3, strategy=strategy))
    await complete(client, "web")
    lowest: list[int] = []
    new_ready: list[int] = []

    def observe(state: dict[str, Obj]) -> None:
        ready = [p for p in state.values() if is_ready(p)]
        lowest.append(len(ready))
        new_ready.append(sum(1 for p in ready if p["spec"]["containers"][0]["image"] == "nginx:1.26"))

    async with pod_history(client, observe):
        await set_image(client, "web", "nginx:1.26")
        d = await complete(client, "web")
    assert min(lowest) >= 3 - 1 and max(new_ready) == 3  # sampled across the whole rollout
    old, new = await owned(client, d)
    assert old["spec"]["replicas"] == 0 and new["spec"]["replicas"] == 3
    assert new["metadata"]["annotations"]["deployment.kubernetes.io/revision"] == "2"
    assert d["metadata"]["annotations"]["deployment.kubernetes.io/revision"] == "2"
    assert condition(d, "Progressing")["message"] == f'ReplicaSet "{new["metadata"]["name"]}" has successfully progressed.'
    events = (await client.resource("", "v1", "events", "default").list())["items"]
    messages = [e["message"] for e in sorted(events, key=lambda e: e["metadata"]["name"])
                if e["reason"] == "ScalingReplicaSet" and e["involvedObject"]["uid"] == d["metadata"]["uid"]]
    assert messages[0] == f"Scaled up replica set {old['metadata']['name']} from 0 to 3"
    assert f"Scaled down replica set {old['metadata']['name']} from 3 to 2" in messages  # maxSurge 0: down first
    assert f"Scaled up replica set {new['metadata']['name']} from 0 to 1" in messages
    assert all(e["source"]["component"] == "deployment-controller" for e in events if e["reason"] == "ScalingReplicaSet")


async def test_rollback_with_kubectls_template_reuses_the_old_replica_set(client: RESTClient) -> None:
    await deployments(client).create(deployment("web", replicas=2))
    first = (await owned(client, await complete(client, "web")))[0]
    await set_image(client, "web", "nginx:1.26")
    d = await complete(client, "web")
    second = (await owned(client, d))[1]
    template = first["spec"]["template"]  # what `kubectl rollout undo` sends: no hash label, normalised empties
    template["metadata"] = {"creationTimestamp": None, "labels": {"app": "web"}}
    template["spec"]["containers"][0]["resources"] = {}
    patch = [{"op": "replace", "path": "/spec/template", "value": template},
             {"op": "replace", "path": "/metadata/annotations", "value": {"deployment.kubernetes.io/revision": "2"}}]
    await deployments(client).patch("web", patch, content_type=JSON_PATCH)
    d = await complete(client, "web")
    rss = await owned(client, d)
    assert [rs["metadata"]["name"] for rs in rss] == [second["metadata"]["name"], first["metadata"]["name"]]  # no third one
    back = rss[-1]
    assert back["metadata"]["annotations"]["deployment.kubernetes.io/revision"] == "3"
    assert back["metadata"]["annotations"]["deployment.kubernetes.io/revision-history"] == "1"
    assert back["spec"]["replicas"] == 2 and rss[0]["spec"]["replicas"] == 0
    assert d["metadata"]["annotations"]["deployment.kubernetes.io/revision"] == "3"


async def test_change_cause_goes_to_the_new_replica_set(client: RESTClient) -> None:
    body = deployment("web", replicas=1)
    body["metadata"]["annotations"] = {"kubernetes.io/change-cause": "first"}
    await deployments(client).create(body)
    d = await complete(client, "web")
    [rs] = await owned(client, d)
    assert rs["metadata"]["annotations"]["kubernetes.io/change-cause"] == "first"
    await deployments(client).patch("web", {"metadata": {"annotations": {"kubernetes.io/change-cause": "second"}},
                                            "spec": {"template": {"spec": {"containers": [{"name": "nginx", "image": "nginx:1.26"}]}}}},
                                    content_type=SMP)
    old, new = await owned(client, await complete(client, "web"))
    assert old["metadata"]["annotations"]["kubernetes.io/change-cause"] == "first"
    assert new["metadata"]["annotations"]["kubernetes.io/change-cause"] == "second"


async def test_revision_history_limit_deletes_the_oldest_replica_sets(client: RESTClient) -> None:
    await deployments(client).create(deployment("web", replicas=1, revisionHistoryLimit=1))
    await complete(client, "web")
    for image in ("nginx:1.26", "nginx:1.27"):
        await set_image(client, "web", image)
        d = await complete(client, "web")

    async def trimmed() -> list[Obj] | None:
        rss = await owned(client, d)
        return rss if len(rss) == 2 else None

    old, new = await eventually(trimmed)
    assert old["metadata"]["annotations"]["deployment.kubernetes.io/revision"] == "2" and old["spec"]["replicas"] == 0
    assert new["spec"]["template"]["spec"]["containers"][0]["image"] == "nginx:1.27"


async def test_recreate_waits_until_the_old_pods_have_stopped(client: RESTClient) -> None:
    """As ``oldPodsRunning``: an old pod counts until it is terminal or gone, however long a
    finalizer keeps it once its kubelet stopped it."""
    await deployments(client).create(deployment("web", replicas=2, strategy={"type": "Recreate"}))
    await complete(client, "web")
    held = (await pods(client).list(labelSelector="app=web"))["items"][0]["metadata"]["name"]
    await pods(client).patch(held, {"metadata": {"finalizers": ["example.com/hold"]}})  # it will linger, stopped
    overlaps: list[set[str]] = []

    def observe(state: dict[str, Obj]) -> None:
        running_old = {n for n, p in state.items() if p["spec"]["containers"][0]["image"] == "nginx:1.25"
                       and p.get("status", {}).get("phase") not in ("Succeeded", "Failed")}
        new = {n for n, p in state.items() if p["spec"]["containers"][0]["image"] == "nginx:1.26"}
        if running_old and new:
            overlaps.append(running_old | new)

    async with pod_history(client, observe):
        await set_image(client, "web", "nginx:1.26")

        async def stopped() -> bool:  # its kubelet stopped it; the finalizer keeps it
            pod = await pods(client).get(held)
            return bool(pod["metadata"].get("deletionTimestamp")) and pod["status"]["phase"] in ("Succeeded", "Failed")

        await eventually(stopped)
        await pods(client).patch(held, {"metadata": {"finalizers": None}})
        d = await complete(client, "web")
    assert not overlaps
    old, new = await owned(client, d)
    assert (old["spec"]["replicas"], new["spec"]["replicas"]) == (0, 2)
    assert new["metadata"]["annotations"]["deployment.kubernetes.io/max-replicas"] == "2"  # no surge


async def test_paused_deployment_scales_but_does_not_roll_out(client: RESTClient) -> None:
    await deployments(client).create(deployment("web", replicas=2))
    d = await complete(client, "web")
    await deployments(client).patch("web", {"spec": {"paused": True}})
    await set_image(client, "web", "nginx:1.26")
    await deployments(client).patch("web", {"spec": {"replicas": 3}})

    async def paused() -> Obj | None:
        d = await deployments(client).get("web")
        p = condition(d, "Progressing")
        return d if p["reason"] == "DeploymentPaused" and d["status"]["observedGeneration"] == d["metadata"]["generation"] else None

    d = await eventually(paused)
    assert condition(d, "Progressing")["status"] == "Unknown"

    async def scaled() -> Obj | None:
        d = await deployments(client).get("web")
        return d if d["status"].get("availableReplicas") == 3 else None

    d = await eventually(scaled)
    assert d["status"].get("updatedReplicas", 0) == 0  # the running pods have the old template
    [rs] = await owned(client, d)
    assert rs["spec"]["replicas"] == 3 and rs["spec"]["template"]["spec"]["containers"][0]["image"] == "nginx:1.25"
    await deployments(client).patch("web", {"spec": {"paused": None}})
    d = await complete(client, "web")
    old, new = await owned(client, d)
    assert new["spec"]["template"]["spec"]["containers"][0]["image"] == "nginx:1.26" and new["spec"]["replicas"] == 3
    assert condition(d, "Progressing")["reason"] == "NewReplicaSetAvailable"


async def test_scaling_mid_rollout_is_proportional(client: RESTClient) -> None:
    strategy = {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0}}
    await deployments(client).create(deployment("web", replicas=4, strategy=strategy))
    await complete(client, "web")
    await set_image(client, "web", "nginx:fail")  # never ready: the rollout stays at 4 old + 1 new

    async def stuck() -> list[Obj] | None:
        rss = await owned(client, await deployments(client).get("web"))
        return rss if len(rss) == 2 and rss[1]["spec"]["replicas"] == 1 else None

    await eventually(stuck)
    await deployments(client).patch("web", {"spec": {"replicas": 8}})

    async def scaled() -> list[Obj] | None:
        rss = await owned(client, await deployments(client).get("web"))
        return rss if all(rs["metadata"]["annotations"]["deployment.kubernetes.io/desired-replicas"] == "8" for rs in rss) else None

    old, new = await eventually(scaled)
    # 9 allowed (8 + surge) for 5 sized for 5: the old one gets round(4 * 9/5) = 7, the new one the remaining 2.
    assert (old["spec"]["replicas"], new["spec"]["replicas"]) == (7, 2)
    assert old["metadata"]["annotations"]["deployment.kubernetes.io/max-replicas"] == "9"


async def test_no_progress_past_the_deadline_is_reported(client: RESTClient) -> None:
    await deployments(client).create(deployment("web", replicas=2, progressDeadlineSeconds=2))
    await complete(client, "web")
    await set_image(client, "web", "nginx:fail")

    async def timed_out() -> Obj | None:
        d = await deployments(client).get("web")
        return d if condition(d, "Progressing")["reason"] == "ProgressDeadlineExceeded" else None

    d = await eventually(timed_out, timeout=10)
    progressing = condition(d, "Progressing")
    assert progressing["status"] == "False"
    new = (await owned(client, d))[-1]
    assert progressing["message"] == f'ReplicaSet "{new["metadata"]["name"]}" has timed out progressing.'
    assert condition(d, "Available")["status"] == "True"  # the old pods still serve


async def test_hash_collision_bumps_collision_count(client: RESTClient) -> None:
    await deployments(client).create(deployment("web", replicas=1, paused=True))  # paused: no ReplicaSet yet
    d = await deployments(client).get("web")
    squatter = {"apiVersion": "apps/v1", "kind": "ReplicaSet",
                "metadata": {"name": f"web-{pod_template_hash(d['spec']['template'])}", "labels": {"app": "other"}},
                "spec": {"replicas": 0, "selector": {"matchLabels": {"app": "other"}},
                         "template": {"metadata": {"labels": {"app": "other"}}, "spec": {"containers": [{"name": "c", "image": "busybox"}]}}}}
    await replica_sets(client).create(squatter)
    await deployments(client).patch("web", {"spec": {"paused": None}})
    d = await complete(client, "web")
    assert d["status"]["collisionCount"] == 1
    [rs] = await owned(client, d)
    assert rs["metadata"]["name"] == f"web-{pod_template_hash(d['spec']['template'], 1)}"
    assert not (await replica_sets(client).get(squatter["metadata"]["name"]))["metadata"].get("ownerReferences")


async def test_orphans_are_adopted_and_strays_released(client: RESTClient) -> None:
    await deployments(client).create(deployment("web", replicas=2, paused=True))
    d = await deployments(client).get("web")
    pod_hash = pod_template_hash(d["spec"]["template"])
    template = {**d["spec"]["template"], "metadata": {"labels": {"app": "web", "pod-template-hash": pod_hash}}}
    orphan = {"apiVersion": "apps/v1", "kind": "ReplicaSet",
              "metadata": {"name": f"web-{pod_hash}", "labels": {"app": "web", "pod-template-hash": pod_hash}},
              "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "web", "pod-template-hash": pod_hash}}, "template": template}}
    await replica_sets(client).create(orphan)
    await deployments(client).patch("web", {"spec": {"paused": None}})
    d = await complete(client, "web")
    [rs] = await owned(client, d)  # adopted and used as the new ReplicaSet: no second one
    assert rs["metadata"]["name"] == orphan["metadata"]["name"]
    await replica_sets(client).patch(rs["metadata"]["name"], {"metadata": {"labels": {"app": "gone"}}})

    async def released() -> bool:
        stray = await replica_sets(client).get(rs["metadata"]["name"])
        return not stray["metadata"].get("ownerReferences")

    await eventually(released)


async def test_deleting_the_deployment_collects_replica_sets_and_pods(client: RESTClient) -> None:
    await deployments(client).create(deployment("web", replicas=2))
    await complete(client, "web")
    await deployments(client).delete("web")

    async def gone() -> bool:
        return not (await replica_sets(client).list(labelSelector="app=web"))["items"] and not (await pods(client).list(labelSelector="app=web"))["items"]

    await eventually(gone)
    with pytest.raises(ApiError) as missing:
        await deployments(client).get("web")
    assert missing.value.code == 404
