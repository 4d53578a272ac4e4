"""One server's CRD machinery, from its making to its stop: made in ``kplane_register_admission``
(which hands it the loopback client), started in ``kplane_post_start``, stopped in
``kplane_shutdown``. Kept by the server's Registry: a plugin module is shared by every server of
a process.

The CRDs are read through an informer of its own on the loopback client, as any client would;
each change is applied to this server's Scheme and Registry when the watch delivers it
(:mod:`~kplane.plugins.apiextensions.customresource.install`), so with several servers on one
storage each serves what the others created. A CRD's resource is served once it is
``Established``; it stays served while it is ``Terminating`` (new objects are refused then) and
goes with the CRD. What serving a CRD takes (its classes, validators, patterns and CEL
programs) is made in a worker thread, so a large schema does not hold up other requests; a
change that arrives meanwhile supersedes it. Start waits until the CRDs are listed and served, so a server that restarts
reports ready only once it serves every CRD stored before.

The names a plugin's kinds serve are taken for the naming controller (a CRD cannot shadow them),
and the finalizer deletes a CRD's objects through this server's Store of the CRD's own kind
(:class:`StoredInstances`), never a plugin's.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import Any
from weakref import WeakKeyDictionary

from kplane.api import (
    ConflictError, DeleteOptions, Handlers, ListOptions, Registry, RequestContext, RESTClient, SharedInformerFactory,
    Store, WebhookClient, wait_synced,
)
from kplane.plugins.apiextensions.controllers.conditions import is_true
from kplane.plugins.apiextensions.controllers.establishing import EstablishingController
from kplane.plugins.apiextensions.controllers.finalizer import FinalizerController
from kplane.plugins.apiextensions.controllers.naming import NamingController
from kplane.plugins.apiextensions.customresource import install
from kplane.plugins.apiextensions.customresource.resourcetype import CustomResourceType
from kplane.plugins.apiextensions.types import ESTABLISHED, GROUP

log = logging.getLogger(__name__)

RESOURCE = "customresourcedefinitions"


class APIExtensions:
    def __init__(self, registry: Registry, client: RESTClient) -> None:
        self.registry = registry
        self.informers = SharedInformerFactory(client)
        self.crds = self.informers.informer(GROUP, "v1", RESOURCE)
        self.crds.add_handlers(Handlers(on_add=self._changed, on_update=lambda old, new: self._changed(new),
                                        on_delete=self._deleted))
        # Services, to reach conversion webhooks named by ``clientConfig.service``
        self.services = self.informers.informer("", "v1", "services") if registry.scheme.resource("", "v1", "services") else None
        self.webhooks = WebhookClient(self.services.indexer.get if self.services is not None else None)
        self.controllers = [NamingController(self.crds, client, self._reserved), EstablishingController(self.crds, client),
                            FinalizerController(self.crds, client, StoredInstances(registry))]
        self._served: dict[str, tuple[str, str, str]] = {}  # CRD name -> (group, plural, resourceVersion)
        self._wanted: dict[str, tuple[str, str, str]] = {}  # the latest change of each, being prepared or served
        self._pending: set[asyncio.Task[None]] = set()  # changes being prepared
        self._tasks: list[asyncio.Task[None]] = []

    async def start(self, sync_timeout: float = 10.0) -> None:
        self.informers.start()
        self._tasks = [asyncio.create_task(c.run(), name=f"crd:{type(c).__name__}") for c in self.controllers]
        try:
            async with asyncio.timeout(sync_timeout):
                await wait_synced(*(i for i in (self.crds, self.services) if i is not None))
                await self._settled()
        except TimeoutError:
            log.warning("CustomResourceDefinitions not listed within %ss; served once they are", sync_timeout)

    async def stop(self) -> None:
        for task in [*self._tasks, *self._pending]:
            task.cancel()
        await asyncio.gather(*self._pending, return_exceptions=True)
        for task in self._tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        await self.informers.stop()
        await self.webhooks.close()

    def _changed(self, crd: dict[str, Any]) -> None:
        name = crd["metadata"]["name"]
        if not is_true(crd, ESTABLISHED):
            self._deleted(crd)
            return
        accepted = (crd.get("status") or {}).get("acceptedNames") or {}
        served = (crd["spec"]["group"], accepted.get("plural", ""), crd["metadata"].get("resourceVersion", ""))
        if served in (self._served.get(name), self._wanted.get(name)):
            return
        self._wanted[name] = served
        task = asyncio.create_task(self._serve(crd, served), name=f"crd:serve:{name}")
        self._pending.add(task)
        task.add_done_callback(self._pending.discard)

    async def _serve(self, crd: dict[str, Any], served: tuple[str, str, str]) -> None:
        """Prepare ``crd``'s kind in a worker thread (a large schema's validators, patterns and
        rules take a while to make), then serve it, unless a newer change of it came meanwhile."""
        name = crd["metadata"]["name"]
        try:
            prepared = await asyncio.to_thread(install.prepare, crd, self.webhooks)
        except Exception:
            log.exception("CustomResourceDefinition %s cannot be served", name)
            return
        if self._wanted.get(name) != served:
            return  # changed or deleted meanwhile: the newer change is served instead
        self._unserve(name)
        try:
            install.serve(self.registry, prepared)
        except ConflictError as err:
            log.warning("CustomResourceDefinition %s is not served: %s", name, err)
            return
        self._served[name] = served

    async def _settled(self) -> None:
        """Until every CRD change seen so far is served."""
        while self._pending:
            await asyncio.gather(*self._pending, return_exceptions=True)

    def _reserved(self, group: str) -> tuple[set[str], set[str]]:
        """The resource names and kinds of ``group`` served by plugins' kinds."""
        resources: set[str] = set()
        kinds: set[str] = set()
        for rt in self.registry.scheme.types():
            if rt.group == group and not isinstance(rt, CustomResourceType):
                resources.update((rt.plural, rt.singular, *rt.short_names))
                kinds.update((rt.kind, rt.list_kind))
        return resources, kinds

    def _deleted(self, crd: dict[str, Any]) -> None:
        self._wanted.pop(crd["metadata"]["name"], None)
        self._unserve(crd["metadata"]["name"])

    def _unserve(self, name: str) -> None:
        served = self._served.pop(name, None)
        if served is not None:
            install.unserve(self.registry, served[0], served[1])


class StoredInstances:
    """A CRD's objects as this server stores them (kube's finalizer goes to storage, too): every
    version, served or not, read and deleted in the storage version."""

    def __init__(self, registry: Registry) -> None:
        self.registry = registry

    def _store(self, crd: dict[str, Any]) -> tuple[Store, RequestContext] | None:
        plural = ((crd.get("status") or {}).get("acceptedNames") or {}).get("plural") or ""
        rt = self.registry.scheme.get(crd["spec"]["group"], plural)
        if not isinstance(rt, CustomResourceType) or rt.uid != crd["metadata"].get("uid"):
            return None  # not served here (or another CRD's): nothing of it can be stored
        store = self.registry.store(rt.group, rt.plural)
        assert store is not None
        return store, RequestContext(group=rt.group, version=rt.storage_version, resource=rt.plural)

    async def delete_all(self, crd: dict[str, Any]) -> None:
        found = self._store(crd)
        if found is not None:
            await found[0].delete_collection(found[1], ListOptions(), DeleteOptions())

    async def count(self, crd: dict[str, Any]) -> int:
        found = self._store(crd)
        return 0 if found is None else len((await found[0].list(found[1], ListOptions())).items)


_servers: WeakKeyDictionary[Registry, APIExtensions] = WeakKeyDictionary()


def create(registry: Registry, informers: SharedInformerFactory) -> APIExtensions:
    made = _servers[registry] = APIExtensions(registry, informers.client)
    return made


def of(registry: Registry) -> APIExtensions | None:
    return _servers.get(registry)


def forget(registry: Registry) -> APIExtensions | None:
    return _servers.pop(registry, None)
