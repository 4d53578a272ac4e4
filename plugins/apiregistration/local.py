"""Local APIServices: one per group/version this server serves itself, kept by the server
(kube-aggregator's ``autoregister`` controller in its "sync on start" mode).

They carry the label ``kube-aggregator.kubernetes.io/automanaged: onstart``. On every start each
served group/version gets its APIService created, or its spec put back when it differs (changed
priorities, or a backend a user gave it: a group served here is served here again after a
restart, as kube-aggregator's autoregister does), and automanaged Local ones for group/versions no
longer served here are deleted. An APIService without the label is the user's and never touched.

Groups that come and go while the server runs (those of CustomResourceDefinitions) are followed by
:class:`LocalSync`: every change of the scheme syncs again, several changes in a row once. Their
APIServices are those kube-aggregator's ``crdregistration`` controller asks for: labelled
``automanaged: "true"`` (kept in step continuously), ``groupPriorityMinimum`` 1000 and
``versionPriority`` 100 for every version (kube-aggregator then orders them as Kubernetes versions).
A group/version served by a plugin's kind (:attr:`ResourceType.built_in`) is a built-in one even
if a CRD serves it too, as ``crdregistration`` leaves group/versions kube-apiserver serves alone.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from weakref import WeakKeyDictionary

from kplane.api import APIError, DeleteOptions, ListOptions, ObjectMeta, Registry, RequestContext
from kplane.plugins.apiregistration.apiservices import GROUP, is_local, priorities
from kplane.plugins.apiregistration.strategy import AVAILABLE, LOCAL_REASON, local_condition
from kplane.plugins.apiregistration.types import APIService, APIServiceSpec

log = logging.getLogger(__name__)

AUTOMANAGED = "kube-aggregator.kubernetes.io/automanaged"
ON_START = "onstart"
CONTINUOUSLY = "true"  # autoregister's value for the APIServices of CRD groups
#: crdregistration's priorities: CRDs rank low, their versions sorted as any equal ones are.
CRD_GROUP_PRIORITY, CRD_VERSION_PRIORITY = 1000, 100


def desired(registry: Registry) -> dict[str, APIService]:
    """The Local APIService of each group/version the scheme serves: a built-in one's with the
    group's priorities, one only CRDs serve with crdregistration's."""
    scheme = registry.scheme
    wanted: dict[str, APIService] = {}
    for group, versions in scheme.groups().items():
        built_in = [v for v in versions if any(rt.built_in for rt in scheme.resources_in(group, v))]
        found = {v: (*p, ON_START) for v, p in priorities(group, built_in).items()}
        found.update({v: (CRD_GROUP_PRIORITY, CRD_VERSION_PRIORITY, CONTINUOUSLY) for v in versions if v not in found})
        for version, (group_priority, version_priority, managed) in found.items():
            name = f"{version}.{group}"
            wanted[name] = APIService(
                metadata=ObjectMeta(name=name, labels={AUTOMANAGED: managed}),
                spec=APIServiceSpec(group=group, version=version, group_priority_minimum=group_priority,
                                    version_priority=version_priority),
            )
    return wanted


async def sync_local_api_services(registry: Registry) -> None:
    store = registry.store(GROUP, "apiservices")
    status_store = registry.store(GROUP, "apiservices", "status")
    assert store is not None and status_store is not None
    ctx = RequestContext(group=GROUP, version="v1", resource="apiservices")
    wanted = desired(registry)
    for name, api_service in wanted.items():
        existing = await store.get_internal("", name)
        try:
            if existing is None:
                await store.create(_named(ctx, name), api_service)
                continue
            if (existing.metadata.labels or {}).get(AUTOMANAGED) is None:
                continue  # the user's: left alone
            if existing.spec != api_service.spec:
                await store.update(_named(ctx, name), name, _replacing_spec(api_service))
            if not _locally_available(existing):  # say so even if an older server wrote otherwise
                await status_store.update(_named(ctx, name, "status"), name, _marking_local)
        except APIError as err:
            if err.code != 409:  # another server on the same storage got there first
                raise
    page = await store.list(ctx, ListOptions())
    for item in page.items:
        meta = item.obj["metadata"]
        name = meta["name"]
        stale = (meta.get("labels") or {}).get(AUTOMANAGED) is not None and name not in wanted
        if stale and is_local(item.obj):
            log.info("deleting the Local APIService %s: its group/version is no longer served here", name)
            try:
                await store.delete(_named(ctx, name), name, DeleteOptions())
            except APIError as err:
                if err.code != 404:
                    raise


class LocalSync:
    """The Local APIServices kept in step with the scheme from start to shutdown."""

    def __init__(self, registry: Registry) -> None:
        self.registry = registry
        self._task: asyncio.Task[None] | None = None
        self._again = False
        self._remove: Callable[[], None] | None = None

    async def start(self) -> None:
        await sync_local_api_services(self.registry)
        self._remove = self.registry.scheme.add_listener(self._changed)

    def _changed(self) -> None:
        self._again = True
        if self._task is None or self._task.done():
            self._task = asyncio.get_running_loop().create_task(self._run(), name="local-apiservices")

    async def _run(self) -> None:
        while self._again:
            self._again = False
            await asyncio.sleep(0)  # the rest of a change made of several steps first
            try:
                await sync_local_api_services(self.registry)
            except APIError as err:
                log.warning("could not sync the Local APIServices: %s", err)

    async def stop(self) -> None:
        if self._remove is not None:
            self._remove()
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task


_syncs: WeakKeyDictionary[Registry, LocalSync] = WeakKeyDictionary()


async def start(registry: Registry) -> None:
    syncing = _syncs[registry] = LocalSync(registry)
    await syncing.start()


async def stop(registry: Registry) -> None:
    syncing = _syncs.pop(registry, None)
    if syncing is not None:
        await syncing.stop()


def _named(ctx: RequestContext, name: str, subresource: str = "") -> RequestContext:
    return RequestContext(group=ctx.group, version=ctx.version, resource=ctx.resource, subresource=subresource, name=name)


def _replacing_spec(wanted: APIService) -> Callable[[APIService], Awaitable[APIService]]:
    async def updater(old: APIService) -> APIService:
        old.spec = wanted.spec
        return old
    return updater


def _locally_available(api_service: APIService) -> bool:
    return any(c.type == AVAILABLE and c.status == "True" and c.reason == LOCAL_REASON
               for c in api_service.status.conditions or [])


async def _marking_local(old: APIService) -> APIService:
    kept = [c for c in old.status.conditions or [] if c.type != AVAILABLE]
    old.status.conditions = [*kept, local_condition()]
    return old
