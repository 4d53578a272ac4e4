"""Each storage call's latency, per operation and resource, as kube-apiserver's etcd3 store
records ``etcd_request_duration_seconds``: a wrapper, so every backend is measured the same way
and none of them knows about metrics."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Awaitable
from typing import TypeVar

from kplane.core.metrics.storage import StorageMetrics
from kplane.core.storage.interface import KeyValue, ListResult, Storage, StorageError, WatchEvent
from kplane.core.storage.keys import resource_of_key

T = TypeVar("T")


class MeasuredStorage(Storage):
    """``inner``, its reads and writes timed into ``metrics``; owns ``inner``. Watches are not
    timed (they last as long as they are followed)."""

    def __init__(self, inner: Storage, metrics: StorageMetrics) -> None:
        self._inner = inner
        self._metrics = metrics
        metrics.size = self._scraped_size

    async def _timed(self, operation: str, key: str | None, call: Awaitable[T]) -> T:
        """``call``, timed as ``operation`` on the resource ``key`` is under (None: none)."""
        start = time.perf_counter()
        try:
            return await call
        finally:
            self._metrics.observe(operation, resource_of_key(key) if key is not None else None,
                                  time.perf_counter() - start)

    async def get(self, key: str) -> KeyValue | None:
        return await self._timed("get", key, self._inner.get(key))

    async def list(
        self,
        prefix: str,
        *,
        revision: int = 0,
        limit: int = 0,
        start_after: str = "",
        min_revision: int | None = None,
    ) -> ListResult:
        return await self._timed("list", prefix, self._inner.list(
            prefix, revision=revision, limit=limit, start_after=start_after, min_revision=min_revision))

    async def create(self, key: str, value: bytes) -> KeyValue:
        return await self._timed("create", key, self._inner.create(key, value))

    async def update(self, key: str, value: bytes, *, expected_revision: int) -> KeyValue:
        return await self._timed("update", key, self._inner.update(key, value, expected_revision=expected_revision))

    async def delete(self, key: str, *, expected_revision: int = 0) -> KeyValue:
        return await self._timed("delete", key, self._inner.delete(key, expected_revision=expected_revision))

    def watch(self, prefix: str, *, from_revision: int) -> AsyncIterator[WatchEvent]:
        return self._inner.watch(prefix, from_revision=from_revision)

    async def current_revision(self) -> int:
        return await self._inner.current_revision()

    async def compact(self, revision: int) -> None:
        await self._timed("compact", None, self._inner.compact(revision))

    async def health(self) -> None:
        await self._inner.health()

    async def size_bytes(self) -> int | None:
        return await self._inner.size_bytes()

    async def close(self) -> None:
        await self._inner.close()

    async def _scraped_size(self) -> int | None:
        """The size for a scrape: a backend that cannot answer now leaves the figure out."""
        try:
            return await self._inner.size_bytes()
        except StorageError:
            return None
