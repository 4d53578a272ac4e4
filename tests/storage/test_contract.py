"""The storage contract (etcd v3 semantics), run against every backend in conftest.BACKENDS.

Revision numbers are relative to ``base``, the revision current when a test starts: etcd's first
revision is not 1, and a shared etcd's revisions continue from wherever the previous test left them.

The tests at the end exercise what only the SQLite backend promises: the single-process lock,
crash durability of acknowledged writes, and dropping a watcher that is no longer referenced.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import signal
import sqlite3
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

import pytest

from kplane.core.storage.interface import (
    CompactedError,
    ConflictError,
    EventType,
    FutureRevisionError,
    KeyExistsError,
    KeyNotFoundError,
    KeyValue,
    Storage,
    StorageError,
    WatcherOverflowError,
    WatchEvent,
)
from kplane.core.storage.sqlite import SQLiteStorage
from kplane.core.storage.watchqueue import batched

StorageFactory = Callable[..., Awaitable[Storage]]  # the storage_factory fixture (conftest.py)

REPO_ROOT = Path(__file__).resolve().parents[2]


async def next_events(
    watch: AsyncIterator[WatchEvent], count: int, timeout: float = 5.0
) -> list[WatchEvent]:
    """The next ``count`` events of a watch, failing instead of hanging."""
    return [await asyncio.wait_for(anext(watch), timeout) for _ in range(count)]


# --- writes and preconditions ---------------------------------------------------------------


async def test_create_then_get(storage: Storage) -> None:
    kv = await storage.create("/registry/pods/default/a", b"one")
    assert kv == KeyValue("/registry/pods/default/a", b"one", kv.mod_revision, kv.mod_revision)
    assert await storage.get("/registry/pods/default/a") == kv
    assert await storage.get("/registry/pods/default/missing") is None
    assert await storage.current_revision() == kv.mod_revision


async def test_create_existing_key_fails(storage: Storage) -> None:
    first = await storage.create("/k", b"one")
    with pytest.raises(KeyExistsError) as caught:
        await storage.create("/k", b"two")
    assert caught.value.key == "/k"
    assert await storage.get("/k") == first
    assert await storage.current_revision() == first.mod_revision  # failed writes take none


async def test_update_compares_mod_revision(storage: Storage) -> None:
    created = await storage.create("/k", b"one")
    updated = await storage.update("/k", b"two", expected_revision=created.mod_revision)
    assert updated.value == b"two"
    assert updated.create_revision == created.create_revision
    assert updated.mod_revision > created.mod_revision
    with pytest.raises(ConflictError) as caught:
        await storage.update("/k", b"three", expected_revision=created.mod_revision)
    assert caught.value.expected == created.mod_revision
    assert caught.value.actual == updated.mod_revision
    assert await storage.get("/k") == updated


async def test_update_or_delete_of_missing_key_fails(storage: Storage) -> None:
    with pytest.raises(KeyNotFoundError):
        await storage.update("/missing", b"x", expected_revision=1)
    with pytest.raises(KeyNotFoundError):
        await storage.delete("/missing")


async def test_delete_with_precondition(storage: Storage) -> None:
    created = await storage.create("/k", b"last")
    with pytest.raises(ConflictError) as caught:
        await storage.delete("/k", expected_revision=created.mod_revision + 100)
    assert caught.value.actual == created.mod_revision
    deleted = await storage.delete("/k", expected_revision=created.mod_revision)
    assert deleted.value == b"last"
    assert deleted.create_revision == created.create_revision
    assert deleted.mod_revision == await storage.current_revision() > created.mod_revision
    assert await storage.get("/k") is None
    unconditional = await storage.create("/k", b"again")
    assert (await storage.delete("/k")).mod_revision > unconditional.mod_revision


async def test_ops_in_one_commit_fail_individually(storage: Storage) -> None:
    """Concurrent writes share commits; a lost precondition must not fail its neighbours."""
    base = await storage.current_revision()
    results = await asyncio.gather(
        *(storage.create(f"/batch/{i}", b"x") for i in range(20)),
        storage.create("/batch/dup", b"first"),
        storage.create("/batch/dup", b"second"),
        return_exceptions=True,
    )
    errors = [r for r in results if isinstance(r, BaseException)]
    assert len(errors) == 1 and isinstance(errors[0], KeyExistsError)
    revisions = sorted(r.mod_revision for r in results if isinstance(r, KeyValue))
    assert revisions == list(range(base + 1, base + 22))
    assert len((await storage.list("/batch/")).items) == 21


async def test_revisions_increase_globally_and_are_never_reused(storage: Storage) -> None:
    seen = [(await storage.create("/a", b"1")).mod_revision]
    seen.append((await storage.create("/b", b"1")).mod_revision)
    seen.append((await storage.delete("/b")).mod_revision)
    seen.append((await storage.create("/b", b"2")).mod_revision)
    seen.append((await storage.delete("/b")).mod_revision)
    await storage.compact(await storage.current_revision())  # drops the newest (tombstone) row
    seen.append((await storage.create("/c", b"1")).mod_revision)
    assert seen == sorted(set(seen)) and seen == list(range(seen[0], seen[0] + len(seen)))
    assert await storage.current_revision() == seen[-1]


# --- lists ----------------------------------------------------------------------------------


async def test_list_by_prefix_excludes_siblings(storage: Storage) -> None:
    for key in ("/a/b", "/a/b/1", "/a/b/2", "/a/bc/1", "/a/b0", "/a/c/1"):
        await storage.create(key, key.encode())
    result = await storage.list("/a/b/")
    assert [kv.key for kv in result.items] == ["/a/b/1", "/a/b/2"]
    assert result.revision == await storage.current_revision()
    assert not result.more
    assert [kv.key for kv in (await storage.list("/a/")).items] == [
        "/a/b", "/a/b/1", "/a/b/2", "/a/b0", "/a/bc/1", "/a/c/1"
    ]
    assert len((await storage.list("")).items) == 6


@pytest.mark.parametrize("page", [2, 150])  # small pages and pages above the inline threshold
async def test_list_paginates_with_limit_and_start_after(storage: Storage, page: int) -> None:
    keys = [f"/p/{i:04d}" for i in range(301)]
    for key in keys:
        await storage.create(key, b"v")
    await storage.create("/q/0000", b"outside")
    first = await storage.list("/p/", limit=page)
    collected, result = [kv.key for kv in first.items], first
    while result.more:
        # Later pages are read at the first page's revision, as the API server does.
        result = await storage.list(
            "/p/", revision=first.revision, limit=page, start_after=collected[-1]
        )
        assert result.revision == first.revision
        collected += [kv.key for kv in result.items]
    assert collected == keys
    assert len(first.items) == page and first.more


async def test_continuing_a_list_across_a_compaction_fails(storage: Storage) -> None:
    """A later page is read at the first page's revision; once that is compacted the list cannot
    go on consistently and must be restarted (the API server answers 410 Expired)."""
    for i in range(4):
        await storage.create(f"/p/{i}", b"v")
    first = await storage.list("/p/", limit=2)
    assert first.more
    kv = await storage.update("/p/0", b"w", expected_revision=first.items[0].mod_revision)
    await storage.compact(kv.mod_revision)
    with pytest.raises(CompactedError):
        await storage.list("/p/", revision=first.revision, limit=2, start_after=first.items[-1].key)
    fresh = await storage.list("/p/", limit=2)  # a new list works
    assert [item.value for item in fresh.items] == [b"w", b"v"]


async def test_list_at_older_revision_is_a_snapshot(storage: Storage) -> None:
    kept = await storage.create("/s/kept", b"old")
    doomed = await storage.create("/s/doomed", b"bye")
    snapshot = await storage.current_revision()
    await storage.update("/s/kept", b"new", expected_revision=kept.mod_revision)
    await storage.delete("/s/doomed")
    await storage.create("/s/later", b"new")

    old = await storage.list("/s/", revision=snapshot)
    assert old.revision == snapshot
    assert old.items == [doomed, kept]  # deleted-later key present, created-later key absent
    latest = await storage.list("/s/")
    assert [(kv.key, kv.value) for kv in latest.items] == [
        ("/s/kept", b"new"),
        ("/s/later", b"new"),
    ]
    paged = await storage.list("/s/", revision=snapshot, limit=1)
    assert paged.items == [doomed] and paged.more


async def test_list_at_compacted_or_future_revision_fails(storage: Storage) -> None:
    kv = await storage.create("/k", b"1")
    for i in range(5):
        kv = await storage.update("/k", str(i).encode(), expected_revision=kv.mod_revision)
    current = await storage.current_revision()
    await storage.compact(current - 2)
    with pytest.raises(CompactedError) as caught:
        await storage.list("/", revision=current - 3)
    assert caught.value.compacted == current - 2
    with pytest.raises(CompactedError):
        await storage.list("/", revision=current - 2)
    assert (await storage.list("/", revision=current - 1)).items[0].mod_revision == current - 1
    with pytest.raises(FutureRevisionError) as future:
        await storage.list("/", revision=current + 1)
    assert (future.value.requested, future.value.current) == (current + 1, current)


# --- watch ----------------------------------------------------------------------------------


async def test_watch_from_zero_sees_only_new_events(storage: Storage) -> None:
    old = await storage.create("/w/old", b"1")
    watch = storage.watch("/w/", from_revision=0)
    added = await storage.create("/w/new", b"1")
    modified = await storage.update("/w/old", b"2", expected_revision=old.mod_revision)
    await storage.create("/elsewhere", b"1")
    events = await next_events(watch, 2)
    assert [(e.type, e.kv) for e in events] == [
        (EventType.ADDED, added),
        (EventType.MODIFIED, modified),
    ]
    assert events[0].prev_value is None and events[1].prev_value == b"1"
    await watch.aclose()  # type: ignore[attr-defined]  # (not on the AsyncIterator ABC)


async def test_deleted_event_carries_last_value_and_delete_revision(storage: Storage) -> None:
    created = await storage.create("/w/k", b"last")
    live = storage.watch("/w/", from_revision=0)
    deleted = await storage.delete("/w/k")
    [event] = await next_events(live, 1)
    replayed = (await next_events(storage.watch("/w/", from_revision=created.mod_revision), 1))[0]
    for seen in (event, replayed):
        assert seen.type is EventType.DELETED
        assert seen.kv == KeyValue("/w/k", b"last", created.mod_revision, deleted.mod_revision)
        assert seen.revision == deleted.mod_revision
        assert seen.prev_value == b"last"


async def iterate(watch: AsyncIterator[WatchEvent], received: list[WatchEvent]) -> None:
    async for event in watch:
        received.append(event)


async def batches_then_sink(watch: AsyncIterator[WatchEvent], received: list[WatchEvent]) -> None:
    """As a watch response reads: a batch at a time, then (caught up) each event from the sink."""
    events = batched(watch)
    try:
        while True:
            received += await events.batch(None)
            events.deliver(lambda event: received.append(event) is None)
    except StopAsyncIteration:
        pass
    finally:
        await events.aclose()  # type: ignore[attr-defined]


@pytest.mark.parametrize("consume", [iterate, batches_then_sink])
async def test_watch_replays_history_then_live_without_gap_or_duplicate(
    storage: Storage, consume: Callable[[AsyncIterator[WatchEvent], list[WatchEvent]], Awaitable[None]]
) -> None:
    """Writers run while the watcher replays a long history (several pages for the SQLite
    backend), so events straddle the hand-over from history to the live buffer."""
    written: list[KeyValue] = []  # every write under /w/, in any order

    async def record(kv: KeyValue) -> KeyValue:
        written.append(kv)
        return kv

    seeds = await asyncio.gather(*(storage.create(f"/w/seed/{i:04d}", b"0") for i in range(400)))
    written += seeds
    start = await storage.current_revision()
    for kv in await asyncio.gather(
        *(storage.update(kv.key, b"1", expected_revision=kv.mod_revision) for kv in seeds),
        *(storage.create(f"/other/{i}", b"x") for i in range(400)),  # same counter, other prefix
    ):
        if kv.key.startswith("/w/"):
            written.append(kv)

    async def writer(n: int) -> None:
        for j in range(25):
            kv = await record(await storage.create(f"/w/{n}/{j}", b"a"))
            await storage.create(f"/other/{n}/{j}", b"x")
            if j % 3 == 0:
                kv = await record(
                    await storage.update(kv.key, b"b", expected_revision=kv.mod_revision)
                )
            if j % 5 == 0:
                await record(await storage.delete(kv.key))

    writers = [asyncio.create_task(writer(n)) for n in range(8)]
    await asyncio.sleep(0.005)  # let the writers get going before the watch starts
    watch = storage.watch("/w/", from_revision=start)
    received: list[WatchEvent] = []
    consumer = asyncio.create_task(consume(watch, received))
    await asyncio.wait_for(asyncio.gather(*writers), 10)
    expected = sorted(kv.mod_revision for kv in written if kv.mod_revision > start)
    for _ in range(500):
        if received and received[-1].revision >= expected[-1]:
            break
        await asyncio.sleep(0.01)
    await asyncio.sleep(0.02)  # give a duplicate, were there one, the chance to show up
    consumer.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await consumer
    assert [e.revision for e in received] == expected
    assert all(e.kv.key.startswith("/w/") for e in received)


async def test_watch_events_both_buffered_and_in_history_are_yielded_once(storage: Storage) -> None:
    """Writes between watch() and the first iteration reach the live buffer and the history."""
    first = await storage.create("/w/0", b"x")
    watch = storage.watch("/w/", from_revision=first.mod_revision)
    early = [await storage.create(f"/w/{i}", b"x") for i in range(1, 4)]
    assert [e.kv for e in await next_events(watch, 3)] == early
    late = await storage.create("/w/4", b"x")
    assert [e.kv for e in await next_events(watch, 1)] == [late]


async def test_watch_from_compacted_revision_fails(storage: Storage) -> None:
    base = await storage.current_revision()
    kv = await storage.create("/w/k", b"0")
    for i in range(4):
        kv = await storage.update("/w/k", str(i).encode(), expected_revision=kv.mod_revision)
    await storage.compact(base + 3)
    with pytest.raises(CompactedError) as caught:
        await next_events(storage.watch("/w/", from_revision=base + 2), 1)
    assert (caught.value.requested, caught.value.compacted) == (base + 2, base + 3)
    # Nothing after base + 3 is lost.
    events = await next_events(storage.watch("/w/", from_revision=base + 3), 2)
    assert [e.revision for e in events] == [base + 4, base + 5]
    assert events[0].prev_value == b"1"  # the row before a retained event survives compaction


async def test_overflowing_watcher_is_terminated(storage_factory: StorageFactory) -> None:
    storage = await storage_factory(watch_queue_size=10)
    slow = storage.watch("/w/", from_revision=0)
    for i in range(30):
        await storage.create(f"/w/{i}", b"x")
    with pytest.raises(WatcherOverflowError):
        async for _ in slow:
            pass
    with pytest.raises(StopAsyncIteration):  # ended for good, not resumable
        await slow.__anext__()
    fresh = storage.watch("/w/", from_revision=0)  # others are unaffected; relisting works
    await storage.create("/w/after", b"x")
    assert [e.kv.key for e in await next_events(fresh, 1)] == ["/w/after"]


async def test_close_ends_open_watches(storage_factory: StorageFactory) -> None:
    storage = await storage_factory()
    watch = storage.watch("/w/", from_revision=0)
    received: list[WatchEvent] = []

    async def consume() -> None:
        async for event in watch:
            received.append(event)

    consumer = asyncio.create_task(consume())
    await storage.create("/w/k", b"x")
    for _ in range(500):  # etcd may take up to 100 ms to catch a new watcher up
        if received:
            break
        await asyncio.sleep(0.01)
    await storage.close()
    await asyncio.wait_for(consumer, 2)
    assert [e.kv.key for e in received] == ["/w/k"]
    with pytest.raises(StorageError):
        await storage.create("/w/late", b"x")


async def test_close_answers_writes_in_flight(storage_factory: StorageFactory) -> None:
    storage = await storage_factory()
    writes = [asyncio.create_task(storage.create(f"/f/{i}", b"x")) for i in range(300)]
    await asyncio.sleep(0)  # let them all enqueue
    await storage.close()
    done, pending = await asyncio.wait(writes, timeout=2)
    assert not pending
    for task in done:  # each one either committed or failed cleanly
        assert isinstance(task.exception() or task.result(), (KeyValue, StorageError))


# --- compaction and read-modify-write -------------------------------------------------------


async def test_compaction_keeps_current_values(storage: Storage) -> None:
    base = await storage.current_revision()
    live = await storage.create("/c/live", b"0")
    for i in range(1, 6):
        live = await storage.update("/c/live", str(i).encode(), expected_revision=live.mod_revision)
    await storage.create("/c/gone", b"x")
    await storage.delete("/c/gone")
    untouched = await storage.create("/c/untouched", b"u")
    await storage.compact(await storage.current_revision())

    assert (await storage.list("/c/")).items == [live, untouched]
    assert await storage.get("/c/live") == live
    assert await storage.get("/c/gone") is None
    updated = await storage.update("/c/live", b"6", expected_revision=live.mod_revision)
    assert (await storage.list("/c/")).items == [updated, untouched]
    await storage.compact(base + 1)  # at or before the compacted revision: nothing to do
    with pytest.raises(FutureRevisionError):
        await storage.compact(await storage.current_revision() + 1)


async def test_compaction_runs_safely_alongside_writes(storage: Storage) -> None:
    """Over 1,000 revisions of history, compacted while updates keep landing."""
    latest = {kv.key: kv for kv in await asyncio.gather(
        *(storage.create(f"/c/{i:02d}", b"0") for i in range(50))
    )}
    for round_ in range(1, 22):
        for kv in await asyncio.gather(*(
            storage.update(key, str(round_).encode(), expected_revision=kv.mod_revision)
            for key, kv in latest.items()
        )):
            latest[kv.key] = kv
    target = await storage.current_revision()
    watch = storage.watch("/c/", from_revision=target)

    async def keep_writing() -> None:
        for round_ in range(22, 27):
            for kv in await asyncio.gather(*(
                storage.update(key, str(round_).encode(), expected_revision=kv.mod_revision)
                for key, kv in latest.items()
            )):
                latest[kv.key] = kv

    await asyncio.gather(storage.compact(target), keep_writing())
    assert (await storage.list("/c/")).items == sorted(latest.values(), key=lambda kv: kv.key)
    events = await next_events(watch, 250)
    assert [e.revision for e in events] == list(range(target + 1, target + 251))
    with pytest.raises(CompactedError):
        await storage.list("/c/", revision=target)


async def test_periodic_compaction(storage_factory: StorageFactory) -> None:
    storage = await storage_factory(compact_interval=0.02, keep_revisions=5)
    base = await storage.current_revision()
    kv = await storage.create("/k", b"0")
    for i in range(20):
        kv = await storage.update("/k", str(i).encode(), expected_revision=kv.mod_revision)
    for _ in range(200):
        try:
            await storage.list("/", revision=base + 2)
        except CompactedError as compacted:
            assert compacted.compacted >= base + 2
            break
        await asyncio.sleep(0.01)
    else:
        pytest.fail("history was never compacted")
    assert await storage.get("/k") == kv
    assert (await storage.list("/", revision=kv.mod_revision - 4)).items[0].value == b"15"


async def test_concurrent_compare_and_swap_increments_lose_none(storage: Storage) -> None:
    await storage.create("/counter", b"0")

    async def increment() -> KeyValue:
        while True:  # the read-modify-write loop every caller of update() runs
            kv = await storage.get("/counter")
            assert kv is not None
            try:
                return await storage.update("/counter", str(int(kv.value) + 1).encode(), expected_revision=kv.mod_revision)
            except ConflictError:
                continue

    results = await asyncio.gather(*(increment() for _ in range(50)))
    assert len({kv.mod_revision for kv in results}) == 50
    assert (await storage.get("/counter")).value == b"50"  # type: ignore[union-attr]


# --- SQLite backend only ---------------------------------------------------------------------


async def test_sqlite_refuses_a_second_open(tmp_path: Path) -> None:
    path = str(tmp_path / "db" / "kplane.db")
    first = await SQLiteStorage.open(path, compact_interval=0)
    try:
        with pytest.raises(StorageError, match="in use by another process"):
            await SQLiteStorage.open(path, compact_interval=0)
    finally:
        await first.close()
    reopened = await SQLiteStorage.open(path, compact_interval=0)  # the lock went with close()
    await reopened.close()


async def test_sqlite_dropped_watch_is_unregistered(tmp_path: Path) -> None:
    storage = await SQLiteStorage.open(str(tmp_path / "kplane.db"), compact_interval=0)
    try:
        await storage.create("/w/a", b"x")
        await storage.create("/w/b", b"x")
        async for _ in storage.watch("/w/", from_revision=1):
            break
        gc.collect()
        assert storage.watch_count == 0
        closed = storage.watch("/w/", from_revision=0)
        assert storage.watch_count == 1
        await closed.aclose()  # type: ignore[attr-defined]
        assert storage.watch_count == 0
    finally:
        await storage.close()


async def test_sqlite_failed_transaction_fails_its_writes_and_recovers(tmp_path: Path) -> None:
    path = str(tmp_path / "kplane.db")
    storage = await SQLiteStorage.open(path, compact_interval=0)
    try:
        before = await storage.create("/t/before", b"x")
        conn = sqlite3.connect(path)  # inject a failure the backend cannot foresee
        conn.execute(
            "CREATE TRIGGER poison BEFORE INSERT ON log WHEN NEW.key = '/t/poison'"
            " BEGIN SELECT RAISE(ABORT, 'injected failure'); END"
        )
        conn.close()
        results = await asyncio.wait_for(
            asyncio.gather(
                *(storage.create(f"/t/{i}", b"x") for i in range(5)),
                storage.create("/t/poison", b"x"),
                return_exceptions=True,
            ),
            5,
        )
        assert isinstance(results[-1], StorageError) and "injected" in str(results[-1])
        assert all(isinstance(r, (KeyValue, StorageError)) for r in results)
        after = await storage.create("/t/after", b"x")
        committed = sorted(r.mod_revision for r in results if isinstance(r, KeyValue))
        assert [before.mod_revision, *committed, after.mod_revision] == list(
            range(before.mod_revision, after.mod_revision + 1)
        )  # the rolled-back batch left no hole in the revisions
    finally:
        await storage.close()


_CRASH_WRITER = """
import asyncio, sys
from kplane.core.storage.sqlite import SQLiteStorage
from kplane.core.storage.watchqueue import batched

async def main(path: str) -> None:
    storage = await SQLiteStorage.open(path, compact_interval=0)

    async def writer(n: int) -> None:
        for i in range(1_000_000):
            kv = await storage.create(f"/d/{n}/{i:07d}", b"v" * 512)
            print(kv.key, kv.mod_revision, flush=True)

    await asyncio.gather(*(writer(n) for n in range(4)))

asyncio.run(main(sys.argv[1]))
"""


async def test_sqlite_acknowledged_writes_survive_kill_9(tmp_path: Path) -> None:
    path = str(tmp_path / "kplane.db")
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-c", _CRASH_WRITER, path, cwd=REPO_ROOT, stdout=asyncio.subprocess.PIPE
    )
    assert process.stdout is not None
    acked: dict[str, int] = {}
    try:
        while len(acked) < 200:
            line = await asyncio.wait_for(process.stdout.readline(), 10)
            assert line, "the writer exited early"
            key, revision = line.decode().split()
            acked[key] = int(revision)
    finally:
        process.send_signal(signal.SIGKILL)
        rest = await process.stdout.read()  # acknowledged after we stopped counting
        await process.wait()
    for line in rest.decode().split("\n")[:-1]:  # the last piece is "" or a torn line
        key, revision = line.split()
        acked[key] = int(revision)

    storage = await SQLiteStorage.open(path, compact_interval=0)
    try:
        for key, revision in acked.items():
            kv = await storage.get(key)
            assert kv is not None and kv.mod_revision == revision, key
        current = await storage.current_revision()
        assert current >= max(acked.values())
    finally:
        await storage.close()
    conn = sqlite3.connect(path)
    try:
        revisions = [r for (r,) in conn.execute("SELECT revision FROM log ORDER BY revision")]
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    finally:
        conn.close()
    assert revisions == list(range(1, current + 1))
