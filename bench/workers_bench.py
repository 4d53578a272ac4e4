"""GETs and creates per second at one and at two ``kplane serve --workers``, on SQLite and on
etcd, same run.

On each storage two servers without their controllers, one of 1 worker and one of 2, measured
in turn over ROUNDS rounds (the best of each kept), driven by ``wrk`` (Debian's: a compiled load
generator) over CONCURRENCY keep-alive connections, which the kernel spreads among the workers
(SO_REUSEPORT). SQLite: each server its own database (the 2 workers open theirs ``shared``);
etcd: one etcd, each server on its own key prefix. Both keep their data on tmpfs when there is
one (fsync then costs nothing, so the figures are the API server's).

* GETs of one ConfigMap with ``resourceVersion=0``, answered from the watch cache (as kube's):
  the server's own work only;
* GETs of one ConfigMap (a read of the object from storage, as kube's GET without
  resourceVersion);
* creates of Deployments, each its own name.

etcd, wrk and the server share the machine's cores: on a 2-core machine the second worker does
not get a whole core of its own. The ratio printed is 2 workers / 1 worker.

    python bench/workers_bench.py [--seconds 5] [--rounds 3] [--storage sqlite|etcd]
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import tempfile
import urllib.request
import uuid
from pathlib import Path

from common import DEPLOYMENTS, deployment, kplane, print_comparison, wrk_available, wrk_creates, wrk_gets
from tests.etcd_process import ETCD, EtcdProcess

CONCURRENCY = 32
CONFIGMAP = "/api/v1/namespaces/default/configmaps/read-me"


def prepare(url: str) -> None:
    """The ConfigMap read, and one load of each kind to warm every worker's connections and caches."""
    body = b'{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "read-me"}, "data": {"k": "v"}}'
    request = urllib.request.Request(url + CONFIGMAP.rsplit("/", 1)[0], body, {"Content-Type": "application/json"})
    with urllib.request.urlopen(request) as reply:
        assert reply.status == 201
    wrk_gets(url, CONFIGMAP, 1, CONCURRENCY)
    wrk_creates(url, DEPLOYMENTS, deployment("__NAME__"), 1, CONCURRENCY, "warm")


def measure(url: str, seconds: float, run: int) -> dict[str, float]:
    cached = wrk_gets(url, CONFIGMAP + "?resourceVersion=0", seconds, CONCURRENCY)
    gets = wrk_gets(url, CONFIGMAP, seconds, CONCURRENCY)
    creates = wrk_creates(url, DEPLOYMENTS, deployment("__NAME__"), seconds, CONCURRENCY, f"d{run}")
    return {"GETs/s, rv=0 (cache)": cached.per_second, "GETs/s (storage)": gets.per_second,
            "creates/s": creates.per_second}


def compare(storage: str, seconds: float, rounds: int) -> None:
    """Print the 2-worker / 1-worker figures on ``storage`` ("sqlite" or "etcd")."""
    scratch = "/dev/shm" if os.access("/dev/shm", os.W_OK) else None
    best: dict[int, dict[str, float]] = {1: {}, 2: {}}
    with contextlib.ExitStack() as stack:
        if storage == "etcd":
            etcd = EtcdProcess()
            etcd.start()
            stack.callback(etcd.cleanup)
        urls = {}
        for workers in (1, 2):
            args = ["--no-controllers", "--workers", str(workers)]
            if storage == "etcd":  # each on its own key prefix: neither watches the other's writes
                args += ["--storage", f"etcd://127.0.0.1:{etcd.client_port}/w{workers}-{uuid.uuid4().hex[:6]}"]
            data = Path(stack.enter_context(tempfile.TemporaryDirectory(dir=scratch))) / "kplane"
            _, urls[workers] = stack.enter_context(kplane(data, *args))
            prepare(urls[workers])
        # Rounds taken in turn, the best of each kept: a machine shared with other work is
        # noisy, and the noise only ever slows a run down.
        for run in range(rounds):
            for workers in (1, 2):
                for key, value in measure(urls[workers], seconds, run).items():
                    best[workers][key] = max(best[workers].get(key, 0.0), value)
    print_comparison(f"kplane serve on {storage}, {CONCURRENCY} connections (wrk), {os.cpu_count()} cores, "
                     f"best of {rounds} rounds of {seconds:.0f} s", ("2 workers", "1 worker"), best[2], best[1])


def main(seconds: float, rounds: int, storages: list[str]) -> int:
    if not wrk_available():
        print("skipped: the workers benchmark needs wrk on PATH")
        return 0
    for storage in storages:
        if storage == "etcd" and ETCD is None:
            print("skipped on etcd: etcd is not on PATH")
            continue
        compare(storage, seconds, rounds)
    return 0


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--storage", choices=("sqlite", "etcd"), action="append",
                        help="measure on this storage (repeatable; default: both)")
    args = parser.parse_args()
    sys.exit(main(args.seconds, args.rounds, args.storage or ["sqlite", "etcd"]))
