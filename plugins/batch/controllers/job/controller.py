"""The Job controller (kube-controller-manager's ``pkg/controller/job``).

A sync of one Job, from the informers' caches:

1. claims its pods (controlled by it, or orphans its selector matches) with ControllerRefManager;
2. **tracks finished pods with the finalizer** ``batch.kubernetes.io/job-tracking``, as kube
   does: a pod that finished (or is deleted before it succeeded) is first written into
   ``status.uncountedTerminatedPods``, then its finalizer is removed, then it moves into
   ``succeeded``/``failed`` (and an Indexed Job's ``completedIndexes``), so no pod is counted
   twice or lost when the controller stops between two steps;
3. decides the outcome: ``FailureTarget`` (a FailJob rule of ``podFailurePolicy``, more
   failures than ``backoffLimit``, restarts past it under OnFailure, ``activeDeadlineSeconds``
   passed) or ``SuccessCriteriaMet`` (enough completions), then deletes what still runs, and,
   once no pod is left running or uncounted, the terminal ``Failed`` or ``Complete`` condition
   with the same reason (and ``completionTime``);
4. otherwise runs ``parallelism`` pods towards ``completions`` (Indexed: one per missing index,
   the lowest first), in slow-start batches guarded by expectations, replacing failed pods after
   the pod failure back-off (``pod_failure_backoff`` doubled per failure since the last success,
   at most 10 minutes); a suspended Job has its pods deleted and the Suspended condition;
5. writes the status only when it changed, with events (SuccessfulCreate, SuccessfulDelete,
   Completed, BackoffLimitExceeded, DeadlineExceeded, PodFailurePolicy, Suspended, Resumed).

A pod still carrying the finalizer whose Job is gone or finished has it removed (``syncOrphanPod``).
"""

from __future__ import annotations

import asyncio
import copy
import logging
import time
from collections.abc import Sequence
from typing import Any

import aiohttp

from kplane.api import (
    NORMAL, STRATEGIC_MERGE_PATCH, WARNING, ApiError, ControllerRefManager, EventRecorder, Handlers, RESTClient,
    ResourceClient, SharedInformerFactory, WorkQueue, Workers, clock, get_condition, involved_object, object_key,
    ownership as own, wait_synced,
)
from kplane.plugins.apps.controllers.replicaset import Expectations, slow_start
from kplane.plugins.batch.controllers.job import pods as jp
from kplane.plugins.batch.indexes import Indexes

log = logging.getLogger(__name__)
Obj = dict[str, Any]

COMPONENT = "job-controller"
MANAGED_BY = "kubernetes.io/job-controller"
BURST = 500
DEFAULT_POD_FAILURE_BACKOFF = 10.0
MAX_POD_FAILURE_BACKOFF = 600.0
ORPHAN = "orphan-pod:"
UNSEEN_WAIT = 2.0  # seconds a sync waits for the informer to show the Job's last status write  # queue keys of pods whose finalizer may have to go


def finished_condition(job: Obj) -> Obj | None:
    """The Complete or Failed condition that is True, if any."""
    for kind in ("Complete", "Failed"):
        condition = get_condition(job.get("status") or {}, kind)
        if condition is not None and condition.get("status") == "True":
            return condition
    return None


def _condition(kind: str, status: str, reason: str, message: str) -> Obj:
    now = clock.now()
    return {"type": kind, "status": status, "lastProbeTime": now, "lastTransitionTime": now, "reason": reason, "message": message}


def _ensure(status: Obj, kind: str, value: str, reason: str, message: str) -> bool:
    """``ensureJobConditionStatus``: set the condition (a False one only over an existing one)."""
    current = get_condition(status, kind)
    if current is None:
        if value != "True":
            return False
        status["conditions"] = [*(status.get("conditions") or []), _condition(kind, value, reason, message)]
        return True
    if current.get("status") == value and current.get("reason") == reason and current.get("message") == message:
        return False
    fresh = _condition(kind, value, reason, message)
    if current.get("status") == value:
        fresh["lastTransitionTime"] = current.get("lastTransitionTime")
    status["conditions"] = [fresh if c.get("type") == kind else c for c in status.get("conditions") or []]
    return True


class _Backoff:
    """Failures since the last success of a Job, and when the last one was seen (``backoffRecord``)."""

    __slots__ = ("failures", "last")

    def __init__(self) -> None:
        self.failures = 0
        self.last = 0.0


class JobController:
    def __init__(self, client: RESTClient, informers: SharedInformerFactory, *, workers: int = 5,
                 pod_failure_backoff: float = DEFAULT_POD_FAILURE_BACKOFF) -> None:
        self.client = client
        self.informers = informers
        self.workers = workers
        self.pod_failure_backoff = pod_failure_backoff
        self.job_informer = informers.informer("batch", "v1", "jobs")
        self.pod_informer = informers.informer("", "v1", "pods")
        self.index = own.index_by_controller(self.pod_informer)
        self.queue: WorkQueue[str] = WorkQueue()
        self.expectations = Expectations()
        self.recorder = EventRecorder(client, COMPONENT)
        self._backoffs: dict[str, _Backoff] = {}
        #: uids of pods whose finalizer was removed but the cache still shows it (kube's
        #: finalizerExpectations): counted already, they must not be counted again.
        self.released: set[str] = set()
        #: The resourceVersion of each Job's last status write, until the informer shows it: a
        #: sync from an older copy would only meet a conflict (its event brings the Job back).
        self.unseen: dict[str, tuple[str, float]] = {}

    async def run(self) -> None:
        self.job_informer.add_handlers(Handlers(on_add=self._job_added, on_update=self._job_updated, on_delete=self._job_deleted))
        self.pod_informer.add_handlers(Handlers(on_add=self._pod_added, on_update=self._pod_updated, on_delete=self._pod_deleted))
        self.informers.start()
        async with Workers(self.queue, self.recorder) as workers:
            await wait_synced(self.job_informer, self.pod_informer)
            workers.start(self.workers, self._sync, name="job")
            await workers.wait()

    # -- events to work ---------------------------------------------------------------------
    def _job_added(self, job: Obj) -> None:
        self._seen(job)
        self.queue.add(object_key(job))
        self.deadline_check(job)

    def _job_updated(self, old: Obj, job: Obj) -> None:
        self._seen(job)
        if own.uid(old) != own.uid(job):
            self._job_deleted(old)
        self.queue.add(object_key(job))
        if own.spec(old).get("activeDeadlineSeconds") != own.spec(job).get("activeDeadlineSeconds") or \
                (old.get("status") or {}).get("startTime") != (job.get("status") or {}).get("startTime"):
            self.deadline_check(job)

    def _seen(self, job: Obj) -> None:
        key = object_key(job)
        if key in self.unseen and self.unseen[key][0] == job["metadata"].get("resourceVersion"):
            del self.unseen[key]

    def written(self, job: Obj) -> None:
        self.unseen[object_key(job)] = (str(job["metadata"].get("resourceVersion", "")), time.monotonic())

    def _job_deleted(self, job: Obj) -> None:
        key = object_key(job)
        self.unseen.pop(key, None)
        self.expectations.forget(key)
        self._backoffs.pop(key, None)
        for pod in self.pod_informer.indexer.by_index(self.index, own.uid(job)):
            if jp.has_finalizer(pod):
                self.queue.add(ORPHAN + object_key(pod))

    def deadline_check(self, job: Obj) -> None:
        """Look again when the active deadline passes."""
        deadline = own.spec(job).get("activeDeadlineSeconds")
        started = (job.get("status") or {}).get("startTime")
        if deadline and started:
            self.queue.add_after(object_key(job), max(clock.epoch(started) + deadline - time.time(), 0) + 0.05)

    def _pod_added(self, pod: Obj) -> None:
        job = own.controller_of(self.job_informer, pod, group="batch", kind=jp.KIND)
        if job is not None:
            self.expectations.creation_observed(object_key(job))
        self._pod_changed(pod, job)

    def _pod_updated(self, old: Obj, pod: Obj) -> None:
        job = own.controller_of(self.job_informer, pod, group="batch", kind=jp.KIND)
        if job is not None and pod["metadata"].get("deletionTimestamp") and not old["metadata"].get("deletionTimestamp"):
            self.expectations.deletion_observed(object_key(job), object_key(pod))
        old_job = own.controller_of(self.job_informer, old, group="batch", kind=jp.KIND)
        if old_job is not None and old_job is not job:
            self.queue.add(object_key(old_job))
        self._pod_changed(pod, job)

    def _pod_deleted(self, pod: Obj) -> None:
        self.released.discard(own.uid(pod))
        job = own.controller_of(self.job_informer, pod, group="batch", kind=jp.KIND)
        if job is not None:
            self.expectations.deletion_observed(object_key(job), object_key(pod))
            self.queue.add(object_key(job))

    def _pod_changed(self, pod: Obj, job: Obj | None) -> None:
        if not jp.has_finalizer(pod):
            self.released.discard(own.uid(pod))
        if job is not None:
            self.queue.add(object_key(job))
        elif jp.has_finalizer(pod):
            self.queue.add(ORPHAN + object_key(pod))
        elif own.controller_ref(pod) is None:
            for owner in own.selecting(self.job_informer, pod):
                self.queue.add(object_key(owner))

    # -- sync -------------------------------------------------------------------------------
    async def _sync(self, key: str) -> None:
        if key.startswith(ORPHAN):
            await self._sync_orphan(key[len(ORPHAN):])
            return
        job = self.job_informer.indexer.get(key)
        if job is None:
            self.expectations.forget(key)
            self._backoffs.pop(key, None)
            return
        if own.spec(job).get("managedBy") not in (None, MANAGED_BY):
            return  # another controller's
        pending = self.unseen.get(key)
        if pending is not None and pending[0] != job["metadata"].get("resourceVersion"):
            waited = time.monotonic() - pending[1]
            if waited < UNSEEN_WAIT:
                self.queue.add_after(key, UNSEEN_WAIT - waited)  # in case its event never comes (a relist)
                return
            del self.unseen[key]
        selector = own.selector(job)
        if selector is None:
            return
        manager = ControllerRefManager(job, selector, api_version=jp.API_VERSION, kind=jp.KIND,
                                       controllers=self._jobs(job), dependents=self._pods(job))
        owned = self.pod_informer.indexer.by_index(self.index, own.uid(job))
        selected = self.pod_informer.lister().namespaced(job["metadata"]["namespace"]).list(selector)
        pods = await manager.claim({object_key(p): p for p in [*owned, *selected]}.values())
        await _Sync(self, job, pods).run()

    async def _sync_orphan(self, pod_key: str) -> None:
        """``syncOrphanPod``: the finalizer goes once no unfinished Job controls the pod."""
        pod = self.pod_informer.indexer.get(pod_key)
        if pod is None or not jp.has_finalizer(pod):
            return
        job = own.controller_of(self.job_informer, pod, group="batch", kind=jp.KIND)
        if job is not None and finished_condition(job) is None:
            self.queue.add(object_key(job))
            return
        await self.remove_finalizer(pod)

    async def remove_finalizer(self, pod: Obj) -> bool:
        patch = {"metadata": {"$deleteFromPrimitiveList/finalizers": [jp.TRACKING_FINALIZER]}}
        try:
            done = await self._pods(pod).patch(pod["metadata"]["name"], patch, content_type=STRATEGIC_MERGE_PATCH)
        except ApiError as err:
            if err.code == 404:
                return True
            raise
        if own.uid(done) == own.uid(pod) and self.pod_informer.indexer.get(object_key(pod)) is not None:
            cached = self.pod_informer.indexer.get(object_key(pod))
            if cached is not None and jp.has_finalizer(cached):
                self.released.add(own.uid(pod))
        return True

    def backoff_left(self, key: str) -> float:
        """Seconds before a failed pod of the Job may be replaced."""
        record = self._backoffs.get(key)
        if record is None or record.failures == 0:
            return 0.0
        delay = min(self.pod_failure_backoff * 2 ** min(record.failures - 1, 64), MAX_POD_FAILURE_BACKOFF)  # no float overflow
        return max(record.last + delay - time.monotonic(), 0.0)

    def record_outcomes(self, key: str, succeeded: int, failed: int) -> None:
        record = self._backoffs.setdefault(key, _Backoff())
        if succeeded:
            record.failures = 0
        if failed:
            record.failures += failed
            record.last = time.monotonic()

    def event(self, job: Obj, kind: str, reason: str, message: str) -> None:
        self.recorder.event(involved_object(job, jp.API_VERSION, jp.KIND), kind, reason, message)

    def _pods(self, obj: Obj) -> ResourceClient:
        return self.client.resource("", "v1", "pods", obj["metadata"]["namespace"])

    def _jobs(self, job: Obj) -> ResourceClient:
        return self.client.resource("batch", "v1", "jobs", job["metadata"]["namespace"])


class _Sync:
    """One sync of one Job: the pods it has, the status it is writing."""

    def __init__(self, controller: JobController, job: Obj, pods: list[Obj]) -> None:
        self.c = controller
        self.job = job
        self.key = object_key(job)
        self.spec = own.spec(job)
        self.pods = pods
        self.status: Obj = copy.deepcopy(job.get("status") or {})
        self.indexed = self.spec.get("completionMode") == "Indexed"
        self.completions = self.spec.get("completions")
        self.replacement = self.spec.get("podReplacementPolicy") or "TerminatingOrFailed"

    async def run(self) -> None:
        failure: BaseException | None = None
        uncounted = self.status.get("uncountedTerminatedPods") or {}
        self.uncounted = {"succeeded": list(uncounted.get("succeeded") or []), "failed": list(uncounted.get("failed") or [])}
        self._count_released()
        fail_job = self._collect_finished()
        self.ending: Obj | None = None
        if finished_condition(self.job) is None:
            try:
                await self._decide(fail_job)
            except (ApiError, aiohttp.ClientError) as err:
                failure = err
        self._set_counts()
        await self._flush_finished()
        self._set_counts()
        if self.ending is not None and not any(self.uncounted.values()) and \
                not [p for p in self.pods if jp.is_active(p) or jp.is_terminating(p)]:
            self._finish(self.ending)
        await self._write()
        if failure is not None:
            raise failure
        if finished_condition({"status": self.status}) is None:
            self.c.deadline_check({**self.job, "status": self.status})  # each sync, as kube's: a retry may take the timer's place

    # -- step 2: finalizer tracking ------------------------------------------------------------
    def _count_released(self) -> None:
        """Uncounted pods that lost their finalizer (or are gone) are counted now."""
        by_uid = {own.uid(p): p for p in self.pods}
        completed: Indexes | None = None  # parsed once, on the first index to add
        for kind in ("succeeded", "failed"):
            kept = []
            for uid in self.uncounted[kind]:
                pod = by_uid.get(uid)
                if pod is not None and jp.has_finalizer(pod):
                    kept.append(uid)
                    continue
                self.status[kind] = int(self.status.get(kind) or 0) + 1
                if kind == "succeeded" and pod is not None and self.indexed and (index := jp.index_of(pod)) is not None:
                    if completed is None:
                        completed = Indexes.parse(self.status.get("completedIndexes"), self.completions or 0)
                    completed.add(index)
            self.uncounted[kind] = kept
        if completed is not None:
            self.status["completedIndexes"] = str(completed)

    def _collect_finished(self) -> tuple[str, str] | None:
        """Finished pods with the finalizer join the uncounted ones; returns a FailJob rule's
        reason and message when one matched. Failures that an Ignore rule matches are not counted."""
        self.release: list[Obj] = []
        seen = set(self.uncounted["succeeded"]) | set(self.uncounted["failed"])
        fail_job: tuple[str, str] | None = None
        new_succeeded = new_failed = 0
        completed = Indexes.parse(self.status.get("completedIndexes"), self.completions or 0) if self.indexed else Indexes()
        for pod in self.pods:
            if not jp.has_finalizer(pod):
                continue
            uid = own.uid(pod)
            if uid in self.c.released:
                continue  # counted; the cache has not shown its finalizer go yet
            if uid in seen:
                self.release.append(pod)
                continue
            if jp.phase(pod) == "Succeeded":
                index = jp.index_of(pod)
                if self.indexed and (index is None or index in completed or index >= (self.completions or 0)):
                    self.release.append(pod)  # a second success of an index, or out of range: not counted
                    continue
                self.uncounted["succeeded"].append(uid)
                new_succeeded += 1
                if index is not None:
                    completed.add(index)
            elif jp.is_failed(pod, self.replacement):
                rule = jp.matched_rule(self.job, pod) if self.spec.get("podFailurePolicy") else None
                if rule is not None and rule[0] == "Ignore":
                    self.release.append(pod)
                    continue
                if rule is not None and rule[0] == "FailJob" and fail_job is None:
                    fail_job = ("PodFailurePolicy", rule[1])
                self.uncounted["failed"].append(uid)
                new_failed += 1
            elif finished_condition(self.job) is None:
                continue
            self.release.append(pod)
        self.c.record_outcomes(self.key, new_succeeded, new_failed)
        return fail_job

    async def _flush_finished(self) -> None:
        """Record the uncounted pods, remove their finalizers, and count those released."""
        if not self.release:
            return
        self.status["uncountedTerminatedPods"] = {k: v for k, v in self.uncounted.items() if v}
        await self._write()
        results = await asyncio.gather(*(self.c.remove_finalizer(p) for p in self.release), return_exceptions=True)
        released = {own.uid(p) for p, r in zip(self.release, results) if r is True}
        for result in results:
            if isinstance(result, BaseException) and not isinstance(result, (ApiError, aiohttp.ClientError)):
                raise result
        for pod in self.release:
            if own.uid(pod) in released:
                pod = {**pod, "metadata": {**pod["metadata"], "finalizers": [f for f in pod["metadata"].get("finalizers") or []
                                                                             if f != jp.TRACKING_FINALIZER]}}
            self.pods = [pod if own.uid(p) == own.uid(pod) else p for p in self.pods]
        self._count_released()
        if any(isinstance(r, BaseException) for r in results):
            self.c.queue.add_rate_limited(self.key)

    # -- steps 3 and 4: the outcome, and the pods it needs ------------------------------------
    def _totals(self) -> tuple[int, int]:
        succeeded = int(self.status.get("succeeded") or 0) + len(self.uncounted["succeeded"])
        failed = int(self.status.get("failed") or 0) + len(self.uncounted["failed"])
        return succeeded, failed

    def _completed_indexes(self) -> Indexes:
        done = Indexes.parse(self.status.get("completedIndexes"), self.completions or 0)
        by_uid = {own.uid(p): p for p in self.pods}
        for uid in self.uncounted["succeeded"]:
            pod = by_uid.get(uid)
            if pod is not None and (index := jp.index_of(pod)) is not None:
                done.add(index)
        return done

    async def _decide(self, fail_job: tuple[str, str] | None) -> None:
        active = [p for p in self.pods if jp.is_active(p)]
        succeeded, failed = self._totals()
        target = get_condition(self.status, "FailureTarget")
        criteria = get_condition(self.status, "SuccessCriteriaMet")
        if target is None or target.get("status") != "True":
            why = fail_job or self._failure(active, failed)
            if why is not None:
                _ensure(self.status, "FailureTarget", "True", *why)
                target = get_condition(self.status, "FailureTarget")
        if (target is None or target.get("status") != "True") and (criteria is None or criteria.get("status") != "True"):
            if self._complete(active, succeeded):
                _ensure(self.status, "SuccessCriteriaMet", "True", "CompletionsReached", "Reached expected number of succeeded pods")
                criteria = get_condition(self.status, "SuccessCriteriaMet")
        ending = target if target is not None and target.get("status") == "True" else \
            criteria if criteria is not None and criteria.get("status") == "True" else None
        if ending is not None:
            self.ending = ending  # the terminal condition once every pod is stopped and counted
            await self._delete(active)
            return
        if self.spec.get("suspend"):
            if _ensure(self.status, "Suspended", "True", "JobSuspended", "Job suspended"):
                self.c.event(self.job, NORMAL, "Suspended", "Job suspended")
            self.status.pop("startTime", None)
            await self._delete(active)
            return
        if _ensure(self.status, "Suspended", "False", "JobResumed", "Job resumed"):
            self.c.event(self.job, NORMAL, "Resumed", "Job resumed")
            self.status["startTime"] = clock.now()
        if not self.status.get("startTime"):
            self.status["startTime"] = clock.now()
        if self.c.expectations.satisfied(self.key):
            await self._manage(active, succeeded)

    def _failure(self, active: list[Obj], failed: int) -> tuple[str, str] | None:
        limit = self.spec.get("backoffLimit")
        limit = 6 if limit is None else limit
        template_policy = ((self.spec.get("template") or {}).get("spec") or {}).get("restartPolicy")
        exceeded = failed > limit
        if template_policy == "OnFailure":  # pastBackoffLimitOnFailure: restarts in place count
            restarted = sum(jp.restarts(p) for p in active)
            exceeded = exceeded or (restarted > 0 if limit == 0 else restarted >= limit)
        if exceeded:
            return "BackoffLimitExceeded", "Job has reached the specified backoff limit"
        deadline = self.spec.get("activeDeadlineSeconds")
        started = self.status.get("startTime")
        if deadline and started and time.time() - clock.epoch(started) >= deadline:
            return "DeadlineExceeded", "Job was active longer than specified deadline"
        return None

    def _complete(self, active: list[Obj], succeeded: int) -> bool:
        if self.indexed:
            return len(self._completed_indexes()) >= (self.completions or 0)
        if self.completions is None:
            return succeeded > 0 and not active
        return succeeded >= self.completions

    def _finish(self, ending: Obj) -> None:
        """The terminal condition, once nothing of the Job runs any more."""
        if ending["type"] == "FailureTarget":
            if _ensure(self.status, "Failed", "True", ending.get("reason", ""), ending.get("message", "")):
                self.c.event(self.job, WARNING, ending.get("reason", ""), ending.get("message", ""))
        elif _ensure(self.status, "Complete", "True", ending.get("reason", ""), ending.get("message", "")):
            self.status["completionTime"] = clock.now()
            self.c.event(self.job, NORMAL, "Completed", "Job completed")

    async def _manage(self, active: list[Obj], succeeded: int) -> None:
        parallelism = int(self.spec.get("parallelism") or 0)
        terminating = [p for p in self.pods if jp.is_terminating(p)]
        if self.indexed:
            await self._manage_indexed(active, parallelism, terminating)
            return
        if self.completions is None:
            want = len(active) if succeeded > 0 else parallelism
        else:
            want = max(min(self.completions - succeeded, parallelism), 0)
        if len(active) > want:
            await self._delete(_deletion_order(active)[: len(active) - want])
            return
        missing = want - len(active) - (len(terminating) if self.replacement == "Failed" else 0)
        await self._create([None] * min(max(missing, 0), BURST))

    async def _manage_indexed(self, active: list[Obj], parallelism: int, terminating: list[Obj]) -> None:
        done = self._completed_indexes()
        completions = self.completions or 0
        running: dict[int, Obj] = {}
        extra = []
        for pod in active:
            index = jp.index_of(pod)
            if index is None or index >= completions or index in done or index in running:
                extra.append(pod)
            else:
                running[index] = pod
        if extra:
            await self._delete(extra)
        busy = set(running) | {i for p in terminating if (i := jp.index_of(p)) is not None and self.replacement == "Failed"}
        want = min(parallelism, completions - len(done))
        await self._create(done.first_missing(min(max(want - len(running), 0), BURST), completions, busy))

    async def _create(self, indexes: Sequence[int | None]) -> None:
        if not indexes:
            return
        wait = self.c.backoff_left(self.key)
        if wait > 0:
            self.c.queue.add_after(self.key, wait)
            return
        self.c.expectations.expect(self.key, creates=len(indexes))
        queue = list(indexes)

        async def create_one() -> None:
            index = queue.pop(0)
            try:
                pod = await self.c._pods(self.job).create(jp.new_pod(self.job, index))
            except ApiError as err:
                self.c.expectations.creation_observed(self.key)
                if not err.namespace_terminating:
                    self.c.event(self.job, WARNING, "FailedCreate", f"Error creating: {err.status.get('message') or err}")
                raise
            except aiohttp.ClientError:
                self.c.expectations.creation_observed(self.key)
                raise
            self.c.event(self.job, NORMAL, "SuccessfulCreate", f"Created pod: {pod['metadata']['name']}")

        created, failure = await slow_start(len(indexes), create_one)
        left = len(indexes) - created - (1 if failure is not None else 0)
        if left > 0:
            self.c.expectations.creation_observed(self.key, left)
        if failure is not None:
            raise failure

    async def _delete(self, doomed: list[Obj]) -> None:
        if not doomed:
            return
        self.c.expectations.expect(self.key, deletes=[object_key(p) for p in doomed])

        async def delete_one(pod: Obj) -> None:
            try:
                await self.c._pods(pod).delete(pod["metadata"]["name"])
            except ApiError as err:
                self.c.expectations.deletion_observed(self.key, object_key(pod))
                if err.code == 404:
                    return
                self.c.event(self.job, WARNING, "FailedDelete", f"Error deleting: {err.status.get('message') or err}")
                raise
            self.c.event(self.job, NORMAL, "SuccessfulDelete", f"Deleted pod: {pod['metadata']['name']}")
            now = clock.now()
            self.pods = [{**p, "metadata": {**p["metadata"], "deletionTimestamp": now}} if p is pod else p for p in self.pods]

        results = await asyncio.gather(*(delete_one(p) for p in doomed), return_exceptions=True)
        for result in results:
            if isinstance(result, BaseException):
                raise result

    # -- step 5: status ------------------------------------------------------------------------
    def _set_counts(self) -> None:
        self.status["active"] = sum(1 for p in self.pods if jp.is_active(p))
        self.status["ready"] = sum(1 for p in self.pods if jp.is_active(p) and jp.is_ready(p))
        self.status["terminating"] = sum(1 for p in self.pods if jp.is_terminating(p))
        self.status["uncountedTerminatedPods"] = {k: v for k, v in self.uncounted.items() if v}
        for kind in ("active", "succeeded", "failed"):  # omitempty in Go: written only when not 0
            if not self.status.get(kind):
                self.status.pop(kind, None)

    async def _write(self) -> None:
        if _comparable(self.status) == _comparable(self.job.get("status") or {}):
            return
        try:
            stored = await self.c._jobs(self.job).update_status({**self.job, "status": self.status})
        except ApiError as err:
            if err.code == 404:
                return
            raise
        self.job = stored
        self.c.written(stored)


def _comparable(status: Obj) -> Obj:
    """The status as the server stores it: zero counts, empty strings and empty objects are left out."""
    return {k: v for k, v in status.items() if v not in (None, 0, "", {}, [])}


def _deletion_order(pods: list[Obj]) -> list[Obj]:
    """Which active pods go first when there are too many: not ready, then the newest."""
    return sorted(pods, key=lambda p: (jp.is_ready(p), -clock.epoch(p["metadata"].get("creationTimestamp"))))
