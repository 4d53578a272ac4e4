"""Density, as clusterloader2 measures it: Deployments whose pods are created at a steady rate
(20 pods/s) and scheduled and made Ready on 100 simulated nodes for some minutes, while a
background mix of single-object GETs and namespace and cluster LISTs runs; then the memory the
watch cache takes per 10,000 cached objects.

The API's latency per class is read as clusterloader2's APIResponsivenessPrometheus reads it:
from the server's own ``apiserver_request_duration_seconds`` histogram, diffed between the start
and the end of the measured window (WATCH and CONNECT left out), p99 per (resource, subresource,
verb, scope) against kube's SLOs: 1 s for mutating calls and single-object reads, 5 s for a
namespace LIST, 30 s for a cluster LIST. The client's own timings are printed beside them. Pod
startup (created -> Ready, as PodStartupLatency) comes from a watch of the pods: the time the
pod was first seen to the time it was first seen Ready. The ratios are figure / target.

Memory: two fresh API-only servers, one with the watch cache and one without (the in-run
baseline), each given the same Pods; the cache's cost is the difference of their RSS growth,
put against the bytes the Pods take in storage (the values of SQLite's ``current`` table).

    python bench/density_bench.py [--minutes 5] [--seconds S] [--nodes 100] [--pods-per-second 20]
                                  [--replicas 20] [--objects 10000]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import random
import re
import signal
import sqlite3
import statistics
import tempfile
import time
from collections import defaultdict
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiohttp

from common import PODS, controller_manager, cpu_seconds, kplane, memory_mib, post_all, unscheduled_pod

#: kube's API call latency SLOs (clusterloader2's APIResponsivenessPrometheus thresholds), seconds.
TARGETS = {"mutating": 1.0, "read": 1.0, "namespace LIST": 5.0, "cluster LIST": 30.0}
MUTATING = {"POST", "PUT", "PATCH", "APPLY", "DELETE", "DELETECOLLECTION"}
_BUCKET = re.compile(r'^apiserver_request_duration_seconds_bucket\{(.*)\} (\S+)$', re.M)
_LABEL = re.compile(r'(\w+)="((?:[^"\\]|\\.)*)"')


def density_deployment(name: str, replicas: int) -> dict[str, Any]:
    """clusterloader2's density Deployment: pause containers with small requests, which run until stopped."""
    labels = {"name": name, "group": "density"}
    container = {"name": name, "image": "registry.k8s.io/pause:3.9",
                 "resources": {"requests": {"cpu": "1m", "memory": "10M"}}}
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name, "labels": labels},
            "spec": {"replicas": replicas, "selector": {"matchLabels": {"name": name}},
                     "template": {"metadata": {"labels": labels}, "spec": {"containers": [container]}}}}


# -- the server's histogram ------------------------------------------------------------------
Histogram = dict[tuple[str, str, str, str], dict[float, float]]  # (resource, subresource, verb, scope) -> le -> count


def parse_durations(text: str) -> Histogram:
    """The cumulative buckets of ``apiserver_request_duration_seconds`` per call kind."""
    found: Histogram = defaultdict(lambda: defaultdict(float))
    for labels, value in _BUCKET.findall(text):
        got = dict(_LABEL.findall(labels))
        if got.get("verb") in ("WATCH", "CONNECT") or not got.get("resource"):
            continue
        key = (got["resource"], got.get("subresource", ""), got["verb"], got.get("scope", ""))
        found[key][float(got["le"])] += float(value)
    return found


def call_class(verb: str, scope: str) -> str | None:
    """The SLO a call kind falls under, as clusterloader2 groups them."""
    if verb in MUTATING:
        return "mutating"
    if verb == "GET":
        return "read"
    if verb == "LIST":
        return "namespace LIST" if scope == "namespace" else "cluster LIST"
    return None


def quantile(buckets: dict[float, float], q: float) -> float:
    """Prometheus's ``histogram_quantile``: linear within the bucket the rank falls in."""
    edges = sorted(buckets)
    total = buckets[edges[-1]]
    if total <= 0:
        return 0.0
    rank, below, lower = q * total, 0.0, 0.0
    for edge in edges:
        if buckets[edge] >= rank:
            if edge == float("inf"):
                return lower  # past the last finite bucket: its bound, as Prometheus answers
            inside = buckets[edge] - below
            return lower + (edge - lower) * ((rank - below) / inside if inside else 1.0)
        below, lower = buckets[edge], edge
    return lower


def window(before: Histogram, after: Histogram) -> Histogram:
    """What the measured window added to each call kind's buckets."""
    return {key: {le: count - before.get(key, {}).get(le, 0.0) for le, count in buckets.items()}
            for key, buckets in after.items()}


@dataclass
class ClassFigures:
    calls: float = 0.0
    merged: dict[float, float] = field(default_factory=lambda: defaultdict(float))
    worst_p99: float = 0.0
    worst_key: str = ""


def by_class(diffed: Histogram) -> dict[str, ClassFigures]:
    """Each class's merged buckets (for its p50/p99) and its worst call kind's p99 (what the SLO judges)."""
    classes: dict[str, ClassFigures] = defaultdict(ClassFigures)
    for (resource, sub, verb, scope), buckets in diffed.items():
        name = call_class(verb, scope)
        count = buckets.get(float("inf"), 0.0)
        if name is None or count <= 0:
            continue
        figures = classes[name]
        figures.calls += count
        for le, value in buckets.items():
            figures.merged[le] += value
        p99 = quantile(buckets, 0.99)
        if p99 >= figures.worst_p99:
            figures.worst_p99, figures.worst_key = p99, f"{verb} {resource}{'/' + sub if sub else ''} ({scope}, {count:.0f})"
    return classes


# -- the load --------------------------------------------------------------------------------
@dataclass
class Client:
    """What the bench's own clients measured."""

    latencies: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    created_pods: int = 0
    first_seen: dict[str, float] = field(default_factory=dict)  # pod uid -> when the watch first saw it
    ready: dict[str, float] = field(default_factory=dict)  # pod uid -> when first seen Ready
    pod_names: list[str] = field(default_factory=list)

    async def timed(self, name: str, session: aiohttp.ClientSession, method: str, path: str, **kw: Any) -> Any:
        began = time.perf_counter()
        async with session.request(method, path, **kw) as reply:
            body = await reply.read()
            assert reply.status < 300, (reply.status, body[:500])
        self.latencies[name].append(time.perf_counter() - began)
        return body


def is_ready(pod: dict[str, Any]) -> bool:
    return any(c.get("type") == "Ready" and c.get("status") == "True" for c in (pod.get("status") or {}).get("conditions") or [])


async def watch_pods(session: aiohttp.ClientSession, namespace: str, client: Client) -> None:
    """The startup times of the namespace's pods, from a watch (started before the first pod)."""
    async with session.get(f"/api/v1/namespaces/{namespace}/pods", params={"watch": "1"},
                           timeout=aiohttp.ClientTimeout(total=None, sock_read=None)) as reply:
        async for line in reply.content:
            event = json.loads(line)
            pod = event["object"]
            uid = pod["metadata"]["uid"]
            now = time.monotonic()
            if uid not in client.first_seen:
                client.first_seen[uid] = now
                client.pod_names.append(pod["metadata"]["name"])
            if uid not in client.ready and is_ready(pod):
                client.ready[uid] = now


async def create_deployments(session: aiohttp.ClientSession, namespace: str, client: Client, seconds: float,
                             pods_per_second: float, replicas: int) -> None:
    """One Deployment of ``replicas`` every replicas/rate seconds, on schedule (open loop: a slow
    answer does not slow the rate)."""
    tick = replicas / pods_per_second
    began, pending = time.monotonic(), []
    n = 0
    while (due := began + n * tick) < began + seconds:
        await asyncio.sleep(max(0.0, due - time.monotonic()))
        pending.append(asyncio.create_task(client.timed("POST deployment", session, "POST", f"/apis/apps/v1/namespaces/{namespace}/deployments",
                                                        json=density_deployment(f"density-{n:05d}", replicas))))
        client.created_pods += replicas
        n += 1
    await asyncio.gather(*pending)


async def reads(session: aiohttp.ClientSession, namespace: str, client: Client, seconds: float, gets_per_second: float,
                lists_per_second: float) -> None:
    """The background reads: GETs of a random pod, namespace LISTs of the pods, cluster LISTs of the Nodes."""
    deadline = time.monotonic() + seconds

    async def every(period: float, call: Any) -> None:
        while time.monotonic() < deadline:
            began = time.monotonic()
            await call()
            await asyncio.sleep(max(0.0, period - (time.monotonic() - began)))

    async def get_pod() -> None:
        if client.pod_names:  # none is deleted during the run
            await client.timed("GET pod", session, "GET", f"/api/v1/namespaces/{namespace}/pods/{random.choice(client.pod_names)}")

    async def list_pods() -> None:
        await client.timed("LIST pods (namespace)", session, "GET", f"/api/v1/namespaces/{namespace}/pods")

    async def list_nodes() -> None:
        await client.timed("LIST nodes (cluster)", session, "GET", "/api/v1/nodes")

    await asyncio.gather(every(1 / gets_per_second, get_pod), every(1 / lists_per_second, list_pods),
                         every(5 / lists_per_second, list_nodes))


async def scrape(session: aiohttp.ClientSession) -> str:
    async with session.get("/metrics") as reply:
        assert reply.status == 200, reply.status
        return await reply.text()


async def nodes_ready(session: aiohttp.ClientSession, count: int, limit: float = 120.0) -> None:
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        async with session.get("/api/v1/nodes") as reply:
            items = (await reply.json())["items"]
        if sum(1 for n in items if is_ready(n)) >= count:
            return
        await asyncio.sleep(0.5)
    raise AssertionError(f"{count} nodes were not Ready within {limit}s")


@contextlib.asynccontextmanager
async def server(data: Path, nodes: int, separate: bool) -> AsyncIterator[tuple[int, int | None, str]]:
    """The server (with its controllers in-process, or a controller-manager apart): its pid,
    the controller-manager's, and its URL."""
    if separate:
        with kplane(data, "--no-controllers") as (process, url), controller_manager(data, nodes) as manager:
            yield process.pid, manager.pid, url
    else:
        with kplane(data, "--simulated-nodes", str(nodes)) as (process, url):
            yield process.pid, None, url


async def density(seconds: float, nodes: int, pods_per_second: float, replicas: int, gets_per_second: float,
                  lists_per_second: float, separate: bool, drain: float) -> None:
    namespace = "density"
    client = Client()
    with tempfile.TemporaryDirectory() as tmp:
        async with server(Path(tmp) / "data", nodes, separate) as (pid, manager, url), \
                aiohttp.ClientSession(base_url=url, connector=aiohttp.TCPConnector(limit=64)) as session:
            print(f"server pid {pid}" + (f", controller-manager pid {manager}" if manager else "") + f", {url}", flush=True)
            await nodes_ready(session, nodes)
            await client.timed("POST namespace", session, "POST", "/api/v1/namespaces",
                               json={"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}})
            watcher = asyncio.create_task(watch_pods(session, namespace, client))
            await asyncio.sleep(0.5)
            before, cpu_before = parse_durations(await scrape(session)), cpu_seconds(pid)
            manager_before = cpu_seconds(manager) if manager else 0.0
            began = time.monotonic()
            await asyncio.gather(create_deployments(session, namespace, client, seconds, pods_per_second, replicas),
                                 reads(session, namespace, client, seconds, gets_per_second, lists_per_second))
            took = time.monotonic() - began
            after, cpu = parse_durations(await scrape(session)), cpu_seconds(pid) - cpu_before
            manager_cpu = cpu_seconds(manager) - manager_before if manager else 0.0
            ready_at_end, seen_at_end = len(client.ready), len(client.first_seen)
            drained = time.monotonic() + drain
            while len(client.ready) < client.created_pods and time.monotonic() < drained:
                await asyncio.sleep(0.5)
            caught_up = time.monotonic() - began - took
            cpu_to_ready = cpu_seconds(pid) - cpu_before
            rss, peak = memory_mib(pid)
            watcher.cancel()
    report(client, window(before, after), took, (cpu, cpu_to_ready), manager_cpu, ready_at_end, seen_at_end, caught_up, rss, peak, nodes)


def report(client: Client, diffed: Histogram, took: float, cpus: tuple[float, float], manager_cpu: float, ready_at_end: int,
           seen_at_end: int, caught_up: float, rss: float, peak: float, nodes: int) -> None:
    print(f"\n== density: {client.created_pods} pods in {took:.0f} s ({client.created_pods / took:.1f} pods/s asked) "
          f"on {nodes} simulated nodes")
    print(f"{'class (server histogram)':<18}{'calls':>9}{'p50 ms':>9}{'p99 ms':>9}{'worst p99 ms':>14}"
          f"{'target ms':>11}{'worst/target':>14}  worst call kind")
    for name, target in TARGETS.items():
        figures = by_class(diffed).get(name)
        if figures is None:
            print(f"{name:<18}{0:>9}")
            continue
        print(f"{name:<18}{figures.calls:>9.0f}{quantile(figures.merged, 0.5) * 1000:>9.0f}"
              f"{quantile(figures.merged, 0.99) * 1000:>9.0f}{figures.worst_p99 * 1000:>14.0f}{target * 1000:>11.0f}"
              f"{figures.worst_p99 / target:>14.2f}  {figures.worst_key}")
    print(f"\n{'client-side':<24}{'calls':>7}{'p50 ms':>9}{'p99 ms':>9}")
    for name, values in sorted(client.latencies.items()):
        cuts = statistics.quantiles(values, n=100, method="inclusive") if len(values) > 1 else [values[0]] * 99
        print(f"{name:<24}{len(values):>7}{cuts[49] * 1000:>9.0f}{cuts[98] * 1000:>9.0f}")
    startups = sorted(client.ready[uid] - client.first_seen[uid] for uid in client.ready)
    if len(startups) > 1:
        cuts = statistics.quantiles(startups, n=100, method="inclusive")
        print(f"\npod startup (first seen -> Ready): p50 {cuts[49]:.2f} s, p99 {cuts[98]:.2f} s "
              f"(kube's SLO: p99 5 s; ratio {cuts[98] / 5:.2f})")
    print(f"at the window's end: {client.created_pods} pods asked for, {seen_at_end} created, {ready_at_end} Ready "
          f"(backlog {client.created_pods - ready_at_end}); all Ready {caught_up:.1f} s later" if len(client.ready) >= client.created_pods
          else f"at the window's end: {client.created_pods} pods asked for, {seen_at_end} created, {ready_at_end} Ready "
               f"(backlog {client.created_pods - ready_at_end}); {len(client.ready)} Ready {caught_up:.1f} s later")
    rate, (cpu, cpu_to_ready) = ready_at_end / took, cpus
    print(f"pods Ready per second over the window: {rate:.1f} (asked {client.created_pods / took:.1f}; ratio {rate * took / client.created_pods:.2f})")
    print(f"server CPU: {cpu:.1f} s in the {took:.0f} s window ({cpu / took:.2f} of a core); {cpu_to_ready:.1f} s until the last "
          f"Ready: {cpu_to_ready / max(1, len(client.ready)) * 1000:.1f} ms per Ready pod, "
          f"{cpu_to_ready / max(1, len(client.ready)) * client.created_pods / took:.2f} of a core at the asked rate"
          + (f"; controller-manager CPU: {manager_cpu:.1f} s" if manager_cpu else "")
          + f"; server RSS at the end {rss:.0f} MiB (peak {peak:.0f})")


# -- memory per cached object ----------------------------------------------------------------
TRACED_SERVER = Path(__file__).with_name("traced_server.py")


async def traced(process_pid: int, data: Path) -> int:
    """The bytes a :mod:`traced_server` process holds now."""
    out = data / "traced"
    out.unlink(missing_ok=True)
    os.kill(process_pid, signal.SIGUSR1)
    for _ in range(200):
        await asyncio.sleep(0.05)
        if out.exists() and out.read_text():
            return int(out.read_text())
    raise AssertionError("the traced server did not report its memory")


async def traced_growth(objects: int, cache: bool) -> tuple[int, int, float]:
    """What an API-only server (tracemalloc on) holds more after ``objects`` Pods than after a
    warm-up of 500, the Pods' stored bytes, and the storage size the server reports."""
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "data"
        with kplane(data, "--no-controllers", *([] if cache else ["--no-watch-cache"]),
                    program=(str(TRACED_SERVER), "serve")) as (process, url):
            await post_all(url, PODS, [unscheduled_pod(f"warm-{i:05d}") for i in range(500)])
            before = await traced(process.pid, data)
            await post_all(url, PODS, [unscheduled_pod(f"p-{i:05d}") for i in range(objects)])
            grown = await traced(process.pid, data) - before
            async with aiohttp.ClientSession(base_url=url) as session:
                text = await scrape(session)
            size = float(re.search(r"^apiserver_storage_size_bytes\{[^}]*\} (\S+)$", text, re.M).group(1))  # type: ignore[union-attr]
        with contextlib.closing(sqlite3.connect(f"file:{data / 'state.db'}?mode=ro", uri=True)) as db:
            stored = db.execute("SELECT sum(length(value)) FROM current WHERE key LIKE '%/pods/default/p-%'").fetchone()[0]
    return grown, int(stored or 0), size


async def memory(objects: int) -> None:
    with_cache, stored, size = await traced_growth(objects, cache=True)
    without, _, _ = await traced_growth(objects, cache=False)
    per = 10_000 / objects
    cached = with_cache - without
    print(f"\n== memory: {objects} Pods, stored {stored / objects:.0f} bytes each (storage file {size / 2**20:.1f} MiB)")
    print(f"{'per 10,000 Pods (traced allocations)':<40}{'MiB':>8}")
    print(f"{'stored values':<40}{stored * per / 2**20:>8.1f}")
    print(f"{'server growth with the watch cache':<40}{with_cache * per / 2**20:>8.1f}")
    print(f"{'server growth without it (baseline)':<40}{without * per / 2**20:>8.1f}")
    print(f"{'the cache: the difference':<40}{cached * per / 2**20:>8.1f}")
    print(f"cache / stored bytes: {cached / stored:.2f} (target <= 2.00); the server's growth with the cache / stored bytes: "
          f"{with_cache / stored:.2f}")


async def main(args: argparse.Namespace) -> None:
    seconds = args.seconds if args.seconds is not None else args.minutes * 60
    if seconds > 0:
        await density(seconds, args.nodes, args.pods_per_second, args.replicas, args.gets_per_second,
                      args.lists_per_second, args.controller_manager, args.drain)
    if args.objects > 0:
        await memory(args.objects)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=5.0, help="the measured window (default 5)")
    parser.add_argument("--seconds", type=float, default=None, help="the window in seconds (instead of --minutes; 0: no density run)")
    parser.add_argument("--nodes", type=int, default=100)
    parser.add_argument("--pods-per-second", type=float, default=20.0)
    parser.add_argument("--replicas", type=int, default=20, help="replicas of each Deployment (default 20: one a second)")
    parser.add_argument("--gets-per-second", type=float, default=5.0, help="background GETs of a pod (default 5)")
    parser.add_argument("--lists-per-second", type=float, default=0.5,
                        help="background LISTs of the namespace's pods (default 0.5; Nodes LISTed at a fifth of it)")
    parser.add_argument("--drain", type=float, default=60.0, help="seconds to wait after the window for the backlog (default 60)")
    parser.add_argument("--controller-manager", action="store_true",
                        help="run the controllers in a kplane controller-manager of their own, not in the server")
    parser.add_argument("--objects", type=int, default=10_000, help="Pods of the memory measurement (default 10000; 0: none)")
    asyncio.run(main(parser.parse_args()))
