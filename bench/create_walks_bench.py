"""The create path's one-walk conversions against the two-walk compositions they stand for.

Each line times, on the Deployment the other benchmarks create, one step of a create done the
way the server does it ("now") and the composition it is defined as ("two walks"), which the
server no longer runs on this path but still has: encoding is ``python_to_wire(unbuild(obj))``,
the internal object is ``build(wire_to_python(wire))``, a create's owned fields are
``union(modified, added)`` of a full comparison, and decoding takes every leaf through
marshmallow. Both ways run in this process, interleaved batch by batch, so a machine shared with
other work slows both alike: the ratio holds where absolute figures do not. CPU time of this thread.

    python bench/create_walks_bench.py [--batches 300]
"""

from __future__ import annotations

import argparse
import asyncio
import copy
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from common import deployment
from create_phases_bench import served_scheme

from kplane.core.managedfields import entries, fieldmanager
from kplane.core.managedfields.fieldsets import union
from kplane.core.managedfields.merge import compare_objects
from kplane.core.runtime.objects import build, unbuild
from kplane.core.runtime.schema import FieldShape, Shape, object_to_wire, python_to_wire, wire_to_object, wire_to_python

OBJECTS = 20  # a batch: small, so that both ways share the same moments of a loaded machine


def plain_leaves(shape: Shape, seen: set[int] | None = None) -> list[tuple[FieldShape, type]]:
    """The leaves decoding takes without marshmallow, to switch that off and on."""
    seen = set() if seen is None else seen
    if id(shape) in seen:
        return []
    seen.add(id(shape))
    out = []
    for fs in shape.by_key.values():
        if fs.child is not None:
            out += plain_leaves(fs.child, seen)
        elif fs.plain is not None:
            out.append((fs, fs.plain))
    return out


def interleaved(batches: int, run: Callable[[bool], int], setup: Callable[[bool], None] = lambda now: None) -> tuple[float, float]:
    """µs per object of ``run(False)`` (two walks) and ``run(True)`` (now), alternating which goes first."""
    total = {False: 0.0, True: 0.0}
    count = 0
    for b in range(batches):
        for now in (False, True) if b % 2 else (True, False):
            setup(now)
            began = time.thread_time()
            count += run(now)
            total[now] += time.thread_time() - began
    setup(True)
    return total[False] / (count / 2) * 1e6, total[True] / (count / 2) * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batches", type=int, default=300)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        scheme = asyncio.run(served_scheme(Path(tmp)))
    rt = scheme.get("apps", "deployments")
    assert rt is not None
    shape = rt.versions["v1"].shape
    bodies = []
    for i in range(OBJECTS):
        body = deployment(f"web-{i}")
        body["metadata"]["namespace"] = "default"
        bodies.append(body)
    objs = [rt.decode(copy.deepcopy(b), "v1", "Strict", ())[0] for b in bodies]
    encoded = [rt.encode(o, "v1") for o in objs]

    def managed(e: dict[str, Any]) -> list[dict[str, Any]]:
        return fieldmanager.managed_fields_after_update(None, e, shape, manager="kubectl-create", api_version="apps/v1",
                                                        now="2026-12-01T00:00:00Z")
    tracked = [{**e, "metadata": {**e["metadata"], "managedFields": managed(e)}} for e in encoded]
    leaves = plain_leaves(shape)

    def plain(now: bool) -> None:
        for fs, kind in leaves:
            fs.plain = kind if now else None

    one_walk = entries.changed_set

    def full_comparison(old: dict[str, Any], new: dict[str, Any], root: Any, skip: Any) -> Any:
        c = compare_objects(old, new, root, skip)
        return union(c.modified, c.added)

    def owned(now: bool) -> None:
        entries.changed_set = one_walk if now else full_comparison  # type: ignore[assignment]

    rows = []
    copies = interleaved(  # decoding changes what it is given: each run decodes copies, whose cost is taken off
        args.batches, lambda now: [copy.deepcopy(b) for b in bodies] and OBJECTS)
    dec = interleaved(args.batches, lambda now: [rt.decode(copy.deepcopy(b), "v1", "Strict", ()) for b in bodies] and OBJECTS, plain)
    rows.append(("decode: validate and default", dec[0] - copies[0], dec[1] - copies[1]))
    rows.append(("encode (twice per create)", *interleaved(args.batches, lambda now: [
        object_to_wire(shape, o) if now else python_to_wire(shape, unbuild(o)) for o in objs] and OBJECTS)))
    rows.append(("record managedFields", *interleaved(args.batches, lambda now: [managed(e) for e in encoded] and OBJECTS, owned)))
    rows.append(("build the internal object again", *interleaved(args.batches, lambda now: [
        wire_to_object(shape, rt.internal, t) if now else build(rt.internal, wire_to_python(shape, t)) for t in tracked] and OBJECTS)))
    print(f"{'step of a Deployment create (µs)':<36}{'two walks':>10}{'now':>8}{'now/two':>9}")
    for label, before, after in rows:
        print(f"{label:<36}{before:>10.1f}{after:>8.1f}{after / before:>9.2f}")


if __name__ == "__main__":
    main()
