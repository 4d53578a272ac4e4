"""The scheduler: a Pending pod without ``spec.nodeName`` (and for ``default-scheduler``) is
bound, through ``pods/binding``, to the fitting Node (:mod:`.predicates`) with the fewest pods;
a pod no Node fits is marked Unschedulable, with a FailedScheduling event saying why."""

from __future__ import annotations

from collections import Counter
from typing import Any

from kplane.api import NORMAL, WARNING, ApiError, EventRecorder, Informer, RESTClient
from kplane.api import ownership as own
from kplane.plugins.core.controllers.nodes.pod_status import TERMINAL, unschedulable_status
from kplane.plugins.core.controllers.nodes.predicates import misfit
from kplane.plugins.core.controllers.nodes.status_writer import write_status

Obj = dict[str, Any]

SCHEDULER = "default-scheduler"
NODE_NAME_INDEX = "spec.nodeName"
ACTIVE_ON_NODE_INDEX = "active.spec.nodeName"  # the pods a node counts against its room: bound, not finished


def wants_scheduling(pod: Obj) -> bool:
    """Ours to schedule: pending, for the default scheduler, and not held by scheduling gates."""
    spec = own.spec(pod)
    return ((spec.get("schedulerName") or SCHEDULER) == SCHEDULER and not spec.get("schedulingGates")
            and (pod.get("status") or {}).get("phase") not in TERMINAL and not pod["metadata"].get("deletionTimestamp"))


class Scheduler:
    """Binds pods to Nodes from the informers' caches; a pod bound but not yet seen bound by the
    pod informer counts on its node already, so that a burst of pods spreads."""

    def __init__(self, client: RESTClient, pods: Informer, nodes: Informer, recorder: EventRecorder) -> None:
        self.client = client
        self.pods = pods
        self.nodes = nodes
        self.recorder = recorder
        self.pods.indexer.add_indexer(NODE_NAME_INDEX, lambda pod: [own.spec(pod).get("nodeName") or ""])
        self.pods.indexer.add_indexer(ACTIVE_ON_NODE_INDEX, _active_on_node)
        self._binding: dict[str, str] = {}  # pod uid -> node: bound, not yet seen bound by the informer

    def unscheduled(self) -> list[Obj]:
        """The cached pods without a node."""
        return self.pods.indexer.by_index(NODE_NAME_INDEX, "")

    def pods_on(self, node: str) -> list[Obj]:
        """The cached pods bound to ``node``."""
        return self.pods.indexer.by_index(NODE_NAME_INDEX, node)

    def binding(self, uid: str) -> bool:
        """Whether the pod is being bound (and must not be scheduled twice)."""
        return uid in self._binding

    def forget(self, uid: str) -> None:
        """The pod was seen bound, or is gone: its node's count comes from the cache again."""
        self._binding.pop(uid, None)

    async def schedule(self, pod: Obj) -> None:
        meta = pod["metadata"]
        node, why = self._pick_node(pod)
        if node is None:
            if await write_status(self.client, pod, lambda p: unschedulable_status(p, why)):
                self.recorder.event(_pod_ref(pod), WARNING, "FailedScheduling", why)
            return
        self._binding[meta["uid"]] = node  # counted on the node from now on
        binding = {"apiVersion": "v1", "kind": "Binding", "metadata": {"name": meta["name"], "namespace": meta["namespace"], "uid": meta["uid"]},
                   "target": {"apiVersion": "v1", "kind": "Node", "name": node}}
        try:
            await self.client.request("POST", f"/api/v1/namespaces/{meta['namespace']}/pods/{meta['name']}/binding", binding)
        except ApiError as err:
            self._binding.pop(meta["uid"], None)
            if err.code in (404, 409):
                return  # gone, or bound meanwhile: the informer brings what happened
            raise
        self.recorder.event(_pod_ref(pod), NORMAL, "Scheduled", f"Successfully assigned {meta['namespace']}/{meta['name']} to {node}")

    def _pick_node(self, pod: Obj) -> tuple[str | None, str]:
        """The fitting node with the fewest pods (by name on ties), or None and why none fits."""
        nodes = self.nodes.indexer.list()
        misfits: Counter[str] = Counter()
        fitting: list[tuple[int, str]] = []
        binding = Counter(self._binding.values())
        for node in nodes:
            name = node["metadata"]["name"]
            pods = self.pods.indexer.count(ACTIVE_ON_NODE_INDEX, name) + binding[name]
            why = misfit(node, pod, pods)
            if why:
                misfits[why] += 1
            else:
                fitting.append((pods, name))
        if fitting:
            return min(fitting)[1], ""
        reasons = ", ".join(f"{n} {why}" for why, n in sorted(misfits.items()))
        return None, f"0/{len(nodes)} nodes are available: {reasons}." if reasons else "no nodes available to schedule pods"



def _active_on_node(pod: Obj) -> list[str]:
    node = own.spec(pod).get("nodeName")
    return [node] if node and (pod.get("status") or {}).get("phase") not in TERMINAL else []


def _pod_ref(pod: Obj) -> Obj:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": pod["metadata"]}
