"""Replica arithmetic shared by workload controllers (``intstr.GetScaledValueFromIntOrPercent``,
deployment util's ``ResolveFenceposts``)."""

from __future__ import annotations

from kplane.core.controllers.ownership import Obj, spec


def spec_replicas(obj: Obj) -> int:
    """``spec.replicas`` of a Deployment, ReplicaSet or the like; 1 when unset, as defaulting sets it."""
    value = spec(obj).get("replicas")
    return 1 if value is None else int(value)


def scaled_value(value: int | str | None, total: int, *, round_up: bool) -> int:
    """An int-or-percent: an int as is, ``"25%"`` that share of ``total`` rounded up or down; 0 when unset."""
    if value is None:
        return 0
    if isinstance(value, int):
        return value
    if value.endswith("%"):
        share = int(value[:-1]) * total
        return -(-share // 100) if round_up else share // 100
    return int(value)


def resolve_fenceposts(max_surge: int | str | None, max_unavailable: int | str | None, desired: int) -> tuple[int, int]:
    """A rolling update's (maxSurge rounded up, maxUnavailable rounded down) of ``desired``; never
    both 0, which would let the rollout neither add nor remove a pod: then 1 may be unavailable."""
    surge = scaled_value(max_surge, desired, round_up=True)
    unavailable = scaled_value(max_unavailable, desired, round_up=False)
    return (surge, 1) if surge == 0 and unavailable == 0 else (surge, unavailable)
