"""Where a Deployment create's time goes, phase by phase, against one raw storage write.

Each phase of the write path is timed on its own, in this process, on the Deployment the other
benchmarks create (its CPU time, the best of several repeats, so another process on the machine
disturbs the figures little): reading the JSON body, decoding it into the internal object (marshmallow
validation and defaulting), encoding it back in the request's version, recording managedFields,
building the internal object again from that, the strategy's validation, the storage version's
wire form and its bytes, and the response's bytes. The baseline is what the store beneath costs
per create in the same run: ``SQLiteStorage.create`` from 16 concurrent writers (its group commit,
fsync included), as ``backends_bench.py`` measures it. The ratios show which phases dominate and
how far from the store's own cost the Python around it is.

    python bench/create_phases_bench.py [--seconds 3]
"""

from __future__ import annotations

import argparse
import asyncio
import copy
import tempfile
import time
import timeit
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson

from backends_bench import raw_creates
from common import deployment

from kplane.core.managedfields import fieldmanager
from kplane.core.registry.stored import storage_bytes
from kplane.core.registry.strategy import RequestContext
from kplane.core.runtime.scheme import Scheme
from kplane.core.serving.apiserver import APIServer
from kplane.core.storage.sqlite import SQLiteStorage
from kplane.plugins.apps.strategy import DeploymentStrategy
from tests.servers import server_config


def best_us(fn: Callable[[], Any], number: int = 300, repeat: int = 7) -> float:
    """``fn``'s CPU time per call, the best of ``repeat`` runs (CPU, not wall, time: another
    process on the machine does not count)."""
    return min(timeit.repeat(fn, number=number, repeat=repeat, timer=time.process_time)) / number * 1e6


async def served_scheme(data_dir: Path) -> Scheme:
    """The scheme of a server as ``kplane serve`` starts it (every plugin's types, defaults and
    conversions: a Deployment defaulted as it is stored), from an in-process server."""
    server = APIServer(server_config(data_dir=data_dir, port=0, run_controllers=False))
    await server.start()
    await server.stop()
    return server.scheme


def phases(scheme: Scheme) -> tuple[list[tuple[str, float]], int]:
    """Each phase's µs, and the size of the stored Deployment (the raw writes' value size)."""
    rt = scheme.get("apps", "deployments")
    assert rt is not None
    wire = deployment("web")
    wire["metadata"]["namespace"] = "default"
    body = orjson.dumps(wire)
    obj, _ = rt.decode(copy.deepcopy(wire), "v1", "Strict", ())
    encoded = rt.encode(obj, "v1")
    shape = rt.versions["v1"].shape

    def managed() -> list[dict[str, Any]]:
        return fieldmanager.managed_fields_after_update(None, encoded, shape, manager="kubectl-create",
                                                        api_version="apps/v1", now="2026-12-01T00:00:00Z")
    tracked = {**encoded, "metadata": {**encoded["metadata"], "managedFields": managed()}}
    internal = rt.internalize(tracked, "v1")
    stored = rt.encode(internal, rt.storage_version)
    strategy, ctx = DeploymentStrategy(), RequestContext(group="apps", version="v1", resource="deployments", namespace="default")
    copied = best_us(lambda: copy.deepcopy(wire))  # decode changes what it is given: each run gets a copy
    return [
        ("read the JSON body", best_us(lambda: orjson.loads(body))),
        ("decode: validate and default", best_us(lambda: rt.decode(copy.deepcopy(wire), "v1", "Strict", ())) - copied),
        ("encode in the request's version", best_us(lambda: rt.encode(obj, "v1"))),
        ("record managedFields", best_us(managed)),
        ("build the internal object again", best_us(lambda: rt.internalize(tracked, "v1"))),
        ("the strategy's validation", best_us(lambda: strategy.validate(ctx, internal))),
        ("the storage version's wire form", best_us(lambda: rt.encode(internal, rt.storage_version))),
        ("the stored bytes", best_us(lambda: storage_bytes(stored))),
        ("the response's bytes", best_us(lambda: orjson.dumps(stored))),
    ], len(storage_bytes(stored))


async def raw_us(seconds: float, size: int) -> float:
    with tempfile.TemporaryDirectory() as tmp:
        per_second = await raw_creates(await SQLiteStorage.open(f"{tmp}/raw.db"), seconds, size)
    return 1e6 / per_second


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=3.0)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        scheme = asyncio.run(served_scheme(Path(tmp)))
    rows, size = phases(scheme)
    raw = asyncio.run(raw_us(args.seconds, size))
    print(f"{'phase of a Deployment create':<36}{'µs':>8}{'x raw write':>13}")
    for label, us in rows:
        print(f"{label:<36}{us:>8.1f}{us / raw:>13.2f}")
    total = sum(us for _, us in rows)
    print(f"{'these phases together':<36}{total:>8.1f}{total / raw:>13.2f}")
    print(f"{'raw SQLiteStorage.create (16 writers)':<36}{raw:>8.1f}{1:>13.2f}")


if __name__ == "__main__":
    main()
