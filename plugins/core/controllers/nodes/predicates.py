"""The scheduler's fit predicates: whether a pod may go to a node, and if not, why, worded as
kube-scheduler words it (``0/3 nodes are available: 3 node(s) were unschedulable.``)."""

from __future__ import annotations

from typing import Any

from kplane.api import ownership as own

Obj = dict[str, Any]


def misfit(node: Obj, pod: Obj, pods: int) -> str:
    """Why ``pod`` cannot go to ``node``, which holds ``pods`` pods already, or "" when it can:
    the node must be Ready, not cordoned, match the pod's nodeSelector, have no taint the pod
    does not tolerate, and have room."""
    spec, labels = own.spec(pod), node["metadata"].get("labels") or {}
    tolerations = spec.get("tolerations") or []
    conditions = (node.get("status") or {}).get("conditions") or []
    if not any(c.get("type") == "Ready" and c.get("status") == "True" for c in conditions):
        return "node(s) were not ready"
    if own.spec(node).get("unschedulable") and not tolerates(tolerations, {"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"}):
        return "node(s) were unschedulable"
    if any(labels.get(k) != v for k, v in (spec.get("nodeSelector") or {}).items()):
        return "node(s) didn't match Pod's node affinity/selector"
    for taint in own.spec(node).get("taints") or []:
        if taint.get("effect") in ("NoSchedule", "NoExecute") and not tolerates(tolerations, taint):
            return f"node(s) had untolerated taint {{{taint.get('key')}: {taint.get('value', '')}}}"
    if pods >= _max_pods(node):
        return "Too many pods"
    return ""


def tolerates(tolerations: list[Obj], taint: Obj) -> bool:
    """``Toleration.ToleratesTaint``: same effect (or any), same key (or any), Exists or an equal value."""
    for t in tolerations:
        if t.get("effect") and t["effect"] != taint.get("effect"):
            continue
        if t.get("key") and t["key"] != taint.get("key"):
            continue
        if (t.get("operator") or "Equal") == "Exists" or (t.get("value") or "") == (taint.get("value") or ""):
            return True
    return False


def _max_pods(node: Obj) -> float:
    """The node's allocatable pods; no limit when it says nothing readable."""
    try:
        return int(((node.get("status") or {}).get("allocatable") or {}).get("pods"))
    except (TypeError, ValueError):
        return float("inf")
