"""The autoscaling API group: HorizontalPodAutoscaler at autoscaling/v2 (stored) and autoscaling/v1
(converted, with Kubernetes' annotations), and the horizontal-pod-autoscaler controller, which
scales targets through their ``/scale`` from the metrics.k8s.io API (the metrics plugin).

Each function below is one of kplane's hooks (``core/hookspecs.py``), called once at start-up
in this order."""

from __future__ import annotations

from kplane.api import ControllerManager, PluginOptions, Registry, Scheme, ServerConfig, hookimpl, parse_duration
from kplane.plugins.autoscaling import strategy, types
from kplane.plugins.autoscaling.controllers.horizontal import HorizontalController
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
def kplane_add_options(parser: PluginOptions) -> None:
    parser.add_argument("--horizontal-pod-autoscaler-sync-period", dest="horizontal_pod_autoscaler_sync_period",
                        type=parse_duration, default=15.0, metavar="DURATION",
                        help="how often each HorizontalPodAutoscaler is synced (default 15s)")
    parser.add_argument("--horizontal-pod-autoscaler-downscale-stabilization", type=parse_duration, default=300.0,
                        dest="horizontal_pod_autoscaler_downscale_stabilization", metavar="DURATION",
                        help="how far back the highest recommendation holds a scale-down (default 5m0s)")


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


@hookimpl
def kplane_register_controllers(manager: ControllerManager, plugin_name: str, config: ServerConfig | None) -> None:
    settings = config.plugin_settings.get(plugin_name, {}) if config is not None else {}
    manager.add("horizontalpodautoscaling", HorizontalController(
        manager.client_for("horizontal-pod-autoscaler"), manager.informers,
        sync_period=settings.get("horizontal_pod_autoscaler_sync_period", 15.0),
        downscale_stabilization=settings.get("horizontal_pod_autoscaler_downscale_stabilization", 300.0)))
