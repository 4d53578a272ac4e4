"""What the metrics cost a request: the request filter's work (labels, counter, histogram) and a
storage call's timing, each measured alone in this process, against the CPU a ``kplane serve``
process spends per create and per GET of a Deployment, in one run.

    python bench/metrics_bench.py [--creates 2000] [--repeat 20000]
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from pathlib import Path

import aiohttp
from aiohttp import web
from aiohttp.test_utils import make_mocked_request

from common import DEPLOYMENTS, cpu_seconds, deployment, kplane

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from kplane.core.serving.apiserver import APIServer  # noqa: E402
from kplane.core.server import requestinfo  # noqa: E402
from kplane.core.server.filters import is_long_running  # noqa: E402
from kplane.core.server.instrumentation import RequestLabels, instrument  # noqa: E402
from tests.servers import server_config  # noqa: E402


async def server_cpu_us(url: str, pid: int, count: int, concurrency: int, get: bool) -> float:
    """Microseconds of the server process' CPU per request, ``concurrency`` at a time."""
    async with aiohttp.ClientSession(base_url=url) as session:
        async def one(worker: int) -> None:
            for i in range(worker, count, concurrency):
                if get:
                    async with session.get(f"{DEPLOYMENTS}/one") as reply:
                        assert reply.status == 200
                else:
                    async with session.post(DEPLOYMENTS, json=deployment(f"d-{i}")) as reply:
                        assert reply.status == 201

        began = cpu_seconds(pid)
        await asyncio.gather(*(one(w) for w in range(concurrency)))
        return (cpu_seconds(pid) - began) / count * 1e6


async def filter_us(server: APIServer, repeat: int) -> float:
    """Microseconds per request the metrics filter adds: the request filter around a handler
    that answers at once, less the handler alone (a create: the longest labels to work out)."""
    assert server.registry is not None
    middleware = instrument(server.metrics.requests, RequestLabels(server.scheme, server.registry))
    answer = web.Response(status=201)

    async def handler(request: web.Request) -> web.StreamResponse:
        return answer

    async def per_request(wrapped: bool) -> float:
        # A fresh request each time, made before timing, with what the server works out for
        # every request anyway (its query, what its path names) already known.
        requests = [make_mocked_request("POST", f"{DEPLOYMENTS}?fieldManager=bench",
                                        headers={"Content-Type": "application/json"}) for _ in range(repeat)]
        for request in requests:
            requestinfo.of(request), request.query, is_long_running(request)
        began = time.perf_counter()
        for request in requests:
            await (middleware(request, handler) if wrapped else handler(request))
        return (time.perf_counter() - began) / repeat * 1e6

    bare, wrapped = [], []
    for _ in range(5):  # alternating, the best of each: what the machine's noise left alone
        bare.append(await per_request(False))
        wrapped.append(await per_request(True))
    return min(wrapped) - min(bare)


def storage_us(server: APIServer, repeat: int) -> float:
    """Microseconds per storage call of its timing (two clock reads, one histogram observation)."""
    storage = server.metrics.storage
    resource = ("apps", "deployments")
    began = time.perf_counter()
    for _ in range(repeat):
        start = time.perf_counter()
        storage.observe("create", resource, time.perf_counter() - start)
    return (time.perf_counter() - began) / repeat * 1e6


async def main(creates: int, repeat: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        with kplane(Path(tmp) / "served", "--no-controllers") as (process, url):
            async with aiohttp.ClientSession(base_url=url) as session:
                async with session.post(DEPLOYMENTS, json=deployment("one")) as reply:
                    assert reply.status == 201
            create = await server_cpu_us(url, process.pid, creates, 16, get=False)
            get = await server_cpu_us(url, process.pid, creates, 16, get=True)
        server = APIServer(server_config(data_dir=Path(tmp) / "state", port=0, run_controllers=False))
        await server.start()  # its scheme and registry, for the labels
        try:
            request_cost = await filter_us(server, repeat)
            storage_cost = storage_us(server, repeat)
        finally:
            await server.stop()
    per_create = request_cost + storage_cost  # one request, one storage write (the cache serves the rest)
    print(f"{'measure':44} {'us':>8}")
    print(f"{'server CPU per create of a Deployment':44} {create:8.0f}")
    print(f"{'server CPU per GET of a Deployment':44} {get:8.0f}")
    print(f"{'metrics filter per request':44} {request_cost:8.2f}")
    print(f"{'storage call timing':44} {storage_cost:8.2f}")
    print(f"metrics / create: {per_create / create:.4f}   metrics / GET: {(request_cost + storage_cost) / get:.4f}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--creates", type=int, default=2000)
    parser.add_argument("--repeat", type=int, default=20000)
    args = parser.parse_args()
    asyncio.run(main(args.creates, args.repeat))
