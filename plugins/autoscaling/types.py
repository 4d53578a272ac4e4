"""Internal types of the autoscaling group: HorizontalPodAutoscaler, on autoscaling/v2's shape
(``pkg/apis/autoscaling/types.go``); autoscaling/v1 converts to it (``v1/conversion.py``)."""

from __future__ import annotations

from dataclasses import dataclass, field

from kplane.api import LabelSelector, ObjectMeta


@dataclass(slots=True)
class CrossVersionObjectReference:
    kind: str = ""
    name: str = ""
    api_version: str | None = None


@dataclass(slots=True)
class MetricIdentifier:
    name: str = ""
    selector: LabelSelector | None = None


@dataclass(slots=True)
class MetricTarget:
    type: str = ""  # Utilization, Value or AverageValue
    value: str | int | float | None = None  # Quantity
    average_value: str | int | float | None = None  # Quantity
    average_utilization: int | None = None


@dataclass(slots=True)
class ObjectMetricSource:
    described_object: CrossVersionObjectReference = field(default_factory=CrossVersionObjectReference)
    target: MetricTarget = field(default_factory=MetricTarget)
    metric: MetricIdentifier = field(default_factory=MetricIdentifier)


@dataclass(slots=True)
class PodsMetricSource:
    metric: MetricIdentifier = field(default_factory=MetricIdentifier)
    target: MetricTarget = field(default_factory=MetricTarget)


@dataclass(slots=True)
class ResourceMetricSource:
    name: str = ""
    target: MetricTarget = field(default_factory=MetricTarget)


@dataclass(slots=True)
class ContainerResourceMetricSource:
    name: str = ""
    target: MetricTarget = field(default_factory=MetricTarget)
    container: str = ""


@dataclass(slots=True)
class ExternalMetricSource:
    metric: MetricIdentifier = field(default_factory=MetricIdentifier)
    target: MetricTarget = field(default_factory=MetricTarget)


@dataclass(slots=True)
class MetricSpec:
    type: str = ""  # Object, Pods, Resource, ContainerResource or External
    object: ObjectMetricSource | None = None
    pods: PodsMetricSource | None = None
    resource: ResourceMetricSource | None = None
    container_resource: ContainerResourceMetricSource | None = None
    external: ExternalMetricSource | None = None


@dataclass(slots=True)
class HPAScalingPolicy:
    type: str = ""  # Pods or Percent
    value: int = 0
    period_seconds: int = 0


@dataclass(slots=True)
class HPAScalingRules:
    stabilization_window_seconds: int | None = None
    select_policy: str | None = None  # Max, Min or Disabled
    policies: list[HPAScalingPolicy] | None = None


@dataclass(slots=True)
class HorizontalPodAutoscalerBehavior:
    scale_up: HPAScalingRules | None = None
    scale_down: HPAScalingRules | None = None


@dataclass(slots=True)
class HorizontalPodAutoscalerSpec:
    scale_target_ref: CrossVersionObjectReference = field(default_factory=CrossVersionObjectReference)
    min_replicas: int | None = None
    max_replicas: int = 0
    metrics: list[MetricSpec] | None = None
    behavior: HorizontalPodAutoscalerBehavior | None = None


@dataclass(slots=True)
class MetricValueStatus:
    value: str | int | float | None = None
    average_value: str | int | float | None = None
    average_utilization: int | None = None


@dataclass(slots=True)
class ObjectMetricStatus:
    metric: MetricIdentifier = field(default_factory=MetricIdentifier)
    current: MetricValueStatus = field(default_factory=MetricValueStatus)
    described_object: CrossVersionObjectReference = field(default_factory=CrossVersionObjectReference)


@dataclass(slots=True)
class PodsMetricStatus:
    metric: MetricIdentifier = field(default_factory=MetricIdentifier)
    current: MetricValueStatus = field(default_factory=MetricValueStatus)


@dataclass(slots=True)
class ResourceMetricStatus:
    name: str = ""
    current: MetricValueStatus = field(default_factory=MetricValueStatus)


@dataclass(slots=True)
class ContainerResourceMetricStatus:
    name: str = ""
    current: MetricValueStatus = field(default_factory=MetricValueStatus)
    container: str = ""


@dataclass(slots=True)
class ExternalMetricStatus:
    metric: MetricIdentifier = field(default_factory=MetricIdentifier)
    current: MetricValueStatus = field(default_factory=MetricValueStatus)


@dataclass(slots=True)
class MetricStatus:
    type: str = ""
    object: ObjectMetricStatus | None = None
    pods: PodsMetricStatus | None = None
    resource: ResourceMetricStatus | None = None
    container_resource: ContainerResourceMetricStatus | None = None
    external: ExternalMetricStatus | None = None


@dataclass(slots=True)
class HorizontalPodAutoscalerCondition:
    type: str = ""  # ScalingActive, AbleToScale or ScalingLimited
    status: str = ""
    last_transition_time: str | None = None
    reason: str | None = None
    message: str | None = None


@dataclass(slots=True)
class HorizontalPodAutoscalerStatus:
    observed_generation: int | None = None
    last_scale_time: str | None = None
    current_replicas: int | None = None
    desired_replicas: int = 0
    current_metrics: list[MetricStatus] | None = None
    conditions: list[HorizontalPodAutoscalerCondition] | None = None


@dataclass(slots=True)
class HorizontalPodAutoscaler:
    metadata: ObjectMeta = field(default_factory=ObjectMeta)
    spec: HorizontalPodAutoscalerSpec = field(default_factory=HorizontalPodAutoscalerSpec)
    status: HorizontalPodAutoscalerStatus = field(default_factory=HorizontalPodAutoscalerStatus)
