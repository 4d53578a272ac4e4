"""Controllers at work: 100 Deployments x 10 replicas until all 1,000 Pods are Ready.

The server runs without controllers (``kplane serve --no-controllers``) and a separate
``kplane controller-manager`` process does the work, so its CPU seconds are its own. The
baseline, measured in the same run against a fresh server, is the API alone: 16 clients
creating the same 1,000 Pods directly. The ratio says what the controllers' reconciling costs on
top of writing the objects. Besides wall time it prints, per Ready Pod, the server's and the
controller-manager's CPU seconds, the API writes by verb and resource (the server's
``apiserver_request_total``, diffed over the rollout) and the 409 conflicts among them.

    python bench/rollout_bench.py [--deployments 100] [--replicas 10]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import tempfile
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import aiohttp

from common import DEPLOYMENTS, PODS, controller_manager, cpu_seconds, deployment, kplane, post_all, unscheduled_pod

NODES = 10
WRITES = {"POST", "PUT", "PATCH", "APPLY", "DELETE", "DELETECOLLECTION"}
_SERIES = re.compile(r'^apiserver_request_total\{(.*)\} ([\d.e+]+)$', re.M)
_LABEL = re.compile(r'(\w+)="([^"]*)"')


async def requests_total(url: str) -> Counter[tuple[str, str, str]]:
    """The server's write requests so far, by (verb, resource[/subresource], code)."""
    async with aiohttp.ClientSession(base_url=url) as session:
        async with session.get("/metrics") as reply:
            text = await reply.text()
    counts: Counter[tuple[str, str, str]] = Counter()
    for labels, value in _SERIES.findall(text):
        label = dict(_LABEL.findall(labels))
        if label["verb"] in WRITES:
            resource = label["resource"] + (f"/{label['subresource']}" if label["subresource"] else "")
            counts[label["verb"], resource, label["code"]] += int(float(value))
    return counts


@dataclass(frozen=True)
class Run:
    """What one measured phase cost: wall seconds, CPU seconds of the server and the
    controller-manager, and the write requests it made."""

    seconds: float
    server_cpu: float
    manager_cpu: float
    writes: Counter[tuple[str, str, str]]


def _is_ready(pod: dict) -> bool:
    status = pod.get("status") or {}
    return status.get("phase") == "Running" and any(c["type"] == "Ready" and c["status"] == "True" for c in status.get("conditions") or [])


async def until_ready(url: str, count: int) -> None:
    """Until ``count`` Pods are Running and Ready, as a watch shows them (a watch, not a LIST a
    quarter-second: the server's CPU is measured, and re-listing 1,000 Pods would be a cost of
    the benchmark's own)."""
    ready: set[str] = set()
    async with aiohttp.ClientSession(base_url=url, timeout=aiohttp.ClientTimeout(total=None)) as session:
        async with session.get(PODS) as reply:
            listed = await reply.json()
        ready.update(p["metadata"]["name"] for p in listed["items"] if _is_ready(p))
        version = listed["metadata"]["resourceVersion"]
        while len(ready) < count:
            params = {"watch": "1", "resourceVersion": version, "allowWatchBookmarks": "true"}
            async with session.get(PODS, params=params) as reply:
                async for line in reply.content:
                    event = json.loads(line)
                    pod = event["object"]
                    version = pod["metadata"]["resourceVersion"]
                    if event["type"] == "BOOKMARK":
                        continue
                    (ready.add if event["type"] != "DELETED" and _is_ready(pod) else ready.discard)(pod["metadata"]["name"])
                    if len(ready) >= count:
                        return


async def nodes_registered(url: str, count: int) -> None:
    """Until the controller-manager's ``count`` simulated Nodes exist and it is done starting."""
    async with aiohttp.ClientSession(base_url=url) as session:
        while True:
            async with session.get("/api/v1/nodes") as reply:
                if len((await reply.json())["items"]) >= count:
                    break
            await asyncio.sleep(0.25)
    await asyncio.sleep(1.0)  # its first node status and lease writes


HEARTBEATS = ("leases", "nodes/status")  # the simulated nodes' own, written every few seconds however idle


async def quiet(url: str, interval: float = 1.0) -> Counter[tuple[str, str, str]]:
    """The write counts once nothing but heartbeats changes (the event recorders send one at a
    time and trail the Pods' readiness by seconds), scraped ``interval`` apart."""
    def work(counts: Counter[tuple[str, str, str]]) -> Counter[tuple[str, str, str]]:
        return Counter({key: n for key, n in counts.items() if key[1] not in HEARTBEATS})

    last = await requests_total(url)
    while True:
        await asyncio.sleep(interval)
        now = await requests_total(url)
        if work(now) == work(last):
            return now
        last = now


async def direct_creates(count: int) -> Run:
    """The baseline: 16 clients create ``count`` Pods on a fresh server without controllers."""
    with tempfile.TemporaryDirectory() as tmp, kplane(Path(tmp), "--no-controllers") as (server, url):
        before, cpu = await requests_total(url), cpu_seconds(server.pid)
        began = time.monotonic()
        await post_all(url, PODS, [unscheduled_pod(f"p{i:04d}") for i in range(count)])
        took = time.monotonic() - began
        return Run(took, cpu_seconds(server.pid) - cpu, 0.0, await requests_total(url) - before)


async def rollout(deployments: int, replicas: int) -> Run:
    with tempfile.TemporaryDirectory() as tmp, kplane(Path(tmp), "--no-controllers") as (server, url), \
            controller_manager(Path(tmp), nodes=NODES) as manager:
        await nodes_registered(url, NODES)
        before, server_cpu, manager_cpu = await requests_total(url), cpu_seconds(server.pid), cpu_seconds(manager.pid)
        began = time.monotonic()
        await post_all(url, DEPLOYMENTS, [deployment(f"d{i:03d}", replicas) for i in range(deployments)])
        await until_ready(url, deployments * replicas)
        took = time.monotonic() - began
        writes = await quiet(url)  # the Events and status writes that follow the last Ready
        return Run(took, cpu_seconds(server.pid) - server_cpu, cpu_seconds(manager.pid) - manager_cpu, writes - before)


def print_run(pods: int, baseline: Run, run: Run) -> None:
    print(f"{'measure':<44}{'API only':>10}{'rollout':>10}{'ratio':>8}")
    for label, first, second in [("wall seconds", baseline.seconds, run.seconds),
                                 ("server CPU ms per Pod", baseline.server_cpu * 1000 / pods, run.server_cpu * 1000 / pods),
                                 ("controller-manager CPU ms per Pod", 0.0, run.manager_cpu * 1000 / pods),
                                 ("server + manager CPU ms per Pod", baseline.server_cpu * 1000 / pods,
                                  (run.server_cpu + run.manager_cpu) * 1000 / pods),
                                 ("writes per Pod", sum(baseline.writes.values()) / pods, sum(run.writes.values()) / pods),
                                 ("409 conflicts per Pod", sum(n for (_, _, code), n in baseline.writes.items() if code == "409") / pods,
                                  sum(n for (_, _, code), n in run.writes.items() if code == "409") / pods)]:
        ratio = f"{second / first:8.2f}" if first else f"{'':8}"
        print(f"{label:<44}{first:>10.2f}{second:>10.2f}{ratio}")
    print("rollout writes per Pod by verb, resource, code:")
    for (verb, resource, code), n in sorted(run.writes.items(), key=lambda item: -item[1]):
        print(f"  {verb:<8}{resource:<36}{code:>5}{n / pods:>8.3f}")
    print(f"rollout / API-only ratio: {run.seconds / baseline.seconds:.2f}")


async def main(deployments: int, replicas: int) -> None:
    pods = deployments * replicas
    baseline = await direct_creates(pods)
    print_run(pods, baseline, await rollout(deployments, replicas))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--deployments", type=int, default=100)
    parser.add_argument("--replicas", type=int, default=10)
    args = parser.parse_args()
    asyncio.run(main(args.deployments, args.replicas))
