"""Internal types of the policy group: PodDisruptionBudget (and Eviction, the body of ``pods/eviction``)."""

from __future__ import annotations

from dataclasses import dataclass, field

from kplane.api import Condition, LabelSelector, ObjectMeta

#: ``spec.unhealthyPodEvictionPolicy`` values.
IF_HEALTHY_BUDGET, ALWAYS_ALLOW = "IfHealthyBudget", "AlwaysAllow"
UNHEALTHY_POD_EVICTION_POLICIES = [ALWAYS_ALLOW, IF_HEALTHY_BUDGET]
#: The condition the disruption controller keeps, and its reasons.
DISRUPTION_ALLOWED = "DisruptionAllowed"
SUFFICIENT_PODS, INSUFFICIENT_PODS, SYNC_FAILED = "SufficientPods", "InsufficientPods", "SyncFailed"


@dataclass(slots=True)
class PodDisruptionBudgetSpec:
    min_available: int | str | None = None
    selector: LabelSelector | None = None
    max_unavailable: int | str | None = None
    unhealthy_pod_eviction_policy: str | None = None


@dataclass(slots=True)
class PodDisruptionBudgetStatus:
    observed_generation: int | None = None
    disrupted_pods: dict[str, str] | None = None  # pod name -> when the eviction was admitted
    disruptions_allowed: int | None = None
    current_healthy: int | None = None
    desired_healthy: int | None = None
    expected_pods: int | None = None
    conditions: list[Condition] | None = None


@dataclass(slots=True)
class PodDisruptionBudget:
    metadata: ObjectMeta = field(default_factory=ObjectMeta)
    spec: PodDisruptionBudgetSpec = field(default_factory=PodDisruptionBudgetSpec)
    status: PodDisruptionBudgetStatus = field(default_factory=PodDisruptionBudgetStatus)
