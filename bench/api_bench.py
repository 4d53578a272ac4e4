"""API server speed against bare aiohttp, measured side by side in one run.

Both servers run as separate processes on loopback, driven by the same aiohttp client:

* GET of one Deployment (req/s), 16 concurrent keep-alive clients;
* create of Deployments (req/s), 16 concurrent clients (kplane: SQLite, synchronous=FULL);
* LIST of 5,000 Deployments (ms, median of 5).

The baseline (``bench/baseline_server.py``) returns the same bytes kplane returned, so a ratio
shows what the API machinery costs on top of the HTTP framework.

    python bench/api_bench.py [--seconds 3] [--list-size 5000]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import aiohttp

from common import DEPLOYMENTS as PATH
from common import deployment, free_port, kplane, median_get_ms, post_all, rate, wait_ready

HERE = Path(__file__).parent


async def list_ms(url: str, repeat: int = 5) -> float:
    async with aiohttp.ClientSession(base_url=url) as session:
        return await median_get_ms(session, PATH, repeat)


async def main(seconds: float, list_size: int) -> None:
    with tempfile.TemporaryDirectory() as tmp, kplane(Path(tmp), "--no-controllers") as (_, kplane_url):
        bport = free_port()
        base_url = f"http://127.0.0.1:{bport}"
        baseline = None
        try:
            async with aiohttp.ClientSession(base_url=kplane_url) as session:
                async with session.post(PATH, json=deployment("one")) as reply:
                    created = await reply.read()
                async with session.get(f"{PATH}/one") as reply:
                    one = await reply.read()

            async def create(session: aiohttp.ClientSession, worker: int, i: int) -> int:
                async with session.post(PATH, json=deployment(f"c-{worker}-{i}")) as reply:
                    await reply.read()
                    return reply.status

            async def get(session: aiohttp.ClientSession, worker: int, i: int) -> int:
                async with session.get(f"{PATH}/one") as reply:
                    await reply.read()
                    return reply.status

            k_get = (await rate(kplane_url, seconds, 16, get)).per_second
            k_create = (await rate(kplane_url, seconds, 16, create)).per_second
            async with aiohttp.ClientSession(base_url=kplane_url) as session:
                async with session.get(PATH) as reply:
                    existing = len(json.loads(await reply.read())["items"])
            await post_all(kplane_url, PATH, [deployment(f"fill-{i:05d}") for i in range(max(0, list_size - existing))])
            k_list = await list_ms(kplane_url)
            async with aiohttp.ClientSession(base_url=kplane_url) as session:
                async with session.get(PATH) as reply:
                    list_body = await reply.read()

            bodies = Path(tmp) / "bodies"
            bodies.mkdir()
            (bodies / "get").write_bytes(one)
            (bodies / "create").write_bytes(created)
            (bodies / "list").write_bytes(list_body)
            baseline = subprocess.Popen([sys.executable, str(HERE / "baseline_server.py"), str(bport), str(bodies)],
                                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            wait_ready(base_url, baseline)  # type: ignore[arg-type]
            b_get = (await rate(base_url, seconds, 16, get)).per_second
            b_create = (await rate(base_url, seconds, 16, create)).per_second
            b_list = await list_ms(base_url)
        finally:
            if baseline is not None:
                baseline.terminate()
                baseline.wait()

    items = len(json.loads(list_body)["items"])
    print(f"{'measure':<34}{'bare aiohttp':>14}{'kplane':>12}{'kplane/bare':>13}")
    print(f"{'GET one Deployment (req/s)':<34}{b_get:>14.0f}{k_get:>12.0f}{k_get / b_get:>13.2f}")
    print(f"{'create Deployment, 16 clients (req/s)':<34}{b_create:>14.0f}{k_create:>12.0f}{k_create / b_create:>13.2f}")
    print(f"{f'LIST {items} Deployments (ms)':<34}{b_list:>14.1f}{k_list:>12.1f}{k_list / b_list:>13.2f}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=3.0)
    parser.add_argument("--list-size", type=int, default=5000)
    args = parser.parse_args()
    asyncio.run(main(args.seconds, args.list_size))
