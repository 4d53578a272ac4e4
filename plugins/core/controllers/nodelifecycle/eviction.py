"""The taint eviction controller: pods of a node with NoExecute taints are deleted, at once when
they do not tolerate a taint, after the shortest ``tolerationSeconds`` that applies when they
do, never when they tolerate every taint forever. A pod marked for deletion gets the
``DisruptionTarget`` condition (``DeletionByTaintManager``) and a ``TaintManagerEviction`` event;
one whose taints go before its time is spared (``Cancelling deletion``)."""

from __future__ import annotations

import asyncio
from typing import Any

from kplane.api import (
    NORMAL, ApiError, EventRecorder, Handlers, RESTClient, SharedInformerFactory, WorkQueue, Workers, clock,
    involved_object, object_key, ownership as own, wait_synced,
)
from kplane.plugins.core.controllers.nodelifecycle import taints
from kplane.plugins.core.controllers.nodes.status_writer import write_status

Obj = dict[str, Any]
COMPONENT = "taint-eviction-controller"


class TaintEvictionController:
    def __init__(self, client: RESTClient, informers: SharedInformerFactory, *, workers: int = 2) -> None:
        self.client = client
        self.informers = informers
        self.workers = workers
        self.node_informer = informers.informer("", "v1", "nodes")
        self.pod_informer = informers.informer("", "v1", "pods")
        taints.index_by_node(self.pod_informer)
        self.queue: WorkQueue[str] = WorkQueue()
        self.recorder = EventRecorder(client, COMPONENT)
        self._due: dict[str, float] = {}  # pod key -> loop time its eviction is due

    async def run(self) -> None:
        self.pod_informer.add_handlers(Handlers.for_any(self._enqueue))
        self.node_informer.add_handlers(Handlers(on_add=self._node_changed, on_update=self._node_updated))
        self.informers.start()
        async with Workers(self.queue, self.recorder) as workers:
            await wait_synced(self.node_informer, self.pod_informer)
            workers.start(self.workers, self._sync, name="taint eviction")
            await workers.wait()

    def _enqueue(self, pod: Obj) -> None:
        if own.spec(pod).get("nodeName"):
            self.queue.add(object_key(pod))

    def _node_updated(self, old: Obj, node: Obj) -> None:
        if taints.no_execute(old) != taints.no_execute(node):
            self._node_changed(node)

    def _node_changed(self, node: Obj) -> None:
        for pod in self.pod_informer.indexer.by_index(taints.NODE_NAME_INDEX, node["metadata"]["name"]):
            self._enqueue(pod)

    async def _sync(self, key: str) -> None:
        pod = self.pod_informer.indexer.get(key)
        if pod is None or pod["metadata"].get("deletionTimestamp") or (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed"):
            self._due.pop(key, None)
            return
        node = self.node_informer.indexer.get(own.spec(pod).get("nodeName") or "")
        found = taints.no_execute(node) if node is not None else []
        seconds = taints.toleration_seconds(pod, found) if found else None
        if seconds is None:
            if self._due.pop(key, None) is not None:
                self.recorder.event(involved_object(pod, "v1", "Pod"), NORMAL, "TaintManagerEviction", f"Cancelling deletion of Pod {key}")
            return
        now = asyncio.get_running_loop().time()
        due = self._due.setdefault(key, now + seconds)
        if due > now:
            self.queue.add_after(key, due - now)
            return
        await self._evict(pod, key)

    async def _evict(self, pod: Obj, key: str) -> None:
        self.recorder.event(involved_object(pod, "v1", "Pod"), NORMAL, "TaintManagerEviction", f"Marking for deletion Pod {key}")
        await write_status(self.client, pod, _disruption_target)
        meta = pod["metadata"]
        try:
            await self.client.resource("", "v1", "pods", meta["namespace"]).delete(meta["name"])
        except ApiError as err:
            if err.code != 404:
                raise
        self._due.pop(key, None)


def _disruption_target(pod: Obj) -> Obj:
    status = dict(pod.get("status") or {})
    kept = [c for c in status.get("conditions") or [] if c.get("type") != "DisruptionTarget"]
    status["conditions"] = [*kept, {"type": "DisruptionTarget", "status": "True", "lastTransitionTime": clock.now(),
                                    "reason": "DeletionByTaintManager", "message": "Taint manager: deleting due to NoExecute taint"}]
    return status
