"""The autoscaler's arithmetic (Kubernetes' replica calculator and normalization), on the pods
and readings the controller hands it; tests/test_autoscaling.py runs it against a server."""

from __future__ import annotations

from typing import Any

import pytest

from kplane.api import clock

from kplane.plugins.autoscaling.controllers import normalize
from kplane.plugins.autoscaling.controllers.normalize import History
from kplane.plugins.autoscaling.controllers.replicas import MetricsError, PodMetric, resource_replicas

LONG_AGO = "2020-01-01T00:00:00Z"
NOW = clock.epoch("2024-01-01T00:00:00Z")  # pods started and became ready long before


def pod(name: str, cpu: str | None = "100m", phase: str = "Running", ready: str = "True") -> dict[str, Any]:
    resources = {"requests": {"cpu": cpu}} if cpu else {}
    return {"metadata": {"name": name}, "spec": {"containers": [{"name": "app", "resources": resources}]},
            "status": {"phase": phase, "startTime": LONG_AGO,
                       "conditions": [{"type": "Ready", "status": ready, "lastTransitionTime": LONG_AGO}]}}


def used(**milli: int) -> dict[str, PodMetric]:
    return {name: PodMetric(value, NOW, 1.0) for name, value in milli.items()}


def test_utilization_scales_by_its_ratio_to_the_target() -> None:
    found = resource_replicas(2, [pod("a"), pod("b")], used(a=100, b=100), "cpu", target_utilization=50, now=NOW)
    assert (found.replicas, found.utilization, found.raw_average) == (4, 100, 100)


def test_within_the_tolerance_nothing_changes() -> None:
    found = resource_replicas(2, [pod("a"), pod("b")], used(a=54, b=54), "cpu", target_utilization=50, now=NOW)
    assert (found.replicas, found.utilization) == (2, 54)


def test_missing_pods_hold_a_scale_down_back() -> None:
    """A pod without a reading counts as using its request when the others would scale down."""
    pods = [pod("a"), pod("b"), pod("c"), pod("d")]
    assert resource_replicas(4, pods, used(a=10, b=10), "cpu", target_utilization=80, now=NOW).replicas == 3
    assert resource_replicas(4, pods[:2], used(a=10, b=10), "cpu", target_utilization=80, now=NOW).replicas == 1
    # at 55% with the missing pods' requests counted, 50% would mean scaling up: no change at all
    assert resource_replicas(4, pods, used(a=10, b=10), "cpu", target_utilization=50, now=NOW).replicas == 4


def test_unready_pods_count_as_idle_when_scaling_up() -> None:
    pods = [pod("a"), pod("b", ready="False"), pod("c", phase="Pending")]
    found = resource_replicas(3, pods, used(a=300, b=300), "cpu", target_utilization=100, now=NOW)
    assert found.replicas == 3  # 300% of one pod over three is 100%: the target


def test_average_value_targets() -> None:
    found = resource_replicas(2, [pod("a", cpu=None), pod("b", cpu=None)], used(a=300_000, b=100_000), "memory",
                              target_average=100_000, now=NOW)
    assert (found.replicas, found.utilization, found.raw_average) == (4, None, 200_000)


@pytest.mark.parametrize(("pods", "metrics", "message"), [
    ([pod("a", cpu=None)], used(a=1), "missing request for cpu in container app of Pod a"),
    ([pod("a")], {}, "unable to get metrics for resource cpu: no metrics returned from resource metrics API"),
    ([], used(a=1), "no pods returned by selector while calculating replica count"),
    ([pod("a", phase="Pending")], used(a=1), "did not receive metrics for targeted pods (pods might be unready)"),
])
def test_what_cannot_be_computed(pods: list[dict[str, Any]], metrics: dict[str, PodMetric], message: str) -> None:
    with pytest.raises(MetricsError, match=message.replace("(", r"\(").replace(")", r"\)")):
        resource_replicas(1, pods, metrics, "cpu", target_utilization=50, now=NOW)


def test_without_behavior_scale_down_waits_for_the_window_and_scale_up_is_limited() -> None:
    history = History()
    first = normalize.without_behavior(history, 5, 5, 1, 20, NOW)
    assert (first.replicas, first.able_reason, first.limited) == (5, "ReadyForNewScale", False)
    held = normalize.without_behavior(history, 5, 2, 1, 20, NOW + 60)
    assert (held.replicas, held.able_reason) == (5, "ScaleDownStabilized")
    assert normalize.without_behavior(history, 5, 2, 1, 20, NOW + 400).replicas == 2
    burst = normalize.without_behavior(History(), 3, 15, 1, 20, NOW)
    assert (burst.replicas, burst.limited, burst.limited_reason) == (6, True, "ScaleUpLimit")
    capped = normalize.without_behavior(History(), 3, 15, 1, 5, NOW)
    assert (capped.replicas, capped.limited_reason) == (5, "TooManyReplicas")


def test_behavior_policies_bound_each_period() -> None:
    up = {"stabilizationWindowSeconds": 0, "selectPolicy": "Max", "policies": [{"type": "Pods", "value": 1, "periodSeconds": 60}]}
    down = {"stabilizationWindowSeconds": 0, "selectPolicy": "Disabled", "policies": [{"type": "Percent", "value": 100, "periodSeconds": 15}]}
    history = History()
    step = normalize.with_behavior(history, 2, 6, 1, 10, up, down, NOW)
    assert (step.replicas, step.limited_reason) == (3, "ScaleUpLimit")
    normalize.record_scale(history, 2, 3, up, down, NOW)
    again = normalize.with_behavior(history, 3, 6, 1, 10, up, down, NOW + 10)
    assert again.replicas == 3  # one pod per minute, already added
    assert normalize.with_behavior(history, 3, 6, 1, 10, up, down, NOW + 61).replicas == 4
    disabled = normalize.with_behavior(History(), 4, 1, 1, 10, up, down, NOW)
    assert (disabled.replicas, disabled.limited_reason) == (4, "ScaleDownLimit")
