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
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from common import cpu_seconds, kplane, post_all
from rollout_bench import baseline, ready_pods

SETS = "/apis/apps/v1/namespaces/default/statefulsets"


def stateful_set(name: str, replicas: int) -> dict:
    return {"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": name},
            "spec": {"serviceName": name, "replicas": replicas, "selector": {"matchLabels": {"app": name}},
                     "template": {"metadata": {"labels": {"app": name}},
                                  "spec": {"containers": [{"name": "c", "image": "nginx:1.25"}]}}}}


async def ordered(sets: int, replicas: int) -> tuple[float, float]:
    with tempfile.TemporaryDirectory() as tmp, kplane(Path(tmp), "--no-controllers") as (_, url):
        manager = subprocess.Popen([sys.executable, "-m", "kplane.core.cli", "controller-manager", "--kubeconfig", f"{tmp}/kubeconfig",
                                    "--no-leader-elect", "--simulated-nodes", "10"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            await asyncio.sleep(1.0)  # let it list and register its nodes
            cpu_before = cpu_seconds(manager.pid)
            began = time.monotonic()
            await post_all(url, SETS, [stateful_set(f"s{i:02d}", replicas) for i in range(sets)])
            while await ready_pods(url) < sets * replicas:
                await asyncio.sleep(0.1)
            return time.monotonic() - began, cpu_seconds(manager.pid) - cpu_before
        finally:
            manager.terminate()
            manager.wait()


async def main(sets: int, replicas: int) -> None:
    raw = await baseline(sets * replicas)
    took, cpu = await ordered(sets, replicas)
    print(f"{'measure':<46}{'seconds':>10}")
    print(f"{f'API only: create {sets * replicas} Pods, 16 clients':<46}{raw:>10.1f}")
    print(f"{f'{sets} StatefulSets x {replicas} ordered replicas Ready':<46}{took:>10.1f}")
    print(f"{'controller-manager CPU during the rollout':<46}{cpu:>10.1f}")
    print(f"StatefulSets / API-only ratio: {took / raw:.2f}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sets", type=int, default=20)
    parser.add_argument("--replicas", type=int, default=5)
    args = parser.parse_args()
    asyncio.run(main(args.sets, args.replicas))
