"""The autoscaling API group: HorizontalPodAutoscaler at autoscaling/v2 (stored) and autoscaling/v1
(converted, with Kubernetes' annotations), and the horizontal-pod-autoscaler controller, which
scales targets through their ``/scale`` from the metrics.k8s.io API (the metrics plugin).

Each function below is one of kplane's hooks (``core/hookspecs.py``), called once at start-up
in this order."""

from __future__ import annotations

from kplane.api import Registry, Scheme, hookimpl
from kplane.plugins.autoscaling import strategy, types
from kplane.plugins.autoscaling.v1 import conversion as v1_conversion
from kplane.plugins.autoscaling.v1 import defaults as v1_defaults
from kplane.plugins.autoscaling.v1 import protobuf as v1_protobuf
from kplane.plugins.autoscaling.v1 import schemas as v1_schemas
from kplane.plugins.autoscaling.v2 import defaults as v2_defaults
from kplane.plugins.autoscaling.v2 import protobuf as v2_protobuf
from kplane.plugins.autoscaling.v2 import schemas as v2_schemas

GROUP = "autoscaling"
KIND = "HorizontalPodAutoscaler"


@hookimpl
def kplane_register_types(scheme: Scheme, plugin_name: str) -> None:
    scheme.add_kind(group=GROUP, kind=KIND, plural="horizontalpodautoscalers", internal=types.HorizontalPodAutoscaler,
                    versions={"v2": v2_schemas.HorizontalPodAutoscalerSchema, "v1": v1_schemas.HorizontalPodAutoscalerSchema},
                    storage_version="v2", short_names=["hpa"], categories=["all"], plugin=plugin_name)
    scheme.set_version_priority(GROUP, ["v2", "v1"])


@hookimpl
def kplane_register_conversions(scheme: Scheme) -> None:
    scheme.add_defaulter(GROUP, "v2", KIND, v2_defaults.default_hpa)
    scheme.add_defaulter(GROUP, "v1", KIND, v1_defaults.default_hpa)
    scheme.add_conversion(GROUP, "v1", KIND, to_internal=v1_conversion.to_internal, from_internal=v1_conversion.from_internal)
    scheme.add_protobuf(GROUP, "v1", KIND, v1_protobuf.HORIZONTAL_POD_AUTOSCALER)  # `kubectl autoscale`
    scheme.add_protobuf(GROUP, "v2", KIND, v2_protobuf.HORIZONTAL_POD_AUTOSCALER)


@hookimpl
def kplane_register_strategies(registry: Registry) -> None:
    registry.add_strategy(GROUP, "horizontalpodautoscalers", strategy.HorizontalPodAutoscalerStrategy())
    registry.add_strategy(GROUP, "horizontalpodautoscalers", strategy.HorizontalPodAutoscalerStatusStrategy(), subresource="status")
