"""The taints the node lifecycle controller keeps, and how pods tolerate them."""

from __future__ import annotations

from typing import Any

from kplane.api import Informer
from kplane.api import ownership as own
from kplane.plugins.core.controllers.nodes.predicates import tolerates
from kplane.plugins.core.controllers.nodes.scheduler import NODE_NAME_INDEX

Obj = dict[str, Any]

UNREACHABLE, NOT_READY, UNSCHEDULABLE = "node.kubernetes.io/unreachable", "node.kubernetes.io/not-ready", "node.kubernetes.io/unschedulable"
NO_SCHEDULE, NO_EXECUTE = "NoSchedule", "NoExecute"
OWN_KEYS = (UNREACHABLE, NOT_READY, UNSCHEDULABLE)  # the taints this controller adds and removes


def wanted(node: Obj, ready: str) -> list[Obj]:
    """The controller's taints a node should have: unreachable or not-ready (NoSchedule and
    NoExecute) for a Ready condition Unknown or False, unschedulable for a cordoned node."""
    keys = {"Unknown": UNREACHABLE, "False": NOT_READY}
    found: list[Obj] = []
    if ready in keys:
        found += [{"key": keys[ready], "effect": NO_SCHEDULE}, {"key": keys[ready], "effect": NO_EXECUTE}]
    if (node.get("spec") or {}).get("unschedulable"):
        found.append({"key": UNSCHEDULABLE, "effect": NO_SCHEDULE})
    return found


def merged(current: list[Obj], own: list[Obj], now: str) -> list[Obj]:
    """``current`` with the controller's taints replaced by ``own``; a taint kept keeps its
    ``timeAdded``, a new NoExecute one is added ``now``."""
    def same(a: Obj, b: Obj) -> bool:
        return a.get("key") == b.get("key") and a.get("effect") == b.get("effect")

    others = [t for t in current if t.get("key") not in OWN_KEYS]
    kept = []
    for taint in own:
        existing = next((t for t in current if same(t, taint)), None)
        if existing is not None:
            kept.append(existing)
        else:
            kept.append({**taint, "timeAdded": now} if taint["effect"] == NO_EXECUTE else taint)
    return others + kept


def toleration_seconds(pod: Obj, taints: list[Obj]) -> float | None:
    """How long the pod may stay with these NoExecute taints: 0 when one is not tolerated, None
    when all are tolerated forever, else the shortest ``tolerationSeconds`` that applies
    (``getMinTolerationTime``)."""
    tolerations = (pod.get("spec") or {}).get("tolerations") or []
    shortest: float | None = None
    for taint in taints:
        matching = [t for t in tolerations if tolerates([t], taint)]
        if not matching:
            return 0.0
        for toleration in matching:
            seconds = toleration.get("tolerationSeconds")
            if seconds is not None:
                shortest = max(0.0, float(seconds)) if shortest is None else min(shortest, max(0.0, float(seconds)))
    return shortest


def no_execute(node: Obj) -> list[Obj]:
    return [t for t in (node.get("spec") or {}).get("taints") or [] if t.get("effect") == NO_EXECUTE]


def index_by_node(pods: Informer) -> None:
    """Index the pods by ``spec.nodeName``, unless the scheduler of the same informers has."""
    if not pods.indexer.has_indexer(NODE_NAME_INDEX):  # the simulated nodes' scheduler indexes them the same way
        pods.indexer.add_indexer(NODE_NAME_INDEX, lambda pod: [own.spec(pod).get("nodeName") or ""])
