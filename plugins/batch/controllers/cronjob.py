"""The CronJob controller (kube-controller-manager's ``pkg/controller/cronjob``, the v2 one).

A sync of one CronJob, from the informers' caches:

1. its ``status.active`` follows its Jobs: a finished one leaves it (SawCompletedJob, and
   ``lastSuccessfulTime`` for a Complete one), an unfinished one it controls joins it, a gone one
   leaves it (MissingJob);
2. unless it is being deleted, suspended, its ``timeZone`` unknown (UnknownTimeZone) or its
   schedule unparseable (UnparseableSchedule): the most recent scheduled time not yet run,
   counted from ``lastScheduleTime`` (else the creation) and no earlier than
   ``startingDeadlineSeconds`` ago, is run (too late: MissSchedule; more than 100 missed:
   TooManyMissedTimes), as ``concurrencyPolicy`` says: Allow, Forbid (skipped while a Job is
   active: JobAlreadyActive) or Replace (the active Jobs deleted first). The Job is named
   ``<cronjob>-<scheduled time in minutes since the epoch>``, so a time is never run twice;
3. finished Jobs beyond ``successfulJobsHistoryLimit``/``failedJobsHistoryLimit`` are deleted,
   the oldest first;
4. the status is written when it changed, and the CronJob looked at again at its next time.
"""

from __future__ import annotations

import copy
import logging
import time
from datetime import UTC, datetime, timedelta, tzinfo
from typing import Any

from kplane.api import (
    NORMAL, WARNING, ApiError, EventRecorder, Handlers, RESTClient, ResourceClient, SharedInformerFactory, WorkQueue,
    Workers, clock, involved_object, object_key, ownership as own, wait_synced,
)
from kplane.plugins.batch import cron
from kplane.plugins.batch.controllers.job.controller import finished_condition

log = logging.getLogger(__name__)
Obj = dict[str, Any]

API_VERSION, KIND = "batch/v1", "CronJob"
COMPONENT = "cronjob-controller"
SCHEDULED_TIMESTAMP = "batch.kubernetes.io/cronjob-scheduled-timestamp"
MANY_MISSED = 100
NEXT_DELTA = 0.1  # seconds after a scheduled time the CronJob is looked at again
MAX_STARTING_DEADLINE = 100 * 365 * 86400  # seconds: an int64 deadline is "never", not an overflow


def starting_deadline(cron_job: Obj) -> timedelta | None:
    """``startingDeadlineSeconds`` as a timedelta, capped at a century (a timedelta holds less
    than an int64 of seconds, and a longer deadline cannot matter)."""
    seconds = own.spec(cron_job).get("startingDeadlineSeconds")
    return None if seconds is None else timedelta(seconds=min(int(seconds), MAX_STARTING_DEADLINE))


def most_recent_schedule(cron_job: Obj, now: datetime, schedule: cron.Schedule, zone: tzinfo) -> tuple[datetime | None, int]:
    """``mostRecentScheduleTime``: the latest scheduled time in (earliest, now], and about how
    many were missed. Earliest is lastScheduleTime, else the creation, no earlier than
    startingDeadlineSeconds before now. The count is estimated from the gap between the first two
    times, as kube does, so a schedule years behind costs no more than a regular one."""
    earliest = clock.parse((cron_job.get("status") or {}).get("lastScheduleTime") or cron_job["metadata"]["creationTimestamp"])
    deadline = starting_deadline(cron_job)
    if deadline is not None:
        earliest = max(earliest, now - deadline)
    first = schedule.next(earliest, zone)
    if first is None or now < first:
        return None, 0
    second = schedule.next(first, zone)
    if second is None or now < second:
        return first, 1
    gap = max(int((second - first).total_seconds()), 1)
    missed = int((now - first).total_seconds()) // gap + 1
    found: datetime | None = None
    moment = schedule.next(first + timedelta(seconds=max(missed - 2, 0) * gap) - timedelta(seconds=1), zone)
    while moment is not None and moment <= now:
        found = moment
        moment = schedule.next(moment, zone)
    return found, missed


def job_name(cron_job: Obj, scheduled: datetime) -> str:
    return f"{cron_job['metadata']['name']}-{int(scheduled.timestamp()) // 60}"


def job_from_template(cron_job: Obj, scheduled: datetime, zone: tzinfo) -> Obj:
    template = own.spec(cron_job).get("jobTemplate") or {}
    meta = template.get("metadata") or {}
    annotations = {**copy.deepcopy(meta.get("annotations") or {}), SCHEDULED_TIMESTAMP: scheduled.astimezone(zone).isoformat().replace("+00:00", "Z")}
    return {
        "apiVersion": "batch/v1", "kind": "Job",
        "metadata": {"name": job_name(cron_job, scheduled), "labels": copy.deepcopy(meta.get("labels") or {}), "annotations": annotations,
                     "ownerReferences": [own.controller_reference(cron_job, API_VERSION, KIND)]},
        "spec": copy.deepcopy(template.get("spec") or {}),
    }


def _by_start_time(job: Obj) -> tuple[bool, str, str]:
    """kube's ``byJobStartTime``: the earliest start first, a Job not started last, and ties (start
    times are whole seconds) broken by name."""
    started = (job.get("status") or {}).get("startTime")
    return started is None, started or "", job["metadata"]["name"]


def _reference(job: Obj) -> Obj:
    meta = job["metadata"]
    return {"kind": "Job", "namespace": meta["namespace"], "name": meta["name"], "uid": meta["uid"], "apiVersion": "batch/v1",
            "resourceVersion": meta.get("resourceVersion", "")}


class CronJobController:
    def __init__(self, client: RESTClient, informers: SharedInformerFactory, *, workers: int = 5,
                 zone: tzinfo = UTC) -> None:
        self.client = client
        self.informers = informers
        self.workers = workers
        self.zone = zone  # the controller's own time zone, for CronJobs without timeZone
        self.cron_informer = informers.informer("batch", "v1", "cronjobs")
        self.job_informer = informers.informer("batch", "v1", "jobs")
        self.index = own.index_by_controller(self.job_informer)
        self.queue: WorkQueue[str] = WorkQueue()
        self.recorder = EventRecorder(client, COMPONENT)

    async def run(self) -> None:
        self.cron_informer.add_handlers(Handlers(on_add=self._enqueue, on_update=lambda _, cj: self._enqueue(cj), on_delete=self._enqueue))
        self.job_informer.add_handlers(Handlers(on_add=self._job_changed, on_update=lambda _, job: self._job_changed(job),
                                                on_delete=self._job_changed))
        self.informers.start()
        async with Workers(self.queue, self.recorder) as workers:
            await wait_synced(self.cron_informer, self.job_informer)
            workers.start(self.workers, self._sync, name="cronjob")
            await workers.wait()

    def _enqueue(self, cron_job: Obj) -> None:
        self.queue.add(object_key(cron_job))

    def _job_changed(self, job: Obj) -> None:
        owner = own.controller_of(self.cron_informer, job, group="batch", kind=KIND)
        if owner is not None:
            self._enqueue(owner)

    def _event(self, cron_job: Obj, kind: str, reason: str, message: str) -> None:
        self.recorder.event(involved_object(cron_job, API_VERSION, KIND), kind, reason, message)

    async def _sync(self, key: str) -> None:
        cron_job = self.cron_informer.indexer.get(key)
        if cron_job is None:
            return
        jobs = self.job_informer.indexer.by_index(self.index, own.uid(cron_job))
        status = copy.deepcopy(cron_job.get("status") or {})
        self._track_active(cron_job, status, jobs)
        next_at = None
        if not cron_job["metadata"].get("deletionTimestamp"):
            next_at = await self._schedule(cron_job, status, jobs)
            await self._clean_up(cron_job, jobs)
        await self._write(cron_job, status)
        if next_at is not None:
            self.queue.add_after(key, max(next_at.timestamp() - time.time(), 0) + NEXT_DELTA)

    def _track_active(self, cron_job: Obj, status: Obj, jobs: list[Obj]) -> None:
        active = list(status.get("active") or [])
        by_uid = {own.uid(j): j for j in jobs}
        listed = {ref.get("uid") for ref in active}
        for job in jobs:
            done = finished_condition(job)
            if done is None and own.uid(job) not in listed and not job["metadata"].get("deletionTimestamp"):
                active.append(_reference(job))
            elif done is not None and own.uid(job) in listed:
                active = [ref for ref in active if ref.get("uid") != own.uid(job)]
                self._event(cron_job, NORMAL, "SawCompletedJob", f"Saw completed job: {job['metadata']['name']}, condition: {done['type']}")
                completed = (job.get("status") or {}).get("completionTime")
                if done["type"] == "Complete" and completed and completed > (status.get("lastSuccessfulTime") or ""):
                    status["lastSuccessfulTime"] = completed
        for ref in list(active):
            if ref.get("uid") not in by_uid:
                active.remove(ref)
                self._event(cron_job, NORMAL, "MissingJob", f"Active job went missing: {ref.get('name')}")
        status["active"] = active

    async def _schedule(self, cron_job: Obj, status: Obj, jobs: list[Obj]) -> datetime | None:
        """Run the due time, if any; the next scheduled time, to look again then."""
        spec = own.spec(cron_job)
        zone = self.zone
        if spec.get("timeZone"):
            try:
                zone = cron.load_zone(spec["timeZone"])
            except cron.ScheduleError as err:
                self._event(cron_job, WARNING, "UnknownTimeZone", f"invalid timeZone: {spec['timeZone']!r}: {err}")
                return None
        if spec.get("suspend"):
            return None
        try:
            schedule = cron.parse(spec.get("schedule") or "")
        except cron.ScheduleError as err:
            self._event(cron_job, WARNING, "UnparseableSchedule", f"unparseable schedule: {spec.get('schedule')!r} : {err}")
            return None
        now = datetime.now(UTC)
        scheduled, missed = most_recent_schedule({**cron_job, "status": status}, now, schedule, zone)
        next_at = schedule.next(now, zone)
        if scheduled is None:
            return next_at
        if missed > MANY_MISSED:
            self._event(cron_job, WARNING, "TooManyMissedTimes",
                        "too many missed start times. Set or decrease .spec.startingDeadlineSeconds or check clock skew")
        deadline = starting_deadline(cron_job)
        if deadline is not None and scheduled + deadline < now:
            self._event(cron_job, WARNING, "MissSchedule", f"Missed scheduled time to start a job: {scheduled.strftime('%a, %d %b %Y %H:%M:%S %z')}")
            return next_at
        name = job_name(cron_job, scheduled)
        if any(j["metadata"]["name"] == name for j in jobs):
            return next_at  # run already
        policy = spec.get("concurrencyPolicy") or "Allow"
        if policy == "Forbid" and status["active"]:
            self._event(cron_job, NORMAL, "JobAlreadyActive", "Not starting job because prior execution is running and concurrency policy is Forbid")
            return next_at
        if policy == "Replace":
            for ref in list(status["active"]):
                if await self._delete_job(cron_job, ref["name"]):
                    status["active"] = [r for r in status["active"] if r.get("uid") != ref.get("uid")]
        try:
            job = await self._jobs(cron_job).create(job_from_template(cron_job, scheduled, zone))
        except ApiError as err:
            if err.code != 409:
                self._event(cron_job, WARNING, "FailedCreate", f"Error creating job: {err.status.get('message') or err}")
                raise
            return next_at  # made by an earlier sync the cache has not shown yet
        self._event(cron_job, NORMAL, "SuccessfulCreate", f"Created job {job['metadata']['name']}")
        status["active"] = [*status["active"], _reference(job)]
        status["lastScheduleTime"] = clock.at(scheduled)
        return next_at

    async def _clean_up(self, cron_job: Obj, jobs: list[Obj]) -> None:
        """Delete the oldest finished Jobs beyond the history limits."""
        spec = own.spec(cron_job)
        for kind, limit in (("Complete", spec.get("successfulJobsHistoryLimit")), ("Failed", spec.get("failedJobsHistoryLimit"))):
            if limit is None:
                continue
            done = [j for j in jobs if (finished_condition(j) or {}).get("type") == kind and not j["metadata"].get("deletionTimestamp")]
            done.sort(key=_by_start_time)
            for job in done[: max(len(done) - limit, 0)]:
                await self._delete_job(cron_job, job["metadata"]["name"])

    async def _delete_job(self, cron_job: Obj, name: str) -> bool:
        try:
            await self._jobs(cron_job).delete(name, propagation_policy="Background")
        except ApiError as err:
            if err.code != 404:
                self._event(cron_job, WARNING, "FailedDelete", f"Deleted job: {err.status.get('message') or err}")
                raise
        self._event(cron_job, NORMAL, "SuccessfulDelete", f"Deleted job {name}")
        return True

    async def _write(self, cron_job: Obj, status: Obj) -> None:
        old = cron_job.get("status") or {}
        if not status.get("active"):
            status.pop("active", None)
        if status == old:
            return
        try:
            await self._cron_jobs(cron_job).update_status({**cron_job, "status": status})
        except ApiError as err:
            if err.code == 404:
                return
            raise  # a conflict: the informer brings the newer CronJob, and the work queue retries

    def _jobs(self, obj: Obj) -> ResourceClient:
        return self.client.resource("batch", "v1", "jobs", obj["metadata"]["namespace"])

    def _cron_jobs(self, obj: Obj) -> ResourceClient:
        return self.client.resource("batch", "v1", "cronjobs", obj["metadata"]["namespace"])
