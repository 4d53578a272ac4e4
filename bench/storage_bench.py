"""What group commit buys: SQLiteStorage.create vs raw sqlite3 inserts, one transaction each.

Both sides use WAL with synchronous=FULL (an fsync per commit), the same value size and the same
number of concurrent writers. The raw baselines commit every insert on its own, either through one
shared connection (writers take turns) or one connection per writer (SQLite's lock and busy
timeout arbitrate); SQLiteStorage folds whatever is queued into one transaction and one fsync.

    .venv/bin/python bench/storage_bench.py [--ops 3000] [--concurrency 16] [--dir /some/disk]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sqlite3
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from kplane.core.storage.sqlite import SQLiteStorage  # noqa: E402


def _connect(path: str) -> sqlite3.Connection:
    conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False, timeout=60)
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("PRAGMA synchronous = FULL")
    conn.execute("CREATE TABLE IF NOT EXISTS kv (key TEXT PRIMARY KEY, value BLOB NOT NULL)")
    return conn


def _run_threads(concurrency: int, per_thread: int, insert: Callable[[int, int], None]) -> float:
    """Seconds for ``concurrency`` threads each calling ``insert(thread, i)`` per_thread times."""
    threads = [
        threading.Thread(target=lambda t=t: [insert(t, i) for i in range(per_thread)])
        for t in range(concurrency)
    ]
    started = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return time.perf_counter() - started


def raw_shared_connection(path: str, ops: int, concurrency: int, value: bytes) -> float:
    conn, lock = _connect(path), threading.Lock()

    def insert(thread: int, i: int) -> None:
        with lock:  # autocommit: every INSERT is its own transaction and fsync
            conn.execute("INSERT INTO kv VALUES (?, ?)", (f"/raw/{thread}/{i}", value))

    elapsed = _run_threads(concurrency, ops // concurrency, insert)
    conn.close()
    return elapsed


def raw_connection_per_writer(path: str, ops: int, concurrency: int, value: bytes) -> float:
    conns = [_connect(path) for _ in range(concurrency)]

    def insert(thread: int, i: int) -> None:
        conns[thread].execute("INSERT INTO kv VALUES (?, ?)", (f"/raw/{thread}/{i}", value))

    elapsed = _run_threads(concurrency, ops // concurrency, insert)
    for conn in conns:
        conn.close()
    return elapsed


async def storage_create(path: str, ops: int, concurrency: int, value: bytes) -> float:
    storage = await SQLiteStorage.open(path, compact_interval=0)

    async def writer(n: int) -> None:
        for i in range(ops // concurrency):
            await storage.create(f"/registry/bench/{n}/{i}", value)

    started = time.perf_counter()
    await asyncio.gather(*(writer(n) for n in range(concurrency)))
    elapsed = time.perf_counter() - started
    await storage.close()
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ops", type=int, default=3000)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--value-size", type=int, default=2500)
    parser.add_argument("--dir", default=None, help="where to put the databases (default: tmp)")
    args = parser.parse_args()
    ops = args.ops - args.ops % args.concurrency
    value = os.urandom(args.value_size)
    if args.dir:
        os.makedirs(args.dir, exist_ok=True)

    with tempfile.TemporaryDirectory(dir=args.dir) as directory:
        results = {
            "raw sqlite3, shared connection": raw_shared_connection(
                f"{directory}/shared.db", ops, args.concurrency, value
            ),
            "raw sqlite3, connection per writer": raw_connection_per_writer(
                f"{directory}/per-writer.db", ops, args.concurrency, value
            ),
            "SQLiteStorage.create (group commit)": asyncio.run(
                storage_create(f"{directory}/storage.db", ops, args.concurrency, value)
            ),
        }
    print(f"{ops} writes of {args.value_size} B, {args.concurrency} concurrent writers, "
          "WAL + synchronous=FULL")
    rates = {name: ops / seconds for name, seconds in results.items()}
    for name, rate in rates.items():
        print(f"  {name:38} {rate:9.0f} ops/s")
    grouped = rates["SQLiteStorage.create (group commit)"]
    for name in list(rates)[:2]:
        print(f"  SQLiteStorage / {name}: {grouped / rates[name]:.2f}x")


if __name__ == "__main__":
    main()
