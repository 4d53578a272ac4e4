"""Fixtures that run the storage contract against every backend listed in ``BACKENDS``.

A backend is an async factory ``(directory, **options) -> Storage``; adding etcd or a watch-cache
wrapper around another backend means adding one entry. Options are backend-neutral names that a
factory maps to its own knobs: ``compact_interval`` and ``keep_revisions`` (periodic compaction;
the suite disables it unless a test asks) and ``watch_queue_size`` (events a watcher may lag).
"""

from __future__ import annotations

import itertools
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from core.storage.cacher import CachedStorage
from core.storage.etcd import EtcdStorage
from core.storage.interface import Storage
from core.storage.sqlite import SQLiteStorage
from tests.etcd_process import ETCD, EtcdProcess

StorageFactory = Callable[..., Awaitable[Storage]]


async def _open_sqlite(
    directory: Path,
    *,
    compact_interval: float = 0.0,
    keep_revisions: int = 1000,
    watch_queue_size: int = 10_000,
) -> Storage:
    return await SQLiteStorage.open(
        str(directory / "kplane.db"),
        compact_interval=compact_interval,
        keep_revisions=keep_revisions,
        watch_queue_size=watch_queue_size,
    )


async def _open_cached_sqlite(
    directory: Path,
    *,
    compact_interval: float = 0.0,
    keep_revisions: int = 1000,
    watch_queue_size: int = 10_000,
) -> Storage:
    """The watch cache over SQLite: compaction is the backend's, the queue the cache watchers'."""
    inner = await _open_sqlite(directory, compact_interval=compact_interval, keep_revisions=keep_revisions)
    return await CachedStorage.open(inner, watch_queue_size=watch_queue_size)


_SHARED_ETCD: list[EtcdProcess] = []  # one etcd for the whole session, started on first use
_etcd_prefixes = itertools.count()


def shared_etcd() -> EtcdProcess:
    """The session's etcd; every storage on it gets its own key prefix, and tests that depend on
    revision numbers count from the revision current when they start."""
    if ETCD is None:
        pytest.skip("etcd is not on PATH (.ci/run installs the etcd-server package)")
    if not _SHARED_ETCD:
        process = EtcdProcess()
        process.start()
        _SHARED_ETCD.append(process)
    return _SHARED_ETCD[0]


@pytest.fixture(scope="session", autouse=True)
def _stop_shared_etcd() -> Iterator[None]:
    yield
    for process in _SHARED_ETCD:
        process.cleanup()


@pytest.fixture
def etcd_server() -> EtcdProcess:
    """The session's shared etcd (never stop it: tests needing a restart start their own)."""
    return shared_etcd()


async def _open_etcd(
    directory: Path,
    *,
    compact_interval: float = 0.0,
    keep_revisions: int = 1000,
    watch_queue_size: int = 10_000,
) -> Storage:
    return await EtcdStorage.open(
        [shared_etcd().endpoint],
        prefix=f"/contract-{next(_etcd_prefixes)}",
        compact_interval=compact_interval,
        keep_revisions=keep_revisions,
        watch_queue_size=watch_queue_size,
    )


BACKENDS: dict[str, Callable[..., Awaitable[Storage]]] = {"sqlite": _open_sqlite}
BACKENDS["cached-sqlite"] = _open_cached_sqlite
BACKENDS["etcd"] = _open_etcd


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
