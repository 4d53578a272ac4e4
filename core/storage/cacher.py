"""The watch cache: kplane's counterpart of kube-apiserver's cacher, as a Storage wrapper.

``CachedStorage`` keeps, in memory, every key under its prefix (sorted, so a list is a range
scan) and a window of the most recent events. Client watches are served from that window and fan
out from one stream, so every live watcher gets the same WatchEvent objects and what one of them
derives into ``memo`` (the object decoded, its encodings) the others reuse. The window keeps an
event's parts, not what was derived from it: that goes once its watchers are done with it. Lists
are answered from memory: at the latest revision once the cache has caught up with the backend (a
consistent read), or at an older revision by rolling the window's changes back. Writes and
single-key reads go to the inner storage.

Why one inner watch for everything under the prefix rather than one per resource: every write
under the prefix reaches that one stream in revision order, so the revision of the last event
applied tells exactly how far the cache has caught up. A consistent read then needs only the
backend's current revision and a wait until the cache reaches it, with no etcd progress
notifications (Debian's etcd 3.4.23 predates the progress-notify fixes kube-apiserver relies on).
"""

from __future__ import annotations

import asyncio
import bisect
import contextlib
import heapq
import itertools
import logging
import operator
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Iterable, Iterator
from dataclasses import dataclass

from sortedcontainers import SortedDict

from kplane.core.storage.interface import (
    CompactedError,
    EventType,
    FutureRevisionError,
    KeyValue,
    ListResult,
    Storage,
    StorageError,
    UnavailableError,
    WatchEvent,
)
from kplane.core.metrics.storage import WatchCacheMetrics
from kplane.core.storage.keys import resource_of_key
from kplane.core.storage.watchqueue import EventQueue

_log = logging.getLogger(__name__)

# Age alone never shrinks the window below this many events: on a quiet cluster a watcher that
# reconnects from a slightly old revision can still resume instead of relisting (kube-apiserver
# keeps a lower bound of 100 for the same reason).
_MIN_WINDOW_EVENTS = 100
# The window is a list (so bisect can search it by revision) whose evicted head is cut off in one
# go once it is this long or half the list, not one pop(0) per event.
_TRIM_AT = 1024
_RELIST_BACKOFF_FIRST = 0.1  # seconds before re-listing after the inner watch failed; doubles
_RELIST_BACKOFF_MAX = 10.0  # per consecutive failure up to this


# The newest this many events of the window are replayed as the very objects the live watchers
# got, so what those derived (decoded, encoded) serves a watcher resuming from a recent revision
# too; older ones are replayed as fresh events of their own, so nothing derived from them outlives
# the watchers that use it (kube-apiserver's cacher caches encodings only for live dispatch).
_SHARED_REPLAY = 100


@dataclass(frozen=True, slots=True)
class _Change:
    """A window entry: an event's parts, without what consumers derived from it, and the key's
    KeyValue before it (None: it did not exist)."""

    revision: int
    type: EventType
    kv: KeyValue
    prev_value: bytes | None
    prev: KeyValue | None
    time: float  # loop time when applied, for eviction by age


_revision_of = operator.attrgetter("revision")


class _CacheWatch(EventQueue, AsyncIterator[WatchEvent]):
    """One client watch: events replayed from the window, then live ones from the cache's stream.

    Live events queue up to ``capacity``; one more ends the watch with WatcherOverflowError, so
    a slow client costs neither unbounded memory nor the others' latency. A watch dropped
    without ``aclose()`` stays registered until it overflows.
    """

    __slots__ = ("_cache", "_after", "_started", "_replay")

    def __init__(self, cache: CachedStorage, prefix: str, from_revision: int, capacity: int) -> None:
        super().__init__(prefix, capacity)
        self._cache = cache
        self._after = from_revision  # live events at or before it are skipped
        self._started = False
        self._replay: list[WatchEvent] = []  # newest first, so each is popped off the end

    def __aiter__(self) -> _CacheWatch:
        return self

    def __anext__(self) -> Awaitable[WatchEvent]:
        # Not a coroutine itself: once replayed, each event costs only ``get``'s coroutine.
        return self._next_replayed() if self._replay or not self._started else self.get()

    async def aclose(self) -> None:
        self.end()

    @property
    def after(self) -> int:
        return self._after

    def start(self, after: int, replay: Iterable[WatchEvent]) -> None:
        """Begin after revision ``after`` with ``replay``; the cache registers it at once."""
        self._started = True
        self._after = after
        self._replay = list(replay)
        self._replay.reverse()

    def offer(self, event: WatchEvent) -> None:
        """Queue a live event (behind the replay while any is unread) without ever waiting for
        the consumer; overflow ends the watch."""
        if event.revision > self._after:
            if self._replay:
                self.enqueue(event)
            else:
                self.put(event)

    def end(self, error: StorageError | None = None, *, keep_buffered: bool = False) -> None:
        """End the queue and unregister; unless ``keep_buffered``, the replay goes too."""
        if self.done:  # a later end must not drop what an earlier one kept
            return
        super().end(error, keep_buffered=keep_buffered)
        if not keep_buffered:
            self._replay = []
        self._cache._unregister(self)

    async def batch(self, timeout: float | None) -> list[WatchEvent]:
        """The replay and what is queued behind it, at once; then as EventQueue.batch."""
        if not self._started and not self.done:
            await self._cache._start_when_ready(self)
        if self._replay:
            events, self._replay = self._replay, []
            events.reverse()
            return events
        return await super().batch(timeout)

    async def _next_replayed(self) -> WatchEvent:
        """Start when the cache is ready, then the replayed events before the live ones."""
        if not self._started and not self.done:
            await self._cache._start_when_ready(self)
        if self._replay:
            return self._replay.pop()
        return await self.get()


class CachedStorage(Storage):
    """A watch cache in front of another Storage; see the module docstring.

    Create it with ``await CachedStorage.open(inner)``; from then on it owns ``inner`` and
    ``close()`` closes it.
    """

    def __init__(
        self,
        inner: Storage,
        *,
        prefix: str,
        window_events: int,
        window_age: float,
        watch_queue_size: int,
        catch_up_timeout: float,
        metrics: WatchCacheMetrics,
    ) -> None:
        """Private: use ``open``, which loads the cache and starts following the inner watch."""
        self._inner = inner
        self._metrics = metrics
        self._prefix = prefix
        self._window_events = window_events
        self._window_age = window_age
        self._watch_queue_size = watch_queue_size
        self._catch_up_timeout = catch_up_timeout
        self._loop = asyncio.get_running_loop()
        self._state: SortedDict = SortedDict()  # key -> KeyValue, as of self._revision
        self._revision = 0
        self._seen = 0  # the newest revision known through this cache's own calls (see _saw)
        # Events in (floor, revision]: the live part is self._window[self._head:].
        self._window: list[_Change] = []
        self._head = 0
        self._shared: deque[WatchEvent] = deque(maxlen=_SHARED_REPLAY)  # the window's newest, as dispatched
        self._floor = 0
        self._ready = False  # False while re-listing after the inner watch failed
        self._progress: asyncio.Future[None] | None = None  # resolved when the cache moves on
        # Watchers by their prefix, and the lengths of those prefixes, so an event is offered
        # only to the watchers whose prefix it has: one dict lookup per distinct length.
        self._watchers: dict[str, set[_CacheWatch]] = {}
        self._prefix_lengths: list[int] = []
        self._pending: set[_CacheWatch] = set()  # made while re-listing; started by _load
        self._follower: asyncio.Task[None] | None = None
        self._closed = False

    @classmethod
    async def open(
        cls,
        inner: Storage,
        *,
        prefix: str = "/",
        window_events: int = 10_000,
        window_age: float = 75.0,
        watch_queue_size: int = 10_000,
        catch_up_timeout: float = 3.0,
        metrics: WatchCacheMetrics | None = None,
    ) -> CachedStorage:
        """List ``inner`` under ``prefix`` and follow it with one watch from that list's revision.

        The window keeps up to ``window_events`` events, and drops those older than
        ``window_age`` seconds once it holds more than a few. A client watcher more than
        ``watch_queue_size`` events behind is ended with WatcherOverflowError. Reads wait at most
        ``catch_up_timeout`` seconds for the cache to catch up before asking ``inner`` instead.
        What it counts goes to ``metrics`` (the server's ``/metrics``).
        """
        cache = cls(
            inner,
            prefix=prefix,
            window_events=window_events,
            window_age=window_age,
            watch_queue_size=watch_queue_size,
            catch_up_timeout=catch_up_timeout,
            metrics=metrics if metrics is not None else WatchCacheMetrics(),
        )
        watch = await cache._resync()
        cache._follower = asyncio.create_task(cache._follow(watch), name=f"watch cache {prefix!r}")
        return cache

    @property
    def revision(self) -> int:
        """The revision the cache has caught up to."""
        return self._revision

    @property
    def ready(self) -> bool:
        """False while re-listing after the inner watch failed (reads then wait, or go inner)."""
        return self._ready

    @property
    def window_floor(self) -> int:
        """Watches from this revision or later are served from the window; older ones get 410."""
        return self._floor

    @property
    def watcher_count(self) -> int:
        """Client watchers currently fed by the cache."""
        return sum(len(group) for group in self._watchers.values())

    # -- reads ----------------------------------------------------------------------------

    async def get(self, key: str) -> KeyValue | None:
        return await self._inner.get(key)

    async def get_recent(self, key: str) -> KeyValue | None:
        """From memory when the cache holds ``key``; else (not there yet, or re-listing) the backend's."""
        found = self._state.get(key) if self._ready and not self._closed and key.startswith(self._prefix) else None
        return found if found is not None else await self._inner.get(key)

    async def list(
        self,
        prefix: str,
        *,
        revision: int = 0,
        limit: int = 0,
        start_after: str = "",
        min_revision: int | None = None,
    ) -> ListResult:
        """From memory whenever the cache can give the same answer as the backend.

        Revision 0 waits (bounded) until the cache has caught up with the backend's current
        revision, or with ``min_revision``; an exact revision is the state rolled back through
        the window. Older than the window, outside the prefix, or when the cache cannot catch up
        in time: the backend answers.
        """
        if revision < 0:
            raise ValueError(f"revision must be >= 0, got {revision}")

        def backend() -> Awaitable[ListResult]:
            return self._inner.list(
                prefix, revision=revision, limit=limit, start_after=start_after, min_revision=min_revision
            )

        if self._closed or not prefix.startswith(self._prefix):
            return await backend()
        if revision == 0:
            target = await self._inner.current_revision() if min_revision is None else min_revision
            if await self._caught_up(target):
                return self._page(prefix, self._revision, limit, start_after)
            return await backend()
        if self._ready and revision < self._floor:
            return await backend()
        if not (self._ready and revision <= self._revision):
            current = await self._inner.current_revision()
            if revision > current:
                raise FutureRevisionError(revision, current)
            await self._caught_up(revision)
        if self._covers(revision) and revision < self._revision:
            # The backend compacts on its own schedule, which the cache is not told about. This
            # one-row read raises CompactedError exactly when the backend would for the list.
            await self._inner.list(prefix, revision=revision, limit=1, start_after=start_after)
        if self._covers(revision):  # checked again: the cache may have been reset meanwhile
            return self._page(prefix, revision, limit, start_after)
        return await backend()

    def watch(self, prefix: str, *, from_revision: int) -> AsyncIterator[WatchEvent]:
        """From the window when it still holds every event after ``from_revision``, else
        CompactedError when iterated. 0 means after the newest revision the cache knows of (its
        own, or one its callers' writes returned), or while it re-lists, after the revision it
        re-lists at."""
        if from_revision < 0:
            raise ValueError(f"from_revision must be >= 0, got {from_revision}")
        if self._closed or not prefix.startswith(self._prefix):
            return self._inner.watch(prefix, from_revision=from_revision)
        watcher = _CacheWatch(self, prefix, from_revision, self._watch_queue_size)
        if self._ready:
            self._start(watcher)
        else:
            self._pending.add(watcher)
        return watcher

    async def current_revision(self) -> int:
        revision = await self._inner.current_revision()
        self._seen = max(self._seen, revision)
        return revision

    async def health(self) -> None:
        await self._inner.health()

    async def size_bytes(self) -> int | None:
        return await self._inner.size_bytes()

    # -- writes ---------------------------------------------------------------------------

    async def create(self, key: str, value: bytes) -> KeyValue:
        return self._saw(await self._inner.create(key, value))

    async def update(self, key: str, value: bytes, *, expected_revision: int) -> KeyValue:
        return self._saw(await self._inner.update(key, value, expected_revision=expected_revision))

    async def delete(self, key: str, *, expected_revision: int = 0) -> KeyValue:
        return self._saw(await self._inner.delete(key, expected_revision=expected_revision))

    def _saw(self, kv: KeyValue) -> KeyValue:
        """Note a revision known to exist, though the cache may not have its event yet: a watch
        "from now" starts after it."""
        self._seen = max(self._seen, kv.mod_revision)
        return kv

    async def compact(self, revision: int) -> None:
        """Compact the backend, then drop the window's events at or before ``revision`` too."""
        await self._inner.compact(revision)
        if revision > self._floor:
            self._floor = revision
            self._head = bisect.bisect_right(self._window, revision, lo=self._head, key=_revision_of)
            self._trim()

    async def close(self) -> None:
        """Stop following the backend, end every watcher, then close the inner storage."""
        if self._closed:
            return
        self._closed = True
        self._ready = False
        if self._follower is not None:
            self._follower.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._follower
        self._end_watchers(keep_buffered=False)
        self._progressed()  # reads waiting for the cache now fall back to the (closing) backend
        await self._inner.close()

    # -- following the backend ------------------------------------------------------------

    async def _resync(self) -> AsyncIterator[WatchEvent]:
        """Watch the inner storage from now, then load a list of it: the watch's events up to
        the list's revision are skipped, and none after it can fall between the two (as they
        could between a list at revision 0, an empty store, and a watch "from now")."""
        watch = self._inner.watch(self._prefix, from_revision=0)
        try:
            listing = await self._inner.list(self._prefix)
        except BaseException:
            await watch.aclose()  # type: ignore[attr-defined]
            raise
        self._load(listing)
        return watch

    async def _follow(self, watch: AsyncIterator[WatchEvent]) -> None:
        """Apply the inner watch; when it fails, end every watcher, re-list and start over.

        Events the failed watch never delivered are missing from the window, so ending the
        watchers makes clients watch again: from the new window, or with 410 and a relist.
        """
        backoff = _RELIST_BACKOFF_FIRST
        while True:
            listed = self._revision
            try:
                try:
                    async for event in watch:
                        if event.revision > self._revision:  # else the list had it already
                            self._apply(event)
                finally:
                    await watch.aclose()  # type: ignore[attr-defined]
                reason: object = "the inner watch ended"
            except StorageError as exc:  # compacted, overflowed, unavailable, closed
                reason = exc
            except Exception as exc:  # a bug: log it in full, then start over all the same
                _log.exception("watch cache %r failed to apply its watch", self._prefix)
                reason = exc
            if self._revision > listed:  # it ran for a while: this is a new failure
                backoff = _RELIST_BACKOFF_FIRST
            _log.warning("watch cache %r lost its watch (%s); re-listing", self._prefix, reason)
            self._ready = False
            self._end_watchers(keep_buffered=True)
            while True:
                await asyncio.sleep(backoff)
                backoff = min(2 * backoff, _RELIST_BACKOFF_MAX)
                try:
                    watch = await self._resync()
                except StorageError as exc:
                    _log.warning("watch cache %r cannot re-list: %s", self._prefix, exc)
                    continue
                break

    def _load(self, listing: ListResult) -> None:
        """Replace the contents with a fresh list; the window starts empty at its revision."""
        self._state = SortedDict((kv.key, kv) for kv in listing.items)
        self._revision = listing.revision
        self._window.clear()
        self._shared.clear()
        self._head = 0
        self._floor = max(self._floor, listing.revision)
        self._ready = True
        self._count(listing.items)
        pending, self._pending = self._pending, set()
        for watcher in pending:
            self._start(watcher)
        self._progressed()

    def _apply(self, event: WatchEvent) -> None:
        kv = event.kv
        prev = self._state.get(kv.key)
        if event.type is EventType.DELETED:
            self._state.pop(kv.key, None)
        else:
            self._state[kv.key] = kv
        self._revision = kv.mod_revision
        if kv.mod_revision > self._floor:  # not when compact() already moved the floor past it
            now = self._loop.time()
            # The backend read the previous value anew; the state's copy of it is the same bytes.
            prev_value = prev.value if prev is not None and prev.value == event.prev_value else event.prev_value
            self._window.append(_Change(kv.mod_revision, event.type, kv, prev_value, prev, now))
            self._shared.append(event)
            self._evict(now)
        offered = self._dispatch(event)
        self._progressed()
        resource = resource_of_key(kv.key)
        if resource is not None:
            metrics = self._metrics
            metrics.received.add(resource)
            metrics.dispatched.add(resource, offered)
            metrics.resource_version.set(resource, kv.mod_revision)
            if (event.type is EventType.DELETED) == (prev is not None):  # one object more, or one less
                metrics.objects[resource] = metrics.objects.get(resource, 0) + (1 if prev is None else -1)

    def _count(self, items: list[KeyValue]) -> None:
        """The objects of each resource in a fresh list, and one more initialization."""
        objects = self._metrics.objects
        objects.clear()
        for kv in items:
            resource = resource_of_key(kv.key)
            if resource is not None:
                objects[resource] = objects.get(resource, 0) + 1
        self._metrics.initializations.add(())

    def _evict(self, now: float) -> None:
        """Drop events beyond ``window_events``, and those older than ``window_age`` while more
        than a few remain; the floor rises to the last one dropped."""
        window, head = self._window, self._head
        while len(window) - head > self._window_events or (
            len(window) - head > _MIN_WINDOW_EVENTS and now - window[head].time > self._window_age
        ):
            self._floor = window[head].revision
            head += 1
        if head != self._head:
            self._head = head
            self._trim()

    def _trim(self) -> None:
        if self._head >= _TRIM_AT or 2 * self._head >= len(self._window):
            del self._window[: self._head]
            self._head = 0

    def _progressed(self) -> None:
        if self._progress is not None:
            self._progress.set_result(None)
            self._progress = None

    async def _caught_up(self, revision: int) -> bool:
        """Wait, at most ``catch_up_timeout``, until the cache is ready and at ``revision``."""
        if self._ready and self._revision >= revision:
            return True
        try:
            async with asyncio.timeout(self._catch_up_timeout):
                while not (self._ready and self._revision >= revision):
                    if self._closed:
                        return False
                    if self._progress is None:
                        self._progress = self._loop.create_future()
                    await asyncio.shield(self._progress)  # shared: one waiter's timeout must not cancel it
        except TimeoutError:
            return False
        return True

    # -- lists from memory ----------------------------------------------------------------

    def _covers(self, revision: int) -> bool:
        """Whether the state and window can give the snapshot at ``revision``."""
        return self._ready and self._floor <= revision <= self._revision

    def _changes_after(self, revision: int) -> list[_Change]:
        start = bisect.bisect_right(self._window, revision, lo=self._head, key=_revision_of)
        return self._window[start:]

    def _page(self, prefix: str, revision: int, limit: int, start_after: str) -> ListResult:
        """Keys under ``prefix`` as of ``revision`` (which ``_covers``), paginated as a backend
        does; synchronous, so the whole page comes from one snapshot."""
        state = self._state
        if start_after >= prefix:
            keys = state.irange(start_after, inclusive=(False, True))
        else:
            keys = state.irange(prefix)
        keys = itertools.takewhile(lambda key: key.startswith(prefix), keys)
        rolled_back = self._rolled_back(prefix, revision, start_after) if revision < self._revision else {}
        items = self._merge(keys, rolled_back) if rolled_back else map(state.__getitem__, keys)
        page = list(itertools.islice(items, limit + 1 if limit > 0 else None))
        more = 0 < limit < len(page)
        if more:
            page.pop()
        group, plural = resource_of_key(prefix) or ("", "")
        self._metrics.lists.add((group, plural, ""))
        self._metrics.returned.add((group, plural), len(page))
        return ListResult(items=page, revision=revision, more=more)

    def _rolled_back(self, prefix: str, revision: int, start_after: str) -> dict[str, KeyValue | None]:
        """The value at ``revision`` (None: absent) of each key in the page's range that changed
        since: the ``prev`` of its oldest change after ``revision``."""
        values: dict[str, KeyValue | None] = {}
        for change in self._changes_after(revision):
            key = change.kv.key
            if key not in values and key > start_after and key.startswith(prefix):
                values[key] = change.prev
        return values

    def _merge(self, keys: Iterator[str], rolled_back: dict[str, KeyValue | None]) -> Iterator[KeyValue]:
        """Current keys and rolled-back keys in order, each once, rolled-back values winning."""
        last = None
        for key in heapq.merge(keys, sorted(rolled_back)):
            if key == last:
                continue
            last = key
            kv = rolled_back[key] if key in rolled_back else self._state[key]
            if kv is not None:
                yield kv

    # -- watchers -------------------------------------------------------------------------

    def _start(self, watcher: _CacheWatch) -> None:
        """Replay the window and register for live events, with no await in between, so no
        event falls between the two and none comes twice."""
        after = watcher.after or max(self._revision, self._seen)
        if watcher.after and after < self._floor:
            watcher.end(CompactedError(after, self._floor))
            return
        prefix = watcher.prefix
        watcher.start(after, self._replay(self._changes_after(after), prefix))
        group = self._watchers.get(prefix)
        if group is None:
            group = self._watchers[prefix] = set()
            self._prefix_lengths = sorted({len(p) for p in self._watchers})
        group.add(watcher)

    def _replay(self, changes: list[_Change], prefix: str) -> Iterator[WatchEvent]:
        """The events of ``changes`` under ``prefix``: the newest as dispatched (see _SHARED_REPLAY)."""
        shared = self._shared
        skip = len(changes) - len(shared)  # changes[i] was dispatched as shared[i - skip]
        for i, change in enumerate(changes):
            if change.kv.key.startswith(prefix):
                event = shared[i - skip] if i >= skip else None
                if event is None or event.revision != change.revision:
                    event = WatchEvent(change.type, change.kv, change.prev_value)
                yield event

    async def _start_when_ready(self, watcher: _CacheWatch) -> None:
        """Wait, bounded, for the re-list that starts a watch made while the cache was not ready."""
        if not await self._caught_up(0):
            watcher.end(None if self._closed else UnavailableError(f"watch cache {self._prefix!r} is re-listing"))

    def _unregister(self, watcher: _CacheWatch) -> None:
        self._pending.discard(watcher)
        group = self._watchers.get(watcher.prefix)
        if group is not None:
            group.discard(watcher)
            if not group:
                del self._watchers[watcher.prefix]
                self._prefix_lengths = sorted({len(p) for p in self._watchers})

    def _dispatch(self, event: WatchEvent) -> int:
        """Offer the event to every watcher whose prefix the key has; never waits for one.
        Returns how many it was offered to."""
        key = event.kv.key
        offered = 0
        for length in self._prefix_lengths:
            if length > len(key):
                break
            group = self._watchers.get(key[:length])
            if group:
                offered += len(group)
                for watcher in list(group):  # offer() may end and unregister the watcher
                    watcher.offer(event)
        return offered

    def _end_watchers(self, *, keep_buffered: bool) -> None:
        for watcher in [*self._pending, *itertools.chain.from_iterable(self._watchers.values())]:
            watcher.end(None, keep_buffered=keep_buffered)
