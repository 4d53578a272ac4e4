"""Embedded SQLite storage: etcd v3 semantics in one file, with a kine-style schema.

``log`` is the append-only history, one row per write; its ``revision`` is an INTEGER PRIMARY KEY
AUTOINCREMENT, so revision numbers are never reused even after the newest rows are compacted away.
``current`` mirrors the latest value of every live key so latest reads never touch history, and
``meta`` holds compaction state. One writer thread owns the only write connection and
group-commits: every op queued while the previous commit was fsyncing rides the next transaction
and shares its fsync, each op checking its own precondition so a lost compare-and-swap fails alone.

Opened ``shared``, several processes write one database (``kplane serve --workers N``): their
writers take turns under a lock file, each reading the revision to hand out under SQLite's write
lock, and each process's follower thread publishes every write, its own and the others', read
back from the log in revision order (:class:`_Follower`).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import fcntl
import functools
import logging
import os
import queue
import select
import sqlite3
import threading
import time
import weakref
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, TypeVar

from kplane.core.privatefiles import new_private_dir, open_private, tighten
from kplane.core.storage.filechanges import FileChanges
from kplane.core.storage.interface import (
    CompactedError,
    ConflictError,
    EventType,
    FutureRevisionError,
    KeyExistsError,
    KeyNotFoundError,
    KeyValue,
    ListResult,
    Storage,
    StorageError,
    UnavailableError,
    WatchEvent,
)
from kplane.core.storage.watchqueue import EventQueue

_log = logging.getLogger(__name__)

_T = TypeVar("_T")

_SCHEMA = """
CREATE TABLE IF NOT EXISTS log (
    revision INTEGER PRIMARY KEY AUTOINCREMENT,
    key TEXT NOT NULL,
    create_revision INTEGER NOT NULL,
    prev_revision INTEGER NOT NULL,  -- the row this one supersedes; 0 for a create
    deleted INTEGER NOT NULL,        -- 1 for a tombstone, whose value is the key's last value
    value BLOB NOT NULL
);
CREATE INDEX IF NOT EXISTS log_key_revision ON log (key, revision);
CREATE TABLE IF NOT EXISTS current (
    key TEXT PRIMARY KEY,
    value BLOB NOT NULL,
    create_revision INTEGER NOT NULL,
    mod_revision INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS meta (
    name TEXT PRIMARY KEY,
    value INTEGER NOT NULL
);
"""

# Reads that the event-loop thread runs itself: a thread hop costs ~100-130 µs, more than a
# single-key get (~10 µs) or a page of up to ~100 values (~0.2 ms at 2.5 KB each). Bigger and
# unbounded lists cost milliseconds (10,000 values: ~70 ms), so they run on reader threads,
# where sqlite3 releases the GIL while it steps, instead of stalling every other request.
_INLINE_LIST_LIMIT = 100
_READER_THREADS = 2
_HISTORY_PAGE = 256  # watch replay reads the log in pages so a long history is never all in memory
_COMPACT_CHUNK = 1000  # revisions per compaction transaction, so writes interleave with it
# With other processes writing the database, a follower learns of their commits from the kernel
# (inotify on the write lock's file, which each writer touches once its commit is visible), and
# looks anyway once a _FOLLOW_CHECK; without inotify it looks every _FOLLOW_POLL (seconds; each
# look: SQLite's shared memory read, about 3% of a core for an idle process at 5 ms).
_FOLLOW_CHECK = 1.0
_FOLLOW_POLL = 0.005
# A look that fails (SQLite's error) is tried again every _FOLLOW_RETRY seconds; only failing for
# _FOLLOW_GIVE_UP seconds in a row ends the follower (a reader's own busy timeout is 10 s).
_FOLLOW_RETRY = 0.1
_FOLLOW_GIVE_UP = 10.0

_GET = "SELECT value, create_revision, mod_revision FROM current WHERE key = ?"
_INSERT_LOG = (
    "INSERT INTO log (revision, key, create_revision, prev_revision, deleted, value)"
    " VALUES (?, ?, ?, ?, ?, ?)"
)


def _prefix_end(prefix: str) -> str | None:
    """The smallest string above every string that starts with ``prefix`` (None: unbounded).

    SQLite compares TEXT as UTF-8 bytes, which orders like code points, so bumping the last code
    point gives an exclusive upper bound an index range scan can use (unlike LIKE).
    """
    while prefix:
        last = ord(prefix[-1])
        if last < 0x10FFFF:
            following = 0xE000 if last + 1 == 0xD800 else last + 1  # surrogates are not encodable
            return prefix[:-1] + chr(following)
        prefix = prefix[:-1]
    return None


def _key_range(prefix: str, start_after: str) -> tuple[str, tuple[str, ...]]:
    """SQL condition on ``key`` (for a table aliased ``t``) and its parameters."""
    if start_after >= prefix:
        condition, params = "t.key > ?", (start_after,)
    else:
        condition, params = "t.key >= ?", (prefix,)
    end = _prefix_end(prefix)
    if end is not None:
        condition, params = condition + " AND t.key < ?", params + (end,)
    return condition, params


def _make_private(path: str) -> None:
    """The database as 0600 before SQLite opens it: SQLite gives the ``-wal`` and ``-shm`` files it
    creates the database file's mode, whatever the umask. Existing ones are tightened too."""
    os.close(open_private(path, os.O_RDWR))
    for suffix in ("-wal", "-shm", "-journal"):
        tighten(path + suffix)


def _connect(path: str) -> sqlite3.Connection:
    # isolation_level=None: no implicit transactions; every multi-statement unit is explicit.
    conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    conn.execute("PRAGMA busy_timeout = 10000")
    return conn


def _connect_reader(path: str) -> sqlite3.Connection:
    conn = _connect(path)
    conn.execute("PRAGMA query_only = ON")
    return conn


def _current_revision(conn: sqlite3.Connection) -> int:
    """The last revision handed out, from the AUTOINCREMENT counter: it survives compaction of
    the newest rows, unlike MAX(revision)."""
    rows = conn.execute("SELECT seq FROM sqlite_sequence WHERE name = 'log'").fetchall()
    return int(rows[0][0]) if rows else 0


def _meta(conn: sqlite3.Connection, name: str) -> int:
    rows = conn.execute("SELECT value FROM meta WHERE name = ?", (name,)).fetchall()
    return int(rows[0][0]) if rows else 0


def _read_list(
    conn: sqlite3.Connection, prefix: str, revision: int, limit: int, start_after: str
) -> ListResult:
    """One list, read inside a single read transaction so the revision and rows agree."""
    conn.execute("BEGIN")
    try:
        current = _current_revision(conn)
        if revision > current:
            raise FutureRevisionError(revision, current)
        compacted = _meta(conn, "compact_revision")
        if revision and revision <= compacted:
            raise CompactedError(revision, compacted)
        at = revision or current
        condition, params = _key_range(prefix, start_after)
        row_limit = limit + 1 if limit > 0 else -1  # one extra row tells whether there is more
        if at == current:
            rows = conn.execute(
                "SELECT t.key, t.value, t.create_revision, t.mod_revision FROM current AS t"
                f" WHERE {condition} ORDER BY t.key LIMIT ?",
                (*params, row_limit),
            ).fetchall()
        else:
            # The state at ``at``: per key, the newest row at or before it, unless a tombstone.
            rows = conn.execute(
                "SELECT t.key, t.value, t.create_revision, t.revision FROM log AS t"
                f" WHERE {condition} AND t.revision <= ? AND t.deleted = 0 AND NOT EXISTS ("
                "  SELECT 1 FROM log AS n"
                "  WHERE n.key = t.key AND n.revision > t.revision AND n.revision <= ?)"
                " ORDER BY t.key LIMIT ?",
                (*params, at, at, row_limit),
            ).fetchall()
    finally:
        conn.execute("COMMIT")
    more = 0 < limit < len(rows)
    items = [KeyValue(*row) for row in (rows[:limit] if more else rows)]
    return ListResult(items=items, revision=at, more=more)


def _read_history(
    conn: sqlite3.Connection, prefix: str, after: int, until: int | None
) -> tuple[list[WatchEvent], int]:
    """Up to one page of events under ``prefix`` in (after, until], and the ``until`` used.

    ``until`` None pins it to the current revision, read in the same transaction.
    """
    conn.execute("BEGIN")
    try:
        compacted = _meta(conn, "compact_revision")
        if after < compacted:
            raise CompactedError(after, compacted)
        if until is None:
            until = _current_revision(conn)
        condition, params = _key_range(prefix, "")
        rows = conn.execute(
            "SELECT t.revision, t.key, t.create_revision, t.prev_revision, t.deleted, t.value,"
            " p.value FROM log AS t LEFT JOIN log AS p ON p.revision = t.prev_revision"
            f" WHERE t.revision > ? AND t.revision <= ? AND {condition}"
            " ORDER BY t.revision LIMIT ?",
            (after, until, *params, _HISTORY_PAGE),
        ).fetchall()
    finally:
        conn.execute("COMMIT")
    events = []
    for revision, key, created, prev, deleted, value, prev_value in rows:
        kv = KeyValue(key, value, created, revision)
        if deleted:
            events.append(WatchEvent(EventType.DELETED, kv, value))
        elif prev:
            events.append(WatchEvent(EventType.MODIFIED, kv, prev_value))
        else:
            events.append(WatchEvent(EventType.ADDED, kv))
    return events, until


@dataclass(slots=True)
class _Write:
    kind: Literal["create", "update", "delete"]
    key: str
    value: bytes
    expected: int  # the mod revision the key must have; 0 = any (delete only)
    future: asyncio.Future[KeyValue]


@dataclass(slots=True)
class _Compact:
    revision: int
    future: asyncio.Future[None]


@dataclass(slots=True)
class _Compaction:
    """A compaction in progress: its target and everyone waiting for it."""

    target: int
    futures: list[asyncio.Future[None]] = field(default_factory=list)


_Outcome = tuple[asyncio.Future[KeyValue], KeyValue | StorageError]


class _Writer:
    """Owns the write connection; on its own thread, group-commits queued writes."""

    def __init__(
        self,
        path: str,
        loop: asyncio.AbstractEventLoop,
        publish: Callable[[list[WatchEvent]], None],
        max_batch: int,
        write_lock: int | None,
        follower: _Follower | None,
    ) -> None:
        """``write_lock`` and ``follower`` when other processes write the database too."""
        self._path = path
        self._loop = loop
        self._publish = publish
        self._max_batch = max_batch
        self._write_lock = write_lock
        self._follower = follower
        self._queue: queue.SimpleQueue[_Write | _Compact | None] = queue.SimpleQueue()  # None: stop
        # Held while checking ``_accepting`` and enqueueing, so nothing is queued after the stop
        # marker or after a crash drained the queue, where no one would ever answer it.
        self._gate = threading.Lock()
        self._accepting = True
        self._ready: concurrent.futures.Future[None] = concurrent.futures.Future()
        self._stopped: concurrent.futures.Future[None] = concurrent.futures.Future()
        self._thread = threading.Thread(target=self._run, name=f"sqlite-writer {path}", daemon=True)
        self._conn: sqlite3.Connection | None = None
        self._compaction: _Compaction | None = None

    async def start(self) -> None:
        """Open the database on the writer thread; raises whatever opening raised."""
        self._thread.start()
        await asyncio.wrap_future(self._ready)

    async def stop(self) -> None:
        """Commit everything queued so far, then end the thread."""
        with self._gate:
            if self._accepting:
                self._accepting = False
                self._queue.put(None)
        await asyncio.wrap_future(self._stopped)

    @property
    def alive(self) -> bool:
        """The thread runs and takes writes."""
        return self._thread.is_alive() and self._accepting

    def submit(self, item: _Write | _Compact) -> None:
        with self._gate:
            if not self._accepting:
                raise StorageError(f"storage {self._path} is closed")
            self._queue.put(item)

    def _run(self) -> None:
        try:
            self._conn = _connect(self._path)
            mode = self._conn.execute("PRAGMA journal_mode = WAL").fetchall()[0][0]
            if mode != "wal":
                raise StorageError(f"cannot use WAL journal mode on {self._path} (got {mode})")
            # FULL: the WAL is fsynced at every commit, so an acknowledged write survives a crash.
            self._conn.execute("PRAGMA synchronous = FULL")
            self._conn.executescript(_SCHEMA)
        except BaseException as exc:
            if self._conn is not None:
                self._conn.close()
            self._stopped.set_result(None)
            self._ready.set_exception(exc)
            return
        self._ready.set_result(None)
        try:
            self._serve()
        except BaseException:
            _log.exception("sqlite writer for %s crashed", self._path)
            self._fail_pending(StorageError(f"storage writer for {self._path} crashed"))
        finally:
            self._conn.close()
            # Set from this thread: the loop learns of it through call_soon_threadsafe, after
            # every result queued above, so stop() returns only once all callers are answered.
            self._stopped.set_result(None)

    def _serve(self) -> None:
        stopping = False
        while not stopping:
            writes: list[_Write] = []
            for item in self._take(block=self._compaction is None):
                if item is None:
                    stopping = True
                elif isinstance(item, _Write):
                    writes.append(item)
                elif self._compaction is None:
                    self._compaction = _Compaction(item.revision, [item.future])
                else:
                    self._compaction.target = max(self._compaction.target, item.revision)
                    self._compaction.futures.append(item.future)
            if writes:
                self._commit(writes)
            # One compaction chunk per turn: writes queued meanwhile go first on the next turn.
            if self._compaction is not None and not stopping:
                self._compact_chunk(self._compaction)
        self._fail_pending(StorageError(f"storage {self._path} closed during compaction"))

    def _take(self, *, block: bool) -> list[_Write | _Compact | None]:
        """Whatever is queued, up to one batch; waits for the first item when ``block``."""
        try:
            items = [self._queue.get(block=block)]
        except queue.Empty:
            return []
        while len(items) < self._max_batch:
            try:
                items.append(self._queue.get_nowait())
            except queue.Empty:
                break
        return items

    def _commit(self, writes: list[_Write]) -> None:
        """Apply a batch in one transaction (one fsync) and answer every caller."""
        assert self._conn is not None
        outcomes: list[_Outcome] = []
        events: list[WatchEvent] = []
        try:
            self._begin()
            revision = _current_revision(self._conn)  # read under the lock: others may have written
            for write in writes:
                outcome = self._apply(write, revision + 1)
                if isinstance(outcome, WatchEvent):
                    revision += 1
                    events.append(outcome)
                    outcomes.append((write.future, outcome.kv))
                else:
                    outcomes.append((write.future, outcome))
            self._end("COMMIT")
        except Exception as exc:
            _log.exception("write transaction on %s failed", self._path)
            with contextlib.suppress(sqlite3.Error):
                self._end("ROLLBACK")
            self._answer([(w.future, _failure(exc)) for w in writes], [])
            return
        if self._follower is None:
            self._answer(outcomes, events)
        else:  # published in revision order among other processes' writes, then answered
            self._follower.committed(revision, outcomes)

    def _begin(self) -> None:
        """A write transaction; with other writing processes, after their writers' turn."""
        assert self._conn is not None
        if self._write_lock is not None:
            # SQLite's own lock makes a waiting writer poll, sleeping 1, 2, 5 ... 100 ms between
            # tries; a blocking flock is handed on the moment the other writer lets it go.
            fcntl.flock(self._write_lock, fcntl.LOCK_EX)
        try:
            self._conn.execute("BEGIN IMMEDIATE")
        except BaseException:
            self._unlock()
            raise

    def _end(self, statement: Literal["COMMIT", "ROLLBACK"]) -> None:
        assert self._conn is not None
        try:
            self._conn.execute(statement)
            if statement == "COMMIT" and self._write_lock is not None:
                # The followers' cue (inotify on this file). Not the write-ahead log's own
                # change: its frames are written before the commit's fsync, so a follower woken
                # by them reads the database before the commit shows. Without the cue they
                # still find the commit at their next look: it stands either way.
                with contextlib.suppress(OSError):
                    os.pwrite(self._write_lock, b"\0", 0)
        finally:
            self._unlock()

    def _unlock(self) -> None:
        if self._write_lock is not None:
            fcntl.flock(self._write_lock, fcntl.LOCK_UN)

    def _apply(self, write: _Write, revision: int) -> WatchEvent | StorageError:
        """One write inside the batch transaction, or the error its precondition raised."""
        assert self._conn is not None
        conn, key = self._conn, write.key
        row = conn.execute(_GET, (key,)).fetchone()
        if write.kind == "create":
            if row is not None:
                return KeyExistsError(key)
            conn.execute(_INSERT_LOG, (revision, key, revision, 0, 0, write.value))
            conn.execute(
                "INSERT INTO current (key, value, create_revision, mod_revision)"
                " VALUES (?, ?, ?, ?)",
                (key, write.value, revision, revision),
            )
            return WatchEvent(EventType.ADDED, KeyValue(key, write.value, revision, revision))
        if row is None:
            return KeyNotFoundError(key)
        old_value, created, modified = row
        if (write.expected or write.kind == "update") and write.expected != modified:
            return ConflictError(key, write.expected, modified)
        if write.kind == "update":
            conn.execute(_INSERT_LOG, (revision, key, created, modified, 0, write.value))
            conn.execute(
                "UPDATE current SET value = ?, mod_revision = ? WHERE key = ?",
                (write.value, revision, key),
            )
            kv = KeyValue(key, write.value, created, revision)
            return WatchEvent(EventType.MODIFIED, kv, old_value)
        conn.execute(_INSERT_LOG, (revision, key, created, modified, 1, old_value))
        conn.execute("DELETE FROM current WHERE key = ?", (key,))
        return WatchEvent(EventType.DELETED, KeyValue(key, old_value, created, revision), old_value)

    def _compact_chunk(self, compaction: _Compaction) -> None:
        """Compact the next chunk of revisions in its own transaction.

        Each row written in (progress, target] supersedes its ``prev_revision`` row, which is
        deleted, and tombstones in that range go too. So a compaction only walks the revisions
        written since the last one, and the newest row of a live key is never removed. The
        compact revision is recorded in the first chunk's transaction, before anything it hides
        is deleted, so readers get CompactedError rather than a partial history.
        """
        assert self._conn is not None
        try:
            self._begin()
            low = _meta(self._conn, "compact_progress")  # another process may have compacted
            high = min(compaction.target, low + _COMPACT_CHUNK)
            self._conn.execute(
                "DELETE FROM log WHERE revision IN (SELECT prev_revision FROM log"
                " WHERE revision > ? AND revision <= ? AND prev_revision > 0)",
                (low, high),
            )
            self._conn.execute(
                "DELETE FROM log WHERE revision > ? AND revision <= ? AND deleted = 1", (low, high)
            )
            self._conn.executemany(
                "INSERT INTO meta (name, value) VALUES (?, ?)"
                " ON CONFLICT (name) DO UPDATE SET value = max(value, excluded.value)",
                [("compact_revision", compaction.target), ("compact_progress", high)],
            )
            self._end("COMMIT")
        except Exception as exc:
            _log.exception("compaction of %s failed", self._path)
            with contextlib.suppress(sqlite3.Error):
                self._end("ROLLBACK")
            self._compaction = None
            self._answer([(f, _failure(exc)) for f in compaction.futures], [])
            return
        if high >= compaction.target:
            self._compaction = None
            self._answer([(f, None) for f in compaction.futures], [])

    def _fail_pending(self, error: StorageError) -> None:
        """Answer everything still waiting (queued ops, a running compaction) with ``error``."""
        with self._gate:
            self._accepting = False
            outcomes: list[tuple[asyncio.Future[Any], StorageError]] = []
            while True:
                try:
                    item = self._queue.get_nowait()
                except queue.Empty:
                    break
                if item is not None:
                    outcomes.append((item.future, error))
        if self._compaction is not None:
            outcomes += [(future, error) for future in self._compaction.futures]
            self._compaction = None
        if outcomes:
            self._answer(outcomes, [])

    def _answer(self, outcomes: list[tuple[asyncio.Future[Any], Any]], events: list[WatchEvent]) -> None:
        _answer_on(self._loop, self._publish, outcomes, events)


def _answer_on(
    loop: asyncio.AbstractEventLoop,
    publish: Callable[[list[WatchEvent]], None],
    outcomes: list[tuple[asyncio.Future[Any], Any]],
    events: list[WatchEvent],
) -> None:
    """From a storage thread: on the loop, publish ``events``, then settle each future with its
    outcome (a result, or a StorageError to raise). Publishing comes first, so a caller that
    awaited a write finds watchers fed."""
    _on_loop(loop, _settle, publish, outcomes, events)


def _on_loop(loop: asyncio.AbstractEventLoop, callback: Callable[..., None], *args: object) -> None:
    """From a storage thread: ``callback(*args)`` on the loop, unless the loop is closed."""
    try:
        loop.call_soon_threadsafe(callback, *args)
    except RuntimeError:  # the loop is closed: nobody is left to answer
        _log.warning("event loop closed; dropped a call of %s", getattr(callback, "__name__", callback))


def _settle(
    publish: Callable[[list[WatchEvent]], None],
    outcomes: list[tuple[asyncio.Future[Any], Any]],
    events: list[WatchEvent],
) -> None:
    if events:
        publish(events)
    for future, outcome in outcomes:
        if future.done():  # the caller was cancelled; the write stands, as in etcd
            continue
        if isinstance(outcome, StorageError):
            future.set_exception(outcome)
        else:
            future.set_result(outcome)


def _failure(exc: Exception) -> StorageError:
    """A fresh error per waiter (sharing one instance would tangle their tracebacks)."""
    error = StorageError(f"write transaction failed: {exc!r}")
    error.__cause__ = exc
    return error


class _Follower:
    """With other processes writing the database: the one publisher of every committed write,
    this process's and theirs, read back from the log in revision order on a thread of its own.

    Its thread reads the log when any process's writer has committed (the writers touch the
    write lock's file, :class:`FileChanges` tells of it), and at once for its own writer's;
    ``PRAGMA data_version`` tells it whether any connection committed since it last looked.
    Our writers' callers are answered once their revisions are
    published, so, as with one process, a caller that awaited a write finds this process's
    watchers fed. Revisions come without gaps: every writer takes the next one under SQLite's
    write lock, so once a revision is committed, so is every one before it.
    """

    def __init__(
        self,
        path: str,
        loop: asyncio.AbstractEventLoop,
        publish: Callable[[list[WatchEvent]], None],
        end_watches: Callable[[Callable[[], StorageError]], None],
    ) -> None:
        self._path = path
        self._loop = loop
        self._publish = publish
        self._end_watches = end_watches  # on the loop, when events were lost to this process (the
        # error's maker: each watch its own)
        self._published = 0  # the last revision published
        self._lock = threading.Lock()  # guards ``_waiting``, which the writer thread adds to
        self._waiting: list[tuple[int, list[_Outcome]]] = []  # our writes' outcomes, by revision
        self._failed = False  # the thread ended early (crashed): writes committed since are unfollowed
        self._wake = (-1, -1)  # a pipe: a byte written wakes the thread (see ``start``)
        self._stopping = False
        self._stopped: concurrent.futures.Future[None] = concurrent.futures.Future()
        self._thread = threading.Thread(target=self._run, name=f"sqlite-follower {path}", daemon=True)

    def start(self, revision: int) -> None:
        """Follow the writes after ``revision``."""
        self._published = revision
        self._wake = os.pipe2(os.O_NONBLOCK | os.O_CLOEXEC)
        self._thread.start()

    async def stop(self) -> None:
        """Publish and answer what is committed (the writer has stopped), then end the thread."""
        self._stopping = True
        self._poke()
        await asyncio.wrap_future(self._stopped)
        for fd in self._wake:
            os.close(fd)

    @property
    def alive(self) -> bool:
        return self._thread.is_alive() and not self._failed

    def committed(self, revision: int, outcomes: list[_Outcome]) -> None:
        """From the writer thread: answer ``outcomes`` once ``revision`` is published."""
        with self._lock:
            if not self._failed:
                self._waiting.append((revision, outcomes))
                self._poke()
                return
        _answer_on(self._loop, self._publish, [(future, self._unfollowed()) for future, _ in outcomes], [])

    def _poke(self) -> None:
        with contextlib.suppress(BlockingIOError):  # a full pipe wakes the thread already
            os.write(self._wake[1], b"\0")

    def _run(self) -> None:
        conn: sqlite3.Connection | None = None
        changes = FileChanges.of(self._path + ".write-lock")  # before the first look: none missed
        woken = select.poll()
        for fd in (self._wake[0], *([changes.fileno()] if changes is not None else [])):
            woken.register(fd, select.POLLIN)
        interval_ms = 1000 * (_FOLLOW_POLL if changes is None else _FOLLOW_CHECK)
        try:
            conn = _connect_reader(self._path)
            seen = None
            failing_since = None  # when the looks began to fail
            while True:
                stopping = self._stopping
                try:
                    version = conn.execute("PRAGMA data_version").fetchone()[0]
                    if version != seen or self._waiting:
                        self._catch_up(conn)  # it keeps what it published of a look that fails
                        seen = version
                    failing_since = None
                except sqlite3.OperationalError as err:
                    now = time.monotonic()
                    if failing_since is None:
                        _log.warning("sqlite follower for %s cannot read the log (trying again): %s",
                                     self._path, err)
                        failing_since = now
                    if stopping or now - failing_since > _FOLLOW_GIVE_UP:
                        raise  # what it could not publish is answered as unfollowed
                if stopping:
                    return
                woken.poll(interval_ms if failing_since is None else 1000 * _FOLLOW_RETRY)
                with contextlib.suppress(BlockingIOError):  # taken before looking: a later cue wakes again
                    while os.read(self._wake[0], 4096):
                        pass
                if changes is not None:
                    changes.clear()
        except BaseException:
            _log.exception("sqlite follower for %s crashed", self._path)
            with self._lock:
                self._failed = True
                waiting, self._waiting = self._waiting, []
            unfollowed = [(future, self._unfollowed()) for _, outcomes in waiting for future, _ in outcomes]
            _answer_on(self._loop, self._publish, unfollowed, [])
            _on_loop(self._loop, self._end_watches, self._unfollowed)
        finally:
            if conn is not None:
                conn.close()
            if changes is not None:
                changes.close()
            self._stopped.set_result(None)

    def _catch_up(self, conn: sqlite3.Connection) -> None:
        """Publish everything committed after ``_published``, a page at a time, then answer the
        writes it covers."""
        while True:
            try:
                events, until = _read_history(conn, "", self._published, None)
            except CompactedError as err:
                # This process fell further behind than the history kept: its watches end as
                # compacted ones (the watch cache lists again) and it follows on from now.
                self._published = _current_revision(conn)
                compacted = functools.partial(CompactedError, err.requested, err.compacted)
                _on_loop(self._loop, self._end_watches, compacted)
                break
            full = len(events) == _HISTORY_PAGE
            self._published = events[-1].revision if full else until
            if events:
                _answer_on(self._loop, self._publish, [], events)
            if not full:
                break
        with self._lock:
            ready = [outcome for revision, outcomes in self._waiting if revision <= self._published
                     for outcome in outcomes]
            self._waiting = [entry for entry in self._waiting if entry[0] > self._published]
        if ready:
            _answer_on(self._loop, self._publish, ready, [])

    def _unfollowed(self) -> UnavailableError:
        """For each caller its own (one instance shared would tangle their tracebacks): its write
        may well be committed, but this process no longer follows the database."""
        return UnavailableError(f"storage {self._path} stopped following its database")


class _Watch(EventQueue, AsyncIterator[WatchEvent]):
    """One watcher: replays history from the log, then yields the live events it queued.

    It is registered before history is read, so every event committed after the history
    snapshot is queued; queued events the replay already yielded are skipped by revision, so
    none repeats. The storage only holds it weakly: dropping the iterator (e.g. ``break`` out of
    ``async for``) unregisters it, as does ``aclose()``.
    """

    def __init__(
        self, storage: SQLiteStorage, prefix: str, after: int, capacity: int, replay: bool
    ) -> None:
        super().__init__(prefix, capacity)
        self._storage = storage
        # The revision of the last history event yielded, or the starting point: live events at
        # or before it are not queued, and those queued before the replay caught up are skipped.
        self._last = after
        self._replaying = replay  # until the first live event after the history is yielded
        self._paging = replay  # history pages are left to read
        self._until: int | None = None  # the snapshot revision the replay reads up to
        self._history: deque[WatchEvent] = deque()

    def __aiter__(self) -> _Watch:
        return self

    def __anext__(self) -> Awaitable[WatchEvent]:
        # Not a coroutine itself: once replayed, each event costs only ``get``'s coroutine.
        return self._next_replayed() if self._replaying else self.get()

    async def aclose(self) -> None:
        self.end()

    def offer(self, events: list[WatchEvent]) -> None:
        """Queue committed events (on the loop, in revision order; behind history still
        unread); overflow ends the watch."""
        put = self.enqueue if self._paging or self._history else self.put
        for event in events:
            if event.revision > self._last and event.kv.key.startswith(self.prefix):
                put(event)

    def end(self, error: StorageError | None = None, *, keep_buffered: bool = False) -> None:
        """End the watch and unregister it. Events are kept (``keep_buffered``) only once the
        history is all read: live events kept after unread history would skip it."""
        if self.done:  # a later end must not drop what an earlier one kept
            return
        keep_buffered = keep_buffered and not self._paging
        super().end(error, keep_buffered=keep_buffered)
        self._paging = False
        if not keep_buffered:
            self._history.clear()
        self._storage._watchers.discard(self)

    async def batch(self, timeout: float | None) -> list[WatchEvent]:
        """History a page at a time; then, as EventQueue.batch, the queued events it did not have."""
        while not self._history and self._paging:
            await self._read_page()
        if self._history:
            events = list(self._history)
            self._history.clear()
            self._last = events[-1].revision
            return events
        events = await super().batch(timeout)
        if self._replaying and events:
            events = [event for event in events if event.revision > self._last]
            self._replaying = not events
        return events

    async def _next_replayed(self) -> WatchEvent:
        """The next history event, reading pages as needed; then the first queued event that
        the history did not have."""
        while not self._history and self._paging:
            await self._read_page()
        if self._history:
            event = self._history.popleft()
            self._last = event.revision
            return event
        while (event := await self.get()).revision <= self._last:
            pass
        self._replaying = False
        return event

    async def _read_page(self) -> None:
        try:
            events, self._until = await self._storage._read_in_thread(
                _read_history, self.prefix, self._last, self._until
            )
        except StorageError as exc:
            self.end(exc)
            return
        except (sqlite3.ProgrammingError, RuntimeError):
            if self.done:  # the storage closed under the read
                return
            raise
        if self.done:
            return
        self._history.extend(events)
        self._paging = len(events) == _HISTORY_PAGE


class SQLiteStorage(Storage):
    """Storage on one SQLite file: durable group-committed writes, snapshot lists, ordered watch.

    Create it with ``await SQLiteStorage.open(path)``. Either one process (and one instance)
    has a database open, or, opened ``shared``, any number of processes do (``kplane serve
    --workers N``), each publishing every process's writes to its watchers.
    """

    def __init__(
        self,
        path: str,
        lock_fd: int,
        write_lock: int | None,
        *,
        compact_interval: float,
        keep_revisions: int,
        watch_queue_size: int,
        max_batch: int,
    ) -> None:
        """Private: use ``open``, which also starts the writer thread and the compactor."""
        self._path = path
        self._lock_fd = lock_fd
        self._write_lock = write_lock  # shared: taken by the writer of each process in turn
        self._compact_interval = compact_interval
        self._keep_revisions = keep_revisions
        self._watch_queue_size = watch_queue_size
        self._loop = asyncio.get_running_loop()
        self._follower = (
            None if write_lock is None else _Follower(path, self._loop, self._publish, self._end_watches)
        )
        self._writer = _Writer(path, self._loop, self._publish, max_batch, write_lock, self._follower)
        self._watchers: weakref.WeakSet[_Watch] = weakref.WeakSet()
        self._conn: sqlite3.Connection | None = None  # the event-loop thread's read connection
        self._local = threading.local()
        self._reader_conns: list[sqlite3.Connection] = []
        self._readers = concurrent.futures.ThreadPoolExecutor(
            _READER_THREADS, thread_name_prefix="sqlite-reader", initializer=self._open_reader
        )
        self._compactor: asyncio.Task[None] | None = None
        self._closed = False

    @classmethod
    async def open(
        cls,
        path: str,
        *,
        compact_interval: float = 300.0,
        keep_revisions: int = 1000,
        watch_queue_size: int = 10_000,
        max_batch: int = 256,
        shared: bool = False,
    ) -> SQLiteStorage:
        """Open (creating directories and schema) the database at ``path``.

        Every ``compact_interval`` seconds (0 disables it) history older than the newest
        ``keep_revisions`` revisions is compacted. A watcher more than ``watch_queue_size``
        events behind is ended with WatcherOverflowError; a commit carries up to ``max_batch``
        writes. Raises StorageError if another process (or instance) has the database open,
        unless every one of them opens it ``shared``.
        """
        if path == ":memory:" or path.startswith("file:"):
            raise ValueError("SQLiteStorage needs a file path (WAL and the lock file need one)")
        path = os.path.abspath(path)
        try:
            new_private_dir(Path(path).parent)
            lock_fd = open_private(path + ".lock", os.O_RDWR)
        except OSError as err:
            raise StorageError(f"cannot open the database {path}: {err.strerror}") from None
        write_lock = None
        try:
            fcntl.flock(lock_fd, (fcntl.LOCK_SH if shared else fcntl.LOCK_EX) | fcntl.LOCK_NB)
            _make_private(path)
            if shared:
                write_lock = open_private(path + ".write-lock", os.O_RDWR)
        except BlockingIOError:
            os.close(lock_fd)
            raise StorageError(f"{path} is in use by another process") from None
        except OSError as err:
            os.close(lock_fd)
            raise StorageError(f"cannot open the database {path}: {err.strerror}") from None
        storage = cls(
            path,
            lock_fd,
            write_lock,
            compact_interval=compact_interval,
            keep_revisions=keep_revisions,
            watch_queue_size=watch_queue_size,
            max_batch=max_batch,
        )
        try:
            await storage._writer.start()
            storage._conn = _connect_reader(path)
            if storage._follower is not None:
                storage._follower.start(_current_revision(storage._conn))
        except BaseException as err:
            if storage._writer.alive:  # opened, but a later step failed: not left writing on
                await storage._writer.stop()
            storage._readers.shutdown()
            storage._release_lock()
            if isinstance(err, sqlite3.Error):  # not a database, malformed, read-only...: no traceback
                raise StorageError(f"cannot open the database {path}: {err}") from err
            raise
        if compact_interval > 0:
            storage._compactor = asyncio.create_task(
                storage._compact_periodically(), name=f"sqlite-compactor {path}"
            )
        return storage

    @property
    def watch_count(self) -> int:
        """Watchers currently registered (for metrics and leak checks)."""
        return len(self._watchers)

    async def get(self, key: str) -> KeyValue | None:
        rows = self._reader().execute(_GET, (key,)).fetchall()
        return KeyValue(key, *rows[0]) if rows else None

    async def list(
        self,
        prefix: str,
        *,
        revision: int = 0,
        limit: int = 0,
        start_after: str = "",
        min_revision: int | None = None,  # the latest is new enough, unless not written yet
    ) -> ListResult:
        if revision < 0:
            raise ValueError(f"revision must be >= 0, got {revision}")
        if 0 < limit <= _INLINE_LIST_LIMIT:
            result = _read_list(self._reader(), prefix, revision, limit, start_after)
        else:
            result = await self._read_in_thread(_read_list, prefix, revision, limit, start_after)
        if min_revision and result.revision < min_revision:
            raise FutureRevisionError(min_revision, result.revision)
        return result

    async def create(self, key: str, value: bytes) -> KeyValue:
        return await self._write("create", key, value, 0)

    async def update(self, key: str, value: bytes, *, expected_revision: int) -> KeyValue:
        return await self._write("update", key, value, expected_revision)

    async def delete(self, key: str, *, expected_revision: int = 0) -> KeyValue:
        return await self._write("delete", key, b"", expected_revision)

    def watch(self, prefix: str, *, from_revision: int) -> AsyncIterator[WatchEvent]:
        """Registers immediately, so from_revision=0 means "after the revision current now"."""
        if from_revision < 0:
            raise ValueError(f"from_revision must be >= 0, got {from_revision}")
        conn = self._reader()
        if from_revision == 0:
            watcher = _Watch(self, prefix, _current_revision(conn), self._watch_queue_size, False)
        else:
            watcher = _Watch(self, prefix, from_revision, self._watch_queue_size, True)
        self._watchers.add(watcher)
        return watcher

    async def current_revision(self) -> int:
        return _current_revision(self._reader())

    async def health(self) -> None:
        """The database answers a read and its writer thread runs."""
        _current_revision(self._reader())
        if not self._writer.alive:
            raise UnavailableError(f"the writer of storage {self._path} has stopped")
        if self._follower is not None and not self._follower.alive:
            raise UnavailableError(f"storage {self._path} has stopped following its database")

    async def size_bytes(self) -> int:
        """The database file and its write-ahead log, as they are on disk."""
        total = 0
        for path in (self._path, self._path + "-wal"):
            with contextlib.suppress(FileNotFoundError):
                total += os.stat(path).st_size
        return total

    async def compact(self, revision: int) -> None:
        conn = self._reader()
        current = _current_revision(conn)
        if revision > current:
            raise FutureRevisionError(revision, current)
        if revision <= _meta(conn, "compact_revision"):
            return
        future: asyncio.Future[None] = self._loop.create_future()
        self._writer.submit(_Compact(revision, future))
        await future

    async def close(self) -> None:
        """Finish queued writes, end every watcher's iteration, release the database."""
        if self._closed:
            return
        self._closed = True
        if self._compactor is not None:
            self._compactor.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._compactor
        await self._writer.stop()
        if self._follower is not None:
            await self._follower.stop()
        self._end_watches(None)
        await asyncio.to_thread(self._readers.shutdown)
        for conn in self._reader_conns:
            conn.close()
        if self._conn is not None:
            self._conn.close()
        self._release_lock()

    async def _write(
        self, kind: Literal["create", "update", "delete"], key: str, value: bytes, expected: int
    ) -> KeyValue:
        # Checked here, not in the writer: a bad argument would otherwise abort the shared
        # transaction and fail every other write of its batch.
        if not isinstance(key, str) or not isinstance(value, bytes):
            raise TypeError(f"key must be str and value bytes, got {type(key)}, {type(value)}")
        future: asyncio.Future[KeyValue] = self._loop.create_future()
        self._writer.submit(_Write(kind, key, value, expected, future))
        return await future

    def _reader(self) -> sqlite3.Connection:
        """The loop thread's read connection. Writers resolve futures only after COMMIT and this
        connection opens a fresh read transaction per statement, so reads see acknowledged writes.
        """
        if self._closed or self._conn is None:
            raise StorageError(f"storage {self._path} is closed")
        return self._conn

    async def _read_in_thread(self, read: Callable[..., _T], *args: object) -> _T:
        if self._closed:
            raise StorageError(f"storage {self._path} is closed")
        return await self._loop.run_in_executor(self._readers, self._call_reader, read, args)

    def _call_reader(self, read: Callable[..., _T], args: tuple[object, ...]) -> _T:
        return read(self._local.conn, *args)

    def _open_reader(self) -> None:
        """Reader-thread initializer: each thread gets its own connection."""
        self._local.conn = _connect_reader(self._path)
        self._reader_conns.append(self._local.conn)

    def _publish(self, events: list[WatchEvent]) -> None:
        for watcher in list(self._watchers):
            watcher.offer(events)

    def _end_watches(self, error: Callable[[], StorageError] | None) -> None:
        """End every watch, each with an error of its own from ``error`` (None: no error)."""
        for watcher in list(self._watchers):
            watcher.end(None if error is None else error())

    async def _compact_periodically(self) -> None:
        """Like kine: keep the newest ``keep_revisions`` revisions of history."""
        while True:
            await asyncio.sleep(self._compact_interval)
            try:
                target = await self.current_revision() - self._keep_revisions
                if target > 0:
                    await self.compact(target)
            except StorageError:
                _log.exception("periodic compaction of %s failed", self._path)

    def _release_lock(self) -> None:
        fcntl.flock(self._lock_fd, fcntl.LOCK_UN)
        os.close(self._lock_fd)
        if self._write_lock is not None:
            os.close(self._write_lock)
