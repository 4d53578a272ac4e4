"""What the benchmarks share: the Deployment they write, kplane server processes, concurrent
writers, and reading a process's CPU and memory from /proc."""

from __future__ import annotations

import asyncio
import contextlib
import os
import subprocess
import sys
from collections.abc import Iterator
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
           ) -> Iterator[tuple[subprocess.Popen[bytes], str]]:
    """A ready ``kplane serve`` process (output discarded, so a chatty server never blocks on a
    full pipe) and its URL; terminated afterwards. ``program`` replaces ``-m kplane.core.cli serve`` for
    a benchmark's own variant of the server; it gets ``--port`` and ``--data-dir`` all the same.
    Plain HTTP (``--http``) unless ``secure``: HTTPS, as ``kplane serve`` runs by default, reached
    through ``data/kubeconfig``."""
    port = free_port()
    plain = [] if secure else ["--http"]
    process = subprocess.Popen([sys.executable, *program, "--port", str(port), "--data-dir", str(data), *plain, *args],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"{'https' if secure else 'http'}://127.0.0.1:{port}"
    try:
        wait_ready(url, process)  # type: ignore[arg-type]
        yield process, url
    finally:
        process.terminate()
        process.wait(timeout=20)


async def post_all(url: str, path: str, bodies: list[dict[str, Any]], concurrency: int = 16) -> None:
    """POST every body, ``concurrency`` at a time; each must be created."""
    async with aiohttp.ClientSession(base_url=url, connector=aiohttp.TCPConnector(limit=concurrency)) as session:
        queue = list(bodies)

        async def worker() -> None:
            while queue:
                async with session.post(path, json=queue.pop()) as reply:
                    assert reply.status == 201, await reply.text()

        await asyncio.gather(*(worker() for _ in range(concurrency)))


def cpu_seconds(pid: int) -> float:
    """User + system CPU of a live process (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def memory_mib(pid: int) -> tuple[float, float]:
    """(current RSS, peak RSS) of a live process in MiB (Linux /proc)."""
    status = dict(line.split(":", 1) for line in Path(f"/proc/{pid}/status").read_text().splitlines() if ":" in line)
    return int(status["VmRSS"].split()[0]) / 1024, int(status["VmHWM"].split()[0]) / 1024


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
