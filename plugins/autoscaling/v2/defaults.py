"""autoscaling/v2 defaulting (``pkg/apis/autoscaling/v2/defaults.go``): one replica at least, 80%
average CPU utilization when no metric is named, and a behaviour given in part completed with
Kubernetes' scaling rules."""

from __future__ import annotations

from typing import Any

DEFAULT_CPU_UTILIZATION = 80

#: ``GenerateHPAScaleUpRules``: the larger of 4 pods or doubling per 15 s, no stabilization.
SCALE_UP = {"stabilization_window_seconds": 0, "select_policy": "Max",
            "policies": [{"type": "Pods", "value": 4, "period_seconds": 15},
                         {"type": "Percent", "value": 100, "period_seconds": 15}]}
#: ``GenerateHPAScaleDownRules``: anything down to the highest recommendation of 5 minutes.
SCALE_DOWN = {"stabilization_window_seconds": 300, "select_policy": "Max",
              "policies": [{"type": "Percent", "value": 100, "period_seconds": 15}]}


def cpu_utilization(percent: int) -> dict[str, Any]:
    """A Resource metric of average CPU utilization (the default, and autoscaling/v1's one metric)."""
    return {"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization", "average_utilization": percent}}}


def scaling_rules(rules: dict[str, Any] | None, defaults: dict[str, Any]) -> dict[str, Any]:
    """``rules`` with each unset field taken from ``defaults``."""
    out = dict(rules or {})
    for key, value in defaults.items():
        if out.get(key) is None:
            out[key] = [dict(policy) for policy in value] if key == "policies" else value
    return out


def default_behavior(spec: dict[str, Any]) -> None:
    """``SetDefaults_HorizontalPodAutoscalerBehavior``: only a behaviour that is set is completed."""
    behavior = spec.get("behavior")
    if behavior is not None:
        behavior["scale_up"] = scaling_rules(behavior.get("scale_up"), SCALE_UP)
        behavior["scale_down"] = scaling_rules(behavior.get("scale_down"), SCALE_DOWN)


def default_hpa(hpa: dict[str, Any]) -> None:
    spec = hpa.get("spec")
    if spec is None:
        spec = hpa["spec"] = {}
    if spec.get("min_replicas") is None:
        spec["min_replicas"] = 1
    if not spec.get("metrics"):
        spec["metrics"] = [cpu_utilization(DEFAULT_CPU_UTILIZATION)]
    default_behavior(spec)
