"""Protobuf table of autoscaling/v1 HorizontalPodAutoscaler: ``kubectl autoscale`` sends one.

Field numbers are those of ``k8s.io/api`` ``autoscaling/v1/generated.proto`` (v0.32); see
:mod:`kplane.core.runtime.protobuf` for the format."""

from __future__ import annotations

from kplane.api import OBJECT_META, TIME, Field, Message

CROSS_VERSION_OBJECT_REFERENCE = Message(
    "CrossVersionObjectReference",
    {1: Field("kind", "string"), 2: Field("name", "string"), 3: Field("apiVersion", "string")},
)

HPA_SPEC = Message(
    "HorizontalPodAutoscalerSpec",
    {
        1: Field("scaleTargetRef", CROSS_VERSION_OBJECT_REFERENCE),
        2: Field("minReplicas", "int32", pointer=True),
        3: Field("maxReplicas", "int32"),
        4: Field("targetCPUUtilizationPercentage", "int32", pointer=True),
    },
)

HPA_STATUS = Message(
    "HorizontalPodAutoscalerStatus",
    {
        1: Field("observedGeneration", "int64", pointer=True),
        2: Field("lastScaleTime", TIME),
        3: Field("currentReplicas", "int32"),
        4: Field("desiredReplicas", "int32"),
        5: Field("currentCPUUtilizationPercentage", "int32", pointer=True),
    },
)

HORIZONTAL_POD_AUTOSCALER = Message(
    "HorizontalPodAutoscaler", {1: Field("metadata", OBJECT_META), 2: Field("spec", HPA_SPEC), 3: Field("status", HPA_STATUS)}
)
