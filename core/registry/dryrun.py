"""Dry run (``?dryRun=All``) as a storage that persists nothing.

A dry-run request runs the Store's ordinary code, from defaulting to admission, against a
:class:`DryRunStorage` made for it: reads go to the real storage, writes are checked as the real
one checks them (a create of an existing key, an update at a stale revision) and answered with
what would be stored, remembered so that the request's later steps see its earlier ones (a
delete that marks an object, then removes it). No revision is spent: a created object has no
resourceVersion yet, an updated one keeps the stored one, as kube-apiserver answers dry runs.

``list`` reads the real storage only, without the request's own writes: no Store path lists
after it wrote (the Store lists through its own storage, and a deletecollection lists before it
deletes), so merging them in would be code no request runs. ``watch`` and ``compact`` are not offered: a watch is no write and never dry,
and compaction is the server's maintenance, never a request's.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

from kplane.core.storage import interface as st


class DryRunStorage(st.Storage):
    """One dry-run request's view of ``storage``; watching and maintenance are not for requests."""

    def __init__(self, storage: st.Storage) -> None:
        self._storage = storage
        self._written: dict[str, st.KeyValue | None] = {}  # None: deleted by this request

    async def get(self, key: str) -> st.KeyValue | None:
        if key in self._written:
            return self._written[key]
        return await self._storage.get(key)

    async def list(self, prefix: str, *, revision: int = 0, limit: int = 0, start_after: str = "",
                   min_revision: int | None = None) -> st.ListResult:
        return await self._storage.list(prefix, revision=revision, limit=limit, start_after=start_after,
                                        min_revision=min_revision)

    async def create(self, key: str, value: bytes) -> st.KeyValue:
        if await self.get(key) is not None:
            raise st.KeyExistsError(key)
        kv = self._written[key] = st.KeyValue(key, value, 0, 0)
        return kv

    async def update(self, key: str, value: bytes, *, expected_revision: int) -> st.KeyValue:
        current = await self._current(key, expected_revision)
        kv = self._written[key] = st.KeyValue(key, value, current.create_revision, current.mod_revision)
        return kv

    async def delete(self, key: str, *, expected_revision: int = 0) -> st.KeyValue:
        current = await self._current(key, expected_revision)
        self._written[key] = None
        return current

    async def _current(self, key: str, expected_revision: int) -> st.KeyValue:
        current = await self.get(key)
        if current is None:
            raise st.KeyNotFoundError(key)
        if expected_revision and current.mod_revision != expected_revision:
            raise st.ConflictError(key, expected_revision, current.mod_revision)
        return current

    def watch(self, prefix: str, *, from_revision: int) -> AsyncIterator[st.WatchEvent]:
        raise NotImplementedError("a dry run does not watch")

    async def current_revision(self) -> int:
        return await self._storage.current_revision()

    async def compact(self, revision: int) -> None:
        raise NotImplementedError("a dry run does not compact")

    async def health(self) -> None:
        await self._storage.health()

    async def close(self) -> None:
        """Nothing to release: the real storage is not this request's to close."""
