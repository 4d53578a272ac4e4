"""HorizontalPodAutoscaler validation (``pkg/apis/autoscaling/validation/validation.go``), with
Kubernetes' field paths and messages. minReplicas 0 needs the HPAScaleToZero feature gate,
which is off, so the least is 1."""

from __future__ import annotations

from kplane.api import (
    quantity,
    FieldError, forbidden, invalid, is_dns1123_label, is_path_segment_name, not_supported, required,
    validate_label_selector,
)
from kplane.plugins.autoscaling.types import (
    CrossVersionObjectReference, HorizontalPodAutoscaler, HorizontalPodAutoscalerBehavior,
    HorizontalPodAutoscalerStatus, HPAScalingRules, MetricIdentifier, MetricSpec, MetricTarget,
)

METRIC_SOURCE_TYPES = ["ContainerResource", "External", "Object", "Pods", "Resource"]
METRIC_TARGET_TYPES = ["AverageValue", "Utilization", "Value"]
SELECT_POLICIES = ["Disabled", "Max", "Min"]
POLICY_TYPES = ["Percent", "Pods"]
MAX_PERIOD_SECONDS = 1800
MAX_STABILIZATION_WINDOW_SECONDS = 3600
#: The field of each metric source type (``MetricSpec``'s JSON names).
SOURCE_FIELDS = {"Object": "object", "Pods": "pods", "Resource": "resource", "ContainerResource": "containerResource",
                 "External": "external"}


def validate_cross_version_object_reference(ref: CrossVersionObjectReference, path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    for attr in ("kind", "name"):
        value = getattr(ref, attr)
        if not value:
            errs.append(required(f"{path}.{attr}"))
        else:
            errs += [invalid(f"{path}.{attr}", value, message) for message in is_path_segment_name(value)]
    return errs


def _positive_quantity(value: str | int | float | None, path: str) -> list[FieldError]:
    if value is None:
        return []
    try:
        positive = quantity.parse(value).value > 0
    except ValueError:
        positive = False
    return [] if positive else [invalid(path, value, "must be positive")]


def validate_metric_target(target: MetricTarget, path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    if not target.type:
        errs.append(required(f"{path}.type", "must specify a metric target type"))
    elif target.type not in METRIC_TARGET_TYPES:
        errs.append(not_supported(f"{path}.type", target.type, METRIC_TARGET_TYPES))
    if target.average_utilization is not None and target.average_utilization < 1:
        errs.append(invalid(f"{path}.averageUtilization", target.average_utilization, "must be greater than 0"))
    errs += _positive_quantity(target.value, f"{path}.value")
    errs += _positive_quantity(target.average_value, f"{path}.averageValue")
    return errs


def validate_metric_identifier(metric: MetricIdentifier, path: str) -> list[FieldError]:
    if not metric.name:
        return [required(f"{path}.name", "must specify a metric name")]
    errs = [invalid(f"{path}.name", metric.name, message) for message in is_path_segment_name(metric.name)]
    return errs + validate_label_selector(metric.selector, f"{path}.selector")


def _resource_target(target: MetricTarget, path: str) -> list[FieldError]:
    errs = validate_metric_target(target, f"{path}.target")
    if target.average_utilization is None and target.average_value is None:
        errs.append(required(f"{path}.target.averageUtilization", "must set either a target raw value or a target utilization"))
    if target.average_utilization is not None and target.average_value is not None:
        errs.append(forbidden(f"{path}.target.averageValue", "may not set both a target raw value and a target utilization"))
    return errs


def _source_errors(spec: MetricSpec, path: str) -> list[FieldError]:
    """The checks of the one source the type names (``validate<Type>Source``)."""
    if spec.type == "Resource" and spec.resource is not None:
        src = spec.resource
        path += ".resource"
        return ([required(f"{path}.name", "must specify a resource name")] if not src.name else []) + _resource_target(src.target, path)
    if spec.type == "ContainerResource" and spec.container_resource is not None:
        c = spec.container_resource
        path += ".containerResource"
        errs = [required(f"{path}.name", "must specify a resource name")] if not c.name else []
        if not c.container:
            errs.append(required(f"{path}.container", "must specify a container"))
        else:
            errs += [invalid(f"{path}.container", c.container, message) for message in is_dns1123_label(c.container)]
        return errs + _resource_target(c.target, path)
    if spec.type == "Pods" and spec.pods is not None:
        path += ".pods"
        errs = validate_metric_identifier(spec.pods.metric, f"{path}.metric") + validate_metric_target(spec.pods.target, f"{path}.target")
        if spec.pods.target.average_value is None:
            errs.append(required(f"{path}.target.averageValue", "must specify a positive target averageValue"))
        return errs
    if spec.type == "Object" and spec.object is not None:
        o = spec.object
        path += ".object"
        errs = (validate_cross_version_object_reference(o.described_object, f"{path}.describedObject")
                + validate_metric_identifier(o.metric, f"{path}.metric") + validate_metric_target(o.target, f"{path}.target"))
        if o.target.value is None and o.target.average_value is None:
            errs.append(required(f"{path}.target.averageValue", "must set either a target value or averageValue"))
        return errs
    if spec.type == "External" and spec.external is not None:
        e = spec.external
        path += ".external"
        errs = validate_metric_identifier(e.metric, f"{path}.metric") + validate_metric_target(e.target, f"{path}.target")
        if e.target.value is None and e.target.average_value is None:
            errs.append(required(f"{path}.target.averageValue", "must set either a target value for metric or a per-pod target"))
        return errs
    return []


def validate_metric_spec(spec: MetricSpec, path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    if not spec.type:
        errs.append(required(f"{path}.type", "must specify a metric source type"))
    present = {name for name, attr in (("object", spec.object), ("pods", spec.pods), ("resource", spec.resource),
                                       ("containerResource", spec.container_resource), ("external", spec.external))
               if attr is not None}
    expected = SOURCE_FIELDS.get(spec.type, "")
    if spec.type in SOURCE_FIELDS:
        if expected not in present:
            errs.append(required(f"{path}.{expected}", "must populate information for the given metric source"))
    elif spec.type:
        errs.append(not_supported(f"{path}.type", spec.type, METRIC_SOURCE_TYPES))
    if len(present) != 1:
        errs += [forbidden(f"{path}.{name}", "must populate the given metric source only") for name in sorted(present - {expected})]
    return errs + _source_errors(spec, path)


def validate_scaling_rules(rules: HPAScalingRules | None, path: str) -> list[FieldError]:
    if rules is None:
        return []
    errs: list[FieldError] = []
    window = rules.stabilization_window_seconds
    if window is not None and window < 0:
        errs.append(invalid(f"{path}.stabilizationWindowSeconds", window, "must be greater than or equal to zero"))
    if window is not None and window > MAX_STABILIZATION_WINDOW_SECONDS:
        errs.append(invalid(f"{path}.stabilizationWindowSeconds", window,
                            f"must be less than or equal to {MAX_STABILIZATION_WINDOW_SECONDS}"))
    if rules.select_policy is not None and rules.select_policy not in SELECT_POLICIES:
        errs.append(not_supported(f"{path}.selectPolicy", rules.select_policy, SELECT_POLICIES))
    if not rules.policies:
        errs.append(required(f"{path}.policies", "must specify at least one Policy"))
    for index, policy in enumerate(rules.policies or ()):
        at = f"{path}.policies[{index}]"
        if policy.type not in POLICY_TYPES:
            errs.append(not_supported(f"{at}.type", policy.type, POLICY_TYPES))
        if policy.value <= 0:
            errs.append(invalid(f"{at}.value", policy.value, "must be greater than zero"))
        if policy.period_seconds <= 0:
            errs.append(invalid(f"{at}.periodSeconds", policy.period_seconds, "must be greater than zero"))
        elif policy.period_seconds > MAX_PERIOD_SECONDS:
            errs.append(invalid(f"{at}.periodSeconds", policy.period_seconds, f"must be less than or equal to {MAX_PERIOD_SECONDS}"))
    return errs


def validate_behavior(behavior: HorizontalPodAutoscalerBehavior | None, path: str) -> list[FieldError]:
    if behavior is None:
        return []
    return validate_scaling_rules(behavior.scale_up, f"{path}.scaleUp") + validate_scaling_rules(behavior.scale_down, f"{path}.scaleDown")


def validate_hpa(hpa: HorizontalPodAutoscaler) -> list[FieldError]:
    """``validateHorizontalPodAutoscalerSpec``."""
    spec, errs = hpa.spec, []
    if spec.min_replicas is not None and spec.min_replicas < 1:
        errs.append(invalid("spec.minReplicas", spec.min_replicas, "must be greater than or equal to 1"))
    if spec.max_replicas < 1:
        errs.append(invalid("spec.maxReplicas", spec.max_replicas, "must be greater than 0"))
    if spec.min_replicas is not None and spec.max_replicas < spec.min_replicas:
        errs.append(invalid("spec.maxReplicas", spec.max_replicas, "must be greater than or equal to `minReplicas`"))
    errs += validate_cross_version_object_reference(spec.scale_target_ref, "spec.scaleTargetRef")
    for index, metric in enumerate(spec.metrics or ()):
        errs += validate_metric_spec(metric, f"spec.metrics[{index}]")
    return errs + validate_behavior(spec.behavior, "spec.behavior")


def validate_status(status: HorizontalPodAutoscalerStatus) -> list[FieldError]:
    """``ValidateHorizontalPodAutoscalerStatusUpdate``: replica counts are not negative."""
    errs = []
    for attr, key in (("current_replicas", "currentReplicas"), ("desired_replicas", "desiredReplicas")):
        value = getattr(status, attr)
        if value is not None and value < 0:
            errs.append(invalid(f"status.{key}", value, "must be greater than or equal to 0"))
    return errs
