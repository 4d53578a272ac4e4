"""Wire schemas of autoscaling/v1: a HorizontalPodAutoscaler on CPU utilization alone. What v2
holds beyond it travels in annotations (``conversion.py``), whose JSON has the v1 metric shapes
below (``MetricSpecSchema``, ``MetricStatusSchema``), as Kubernetes' own v1 types declare them."""

from __future__ import annotations

from kplane.api import LabelSelectorSchema, ObjectMetaSchema, Schema, fields
from kplane.plugins.autoscaling.v2.schemas import (
    REQUIRED, CrossVersionObjectReferenceSchema, HorizontalPodAutoscalerConditionSchema,
)


class HorizontalPodAutoscalerSpecSchema(Schema):
    """What to scale, between which bounds, to which CPU utilization."""

    scale_target_ref = fields.Nested(CrossVersionObjectReferenceSchema, metadata={"description": (
        "The object to scale, through its scale subresource."
    )})
    min_replicas = fields.Int32(metadata={"description": "The fewest replicas to scale down to. Defaults to 1."})
    max_replicas = fields.Int32(metadata={**REQUIRED, "description": "The most replicas to scale up to."})
    target_cpu_utilization_percentage = fields.Int32(data_key="targetCPUUtilizationPercentage", metadata={"description": (
        "The average CPU utilization of the pods, in percent of their requests, to aim at; unset: 80."
    )})


class HorizontalPodAutoscalerStatusSchema(Schema):
    """What the autoscaler last saw and decided."""

    observed_generation = fields.Int(metadata={"description": "The metadata.generation the controller last acted on."})
    last_scale_time = fields.Time(metadata={"description": "When the controller last changed the replica count."})
    current_replicas = fields.Int32(metadata={**REQUIRED, "description": "Replicas of the target, as last seen."})
    desired_replicas = fields.Int32(metadata={**REQUIRED, "description": "Replicas the controller last asked for."})
    current_cpu_utilization_percentage = fields.Int32(data_key="currentCPUUtilizationPercentage", metadata={"description": (
        "The pods' average CPU utilization, in percent of their requests, as last read."
    )})


class HorizontalPodAutoscalerSchema(Schema):
    """Scales a workload's replicas between bounds so that its pods' CPU utilization stays near a target."""

    metadata = fields.Nested(ObjectMetaSchema, metadata={"description": "Standard object metadata."})
    spec = fields.Nested(HorizontalPodAutoscalerSpecSchema, metadata={"description": "What to scale and how."})
    status = fields.Nested(HorizontalPodAutoscalerStatusSchema, metadata={"description": "What the controller last saw."})


# -- the metric shapes of the annotations ----------------------------------------------------------
class ObjectMetricSourceSchema(Schema):
    target = fields.Nested(CrossVersionObjectReferenceSchema)
    metric_name = fields.Str(metadata=REQUIRED)
    target_value = fields.Quantity(metadata=REQUIRED)
    selector = fields.Nested(LabelSelectorSchema, metadata={"pointer": True})
    average_value = fields.Quantity()


class PodsMetricSourceSchema(Schema):
    metric_name = fields.Str(metadata=REQUIRED)
    target_average_value = fields.Quantity(metadata=REQUIRED)
    selector = fields.Nested(LabelSelectorSchema, metadata={"pointer": True})


class ResourceMetricSourceSchema(Schema):
    name = fields.Str(metadata=REQUIRED)
    target_average_utilization = fields.Int32()
    target_average_value = fields.Quantity()


class ContainerResourceMetricSourceSchema(ResourceMetricSourceSchema):
    container = fields.Str(metadata=REQUIRED)


class ExternalMetricSourceSchema(Schema):
    metric_name = fields.Str(metadata=REQUIRED)
    metric_selector = fields.Nested(LabelSelectorSchema, metadata={"pointer": True})
    target_value = fields.Quantity()
    target_average_value = fields.Quantity()


class MetricSpecSchema(Schema):
    type = fields.Str(metadata=REQUIRED)
    object = fields.Nested(ObjectMetricSourceSchema, metadata={"pointer": True})
    pods = fields.Nested(PodsMetricSourceSchema, metadata={"pointer": True})
    resource = fields.Nested(ResourceMetricSourceSchema, metadata={"pointer": True})
    container_resource = fields.Nested(ContainerResourceMetricSourceSchema, metadata={"pointer": True})
    external = fields.Nested(ExternalMetricSourceSchema, metadata={"pointer": True})


class ObjectMetricStatusSchema(Schema):
    target = fields.Nested(CrossVersionObjectReferenceSchema)
    metric_name = fields.Str(metadata=REQUIRED)
    current_value = fields.Quantity(metadata=REQUIRED)
    selector = fields.Nested(LabelSelectorSchema, metadata={"pointer": True})
    average_value = fields.Quantity()


class PodsMetricStatusSchema(Schema):
    metric_name = fields.Str(metadata=REQUIRED)
    current_average_value = fields.Quantity(metadata=REQUIRED)
    selector = fields.Nested(LabelSelectorSchema, metadata={"pointer": True})


class ResourceMetricStatusSchema(Schema):
    name = fields.Str(metadata=REQUIRED)
    current_average_utilization = fields.Int32()
    current_average_value = fields.Quantity(metadata=REQUIRED)


class ContainerResourceMetricStatusSchema(ResourceMetricStatusSchema):
    container = fields.Str(metadata=REQUIRED)


class ExternalMetricStatusSchema(Schema):
    metric_name = fields.Str(metadata=REQUIRED)
    metric_selector = fields.Nested(LabelSelectorSchema, metadata={"pointer": True})
    current_value = fields.Quantity(metadata=REQUIRED)
    current_average_value = fields.Quantity()


class MetricStatusSchema(Schema):
    type = fields.Str(metadata=REQUIRED)
    object = fields.Nested(ObjectMetricStatusSchema, metadata={"pointer": True})
    pods = fields.Nested(PodsMetricStatusSchema, metadata={"pointer": True})
    resource = fields.Nested(ResourceMetricStatusSchema, metadata={"pointer": True})
    container_resource = fields.Nested(ContainerResourceMetricStatusSchema, metadata={"pointer": True})
    external = fields.Nested(ExternalMetricStatusSchema, metadata={"pointer": True})


ConditionSchema = HorizontalPodAutoscalerConditionSchema
