"""Creates through kplane vs raw puts into the storage beneath it, on etcd and on SQLite.

For each backend, in one run on this machine, with the same concurrency (16) and value size (a
created Deployment as kplane stores it):

* raw: ``create`` calls straight into kplane's storage client (``EtcdStorage`` over etcd's
  HTTP/JSON gateway, ``SQLiteStorage`` with its group commit), in this process;
* kplane: Deployment creates over HTTP to a ``kplane serve`` process on that storage (without
  its controllers: the API server's write path), driven by ``wrk`` when it is on PATH (Debian's
  ``wrk``: a compiled load generator leaves both cores to the server), else by the Python client;
* floor: the same creates, driven the same way, to ``bench/floor_server.py`` on that storage:
  bare aiohttp, JSON and the storage client, no API machinery. It is as fast as a Python server
  on aiohttp can create, so ``kplane/floor`` is what the machinery costs and ``floor/raw`` what
  HTTP and JSON alone cost on top of the store.

etcd keeps its data on the same disk as SQLite (the temp dir), both with fsync on commit.

The issue's targets are ratios ``kplane/raw``: 0.25 on SQLite, 0.6 on etcd.

    python bench/backends_bench.py [--seconds 5]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path

import aiohttp

from common import DEPLOYMENTS, deployment, free_port, kplane, wait_ready, wrk_available, wrk_creates
from tests.etcd_process import EtcdProcess

from kplane.core.storage.etcd import EtcdStorage
from kplane.core.storage.interface import Storage
from kplane.core.storage.sqlite import SQLiteStorage

CONCURRENCY = 16
FLOOR = Path(__file__).resolve().parent / "floor_server.py"


async def rate(seconds: float, one: Callable[[int, int], Awaitable[None]]) -> float:
    """Operations per second that CONCURRENCY workers complete in ``seconds``."""
    done = 0
    deadline = time.monotonic() + seconds

    async def worker(w: int) -> None:
        nonlocal done
        i = 0
        while time.monotonic() < deadline:
            await one(w, i)
            done += 1
            i += 1

    began = time.monotonic()
    await asyncio.gather(*(worker(w) for w in range(CONCURRENCY)))
    return done / (time.monotonic() - began)


async def raw_creates(storage: Storage, seconds: float, size: int) -> float:
    value = b"x" * size
    run = uuid.uuid4().hex[:6]

    async def one(w: int, i: int) -> None:
        await storage.create(f"/registry/apps/deployments/default/raw-{run}-{w}-{i}", value)

    try:
        return await rate(seconds, one)
    finally:
        await storage.close()


async def kplane_creates(url: str, seconds: float) -> tuple[float, int]:
    """Creates per second, and the size of one Deployment as stored (for the raw run)."""
    connector = aiohttp.TCPConnector(limit=CONCURRENCY)
    async with aiohttp.ClientSession(base_url=url, connector=connector) as session:
        async with session.post(DEPLOYMENTS, json=deployment("sample")) as reply:
            size = len(await reply.read())

        async def one(w: int, i: int) -> None:
            async with session.post(DEPLOYMENTS, json=deployment(f"d-{w}-{i}")) as reply:
                assert reply.status == 201, await reply.text()

        if wrk_available():
            wrk_creates(url, DEPLOYMENTS, deployment("__NAME__"), 1, CONCURRENCY, "warm")
            return wrk_creates(url, DEPLOYMENTS, deployment("__NAME__"), seconds, CONCURRENCY, "d").per_second, size
        await rate(1, one)
        return await rate(seconds, one), size


@contextlib.contextmanager
def floor(storage_url: str) -> Iterator[str]:
    """A ready ``floor_server.py`` on ``storage_url``, and its URL; stopped afterwards."""
    port = free_port()
    process = subprocess.Popen([sys.executable, str(FLOOR), str(port), storage_url], stdout=subprocess.DEVNULL)
    try:
        url = f"http://127.0.0.1:{port}"
        wait_ready(url, process)  # type: ignore[arg-type]
        yield url
    finally:
        process.terminate()
        process.wait(timeout=20)


async def main(seconds: float) -> None:
    rows = []
    disk = tempfile.gettempdir()  # etcd's data on the same disk as SQLite's, both fsyncing
    etcd = EtcdProcess(parent=disk)
    etcd.start()
    try:
        with tempfile.TemporaryDirectory() as tmp:
            storage_url = f"etcd://127.0.0.1:{etcd.client_port}/bench"
            with kplane(Path(tmp), "--no-controllers", "--storage", storage_url) as (_, url):
                api, size = await kplane_creates(url, seconds)
            with floor(f"etcd://127.0.0.1:{etcd.client_port}/floor") as url:
                bare, _ = await kplane_creates(url, seconds)
            raw = await raw_creates(await EtcdStorage.open([etcd.endpoint], prefix="/raw"), seconds, size)
            rows.append(("etcd", raw, bare, api))
    finally:
        etcd.cleanup()
    with tempfile.TemporaryDirectory() as tmp:
        with kplane(Path(tmp) / "kplane", "--no-controllers") as (_, url):
            api, size = await kplane_creates(url, seconds)
        with floor(f"sqlite://{tmp}/floor.db") as url:
            bare, _ = await kplane_creates(url, seconds)
        raw = await raw_creates(await SQLiteStorage.open(f"{tmp}/raw.db"), seconds, size)
        rows.append(("SQLite", raw, bare, api))
    print(f"creates/s, {CONCURRENCY} concurrent, {size}-byte values; load: {'wrk' if wrk_available() else 'the Python client'}")
    print(f"{'backend':<10}{'raw storage':>13}{'floor':>9}{'kplane':>10}{'floor/raw':>11}{'kplane/raw':>12}{'kplane/floor':>14}")
    for name, raw, bare, api in rows:
        print(f"{name:<10}{raw:>13.0f}{bare:>9.0f}{api:>10.0f}{bare / raw:>11.2f}{api / raw:>12.2f}{api / bare:>14.2f}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=5.0)
    args = parser.parse_args()
    asyncio.run(main(args.seconds))
