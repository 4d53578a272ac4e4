"""How big each of a Deployment's ReplicaSets should be (``deploymentutil``'s replica arithmetic).

A ReplicaSet remembers the Deployment size it was last scaled for in two annotations,
``desired-replicas`` (``spec.replicas``) and ``max-replicas`` (plus maxSurge): a change of
``spec.replicas`` is then told apart from a rollout, and spread across the active ReplicaSets in
proportion to those sizes.
"""

from __future__ import annotations

from kplane.api import ownership as own, resolve_fenceposts, scaled_value, spec_replicas
from kplane.plugins.apps.controllers.deployment.objects import Obj, active, annotations, created, int_annotation, is_recreate, status

DESIRED_REPLICAS = "deployment.kubernetes.io/desired-replicas"
MAX_REPLICAS = "deployment.kubernetes.io/max-replicas"


def set_replicas_annotations(rs: Obj, desired: int, most: int) -> bool:
    changed = replicas_annotations_differ(rs, desired, most)
    values = rs["metadata"]["annotations"] = rs["metadata"].get("annotations") or {}
    values[DESIRED_REPLICAS], values[MAX_REPLICAS] = str(desired), str(most)
    return changed


def replicas_annotations_differ(rs: Obj, desired: int, most: int) -> bool:
    values = annotations(rs)
    return values.get(DESIRED_REPLICAS) != str(desired) or values.get(MAX_REPLICAS) != str(most)


def fenceposts(d: Obj) -> tuple[int, int]:
    """``ResolveFenceposts`` of the Deployment's rollingUpdate: (maxSurge, maxUnavailable)."""
    rolling = (own.spec(d).get("strategy") or {}).get("rollingUpdate") or {}
    return resolve_fenceposts(rolling.get("maxSurge"), rolling.get("maxUnavailable"), spec_replicas(d))


def max_surge(d: Obj) -> int:
    return 0 if is_recreate(d) else fenceposts(d)[0]


def max_unavailable(d: Obj) -> int:
    if is_recreate(d) or spec_replicas(d) == 0:
        return 0
    return min(fenceposts(d)[1], spec_replicas(d))


def new_rs_replicas(d: Obj, all_rss: list[Obj], new_rs: Obj) -> int:
    """The new ReplicaSet's next size: up to ``replicas + maxSurge`` pods in all (``NewRSNewReplicas``)."""
    if is_recreate(d):
        return spec_replicas(d)
    rolling = (own.spec(d).get("strategy") or {}).get("rollingUpdate") or {}
    most = spec_replicas(d) + scaled_value(rolling.get("maxSurge"), spec_replicas(d), round_up=True)
    current = sum(spec_replicas(rs) for rs in all_rss)
    if current >= most:
        return spec_replicas(new_rs)
    return spec_replicas(new_rs) + min(most - current, spec_replicas(d) - spec_replicas(new_rs))


def proportion(d: Obj, rs: Obj, to_add: int, added: int) -> int:
    """How many replicas ``rs`` gains (or loses) of ``to_add`` (``GetReplicaSetProportion``)."""
    if spec_replicas(rs) == 0 or to_add == 0 or to_add == added:
        return 0
    allowed = to_add - added
    share = _fraction(d, rs)
    return min(share, allowed) if to_add > 0 else max(share, allowed)


def _fraction(d: Obj, rs: Obj) -> int:
    """The change that keeps ``rs``'s share of the size it was last scaled for (``getReplicaSetFraction``)."""
    if spec_replicas(d) == 0:
        return -spec_replicas(rs)
    annotated = int_annotation(rs, MAX_REPLICAS)
    if annotated is None:
        annotated = status(d).get("replicas") or 0
    if annotated == 0:
        return 0  # no size to be a share of: the leftovers go to the largest
    exact = spec_replicas(rs) * (spec_replicas(d) + max_surge(d)) / annotated
    return int(exact + 0.5 if exact >= 0 else exact - 0.5) - spec_replicas(rs)


def active_or_latest(new_rs: Obj | None, old_rss: list[Obj]) -> Obj | None:
    """The only active ReplicaSet, or the newest when none is active; None with several active."""
    newest_first = sorted(old_rss, key=created, reverse=True)
    running = active([*newest_first, new_rs])
    if len(running) == 1:
        return running[0]
    if not running:
        return new_rs if new_rs is not None else (newest_first[0] if newest_first else None)
    return None


def is_saturated(d: Obj, rs: Obj | None) -> bool:
    """The new ReplicaSet was sized for this Deployment and all of its pods are available."""
    if rs is None:
        return False
    return int_annotation(rs, DESIRED_REPLICAS) == spec_replicas(d) == spec_replicas(rs) == (status(rs).get("availableReplicas") or 0)


def is_scaling_event(d: Obj, new_rs: Obj | None, old_rss: list[Obj]) -> bool:
    """``spec.replicas`` changed since an active ReplicaSet was last scaled for it."""
    for rs in active([*old_rss, new_rs]):
        desired = int_annotation(rs, DESIRED_REPLICAS)
        if desired is not None and desired != spec_replicas(d):
            return True
    return False
