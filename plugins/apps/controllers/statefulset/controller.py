"""The StatefulSet controller itself (``stateful_set.go``): informer events to work queue keys,
and the sync of one StatefulSet, which claims its pods and revisions, takes one step
(:mod:`.control`), writes the status and trims the revision history.

Unlike the ReplicaSet controller it keeps no expectations: its pods have fixed names, so a
create the cache does not show yet answers AlreadyExists and is taken as done.
"""

from __future__ import annotations

import copy
import logging

from kplane.api import (
    ControllerRefManager, EventRecorder, Handlers, LabelSelectorExpr, RESTClient, ResourceClient, SharedInformerFactory,
    WorkQueue, Workers, object_key, ownership as own, wait_synced,
)
from kplane.plugins.apps.controllers.history import History
from kplane.plugins.apps.controllers.statefulset import identity as ident
from kplane.plugins.apps.controllers.statefulset.control import (
    StatefulSetControl, complete_rolling_update, revisions_of, write_status,
)
from kplane.plugins.apps.controllers.statefulset.identity import API_VERSION, KIND, Obj
from kplane.plugins.apps.controllers.statefulset.pods import PodControl, StaleClaim

log = logging.getLogger(__name__)

COMPONENT = "statefulset-controller"


class StatefulSetController:
    def __init__(self, client: RESTClient, informers: SharedInformerFactory, *, workers: int = 5) -> None:
        self.client = client
        self.informers = informers
        self.workers = workers
        self.sets = informers.informer("apps", "v1", "statefulsets")
        self.pods = informers.informer("", "v1", "pods")
        self.revisions = informers.informer("apps", "v1", "controllerrevisions")
        self.claims = informers.informer("", "v1", "persistentvolumeclaims")
        self.by_controller = own.index_by_controller(self.pods)
        self.queue: WorkQueue[str] = WorkQueue()
        self.recorder = EventRecorder(client, COMPONENT)
        self.pod_control = PodControl(client, self.claims, self.recorder)
        self.control = StatefulSetControl(self.pod_control)

    async def run(self) -> None:
        self.sets.add_handlers(Handlers.for_any(self._enqueue))
        self.pods.add_handlers(Handlers(on_add=self._pod_added, on_update=self._pod_updated, on_delete=self._pod_deleted))
        self.informers.start()
        async with Workers(self.queue, self.recorder) as workers:
            await wait_synced(self.sets, self.pods, self.revisions, self.claims)
            workers.start(self.workers, self.sync, name="statefulset", retryable=(StaleClaim,))
            await workers.wait()

    # -- events to work ---------------------------------------------------------------------
    def _enqueue(self, sts: Obj) -> None:
        self.queue.add(object_key(sts))

    def _pod_added(self, pod: Obj) -> None:
        if pod["metadata"].get("deletionTimestamp"):
            self._pod_deleted(pod)
            return
        for sts in own.owners_of(self.sets, pod, group="apps", kind=KIND):
            self._enqueue(sts)

    def _pod_updated(self, old: Obj, pod: Obj) -> None:
        if old["metadata"].get("resourceVersion") == pod["metadata"].get("resourceVersion"):
            return
        owners = own.owners_of_update(self.sets, old, pod, group="apps", kind=KIND)
        for sts in owners:
            self._enqueue(sts)
        sts = owners.current
        min_ready = int(own.spec(sts).get("minReadySeconds") or 0) if sts is not None else 0
        if sts is not None and min_ready and not ident.is_running_and_ready(old) and ident.is_running_and_ready(pod):
            self.queue.add_after(object_key(sts), min_ready + 1)  # to count it available then

    def _pod_deleted(self, pod: Obj) -> None:
        sts = own.controller_of(self.sets, pod, group="apps", kind=KIND)
        if sts is not None:
            self._enqueue(sts)

    # -- sync -------------------------------------------------------------------------------
    async def sync(self, key: str) -> None:
        cached = self.sets.indexer.get(key)
        if cached is None:
            return
        sts = copy.deepcopy(cached)
        selector = own.selector(sts)
        if selector is None:
            log.warning("statefulset %s: its selector selects nothing; ignored", key)
            return
        namespace = sts["metadata"]["namespace"]
        revisions = await self._claim(sts, selector, self.revisions.lister().namespaced(namespace).list(selector),
                                      self._resource("apps", "controllerrevisions", namespace))
        pods = await self._claim(sts, selector, self._candidate_pods(sts, selector), self._resource("", "pods", namespace))
        history = History(self._resource("apps", "controllerrevisions", namespace))
        chosen = await revisions_of(sts, revisions, history)
        status = await self.control.update(sts, pods, chosen)
        complete_rolling_update(sts, status)
        await write_status(self._resource("apps", "statefulsets", namespace), sts, status, lambda: self.sets.indexer.get(key))
        live = {ident.revision_of(p) for p in pods} | {chosen.current["metadata"]["name"], chosen.update["metadata"]["name"]}
        await history.truncate(revisions, live, int(own.spec(sts).get("revisionHistoryLimit") or 0))
        min_ready = int(own.spec(sts).get("minReadySeconds") or 0)
        if min_ready and status["readyReplicas"] != status["availableReplicas"]:
            self.queue.add_after(key, min_ready)  # a look once they should be available

    def _candidate_pods(self, sts: Obj, selector: LabelSelectorExpr) -> list[Obj]:
        """Its pods (even those that stopped matching) and the pods it selects whose names make them its own."""
        owned = self.pods.indexer.by_index(self.by_controller, own.uid(sts))
        selected = self.pods.lister().namespaced(sts["metadata"]["namespace"]).list(selector)
        unique = {object_key(p): p for p in [*owned, *selected]}
        return [p for p in unique.values() if ident.is_member(sts, p)]

    async def _claim(self, sts: Obj, selector: LabelSelectorExpr, candidates: list[Obj], dependents: ResourceClient) -> list[Obj]:
        manager = ControllerRefManager(sts, selector, api_version=API_VERSION, kind=KIND,
                                       controllers=self._resource("apps", "statefulsets", sts["metadata"]["namespace"]),
                                       dependents=dependents)
        return await manager.claim(candidates)

    def _resource(self, group: str, plural: str, namespace: str) -> ResourceClient:
        return self.client.resource(group, "v1", plural, namespace)
