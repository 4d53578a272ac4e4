"""A flood of concurrent LISTs against kplane and against bare aiohttp serving the same bytes.

``--clients`` clients LIST ``--objects`` Deployments, in two loads:

- a burst (issue 11's): every client opens its connection, then all send their LIST at once and
  read the answer as fast as they can;
- a sustained flood: for ``--seconds`` each client LISTs over and over, every other one reading
  slowly (``--slow-rate`` bytes/s through a 64 KiB receive buffer), so that answers are held in
  flight; a client refused with 429 waits its Retry-After, as client-go does.

Meanwhile a probe process opens a fresh connection every 100 ms and GETs one Deployment, and
another GETs ``/readyz``. Printed for both servers: the probes' latency (p50,
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
    probes: dict[str, list[tuple[float, int]]] = field(default_factory=dict)


async def request(host: str, port: int, path: str, rate: float | None = None,
                  start: asyncio.Event | None = None) -> int:
    """One GET on a fresh connection, read to its end into one buffer (little client CPU), at
    ``rate`` bytes/s through a small receive buffer when given (the server meets backpressure as
    from a slow network); sent once ``start`` is set, when given. Its status."""
    loop = asyncio.get_running_loop()
    sock = socket.socket()
    sock.setblocking(False)
    try:
        if rate:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, SLOW_BUFFER)
        await loop.sock_connect(sock, (host, port))
        if start is not None:
            await start.wait()
        await loop.sock_sendall(sock, f"GET {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n".encode())
        buffer = bytearray(CHUNK if rate else 1 << 20)
        status = b""
        while size := await loop.sock_recv_into(sock, buffer):
            status = status or bytes(buffer[:12])  # "HTTP/1.1 200"
            if rate:
                await asyncio.sleep(size / rate)
        return int(status.split()[1])
    finally:
        sock.close()


async def lister(host: str, port: int, load: Load, deadline: float, rate: float | None) -> None:
    while time.monotonic() < deadline:
        try:
            code = await request(host, port, DEPLOYMENTS, rate)
        except (OSError, IndexError, ValueError):
            load.failures += 1
            await asyncio.sleep(1)
            continue
        load.codes[code] = load.codes.get(code, 0) + 1
        if code == 429:
            await asyncio.sleep(1)  # Retry-After: 1


async def burster(host: str, port: int, load: Load, start: asyncio.Event) -> None:
    try:
        code = await request(host, port, DEPLOYMENTS, start=start)
    except (OSError, IndexError, ValueError):
        load.failures += 1
        return
    load.codes[code] = load.codes.get(code, 0) + 1


async def probe(host: str, port: int, paths: list[str], seconds: float) -> dict[str, list[tuple[float, int]]]:
    """Milliseconds and status of each GET of each path, one every PROBE_EVERY seconds per path
    (a 429 is an answer too: a GET counts against the read-only limit as the LISTs do)."""
    times: dict[str, list[tuple[float, int]]] = {path: [] for path in paths}
    deadline = time.monotonic() + seconds

    async def prober(path: str) -> None:
        while time.monotonic() < deadline:
            began = time.perf_counter()
            code = await request(host, port, path)
            times[path].append(((time.perf_counter() - began) * 1000, code))
            await asyncio.sleep(PROBE_EVERY)

    await asyncio.gather(*(prober(path) for path in paths))
    return times


def probe_process(url: str, paths: list[str], seconds: float) -> subprocess.Popen[bytes]:
    """The probes in a process of their own, so the load's client work never delays them."""
    return subprocess.Popen([sys.executable, __file__, "--probe", url, str(seconds), *paths], stdout=subprocess.PIPE)


async def flood(url: str, pid: int, clients: int, seconds: float, slow_rate: float | None, one: str) -> dict[str, float]:
    """The load: a burst of one LIST per client sent at once (``slow_rate`` None), or LISTs over
    and over for ``seconds`` with every other client reading at ``slow_rate``."""
    host, port = url.removeprefix("http://").rsplit(":", 1)
    load = Load()
    await request(host, int(port), DEPLOYMENTS)  # warm
    before, _ = memory_mib(pid)
    reset_peak_memory(pid)
    probes = probe_process(url, [one, "/readyz"], seconds)
    began = time.monotonic()
    if slow_rate is None:
        start = asyncio.Event()
        tasks = [asyncio.create_task(burster(host, int(port), load, start)) for _ in range(clients)]
        await asyncio.sleep(1)  # every connection open; the probes have begun
        start.set()
        began = time.monotonic()
        await asyncio.gather(*tasks)
    else:
        deadline = time.monotonic() + seconds
        await asyncio.gather(*(lister(host, int(port), load, deadline, slow_rate if i % 2 else None) for i in range(clients)))
    took = time.monotonic() - began
    _, peak = memory_mib(pid)
    out, _ = await asyncio.to_thread(probes.communicate)
    load.probes = dict(zip(("GET", "readyz"), json.loads(out).values()))
    result = {}
    for name, answers in load.probes.items():
        ordered = sorted(ms for ms, _ in answers)
        result[f"{name} p50 (ms)"] = statistics.median(ordered)
        result[f"{name} p99 (ms)"] = ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]
        result[f"{name} max (ms)"] = ordered[-1]
        result[f"{name} answered 429"] = sum(code == 429 for _, code in answers)
        result[f"{name} answered otherwise"] = sum(code not in (200, 429) for _, code in answers)
    result["LISTs answered 200"] = load.codes.get(200, 0)
    result["LISTs answered 429"] = load.codes.get(429, 0)
    result["LISTs failed otherwise"] = load.failures + sum(n for c, n in load.codes.items() if c not in (200, 429))
    result["peak RSS above idle (MiB)"] = peak - before
    if slow_rate is None:
        result["burst answered in (s)"] = took
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
        scenarios = ((None, f"sent at once, read as fast as the client can (probes for {seconds:g} s)"),
                     (slow_rate, f"over and over for {seconds:g} s, half of them reading at {slow_rate / 1024:.0f} KiB/s"))
        for rate, title in scenarios:
            with kplane(data, "--no-controllers", "--max-requests-inflight", str(inflight)) as (process, url):
                ours = await flood(url, process.pid, clients, seconds, rate, one)
            port = free_port()
            baseline = subprocess.Popen([sys.executable, str(HERE / "baseline_server.py"), str(port), str(bodies)],
                                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            try:
                wait_ready(f"http://127.0.0.1:{port}", baseline)  # type: ignore[arg-type]
                bare = await flood(f"http://127.0.0.1:{port}", baseline.pid, clients, seconds, rate, one)
            finally:
                baseline.terminate()
                baseline.wait()
            print(f"{clients} LISTs of {objects} Deployments ({len(listed) / 2**20:.1f} MiB), {title}; "
                  f"--max-requests-inflight {inflight}")
            width = max(len(key) for key in ours) + 2
            print(f"{'measure':<{width}}{'kplane':>12}{'bare aiohttp':>14}{'kplane/bare':>13}")
            for key, value in ours.items():
                ratio = f"{value / bare[key]:.2f}" if bare[key] else "-"
                print(f"{key:<{width}}{value:>12.1f}{bare[key]:>14.1f}{ratio:>13}")
            print()


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
