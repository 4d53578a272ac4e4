"""The ``simulated-nodes`` controller: one work queue of pods, shared by the scheduler (pods
without a node) and the kubelets (pods on one of the simulated Nodes), and the Nodes' heartbeat."""

from __future__ import annotations

import asyncio
from typing import Any

from kplane.api import EventRecorder, Handlers, RESTClient, SharedInformerFactory, WorkQueue, Workers, object_key, wait_synced
from kplane.api import ownership as own
from kplane.plugins.core.controllers.nodes.addresses import NoAddressLeft
from kplane.plugins.core.controllers.nodes.kubelet import Kubelets
from kplane.plugins.core.controllers.nodes.pod_status import TERMINAL
from kplane.plugins.core.controllers.nodes.registrar import KUBELET_ANNOTATION, STOPPED, NodeRegistrar
from kplane.plugins.core.controllers.nodes.scheduler import SCHEDULER, Scheduler, wants_scheduling
from kplane.plugins.core.controllers.nodes.settings import DEFAULT_RESTART_BACKOFF, DEFAULT_RUN_SECONDS

Obj = dict[str, Any]


class SimulatedNodes:
    """Registers the Nodes, keeps them alive, schedules pods onto Nodes and runs those bound to its own."""

    def __init__(self, client: RESTClient, informers: SharedInformerFactory, *, count: int = 3, ready_delay: float = 0.2,
                 prefix: str = "kplane-node-", heartbeat: float = 10.0, workers: int = 16,
                 run_seconds: float = DEFAULT_RUN_SECONDS, restart_backoff: float = DEFAULT_RESTART_BACKOFF) -> None:
        if not 0 <= count <= 250:
            raise ValueError("simulated nodes: count must be between 0 and 250 (one 10.244.<n>.0/24 each)")
        self.informers = informers
        self.heartbeat = heartbeat
        self.workers = workers
        self.managed = {f"{prefix}{n}": n for n in range(1, count + 1)}  # node name -> its number
        self.pod_informer = informers.informer("", "v1", "pods")
        self.node_informer = informers.informer("", "v1", "nodes")
        self.queue: WorkQueue[str] = WorkQueue()
        self.recorder = EventRecorder(client, SCHEDULER)
        self.registrar = NodeRegistrar(client, self.managed, self.kubelet_stopped)
        self.scheduler = Scheduler(client, self.pod_informer, self.node_informer, self.recorder)
        self.kubelets = Kubelets(client, self.managed, self.queue, ready_delay=ready_delay, run_seconds=run_seconds,
                                 restart_backoff=restart_backoff)

    async def run(self) -> None:
        await self.registrar.register_all()
        self.pod_informer.add_handlers(Handlers(on_add=self._pod_added, on_update=self._pod_updated, on_delete=self._pod_deleted))
        self.node_informer.add_handlers(Handlers(on_add=self._node_changed, on_update=self._node_updated))
        self.informers.start()
        async with Workers(self.queue, self.recorder) as workers:
            await wait_synced(self.pod_informer, self.node_informer)
            workers.start(self.workers, self._sync, name="simulated nodes: pod", retryable=(NoAddressLeft,))
            while True:
                await asyncio.sleep(self.heartbeat)
                await self.registrar.heartbeat()

    def kubelet_stopped(self, name: str) -> bool:
        """Whether the kubelet of node ``name`` is stopped (the annotation of :mod:`.registrar`)."""
        node = self.node_informer.indexer.get(name)
        return node is not None and _stopped(node)

    # -- events to work ---------------------------------------------------------------------
    def _pod_added(self, pod: Obj) -> None:
        self.kubelets.seen(pod)
        self._enqueue(pod)

    def _pod_updated(self, old: Obj, pod: Obj) -> None:
        if own.spec(pod).get("nodeName"):
            self.scheduler.forget(own.uid(pod))
        self._enqueue(pod)

    def _pod_deleted(self, pod: Obj) -> None:
        uid = own.uid(pod)
        self.scheduler.forget(uid)
        self.kubelets.forget(uid)
        if own.spec(pod).get("nodeName"):
            self._enqueue_unscheduled()  # room on a node for a pod that did not fit

    def _node_changed(self, node: Obj) -> None:
        self._enqueue_unscheduled()
        if node["metadata"]["name"] in self.managed and not self.kubelet_stopped(node["metadata"]["name"]):
            for pod in self.scheduler.pods_on(node["metadata"]["name"]):
                self._enqueue(pod)  # a kubelet started again catches up

    def _node_updated(self, old: Obj, node: Obj) -> None:
        """A heartbeat changes no pod's lot: only a kubelet started again has pods to catch up on."""
        if _stopped(old) and not _stopped(node):
            self._node_changed(node)
        else:
            self._enqueue_unscheduled()

    def _enqueue_unscheduled(self) -> None:
        for pod in self.scheduler.unscheduled():
            self._enqueue(pod)

    def _enqueue(self, pod: Obj) -> None:
        node = own.spec(pod).get("nodeName")
        if node in self.managed and self.kubelet_stopped(node):
            return  # a stopped kubelet leaves its pods as they are
        if node in self.managed or (not node and wants_scheduling(pod)):
            self.queue.add(object_key(pod))

    async def _sync(self, key: str) -> None:
        pod = self.pod_informer.indexer.get(key)
        if pod is None:
            return
        node = own.spec(pod).get("nodeName")
        if pod["metadata"].get("deletionTimestamp"):
            if node in self.managed:
                await self.kubelets.terminate(pod, node)
            return
        if (pod.get("status") or {}).get("phase") in TERMINAL:
            self.kubelets.finished(own.uid(pod))
            return
        if not node:
            if wants_scheduling(pod) and not self.scheduler.binding(own.uid(pod)):
                await self.scheduler.schedule(pod)
        elif node in self.managed:
            await self.kubelets.run(key, pod, node)


def _stopped(node: Obj) -> bool:
    return (node["metadata"].get("annotations") or {}).get(KUBELET_ANNOTATION) == STOPPED
