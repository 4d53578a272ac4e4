"""Informers: a local, watch-fed copy of one resource, with change handlers (client-go style).

An :class:`Informer` lists the resource, then watches from the list's resourceVersion. A
dropped connection resumes the watch from the last version seen; a 410 Gone relists, and a
relist reports what changed meanwhile, including deletions the watch missed (as tombstones:
the last state the informer knew). ``synced`` is set after the first list.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import aiohttp

from core.client.rest import ApiError, ResourceClient

log = logging.getLogger(__name__)
Obj = dict[str, Any]


def object_key(obj: Obj) -> str:
    """``namespace/name``, or ``name`` for cluster-scoped objects (client-go's MetaNamespaceKeyFunc)."""
    meta = obj["metadata"]
    return f"{meta['namespace']}/{meta['name']}" if meta.get("namespace") else meta["name"]


@dataclass(frozen=True, slots=True)
class Handlers:
    on_add: Callable[[Obj], None] | None = None
    on_update: Callable[[Obj, Obj], None] | None = None
    on_delete: Callable[[Obj], None] | None = None


class Informer:
    def __init__(self, resource: ResourceClient, *, watch_timeout: int = 300, retry: float = 1.0) -> None:
        self.resource = resource
        self.watch_timeout = watch_timeout
        self.retry = retry
        self.items: dict[str, Obj] = {}
        self.synced = asyncio.Event()
        self._handlers: list[Handlers] = []
        self._rv = ""

    def add_handlers(self, handlers: Handlers) -> None:
        """Handlers see every change from now on; objects already known are replayed as adds."""
        self._handlers.append(handlers)
        if handlers.on_add is not None:
            for obj in list(self.items.values()):
                handlers.on_add(obj)

    async def run(self) -> None:
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
        fresh = {object_key(o): o for o in listing["items"]}
        for key, old in list(self.items.items()):
            if key not in fresh:
                self._delete(old)
        for obj in fresh.values():
            self._upsert(obj)
        self._rv = listing["metadata"]["resourceVersion"]
        self.synced.set()

    async def _watch(self) -> None:
        async for event in self.resource.watch(resource_version=self._rv, timeout_seconds=self.watch_timeout):
            self._rv = event.object["metadata"].get("resourceVersion") or self._rv
            if event.type in ("ADDED", "MODIFIED"):
                self._upsert(event.object)
            elif event.type == "DELETED":
                self._delete(event.object)

    def _upsert(self, obj: Obj) -> None:
        key = object_key(obj)
        old = self.items.get(key)
        self.items[key] = obj
        for h in self._handlers:
            if old is None and h.on_add is not None:
                h.on_add(obj)
            elif old is not None and h.on_update is not None and old["metadata"].get("resourceVersion") != obj["metadata"].get("resourceVersion"):
                h.on_update(old, obj)

    def _delete(self, obj: Obj) -> None:
        last = self.items.pop(object_key(obj), obj)
        for h in self._handlers:
            if h.on_delete is not None:
                h.on_delete(last if obj is last else obj)
