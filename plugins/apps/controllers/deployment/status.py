"""A Deployment's status computed from its ReplicaSets: counters, conditions, and the tests a
rollout's progress is judged by (``calculateStatus``, ``DeploymentComplete``,
``DeploymentProgressing``, ``DeploymentTimedOut``)."""

from __future__ import annotations

import copy
import time

from kplane.api import clock, get_condition, ownership as own, set_condition, spec_replicas
from kplane.api import new_condition as _any_condition
from kplane.plugins.apps.controllers.deployment.objects import INT32_MAX, Obj, status
from kplane.plugins.apps.controllers.deployment.scaling import max_unavailable

AVAILABLE, PROGRESSING, REPLICA_FAILURE = "Available", "Progressing", "ReplicaFailure"
MIN_AVAILABLE, MIN_UNAVAILABLE = "MinimumReplicasAvailable", "MinimumReplicasUnavailable"
NEW_RS_CREATED, FOUND_NEW_RS, RS_UPDATED = "NewReplicaSetCreated", "FoundNewReplicaSet", "ReplicaSetUpdated"
NEW_RS_AVAILABLE, TIMED_OUT, RS_CREATE_ERROR = "NewReplicaSetAvailable", "ProgressDeadlineExceeded", "ReplicaSetCreateError"
PAUSED, RESUMED = "DeploymentPaused", "DeploymentResumed"


def new_condition(type_: str, status_: str, reason: str, message: str) -> Obj:
    """A Deployment condition changing now: it carries lastUpdateTime, which the deadline counts from."""
    return _any_condition(type_, status_, reason, message, with_update_time=True)


def progress_deadline(d: Obj) -> int | None:
    """``progressDeadlineSeconds``; None when progress is not tracked."""
    value = own.spec(d).get("progressDeadlineSeconds")
    return None if value is None or value == INT32_MAX else int(value)


def calculate_status(d: Obj, new_rs: Obj | None, all_rss: list[Obj]) -> Obj:
    """Counters from the ReplicaSets' statuses, the old conditions, and Available (``calculateStatus``)."""
    available = sum(status(rs).get("availableReplicas") or 0 for rs in all_rss)
    calculated: Obj = {
        "observedGeneration": d["metadata"].get("generation") or 0,
        "replicas": sum(status(rs).get("replicas") or 0 for rs in all_rss),
        "updatedReplicas": (status(new_rs).get("replicas") or 0) if new_rs is not None else 0,
        "readyReplicas": sum(status(rs).get("readyReplicas") or 0 for rs in all_rss),
        "availableReplicas": available,
        "unavailableReplicas": max(0, sum(spec_replicas(rs) for rs in all_rss) - available),
        "conditions": copy.deepcopy(status(d).get("conditions") or []),
    }
    if status(d).get("collisionCount") is not None:
        calculated["collisionCount"] = status(d)["collisionCount"]
    if available >= spec_replicas(d) - max_unavailable(d):
        set_condition(calculated, new_condition(AVAILABLE, "True", MIN_AVAILABLE, "Deployment has minimum availability."))
    else:
        set_condition(calculated, new_condition(AVAILABLE, "False", MIN_UNAVAILABLE, "Deployment does not have minimum availability."))
    return calculated


def status_differs(current: Obj, wanted: Obj) -> bool:
    """Compared as the server stores them: absent counters are 0, absent conditions an empty list."""
    counters = ("observedGeneration", "replicas", "updatedReplicas", "readyReplicas", "availableReplicas", "unavailableReplicas")
    return (any((current.get(k) or 0) != (wanted.get(k) or 0) for k in counters)
            or current.get("collisionCount") != wanted.get("collisionCount")
            or (current.get("conditions") or []) != (wanted.get("conditions") or []))


def complete(d: Obj, calculated: Obj) -> bool:
    """Every replica updated and available, and the latest spec observed (``DeploymentComplete``)."""
    replicas = spec_replicas(d)
    return ((calculated.get("updatedReplicas") or 0) == replicas and (calculated.get("replicas") or 0) == replicas
            and (calculated.get("availableReplicas") or 0) == replicas
            and (calculated.get("observedGeneration") or 0) >= (d["metadata"].get("generation") or 0))


def progressing(d: Obj, calculated: Obj) -> bool:
    """More pods updated, ready or available, or fewer old ones, than the stored status says."""
    old = status(d)

    def count(s: Obj, key: str) -> int:
        return int(s.get(key) or 0)
    return (count(calculated, "updatedReplicas") > count(old, "updatedReplicas")
            or count(calculated, "replicas") - count(calculated, "updatedReplicas") < count(old, "replicas") - count(old, "updatedReplicas")
            or count(calculated, "readyReplicas") > count(old, "readyReplicas")
            or count(calculated, "availableReplicas") > count(old, "availableReplicas"))


def timed_out(calculated: Obj, deadline: int) -> bool:
    """No progress for ``deadline`` seconds since Progressing was last updated (``DeploymentTimedOut``)."""
    condition = get_condition(calculated, PROGRESSING)
    if condition is None or condition.get("reason") == NEW_RS_AVAILABLE:
        return False
    if condition.get("reason") == TIMED_OUT:
        return True
    return clock.epoch(condition.get("lastUpdateTime")) + deadline < time.time()


def replica_failure(new_rs: Obj | None, all_rss: list[Obj]) -> Obj | None:
    """A ReplicaFailure of the new ReplicaSet, else of any, as a Deployment condition."""
    for rs in [*([new_rs] if new_rs is not None else []), *all_rss]:
        failure = get_condition(status(rs), REPLICA_FAILURE)
        if failure is not None:
            stamp = failure.get("lastTransitionTime")
            return {"type": REPLICA_FAILURE, "status": failure.get("status"), "lastUpdateTime": stamp, "lastTransitionTime": stamp,
                    "reason": failure.get("reason"), "message": failure.get("message")}
    return None
