"""A flood of concurrent LISTs against kplane and against bare aiohttp serving the same bytes.

``--clients`` clients (half of them reading slowly, ``--slow-rate`` bytes/s) LIST ``--objects``
Deployments over and over for ``--seconds``; a client refused with 429 waits its Retry-After,
as client-go does. Meanwhile a probe opens a fresh connection every 100 ms and GETs one
Deployment, and another GETs ``/readyz``. Printed for both servers: the probes' latency (p50,
p99, max), how many LISTs were answered 200 and 429, and the server's peak RSS above idle.

The baseline (``bench/baseline_server.py``) answers with the bytes kplane returned and has no
limits, so the ratios show what kplane's protections cost or save under the same load.

    python bench/overload_bench.py [--clients 2000] [--objects 1000] [--seconds 10]
                                   [--slow-rate 262144] [--max-requests-inflight 400]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import aiohttp

from common import DEPLOYMENTS, deployment, free_port, kplane, memory_mib, post_all, reset_peak_memory, wait_ready

HERE = Path(__file__).parent
PROBE_EVERY = 0.1
CHUNK = 16384
SLOW_BUFFER = 65536


@dataclass
class Load:
    codes: dict[int, int] = field(default_factory=dict)
    failures: int = 0  # connections reset or closed before an answer
    probes: dict[str, list[float]] = field(default_factory=dict)


async def request(host: str, port: int, path: str, rate: float | None = None) -> int:
    """One GET on a fresh connection read to its end (at ``rate`` bytes/s when given, with a small
    receive buffer, so that the server meets backpressure as from a slow network); its status."""
    sock = socket.socket()
    sock.setblocking(False)
    if rate:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, SLOW_BUFFER)
    try:
        await asyncio.get_running_loop().sock_connect(sock, (host, port))
    except OSError:
        sock.close()
        raise
    reader, writer = await asyncio.open_connection(sock=sock)
    try:
        writer.write(f"GET {path} HTTP/1.1\r\nHost: {host}\r\nAccept: application/json\r\nConnection: close\r\n\r\n".encode())
        head = await reader.readuntil(b"\r\n")
        while chunk := await reader.read(CHUNK if rate else 1 << 20):
            if rate:
                await asyncio.sleep(len(chunk) / rate)
        return int(head.split()[1])
    finally:
        writer.close()


async def lister(host: str, port: int, load: Load, deadline: float, rate: float | None) -> None:
    while time.monotonic() < deadline:
        try:
            code = await request(host, port, DEPLOYMENTS, rate)
        except (OSError, asyncio.IncompleteReadError):
            load.failures += 1
            await asyncio.sleep(1)
            continue
        load.codes[code] = load.codes.get(code, 0) + 1
        if code == 429:
            await asyncio.sleep(1)  # Retry-After: 1


async def probe(host: str, port: int, paths: list[str], seconds: float) -> dict[str, list[float]]:
    """Milliseconds of each GET of each path, one every PROBE_EVERY seconds per path."""
    times: dict[str, list[float]] = {path: [] for path in paths}
    deadline = time.monotonic() + seconds

    async def prober(path: str) -> None:
        while time.monotonic() < deadline:
            began = time.perf_counter()
            code = await request(host, port, path)
            assert code == 200, (path, code)
            times[path].append((time.perf_counter() - began) * 1000)
            await asyncio.sleep(PROBE_EVERY)

    await asyncio.gather(*(prober(path) for path in paths))
    return times


def probe_process(url: str, paths: list[str], seconds: float) -> subprocess.Popen[bytes]:
    """The probes in a process of their own, so the load's client work never delays them."""
    return subprocess.Popen([sys.executable, __file__, "--probe", url, str(seconds), *paths], stdout=subprocess.PIPE)


async def flood(url: str, pid: int, clients: int, seconds: float, slow_rate: float, one: str) -> dict[str, float]:
    host, port = url.removeprefix("http://").rsplit(":", 1)
    load = Load()
    await request(host, int(port), DEPLOYMENTS)  # warm
    before, _ = memory_mib(pid)
    reset_peak_memory(pid)
    deadline = time.monotonic() + seconds
    probes = probe_process(url, [one, "/readyz"], seconds)
    await asyncio.gather(*(lister(host, int(port), load, deadline, slow_rate if i % 2 else None) for i in range(clients)))
    _, peak = memory_mib(pid)
    out, _ = await asyncio.to_thread(probes.communicate)
    load.probes = dict(zip(("GET", "readyz"), json.loads(out).values()))
    result = {}
    for name, times in load.probes.items():
        ordered = sorted(times)
        result[f"{name} p50 (ms)"] = statistics.median(ordered)
        result[f"{name} p99 (ms)"] = ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]
        result[f"{name} max (ms)"] = ordered[-1]
    result["LISTs answered 200"] = load.codes.get(200, 0)
    result["LISTs answered 429"] = load.codes.get(429, 0)
    result["LISTs failed otherwise"] = load.failures + sum(n for c, n in load.codes.items() if c not in (200, 429))
    result["peak RSS above idle (MiB)"] = peak - before
    return result


async def main(clients: int, objects: int, seconds: float, slow_rate: float, inflight: int) -> None:
    one = f"{DEPLOYMENTS}/d00000"
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "data"
        with kplane(data, "--no-controllers") as (_, url):
            await post_all(url, DEPLOYMENTS, [deployment(f"d{i:05d}") for i in range(objects)])
            async with aiohttp.ClientSession(base_url=url) as session:
                async with session.get(one) as reply:
                    got = await reply.read()
                async with session.get(DEPLOYMENTS) as reply:
                    listed = await reply.read()
        bodies = Path(tmp) / "bodies"
        bodies.mkdir()
        for name, body in (("get", got), ("create", got), ("list", listed)):
            (bodies / name).write_bytes(body)
        with kplane(data, "--no-controllers", "--max-requests-inflight", str(inflight)) as (process, url):
            ours = await flood(url, process.pid, clients, seconds, slow_rate, one)
        port = free_port()
        baseline = subprocess.Popen([sys.executable, str(HERE / "baseline_server.py"), str(port), str(bodies)],
                                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            wait_ready(f"http://127.0.0.1:{port}", baseline)  # type: ignore[arg-type]
            bare = await flood(f"http://127.0.0.1:{port}", baseline.pid, clients, seconds, slow_rate, one)
        finally:
            baseline.terminate()
            baseline.wait()
    print(f"{clients} clients (half reading at {slow_rate / 1024:.0f} KiB/s) LISTing {objects} Deployments "
          f"({len(listed) / 2**20:.1f} MiB) for {seconds:g} s; --max-requests-inflight {inflight}")
    width = max(len(key) for key in ours) + 2
    print(f"{'measure':<{width}}{'kplane':>12}{'bare aiohttp':>14}{'kplane/bare':>13}")
    for key, value in ours.items():
        ratio = f"{value / bare[key]:.2f}" if bare[key] else "-"
        print(f"{key:<{width}}{value:>12.1f}{bare[key]:>14.1f}{ratio:>13}")


if __name__ == "__main__":
    if sys.argv[1:2] == ["--probe"]:
        host, port = sys.argv[2].removeprefix("http://").rsplit(":", 1)
        print(json.dumps(asyncio.run(probe(host, int(port), sys.argv[4:], float(sys.argv[3])))))
        sys.exit()
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=2000)
    parser.add_argument("--objects", type=int, default=1000)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--slow-rate", type=float, default=256 * 1024, help="bytes/s of a slow client")
    parser.add_argument("--max-requests-inflight", type=int, default=400)
    args = parser.parse_args()
    asyncio.run(main(args.clients, args.objects, args.seconds, args.slow_rate, args.max_requests_inflight))
