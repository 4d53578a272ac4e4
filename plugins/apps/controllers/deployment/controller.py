"""The Deployment controller itself (``deployment_controller.go``): informer events to work
queue keys, and the sync of one Deployment, which claims its ReplicaSets and picks the step."""

from __future__ import annotations

import copy
import logging

from kplane.api import (
    ControllerRefManager, EventRecorder, Handlers, LabelSelectorExpr, OwnWrites, RESTClient, SharedInformerFactory, WorkQueue,
    Workers, object_key, ownership as own, wait_synced,
)
from kplane.plugins.apps.controllers.deployment.objects import API_VERSION, KIND, Obj, is_recreate
from kplane.plugins.apps.controllers.deployment.recreate import Recreate
from kplane.plugins.apps.controllers.deployment.rolling import RollingUpdate
from kplane.plugins.apps.controllers.deployment.scaling import is_scaling_event
from kplane.plugins.apps.controllers.deployment.sync import RetryLater

log = logging.getLogger(__name__)

COMPONENT = "deployment-controller"
MAX_RETRIES = 15  # failed syncs of one key before it is dropped until its next change


class DeploymentController(RollingUpdate, Recreate):
    def __init__(self, client: RESTClient, informers: SharedInformerFactory, *, workers: int = 5) -> None:
        self.client = client
        self.informers = informers
        self.workers = workers
        self.deployments = informers.informer("apps", "v1", "deployments")
        self.replica_sets = informers.informer("apps", "v1", "replicasets")
        own.index_by_controller(self.replica_sets)
        self.pods = informers.informer("", "v1", "pods")
        self.queue: WorkQueue[str] = WorkQueue()
        self.recorder = EventRecorder(client, COMPONENT)
        self.own_writes = OwnWrites()  # status replies the informer has not shown yet

    async def run(self) -> None:
        self.deployments.add_handlers(Handlers.for_any(self._enqueue))
        self.replica_sets.add_handlers(Handlers(on_add=self._rs_added, on_update=self._rs_updated, on_delete=self._rs_deleted))
        self.pods.add_handlers(Handlers(on_delete=self._pod_deleted))
        self.informers.start()
        async with Workers(self.queue, self.recorder) as workers:
            await wait_synced(self.deployments, self.replica_sets, self.pods)
            workers.start(self.workers, self.sync, name="deployment", retryable=(RetryLater,), max_retries=MAX_RETRIES)
            await workers.wait()

    # -- events to work ---------------------------------------------------------------------
    def _enqueue(self, d: Obj) -> None:
        self.queue.add(object_key(d))

    def _rs_added(self, rs: Obj) -> None:
        if rs["metadata"].get("deletionTimestamp"):
            self._rs_deleted(rs)  # seen after a restart while being deleted
            return
        for d in own.owners_of(self.deployments, rs, group="apps", kind=KIND):
            self._enqueue(d)

    def _rs_updated(self, old: Obj, rs: Obj) -> None:
        if old["metadata"].get("resourceVersion") == rs["metadata"].get("resourceVersion"):
            return  # a resync: the Deployments resync themselves
        for d in own.owners_of_update(self.deployments, old, rs, group="apps", kind=KIND):
            self._enqueue(d)

    def _rs_deleted(self, rs: Obj) -> None:
        d = own.controller_of(self.deployments, rs, group="apps", kind=KIND)
        if d is not None:
            self._enqueue(d)

    def _pod_deleted(self, pod: Obj) -> None:
        """A Recreate rollout waits for the old pods to be gone: look again when one goes."""
        ref = own.controller_ref(pod)
        if ref is None or ref.get("kind") != "ReplicaSet":
            return
        rs = self.replica_sets.indexer.get(f"{pod['metadata'].get('namespace')}/{ref.get('name')}")
        if rs is None or own.uid(rs) != ref.get("uid"):
            return
        d = own.controller_of(self.deployments, rs, group="apps", kind=KIND)
        if d is not None and is_recreate(d):
            self._enqueue(d)

    # -- sync -------------------------------------------------------------------------------
    async def sync(self, key: str) -> None:
        """Reconcile one Deployment (``syncDeployment``); raises to be retried."""
        cached = self.deployments.indexer.get(key)
        if cached is None:
            self.own_writes.forget(key)
            return
        d = copy.deepcopy(self.own_writes.newest(key, cached))  # synced objects are refreshed in place from write replies
        selector = own.selector(d)
        if selector is None:
            log.warning("deployment %s: its selector selects nothing; ignored", key)
            return
        rs_list = [copy.deepcopy(rs) for rs in await self._claim_replica_sets(d, selector)]
        if d["metadata"].get("deletionTimestamp"):
            new_rs, old_rss = await self._find_replica_sets(d, rs_list)
            await self._sync_status(d, new_rs, old_rss)
            return
        await self._check_paused_conditions(d)
        new_rs, old_rss = await self._find_replica_sets(d, rs_list)
        if own.spec(d).get("paused") or is_scaling_event(d, new_rs, old_rss):
            await self._sync_scaling(d, new_rs, old_rss)
        elif is_recreate(d):
            await self._rollout_recreate(d, new_rs, old_rss, self._pods_by_owner(d, selector, rs_list))
        else:
            await self._rollout_rolling(d, new_rs, old_rss)

    async def _claim_replica_sets(self, d: Obj, selector: LabelSelectorExpr) -> list[Obj]:
        """The ReplicaSets this Deployment controls once orphans are adopted and strays released
        (``getReplicaSetsForDeployment``)."""
        manager = ControllerRefManager(d, selector, api_version=API_VERSION, kind=KIND,
                                       controllers=self._deployment_client(d), dependents=self._rs_client(d))
        return await manager.claim(own.claim_candidates(self.replica_sets, d, selector))

    def _pods_by_owner(self, d: Obj, selector: LabelSelectorExpr, rs_list: list[Obj]) -> dict[str, list[Obj]]:
        """The Deployment's pods by the uid of the ReplicaSet controlling them, terminating ones included."""
        by_owner: dict[str, list[Obj]] = {own.uid(rs): [] for rs in rs_list}
        for pod in self.pods.lister().namespaced(d["metadata"]["namespace"]).list(selector):
            ref = own.controller_ref(pod)
            if ref is not None and ref.get("uid") in by_owner:
                by_owner[ref["uid"]].append(pod)
        return by_owner
