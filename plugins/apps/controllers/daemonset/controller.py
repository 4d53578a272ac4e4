"""The daemon set controller: informers, expectations and one sync per DaemonSet.

A sync (``syncDaemonSet``) reads the DaemonSet, its nodes, pods and ControllerRevisions from the
informers' caches; makes sure the current template has its revision (:mod:`.revisions`); unless
creates or deletes it started earlier are still unseen (expectations), plans each node
(:mod:`.placement`) and carries the plan out, then, with nothing in flight, the rolling update
(:mod:`.rolling`); trims old revisions; and writes the status (:mod:`.status`) when it changed.
"""

from __future__ import annotations

import asyncio
import copy
import logging
import time
from collections import defaultdict
from typing import Any

import aiohttp

from kplane.api import (
    NORMAL, WARNING, ApiError, ControllerRefManager, EventRecorder, Handlers, ResourceClient, RESTClient,
    SharedInformerFactory, WorkQueue, Workers, involved_object, object_key, wait_synced,
)
from kplane.api import ownership as own
from kplane.plugins.apps.controllers.daemonset import placement, rolling, status as ds_status
from kplane.plugins.apps.controllers.daemonset.revisions import Revisions
from kplane.plugins.apps.controllers.history import HASH_LABEL
from kplane.plugins.apps.controllers.replicaset import Expectations, is_ready, slow_start
from kplane.plugins.apps.strategy import TEMPLATE_GENERATION

log = logging.getLogger(__name__)
Obj = dict[str, Any]

API_VERSION, KIND = "apps/v1", "DaemonSet"
COMPONENT = "daemonset-controller"
CONTROLLER_UID_INDEX = own.CONTROLLER_UID_INDEX
BURST_REPLICAS = 250  # the most pods one sync creates
FAILED_BACKOFF = (1.0, 900.0)  # first and longest wait before deleting another failed pod on a node


def _template_generation(ds: Obj) -> int | None:
    try:
        return int((ds["metadata"].get("annotations") or {})[TEMPLATE_GENERATION])
    except (KeyError, ValueError):
        return None


class DaemonSetController:
    def __init__(self, client: RESTClient, informers: SharedInformerFactory, *, workers: int = 2,
                 burst_replicas: int = BURST_REPLICAS) -> None:
        self.client = client
        self.informers = informers
        self.workers = workers
        self.burst_replicas = burst_replicas
        self.ds_informer = informers.informer("apps", "v1", "daemonsets")
        self.pod_informer = informers.informer("", "v1", "pods")
        self.node_informer = informers.informer("", "v1", "nodes")
        self.revision_informer = informers.informer("apps", "v1", "controllerrevisions")
        for informer in (self.pod_informer, self.revision_informer):
            own.index_by_controller(informer)
        self.queue: WorkQueue[str] = WorkQueue()
        self.expectations = Expectations()
        self.recorder = EventRecorder(client, COMPONENT)
        self._failed_backoff: dict[str, tuple[float, float]] = {}  # ds uid/node -> (delay, until)

    async def run(self) -> None:
        self.ds_informer.add_handlers(Handlers(on_add=self._enqueue, on_update=self._ds_updated, on_delete=self._ds_deleted))
        self.pod_informer.add_handlers(Handlers(on_add=self._pod_added, on_update=self._pod_updated, on_delete=self._pod_deleted))
        self.node_informer.add_handlers(Handlers(on_add=self._node_added, on_update=self._node_updated,
                                                 on_delete=lambda node: self._enqueue_all()))
        self.revision_informer.add_handlers(Handlers(on_add=self._revision_changed, on_update=lambda _, r: self._revision_changed(r),
                                                     on_delete=self._revision_changed))
        self.informers.start()
        async with Workers(self.queue, self.recorder) as workers:
            await wait_synced(self.ds_informer, self.pod_informer, self.node_informer, self.revision_informer)
            workers.start(self.workers, self._sync, name="daemonset")
            await workers.wait()

    # -- events to work ---------------------------------------------------------------------
    def _enqueue(self, ds: Obj) -> None:
        self.queue.add(object_key(ds))

    def _enqueue_all(self) -> None:
        for ds in self.ds_informer.indexer.list():
            self._enqueue(ds)

    def _ds_updated(self, old: Obj, ds: Obj) -> None:
        if own.uid(old) != own.uid(ds):
            self._ds_deleted(old)
        self._enqueue(ds)

    def _ds_deleted(self, ds: Obj) -> None:
        self.expectations.forget(object_key(ds))
        self._enqueue(ds)

    def _pod_added(self, pod: Obj) -> None:
        if pod["metadata"].get("deletionTimestamp"):
            self._pod_deleted(pod)
            return
        owners = own.owners_of(self.ds_informer, pod, group="apps", kind=KIND)
        if owners.current is not None:
            self.expectations.creation_observed(object_key(owners.current))
        for ds in owners:
            self._enqueue(ds)

    def _pod_updated(self, old: Obj, pod: Obj) -> None:
        if pod["metadata"].get("deletionTimestamp"):
            self._pod_deleted(pod)  # its deletion is seen: the sync need not wait for it to go
            return
        owners = own.owners_of_update(self.ds_informer, old, pod, group="apps", kind=KIND)
        for ds in owners:
            self._enqueue(ds)
        ds = owners.current
        if ds is not None:
            min_ready = int(own.spec(ds).get("minReadySeconds") or 0)
            if min_ready and not is_ready(old) and is_ready(pod):
                self.queue.add_after(object_key(ds), min_ready + 1)  # to count it available then

    def _pod_deleted(self, pod: Obj) -> None:
        ds = own.controller_of(self.ds_informer, pod, group="apps", kind=KIND)
        if ds is not None:
            self.expectations.deletion_observed(object_key(ds), object_key(pod))
            self._enqueue(ds)

    def _node_added(self, node: Obj) -> None:
        for ds in self.ds_informer.indexer.list():
            if placement.should_run(node, placement.candidate(ds))[0]:
                self._enqueue(ds)

    def _node_updated(self, old: Obj, node: Obj) -> None:
        """Only what decides placement matters (labels, taints, the spec): heartbeats do not."""
        if old["metadata"].get("labels") == node["metadata"].get("labels") and own.spec(old) == own.spec(node):
            return
        for ds in self.ds_informer.indexer.list():
            pod = placement.candidate(ds)
            if placement.should_run(old, pod) != placement.should_run(node, pod):
                self._enqueue(ds)

    def _revision_changed(self, revision: Obj) -> None:
        ds = own.controller_of(self.ds_informer, revision, group="apps", kind=KIND)
        if ds is not None:
            self._enqueue(ds)

    # -- sync -------------------------------------------------------------------------------
    async def _sync(self, key: str) -> None:
        ds = self.ds_informer.indexer.get(key)
        if ds is None:
            self.expectations.forget(key)
            return
        if ds["metadata"].get("deletionTimestamp"):
            return  # its pods go with it (the garbage collector)
        selector = own.selector(ds)
        if selector is None:
            self.recorder.event(involved_object(ds, API_VERSION, KIND), WARNING, "SelectingAll",
                                "This daemon set is selecting all pods. A non-empty selector is required.")
            return
        revisions = Revisions(self._client("apps", "controllerrevisions", ds), self._client("apps", "daemonsets", ds),
                              self.revision_informer, ds, selector)
        current, old, collision_count = await revisions.construct()
        hash_ = (current["metadata"].get("labels") or {}).get(HASH_LABEL, "")
        nodes = self.node_informer.indexer.list()
        pods = await self._claim(ds, selector)
        node_pods = self._by_node(pods)
        candidate = placement.candidate(ds)
        now = time.time()
        if self.expectations.satisfied(key):
            changed = await self._manage(ds, nodes, node_pods, candidate, hash_, now)
            if not changed and self.expectations.satisfied(key) and (own.spec(ds).get("updateStrategy") or {}).get("type") == "RollingUpdate":
                wanted = {n["metadata"]["name"]: node_pods.get(n["metadata"]["name"], []) for n in nodes
                          if placement.should_run(n, candidate)[0]}
                delete, surge_on = rolling.plan_update(ds, wanted, hash_, now)
                await self._carry_out(ds, surge_on, delete, hash_)
        live_hashes = {(p["metadata"].get("labels") or {}).get(HASH_LABEL) for p in pods}
        await revisions.truncate(old, live_hashes)
        status = ds_status.calculate(ds, nodes, node_pods, lambda node: placement.should_run(node, candidate), hash_=hash_,
                                     template_generation=_template_generation(ds), collision_count=collision_count, now=now)
        await self._update_status(ds, status)
        min_ready = int(own.spec(ds).get("minReadySeconds") or 0)
        if min_ready and status["numberReady"] != status["numberAvailable"]:
            self.queue.add_after(key, min_ready)

    async def _claim(self, ds: Obj, selector: Any) -> list[Obj]:
        """Its pods once orphans are adopted and strays released; finished pods being deleted left out."""
        owned = self.pod_informer.indexer.by_index(CONTROLLER_UID_INDEX, own.uid(ds))
        selected = self.pod_informer.lister().namespaced(ds["metadata"]["namespace"]).list(selector)
        unique = {object_key(p): p for p in [*owned, *selected]}
        manager = ControllerRefManager(ds, selector, api_version=API_VERSION, kind=KIND,
                                       controllers=self._client("apps", "daemonsets", ds), dependents=self._client("", "pods", ds))
        claimed = await manager.claim(unique.values())
        return [p for p in claimed if not (p["metadata"].get("deletionTimestamp")
                                           and (p.get("status") or {}).get("phase") in ("Succeeded", "Failed"))]

    @staticmethod
    def _by_node(pods: list[Obj]) -> dict[str, list[Obj]]:
        node_pods: dict[str, list[Obj]] = defaultdict(list)
        for pod in pods:
            node = placement.target_node(pod)
            if node:
                node_pods[node].append(pod)
            else:
                log.warning("daemon pod %s names no node; left alone", object_key(pod))
        return dict(node_pods)

    async def _manage(self, ds: Obj, nodes: list[Obj], node_pods: dict[str, list[Obj]], candidate: Obj, hash_: str,
                      now: float) -> bool:
        """Pods for nodes without one, none where they must not run (``manage``); True when it
        created or deleted anything."""
        plan = placement.NodePlan()
        surge = rolling.allows_surge(ds)
        min_ready = int(own.spec(ds).get("minReadySeconds") or 0)
        names = set()
        for node in nodes:
            name = node["metadata"]["name"]
            names.add(name)
            placement.plan_node(plan, node, node_pods.get(name), placement.should_run(node, candidate), hash_=hash_,
                                surge=surge, min_ready_seconds=min_ready, now=now)
        for name, pods in node_pods.items():  # not bound yet, for a node that is gone
            if name not in names:
                plan.delete.extend(p for p in pods if not own.spec(p).get("nodeName") and not p["metadata"].get("deletionTimestamp"))
        plan.delete.extend(self._failed_to_delete(ds, plan.failed))
        await self._carry_out(ds, plan.create_on, plan.delete, hash_)
        return bool(plan.create_on or plan.delete)

    def _failed_to_delete(self, ds: Obj, failed: list[tuple[Obj, str]]) -> list[Obj]:
        """Failed pods to replace, one node at a time with a doubling back-off, so a kubelet that
        keeps rejecting the pod is not fought in a hot loop."""
        doomed = []
        loop_now = time.monotonic()
        for pod, node in failed:
            backoff_key = f"{own.uid(ds)}/{node}"
            delay, until = self._failed_backoff.get(backoff_key, (0.0, 0.0))
            if loop_now < until:
                self.queue.add_after(object_key(ds), until - loop_now)
                continue
            delay = min(max(delay * 2, FAILED_BACKOFF[0]), FAILED_BACKOFF[1])
            self._failed_backoff[backoff_key] = (delay, loop_now + delay)
            meta = pod["metadata"]
            self.recorder.event(involved_object(ds, API_VERSION, KIND), WARNING, "FailedDaemonPod",
                                f"Found failed daemon pod {meta['namespace']}/{meta['name']} on node {node}, will try to kill it")
            doomed.append(pod)
        return doomed

    async def _carry_out(self, ds: Obj, create_on: list[str], delete: list[Obj], hash_: str) -> None:
        """``syncNodes``: create on ``create_on`` (at most ``burst_replicas``, in slow-start batches)
        and delete ``delete``, each expected before it is sent."""
        if not create_on and not delete:
            return
        key = object_key(ds)
        create_on = create_on[:self.burst_replicas]
        self.expectations.expect(key, creates=len(create_on), deletes=[object_key(p) for p in delete])
        template = self._pod_template(ds, hash_)
        nodes = iter(create_on)
        created, failure = await slow_start(len(create_on), lambda: self._create_pod(ds, template, next(nodes)))
        if len(create_on) > created:
            self.expectations.creation_observed(key, len(create_on) - created)
        results = await asyncio.gather(*(self._delete_pod(ds, pod) for pod in delete), return_exceptions=True)
        for result in results:
            if isinstance(result, BaseException):
                raise result
        if failure is not None:
            raise failure

    def _pod_template(self, ds: Obj, hash_: str) -> Obj:
        """``CreatePodTemplate``: the template with the daemon tolerations and the revision labels."""
        template = copy.deepcopy(own.spec(ds).get("template") or {})
        spec = template.setdefault("spec", {})
        placement.with_default_tolerations(spec)
        labels = dict((template.get("metadata") or {}).get("labels") or {})
        generation = _template_generation(ds)
        if generation is not None:
            labels[placement.TEMPLATE_GENERATION_LABEL] = str(generation)
        if hash_:
            labels[HASH_LABEL] = hash_
        template.setdefault("metadata", {})["labels"] = labels
        return template

    async def _create_pod(self, ds: Obj, template: Obj, node: str) -> None:
        meta: Obj = {"generateName": f"{ds['metadata']['name']}-", "ownerReferences": [own.controller_reference(ds, API_VERSION, KIND)]}
        for field in ("labels", "annotations", "finalizers"):
            if (template.get("metadata") or {}).get(field):
                meta[field] = copy.deepcopy(template["metadata"][field])
        spec = copy.deepcopy(template.get("spec") or {})
        placement.pin_to_node(spec, node)
        try:
            pod = await self._client("", "pods", ds).create({"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec})
        except ApiError as err:
            if err.namespace_terminating:
                self.expectations.creation_observed(object_key(ds))
                return
            self.recorder.event(involved_object(ds, API_VERSION, KIND), WARNING, "FailedCreate", f"Error creating: {_message(err)}")
            raise
        self.recorder.event(involved_object(ds, API_VERSION, KIND), NORMAL, "SuccessfulCreate", f"Created pod: {pod['metadata']['name']}")

    async def _delete_pod(self, ds: Obj, pod: Obj) -> None:
        name = pod["metadata"]["name"]
        try:
            await self._client("", "pods", ds).delete(name)
        except (ApiError, aiohttp.ClientError) as err:
            self.expectations.deletion_observed(object_key(ds), object_key(pod))
            if isinstance(err, ApiError) and err.code == 404:
                return
            self.recorder.event(involved_object(ds, API_VERSION, KIND), WARNING, "FailedDelete", f"Error deleting: {_message(err)}")
            raise
        self.recorder.event(involved_object(ds, API_VERSION, KIND), NORMAL, "SuccessfulDelete", f"Deleted pod: {name}")

    async def _update_status(self, ds: Obj, status: Obj) -> None:
        """Write ``status`` if it differs from the stored one; after a 409, once more on a fresh read."""
        current = ds
        for attempt in range(2):
            if not ds_status.differs(current.get("status") or {}, status):
                return
            try:
                await self._client("apps", "daemonsets", ds).update_status({**current, "status": status})
                return
            except ApiError as err:
                if err.code == 404:
                    return
                if err.code != 409 or attempt == 1:
                    raise
            current = await self._client("apps", "daemonsets", ds).get(ds["metadata"]["name"])

    def _client(self, group: str, plural: str, ds: Obj) -> ResourceClient:
        return self.client.resource(group, "v1", plural, ds["metadata"]["namespace"])


def _message(err: ApiError | aiohttp.ClientError) -> str:
    return str(err.status.get("message") or err) if isinstance(err, ApiError) else str(err)
