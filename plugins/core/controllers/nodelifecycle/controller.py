"""The node lifecycle controller: a node's health from its heartbeats, and the taints that say it.

Every ``monitor_period`` it looks at each Node from the informers' caches. A heartbeat is a
change it *sees* (the Ready condition's ``lastHeartbeatTime`` or the Lease's ``renewTime``), timed
by its own clock, as kube's ``tryUpdateNodeHealth``: a node not seen to beat for
``grace_period`` gets its kubelet conditions set ``Unknown``. Taints follow the Ready condition and
``spec.unschedulable`` (:mod:`.taints`); a node turning not Ready has its pods marked not Ready.
Writes happen only when something changes.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from typing import Any

import aiohttp

from kplane.api import (
    NORMAL, STRATEGIC_MERGE_PATCH, ApiError, EventRecorder, Handlers, RESTClient, SharedInformerFactory, clock,
    ownership as own, wait_synced,
)
from kplane.plugins.core.controllers.nodelifecycle import taints
from kplane.plugins.core.controllers.nodes.status_writer import write_status

log = logging.getLogger(__name__)
Obj = dict[str, Any]

COMPONENT = "node-controller"
LEASE_NAMESPACE = "kube-node-lease"
KUBELET_CONDITIONS = ("Ready", "MemoryPressure", "DiskPressure", "PIDPressure")


@dataclass(slots=True)
class _Health:
    """What was last seen of a node's heartbeats, and when (by this controller's clock)."""

    heartbeat: str | None
    renewed: str | None
    probed: float


def node_ref(name: str) -> Obj:
    """A Node as events name it: kubelets and this controller give the node's name as its uid,
    which is what ``kubectl describe node`` looks for."""
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "uid": name}}


class NodeLifecycleController:
    def __init__(self, client: RESTClient, informers: SharedInformerFactory, *, monitor_period: float = 5.0,
                 grace_period: float = 50.0) -> None:
        self.client = client
        self.informers = informers
        self.monitor_period = monitor_period
        self.grace_period = grace_period
        self.node_informer = informers.informer("", "v1", "nodes")
        self.lease_informer = informers.informer("coordination.k8s.io", "v1", "leases")
        self.pod_informer = informers.informer("", "v1", "pods")
        taints.index_by_node(self.pod_informer)
        self.recorder = EventRecorder(client, COMPONENT)
        self.nodes = client.resource("", "v1", "nodes")
        self._health: dict[str, _Health] = {}

    async def run(self) -> None:
        self.node_informer.add_handlers(Handlers(on_delete=lambda node: self._health.pop(node["metadata"]["name"], None)))
        self.informers.start()
        async with self.recorder:
            await wait_synced(self.node_informer, self.lease_informer, self.pod_informer)
            while True:
                for node in self.node_informer.indexer.list():
                    try:
                        await self._monitor(node)
                    except (ApiError, aiohttp.ClientError) as err:
                        log.info("node lifecycle: %s: %s; trying again", node["metadata"]["name"], err)
                await asyncio.sleep(self.monitor_period)

    async def _monitor(self, node: Obj) -> None:
        name = node["metadata"]["name"]
        status = node.get("status") or {}
        ready = _condition(status, "Ready")
        before = ready.get("status", "Unknown") if ready else "Unknown"
        lease = self.lease_informer.indexer.get(f"{LEASE_NAMESPACE}/{name}")
        heartbeat = ready.get("lastHeartbeatTime") if ready else None
        renewed = own.spec(lease).get("renewTime") if lease is not None else None
        now = asyncio.get_running_loop().time()
        seen = self._health.get(name)
        if seen is None:
            self.recorder.event(node_ref(name), NORMAL, "RegisteredNode", f"Node {name} event: Registered Node {name} in Controller")
        if seen is None or seen.heartbeat != heartbeat or seen.renewed != renewed:
            seen = self._health[name] = _Health(heartbeat, renewed, now)
        after = before
        if now - seen.probed > self.grace_period:
            conditions = _unknown(status.get("conditions") or [])
            if conditions is not None:
                node = await self.nodes.update_status({**node, "status": {**status, "conditions": conditions}})
                after = "Unknown"
                self.recorder.event(node_ref(name), NORMAL, "NodeNotReady", f"Node {name} status is now: NodeNotReady")
        if before == "True" and after != "True" or after != "True" and before != after:
            await self._mark_pods_not_ready(name)
        await self._taint(node, after)

    async def _taint(self, node: Obj, ready: str) -> None:
        current = own.spec(node).get("taints") or []
        wanted = taints.merged(current, taints.wanted(node, ready), clock.now())
        if wanted != current:
            await self.nodes.patch(node["metadata"]["name"], {"metadata": {"resourceVersion": node["metadata"]["resourceVersion"]},
                                                             "spec": {"taints": wanted}})

    async def _mark_pods_not_ready(self, name: str) -> None:
        """``MarkPodsNotReady``: the pods of a node that stopped answering are not Ready."""
        for pod in self.pod_informer.indexer.by_index(taints.NODE_NAME_INDEX, name):
            if (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed"):
                continue
            await write_status(self.client, pod, _not_ready)


def _condition(status: Obj, kind: str) -> Obj | None:
    return next((c for c in status.get("conditions") or [] if c.get("type") == kind), None)


def _unknown(conditions: list[Obj]) -> list[Obj] | None:
    """The kubelet's conditions set Unknown now, or None when they all are already."""
    now = clock.now()
    changed = False
    result = [dict(c) for c in conditions]
    for kind in KUBELET_CONDITIONS:
        current = next((c for c in result if c.get("type") == kind), None)
        if current is None:
            result.append({"type": kind, "status": "Unknown", "lastHeartbeatTime": now, "lastTransitionTime": now,
                           "reason": "NodeStatusNeverUpdated", "message": "Kubelet never posted node status."})
            changed = True
        elif current.get("status") != "Unknown":
            current.update(status="Unknown", reason="NodeStatusUnknown", message="Kubelet stopped posting node status.",
                           lastTransitionTime=now)
            changed = True
    return result if changed else None


def _not_ready(pod: Obj) -> Obj:
    """The pod's status with Ready (and ContainersReady) False; the rest as it was."""
    status = dict(pod.get("status") or {})
    now = clock.now()
    conditions = []
    for condition in status.get("conditions") or []:
        if condition.get("type") == "Ready" and condition.get("status") != "False":
            condition = {**condition, "status": "False", "lastTransitionTime": now}
        conditions.append(condition)
    status["conditions"] = conditions
    return status
