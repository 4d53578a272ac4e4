"""The storage a server serves from: the backend its URL names, values encrypted at rest when
configured, behind the watch cache."""

from __future__ import annotations

from pathlib import Path

from kplane.core.metrics.storage import StorageMetrics, WatchCacheMetrics
from kplane.core.storage.cacher import CachedStorage
from kplane.core.storage.encryptionconfig import load_encryption_config
from kplane.core.storage.factory import open_storage
from kplane.core.storage.interface import Storage
from kplane.core.storage.measured import MeasuredStorage
from kplane.core.storage.transformed import TransformingStorage, untransformed


async def open_server_storage(url: str, watch_cache: bool, encryption_config: Path | None,
                              metrics: StorageMetrics) -> Storage:
    """The backend of ``url`` (``--storage``); with ``encryption_config``
    (``--encryption-provider-config``), the resources it names are stored encrypted, and a value
    found encrypted without a rule for it is an error for that object (Kubernetes' default); with
    ``watch_cache``, lists and watches come from an in-memory cache fed by one watch on it
    (kube-apiserver's cacher), which holds the plain values. The configuration is read first,
    so a bad file fails the start before the storage is opened. Each call to the backend is timed
    into ``metrics`` (with its decryption, as kube's etcd3 store times it), and the cache counts
    into them."""
    encryption = load_encryption_config(encryption_config) if encryption_config is not None else None
    # Without a configuration too: a value encrypted earlier is then an error for that object.
    storage: Storage = TransformingStorage(await open_storage(url),
                                           encryption.transformer_for_key if encryption else untransformed)
    storage = MeasuredStorage(storage, metrics)
    if not watch_cache:
        return storage
    metrics.watch_cache = WatchCacheMetrics()
    return await CachedStorage.open(storage, metrics=metrics.watch_cache)
