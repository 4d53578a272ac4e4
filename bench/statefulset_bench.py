"""Controllers at work: 20 StatefulSets x 5 ordered replicas until all 100 Pods are Ready.

OrderedReady makes each StatefulSet create its Pods one at a time, each once the one before is
Running and Ready, so the time is bounded below by 5 turns of the simulated kubelet's ready delay;
the 20 sets proceed side by side. As in ``rollout_bench.py``, a separate ``kplane
controller-manager`` does the work (its CPU seconds are its own), and the baseline, measured in
the same run against a fresh server, is the API alone creating the same 100 Pods.

    python bench/statefulset_bench.py [--sets 20] [--replicas 5]
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
from pathlib import Path

from common import api_only, controller_manager, cpu_seconds, kplane, post_all, print_figures
from rollout_bench import ready_pods

SETS = "/apis/apps/v1/namespaces/default/statefulsets"


def stateful_set(name: str, replicas: int) -> dict:
    return {"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": name},
            "spec": {"serviceName": name, "replicas": replicas, "selector": {"matchLabels": {"app": name}},
                     "template": {"metadata": {"labels": {"app": name}},
                                  "spec": {"containers": [{"name": "c", "image": "nginx:1.25"}]}}}}


async def ordered(sets: int, replicas: int) -> tuple[float, float]:
    with tempfile.TemporaryDirectory() as tmp, kplane(Path(tmp), "--no-controllers") as (_, url), \
            controller_manager(Path(tmp), nodes=10) as manager:
        await asyncio.sleep(1.0)  # let it list and register its nodes
        cpu_before = cpu_seconds(manager.pid)
        began = time.monotonic()
        await post_all(url, SETS, [stateful_set(f"s{i:02d}", replicas) for i in range(sets)])
        while await ready_pods(url) < sets * replicas:
            await asyncio.sleep(0.1)
        return time.monotonic() - began, cpu_seconds(manager.pid) - cpu_before


async def main(sets: int, replicas: int) -> None:
    raw = await api_only(sets * replicas)
    took, cpu = await ordered(sets, replicas)
    print_figures([(f"API only: create {sets * replicas} Pods, 16 clients", raw),
                   (f"{sets} StatefulSets x {replicas} ordered replicas Ready", took),
                   ("controller-manager CPU during the rollout", cpu)], "StatefulSets")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sets", type=int, default=20)
    parser.add_argument("--replicas", type=int, default=5)
    args = parser.parse_args()
    asyncio.run(main(args.sets, args.replicas))
