"""From the metrics' recommendation to the replica count to set (``horizontal.go``'s
``normalizeDesiredReplicas`` and ``normalizeDesiredReplicasWithBehaviors``).

Without a ``behavior`` the recommendation is stabilized downwards over the downscale window
(the highest recommendation of the last 5 minutes wins) and a scale-up is limited to the larger
of twice the current count or 4. With one, each direction has its stabilization window (the
lowest recent recommendation for scaling up, the highest for scaling down) and its policies,
which bound the change over their periods by the scale events this controller made (select
policy Max: the largest change allowed, Min: the smallest, Disabled: none). Each step reports
the AbleToScale and ScalingLimited reasons Kubernetes gives."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

DOWNSCALE_STABILIZATION = 300.0
SCALE_UP_LIMIT_FACTOR = 2.0
SCALE_UP_LIMIT_MINIMUM = 4

Rules = dict[str, Any]  # HPAScalingRules in wire form, completed by the defaults


@dataclass(slots=True)
class ScaleEvent:
    change: int
    at: float


@dataclass(slots=True)
class History:
    """What one autoscaler's normalization remembers between syncs."""

    recommendations: list[tuple[int, float]] = field(default_factory=list)  # (replicas, when)
    scale_up: list[ScaleEvent] = field(default_factory=list)
    scale_down: list[ScaleEvent] = field(default_factory=list)


@dataclass(slots=True)
class Normalized:
    replicas: int
    able_reason: str
    able_message: str
    limited: bool
    limited_reason: str
    limited_message: str


STABILIZED_DOWN = ("ScaleDownStabilized", "recent recommendations were higher than current one, applying the highest recent recommendation")
STABILIZED_UP = ("ScaleUpStabilized", "recent recommendations were lower than current one, applying the lowest recent recommendation")
READY = ("ReadyForNewScale", "recommended size matches current size")
WITHIN = ("DesiredWithinRange", "the desired count is within the acceptable range")
TOO_FEW = ("TooFewReplicas", "the desired replica count is less than the minimum replica count")
TOO_MANY = ("TooManyReplicas", "the desired replica count is more than the maximum replica count")
UP_LIMIT = ("ScaleUpLimit", "the desired replica count is increasing faster than the maximum scale rate")
DOWN_LIMIT = ("ScaleDownLimit", "the desired replica count is decreasing faster than the maximum scale rate")


def _remember(history: History, replicas: int, now: float, window: float) -> None:
    """Keep ``replicas`` among the recommendations, dropping those older than ``window``."""
    history.recommendations = [(r, at) for r, at in history.recommendations if at >= now - window]
    history.recommendations.append((replicas, now))


def without_behavior(history: History, current: int, desired: int, min_replicas: int, max_replicas: int, now: float,
                     window: float = DOWNSCALE_STABILIZATION) -> Normalized:
    stabilized = max([desired, *(r for r, at in history.recommendations if at >= now - window)])
    _remember(history, desired, now, window)
    able = STABILIZED_DOWN if stabilized != desired else READY
    up_limit = max(int(SCALE_UP_LIMIT_FACTOR * current), SCALE_UP_LIMIT_MINIMUM)
    maximum, limiting = (up_limit, UP_LIMIT) if max_replicas > up_limit else (max_replicas, TOO_MANY)
    if stabilized < min_replicas:
        replicas, why = min_replicas, TOO_FEW
    elif stabilized > maximum:
        replicas, why = maximum, limiting
    else:
        replicas, why = stabilized, WITHIN
    return Normalized(replicas, *able, replicas != stabilized, *why)


def _changed_in(events: list[ScaleEvent], period: int, now: float) -> int:
    return sum(event.change for event in events if event.at > now - period)


def scale_up_limit(current: int, events: list[ScaleEvent], rules: Rules, now: float) -> int:
    """``calculateScaleUpLimitWithScalingRules``."""
    policy = rules.get("selectPolicy", "Max")
    if policy == "Disabled":
        return current
    proposals = []
    for p in rules.get("policies") or ():
        start = current - _changed_in(events, p["periodSeconds"], now)
        proposals.append(start + p["value"] if p["type"] == "Pods" else math.ceil(start * (1 + p["value"] / 100)))
    if not proposals:
        return current
    return min(proposals) if policy == "Min" else max(proposals)


def scale_down_limit(current: int, events: list[ScaleEvent], rules: Rules, now: float) -> int:
    """``calculateScaleDownLimitWithBehaviors``."""
    policy = rules.get("selectPolicy", "Max")
    if policy == "Disabled":
        return current
    proposals = []
    for p in rules.get("policies") or ():
        start = current + _changed_in(events, p["periodSeconds"], now)
        proposals.append(start - p["value"] if p["type"] == "Pods" else int(start * (1 - p["value"] / 100)))
    if not proposals:
        return current
    return max(proposals) if policy == "Min" else min(proposals)


def with_behavior(history: History, current: int, desired: int, min_replicas: int, max_replicas: int,
                  up: Rules, down: Rules, now: float) -> Normalized:
    up_window = up.get("stabilizationWindowSeconds") or 0
    down_window = down.get("stabilizationWindowSeconds") or 0
    up_recommendation = min([desired, *(r for r, at in history.recommendations if at >= now - up_window)])
    down_recommendation = max([desired, *(r for r, at in history.recommendations if at >= now - down_window)])
    _remember(history, desired, now, max(up_window, down_window))
    stabilized, able = current, READY
    if stabilized < up_recommendation:
        stabilized, able = up_recommendation, STABILIZED_UP
    if stabilized > down_recommendation:
        stabilized, able = down_recommendation, STABILIZED_DOWN
    if stabilized == desired:
        able = READY
    replicas, why = stabilized, WITHIN
    if stabilized > current:
        limit = max(scale_up_limit(current, history.scale_up, up, now), current)
        maximum, limiting = (limit, UP_LIMIT) if max_replicas > limit else (max_replicas, TOO_MANY)
        if stabilized > maximum:
            replicas, why = maximum, limiting
    elif stabilized < current:
        limit = min(scale_down_limit(current, history.scale_down, down, now), current)
        minimum, limiting = (limit, DOWN_LIMIT) if min_replicas < limit else (min_replicas, TOO_FEW)
        if stabilized < minimum:
            replicas, why = minimum, limiting
    return Normalized(replicas, *able, replicas != stabilized, *why)


def record_scale(history: History, previous: int, new: int, up: Rules | None, down: Rules | None, now: float) -> None:
    """``storeScaleEvent``: remember a change for the policies' periods (the longest of them)."""
    rules, events = (up, history.scale_up) if new > previous else (down, history.scale_down)
    if rules is None or new == previous:
        return
    longest = max((p["periodSeconds"] for p in rules.get("policies") or ()), default=0)
    events[:] = [event for event in events if event.at > now - longest]
    events.append(ScaleEvent(abs(new - previous), now))
