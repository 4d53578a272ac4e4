"""The storage a server serves from: the backend its URL names, behind the watch cache."""

from __future__ import annotations

from kplane.core.storage.cacher import CachedStorage
from kplane.core.storage.factory import open_storage
from kplane.core.storage.interface import Storage


async def open_server_storage(url: str, watch_cache: bool) -> Storage:
    """The backend of ``url`` (``--storage``); with ``watch_cache``, lists and watches come from
    an in-memory cache fed by one watch on it (kube-apiserver's cacher)."""
    storage = await open_storage(url)
    return await CachedStorage.open(storage) if watch_cache else storage
