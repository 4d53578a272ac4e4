"""Namespace deletion (kube-controller-manager's namespace controller).

Deleting a namespace only marks it: it stays, Terminating, while it holds the ``kubernetes``
finalizer in ``spec.finalizers``. This controller deletes every namespaced resource of every
group inside it, waits until nothing is left (objects with finalizers can take a while), then
removes its finalizer through ``/finalize``, which lets the server remove the namespace.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import aiohttp

from kplane.api import ApiError, RESTClient, WorkQueue, server_resources, work

log = logging.getLogger(__name__)
FINALIZER = "kubernetes"


class NamespaceController:
    def __init__(self, client: RESTClient, *, recheck: float = 1.0) -> None:
        self.client = client
        self.namespaces = client.resource("", "v1", "namespaces")
        self.recheck = recheck  # seconds before looking again at a namespace that is not empty yet
        self.queue: WorkQueue[str] = WorkQueue()

    async def run(self) -> None:
        worker = asyncio.create_task(work(self.queue, self._process, name="namespace"))
        try:
            await self._watch()
        finally:
            worker.cancel()

    def _enqueue(self, namespace: dict[str, Any]) -> None:
        if namespace["metadata"].get("deletionTimestamp"):
            self.queue.add(namespace["metadata"]["name"])

    async def _watch(self) -> None:
        """List, then watch from the list's version; relist when the watch ends or expires."""
        while True:
            try:
                listing = await self.namespaces.list()
                for item in listing["items"]:
                    self._enqueue(item)
                rv = listing["metadata"]["resourceVersion"]
                async for event in self.namespaces.watch(resource_version=rv, timeout_seconds=300):
                    if event.type in ("ADDED", "MODIFIED"):
                        self._enqueue(event.object)
            except (ApiError, aiohttp.ClientError, asyncio.TimeoutError) as err:
                log.debug("namespace watch ended (%s); listing again", err)
                await asyncio.sleep(self.recheck)

    async def _process(self, name: str) -> None:
        if not await self.sync(name):
            self.queue.add_after(name, self.recheck)  # content still going away: look again soon

    async def sync(self, name: str) -> bool:
        """One pass over a namespace; True when there is nothing more to do for it."""
        try:
            namespace = await self.namespaces.get(name)
        except ApiError as err:
            if err.code == 404:
                return True
            raise
        if not namespace["metadata"].get("deletionTimestamp"):
            return True
        if await self._delete_content(name):
            return False
        finalizers = namespace.get("spec", {}).get("finalizers") or []
        if FINALIZER in finalizers:
            namespace["spec"]["finalizers"] = [f for f in finalizers if f != FINALIZER]
            try:
                await self.namespaces.update(namespace, subresource="finalize")
            except ApiError as err:
                if err.code in (404, 409):
                    return err.code == 404
                raise
        return True

    async def _delete_content(self, namespace: str) -> int:
        """Delete everything in the namespace; returns how many objects are still there."""
        remaining = 0
        for resource in await server_resources(self.client):
            if not resource.namespaced or not {"list", "deletecollection"} <= resource.verbs:
                continue
            client = self.client.resource(resource.group, resource.version, resource.plural, namespace)
            try:
                await client.delete_collection()
                remaining += len((await client.list())["items"])
            except ApiError as err:
                if err.code not in (404, 405):
                    raise
        return remaining
