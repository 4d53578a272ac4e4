"""Controllers at work: 100 Deployments x 10 replicas until all 1,000 Pods are Ready.

The server runs without controllers (``kplane serve --no-controllers``) and a separate
``kplane controller-manager`` process does the work, so its CPU seconds are its own. The
baseline, measured in the same run against a fresh server, is the API alone: 16 clients
creating the same 1,000 Pods directly. The ratio says what the controllers' reconciling costs on
top of writing the objects.

    python bench/rollout_bench.py [--deployments 100] [--replicas 10]
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
from pathlib import Path

import aiohttp

from common import DEPLOYMENTS, PODS, api_only, controller_manager, cpu_seconds, deployment, kplane, post_all, print_figures


async def ready_pods(url: str) -> int:
    async with aiohttp.ClientSession(base_url=url) as session:
        async with session.get(PODS, params={"fieldSelector": "status.phase=Running"}) as reply:
            items = (await reply.json())["items"]
    return sum(1 for p in items if any(c["type"] == "Ready" and c["status"] == "True" for c in p["status"].get("conditions", [])))


async def rollout(deployments: int, replicas: int) -> tuple[float, float]:
    with tempfile.TemporaryDirectory() as tmp, kplane(Path(tmp), "--no-controllers") as (_, url), \
            controller_manager(Path(tmp), nodes=10) as manager:
        await asyncio.sleep(1.0)  # let it list and register its nodes
        cpu_before = cpu_seconds(manager.pid)
        began = time.monotonic()
        await post_all(url, DEPLOYMENTS, [deployment(f"d{i:03d}", replicas) for i in range(deployments)])
        while await ready_pods(url) < deployments * replicas:
            await asyncio.sleep(0.25)
        return time.monotonic() - began, cpu_seconds(manager.pid) - cpu_before


async def main(deployments: int, replicas: int) -> None:
    raw = await api_only(deployments * replicas)
    took, cpu = await rollout(deployments, replicas)
    print_figures([(f"API only: create {deployments * replicas} Pods, 16 clients", raw),
                   (f"{deployments} Deployments x {replicas} replicas to all Ready", took),
                   ("controller-manager CPU during the rollout", cpu)], "rollout")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--deployments", type=int, default=100)
    parser.add_argument("--replicas", type=int, default=10)
    args = parser.parse_args()
    asyncio.run(main(args.deployments, args.replicas))
