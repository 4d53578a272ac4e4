"""A DaemonSet on 100 simulated nodes: from its creation until a pod is available on every node,
then a rolling update of it (maxUnavailable 10%) until every node runs the new template.

The server runs without controllers (``kplane serve --no-controllers``) and a separate
``kplane controller-manager`` process runs the daemon set controller and the simulated nodes, so
its CPU seconds are its own. The baseline, measured in the same run against a fresh server, is
the API alone: 16 clients creating the same number of Pods directly.

    python bench/daemonset_bench.py [--nodes 100]
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
from pathlib import Path
from typing import Any

import aiohttp

from common import api_only, controller_manager, cpu_seconds, kplane, post_all, print_figures

DSS = "/apis/apps/v1/namespaces/default/daemonsets"


def daemon_set() -> dict[str, Any]:
    return {"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": "agent"}, "spec": {
        "selector": {"matchLabels": {"app": "agent"}},
        "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "10%"}},
        "template": {"metadata": {"labels": {"app": "agent"}}, "spec": {"containers": [{"name": "agent", "image": "fluentd:v1"}]}}}}


async def get(session: aiohttp.ClientSession, path: str) -> Any:
    async with session.get(path) as reply:
        return await reply.json()


async def until(check: Any, every: float = 0.1) -> None:
    while not await check():
        await asyncio.sleep(every)


async def daemon(nodes: int) -> tuple[float, float, float]:
    with tempfile.TemporaryDirectory() as tmp, kplane(Path(tmp), "--no-controllers") as (_, url), \
            controller_manager(Path(tmp), nodes) as manager:
        async with aiohttp.ClientSession(base_url=url) as session:
            await until(lambda: _nodes_registered(session, nodes))
            await asyncio.sleep(0.5)  # the informers list them
            cpu_before = cpu_seconds(manager.pid)
            began = time.monotonic()
            await post_all(url, DSS, [daemon_set()], concurrency=1)
            await until(lambda: _rolled_out(session, nodes, 1))
            created = time.monotonic() - began
            began = time.monotonic()
            async with session.patch(f"{DSS}/agent", json={"spec": {"template": {"spec": {"containers": [
                    {"name": "agent", "image": "fluentd:v2"}]}}}},
                    headers={"Content-Type": "application/strategic-merge-patch+json"}) as reply:
                assert reply.status == 200, await reply.text()
            await until(lambda: _rolled_out(session, nodes, 2))
            updated = time.monotonic() - began
        return created, updated, cpu_seconds(manager.pid) - cpu_before


async def _nodes_registered(session: aiohttp.ClientSession, nodes: int) -> bool:
    return len((await get(session, "/api/v1/nodes"))["items"]) >= nodes


async def _rolled_out(session: aiohttp.ClientSession, nodes: int, generation: int) -> bool:
    status = (await get(session, f"{DSS}/agent")).get("status") or {}
    return (status.get("observedGeneration") == generation and status.get("updatedNumberScheduled") == nodes
            and status.get("numberAvailable") == nodes and status.get("desiredNumberScheduled") == nodes)


async def main(nodes: int) -> None:
    raw = await api_only(nodes, image="fluentd:v1")
    created, updated, cpu = await daemon(nodes)
    print_figures([(f"API only: create {nodes} Pods, 16 clients", raw), (f"a DaemonSet on {nodes} nodes to all available", created),
                   ("its rolling update (maxUnavailable 10%) to all updated", updated),
                   ("controller-manager CPU during both", cpu)], "DaemonSet")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=100)
    args = parser.parse_args()
    asyncio.run(main(args.nodes))
