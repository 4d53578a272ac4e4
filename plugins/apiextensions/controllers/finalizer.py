"""The ``customresourcecleanup.apiextensions.k8s.io`` finalizer (apiextensions-apiserver's
``CRDFinalizer``): a deleted CRD's custom resources are all deleted before the CRD goes.

A CRD being deleted (the first delete added the finalizer and said ``Terminating``,
``InstanceDeletionPending``) gets ``InstanceDeletionInProgress``; if it was ever established
every object of it is deleted, in every namespace and whatever version it is stored in, straight
from storage as Kubernetes does (:class:`Instances`, given by the server: a client could reach
only the versions still served). The controller then waits a while for them to be gone (objects
with finalizers of their own stay until those are done): if some remain the condition says
``InstanceDeletionCheck`` and the CRD is looked at again later; once none is left it says
``InstanceDeletionCompleted``, the finalizer is removed and the CRD is gone, its endpoints with it.
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any, Protocol

from kplane.api import ApiError, Handlers, Informer, RESTClient, WorkQueue, Workers
from kplane.plugins.apiextensions.controllers.conditions import is_true, with_condition
from kplane.plugins.apiextensions.types import CLEANUP_FINALIZER, ESTABLISHED, GROUP, TERMINATING

log = logging.getLogger(__name__)

RESOURCE = "customresourcedefinitions"
#: Stored where a CRD's objects would be, but a built-in kind's (their objects are never deleted).
OVERLAPPING_BUILT_IN = {("apiregistration.k8s.io", "apiservices"), (GROUP, RESOURCE)}


class Instances(Protocol):
    """A CRD's objects in storage, wherever they are served from."""

    async def delete_all(self, crd: dict[str, Any]) -> None:
        """Delete every object of ``crd`` (those with finalizers are marked deleted)."""

    async def count(self, crd: dict[str, Any]) -> int:
        """How many objects of ``crd`` are still stored."""


class FinalizerController:
    #: How long one sync waits for the objects to go (polling every ``POLL_SECONDS``), and when
    #: it looks again after that.
    WAIT_SECONDS, POLL_SECONDS, RECHECK_SECONDS = 5.0, 0.2, 2.0

    def __init__(self, crds: Informer, client: RESTClient, instances: Instances) -> None:
        self.crds = crds
        self.client = client
        self.instances = instances
        self.queue: WorkQueue[str] = WorkQueue()
        crds.add_handlers(Handlers(on_add=self._enqueue, on_update=self._updated))

    def _enqueue(self, crd: dict[str, Any]) -> None:
        meta = crd["metadata"]
        if meta.get("deletionTimestamp") and CLEANUP_FINALIZER in (meta.get("finalizers") or []):
            self.queue.add(meta["name"])

    def _updated(self, old: dict[str, Any], new: dict[str, Any]) -> None:
        """Not when only the Terminating condition changed: that is this controller's own
        write, and its failures come back through the queue (no hot loop)."""
        if old["metadata"].get("resourceVersion") == new["metadata"].get("resourceVersion") \
                or _without_terminating(old) != _without_terminating(new):
            self._enqueue(new)

    async def run(self) -> None:
        async with Workers(self.queue) as workers:
            await self.crds.synced.wait()
            workers.start(5, self.sync, name="crd finalizer")
            await workers.wait()

    async def sync(self, name: str) -> None:
        crd = self.crds.indexer.get(name)
        if crd is None or not crd["metadata"].get("deletionTimestamp"):
            return
        if CLEANUP_FINALIZER not in (crd["metadata"].get("finalizers") or []):
            return
        crds = self.client.resource(GROUP, "v1", RESOURCE)
        try:
            crd = await crds.update_status(with_condition(crd, TERMINATING, "True", "InstanceDeletionInProgress",
                                                          "CustomResource deletion is in progress"))
        except ApiError as err:
            if err.code in (404, 409):
                return  # deleted or changed meanwhile: it comes again
            raise
        plural = ((crd.get("status") or {}).get("acceptedNames") or {}).get("plural") or crd["spec"]["names"]["plural"]
        if (crd["spec"]["group"], plural) in OVERLAPPING_BUILT_IN:
            crd = with_condition(crd, TERMINATING, "False", "OverlappingBuiltInResource",
                                 "instances overlap with built-in resources in storage")
        elif is_true(crd, ESTABLISHED):
            if not await self._delete_instances(crd):
                await crds.update_status(with_condition(
                    crd, TERMINATING, "True", "InstanceDeletionCheck",
                    "could not confirm zero CustomResources remaining: timed out waiting for the condition"))
                self.queue.add_after(name, self.RECHECK_SECONDS)
                return
            crd = with_condition(crd, TERMINATING, "False", "InstanceDeletionCompleted", "removed all instances")
        else:
            crd = with_condition(crd, TERMINATING, "False", "NeverEstablished", "resource was never established")
        try:
            crd = await crds.update_status(crd)
            crd["metadata"]["finalizers"] = [f for f in crd["metadata"].get("finalizers") or [] if f != CLEANUP_FINALIZER]
            await crds.update(crd)
        except ApiError as err:
            if err.code not in (404, 409):
                raise

    async def _delete_instances(self, crd: dict[str, Any]) -> bool:
        """Delete every object of ``crd``; whether none is left within ``WAIT_SECONDS``."""
        await self.instances.delete_all(crd)
        deadline = time.monotonic() + self.WAIT_SECONDS
        while (remaining := await self.instances.count(crd)) and time.monotonic() < deadline:
            await asyncio.sleep(self.POLL_SECONDS)
        if remaining:
            log.info("%s waiting for %d items to be removed", crd["metadata"]["name"], remaining)
        return not remaining


def _without_terminating(crd: dict[str, Any]) -> dict[str, Any]:
    meta = {k: v for k, v in crd["metadata"].items() if k not in ("resourceVersion", "managedFields")}
    status = dict(crd.get("status") or {})
    status["conditions"] = [c for c in status.get("conditions") or [] if c.get("type") != TERMINATING]
    return {**crd, "metadata": meta, "status": status}
