"""The watch cache (kplane.core.storage.cacher) over a real SQLite backend: what the contract suite
cannot see from outside, such as how many inner watches it opens, which events it shares, when it
answers from memory and how it recovers when its inner watch fails."""

from __future__ import annotations

import asyncio
import contextlib
import random
import time
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from kplane.core.storage.cacher import CachedStorage
from kplane.core.storage.interface import (
    CompactedError,
    KeyValue,
    WatcherOverflowError,
    WatchEvent,
)
from kplane.core.storage.sqlite import SQLiteStorage
from tests.storage.test_contract import next_events
from tests.waiting import eventually


async def collect(watch: AsyncIterator[WatchEvent]) -> list[WatchEvent]:
    return [event async for event in watch]


@pytest.fixture
async def inner(tmp_path: Path) -> AsyncIterator[SQLiteStorage]:
    storage = await SQLiteStorage.open(str(tmp_path / "kplane.db"), compact_interval=0)
    yield storage
    await storage.close()  # a no-op once the cache closed it


@pytest.fixture
async def cache(inner: SQLiteStorage) -> AsyncIterator[CachedStorage]:
    cached = await CachedStorage.open(inner)
    yield cached
    await cached.close()


async def test_many_watchers_share_one_inner_watch(inner: SQLiteStorage, cache: CachedStorage) -> None:
    assert inner.watch_count == 1
    watches = [cache.watch(f"/w/{i % 3}/", from_revision=0) for i in range(30)]
    watches.append(cache.watch("/", from_revision=0))
    assert inner.watch_count == 1 and cache.watcher_count == 31
    for i in range(3):
        await cache.create(f"/w/{i}/k", b"x")
    for i, watch in enumerate(watches[:-1]):
        assert [e.kv.key for e in await next_events(watch, 1)] == [f"/w/{i % 3}/k"]
    assert len(await next_events(watches[-1], 3)) == 3
    for watch in watches:
        await watch.aclose()  # type: ignore[attr-defined]
    assert cache.watcher_count == 0 and inner.watch_count == 1


async def test_every_watcher_gets_the_same_event_objects(cache: CachedStorage) -> None:
    start = (await cache.create("/w/seed", b"0")).mod_revision
    live = [cache.watch("/w/", from_revision=0) for _ in range(5)]
    kv = await cache.create("/w/a", b"1")
    await cache.update("/w/a", b"2", expected_revision=kv.mod_revision)
    await cache.delete("/w/a")
    replayed = cache.watch("/w/", from_revision=start)  # from the window, not the live stream
    received = [await next_events(watch, 3) for watch in [*live, replayed]]
    for events in received[1:]:
        assert all(mine is first for mine, first in zip(events, received[0], strict=True))
    received[0][0].memo["encoded"] = b"{}"  # what one consumer derives, the others find
    assert received[-1][0].memo == {"encoded": b"{}"}


async def test_what_watchers_derived_from_older_events_is_not_kept_by_the_window(cache: CachedStorage) -> None:
    start = (await cache.create("/w/seed", b"0")).mod_revision
    live = cache.watch("/w/", from_revision=0)
    for i in range(150):
        await cache.create(f"/w/{i:03d}", b"x" * 100)
    dispatched = [await asyncio.wait_for(anext(live), 30) for _ in range(150)]
    for event in dispatched:
        event.memo["encoded"] = b"{}"
    replay = cache.watch("/w/", from_revision=start)
    replayed = [await asyncio.wait_for(anext(replay), 30) for _ in range(150)]
    assert [e.kv for e in replayed] == [e.kv for e in dispatched]
    # The newest 100 as dispatched, their encodings shared; older ones fresh, nothing derived.
    assert all(mine is theirs for mine, theirs in zip(replayed[50:], dispatched[50:], strict=True))
    assert all(mine is not theirs and not mine.memo for mine, theirs in zip(replayed[:50], dispatched[:50], strict=True))
    for watch in (live, replay):
        await watch.aclose()  # type: ignore[attr-defined]


async def test_consistent_list_waits_for_a_write_the_cache_has_not_applied(
    inner: SQLiteStorage, cache: CachedStorage
) -> None:
    await cache.create("/c/before", b"x")
    write = asyncio.create_task(inner.create("/c/direct", b"x"))
    await asyncio.sleep(0)  # queued for the writer thread
    # Hold the event loop until the write is committed: its watch event cannot have reached the
    # cache yet, since the loop delivers it.
    while await inner.current_revision() < 2:
        time.sleep(0.001)
    assert cache.revision == 1

    stale = await cache.list("/c/", min_revision=0)  # resourceVersion=0: whatever the cache has
    assert [kv.key for kv in stale.items] == ["/c/before"] and stale.revision == 1

    fresh = await cache.list("/c/")  # a consistent read waits for the cache to catch up
    assert [kv.key for kv in fresh.items] == ["/c/before", "/c/direct"]
    assert fresh.revision == 2 == cache.revision
    await write


async def test_consistent_list_falls_back_when_the_cache_cannot_catch_up(inner: SQLiteStorage) -> None:
    """A write outside the cache's prefix moves the revision without an event the cache sees."""
    cache = await CachedStorage.open(inner, prefix="/registry/", catch_up_timeout=0.1)
    try:
        await cache.create("/registry/a", b"x")
        await cache.create("/elsewhere", b"x")
        started = time.monotonic()
        result = await cache.list("/registry/")
        assert time.monotonic() - started >= 0.09  # it waited, then asked the backend
        assert [kv.key for kv in result.items] == ["/registry/a"] and result.revision == 2
        assert cache.revision == 1
        await cache.create("/registry/b", b"x")  # the cache catches up with its next event
        assert (await cache.list("/registry/")).revision == 3
        others = cache.watch("/elsewhere", from_revision=0)  # outside the prefix: the backend's
        assert inner.watch_count == 2
        await others.aclose()  # type: ignore[attr-defined]
    finally:
        await cache.close()


async def test_lists_at_older_revisions_match_the_backend(inner: SQLiteStorage, cache: CachedStorage) -> None:
    """Random writes, then every revision listed from the cache (rolled back through the window)
    and from SQLite's history, in full and in pages."""
    rng = random.Random(7)
    live: dict[str, KeyValue] = {}
    for _ in range(150):
        key = f"/r/{rng.randrange(40):02d}"
        if key not in live:
            live[key] = await cache.create(key, str(rng.random()).encode())
        elif rng.random() < 0.3:
            await cache.delete(key)
            del live[key]
        else:
            live[key] = await cache.update(key, b"v", expected_revision=live[key].mod_revision)
        await cache.create(f"/other/{rng.random()}", b"x")
    current = await cache.current_revision()
    await eventually(lambda: cache.revision == current)
    for revision in range(1, current + 1):
        assert await cache.list("/r/", revision=revision) == await inner.list("/r/", revision=revision)
        after = f"/r/{rng.randrange(40):02d}"
        assert await cache.list("/r/", revision=revision, limit=3, start_after=after) == await inner.list(
            "/r/", revision=revision, limit=3, start_after=after
        )


async def test_pages_stay_one_snapshot_while_writes_land(inner: SQLiteStorage, cache: CachedStorage) -> None:
    latest = {kv.key: kv for kv in [await cache.create(f"/p/{i:03d}", b"0") for i in range(100)]}
    first = await cache.list("/p/", limit=10)
    expected = await inner.list("/p/", revision=first.revision)
    collected, page = list(first.items), first
    step = 0
    while page.more:
        # Between pages: modify a key already read and one not yet, delete one, add one.
        for key in (f"/p/{step:03d}", f"/p/{99 - step:03d}"):
            if key in latest:
                latest[key] = await cache.update(key, b"1", expected_revision=latest[key].mod_revision)
        await cache.delete(f"/p/{50 + step:03d}")
        latest.pop(f"/p/{50 + step:03d}")
        await cache.create(f"/p/{step:03d}x", b"new")
        step += 1
        page = await cache.list("/p/", revision=first.revision, limit=10, start_after=collected[-1].key)
        assert page.revision == first.revision
        collected += page.items
    assert collected == expected.items and len(collected) == 100
    assert step >= 9


async def test_watch_older_than_the_window_is_gone(inner: SQLiteStorage) -> None:
    cache = await CachedStorage.open(inner, window_events=5)
    try:
        for i in range(10):
            await cache.create(f"/w/{i}", b"x")
        await eventually(lambda: cache.revision == 10)
        assert cache.window_floor == 5  # the window holds revisions 6..10
        with pytest.raises(CompactedError) as caught:
            await next_events(cache.watch("/w/", from_revision=4), 1)
        assert (caught.value.requested, caught.value.compacted) == (4, 5)
        assert [e.revision for e in await next_events(cache.watch("/w/", from_revision=5), 5)] == [6, 7, 8, 9, 10]
        # A list older than the window is the backend's to answer (it has not compacted).
        assert (await cache.list("/w/", revision=3)).items == (await inner.list("/w/", revision=3)).items
    finally:
        await cache.close()


async def test_window_drops_events_by_age(inner: SQLiteStorage) -> None:
    cache = await CachedStorage.open(inner, window_age=0.05)
    try:
        await asyncio.gather(*(cache.create(f"/w/{i:03d}", b"x") for i in range(150)))
        await asyncio.sleep(0.1)  # eviction happens as events arrive: on the next one
        await cache.create("/w/last", b"x")
        await eventually(lambda: cache.revision == 151)
        assert cache.window_floor == 51  # aged out down to the minimum of 100 events kept
        with pytest.raises(CompactedError):
            await next_events(cache.watch("/w/", from_revision=1), 1)
        assert len(await next_events(cache.watch("/w/", from_revision=51), 100)) == 100
    finally:
        await cache.close()


async def test_slow_watcher_is_closed_while_a_fast_one_gets_everything(inner: SQLiteStorage) -> None:
    cache = await CachedStorage.open(inner, watch_queue_size=10)
    try:
        slow = cache.watch("/w/", from_revision=0)
        fast = cache.watch("/w/", from_revision=0)
        received: list[WatchEvent] = []

        async def consume() -> None:
            async for event in fast:
                received.append(event)

        consumer = asyncio.create_task(consume())
        written = [await cache.create(f"/w/{i:02d}", b"x") for i in range(50)]
        await eventually(lambda: len(received) == 50)
        assert [e.kv for e in received] == written
        assert cache.watcher_count == 1  # the slow one was dropped when its queue overflowed
        with pytest.raises(WatcherOverflowError):
            async for _ in slow:
                pass
        consumer.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await consumer
    finally:
        await cache.close()


async def test_inner_watch_failure_ends_watchers_and_relists(tmp_path: Path) -> None:
    # A tiny queue for the cache's own watch on SQLite: a burst it cannot drain overflows it.
    inner = await SQLiteStorage.open(str(tmp_path / "kplane.db"), compact_interval=0, watch_queue_size=5)
    cache = await CachedStorage.open(inner)
    try:
        await cache.create("/w/seed", b"x")
        watch = cache.watch("/w/", from_revision=0)
        writes = [asyncio.create_task(cache.create(f"/w/{i:02d}", b"x")) for i in range(20)]
        await asyncio.sleep(0)  # queued for the writer thread
        # Hold the loop until all are committed: then their events reach the cache's inner watch
        # one batch after another, with no turn for the cache to drain it in between.
        while await inner.current_revision() < 21:
            time.sleep(0.001)
        await asyncio.gather(*writes)
        await eventually(lambda: not cache.ready)

        # Ended, not failed, after what it had queued: the client watches again from there.
        drained = await asyncio.wait_for(collect(watch), 5)
        assert all(e.revision <= 21 for e in drained)
        assert cache.watcher_count == 0
        during = cache.watch("/w/", from_revision=0)  # while re-listing: starts once ready

        await eventually(lambda: cache.ready)
        assert cache.revision == cache.window_floor == await inner.current_revision() == 21
        assert await cache.list("/w/") == await inner.list("/w/")
        assert inner.watch_count == 1
        with pytest.raises(CompactedError):  # the client's old revision predates the new window
            await next_events(cache.watch("/w/", from_revision=1), 1)
        after = await cache.create("/w/after", b"x")
        assert [e.kv for e in await next_events(during, 1)] == [after]
    finally:
        await cache.close()


async def test_a_recent_read_is_answered_from_memory_and_a_key_not_there_yet_by_the_backend(
        inner: SQLiteStorage, cache: CachedStorage, monkeypatch: pytest.MonkeyPatch) -> None:
    """What admission reads of a Namespace: the cache's copy, and the backend's when the cache
    has not seen the key (just created, as kube's plugins look up what their lister misses)."""
    made = await cache.create("/r/held", b"v1")
    await eventually(lambda: cache.revision >= made.mod_revision)
    asked: list[str] = []
    real_get = inner.get

    async def counted(key: str) -> KeyValue | None:
        asked.append(key)
        return await real_get(key)
    monkeypatch.setattr(inner, "get", counted)
    found = await cache.get_recent("/r/held")
    assert found is not None and found.value == b"v1" and asked == []
    assert await cache.get_recent("/r/absent") is None and asked == ["/r/absent"]
    assert (await cache.get("/r/held")).value == b"v1" and asked[-1] == "/r/held"  # a plain get: the backend's
async def test_a_batch_is_the_replay_then_what_came_live_together(cache: CachedStorage) -> None:
    written = [await cache.create(f"/b/{i}", b"x") for i in range(5)]
    await eventually(lambda: cache.revision == written[-1].mod_revision)
    watch = cache.watch("/b/", from_revision=written[0].mod_revision)
    assert [e.kv for e in await watch.batch(5)] == written[1:]  # type: ignore[attr-defined]
    live = [await cache.create(f"/b/live-{i}", b"x") for i in range(3)]
    await eventually(lambda: cache.revision == live[-1].mod_revision)
    assert [e.kv for e in await watch.batch(5)] == live  # type: ignore[attr-defined]
    assert await watch.batch(0.01) == []  # type: ignore[attr-defined]
    await watch.aclose()  # type: ignore[attr-defined]


async def test_live_events_wait_behind_the_replay_for_a_sink(cache: CachedStorage) -> None:
    """A sink asked for before the replay was taken must not get live events ahead of it."""
    written = [await cache.create(f"/s/{i}", b"x") for i in range(3)]
    await eventually(lambda: cache.revision == written[-1].mod_revision)
    watch = cache.watch("/s/", from_revision=written[0].mod_revision)
    taken: list[WatchEvent] = []
    watch.deliver(lambda e: taken.append(e) is None)  # type: ignore[attr-defined]
    live = await cache.create("/s/live", b"x")
    await eventually(lambda: cache.revision == live.mod_revision)
    assert taken == []
    got = [e.kv for e in await watch.batch(5)]  # type: ignore[attr-defined]
    got += [e.kv for e in await watch.batch(5)]  # type: ignore[attr-defined]
    assert got == [*written[1:], live]
    after = await cache.create("/s/after", b"x")
    await eventually(lambda: [e.kv for e in taken] == [after])
    await watch.aclose()  # type: ignore[attr-defined]
