"""What the watch cache holds per 10,000 objects, against the bytes they take in storage.

Two figures, both measured with tracemalloc in this one process (Python's allocations, not RSS),
each divided by the stored bytes (keys and values) of the same objects:

* **state**: a fresh ``CachedStorage`` loading ``--objects`` Pods and as many Deployments from
  SQLite, as a server does at start (the objects as a kplane server stores them: one of each is
  created through its API, then cloned under new names and uids);
* **window**: what an in-process server holds more after those objects were created through its
  storage while watches are open on them (one Pod watch without selectors, as an informer asks;
  one with a ``spec.nodeName`` field selector, as a kubelet asks; one Deployment watch), once
  every event was delivered: the state again plus the cache's window of recent events and what
  the watchers derived from those events (the server's own informers left out).

    python bench/cache_memory_bench.py [--objects 10000]
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import sys
import tempfile
import tracemalloc
import uuid
from pathlib import Path

import aiohttp

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from kplane.core.serving.apiserver import APIServer  # noqa: E402
from kplane.core.storage.cacher import CachedStorage  # noqa: E402
from kplane.core.storage.sqlite import SQLiteStorage  # noqa: E402
from tests.servers import server_config  # noqa: E402

from common import DEPLOYMENTS, deployment  # noqa: E402

PODS = "/api/v1/namespaces/default/pods"
POD = {"apiVersion": "v1", "kind": "Pod",
       "metadata": {"name": "sample", "labels": {"app": "web", "pod-template-hash": "5d4f8c7b9"}},
       "spec": {"nodeName": "node-1", "containers": [{"name": "web", "image": "nginx:1.25", "ports": [{"containerPort": 80}],
                                                      "resources": {"requests": {"cpu": "100m", "memory": "128Mi"}}}]}}


def traced() -> int:
    """Bytes traced now, but for the server's own informers (kplane's client-go: its admission
    plugins' caches of decoded objects, which are not the watch cache)."""
    gc.collect()
    snapshot = tracemalloc.take_snapshot().filter_traces([tracemalloc.Filter(False, "*/core/client/*")])
    return sum(stat.size for stat in snapshot.statistics("filename"))


def clone(key: str, value: bytes, uid: str, i: int) -> tuple[str, bytes]:
    """Copy ``i`` of a stored object, under a name and a uid of its own."""
    prefix, name = key.rsplit("/", 1)
    new = f"{name}-{i:05d}"
    body = value.replace(f'"name":"{name}"'.encode(), f'"name":"{new}"'.encode(), 1)
    return f"{prefix}/{new}", body.replace(uid.encode(), str(uuid.uuid4()).encode())


async def watch(session: aiohttp.ClientSession, path: str, expect: int, **params: str) -> None:
    """Read a watch until ``expect`` events came (an ADDED per object created)."""
    seen = 0
    async with session.get(path, params={"watch": "1", "resourceVersion": params.pop("rv"), **params}) as reply:
        async for _ in reply.content:
            seen += 1
            if seen == expect:
                return


async def window_phase(data: Path, objects: int) -> tuple[int, int]:
    """Create the clones through a server's storage with watches open; what it holds more then."""
    srv = APIServer(server_config(data_dir=data, port=0, run_controllers=False))
    await srv.start()
    try:
        async with aiohttp.ClientSession(base_url=srv.url) as session:
            samples = []
            for path, body in ((PODS, POD), (DEPLOYMENTS, deployment("sample"))):
                async with session.post(path, json=body) as reply:
                    created = await reply.json()
                    assert reply.status == 201, created
                key = f"/registry/{'core/pods' if path == PODS else 'apps/deployments'}/default/sample"
                kv = await srv.storage.get(key)
                samples.append((key, kv.value, created["metadata"]["uid"]))
            rv = str(await srv.storage.current_revision())
            watches = [asyncio.create_task(watch(session, PODS, objects, rv=rv)),
                       asyncio.create_task(watch(session, PODS, objects, rv=rv, fieldSelector="spec.nodeName=node-1")),
                       asyncio.create_task(watch(session, DEPLOYMENTS, objects, rv=rv))]
            await asyncio.sleep(0.5)  # the watches are open
            before, stored = traced(), 0
            for sample in samples:  # each value made here, as a request makes it
                for i in range(objects):
                    key, value = clone(*sample, i)
                    stored += len(key) + len(value)
                    await srv.storage.create(key, value)
                    del key, value
            await asyncio.wait_for(asyncio.gather(*watches), 600)
            held = traced() - before
    finally:
        await srv.stop()
    return stored, held


async def state_phase(data: Path) -> int:
    """What a fresh watch cache holds once loaded from the same database."""
    storage = await SQLiteStorage.open(str(data / "state.db"), compact_interval=0)
    before = traced()
    cache = await CachedStorage.open(storage, prefix="/registry/")
    held = traced() - before
    await cache.close()
    return held


async def main(objects: int) -> None:
    tracemalloc.start()
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "state"
        stored, window = await window_phase(data, objects)
        state = await state_phase(data)
    count = 2 * objects
    per = 10_000 / count
    mib = 1 << 20
    print(f"{count} objects ({objects} Pods, {objects} Deployments), stored bytes {stored / mib:.1f} MiB"
          f" ({stored / count:.0f} B per object)")
    print(f"{'':44}{'MiB per 10,000':>16}{'/ stored bytes':>16}")
    for label, held in (("state (cache loaded from storage)", state),
                        ("state + window, watched (after the writes)", window)):
        print(f"{label:44}{held * per / mib:16.1f}{held / stored:16.2f}")
    print(f"{'stored bytes':44}{stored * per / mib:16.1f}{1:16.2f}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--objects", type=int, default=10_000, help="Pods, and as many Deployments")
    asyncio.run(main(parser.parse_args().objects))
