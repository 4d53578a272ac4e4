"""A DaemonSet's rolling update (``pkg/controller/daemon/update.go``), as pure decisions over the
nodes that should run its pod and the live pods on each.

Without surge, old pods are deleted while at most ``maxUnavailable`` nodes lack an available
pod (an old pod that is not available anyway is replaced at once); the manage step then makes
the new pod once the old one is gone. With ``maxSurge``, a new pod starts next to the old one
on up to ``maxSurge`` nodes at a time, and the old pod is deleted once the new one is available.
"""

from __future__ import annotations

from typing import Any

from kplane.api import ownership as own
from kplane.api import scaled_value
from kplane.plugins.apps.controllers.history import HASH_LABEL
from kplane.plugins.apps.controllers.replicaset import is_available

Obj = dict[str, Any]


def _rolling(ds: Obj) -> Obj:
    return (own.spec(ds).get("updateStrategy") or {}).get("rollingUpdate") or {}


def surge_count(ds: Obj, desired: int) -> int:
    """``SurgeCount``: maxSurge of ``desired`` nodes, a percentage rounded up; 0 unless RollingUpdate."""
    if (own.spec(ds).get("updateStrategy") or {}).get("type") != "RollingUpdate":
        return 0
    return scaled_value(_rolling(ds).get("maxSurge"), desired, round_up=True)


def unavailable_count(ds: Obj, desired: int) -> int:
    """``UnavailableCount``: maxUnavailable of ``desired`` nodes, a percentage rounded up."""
    if (own.spec(ds).get("updateStrategy") or {}).get("type") != "RollingUpdate":
        return 0
    return scaled_value(_rolling(ds).get("maxUnavailable"), desired, round_up=True)


def allows_surge(ds: Obj) -> bool:
    return surge_count(ds, 1) != 0


def _new_and_old(pods: list[Obj], hash_: str) -> tuple[Obj | None, Obj | None, bool]:
    """``findUpdatedPodsOnNode``: the node's new and old pod; False when it has two of either
    (the manage step cleans that node up first)."""
    new = old = None
    for pod in pods:
        if pod["metadata"].get("deletionTimestamp"):
            continue
        if (pod["metadata"].get("labels") or {}).get(HASH_LABEL) == hash_:
            if new is not None:
                return None, None, False
            new = pod
        else:
            if old is not None:
                return None, None, False
            old = pod
    return new, old, True


def plan_update(ds: Obj, node_pods: dict[str, list[Obj]], hash_: str, now: float) -> tuple[list[Obj], list[str]]:
    """The old pods to delete and the nodes to start a surge pod on, for ``node_pods``: every
    node that should run the pod, with its pods (none for a node without)."""
    desired = len(node_pods)
    max_surge, max_unavailable = surge_count(ds, desired), unavailable_count(ds, desired)
    if desired and not max_surge and not max_unavailable:
        max_unavailable = 1  # an impossible configuration obeys the default
    min_ready = int(own.spec(ds).get("minReadySeconds") or 0)
    if not max_surge:
        return _without_surge(node_pods, hash_, max_unavailable, min_ready, now), []
    return _with_surge(node_pods, hash_, max_surge, min_ready, now)


def _without_surge(node_pods: dict[str, list[Obj]], hash_: str, max_unavailable: int, min_ready: int, now: float) -> list[Obj]:
    unavailable = 0
    replace: list[Obj] = []  # old pods not available anyway
    candidates: list[Obj] = []
    for node in sorted(node_pods):
        new, old, ok = _new_and_old(node_pods[node], hash_)
        if not ok or (new is None) == (old is None):
            unavailable += 1  # nothing there, or both: the manage step acts first
        elif new is not None:
            unavailable += not is_available(new, min_ready, now)
        elif old is not None and not is_available(old, min_ready, now):
            replace.append(old)
        elif old is not None and unavailable < max_unavailable:
            candidates.append(old)
    room = max(0, max_unavailable - unavailable)
    return replace + candidates[:room]


def _with_surge(node_pods: dict[str, list[Obj]], hash_: str, max_surge: int, min_ready: int,
                now: float) -> tuple[list[Obj], list[str]]:
    surging = 0
    delete: list[Obj] = []
    allowed: list[str] = []  # nodes whose old pod is not available: replaced at once
    candidates: list[str] = []
    for node in sorted(node_pods):
        new, old, ok = _new_and_old(node_pods[node], hash_)
        if not ok:
            surging += 1  # two pods of a kind: the manage step cleans the node up first
            continue
        if old is None:
            continue
        if new is None:
            if not is_available(old, min_ready, now):
                allowed.append(node)
            elif surging < max_surge:
                candidates.append(node)
        elif not is_available(new, min_ready, now):
            surging += 1  # waiting for the new pod to become available
        else:
            delete.append(old)
    room = max(0, min(max_surge - surging, len(candidates)))
    return delete, allowed + candidates[:room]
