"""Watch fan-out: 500 watchers on Deployments while 2,000 updates land, in one run.

Two servers are measured one after the other on the same machine and data:

* kplane as it runs: each event is encoded once per (version, format) and the same bytes go to
  every watcher;
* the naive way: the same server, but encoding every event once per watcher.

Watching the storage version (apps/v1) an encoding is a splice of stored bytes; ``--version
v1beta2`` makes every encoding a conversion too (the servers run with ``--runtime-config
apps/v1beta2=true``: that version is off by default).

Printed per server: deliveries per second (watchers x updates / time from the first update to
the last delivery), p50 and p99 delivery delay (from sending an update to a watcher reading its
event), server CPU seconds and peak RSS during the run.

    python bench/watch_bench.py [--watchers 500] [--updates 2000] [--writers 4]
"""

from __future__ import annotations

import argparse
import asyncio
import re
import statistics
import tempfile
import time
from pathlib import Path

import aiohttp

from kplane.core.patching.mediatypes import MERGE_PATCH

from common import DEPLOYMENTS, cpu_seconds, deployment, kplane, memory_mib, post_all, print_comparison, reset_peak_memory

RV = re.compile(rb'"resourceVersion":"(\d+)"')


async def watcher(session: aiohttp.ClientSession, path: str, since: str, received: list[tuple[int, float]],
                  opened: asyncio.Event, expected: int) -> None:
    """Read one watch stream, noting when each event's resourceVersion arrives; parse nothing else."""
    async with session.get(path, params={"watch": "1", "resourceVersion": since}) as reply:
        assert reply.status == 200, await reply.text()
        opened.set()
        tail = b""
        async for chunk in reply.content.iter_any():
            now = time.perf_counter()
            data = tail + chunk
            cut = data.rfind(b"\n") + 1
            tail = data[cut:]
            received.extend((int(m.group(1)), now) for m in RV.finditer(data, 0, cut))
            if len(received) >= expected:
                return


async def measure(url: str, pid: int, watchers: int, updates: int, writers: int, version: str) -> dict[str, float]:
    names = [f"w{i}" for i in range(writers)]
    await post_all(url, DEPLOYMENTS, [deployment(n) for n in names])
    connector = aiohttp.TCPConnector(limit=0)
    timeout = aiohttp.ClientTimeout(total=None, sock_read=None)
    async with aiohttp.ClientSession(base_url=url, connector=connector, timeout=timeout) as session:
        async with session.get(DEPLOYMENTS) as reply:
            since = (await reply.json())["metadata"]["resourceVersion"]
        received: list[list[tuple[int, float]]] = [[] for _ in range(watchers)]
        opened = [asyncio.Event() for _ in range(watchers)]
        watched = DEPLOYMENTS.replace("/apps/v1/", f"/apps/{version}/")
        readers = [asyncio.create_task(watcher(session, watched, since, received[i], opened[i], updates))
                   for i in range(watchers)]
        await asyncio.gather(*(o.wait() for o in opened))
        await asyncio.sleep(0.5)
        sent: dict[int, float] = {}
        reset_peak_memory(pid)
        cpu_before = cpu_seconds(pid)
        began = time.perf_counter()

        async def write(name: str, count: int) -> None:
            async with aiohttp.ClientSession(base_url=url) as own:
                for i in range(count):
                    at = time.perf_counter()
                    patch = {"metadata": {"annotations": {"bench/round": str(i)}}}
                    async with own.patch(f"{DEPLOYMENTS}/{name}", json=patch,
                                         headers={"Content-Type": MERGE_PATCH}) as reply:
                        body = await reply.json()
                        assert reply.status == 200, body
                    sent[int(body["metadata"]["resourceVersion"])] = at

        await asyncio.gather(*(write(n, updates // writers) for n in names))
        await asyncio.wait_for(asyncio.gather(*readers), 600)
        finished = max(events[-1][1] for events in received)
        cpu = cpu_seconds(pid) - cpu_before
        _, peak = memory_mib(pid)
    delays = sorted((at - sent[rv]) * 1000 for events in received for rv, at in events if rv in sent)
    deliveries = sum(len(events) for events in received)
    return {
        "deliveries/s": deliveries / (finished - began),
        "p50 delay (ms)": statistics.median(delays),
        "p99 delay (ms)": delays[int(len(delays) * 0.99) - 1],
        "server CPU (s)": cpu,
        "server peak RSS (MiB)": peak,
    }


def serve_naive(port: int, data: Path, runtime_config: str) -> None:
    """A kplane server that encodes every watch event once per watcher (the naive way)."""
    from kplane.core.authz.options import AuthorizationOptions
    from kplane.core.cli import _serve
    from kplane.core.config import ServerConfig
    from kplane.core.runtime.scheme import parse_runtime_config
    from kplane.core.serving.apiserver import APIServer

    config = ServerConfig(data_dir=data, port=port, tls=False, authorization=AuthorizationOptions(modes=("AlwaysAllow",)),
                          run_controllers=False, share_watch_encoding=False, runtime_config=parse_runtime_config(runtime_config))
    asyncio.run(_serve(APIServer(config)))


BETA = "apps/v1beta2=true"  # served for --version v1beta2


async def main(watchers: int, updates: int, writers: int, version: str) -> None:
    variants = {"encode once": {}, "per watcher": {"program": (__file__, "--serve-naive")}}
    results = {}
    for label, options in variants.items():
        with tempfile.TemporaryDirectory() as tmp, kplane(Path(tmp), "--no-controllers", "--runtime-config", BETA, **options) as (process, url):
            results[label] = await measure(url, process.pid, watchers, updates, writers, version)
    print_comparison(f"{watchers} watchers of apps/{version} x {updates} updates of {writers} Deployments "
                     "(stored as apps/v1; SQLite, watch cache on)",
                     ("once", "naive"), results["encode once"], results["per watcher"])


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--watchers", type=int, default=500)
    parser.add_argument("--updates", type=int, default=2000)
    parser.add_argument("--writers", type=int, default=4)
    parser.add_argument("--version", default="v1", help="the version watched: v1 (stored) or v1beta2 (converted)")
    parser.add_argument("--serve-naive", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--port", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--data-dir", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--no-controllers", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--http", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--runtime-config", default=BETA, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve_naive:
        serve_naive(args.port, args.data_dir, args.runtime_config)
    else:
        asyncio.run(main(args.watchers, args.updates, args.writers, args.version))
