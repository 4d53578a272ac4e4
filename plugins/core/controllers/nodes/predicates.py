"""The scheduler's fit predicates: whether a pod may go to a node, and if not, why, worded as
kube-scheduler words it (``0/3 nodes are available: 3 node(s) were unschedulable.``)."""

from __future__ import annotations

from typing import Any

from kplane.api import ownership as own

Obj = dict[str, Any]


def misfit(node: Obj, pod: Obj, pods: int) -> str:
    """Why ``pod`` cannot go to ``node``, which holds ``pods`` pods already, or "" when it can:
    the node must be Ready, not cordoned, match the pod's nodeSelector and required node
    affinity, have no taint the pod does not tolerate, and have room."""
    spec = own.spec(pod)
    tolerations = spec.get("tolerations") or []
    conditions = (node.get("status") or {}).get("conditions") or []
    if not any(c.get("type") == "Ready" and c.get("status") == "True" for c in conditions):
        return "node(s) were not ready"
    if own.spec(node).get("unschedulable") and not tolerates(tolerations, {"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"}):
        return "node(s) were unschedulable"
    if not matches_node_selector_and_affinity(node, pod):
        return "node(s) didn't match Pod's node affinity/selector"
    for taint in own.spec(node).get("taints") or []:
        if taint.get("effect") in ("NoSchedule", "NoExecute") and not tolerates(tolerations, taint):
            return f"node(s) had untolerated taint {{{taint.get('key')}: {taint.get('value', '')}}}"
    if pods >= _max_pods(node):
        return "Too many pods"
    return ""


def matches_node_selector_and_affinity(node: Obj, pod: Obj) -> bool:
    """``nodeaffinity.GetRequiredNodeAffinity(pod).Match(node)``: every nodeSelector label, and one
    of the required node affinity terms when there are any."""
    spec, labels = own.spec(pod), node["metadata"].get("labels") or {}
    if any(labels.get(k) != v for k, v in (spec.get("nodeSelector") or {}).items()):
        return False
    terms = required_node_terms(spec)
    return terms is None or any(_term_matches(node, term) for term in terms)


def required_node_terms(spec: Obj) -> list[Obj] | None:
    """The pod spec's required node affinity terms; None when it has none. The affinity is kept
    as sent (no schema checks it), so a part of the wrong shape counts as a term matching nothing."""
    affinity = spec.get("affinity")
    node_affinity = affinity.get("nodeAffinity") if isinstance(affinity, dict) else None
    required = node_affinity.get("requiredDuringSchedulingIgnoredDuringExecution") if isinstance(node_affinity, dict) else None
    if required is None:
        return None
    terms = required.get("nodeSelectorTerms") if isinstance(required, dict) else None
    if not isinstance(terms, list):
        return []
    return [t if isinstance(t, dict) else {} for t in terms]


def _term_matches(node: Obj, term: Obj) -> bool:
    """A term matches when all its label expressions and field requirements do; an empty term matches
    nothing. ``metadata.name`` is the one field a term may name."""
    expressions, fields = term.get("matchExpressions") or [], term.get("matchFields") or []
    if not isinstance(expressions, list) or not isinstance(fields, list) or not (expressions or fields):
        return False
    if not all(isinstance(r, dict) for r in [*expressions, *fields]):
        return False
    labels = node["metadata"].get("labels") or {}
    node_fields = {"metadata.name": node["metadata"].get("name", "")}
    return (all(_requirement_matches(r, labels) for r in expressions)
            and all(r.get("key") == "metadata.name" and r.get("operator") in ("In", "NotIn") and _requirement_matches(r, node_fields)
                    for r in fields))


def _requirement_matches(requirement: Obj, values: dict[str, str]) -> bool:
    """``NodeSelectorRequirement``: In, NotIn, Exists, DoesNotExist, and Gt/Lt comparing integers."""
    key, operator, wanted = requirement.get("key", ""), requirement.get("operator"), requirement.get("values") or []
    if not isinstance(key, str) or not isinstance(wanted, list):
        return False
    present, value = key in values, values.get(key)
    if operator == "In":
        return present and value in wanted
    if operator == "NotIn":
        return not present or value not in wanted
    if operator == "Exists":
        return present
    if operator == "DoesNotExist":
        return not present
    if operator in ("Gt", "Lt") and present and len(wanted) == 1:
        try:
            have, bound = int(str(value)), int(str(wanted[0]))
        except ValueError:
            return False
        return have > bound if operator == "Gt" else have < bound
    return False


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
