"""The TTL-after-finished controller (kube-controller-manager's ``pkg/controller/ttlafterfinished``).

A Job with ``ttlSecondsAfterFinished`` that finished (its Complete or Failed condition True) is
deleted that many seconds after it finished (``completionTime``, else the condition's
lastTransitionTime), with foreground propagation and its uid as precondition. Before deleting,
the Job is read fresh from the server, as kube does, so a TTL changed since the cache saw it is
honoured; until then it is looked at again when it expires.
"""

from __future__ import annotations

import time
from typing import Any

from kplane.api import (
    ApiError, EventRecorder, Handlers, RESTClient, SharedInformerFactory, WorkQueue, Workers, clock, object_key,
    ownership as own, wait_synced,
)
from kplane.plugins.batch.controllers.job.controller import finished_condition

Obj = dict[str, Any]

COMPONENT = "ttl-after-finished-controller"


def expires_in(job: Obj, now: float) -> float | None:
    """Seconds until the finished ``job`` expires (0 or less: it has); None when it never does."""
    ttl = own.spec(job).get("ttlSecondsAfterFinished")
    done = finished_condition(job)
    if ttl is None or done is None or job["metadata"].get("deletionTimestamp"):
        return None
    finished = (job.get("status") or {}).get("completionTime") if done["type"] == "Complete" else None
    finished = finished or done.get("lastTransitionTime")
    if not finished:
        return None
    return clock.epoch(finished) + ttl - now


class TTLAfterFinishedController:
    def __init__(self, client: RESTClient, informers: SharedInformerFactory, *, workers: int = 5) -> None:
        self.client = client
        self.informers = informers
        self.workers = workers
        self.job_informer = informers.informer("batch", "v1", "jobs")
        self.queue: WorkQueue[str] = WorkQueue()
        self.recorder = EventRecorder(client, COMPONENT)

    async def run(self) -> None:
        self.job_informer.add_handlers(Handlers(on_add=self._changed, on_update=lambda _, job: self._changed(job)))
        self.informers.start()
        async with Workers(self.queue, self.recorder) as workers:
            await wait_synced(self.job_informer)
            workers.start(self.workers, self._sync, name="ttl-after-finished")
            await workers.wait()

    def _changed(self, job: Obj) -> None:
        if expires_in(job, time.time()) is not None:
            self.queue.add(object_key(job))

    async def _sync(self, key: str) -> None:
        job = self.job_informer.indexer.get(key)
        if job is None:
            return
        left = expires_in(job, time.time())
        if left is None:
            return
        if left > 0:
            self.queue.add_after(key, left)
            return
        namespace, name = job["metadata"]["namespace"], job["metadata"]["name"]
        jobs = self.client.resource("batch", "v1", "jobs", namespace)
        try:
            fresh = await jobs.get(name)
        except ApiError as err:
            if err.code == 404:
                return
            raise
        left = expires_in(fresh, time.time())
        if left is None:
            return
        if left > 0:
            self.queue.add_after(key, left)
            return
        options = {"kind": "DeleteOptions", "apiVersion": "v1", "propagationPolicy": "Foreground",
                   "preconditions": {"uid": own.uid(fresh)}}
        try:
            await self.client.request("DELETE", f"/apis/batch/v1/namespaces/{namespace}/jobs/{name}", options)
        except ApiError as err:
            if err.code not in (404, 409):
                raise
