"""Wire schemas of autoscaling/v2: the HorizontalPodAutoscaler with every metric source and
scaling behaviour, the shape kplane stores (autoscaling/v1 converts to it)."""

from __future__ import annotations

from kplane.api import LabelSelectorSchema, ObjectMetaSchema, Schema, fields

REQUIRED = {"omitempty": False}


class CrossVersionObjectReferenceSchema(Schema):
    """The object a HorizontalPodAutoscaler scales, or a metric describes."""

    kind = fields.Str(metadata={**REQUIRED, "description": "Kind of the referent, e.g. Deployment."})
    name = fields.Str(metadata={**REQUIRED, "description": "Name of the referent, in the autoscaler's namespace."})
    api_version = fields.Str(metadata={"description": "API version of the referent, e.g. apps/v1."})


class MetricIdentifierSchema(Schema):
    """A metric by name, narrowed by a label selector."""

    name = fields.Str(metadata={**REQUIRED, "description": "The metric's name."})
    selector = fields.Nested(LabelSelectorSchema, metadata={"pointer": True, "description": (
        "Labels of the metric's series to take (the metrics server's own labels); unset: every series."
    )})


class MetricTargetSchema(Schema):
    """The value of a metric the autoscaler aims at."""

    type = fields.Str(metadata={**REQUIRED, "description": "Utilization, Value or AverageValue."})
    value = fields.Quantity(metadata={"description": "The metric's value to aim at (type Value)."})
    average_value = fields.Quantity(metadata={"description": (
        "The metric's value per pod to aim at (type AverageValue)."
    )})
    average_utilization = fields.Int32(metadata={"description": (
        "The share of the pods' requests, in percent, to aim at (type Utilization; Resource and "
        "ContainerResource metrics only)."
    )})


class ObjectMetricSourceSchema(Schema):
    """A metric describing one Kubernetes object (hits-per-second of an Ingress)."""

    described_object = fields.Nested(CrossVersionObjectReferenceSchema, metadata={"description": "The object described."})
    target = fields.Nested(MetricTargetSchema, metadata={"description": "The value to aim at."})
    metric = fields.Nested(MetricIdentifierSchema, metadata={"description": "The metric."})


class PodsMetricSourceSchema(Schema):
    """A metric of each pod scaled, averaged over them (transactions-per-second)."""

    metric = fields.Nested(MetricIdentifierSchema, metadata={"description": "The metric."})
    target = fields.Nested(MetricTargetSchema, metadata={"description": "The value to aim at (AverageValue only)."})


class ResourceMetricSourceSchema(Schema):
    """A resource (cpu, memory) of the pods scaled, as the metrics API reports it."""

    name = fields.Str(metadata={**REQUIRED, "description": "The resource: cpu or memory."})
    target = fields.Nested(MetricTargetSchema, metadata={"description": "The value to aim at."})


class ContainerResourceMetricSourceSchema(Schema):
    """A resource of one container of each pod scaled."""

    name = fields.Str(metadata={**REQUIRED, "description": "The resource: cpu or memory."})
    target = fields.Nested(MetricTargetSchema, metadata={"description": "The value to aim at."})
    container = fields.Str(metadata={**REQUIRED, "description": "The container's name in the pods scaled."})


class ExternalMetricSourceSchema(Schema):
    """A metric of nothing in the cluster (a queue's length in a cloud service)."""

    metric = fields.Nested(MetricIdentifierSchema, metadata={"description": "The metric."})
    target = fields.Nested(MetricTargetSchema, metadata={"description": "The value to aim at."})


class MetricSpecSchema(Schema):
    """One metric to scale on; exactly the field its type names is set."""

    type = fields.Str(metadata={**REQUIRED, "description": (
        "The metric source: ContainerResource, External, Object, Pods or Resource."
    )})
    object = fields.Nested(ObjectMetricSourceSchema, metadata={"pointer": True, "description": "An object's metric."})
    pods = fields.Nested(PodsMetricSourceSchema, metadata={"pointer": True, "description": "A metric of each pod."})
    resource = fields.Nested(ResourceMetricSourceSchema, metadata={"pointer": True, "description": (
        "A resource of the pods (requests and usage summed over their containers)."
    )})
    container_resource = fields.Nested(ContainerResourceMetricSourceSchema, metadata={"pointer": True, "description": (
        "A resource of one container of each pod."
    )})
    external = fields.Nested(ExternalMetricSourceSchema, metadata={"pointer": True, "description": "A metric from outside the cluster."})


class HPAScalingPolicySchema(Schema):
    """At most this much change within one period."""

    type = fields.Str(metadata={**REQUIRED, "description": "Pods (a number of pods) or Percent (of the current replicas)."})
    value = fields.Int32(metadata={**REQUIRED, "description": "How many pods, or what percent; greater than 0."})
    period_seconds = fields.Int32(metadata={**REQUIRED, "description": (
        "The window the policy holds over, in seconds: more than 0, at most 1800."
    )})


class HPAScalingRulesSchema(Schema):
    """How fast the autoscaler scales in one direction."""

    stabilization_window_seconds = fields.Int32(metadata={"description": (
        "Past recommendations to consider, in seconds, so a short swing does not scale (0 to 3600). "
        "Defaults to 0 for scaling up and 300 for scaling down."
    )})
    select_policy = fields.Str(metadata={"description": (
        "Which policy applies when several do: Max (the default, the largest change), Min, or Disabled "
        "(no scaling in this direction)."
    )})
    policies = fields.List(fields.Nested(HPAScalingPolicySchema), metadata={"list_type": "atomic", "description": (
        "The policies; at least one unless selectPolicy is Disabled."
    )})


class HorizontalPodAutoscalerBehaviorSchema(Schema):
    """How fast to scale up and down."""

    scale_up = fields.Nested(HPAScalingRulesSchema, metadata={"pointer": True, "description": (
        "Scaling up; by default the larger of 4 pods or 100% per 15 seconds, with no stabilization."
    )})
    scale_down = fields.Nested(HPAScalingRulesSchema, metadata={"pointer": True, "description": (
        "Scaling down; by default down to the highest recommendation of the last 300 seconds, 100% per 15 seconds."
    )})


class HorizontalPodAutoscalerSpecSchema(Schema):
    """What to scale, between which bounds, on which metrics."""

    scale_target_ref = fields.Nested(CrossVersionObjectReferenceSchema, metadata={"description": (
        "The object to scale, through its scale subresource (a Deployment, a ReplicaSet, a StatefulSet, ...)."
    )})
    min_replicas = fields.Int32(metadata={"description": "The fewest replicas to scale down to. Defaults to 1."})
    max_replicas = fields.Int32(metadata={**REQUIRED, "description": (
        "The most replicas to scale up to; not below minReplicas."
    )})
    metrics = fields.List(fields.Nested(MetricSpecSchema), metadata={"list_type": "atomic", "description": (
        "The metrics to scale on: the largest replica count any of them asks for wins. Defaults to 80% "
        "average CPU utilization."
    )})
    behavior = fields.Nested(HorizontalPodAutoscalerBehaviorSchema, metadata={"pointer": True, "description": (
        "How fast to scale up and down; unset: Kubernetes' defaults for both."
    )})


class MetricValueStatusSchema(Schema):
    """A metric's current value."""

    value = fields.Quantity(metadata={"description": "The value."})
    average_value = fields.Quantity(metadata={"description": "The value per pod."})
    average_utilization = fields.Int32(metadata={"description": "The share of the pods' requests, in percent."})


class ObjectMetricStatusSchema(Schema):
    """An object metric's current value."""

    metric = fields.Nested(MetricIdentifierSchema, metadata={"description": "The metric."})
    current = fields.Nested(MetricValueStatusSchema, metadata={"description": "Its value."})
    described_object = fields.Nested(CrossVersionObjectReferenceSchema, metadata={"description": "The object described."})


class PodsMetricStatusSchema(Schema):
    """A pods metric's current average."""

    metric = fields.Nested(MetricIdentifierSchema, metadata={"description": "The metric."})
    current = fields.Nested(MetricValueStatusSchema, metadata={"description": "Its value."})


class ResourceMetricStatusSchema(Schema):
    """A resource's current use by the pods scaled."""

    name = fields.Str(metadata={**REQUIRED, "description": "The resource."})
    current = fields.Nested(MetricValueStatusSchema, metadata={"description": "Its value."})


class ContainerResourceMetricStatusSchema(Schema):
    """A resource's current use by one container of the pods scaled."""

    name = fields.Str(metadata={**REQUIRED, "description": "The resource."})
    current = fields.Nested(MetricValueStatusSchema, metadata={"description": "Its value."})
    container = fields.Str(metadata={**REQUIRED, "description": "The container."})


class ExternalMetricStatusSchema(Schema):
    """An external metric's current value."""

    metric = fields.Nested(MetricIdentifierSchema, metadata={"description": "The metric."})
    current = fields.Nested(MetricValueStatusSchema, metadata={"description": "Its value."})


class MetricStatusSchema(Schema):
    """The last reading of one metric of the spec."""

    type = fields.Str(metadata={**REQUIRED, "description": "The metric source, as in the spec."})
    object = fields.Nested(ObjectMetricStatusSchema, metadata={"pointer": True, "description": "An object's metric."})
    pods = fields.Nested(PodsMetricStatusSchema, metadata={"pointer": True, "description": "A metric of each pod."})
    resource = fields.Nested(ResourceMetricStatusSchema, metadata={"pointer": True, "description": "A resource of the pods."})
    container_resource = fields.Nested(ContainerResourceMetricStatusSchema, metadata={"pointer": True, "description": (
        "A resource of one container of each pod."
    )})
    external = fields.Nested(ExternalMetricStatusSchema, metadata={"pointer": True, "description": "A metric from outside the cluster."})


class HorizontalPodAutoscalerConditionSchema(Schema):
    """One aspect of the autoscaler's state: AbleToScale, ScalingActive or ScalingLimited."""

    type = fields.Str(metadata={**REQUIRED, "description": "AbleToScale, ScalingActive or ScalingLimited."})
    status = fields.Str(metadata={**REQUIRED, "description": "True, False or Unknown."})
    last_transition_time = fields.Time(metadata={"description": "When status last changed."})
    reason = fields.Str(metadata={"description": "Machine-readable, CamelCase reason for the last transition."})
    message = fields.Str(metadata={"description": "Human-readable details of the last transition."})


class HorizontalPodAutoscalerStatusSchema(Schema):
    """What the autoscaler last saw and decided, written by the horizontal-pod-autoscaler controller."""

    observed_generation = fields.Int(metadata={"description": "The metadata.generation the controller last acted on."})
    last_scale_time = fields.Time(metadata={"description": "When the controller last changed the replica count."})
    current_replicas = fields.Int32(metadata={"description": "Replicas of the target, as last seen."})
    desired_replicas = fields.Int32(metadata={**REQUIRED, "description": "Replicas the controller last asked for."})
    current_metrics = fields.List(fields.Nested(MetricStatusSchema), metadata={"list_type": "atomic", "description": (
        "The last reading of each metric."
    )})
    conditions = fields.List(fields.Nested(HorizontalPodAutoscalerConditionSchema), metadata=fields.merge_by("type", description=(
        "The conditions: AbleToScale, ScalingActive and ScalingLimited."
    )))


class HorizontalPodAutoscalerSchema(Schema):
    """Scales a workload's replicas between bounds so that its pods' metrics stay near their targets."""

    metadata = fields.Nested(ObjectMetaSchema, metadata={"description": "Standard object metadata."})
    spec = fields.Nested(HorizontalPodAutoscalerSpecSchema, metadata={"description": "What to scale and how."})
    status = fields.Nested(HorizontalPodAutoscalerStatusSchema, metadata={"description": "What the controller last saw."})
