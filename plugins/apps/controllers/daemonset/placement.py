"""Where a DaemonSet's pods belong (``pkg/controller/daemon``'s ``NodeShouldRunDaemonPod`` and
``podsShouldBeOnNode``): pure functions of the DaemonSet, a node and the pods on it.

A node should run the daemon pod when the template's ``nodeName`` (if any) is the node's, its
nodeSelector and required node affinity match, and it has no NoSchedule or NoExecute taint the
pod (with the DaemonSet's default tolerations) does not tolerate; a pod already there may keep
running as long as every NoExecute taint is tolerated. Each pod is placed by a required node
affinity term ``matchFields metadata.name In [node]``, and the scheduler binds it.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

from kplane.api import clock
from kplane.api import ownership as own
from kplane.plugins.apps.controllers.history import HASH_LABEL
from kplane.plugins.apps.controllers.replicaset import is_available, is_ready
from kplane.plugins.core.controllers.nodes.predicates import matches_node_selector_and_affinity, required_node_terms, tolerates

Obj = dict[str, Any]

TEMPLATE_GENERATION_LABEL = "pod-template-generation"
NODE_NAME_FIELD = "metadata.name"
_EXISTS = "Exists"
#: ``AddOrUpdateDaemonPodTolerations``: a node agent stays through node trouble and cordons.
DEFAULT_TOLERATIONS = (
    ("node.kubernetes.io/not-ready", "NoExecute"),
    ("node.kubernetes.io/unreachable", "NoExecute"),
    ("node.kubernetes.io/disk-pressure", "NoSchedule"),
    ("node.kubernetes.io/memory-pressure", "NoSchedule"),
    ("node.kubernetes.io/pid-pressure", "NoSchedule"),
    ("node.kubernetes.io/unschedulable", "NoSchedule"),
)
HOST_NETWORK_TOLERATION = ("node.kubernetes.io/network-unavailable", "NoSchedule")


def with_default_tolerations(pod_spec: Obj) -> None:
    """Add the daemon tolerations to ``pod_spec``, replacing one of the same key, operator, value
    and effect in place (``AddOrUpdateTolerationInPodSpec``)."""
    wanted = list(DEFAULT_TOLERATIONS) + ([HOST_NETWORK_TOLERATION] if pod_spec.get("hostNetwork") else [])
    tolerations = list(pod_spec.get("tolerations") or [])
    for key, effect in wanted:
        toleration = {"key": key, "operator": _EXISTS, "effect": effect}
        same = [i for i, t in enumerate(tolerations) if (t.get("key"), t.get("operator") or "Equal", t.get("value") or "",
                                                         t.get("effect") or "") == (key, _EXISTS, "", effect)]
        if not same:
            tolerations.append(toleration)
        elif tolerations[same[0]] != toleration:
            tolerations[same[0]] = toleration
    pod_spec["tolerations"] = tolerations


def candidate(ds: Obj) -> Obj:
    """The pod the DaemonSet would make, as :func:`should_run` looks at it (made once per sync)."""
    spec = copy.deepcopy((own.spec(ds).get("template") or {}).get("spec") or {})
    with_default_tolerations(spec)
    return {"metadata": {}, "spec": spec}


def should_run(node: Obj, pod: Obj) -> tuple[bool, bool]:
    """(should a daemon pod be made for ``node``, may one there keep running), for the
    DaemonSet's :func:`candidate` pod."""
    name = node["metadata"]["name"]
    wanted_node = own.spec(pod).get("nodeName")
    if wanted_node and wanted_node != name:
        return False, False
    if not matches_node_selector_and_affinity(node, pod):
        return False, False
    tolerations = own.spec(pod).get("tolerations") or []
    taints = own.spec(node).get("taints") or []
    if any(t.get("effect") in ("NoSchedule", "NoExecute") and not tolerates(tolerations, t) for t in taints):
        return False, all(tolerates(tolerations, t) for t in taints if t.get("effect") == "NoExecute")
    return True, True


def target_node(pod: Obj) -> str:
    """``GetTargetNodeName``: the node a daemon pod is bound to, or the one its ``matchFields``
    term names while it is not bound yet ("" when neither says)."""
    spec = own.spec(pod)
    if spec.get("nodeName"):
        return str(spec["nodeName"])
    for term in required_node_terms(spec) or []:
        requirements = term.get("matchFields")
        for requirement in requirements if isinstance(requirements, list) else []:
            values = requirement.get("values") if isinstance(requirement, dict) else None
            if not isinstance(values, list):
                continue
            if requirement.get("key") == NODE_NAME_FIELD and requirement.get("operator") == "In" and len(values) == 1:
                return str(values[0])
    return ""


def pin_to_node(pod_spec: Obj, node: str) -> None:
    """``ReplaceDaemonSetPodNodeNameNodeAffinity``: the required node affinity becomes one term
    naming ``node`` (the controller checked the template's own terms against it already)."""
    affinity = pod_spec.get("affinity") if isinstance(pod_spec.get("affinity"), dict) else {}
    node_affinity = affinity.get("nodeAffinity") if isinstance(affinity.get("nodeAffinity"), dict) else {}
    node_affinity["requiredDuringSchedulingIgnoredDuringExecution"] = {"nodeSelectorTerms": [
        {"matchFields": [{"key": NODE_NAME_FIELD, "operator": "In", "values": [node]}]}
    ]}
    affinity["nodeAffinity"] = node_affinity
    pod_spec["affinity"] = affinity


def is_updated(pod: Obj, hash_: str, template_generation: int | None) -> bool:
    """``IsPodUpdated``: the pod carries the current revision's hash, or the template generation."""
    labels = pod["metadata"].get("labels") or {}
    return (bool(hash_) and labels.get(HASH_LABEL) == hash_) or (
        template_generation is not None and labels.get(TEMPLATE_GENERATION_LABEL) == str(template_generation))


def oldest_first(pods: list[Obj]) -> list[Obj]:
    """``podByCreationTimestampAndPhase``: bound pods first, then by creation time and name."""
    return sorted(pods, key=lambda p: (not own.spec(p).get("nodeName"), clock.epoch(p["metadata"].get("creationTimestamp")),
                                       p["metadata"]["name"]))


@dataclass(slots=True)
class NodePlan:
    """What one sync does: make a pod on these nodes, delete these pods, and the failed pods found."""

    create_on: list[str] = field(default_factory=list)
    delete: list[Obj] = field(default_factory=list)
    failed: list[tuple[Obj, str]] = field(default_factory=list)  # (pod, node): deleted unless in back-off


def plan_node(plan: NodePlan, node: Obj, pods: list[Obj] | None, run: tuple[bool, bool], *, hash_: str, surge: bool,
              min_ready_seconds: int, now: float) -> None:
    """``podsShouldBeOnNode``: a pod for a node that should run one and has none; failed and
    succeeded pods replaced; one running pod per node (two only while a surge pod is not yet
    available next to a ready old one); every pod off a node that must not run it."""
    name = node["metadata"]["name"]
    should, may_continue = run
    if should and pods is None:
        plan.create_on.append(name)
        return
    if pods is None:
        return
    live = [p for p in pods if not p["metadata"].get("deletionTimestamp")]
    if not may_continue:
        plan.delete.extend(live)
        return
    running = []
    for pod in live:
        phase = (pod.get("status") or {}).get("phase")
        if phase == "Failed":
            plan.failed.append((pod, name))
        elif phase == "Succeeded":
            plan.delete.append(pod)
        else:
            running.append(pod)
    if len(running) <= 1:
        return
    running = oldest_first(running)
    if not surge:
        plan.delete.extend(running[1:])
        return
    oldest_new = next((p for p in running if (p["metadata"].get("labels") or {}).get(HASH_LABEL) == hash_), None)
    oldest_old = next((p for p in running if (p["metadata"].get("labels") or {}).get(HASH_LABEL) != hash_), None)
    plan.delete.extend(p for p in running if p is not oldest_new and p is not oldest_old)
    if oldest_new is not None and oldest_old is not None:
        if not is_ready(oldest_old) or is_available(oldest_new, min_ready_seconds, now):
            plan.delete.append(oldest_old)
