"""Encryption at rest as a Storage wrapper: values are transformed on their way to the backend
and back, per resource, as k8s.io/apiserver's etcd3 store applies its ``value.Transformer``.

It sits between a backend (SQLite, etcd) and the watch cache, so the cache, lists and watch
events hold plain values while the backend holds only what the transformer wrote. The
authenticated data of a value is its key. A value that cannot be read back does not fail the
read it is part of: it comes back as a KeyValue with ``unreadable`` set, which the registry
answers as a 500 for requests that touch that object (a get, a list of its resource, a watch event
of it), so one undecryptable object stops neither the watch cache nor the server. Compare-and-swap
stays on revisions, which the transformation does not touch; a value read with a key that no
longer writes is ``stale``, so the registry writes it again even when it did not change.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable

from kplane.core.storage.interface import KeyValue, ListResult, Storage, WatchEvent
from kplane.core.storage.transformers import ENCRYPTED_PREFIX, Transformer, TransformError

TransformerFor = Callable[[str], Transformer | None]  # a key -> its transformer (None: as is)
# What a value of a key stored as it is must not look like (``identity.NewEncryptCheckTransformer``,
# Kubernetes' default for resources no rule names): a server started without the configuration,
# or without the rule, that encrypted it answers 500 for it instead of failing to decode it.
_ENCRYPTED = "identity transformer tried to read encrypted data"


def untransformed(key: str) -> None:
    """Every key stored as it is: the server's storage without ``--encryption-provider-config``."""
    return None

# A list transforming more values than this does so on a thread: decrypting ~10,000 values
# costs tens of milliseconds the event loop must not stall for.
_INLINE_VALUES = 100


class TransformingStorage(Storage):
    """``inner`` with each value transformed by ``transformer_for(key)``; owns ``inner``."""

    def __init__(self, inner: Storage, transformer_for: TransformerFor) -> None:
        self._inner = inner
        self._transformer_for = transformer_for

    async def get(self, key: str) -> KeyValue | None:
        kv = await self._inner.get(key)
        return None if kv is None else self._read(kv)

    async def list(
        self,
        prefix: str,
        *,
        revision: int = 0,
        limit: int = 0,
        start_after: str = "",
        min_revision: int | None = None,
    ) -> ListResult:
        result = await self._inner.list(
            prefix, revision=revision, limit=limit, start_after=start_after, min_revision=min_revision
        )
        transformed = sum(1 for kv in result.items if self._transformer_for(kv.key) is not None)
        if not transformed and not any(kv.value.startswith(ENCRYPTED_PREFIX) for kv in result.items):
            return result
        if transformed <= _INLINE_VALUES:
            items = self._read_all(result.items)
        else:
            items = await asyncio.to_thread(self._read_all, result.items)
        return ListResult(items=items, revision=result.revision, more=result.more)

    async def create(self, key: str, value: bytes) -> KeyValue:
        kv = await self._inner.create(key, self._write(key, value))
        return KeyValue(key, value, kv.create_revision, kv.mod_revision)

    async def update(self, key: str, value: bytes, *, expected_revision: int) -> KeyValue:
        kv = await self._inner.update(key, self._write(key, value), expected_revision=expected_revision)
        return KeyValue(key, value, kv.create_revision, kv.mod_revision)

    async def delete(self, key: str, *, expected_revision: int = 0) -> KeyValue:
        return self._read(await self._inner.delete(key, expected_revision=expected_revision))

    def watch(self, prefix: str, *, from_revision: int) -> AsyncIterator[WatchEvent]:
        return _TransformedWatch(self, self._inner.watch(prefix, from_revision=from_revision))

    async def current_revision(self) -> int:
        return await self._inner.current_revision()

    async def compact(self, revision: int) -> None:
        await self._inner.compact(revision)

    async def health(self) -> None:
        await self._inner.health()

    async def size_bytes(self) -> int | None:
        return await self._inner.size_bytes()

    async def close(self) -> None:
        await self._inner.close()

    # -- the transformation --------------------------------------------------------------------

    def _write(self, key: str, value: bytes) -> bytes:
        if not isinstance(key, str) or not isinstance(value, bytes):  # as the backends refuse them
            raise TypeError(f"key must be str and value bytes, got {type(key)}, {type(value)}")
        transformer = self._transformer_for(key)
        return value if transformer is None else transformer.to_storage(value, key.encode())

    def _read(self, kv: KeyValue) -> KeyValue:
        try:
            value, stale = self._from_storage(kv.key, kv.value)
        except TransformError as err:
            return KeyValue(kv.key, kv.value, kv.create_revision, kv.mod_revision,
                            unreadable=f'unable to transform key "{kv.key}": {err}')
        if value is kv.value:
            return kv
        return KeyValue(kv.key, value, kv.create_revision, kv.mod_revision, stale=stale)

    def _from_storage(self, key: str, value: bytes) -> tuple[bytes, bool]:
        transformer = self._transformer_for(key)
        if transformer is not None:
            return transformer.from_storage(value, key.encode())
        if value.startswith(ENCRYPTED_PREFIX):
            raise TransformError(_ENCRYPTED)
        return value, False

    def _read_all(self, items: list[KeyValue]) -> list[KeyValue]:
        return [self._read(kv) for kv in items]

    def _read_event(self, event: WatchEvent) -> WatchEvent:
        kv = self._read(event.kv)
        prev = event.prev_value
        if prev is not None:
            try:
                prev, _ = self._from_storage(kv.key, prev)
            except TransformError:
                prev = None  # as a compacted previous value: selectors then see no old state
        if kv is event.kv and prev is event.prev_value:
            return event
        return WatchEvent(event.type, kv, prev)


class _TransformedWatch(AsyncIterator[WatchEvent]):
    """The inner watch's events, transformed; closing it closes the inner watch."""

    def __init__(self, storage: TransformingStorage, inner: AsyncIterator[WatchEvent]) -> None:
        self._storage = storage
        self._inner = inner

    def __aiter__(self) -> _TransformedWatch:
        return self

    async def __anext__(self) -> WatchEvent:
        return self._storage._read_event(await self._inner.__anext__())

    async def aclose(self) -> None:
        await self._inner.aclose()  # type: ignore[attr-defined]
