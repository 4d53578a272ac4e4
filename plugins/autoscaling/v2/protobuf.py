"""Protobuf table of autoscaling/v2 HorizontalPodAutoscaler, for clients that create one in
protobuf (client-go's typed clients).

Field numbers are those of ``k8s.io/api`` ``autoscaling/v2/generated.proto`` (v0.32); see
:mod:`kplane.core.runtime.protobuf` for the format."""

from __future__ import annotations

from kplane.api import LABEL_SELECTOR, OBJECT_META, QUANTITY, TIME, Field, Message
from kplane.plugins.autoscaling.v1.protobuf import CROSS_VERSION_OBJECT_REFERENCE

METRIC_IDENTIFIER = Message("MetricIdentifier", {1: Field("name", "string"), 2: Field("selector", LABEL_SELECTOR)})
METRIC_TARGET = Message(
    "MetricTarget",
    {1: Field("type", "string"), 2: Field("value", QUANTITY), 3: Field("averageValue", QUANTITY),
     4: Field("averageUtilization", "int32", pointer=True)},
)
METRIC_VALUE_STATUS = Message(
    "MetricValueStatus",
    {1: Field("value", QUANTITY), 2: Field("averageValue", QUANTITY), 3: Field("averageUtilization", "int32", pointer=True)},
)


def _source(name: str, first: Field, second: Field, third: Field | None = None) -> Message:
    fields = {1: first, 2: second}
    if third is not None:
        fields[3] = third
    return Message(name, fields)


METRIC_SPEC = Message(
    "MetricSpec",
    {
        1: Field("type", "string"),
        2: Field("object", _source("ObjectMetricSource", Field("describedObject", CROSS_VERSION_OBJECT_REFERENCE),
                                   Field("target", METRIC_TARGET), Field("metric", METRIC_IDENTIFIER))),
        3: Field("pods", _source("PodsMetricSource", Field("metric", METRIC_IDENTIFIER), Field("target", METRIC_TARGET))),
        4: Field("resource", _source("ResourceMetricSource", Field("name", "string"), Field("target", METRIC_TARGET))),
        7: Field("containerResource", _source("ContainerResourceMetricSource", Field("name", "string"),
                                               Field("target", METRIC_TARGET), Field("container", "string"))),
        5: Field("external", _source("ExternalMetricSource", Field("metric", METRIC_IDENTIFIER), Field("target", METRIC_TARGET))),
    },
)

METRIC_STATUS = Message(
    "MetricStatus",
    {
        1: Field("type", "string"),
        2: Field("object", _source("ObjectMetricStatus", Field("metric", METRIC_IDENTIFIER), Field("current", METRIC_VALUE_STATUS),
                                   Field("describedObject", CROSS_VERSION_OBJECT_REFERENCE))),
        3: Field("pods", _source("PodsMetricStatus", Field("metric", METRIC_IDENTIFIER), Field("current", METRIC_VALUE_STATUS))),
        4: Field("resource", _source("ResourceMetricStatus", Field("name", "string"), Field("current", METRIC_VALUE_STATUS))),
        7: Field("containerResource", _source("ContainerResourceMetricStatus", Field("name", "string"),
                                               Field("current", METRIC_VALUE_STATUS), Field("container", "string"))),
        5: Field("external", _source("ExternalMetricStatus", Field("metric", METRIC_IDENTIFIER), Field("current", METRIC_VALUE_STATUS))),
    },
)

HPA_SCALING_RULES = Message(
    "HPAScalingRules",
    {
        3: Field("stabilizationWindowSeconds", "int32", pointer=True),
        1: Field("selectPolicy", "string", pointer=True),
        2: Field("policies", Message("HPAScalingPolicy", {1: Field("type", "string"), 2: Field("value", "int32"),
                                                            3: Field("periodSeconds", "int32")}), repeated=True),
    },
)

HPA_SPEC = Message(
    "HorizontalPodAutoscalerSpec",
    {
        1: Field("scaleTargetRef", CROSS_VERSION_OBJECT_REFERENCE),
        2: Field("minReplicas", "int32", pointer=True),
        3: Field("maxReplicas", "int32"),
        4: Field("metrics", METRIC_SPEC, repeated=True),
        5: Field("behavior", Message("HorizontalPodAutoscalerBehavior", {1: Field("scaleUp", HPA_SCALING_RULES),
                                                                          2: Field("scaleDown", HPA_SCALING_RULES)})),
    },
)

HPA_CONDITION = Message(
    "HorizontalPodAutoscalerCondition",
    {1: Field("type", "string"), 2: Field("status", "string"), 3: Field("lastTransitionTime", TIME),
     4: Field("reason", "string"), 5: Field("message", "string")},
)

HPA_STATUS = Message(
    "HorizontalPodAutoscalerStatus",
    {
        1: Field("observedGeneration", "int64", pointer=True),
        2: Field("lastScaleTime", TIME),
        3: Field("currentReplicas", "int32"),
        4: Field("desiredReplicas", "int32"),
        5: Field("currentMetrics", METRIC_STATUS, repeated=True),
        6: Field("conditions", HPA_CONDITION, repeated=True),
    },
)

HORIZONTAL_POD_AUTOSCALER = Message(
    "HorizontalPodAutoscaler", {1: Field("metadata", OBJECT_META), 2: Field("spec", HPA_SPEC), 3: Field("status", HPA_STATUS)}
)
