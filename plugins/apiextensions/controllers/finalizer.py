"""The ``customresourcecleanup.apiextensions.k8s.io`` finalizer (apiextensions-apiserver's
``CRDFinalizer``): a deleted CRD's custom resources are all deleted before the CRD goes.

A CRD being deleted (``Terminating``: the first delete added the finalizer) gets
``InstanceDeletionInProgress``; every object of it is deleted (in every namespace); once none is
left the condition says ``InstanceDeletionCompleted`` and the finalizer is removed, so the
CRD is gone and its endpoints with it. Objects that are still there (finalizers of their own)
are looked for again every few seconds, with ``InstanceDeletionCheck`` saying what was found.
"""

from __future__ import annotations

import logging
from typing import Any

from kplane.api import ApiError, Handlers, Informer, RESTClient, WorkQueue, Workers
from kplane.plugins.apiextensions.controllers.conditions import with_condition
from kplane.plugins.apiextensions.types import CLEANUP_FINALIZER, GROUP, TERMINATING

log = logging.getLogger(__name__)

RESOURCE = "customresourcedefinitions"
RECHECK_SECONDS = 5.0


class InstancesRemain(Exception):
    """Objects of the CRD are still there; looked for again later."""


class FinalizerController:
    def __init__(self, crds: Informer, client: RESTClient) -> None:
        self.crds = crds
        self.client = client
        self.queue: WorkQueue[str] = WorkQueue()
        crds.add_handlers(Handlers.for_any(self._enqueue))

    def _enqueue(self, crd: dict[str, Any]) -> None:
        meta = crd["metadata"]
        if meta.get("deletionTimestamp") and CLEANUP_FINALIZER in (meta.get("finalizers") or []):
            self.queue.add(meta["name"])

    async def run(self) -> None:
        async with Workers(self.queue) as workers:
            await self.crds.synced.wait()
            workers.start(1, self.sync, name="crd finalizer", retryable=(InstancesRemain,))
            await workers.wait()

    async def sync(self, name: str) -> None:
        crd = self.crds.indexer.get(name)
        if crd is None or not crd["metadata"].get("deletionTimestamp"):
            return
        if CLEANUP_FINALIZER not in (crd["metadata"].get("finalizers") or []):
            return
        crds = self.client.resource(GROUP, "v1", RESOURCE)
        crd = await crds.update_status(with_condition(crd, TERMINATING, "True", "InstanceDeletionInProgress",
                                                      "CustomResource deletion is in progress"))
        remaining = await self._delete_instances(crd)
        if remaining:
            await crds.update_status(with_condition(crd, TERMINATING, "True", "InstanceDeletionCheck",
                                                    f"could not confirm zero CustomResources remaining: {remaining} found"))
            self.queue.add_after(name, RECHECK_SECONDS)
            return
        crd = await crds.update_status(with_condition(crd, TERMINATING, "False", "InstanceDeletionCompleted",
                                                      "removed all instances"))
        crd["metadata"]["finalizers"] = [f for f in crd["metadata"].get("finalizers") or [] if f != CLEANUP_FINALIZER]
        try:
            await crds.update(crd)
        except ApiError as err:
            if err.code != 404:
                raise

    async def _delete_instances(self, crd: dict[str, Any]) -> int:
        """Delete every object of ``crd``; how many are still there after."""
        accepted = (crd.get("status") or {}).get("acceptedNames") or {}
        plural = accepted.get("plural")
        version = next((v["name"] for v in crd["spec"].get("versions") or [] if v.get("served")), None)
        if not plural or version is None:
            return 0  # never served: nothing was stored
        resource = self.client.resource(crd["spec"]["group"], version, plural)
        try:
            listed = await resource.list()
        except ApiError as err:
            if err.code == 404:
                return 0
            raise
        for item in listed["items"]:
            meta = item["metadata"]
            namespaced = self.client.resource(crd["spec"]["group"], version, plural, meta.get("namespace"))
            if meta.get("deletionTimestamp"):
                continue
            try:
                await namespaced.delete(meta["name"])
            except ApiError as err:
                if err.code != 404:
                    raise
        return len((await resource.list())["items"])
