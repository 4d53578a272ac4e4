"""What the benchmarks share: the Deployment they write, kplane server processes, concurrent
writers, and reading a process's CPU and memory from /proc."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiohttp

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from tests.servers import free_port, wait_ready  # noqa: E402

DEPLOYMENTS = "/apis/apps/v1/namespaces/default/deployments"


def deployment(name: str, replicas: int = 3) -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "labels": {"app": name}},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {"containers": [{"name": "web", "image": "nginx:1.25", "ports": [{"containerPort": 80}]}]},
            },
        },
    }


@contextlib.contextmanager
def kplane(data: Path, *args: str, program: tuple[str, ...] = ("-m", "kplane.core.cli", "serve"), secure: bool = False,
           python: str | Path = sys.executable) -> Iterator[tuple[subprocess.Popen[bytes], str]]:
    """A ready ``kplane serve`` process (its stderr in a file beside ``data``, so a chatty server
    never blocks on a full pipe, and one that fails to start says why) and its URL; terminated afterwards. ``program`` replaces ``-m kplane.core.cli serve`` for
    a benchmark's own variant of the server; it gets ``--port`` and ``--data-dir`` all the same.
    Plain HTTP (``--http``) unless ``secure``: HTTPS, as ``kplane serve`` runs by default, reached
    through ``data/kubeconfig``. ``python`` runs it (another environment's, to serve plugins installed there)."""
    port = free_port()
    plain = [] if secure else ["--http"]
    quiet = ["--no-system-pods"] if program[-1] == "serve" else []  # no CoreDNS or kube-proxy to run beside the measured work
    log = data.with_name(data.name + ".log")  # beside the data directory, which a server may not yet have made
    with log.open("wb") as out:
        process = subprocess.Popen([str(python), *program, "--port", str(port), "--data-dir", str(data), *plain, *quiet, *args],
                                   stdout=subprocess.DEVNULL, stderr=out)
    url = f"{'https' if secure else 'http'}://127.0.0.1:{port}"
    try:
        try:
            wait_ready(url, process)  # type: ignore[arg-type]
        except AssertionError:
            raise AssertionError(f"the server did not start; its stderr ends: {log.read_text()[-2000:]}") from None
        yield process, url
    finally:
        process.terminate()
        process.wait(timeout=20)


async def post_all(url: str, path: str, bodies: list[dict[str, Any]], concurrency: int = 16,
                   headers: Mapping[str, str] | None = None) -> None:
    """POST every body, ``concurrency`` at a time, with ``headers`` (credentials); each must be created."""
    async with aiohttp.ClientSession(base_url=url, connector=aiohttp.TCPConnector(limit=concurrency),
                                     headers=headers) as session:
        queue = list(bodies)

        async def worker() -> None:
            while queue:
                async with session.post(path, json=queue.pop()) as reply:
                    assert reply.status == 201, await reply.text()

        await asyncio.gather(*(worker() for _ in range(concurrency)))


@dataclass(frozen=True)
class Rate:
    """What a closed-loop load measured: requests completed per second, and their latency."""

    per_second: float
    p50_ms: float
    p99_ms: float
    requests: int


#: One request of a load: ``(session, worker, i)`` -> its status (the i-th of that worker).
MakeRequest = Callable[[aiohttp.ClientSession, int, int], Awaitable[int]]


async def rate(url: str, seconds: float, concurrency: int, make_request: MakeRequest,
               headers: Mapping[str, str] | None = None) -> Rate:
    """``concurrency`` keep-alive clients, each sending its next request as soon as the last one
    is answered, for ``seconds``; every answer must be a success."""
    latencies: list[float] = []
    deadline = time.monotonic() + seconds
    connector = aiohttp.TCPConnector(limit=concurrency)
    async with aiohttp.ClientSession(base_url=url, connector=connector, headers=headers) as session:

        async def client(worker: int) -> None:
            i = 0
            while time.monotonic() < deadline:
                began = time.perf_counter()
                status = await make_request(session, worker, i)
                latencies.append(time.perf_counter() - began)
                assert status < 300, status
                i += 1

        began = time.monotonic()
        await asyncio.gather(*(client(w) for w in range(concurrency)))
        elapsed = time.monotonic() - began
    cuts = statistics.quantiles(latencies, n=100, method="inclusive")
    return Rate(len(latencies) / elapsed, cuts[49] * 1000, cuts[98] * 1000, len(latencies))


WRK_CREATE = Path(__file__).resolve().parent / "wrk_create.lua"


def wrk_available() -> bool:
    """Whether Debian's ``wrk`` (``apt-get install wrk``) is on PATH: a compiled load generator
    that leaves the two cores to the server, where the Python client takes one of them."""
    return shutil.which("wrk") is not None


def _wrk_ms(text: str) -> float:
    value, unit = re.fullmatch(r"([\d.]+)(us|ms|s)", text).groups()  # type: ignore[union-attr]
    return float(value) * {"us": 0.001, "ms": 1.0, "s": 1000.0}[unit]


def wrk_creates(url: str, path: str, body: dict[str, Any], seconds: float, concurrency: int, prefix: str) -> Rate:
    """``concurrency`` keep-alive connections POSTing ``body`` to ``path`` for ``seconds``, with
    ``wrk``: each request's body has ``__NAME__`` replaced by a name of its own (``prefix``,
    the thread, a counter). Every answer must be a success."""
    with tempfile.NamedTemporaryFile("w", suffix=".json") as template:
        template.write(json.dumps(body))
        template.flush()
        return _wrk(seconds, concurrency, "-s", str(WRK_CREATE), url, "--", path, template.name, prefix)


def wrk_gets(url: str, path: str, seconds: float, concurrency: int) -> Rate:
    """``concurrency`` keep-alive connections GETting ``path`` for ``seconds``, with ``wrk``.
    Every answer must be a success."""
    return _wrk(seconds, concurrency, url + path)


def _wrk(seconds: float, concurrency: int, *args: str) -> Rate:
    out = subprocess.run(["wrk", f"-t{min(2, concurrency)}", f"-c{concurrency}", f"-d{max(1, round(seconds))}s", "--latency", *args],
                         capture_output=True, text=True, check=True).stdout
    assert "Non-2xx" not in out and "Socket errors" not in out, out
    latency = dict(re.findall(r"^\s+(50|99)%\s+(\S+)\s*$", out, re.M))
    assert {"50", "99"} <= latency.keys(), out
    per_second = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))  # type: ignore[union-attr]
    requests = int(re.search(r"(\d+) requests in", out).group(1))  # type: ignore[union-attr]
    return Rate(per_second, _wrk_ms(latency["50"]), _wrk_ms(latency["99"]), requests)


def cpu_seconds(pid: int) -> float:
    """User + system CPU of a live process (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def memory_mib(pid: int) -> tuple[float, float]:
    """(current RSS, peak RSS) of a live process in MiB (Linux /proc)."""
    status = dict(line.split(":", 1) for line in Path(f"/proc/{pid}/status").read_text().splitlines() if ":" in line)
    return int(status["VmRSS"].split()[0]) / 1024, int(status["VmHWM"].split()[0]) / 1024


async def median_get_ms(session: aiohttp.ClientSession, path: str, repeat: int, **params: str) -> float:
    """The median time of ``repeat`` GETs of ``path`` (each read whole), in milliseconds."""
    times = []
    for _ in range(repeat):
        began = time.perf_counter()
        async with session.get(path, params=params) as reply:
            assert reply.status == 200, reply.status
            await reply.read()
        times.append((time.perf_counter() - began) * 1000)
    return statistics.median(times)


def reset_peak_memory(pid: int) -> None:
    """Start a new peak-RSS measurement (writing 5 to clear_refs resets VmHWM)."""
    Path(f"/proc/{pid}/clear_refs").write_text("5")


def print_comparison(title: str, labels: tuple[str, str], first: dict[str, float], second: dict[str, float]) -> None:
    """One table of measures side by side, with the first/second ratio of each."""
    ratio = f"{labels[0]}/{labels[1]}"
    width = max(len(key) for key in first) + 2
    print(title)
    print(f"{'measure':<{width}}{labels[0]:>14}{labels[1]:>14}{ratio:>{max(len(ratio), 10) + 2}}")
    for key, value in first.items():
        print(f"{key:<{width}}{value:>14.1f}{second[key]:>14.1f}{value / second[key]:>{max(len(ratio), 10) + 2}.2f}")


PODS = "/api/v1/namespaces/default/pods"


def unscheduled_pod(name: str, image: str = "nginx:1.25", **spec: Any) -> dict[str, Any]:
    """A Pod no scheduler takes: what the API-only baselines create."""
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "labels": {"app": "bench"}},
            "spec": {"schedulerName": "nobody", "containers": [{"name": "c", "image": image}], **spec}}


async def api_only(count: int, **pod_spec: Any) -> float:
    """The controllers benchmarks' baseline: seconds for 16 clients to create ``count`` Pods on a
    fresh server without controllers (what the objects cost without anyone reconciling them)."""
    with tempfile.TemporaryDirectory() as tmp, kplane(Path(tmp), "--no-controllers") as (_, url):
        began = time.monotonic()
        await post_all(url, PODS, [unscheduled_pod(f"p{i:04d}", **pod_spec) for i in range(count)])
        return time.monotonic() - began


@contextlib.contextmanager
def controller_manager(data: Path, nodes: int) -> Iterator[subprocess.Popen[bytes]]:
    """A ``kplane controller-manager`` process for the server whose kubeconfig is in ``data``,
    with ``nodes`` simulated nodes, so that its CPU seconds are measured apart from the server's."""
    process = subprocess.Popen([sys.executable, "-m", "kplane.core.cli", "controller-manager", "--kubeconfig", str(data / "kubeconfig"),
                                "--no-leader-elect", "--simulated-nodes", str(nodes)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        yield process
    finally:
        process.terminate()
        process.wait()


def print_figures(rows: list[tuple[str, float]], ratio: str) -> None:
    """A table of seconds, the first row the baseline, then ``ratio``: the second row over the first."""
    width = max(len(label) for label, _ in rows) + 4
    print(f"{'measure':<{width}}{'seconds':>10}")
    for label, seconds in rows:
        print(f"{label:<{width}}{seconds:>10.2f}")
    print(f"{ratio} / API-only ratio: {rows[1][1] / rows[0][1]:.2f}")
