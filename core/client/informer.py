"""Informers: a local, watch-fed copy of one resource, with change handlers (client-go style).

An :class:`Informer` lists the resource, then watches from the list's resourceVersion. A
dropped connection resumes the watch from the last version seen; a 410 Gone relists, and a
relist reports what changed meanwhile, including deletions the watch missed (as tombstones:
the last state the informer knew). ``synced`` is set after the first list. With ``resync``,
every cached object is handed to the update handlers again periodically, so a controller that
missed nothing still gets to re-check its world. A ``transform`` changes each object before it is
cached (client-go's ``SetTransform``): :func:`strip_managed_fields` is kube-controller-manager's.

A :class:`SharedInformerFactory` gives every controller of a process the same informer (one
list and one watch) per resource.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import aiohttp

from kplane.core.client.cache import Indexer, Lister, object_key
from kplane.core.client.rest import ApiError, RESTClient, ResourceClient

log = logging.getLogger(__name__)
Obj = dict[str, Any]
Transform = Callable[[Obj], Obj]


def strip_managed_fields(obj: Obj) -> Obj:
    """``obj`` without ``metadata.managedFields``, what kube-controller-manager and kube-scheduler
    trim from their informers' objects: no controller reads them, and a write built from a
    cached object then carries none (the server keeps the stored ones, as kube-apiserver does
    for an update without them), so neither side decodes, copies or compares them per write."""
    obj["metadata"].pop("managedFields", None)  # each object is freshly decoded: its own to change
    return obj


@dataclass(frozen=True, slots=True)
class Handlers:
    """The callbacks an informer calls on each add, update and delete it sees (``ResourceEventHandlerFuncs``)."""

    on_add: Callable[[Obj], None] | None = None
    on_update: Callable[[Obj, Obj], None] | None = None
    on_delete: Callable[[Obj], None] | None = None

    @classmethod
    def for_any(cls, on_change: Callable[[Obj], None]) -> Handlers:
        """One callback for every add, update (with the new state) and delete: what a controller
        that only enqueues the object's key wants."""
        return cls(on_add=on_change, on_update=lambda old, new: on_change(new), on_delete=on_change)


class Informer:
    """One resource listed and watched into a local cache, calling handlers on each change (client-go's)."""

    def __init__(self, resource: ResourceClient, *, resync: float = 0.0, watch_timeout: int = 300, retry: float = 1.0,
                 transform: Transform | None = None) -> None:
        self.resource = resource
        self.transform = transform
        self.resync = resync
        self.watch_timeout = watch_timeout
        self.retry = retry
        self.indexer = Indexer()
        self.synced = asyncio.Event()
        self.started = False  # run() was called: ``synced`` will come (a server's start it before its informers)
        self._handlers: list[Handlers] = []
        self._rv = ""

    def add_handlers(self, handlers: Handlers) -> None:
        """Handlers see every change from now on; objects already known are replayed as adds."""
        self._handlers.append(handlers)
        if handlers.on_add is not None:
            for obj in self.indexer.list():
                _notify(handlers.on_add, obj)

    def lister(self) -> Lister:
        return Lister(self.indexer)

    async def run(self) -> None:
        self.started = True
        resyncing = asyncio.create_task(self._resync()) if self.resync > 0 else None
        try:
            await self._reflect()
        finally:
            if resyncing is not None:
                resyncing.cancel()

    async def _resync(self) -> None:
        while True:
            await asyncio.sleep(self.resync)
            for obj in self.indexer.list():
                for h in self._handlers:
                    if h.on_update is not None:
                        _notify(h.on_update, obj, obj)

    async def _reflect(self) -> None:
        while True:
            try:
                if not self._rv:
                    await self._relist()
                await self._watch()
            except ApiError as err:
                if err.code == 410:
                    self._rv = ""  # too old: the next round lists again
                    continue
                log.warning("informer %s: %s", self.resource.collection, err)
                await asyncio.sleep(self.retry)
            except (aiohttp.ClientError, asyncio.TimeoutError) as err:
                log.debug("informer %s: connection lost (%s)", self.resource.collection, err)
                await asyncio.sleep(self.retry)

    async def _relist(self) -> None:
        listing = await self.resource.list()
        items = listing["items"] if self.transform is None else [self.transform(o) for o in listing["items"]]
        fresh = {object_key(o): o for o in items}
        for key in self.indexer.keys():
            if key not in fresh:
                self._delete(self.indexer.get(key))  # type: ignore[arg-type]
        for obj in fresh.values():
            self._upsert(obj)
        self._rv = listing["metadata"]["resourceVersion"]
        self.synced.set()

    async def _watch(self) -> None:
        async for event in self.resource.watch(resource_version=self._rv, timeout_seconds=self.watch_timeout):
            self._rv = event.object["metadata"].get("resourceVersion") or self._rv
            if event.type not in ("ADDED", "MODIFIED", "DELETED"):
                continue  # a bookmark
            obj = event.object if self.transform is None else self.transform(event.object)
            if event.type == "DELETED":
                self._delete(obj)
            else:
                self._upsert(obj)

    def _upsert(self, obj: Obj) -> None:
        old = self.indexer.put(obj)
        for h in self._handlers:
            if old is None and h.on_add is not None:
                _notify(h.on_add, obj)
            elif old is not None and h.on_update is not None and old["metadata"].get("resourceVersion") != obj["metadata"].get("resourceVersion"):
                _notify(h.on_update, old, obj)

    def _delete(self, obj: Obj) -> None:
        self.indexer.pop(object_key(obj))
        for h in self._handlers:
            if h.on_delete is not None:
                _notify(h.on_delete, obj)


async def wait_synced(*informers: Informer) -> None:
    """Until every one of ``informers`` has listed (client-go's ``WaitForCacheSync``).

    One after the other rather than through ``asyncio.gather``: a gather cancelled at shutdown
    can leave a future whose CancelledError nobody retrieves, which asyncio logs as an error."""
    for informer in informers:
        await informer.synced.wait()


def _notify(handler: Callable[..., None], *objects: Obj) -> None:
    """Call one handler; its bug is logged, never allowed to stop the informer feeding the others."""
    try:
        handler(*objects)
    except Exception:
        log.exception("informer handler %s failed", getattr(handler, "__qualname__", handler))


class SharedInformerFactory:
    """One informer per resource per process, shared by every controller that asks for it."""

    def __init__(self, client: RESTClient, *, resync: float = 0.0, transform: Transform | None = None) -> None:
        self.client = client
        self.resync = resync
        self.transform = transform
        self._informers: dict[tuple[str, str, str], Informer] = {}
        self._tasks: dict[tuple[str, str, str], asyncio.Task[None]] = {}

    def informer(self, group: str, version: str, plural: str) -> Informer:
        key = (group, version, plural)
        if key not in self._informers:
            self._informers[key] = Informer(self.client.resource(group, version, plural), resync=self.resync,
                                             transform=self.transform)
        return self._informers[key]

    def resources(self) -> set[tuple[str, str, str]]:
        """The (group, version, plural) of every informer asked for so far."""
        return set(self._informers)

    def start(self) -> None:
        """Start every informer asked for so far that is not running yet (call again after adding)."""
        for key, informer in self._informers.items():
            if key not in self._tasks:
                self._tasks[key] = asyncio.create_task(informer.run(), name=f"informer:{'/'.join(key)}")

    async def wait_for_cache_sync(self, timeout: float | None = None) -> bool:
        """True once every started informer has listed; False on timeout."""
        try:
            async with asyncio.timeout(timeout):
                await wait_synced(*(self._informers[key] for key in self._tasks))
        except TimeoutError:
            return False
        return True

    async def remove(self, group: str, version: str, plural: str) -> None:
        """Forget one informer, stopping it if it runs (its resource is no longer served)."""
        key = (group, version, plural)
        self._informers.pop(key, None)
        task = self._tasks.pop(key, None)
        if task is not None:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)

    async def stop(self) -> None:
        for task in self._tasks.values():
            task.cancel()
        await asyncio.gather(*self._tasks.values(), return_exceptions=True)
        self._tasks.clear()
