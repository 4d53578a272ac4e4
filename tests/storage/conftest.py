"""Fixtures that run the storage contract against every backend listed in ``BACKENDS``.

A backend is an async factory ``(directory, **options) -> Storage``; adding etcd or a watch-cache
wrapper around another backend means adding one entry. Options are backend-neutral names that a
factory maps to its own knobs: ``compact_interval`` and ``keep_revisions`` (periodic compaction;
the suite disables it unless a test asks) and ``watch_queue_size`` (events a watcher may lag).
"""

from __future__ import annotations

import itertools
import os
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from kplane.core.storage.cacher import CachedStorage
from kplane.core.storage.etcd import EtcdStorage
from kplane.core.storage.interface import Storage
from kplane.core.storage.sqlite import SQLiteStorage
from kplane.core.storage.transformed import TransformingStorage
from kplane.core.storage.transformers import AESGCM_PREFIX, AESGCMTransformer, Prefixed, PrefixTransformers
from tests.etcd_process import ETCD, shared

StorageFactory = Callable[..., Awaitable[Storage]]


async def _open_sqlite(
    directory: Path,
    *,
    compact_interval: float = 0.0,
    keep_revisions: int = 1000,
    watch_queue_size: int = 10_000,
    shared: bool = False,
) -> Storage:
    return await SQLiteStorage.open(
        str(directory / "kplane.db"),
        compact_interval=compact_interval,
        keep_revisions=keep_revisions,
        watch_queue_size=watch_queue_size,
        shared=shared,
    )


async def _open_shared_sqlite(directory: Path, **options: Any) -> Storage:
    """SQLite opened as each of `kplane serve --workers N` opens it: every event is read back
    from the log by the follower, which also answers the writer's callers."""
    return await _open_sqlite(directory, shared=True, **options)


async def _open_cached_sqlite(directory: Path, *, watch_queue_size: int = 10_000, **compaction: Any) -> Storage:
    """The watch cache over SQLite: compaction is the backend's, the queue the cache watchers'."""
    inner = await _open_sqlite(directory, **compaction)
    return await CachedStorage.open(inner, watch_queue_size=watch_queue_size)


_etcd_prefixes = itertools.count()


async def _open_etcd(
    directory: Path,
    *,
    compact_interval: float = 0.0,
    keep_revisions: int = 1000,
    watch_queue_size: int = 10_000,
) -> Storage:
    if ETCD is None:
        pytest.skip("etcd is not on PATH (.ci/run installs the etcd-server package)")
    return await EtcdStorage.open(
        [shared().endpoint],
        prefix=f"/contract-{next(_etcd_prefixes)}",
        compact_interval=compact_interval,
        keep_revisions=keep_revisions,
        watch_queue_size=watch_queue_size,
    )


async def _open_cached_etcd(directory: Path, *, watch_queue_size: int = 10_000, **compaction: Any) -> Storage:
    """The watch cache over etcd, as `kplane serve --storage etcd://...` runs by default."""
    inner = await _open_etcd(directory, **compaction)
    return await CachedStorage.open(inner, watch_queue_size=watch_queue_size)


async def _open_encrypted_sqlite(directory: Path, **options: Any) -> Storage:
    """SQLite with every value encrypted at rest (AES-GCM), as `--encryption-provider-config`
    stores the resources it names: the contract holds for the plain values above it."""
    key = PrefixTransformers([Prefixed(b"key1:", AESGCMTransformer(os.urandom(32)))], "no matching key")
    encrypted = PrefixTransformers([Prefixed(AESGCM_PREFIX, key)], "no matching prefix found")
    return TransformingStorage(await _open_sqlite(directory, **options), lambda key: encrypted)


BACKENDS: dict[str, Callable[..., Awaitable[Storage]]] = {
    "sqlite": _open_sqlite,
    "cached-sqlite": _open_cached_sqlite,
    "shared-sqlite": _open_shared_sqlite,
    "etcd": _open_etcd,
    "cached-etcd": _open_cached_etcd,
    "encrypted-sqlite": _open_encrypted_sqlite,
}


@pytest.fixture(params=sorted(BACKENDS))
async def storage_factory(
    request: pytest.FixtureRequest, tmp_path: Path
) -> AsyncIterator[StorageFactory]:
    """Opens fresh, empty storages of the parametrized backend; closes them after the test."""
    opened: list[Storage] = []

    async def make(**options: Any) -> Storage:
        storage = await BACKENDS[request.param](tmp_path / f"storage-{len(opened)}", **options)
        opened.append(storage)
        return storage

    yield make
    for storage in opened:
        await storage.close()


@pytest.fixture
async def storage(storage_factory: StorageFactory) -> Storage:
    """A fresh, empty storage with default options."""
    return await storage_factory()
