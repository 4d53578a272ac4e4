"""Watch fan-out: 500 watchers on Deployments while 2,000 updates land, and what 5,000 idle
watches cost, in one run.

Three servers are measured one after the other on the same machine and data:

* kplane as it runs: each event is encoded once per (version, format) and the same bytes go to
  every watcher, a batch of events in one write;
* the upper bound: bare aiohttp (``fanout_server.py``) encoding each event once and writing the
  same bytes (a Deployment captured from kplane) to every watcher, with no API machinery;
* the naive way: the kplane server, but encoding every event once per watcher.

The load generator is kept from being what limits the figure: the watchers read in processes of
their own (``--watcher-processes``), apart from the writers, and parse of each event only its
resourceVersion. Their CPU seconds are printed beside the server's.

Watching the storage version (apps/v1) an encoding is a splice of stored bytes; ``--version
v1beta2`` makes every encoding a conversion too (kplane runs with ``--runtime-config
apps/v1beta2=true``: that version is off by default; the bare server serves only apps/v1).

Printed per server: deliveries per second (watchers x updates / time from the first update to
the last delivery), p50 and p99 delivery delay (from sending an update to a watcher reading its
event), bytes per event, server CPU seconds, RSS growth during the run, the watchers' and the
writers' CPU seconds; then the server RSS before and with ``--idle`` idle watches open.

    python bench/watch_bench.py [--watchers 500] [--updates 2000] [--writers 4] [--idle 5000]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import re
import resource
import statistics
import tempfile
import time
from array import array
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

import aiohttp

from kplane.core.patching.mediatypes import MERGE_PATCH

from common import DEPLOYMENTS, cpu_seconds, deployment, kplane, memory_mib, post_all, reset_peak_memory

RV = re.compile(rb'"resourceVersion":"(\d+)"')
FANOUT_SERVER = str(Path(__file__).with_name("fanout_server.py"))


# -- the watchers, in processes of their own --------------------------------------------------

async def watcher(session: aiohttp.ClientSession, path: str, params: dict[str, str], rvs: array, times: array,
                  read: list[int], opened: asyncio.Event, expected: int) -> None:
    """Read one watch stream, noting when each event's resourceVersion arrives; parse nothing else."""
    async with session.get(path, params=params) as reply:
        assert reply.status == 200, await reply.text()
        opened.set()
        tail = b""
        async for chunk in reply.content.iter_any():
            now = time.monotonic()  # CLOCK_MONOTONIC: the same clock in every process
            read[0] += len(chunk)
            data = tail + chunk
            cut = data.rfind(b"\n") + 1
            tail = data[cut:]
            for match in RV.finditer(data, 0, cut):
                rvs.append(int(match.group(1)))
                times.append(now)
            if len(rvs) >= expected:
                return


async def watch_many(url: str, path: str, params: dict[str, str], count: int, expected: int, conn: Connection) -> None:
    """``count`` watchers; tells the parent once all are open, then either sends what each read
    (after ``expected`` events each) or, with ``expected`` 0, holds them open until told."""
    connector = aiohttp.TCPConnector(limit=0)
    timeout = aiohttp.ClientTimeout(total=None, sock_read=None)
    async with aiohttp.ClientSession(base_url=url, connector=connector, timeout=timeout) as session:
        got = [(array("q"), array("d"), [0]) for _ in range(count)]
        opened = [asyncio.Event() for _ in range(count)]
        readers = [asyncio.create_task(watcher(session, path, params, rvs, times, read, opened[i], expected or 1 << 62))
                   for i, (rvs, times, read) in enumerate(got)]
        await asyncio.gather(*(o.wait() for o in opened))
        conn.send("opened")
        began = resource.getrusage(resource.RUSAGE_SELF)  # the reading only, not starting up
        if not expected:
            await asyncio.get_running_loop().run_in_executor(None, conn.recv)
            for task in readers:
                task.cancel()
            await asyncio.gather(*readers, return_exceptions=True)
            conn.send("closed")
            return
        await asyncio.gather(*readers)
    usage = resource.getrusage(resource.RUSAGE_SELF)
    cpu = usage.ru_utime + usage.ru_stime - began.ru_utime - began.ru_stime
    conn.send(([(rvs.tobytes(), times.tobytes(), read[0]) for rvs, times, read in got], cpu))


def watcher_process(url: str, path: str, params: dict[str, str], count: int, expected: int, conn: Connection) -> None:
    asyncio.run(watch_many(url, path, params, count, expected, conn))


class Watchers:
    """``count`` watchers spread over ``processes`` processes, all open once entered."""

    def __init__(self, url: str, path: str, params: dict[str, str], count: int, processes: int, expected: int) -> None:
        context = multiprocessing.get_context("spawn")
        self.pipes: list[Connection] = []
        self.processes = []
        for i in range(processes):
            share = count // processes + (i < count % processes)
            mine, theirs = context.Pipe()
            process = context.Process(target=watcher_process, args=(url, path, params, share, expected, theirs), daemon=True)
            process.start()
            self.pipes.append(mine)
            self.processes.append(process)

    async def opened(self) -> None:
        for pipe in self.pipes:
            assert await asyncio.to_thread(pipe.recv) == "opened"

    async def results(self) -> tuple[list[tuple[array, array, int]], float]:
        """What every watcher read, (resourceVersions, arrival times, bytes), and the processes' CPU seconds."""
        streams, cpu = [], 0.0
        for pipe in self.pipes:
            got, seconds = await asyncio.to_thread(pipe.recv)
            cpu += seconds
            for rv_bytes, time_bytes, read in got:
                rvs, times = array("q"), array("d")
                rvs.frombytes(rv_bytes)
                times.frombytes(time_bytes)
                streams.append((rvs, times, read))
        return streams, cpu

    async def close(self) -> None:
        for pipe in self.pipes:
            pipe.send("close")
            assert await asyncio.to_thread(pipe.recv) == "closed"

    def join(self) -> None:
        for process in self.processes:
            process.join(30)


# -- one server's measurement -----------------------------------------------------------------

async def idle_watches(url: str, pid: int, version: str, count: int, processes: int) -> dict[str, float]:
    """Server RSS before and with ``count`` idle watches (bookmarks on, as informers ask) open."""
    _, since, _ = await listed(url, 4)
    path = DEPLOYMENTS.replace("/apps/v1/", f"/apps/{version}/")
    before, _ = memory_mib(pid)
    watchers = Watchers(url, path, {"watch": "1", "resourceVersion": since, "allowWatchBookmarks": "true"}, count, processes, 0)
    await watchers.opened()
    await asyncio.sleep(2)
    with_them, _ = memory_mib(pid)
    await watchers.close()
    watchers.join()
    return {"RSS before idle watches (MiB)": before, f"RSS with {count} idle watches (MiB)": with_them,
            "idle watches' cost (MiB)": with_them - before}


async def listed(url: str, writers: int) -> tuple[list[str], str, dict[str, Any]]:
    """The writers' Deployments created: their names, the list's resourceVersion and one of them
    as the server returns it (the bare server's template)."""
    names = [f"w{i}" for i in range(writers)]
    await post_all(url, DEPLOYMENTS, [deployment(n) for n in names])
    async with aiohttp.ClientSession(base_url=url) as session:
        async with session.get(DEPLOYMENTS) as reply:
            body = await reply.json()
    return names, body["metadata"]["resourceVersion"], body["items"][0]


async def measure(url: str, pid: int, watchers: int, updates: int, writers: int, version: str,
                  processes: int) -> tuple[dict[str, float], dict[str, Any]]:
    """The fan-out's figures, and one Deployment as the server returns it."""
    names, since, sample = await listed(url, writers)
    watched = DEPLOYMENTS.replace("/apps/v1/", f"/apps/{version}/")

    readers = Watchers(url, watched, {"watch": "1", "resourceVersion": since}, watchers, processes, updates)
    await readers.opened()
    await asyncio.sleep(0.5)
    sent: dict[int, float] = {}
    reset_peak_memory(pid)
    rss_before, _ = memory_mib(pid)
    cpu_before = cpu_seconds(pid)
    mine_before = resource.getrusage(resource.RUSAGE_SELF)
    began = time.monotonic()

    async def write(name: str, count: int) -> None:
        async with aiohttp.ClientSession(base_url=url) as own:
            for i in range(count):
                at = time.monotonic()
                patch = {"metadata": {"annotations": {"bench/round": str(i)}}}
                async with own.patch(f"{DEPLOYMENTS}/{name}", json=patch, headers={"Content-Type": MERGE_PATCH}) as reply:
                    body = await reply.json()
                    assert reply.status == 200, body
                sent[int(body["metadata"]["resourceVersion"])] = at

    await asyncio.gather(*(write(n, updates // writers) for n in names))
    mine = resource.getrusage(resource.RUSAGE_SELF)
    streams, watcher_cpu = await readers.results()
    cpu = cpu_seconds(pid) - cpu_before
    _, peak = memory_mib(pid)
    readers.join()
    finished = max(times[-1] for _, times, _ in streams)
    delays = sorted((at - sent[rv]) * 1000 for rvs, times, _ in streams for rv, at in zip(rvs, times) if rv in sent)
    deliveries = sum(len(rvs) for rvs, _, _ in streams)
    for rvs, _, _ in streams:  # every event, each once, in resourceVersion order
        assert list(rvs) == sorted(sent)[: len(rvs)], "a watcher missed an event or got one out of order"
    figures = {
        "deliveries/s": deliveries / (finished - began),
        "p50 delay (ms)": statistics.median(delays),
        "p99 delay (ms)": delays[int(len(delays) * 0.99) - 1],
        "bytes/event": sum(read for _, _, read in streams) / deliveries,
        "server CPU (s)": cpu,
        "server RSS growth (MiB)": peak - rss_before,
        "watchers' CPU (s)": watcher_cpu,
        "writers' CPU (s)": (mine.ru_utime + mine.ru_stime) - (mine_before.ru_utime + mine_before.ru_stime),
    }
    return figures, sample


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


def print_table(title: str, results: dict[str, dict[str, float]]) -> None:
    """The servers' figures side by side, with kplane's ratio to each of the others."""
    labels = list(results)
    first = results[labels[0]]
    width = max(len(key) for key in first) + 2
    ratios = [f"{labels[0]}/{label}" for label in labels[1:]]
    print(title)
    print(f"{'measure':<{width}}" + "".join(f"{label:>14}" for label in labels) + "".join(f"{r:>16}" for r in ratios))
    for key, value in first.items():
        others = [results[label].get(key, float("nan")) for label in labels[1:]]
        cells = "".join(f"{v:>14.1f}" for v in (value, *others))
        print(f"{key:<{width}}{cells}" + "".join(f"{value / v if v else float('nan'):>16.2f}" for v in others))


async def main(watchers: int, updates: int, writers: int, version: str, idle: int, processes: int) -> None:
    kplane_args = ("--no-controllers", "--runtime-config", BETA)
    servers: dict[str, dict[str, Any]] = {"kplane": {}, "bare fan-out": {"program": (FANOUT_SERVER,)},
                                          "naive": {"program": (__file__, "--serve-naive")}}
    if version != "v1":
        del servers["bare fan-out"]  # it serves apps/v1 only
    results: dict[str, dict[str, float]] = {}
    sample: dict[str, Any] = {}
    for label, options in servers.items():
        args = () if label == "bare fan-out" else kplane_args
        with tempfile.TemporaryDirectory() as tmp:
            (Path(tmp) / "template.json").write_text(json.dumps(sample))
            with kplane(Path(tmp), *args, **options) as (process, url):
                results[label], got = await measure(url, process.pid, watchers, updates, writers, version, processes)
                sample = sample or got
        if idle and label != "naive":  # on a fresh server, so no fan-out's garbage hides its cost
            with tempfile.TemporaryDirectory() as tmp:
                (Path(tmp) / "template.json").write_text(json.dumps(sample))
                room = ("--max-connections", str(idle + 1000)) if label == "kplane" else ()  # past its default 4,096
                with kplane(Path(tmp), *args, *room, **options) as (process, url):
                    results[label].update(await idle_watches(url, process.pid, version, idle, processes))
    print_table(f"{watchers} watchers of apps/{version} x {updates} updates of {writers} Deployments (stored as apps/v1; "
                f"SQLite, watch cache on; watchers in {processes} processes of their own)", results)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--watchers", type=int, default=500)
    parser.add_argument("--updates", type=int, default=2000)
    parser.add_argument("--writers", type=int, default=4)
    parser.add_argument("--version", default="v1", help="the version watched: v1 (stored) or v1beta2 (converted)")
    parser.add_argument("--idle", type=int, default=5000, help="idle watches whose memory is measured (0: none)")
    parser.add_argument("--watcher-processes", type=int, default=2)
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
        asyncio.run(main(args.watchers, args.updates, args.writers, args.version, args.idle, args.watcher_processes))
