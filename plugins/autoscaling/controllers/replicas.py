"""How many replicas a resource metric asks for (``pkg/controller/podautoscaler/replica_calculator.go``).

Pure functions over what the controller read: the target's pods (from the informer cache) and
their usage (from metrics.k8s.io, in thousandths of the resource's unit, per pod). Kubernetes'
rules are kept: pods being deleted or failed are ignored; pending pods, and for cpu pods not yet
ready (or ready for less than one metrics window during their first five minutes), count as
unready; pods without metrics are missing. Within the tolerance (10%) nothing changes; when
pods are missing or unready, the ratio is computed again assuming the missing use their
requests when scaling down (0 when scaling up) and the unready use nothing, and a change that
then flips direction or lands in the tolerance is no change."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from kplane.api import clock, get_condition, quantity

TOLERANCE = 0.1
CPU_INITIALIZATION_PERIOD = 300.0  # seconds after a pod starts in which its cpu readings may be early
INITIAL_READINESS_DELAY = 30.0  # a pod not ready this soon after starting has never been ready

Obj = dict[str, Any]


class MetricsError(Exception):
    """The metric cannot be computed; the message is Kubernetes' (it becomes the condition's and event's)."""


@dataclass(slots=True)
class PodMetric:
    """One pod's use of one resource, in thousandths (``metricsclient.PodMetric``)."""

    value: int
    timestamp: float
    window: float


@dataclass(slots=True)
class Recommendation:
    replicas: int
    utilization: int | None  # percent of requests (Utilization targets)
    raw_average: int  # thousandths per pod


def _unready_for_cpu(pod: Obj, metric: PodMetric, now: float) -> bool:
    status = pod.get("status") or {}
    ready = get_condition(status, "Ready")
    started = status.get("startTime")
    if ready is None or not started:
        return True
    start = clock.epoch(started)
    transition = clock.epoch(ready.get("lastTransitionTime"))
    if start + CPU_INITIALIZATION_PERIOD > now:
        return ready.get("status") == "False" or metric.timestamp < transition + metric.window
    return ready.get("status") == "False" and start + INITIAL_READINESS_DELAY > transition


def group_pods(pods: list[Obj], metrics: dict[str, PodMetric], resource: str, now: float) -> tuple[int, set[str], set[str], set[str]]:
    """``groupPods``: the ready count, and the names of unready, missing and ignored pods."""
    ready, unready, missing, ignored = 0, set(), set(), set()
    for pod in pods:
        name = pod["metadata"]["name"]
        phase = (pod.get("status") or {}).get("phase")
        if pod["metadata"].get("deletionTimestamp") or phase == "Failed":
            ignored.add(name)
        elif phase == "Pending":
            unready.add(name)
        elif name not in metrics:
            missing.add(name)
        elif resource == "cpu" and _unready_for_cpu(pod, metrics[name], now):
            unready.add(name)
        else:
            ready += 1
    return ready, unready, missing, ignored


def pod_requests(pods: list[Obj], resource: str, container: str = "") -> dict[str, int]:
    """``calculatePodRequests``: each pod's request of ``resource`` in thousandths (one container's
    when ``container`` is named); MetricsError for a container that requests none."""
    requests = {}
    for pod in pods:
        total = 0
        for c in (pod.get("spec") or {}).get("containers") or ():
            if container and c.get("name") != container:
                continue
            wanted = ((c.get("resources") or {}).get("requests") or {}).get(resource)
            if wanted is None:
                raise MetricsError(f"missing request for {resource} in container {c.get('name', '')} of Pod {pod['metadata']['name']}")
            total += quantity.parse(wanted).milli_value()
        requests[pod["metadata"]["name"]] = total
    return requests


def _utilization(metrics: dict[str, PodMetric], requests: dict[str, int], target: int) -> tuple[float, int, int]:
    """``GetResourceUtilizationRatio``: (ratio to the target, utilization %, raw average)."""
    used = requested = counted = 0
    for name, metric in metrics.items():
        if name in requests:
            used += metric.value
            requested += requests[name]
            counted += 1
    if requested == 0:
        raise MetricsError("no metrics returned matched known pods")
    utilization = int(used * 100 / requested)
    return utilization / target, utilization, used // counted


def _usage_ratio(metrics: dict[str, PodMetric], target: int) -> tuple[float, int]:
    """``GetMetricUsageRatio``: (ratio to the target, average per pod)."""
    average = sum(metric.value for metric in metrics.values()) // len(metrics)
    return average / target, average


def resource_replicas(current: int, pods: list[Obj], metrics: dict[str, PodMetric], resource: str, *,
                      target_utilization: int | None = None, target_average: int | None = None, container: str = "",
                      tolerance: float = TOLERANCE, now: float | None = None) -> Recommendation:
    """``GetResourceReplicas`` (a Utilization target) or ``GetRawResourceReplicas`` (AverageValue,
    thousandths per pod)."""
    if not metrics:
        raise MetricsError(f"unable to get metrics for resource {resource}: no metrics returned from resource metrics API")
    if not pods:
        raise MetricsError("no pods returned by selector while calculating replica count")
    ready, unready, missing, ignored = group_pods(pods, metrics, resource, clock.epoch(clock.now()) if now is None else now)
    metrics = {name: m for name, m in metrics.items() if name not in unready and name not in ignored}
    requests = pod_requests(pods, resource, container) if target_utilization is not None else {}
    if not metrics:
        raise MetricsError("did not receive metrics for targeted pods (pods might be unready)")

    def ratio_of(sample: dict[str, PodMetric]) -> tuple[float, int | None, int]:
        if target_utilization is not None:
            return _utilization(sample, requests, target_utilization)
        ratio, average = _usage_ratio(sample, target_average or 1)
        return ratio, None, average

    ratio, utilization, raw = ratio_of(metrics)
    scale_up_with_unready = bool(unready) and ratio > 1.0
    if not scale_up_with_unready and not missing:
        if abs(1.0 - ratio) <= tolerance:
            return Recommendation(current, utilization, raw)
        return Recommendation(math.ceil(ratio * ready), utilization, raw)
    filled = dict(metrics)
    for name in missing:  # assume the worst for the direction the metric points to
        assumed = (requests.get(name, 0) if target_utilization is not None else target_average or 0) if ratio < 1.0 else 0
        filled[name] = PodMetric(assumed, 0.0, 0.0)
    if scale_up_with_unready:
        for name in unready:
            filled[name] = PodMetric(0, 0.0, 0.0)
    new_ratio = ratio_of(filled)[0]
    if abs(1.0 - new_ratio) <= tolerance or (ratio < 1.0 < new_ratio) or (ratio > 1.0 > new_ratio):
        return Recommendation(current, utilization, raw)
    replicas = math.ceil(new_ratio * len(filled))
    if (new_ratio < 1.0 and replicas > current) or (new_ratio > 1.0 and replicas < current):
        return Recommendation(current, utilization, raw)
    return Recommendation(replicas, utilization, raw)
