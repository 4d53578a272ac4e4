"""Jobs at work: 100 Jobs x 10 completions until every Job is Complete (1,000 pods run to
completion, each tracked with its finalizer, counted and released).

The server runs without controllers (``kplane serve --no-controllers``) and a separate
``kplane controller-manager`` process (the Job controller and 10 simulated nodes) does the work,
so its CPU seconds are its own. The pods' containers exit at once (``kplane.io/run-seconds: 0``),
so the figure is the machinery's cost, not a run time. The baseline, measured in the same run
against a fresh server, is the API alone: 16 clients creating the same 1,000 Pods directly.

    python bench/job_bench.py [--jobs 100] [--completions 10] [--parallelism 10]
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

JOBS = "/apis/batch/v1/namespaces/default/jobs"


def job(name: str, completions: int, parallelism: int) -> dict[str, Any]:
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": name},
            "spec": {"completions": completions, "parallelism": parallelism, "template": {
                "metadata": {"annotations": {"kplane.io/run-seconds": "0"}},
                "spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "busybox"}]}}}}


async def complete_jobs(url: str) -> int:
    async with aiohttp.ClientSession(base_url=url) as session:
        async with session.get(JOBS) as reply:
            items = (await reply.json())["items"]
    return sum(1 for j in items if any(c["type"] == "Complete" and c["status"] == "True" for c in (j.get("status") or {}).get("conditions") or []))


async def run_jobs(jobs: int, completions: int, parallelism: int) -> tuple[float, float, float]:
    with tempfile.TemporaryDirectory() as tmp, kplane(Path(tmp), "--no-controllers") as (server, url), \
            controller_manager(Path(tmp), nodes=10) as manager:
        await asyncio.sleep(1.0)  # let it list and register its nodes
        cpu_before, server_before = cpu_seconds(manager.pid), cpu_seconds(server.pid)
        began = time.monotonic()
        await post_all(url, JOBS, [job(f"j{i:03d}", completions, parallelism) for i in range(jobs)])
        while await complete_jobs(url) < jobs:
            await asyncio.sleep(0.25)
        return time.monotonic() - began, cpu_seconds(manager.pid) - cpu_before, cpu_seconds(server.pid) - server_before


async def main(jobs: int, completions: int, parallelism: int) -> None:
    raw = await api_only(jobs * completions, image="busybox", restartPolicy="Never")
    took, cpu, server_cpu = await run_jobs(jobs, completions, parallelism)
    print_figures([(f"API only: create {jobs * completions} Pods, 16 clients", raw),
                   (f"{jobs} Jobs x {completions} completions to all Complete", took),
                   ("controller-manager CPU meanwhile", cpu), ("API server CPU meanwhile", server_cpu)], "jobs")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=100)
    parser.add_argument("--completions", type=int, default=10)
    parser.add_argument("--parallelism", type=int, default=10)
    args = parser.parse_args()
    asyncio.run(main(args.jobs, args.completions, args.parallelism))
