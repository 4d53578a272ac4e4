"""LIST of 10,000 Deployments answered from the watch cache vs from storage, in one run.

One SQLite data dir is filled once; then the same data is served by kplane with its watch
cache (the default) and by kplane with ``--no-watch-cache``, one after the other. For each:
the median time of a full LIST (consistent read, ``resourceVersion`` unset), of a LIST with
``resourceVersion=0``, of 100 pages of ``limit=100``, and the server's peak RSS above what it
held before the LISTs.

    python bench/list_bench.py [--objects 10000] [--repeat 5]
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
from pathlib import Path

import aiohttp

from common import DEPLOYMENTS, deployment, kplane, median_get_ms, memory_mib, post_all, print_comparison, reset_peak_memory


async def paged_ms(session: aiohttp.ClientSession, page: int) -> float:
    began = time.perf_counter()
    token = ""
    while True:
        async with session.get(DEPLOYMENTS, params={"limit": str(page), **({"continue": token} if token else {})}) as reply:
            token = (await reply.json())["metadata"].get("continue", "")
        if not token:
            return (time.perf_counter() - began) * 1000


async def measure(url: str, pid: int, repeat: int) -> dict[str, float]:
    async with aiohttp.ClientSession(base_url=url, timeout=aiohttp.ClientTimeout(total=None)) as session:
        await median_get_ms(session, DEPLOYMENTS, 1)  # warm: the cache is filled, code paths are hot
        before, _ = memory_mib(pid)
        reset_peak_memory(pid)
        full = await median_get_ms(session, DEPLOYMENTS, repeat)
        any_rv = await median_get_ms(session, DEPLOYMENTS, repeat, resourceVersion="0")
        paged = await paged_ms(session, 100)
        _, peak = memory_mib(pid)
    return {"LIST, consistent (ms)": full, "LIST, resourceVersion=0 (ms)": any_rv,
            "LIST in pages of 100 (ms, all pages)": paged, "peak RSS above idle (MiB)": peak - before}


async def main(objects: int, repeat: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp)
        with kplane(data, "--no-controllers", "--no-watch-cache") as (_, url):
            await post_all(url, DEPLOYMENTS, [deployment(f"d{i:05d}") for i in range(objects)])
        results = {}
        for label, flag in (("watch cache", "--watch-cache"), ("storage", "--no-watch-cache")):
            with kplane(data, "--no-controllers", flag) as (process, url):
                results[label] = await measure(url, process.pid, repeat)
    print_comparison(f"{objects} Deployments, SQLite", ("cache", "storage"), results["watch cache"], results["storage"])


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--objects", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    asyncio.run(main(args.objects, args.repeat))
