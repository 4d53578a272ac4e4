"""One SQLite database opened ``shared`` by several processes (``kplane serve --workers N``):
every write takes the next revision whichever process made it, and every process's watchers see
all of them, in one order, with no gap and no repeat.

The writers here are real processes (``_WRITER``) next to an instance in the test's own process;
two instances in one process also share the database as processes do (their own connections,
threads and lock descriptors), which the shorter tests use.
"""

from __future__ import annotations

import asyncio
import os
import signal
import sqlite3
import sys
from pathlib import Path

import pytest

from kplane.core.storage import sqlite as sqlite_backend
from kplane.core.storage.interface import (
    CompactedError,
    ConflictError,
    EventType,
    KeyValue,
    StorageError,
    UnavailableError,
)
from kplane.core.storage.sqlite import SQLiteStorage
from tests.frozen import freeze
from tests.storage.test_contract import REPO_ROOT, next_events

_WRITER = """
import asyncio, sys
from kplane.core.storage.sqlite import SQLiteStorage

async def main(path, name, count):
    storage = await SQLiteStorage.open(path, compact_interval=0, shared=True)
    written = await asyncio.gather(*(write(storage, name, client, count // 10) for client in range(10)))
    print(" ".join(str(kv.mod_revision) for kvs in written for kv in kvs), flush=True)
    await storage.close()

async def write(storage, name, client, count):  # one client's creates, one after another
    return [await storage.create(f"/k/{name}-{client}-{i}", name.encode()) for i in range(count)]

asyncio.run(main(sys.argv[1], sys.argv[2], int(sys.argv[3])))
"""


async def _open(path: Path, **options: object) -> SQLiteStorage:
    return await SQLiteStorage.open(str(path), compact_interval=0, shared=True, **options)  # type: ignore[arg-type]


async def _creates(storage: SQLiteStorage, client: int) -> list[KeyValue]:
    return [await storage.create(f"/k/here-{client}-{i}", b"here") for i in range(30)]


async def test_writes_of_several_processes_reach_every_watcher_in_one_order(tmp_path: Path) -> None:
    path = tmp_path / "kplane.db"
    here = await _open(path)
    try:
        watch = here.watch("/k/", from_revision=0)
        writers = [await asyncio.create_subprocess_exec(sys.executable, "-c", _WRITER, str(path), name, "300",
                                                        cwd=REPO_ROOT, stdout=asyncio.subprocess.PIPE)
                   for name in ("a", "b")]
        ours = [kv for kvs in await asyncio.gather(*(_creates(here, client) for client in range(10))) for kv in kvs]
        theirs = []
        for writer in writers:
            out, _ = await writer.communicate()
            assert writer.returncode == 0
            theirs += [int(revision) for revision in out.split()]
        events = await next_events(watch, 900)
    finally:
        await here.close()
    revisions = [event.revision for event in events]
    assert revisions == list(range(1, 901))  # one order, no gap, no repeat
    assert sorted(revisions) == sorted([kv.mod_revision for kv in ours] + theirs)
    assert {event.kv.value for event in events} == {b"here", b"a", b"b"}
    assert all(event.type is EventType.ADDED for event in events)


async def test_instances_on_one_database_see_each_others_writes_alike(tmp_path: Path) -> None:
    one, other = await _open(tmp_path / "kplane.db"), await _open(tmp_path / "kplane.db")
    try:
        watches = [one.watch("/k/", from_revision=0), other.watch("/k/", from_revision=0)]
        created = await one.create("/k/x", b"1")
        updated = await other.update("/k/x", b"2", expected_revision=created.mod_revision)
        with pytest.raises(ConflictError):  # a stale compare-and-swap fails across processes too
            await one.update("/k/x", b"3", expected_revision=created.mod_revision)
        assert (await one.get("/k/x")).value == b"2"  # type: ignore[union-attr]
        deleted = await one.delete("/k/x")
        seen = [await next_events(watch, 3) for watch in watches]
    finally:
        await one.close()
        await other.close()
    for events in seen:
        assert [(e.type, e.revision, e.kv.value, e.prev_value) for e in events] == [
            (EventType.ADDED, created.mod_revision, b"1", None),
            (EventType.MODIFIED, updated.mod_revision, b"2", b"1"),
            (EventType.DELETED, deleted.mod_revision, b"2", b"2"),
        ]


async def test_a_write_is_answered_once_its_own_watchers_have_it(tmp_path: Path) -> None:
    """As with one process: a caller that awaited a write finds the event queued for the watch
    of its own process, although the event is read back from the log."""
    one, other = await _open(tmp_path / "kplane.db"), await _open(tmp_path / "kplane.db")
    try:
        watch = one.watch("/k/", from_revision=0)
        for i in range(20):
            await other.create(f"/k/theirs-{i}", b"x")  # others' writes interleave
            kv = await one.create(f"/k/ours-{i}", b"x")
            assert len(watch) == 2 * i + 2, kv  # type: ignore[arg-type]  (queued: theirs, then ours)
    finally:
        await one.close()
        await other.close()


async def test_one_database_is_opened_shared_by_all_or_by_one(tmp_path: Path) -> None:
    path = str(tmp_path / "kplane.db")
    shared = await _open(tmp_path / "kplane.db")
    try:
        with pytest.raises(StorageError, match="in use by another process"):
            await SQLiteStorage.open(path, compact_interval=0)
    finally:
        await shared.close()
    alone = await SQLiteStorage.open(path, compact_interval=0)
    try:
        with pytest.raises(StorageError, match="in use by another process"):
            await _open(tmp_path / "kplane.db")
    finally:
        await alone.close()


async def test_compaction_by_one_process_leaves_the_others_following(tmp_path: Path) -> None:
    one, other = await _open(tmp_path / "kplane.db"), await _open(tmp_path / "kplane.db")
    try:
        watch = other.watch("/k/", from_revision=0)
        kv = await one.create("/k/x", b"0")
        for i in range(1, 50):
            kv = await one.update("/k/x", str(i).encode(), expected_revision=kv.mod_revision)
        events = await next_events(watch, 50)  # the follower has them all: compaction cannot outrun it
        await asyncio.gather(one.compact(45), other.compact(45))  # both at once: each chunk done once
        await other.compact(40)  # an older target: nothing to do
        latest = await one.create("/k/after", b"y")
        events += await next_events(watch, 1)
        with pytest.raises(CompactedError):
            await other.list("/k/", revision=45)
        assert (await other.list("/k/", revision=46)).items[0].value == b"45"
    finally:
        await one.close()
        await other.close()
    assert [e.revision for e in events] == list(range(1, latest.mod_revision + 1))


async def test_a_commit_by_another_process_wakes_the_follower_at_once(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The kernel's word that another process committed is what the follower waits on: with
    its fallback check an hour away, the one write of another process still reaches the watch
    (a cue taken from the write-ahead log came before the commit showed, and then none came)."""
    monkeypatch.setattr(sqlite_backend, "_FOLLOW_CHECK", 3600.0)
    path = tmp_path / "kplane.db"
    here = await _open(path)
    try:
        watch = here.watch("/k/", from_revision=0)
        writer = await asyncio.create_subprocess_exec(sys.executable, "-c", _WRITER, str(path), "one", "10",
                                                      cwd=REPO_ROOT, stdout=asyncio.subprocess.PIPE)
        out, _ = await writer.communicate()
        events = await next_events(watch, 10)
    finally:
        await here.close()
    assert [event.revision for event in events] == [int(revision) for revision in out.split()] == list(range(1, 11))


_FOLLOWER = """
import asyncio, sys
from kplane.core.storage.sqlite import SQLiteStorage

async def main(path):
    storage = await SQLiteStorage.open(path, compact_interval=0, shared=True)
    watch = storage.watch("/k/", from_revision=0)
    print("watching", flush=True)
    try:
        async for event in watch:
            print("event", event.revision, flush=True)
    except Exception as err:
        print("ended", type(err).__name__, flush=True)
    await storage.close()

asyncio.run(main(sys.argv[1]))
"""


async def test_a_process_left_behind_by_compaction_ends_its_watches_as_compacted(tmp_path: Path) -> None:
    """A stopped worker whose follower wakes to find the revisions it missed compacted away
    cannot tell its watchers what happened in between: they end as etcd's do (the watch cache
    lists again), rather than skipping the gap."""
    path = tmp_path / "kplane.db"
    here = await _open(path)
    follower = await asyncio.create_subprocess_exec(sys.executable, "-c", _FOLLOWER, str(path), cwd=REPO_ROOT,
                                                    stdout=asyncio.subprocess.PIPE)
    assert follower.stdout is not None
    try:
        assert await asyncio.wait_for(follower.stdout.readline(), 30) == b"watching\n"
        freeze(follower.pid)
        kv = await here.create("/k/x", b"0")
        for i in range(1, 20):
            kv = await here.update("/k/x", str(i).encode(), expected_revision=kv.mod_revision)
        await here.compact(kv.mod_revision)
        follower.send_signal(signal.SIGCONT)
        lines = [await asyncio.wait_for(follower.stdout.readline(), 30)]
    finally:
        follower.kill()
        await follower.wait()
        await here.close()
    assert lines == [b"ended CompactedError\n"]


async def test_a_follower_that_fails_ends_its_watches_and_its_health(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Events this process can no longer read are never skipped silently: once its reads have
    failed for long enough, its watches end (503 to clients), its health check fails, and a
    write it commits after that is answered as unfollowed rather than hanging."""
    monkeypatch.setattr(sqlite_backend, "_FOLLOW_GIVE_UP", 0.3)
    path = tmp_path / "kplane.db"
    storage = await _open(path)
    try:
        watch = storage.watch("/k/", from_revision=0)
        conn = sqlite3.connect(path)  # a failure the backend cannot foresee: its log is gone
        conn.execute("ALTER TABLE log RENAME TO elsewhere")
        conn.commit()
        with pytest.raises(UnavailableError, match="stopped following its database"):
            await next_events(watch, 1)
        with pytest.raises(UnavailableError, match="stopped following its database"):
            await storage.health()
        conn.execute("ALTER TABLE elsewhere RENAME TO log")
        conn.commit()
        conn.close()
        async with asyncio.timeout(30):  # not left waiting for a follower that is gone
            with pytest.raises(UnavailableError, match="stopped following its database"):
                await storage.create("/k/late", b"x")
    finally:
        await storage.close()


async def test_a_follower_whose_reads_fail_for_a_moment_goes_on_where_it_was(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """A read that fails (here the log is away for a moment) is tried again: nothing published
    twice, nothing skipped, and the storage stays healthy."""
    path = tmp_path / "kplane.db"
    storage = await _open(path)
    try:
        watch = storage.watch("/k/", from_revision=0)
        before = await storage.create("/k/before", b"x")
        conn = sqlite3.connect(path)
        conn.execute("ALTER TABLE log RENAME TO elsewhere")
        conn.commit()
        cue = os.open(f"{path}.write-lock", os.O_WRONLY)
        os.pwrite(cue, b"\0", 0)  # a writer's cue: look now
        os.close(cue)
        async with asyncio.timeout(30):
            while "cannot read the log" not in caplog.text:
                await asyncio.sleep(0.05)
        conn.execute("ALTER TABLE elsewhere RENAME TO log")
        conn.commit()
        conn.close()
        after = await storage.create("/k/after", b"y")
        events = await next_events(watch, 2)
        await storage.health()
    finally:
        await storage.close()
    assert [event.revision for event in events] == [before.mod_revision, after.mod_revision]
