"""The ReplicaSet controller (kube-controller-manager's ``pkg/controller/replicaset``), which is
also the replication controller (``pkg/controller/replication``: kube runs this same code over
ReplicationControllers, whose selector is a map of labels): :data:`REPLICA_SET` and
:data:`REPLICATION_CONTROLLER` say which kind an instance keeps.

It keeps ``spec.replicas`` active pods matching each ReplicaSet's selector, and reports what it
sees in the ReplicaSet's status. A sync of one ReplicaSet:

1. lists its candidate pods from the informer cache: those it controls (an index on the controller
   ownerReference's uid) and the orphans its selector matches, leaving out pods being deleted and
   pods that finished (Succeeded or Failed);
2. claims them: adopts matching orphans (it becomes their controller) and releases the pods it
   controls that no longer match, each by a merge patch guarded by the pod's resourceVersion;
3. creates the missing pods from the template in slow-start batches (1, 2, 4, ...; a failure stops
   the rest), or deletes the surplus, not-ready, unscheduled and newest first;
4. writes ``status`` when it changed: replicas, fullyLabeledReplicas, readyReplicas,
   availableReplicas (Ready for at least minReadySeconds), observedGeneration and the
   ReplicaFailure condition while creating or deleting fails.

**Expectations** make step 3 safe with a cache that lags: the creates and deletes a sync starts
are recorded, and later syncs skip step 3 until the informer has shown every one of them (or
``expectations_timeout`` passed), so a burst of events never creates a pod twice.
"""

from __future__ import annotations

import asyncio
import copy
import logging
import time
from collections import Counter
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import aiohttp

from kplane.api import (
    NORMAL, WARNING, ApiError, ControllerRefManager, EventRecorder, Handlers, LabelSelectorExpr, ResourceClient,
    RESTClient, SharedInformerFactory, WorkQueue, Workers, clock, get_condition, involved_object, new_condition, object_key,
    ownership as own, remove_condition, replace_condition, spec_replicas, wait_synced,
)

log = logging.getLogger(__name__)
Obj = dict[str, Any]



@dataclass(frozen=True, slots=True)
class Managed:
    """The kind a controller instance keeps pods for, and the component its events name."""

    group: str
    version: str
    plural: str
    kind: str
    component: str

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version


REPLICA_SET = Managed("apps", "v1", "replicasets", "ReplicaSet", "replicaset-controller")
REPLICATION_CONTROLLER = Managed("", "v1", "replicationcontrollers", "ReplicationController", "replication-controller")
CONTROLLER_UID_INDEX = own.CONTROLLER_UID_INDEX
BURST_REPLICAS = 500  # the most pods one sync creates or deletes
EXPECTATIONS_TIMEOUT = 300.0
TERMINAL = ("Succeeded", "Failed")
REPLICA_FAILURE = "ReplicaFailure"
PHASE_ORDER = {"Pending": 0, "Unknown": 1, "Running": 2}  # earlier phases are deleted first


@dataclass(slots=True)
class _Expected:
    creates: int
    deletes: set[str] = field(default_factory=set)  # namespace/name of pods
    since: float = 0.0


class Expectations:
    """Creates and deletes in flight per ReplicaSet key (client-go's UIDTrackingControllerExpectations)."""

    def __init__(self, timeout: float = EXPECTATIONS_TIMEOUT, clock: Callable[[], float] = time.monotonic) -> None:
        self.timeout = timeout
        self._clock = clock
        self._expected: dict[str, _Expected] = {}

    def expect(self, key: str, *, creates: int = 0, deletes: Iterable[str] = ()) -> None:
        """What the sync of ``key`` is about to do (it replaces what was expected before)."""
        self._expected[key] = _Expected(creates, set(deletes), self._clock())

    def creation_observed(self, key: str, count: int = 1) -> None:
        """The informer showed a pod created for ``key``; also called for creates that never happened."""
        if key in self._expected:
            self._expected[key].creates -= count

    def deletion_observed(self, key: str, pod_key: str) -> None:
        if key in self._expected:
            self._expected[key].deletes.discard(pod_key)

    def satisfied(self, key: str) -> bool:
        """True when nothing is in flight for ``key``, or the expectations are too old to trust."""
        expected = self._expected.get(key)
        if expected is None or (expected.creates <= 0 and not expected.deletes):
            return True
        return self._clock() - expected.since > self.timeout

    def forget(self, key: str) -> None:
        self._expected.pop(key, None)


class ReplicaSetController:
    def __init__(self, client: RESTClient, informers: SharedInformerFactory, *, workers: int = 5,
                 burst_replicas: int = BURST_REPLICAS, expectations_timeout: float = EXPECTATIONS_TIMEOUT,
                 managed: Managed = REPLICA_SET) -> None:
        self.managed = managed
        self.client = client
        self.informers = informers
        self.workers = workers
        self.burst_replicas = burst_replicas
        self.rs_informer = informers.informer(managed.group, managed.version, managed.plural)
        self.pod_informer = informers.informer("", "v1", "pods")
        own.index_by_controller(self.pod_informer)
        own.index_orphans(self.pod_informer)
        self.queue: WorkQueue[str] = WorkQueue()
        self.expectations = Expectations(expectations_timeout)
        self.recorder = EventRecorder(client, managed.component)

    async def run(self) -> None:
        self.rs_informer.add_handlers(Handlers(on_add=self._enqueue, on_update=self._rs_updated, on_delete=self._rs_deleted))
        self.pod_informer.add_handlers(Handlers(on_add=self._pod_added, on_update=self._pod_updated, on_delete=self._pod_deleted))
        self.informers.start()
        async with Workers(self.queue, self.recorder) as workers:
            await wait_synced(self.rs_informer, self.pod_informer)
            workers.start(self.workers, self._sync, name=self.managed.plural)
            await workers.wait()

    # -- events to work ---------------------------------------------------------------------
    def _enqueue(self, rs: Obj) -> None:
        self.queue.add(object_key(rs))

    def _rs_updated(self, old: Obj, rs: Obj) -> None:
        if own.uid(old) != own.uid(rs):
            self._rs_deleted(old)  # deleted and created again between two events
        self._enqueue(rs)

    def _rs_deleted(self, rs: Obj) -> None:
        self.expectations.forget(object_key(rs))  # a new ReplicaSet by this name starts clean
        self._enqueue(rs)

    def _pod_added(self, pod: Obj) -> None:
        if pod["metadata"].get("deletionTimestamp"):
            self._pod_deleted(pod)  # seen after a restart while being deleted: not a creation
            return
        owners = own.owners_of(self.rs_informer, pod, group=self.managed.group, kind=self.managed.kind)
        if owners.current is not None:
            self.expectations.creation_observed(object_key(owners.current))
        for rs in owners:
            self._enqueue(rs)

    def _pod_updated(self, old: Obj, pod: Obj) -> None:
        labels_changed = old["metadata"].get("labels") != pod["metadata"].get("labels")
        if pod["metadata"].get("deletionTimestamp"):
            self._pod_deleted(pod)  # replace it now, without waiting for it to go
            if labels_changed:
                self._pod_deleted(old)
            return
        owners = own.owners_of_update(self.rs_informer, old, pod, group=self.managed.group, kind=self.managed.kind)
        for rs in owners:
            self._enqueue(rs)
        rs = owners.current
        if rs is not None:
            min_ready = own.spec(rs).get("minReadySeconds") or 0
            if min_ready and not is_ready(old) and is_ready(pod):
                self.queue.add_after(object_key(rs), min_ready + 1)  # to count it available then

    def _pod_deleted(self, pod: Obj) -> None:
        rs = own.controller_of(self.rs_informer, pod, group=self.managed.group, kind=self.managed.kind)
        if rs is not None:
            self.expectations.deletion_observed(object_key(rs), object_key(pod))
            self._enqueue(rs)


    # -- sync -------------------------------------------------------------------------------
    async def _sync(self, key: str) -> None:
        rs = self.rs_informer.indexer.get(key)
        if rs is None:
            self.expectations.forget(key)
            return
        needs_sync = self.expectations.satisfied(key)
        selector = own.selector(rs)
        if selector is None:
            log.warning("%s %s: its selector selects nothing; ignored", self.managed.kind, key)
            return
        pods = await self._claim(rs, selector, self._candidates(rs, selector))
        failure: ApiError | aiohttp.ClientError | None = None
        if needs_sync and not rs["metadata"].get("deletionTimestamp"):
            try:
                await self._manage(rs, pods)
            except (ApiError, aiohttp.ClientError) as err:
                failure = err
        status = await self._update_status(rs, _calculate_status(rs, pods, failure))
        min_ready = own.spec(rs).get("minReadySeconds") or 0
        wanted = spec_replicas(rs)
        if failure is None and min_ready and status.get("readyReplicas", 0) == wanted and status.get("availableReplicas", 0) != wanted:
            self.queue.add_after(key, min_ready)  # a last look once they should all be available
        if failure is not None:
            raise failure

    def _candidates(self, rs: Obj, selector: LabelSelectorExpr) -> list[Obj]:
        """Active pods it controls (even those that stopped matching) and active orphans it selects:
        what ``ClaimPods`` looks at (it leaves the pods of other controllers alone)."""
        owned = self.pod_informer.indexer.by_index(CONTROLLER_UID_INDEX, own.uid(rs))
        orphans = self.pod_informer.indexer.by_index(own.ORPHANS_INDEX, rs["metadata"]["namespace"])
        selected = [p for p in orphans if selector.matches(p["metadata"].get("labels"))]
        unique = {object_key(p): p for p in [*owned, *selected]}
        return [p for p in unique.values() if _is_active(p)]

    async def _claim(self, rs: Obj, selector: LabelSelectorExpr, pods: list[Obj]) -> list[Obj]:
        """The pods this ReplicaSet controls once orphans are adopted and strays released
        (``ControllerRefManager.ClaimPods``)."""
        manager = ControllerRefManager(rs, selector, api_version=self.managed.api_version, kind=self.managed.kind,
                                       controllers=self._replica_sets(rs), dependents=self._pods(rs))
        return await manager.claim(pods)

    async def _manage(self, rs: Obj, pods: list[Obj]) -> None:
        """Create or delete pods until there are ``spec.replicas`` (at most ``burst_replicas`` per sync)."""
        key = object_key(rs)
        diff = len(pods) - spec_replicas(rs)
        if diff < 0:
            count = min(-diff, self.burst_replicas)
            self.expectations.expect(key, creates=count)
            created, failure = await slow_start(count, lambda: self._create_pod(rs))
            if count > created:
                self.expectations.creation_observed(key, count - created)  # never to be seen
            if failure is not None:
                raise failure
        elif diff > 0:
            doomed = _pods_to_delete(pods, min(diff, self.burst_replicas))
            self.expectations.expect(key, deletes=[object_key(p) for p in doomed])
            results = await asyncio.gather(*(self._delete_pod(rs, pod) for pod in doomed), return_exceptions=True)
            for result in results:
                if isinstance(result, BaseException):
                    raise result

    async def _create_pod(self, rs: Obj) -> None:
        try:
            pod = await self._pods(rs).create(_pod_from_template(rs, self.managed))
        except ApiError as err:
            if err.namespace_terminating:
                self.expectations.creation_observed(object_key(rs))  # nothing more will be created there
                return
            self.recorder.event(involved_object(rs, self.managed.api_version, self.managed.kind), WARNING, "FailedCreate", f"Error creating: {_message(err)}")
            raise
        self.recorder.event(involved_object(rs, self.managed.api_version, self.managed.kind), NORMAL, "SuccessfulCreate", f"Created pod: {pod['metadata']['name']}")

    async def _delete_pod(self, rs: Obj, pod: Obj) -> None:
        name = pod["metadata"]["name"]
        try:
            await self._pods(pod).delete(name)
        except (ApiError, aiohttp.ClientError) as err:
            self.expectations.deletion_observed(object_key(rs), object_key(pod))  # the informer will not see it go
            if isinstance(err, ApiError) and err.code == 404:
                return
            self.recorder.event(involved_object(rs, self.managed.api_version, self.managed.kind), WARNING, "FailedDelete", f"Error deleting: {_message(err)}")
            raise
        self.recorder.event(involved_object(rs, self.managed.api_version, self.managed.kind), NORMAL, "SuccessfulDelete", f"Deleted pod: {name}")

    async def _update_status(self, rs: Obj, status: Obj) -> Obj:
        """Write ``status`` if it differs from the stored one; after a 409, once more on a fresh read."""
        status["observedGeneration"] = rs["metadata"].get("generation")
        current = rs
        for attempt in range(2):
            if not _status_differs(current.get("status") or {}, status):
                return status
            try:
                return (await self._replica_sets(rs).update_status({**current, "status": status})).get("status") or {}
            except ApiError as err:
                if err.code == 404:
                    return status
                if err.code != 409 or attempt == 1:
                    raise
            current = await self._replica_sets(rs).get(rs["metadata"]["name"])
        return status

    def _pods(self, obj: Obj) -> ResourceClient:
        return self.client.resource("", "v1", "pods", obj["metadata"]["namespace"])

    def _replica_sets(self, rs: Obj) -> ResourceClient:
        return self.client.resource(self.managed.group, self.managed.version, self.managed.plural, rs["metadata"]["namespace"])


async def slow_start(count: int, create: Callable[[], Awaitable[None]]) -> tuple[int, ApiError | aiohttp.ClientError | None]:
    """Call ``create`` ``count`` times in concurrent batches of 1, 2, 4, ...; a failed batch ends
    it, so a quota or a bad template costs one request rather than ``count``. Returns how many
    succeeded, and the first failure."""
    done, batch = 0, 1
    while done < count:
        results = await asyncio.gather(*(create() for _ in range(min(batch, count - done))), return_exceptions=True)
        failure: ApiError | aiohttp.ClientError | None = None
        for result in results:
            if isinstance(result, (ApiError, aiohttp.ClientError)):
                failure = failure or result
            elif isinstance(result, BaseException):
                raise result
            else:
                done += 1
        if failure is not None:
            return done, failure
        batch *= 2
    return done, None


def _pods_to_delete(pods: list[Obj], count: int) -> list[Obj]:
    """The ``count`` pods to delete first (``ActivePodsWithRanks``, without the logarithmic
    buckets): unscheduled, then Pending before Running, not ready before ready, those sharing a
    node with more of the ReplicaSet's pods, ready for less time, restarted more, newer."""
    if count >= len(pods):
        return list(pods)
    on_node = Counter(own.spec(p).get("nodeName", "") for p in pods)

    def rank(pod: Obj) -> tuple[Any, ...]:
        node = own.spec(pod).get("nodeName", "")
        ready = is_ready(pod)
        ready_since = clock.epoch(ready_condition(pod).get("lastTransitionTime")) if ready else 0.0
        restarts = max((c.get("restartCount", 0) for c in (pod.get("status") or {}).get("containerStatuses") or []), default=0)
        return (bool(node), PHASE_ORDER.get((pod.get("status") or {}).get("phase", ""), 0), ready, -on_node[node],
                -ready_since, -restarts, -clock.epoch(pod["metadata"].get("creationTimestamp")))

    return sorted(pods, key=rank)[:count]


def _calculate_status(rs: Obj, pods: list[Obj], failure: ApiError | aiohttp.ClientError | None) -> Obj:
    status = dict(rs.get("status") or {})
    template_labels = ((own.spec(rs).get("template") or {}).get("metadata") or {}).get("labels") or {}
    min_ready = own.spec(rs).get("minReadySeconds") or 0
    now = time.time()
    ready = [p for p in pods if is_ready(p)]
    if failure is None:
        remove_condition(status, REPLICA_FAILURE)
    else:
        reason = "FailedCreate" if len(pods) < spec_replicas(rs) else "FailedDelete"
        current = get_condition(status, REPLICA_FAILURE)
        if current is None or current.get("reason") != reason:  # a new reason is a new transition (k8s' SetCondition)
            replace_condition(status, new_condition(REPLICA_FAILURE, "True", reason, _message(failure)))
    status.update(
        replicas=len(pods),
        fullyLabeledReplicas=sum(1 for p in pods if all((p["metadata"].get("labels") or {}).get(k) == v for k, v in template_labels.items())),
        readyReplicas=len(ready),
        availableReplicas=sum(1 for p in ready if clock.epoch(ready_condition(p).get("lastTransitionTime")) + min_ready <= now),
    )
    if not status.get("conditions"):
        status.pop("conditions", None)
    return status


def _status_differs(current: Obj, wanted: Obj) -> bool:
    """Compared as the server stores them: absent counts are 0, absent conditions an empty list."""
    counts = ("replicas", "fullyLabeledReplicas", "readyReplicas", "availableReplicas", "observedGeneration")
    return any((current.get(k) or 0) != (wanted.get(k) or 0) for k in counts) or (current.get("conditions") or []) != (wanted.get("conditions") or [])


def _pod_from_template(rs: Obj, managed: Managed = REPLICA_SET) -> Obj:
    """A new pod of ``rs``: the template's labels, annotations, finalizers and spec, with ``rs`` as its controller."""
    template = own.spec(rs).get("template") or {}
    template_meta = template.get("metadata") or {}
    meta: Obj = {"generateName": f"{rs['metadata']['name']}-",
                 "ownerReferences": [own.controller_reference(rs, managed.api_version, managed.kind)]}
    for key in ("labels", "annotations", "finalizers"):
        if template_meta.get(key):
            meta[key] = copy.deepcopy(template_meta[key])
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": copy.deepcopy(template.get("spec") or {})}


def _is_active(pod: Obj) -> bool:
    return not pod["metadata"].get("deletionTimestamp") and (pod.get("status") or {}).get("phase") not in TERMINAL


def ready_condition(pod: Obj) -> Obj:
    return get_condition(pod.get("status") or {}, "Ready") or {}


def is_ready(pod: Obj) -> bool:
    return ready_condition(pod).get("status") == "True"


def is_available(pod: Obj, min_ready_seconds: int, now: float) -> bool:
    """``podutil.IsPodAvailable``: Ready for at least ``min_ready_seconds`` at ``now`` (epoch seconds)."""
    return is_ready(pod) and clock.epoch(ready_condition(pod).get("lastTransitionTime")) + min_ready_seconds <= now


def _message(err: ApiError | aiohttp.ClientError) -> str:
    return str(err.status.get("message") or err) if isinstance(err, ApiError) else str(err)
