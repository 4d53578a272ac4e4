"""A DaemonSet's status (``updateDaemonSetStatus``), as a pure function of its nodes and pods."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kplane.api import ownership as own
from kplane.plugins.apps.controllers.daemonset.placement import is_updated, oldest_first
from kplane.plugins.apps.controllers.replicaset import is_available, is_ready

Obj = dict[str, Any]

COUNTS = ("currentNumberScheduled", "numberMisscheduled", "desiredNumberScheduled", "numberReady", "observedGeneration",
          "updatedNumberScheduled", "numberAvailable", "numberUnavailable", "collisionCount")


def calculate(ds: Obj, nodes: list[Obj], node_pods: dict[str, list[Obj]], run: Callable[[Obj], tuple[bool, bool]], *,
              hash_: str, template_generation: int | None, collision_count: int | None, now: float) -> Obj:
    """The counters, per node that should run the pod, of its oldest pod there; a node that
    should not but runs one is misscheduled."""
    min_ready = int(own.spec(ds).get("minReadySeconds") or 0)
    desired = current = ready = available = updated = misscheduled = 0
    for node in nodes:
        pods = node_pods.get(node["metadata"]["name"]) or []
        if not run(node)[0]:
            misscheduled += bool(pods)
            continue
        desired += 1
        if not pods:
            continue
        current += 1
        pod = oldest_first(pods)[0]
        if is_ready(pod):
            ready += 1
            available += is_available(pod, min_ready, now)
        updated += is_updated(pod, hash_, template_generation)
    status = {k: v for k, v in (ds.get("status") or {}).items() if k not in COUNTS}
    status.update(currentNumberScheduled=current, numberMisscheduled=misscheduled, desiredNumberScheduled=desired,
                  numberReady=ready, observedGeneration=ds["metadata"].get("generation"), updatedNumberScheduled=updated,
                  numberAvailable=available, numberUnavailable=desired - available)
    if collision_count is not None:
        status["collisionCount"] = collision_count
    return status


def differs(current: Obj, wanted: Obj) -> bool:
    """Compared as the server stores them: absent counts are 0."""
    return any((current.get(k) or 0) != (wanted.get(k) or 0) for k in COUNTS)
