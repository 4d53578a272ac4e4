"""The storage contract every backend fulfils (etcd v3 semantics).

Values are opaque bytes. Revisions are one global, strictly increasing integer shared by every key
of a backend: each successful write gets the next revision, and a key's ``mod_revision`` is the
revision of its last write. ``resourceVersion`` on the wire is that integer in decimal.
"""

from __future__ import annotations

import abc
import enum
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any


class StorageError(Exception):
    """Base class of every error a backend raises on purpose."""


class KeyExistsError(StorageError):
    def __init__(self, key: str) -> None:
        super().__init__(f"key exists: {key}")
        self.key = key


class KeyNotFoundError(StorageError):
    def __init__(self, key: str) -> None:
        super().__init__(f"key not found: {key}")
        self.key = key


class ConflictError(StorageError):
    """A compare-and-swap lost: the key's mod revision is not the one the caller expected."""

    def __init__(self, key: str, expected: int, actual: int) -> None:
        super().__init__(f"conflict on {key}: expected mod revision {expected}, found {actual}")
        self.key, self.expected, self.actual = key, expected, actual


class CompactedError(StorageError):
    """The requested revision is older than the oldest one still retained (HTTP 410 Gone)."""

    def __init__(self, requested: int, compacted: int) -> None:
        super().__init__(f"revision {requested} is compacted (oldest retained is {compacted + 1})")
        self.requested, self.compacted = requested, compacted


class FutureRevisionError(StorageError):
    """The requested revision has not been written yet."""

    def __init__(self, requested: int, current: int) -> None:
        super().__init__(f"revision {requested} is newer than the current revision {current}")
        self.requested, self.current = requested, current


class UnavailableError(StorageError):
    """The backend cannot be reached right now (HTTP 503); the request may be retried."""


class StorageTimeoutError(UnavailableError):
    """The backend did not answer in time (HTTP 504); the write may or may not have happened."""


class WatcherOverflowError(StorageError):
    """A watcher fell further behind the writes than its buffer holds and was terminated.

    Events after the last one it delivered were dropped, so the client must relist (or watch again
    from the last revision it saw) instead of the backend buffering without bound.
    """

    def __init__(self, prefix: str, capacity: int) -> None:
        super().__init__(f"watch on {prefix!r} fell more than {capacity} events behind")
        self.prefix, self.capacity = prefix, capacity


@dataclass(frozen=True, slots=True)
class KeyValue:
    key: str
    value: bytes
    create_revision: int
    mod_revision: int
    # Set by a layer that transforms stored values (encryption at rest), never by a backend:
    # ``stale``: read with a key that no longer writes, so a write must happen even when the
    # value is unchanged (that is how a rewrite re-encrypts with the new key);
    # ``unreadable``: why the stored value could not be read back (``value`` is then the stored
    # bytes), which the registry reports as an internal error for this one object.
    stale: bool = field(default=False, compare=False)
    unreadable: str = field(default="", compare=False)


@dataclass(frozen=True, slots=True)
class ListResult:
    items: list[KeyValue]
    revision: int  # the snapshot revision the list was read at
    more: bool  # True when ``limit`` cut the list short


class EventType(str, enum.Enum):
    ADDED = "ADDED"
    MODIFIED = "MODIFIED"
    DELETED = "DELETED"


@dataclass(frozen=True, slots=True)
class WatchEvent:
    type: EventType
    kv: KeyValue  # for DELETED: the last value, with mod_revision = the deletion's revision
    prev_value: bytes | None = None  # value before this event (MODIFIED/DELETED)
    # What consumers derive from this event (the decoded object, its encoding per version and
    # format). The watch cache hands one event object to every watcher, so what the first watcher
    # computes here the others reuse: each event is encoded once, not once per watcher.
    memo: dict[Any, Any] = field(default_factory=dict, compare=False, repr=False)

    @property
    def revision(self) -> int:
        return self.kv.mod_revision


class Storage(abc.ABC):
    """Async key-value store with a global revision, compare-and-swap and ordered watch."""

    @abc.abstractmethod
    async def get(self, key: str) -> KeyValue | None:
        """The current value of ``key``, or None."""

    async def get_recent(self, key: str) -> KeyValue | None:
        """``key``'s value as of a recent revision, not always the latest: what an admission
        check may read, as kube's admission plugins read their informers' listers (the watch
        cache answers from memory what it holds). Here, the latest."""
        return await self.get(key)

    @abc.abstractmethod
    async def list(
        self,
        prefix: str,
        *,
        revision: int = 0,
        limit: int = 0,
        start_after: str = "",
        min_revision: int | None = None,
    ) -> ListResult:
        """Keys under ``prefix`` in key order as of ``revision`` (0: the latest).

        ``start_after`` resumes a paginated list after that key; ``limit`` 0 means no limit.
        ``min_revision`` (with ``revision`` 0) says any snapshot at or after that revision will do
        (``resourceVersion=0`` or ``NotOlderThan``): a cache may answer from what it holds instead
        of first catching up with the latest write. Backends read the latest, which is new enough
        unless ``min_revision`` was not written yet: then, as for ``revision``, FutureRevisionError
        (a cache first waits a while for it). Raises CompactedError for a compacted revision.
        """

    @abc.abstractmethod
    async def create(self, key: str, value: bytes) -> KeyValue:
        """Store a new key; KeyExistsError if it is present."""

    @abc.abstractmethod
    async def update(self, key: str, value: bytes, *, expected_revision: int) -> KeyValue:
        """Replace ``key`` if its mod revision is ``expected_revision``.

        KeyNotFoundError if absent, ConflictError if the mod revision differs.
        """

    @abc.abstractmethod
    async def delete(self, key: str, *, expected_revision: int = 0) -> KeyValue:
        """Remove ``key`` (only at ``expected_revision`` when non-zero) and return its last value
        with ``mod_revision`` set to the deletion's revision."""

    @abc.abstractmethod
    def watch(self, prefix: str, *, from_revision: int) -> AsyncIterator[WatchEvent]:
        """Every change under ``prefix`` with a revision greater than ``from_revision``, in order,
        exactly once, then live changes until the iterator is closed.

        Raises CompactedError (when iterated) if events after ``from_revision`` were compacted, and
        WatcherOverflowError if the consumer falls too far behind the writes.
        """

    @abc.abstractmethod
    async def current_revision(self) -> int:
        """The revision of the last write (0 on an empty store)."""

    @abc.abstractmethod
    async def compact(self, revision: int) -> None:
        """Forget history at and before ``revision``; current values are always kept."""

    @abc.abstractmethod
    async def health(self) -> None:
        """Return when the backend can serve requests now; raise StorageError (usually
        UnavailableError) when it cannot. Cheap: ``/readyz`` calls it on every probe."""

    async def size_bytes(self) -> int | None:
        """The database's size in bytes, for ``apiserver_storage_size_bytes``; None when the
        backend cannot tell. A layer over another backend asks the one below."""
        return None

    @abc.abstractmethod
    async def close(self) -> None:
        """Stop background work and release resources."""
