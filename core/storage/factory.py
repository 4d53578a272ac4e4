"""Open a storage backend from the ``--storage`` URL."""

from __future__ import annotations

from urllib.parse import urlparse

from core.storage.interface import Storage


class StorageURLError(ValueError):
    pass


async def open_storage(url: str) -> Storage:
    """``sqlite:///abs/path.db`` or ``sqlite://relative/path.db``."""
    parsed = urlparse(url)
    if parsed.scheme == "sqlite":
        from core.storage.sqlite import SQLiteStorage

        path = (parsed.netloc + parsed.path) if parsed.netloc else parsed.path
        if not path:
            raise StorageURLError(f"storage URL {url!r} names no database file")
        return await SQLiteStorage.open(path)
    raise StorageURLError(f"unsupported storage URL {url!r} (supported: sqlite:///path/to/state.db)")
