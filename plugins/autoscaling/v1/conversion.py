"""autoscaling/v1 <-> the internal (v2-shaped) HorizontalPodAutoscaler
(``pkg/apis/autoscaling/v1/conversion.go``).

v1 has one metric, ``targetCPUUtilizationPercentage``. Whatever else a v2 object holds is kept
in annotations of the v1 form, as Kubernetes keeps it, so that a v1 client's read-modify-write
loses nothing: the other metrics (in v1's metric shape), every current metric, the conditions and
the behaviour. Reading v1 turns those annotations back into fields and drops them. An annotation
that is no JSON of its shape is a 400 naming it (Kubernetes fails the conversion)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import orjson

from kplane.api import DecodeError, Schema, errors, load, python_to_wire, shape_of
from kplane.plugins.autoscaling.v1 import schemas as v1
from kplane.plugins.autoscaling.v2 import defaults as v2_defaults
from kplane.plugins.autoscaling.v2 import schemas as v2

METRICS = "autoscaling.alpha.kubernetes.io/metrics"
CURRENT_METRICS = "autoscaling.alpha.kubernetes.io/current-metrics"
CONDITIONS = "autoscaling.alpha.kubernetes.io/conditions"
BEHAVIOR = "autoscaling.alpha.kubernetes.io/behavior"
ROUND_TRIP = (METRICS, BEHAVIOR, CURRENT_METRICS, CONDITIONS)

Data = dict[str, Any]
ZERO = "0"  # a Quantity held by value: Go writes its zero as "0"


def _identifier(name: Any, selector: Any) -> Data:
    return {"name": name or "", "selector": selector}


# -- v1 metric shapes -> v2 (each takes the type's v1 source) ----------------------------------
def _resource_in(source: Data) -> Data:
    utilization = source.get("target_average_utilization")
    target = {"type": "AverageValue" if utilization is None else "Utilization",
              "average_value": source.get("target_average_value"), "average_utilization": utilization}
    out = {"name": source.get("name", ""), "target": target}
    if "container" in source:
        out["container"] = source["container"]
    return out


def _pods_in(source: Data) -> Data:
    return {"metric": _identifier(source.get("metric_name"), source.get("selector")),
            "target": {"type": "AverageValue", "average_value": source.get("target_average_value")}}


def _object_in(source: Data) -> Data:
    average = source.get("average_value")
    return {"described_object": source.get("target") or {}, "metric": _identifier(source.get("metric_name"), source.get("selector")),
            "target": {"type": "Value" if average is None else "AverageValue", "value": source.get("target_value"),
                       "average_value": average}}


def _external_in(source: Data) -> Data:
    value = source.get("target_value")
    return {"metric": _identifier(source.get("metric_name"), source.get("metric_selector")),
            "target": {"type": "AverageValue" if value is None else "Value", "value": value,
                       "average_value": source.get("target_average_value")}}


# -- v2 -> v1 metric shapes ---------------------------------------------------------------------
def _resource_out(source: Data) -> Data:
    target = source.get("target") or {}
    out = {"name": source.get("name", ""), "target_average_utilization": target.get("average_utilization"),
           "target_average_value": target.get("average_value")}
    if "container" in source:
        out["container"] = source["container"]
    return out


def _pods_out(source: Data) -> Data:
    metric = source.get("metric") or {}
    return {"metric_name": metric.get("name", ""), "selector": metric.get("selector"),
            "target_average_value": (source.get("target") or {}).get("average_value") or ZERO}


def _object_out(source: Data) -> Data:
    metric, target = source.get("metric") or {}, source.get("target") or {}
    return {"target": source.get("described_object") or {}, "metric_name": metric.get("name", ""),
            "target_value": target.get("value") or ZERO, "selector": metric.get("selector"),
            "average_value": target.get("average_value")}


def _external_out(source: Data) -> Data:
    metric, target = source.get("metric") or {}, source.get("target") or {}
    return {"metric_name": metric.get("name", ""), "metric_selector": metric.get("selector"),
            "target_value": target.get("value"), "target_average_value": target.get("average_value")}


# -- statuses -----------------------------------------------------------------------------------
def _resource_status_in(source: Data) -> Data:
    out = {"name": source.get("name", ""), "current": {"average_value": source.get("current_average_value"),
                                                        "average_utilization": source.get("current_average_utilization")}}
    if "container" in source:
        out["container"] = source["container"]
    return out


def _pods_status_in(source: Data) -> Data:
    return {"metric": _identifier(source.get("metric_name"), source.get("selector")),
            "current": {"average_value": source.get("current_average_value")}}


def _object_status_in(source: Data) -> Data:
    return {"metric": _identifier(source.get("metric_name"), source.get("selector")),
            "current": {"value": source.get("current_value"), "average_value": source.get("average_value")},
            "described_object": source.get("target") or {}}


def _external_status_in(source: Data) -> Data:
    return {"metric": _identifier(source.get("metric_name"), source.get("metric_selector")),
            "current": {"value": source.get("current_value"), "average_value": source.get("current_average_value")}}


def _resource_status_out(source: Data) -> Data:
    current = source.get("current") or {}
    out = {"name": source.get("name", ""), "current_average_utilization": current.get("average_utilization"),
           "current_average_value": current.get("average_value") or ZERO}
    if "container" in source:
        out["container"] = source["container"]
    return out


def _pods_status_out(source: Data) -> Data:
    metric = source.get("metric") or {}
    return {"metric_name": metric.get("name", ""), "selector": metric.get("selector"),
            "current_average_value": (source.get("current") or {}).get("average_value") or ZERO}


def _object_status_out(source: Data) -> Data:
    metric, current = source.get("metric") or {}, source.get("current") or {}
    return {"target": source.get("described_object") or {}, "metric_name": metric.get("name", ""),
            "current_value": current.get("value") or ZERO, "selector": metric.get("selector"),
            "average_value": current.get("average_value")}


def _external_status_out(source: Data) -> Data:
    metric, current = source.get("metric") or {}, source.get("current") or {}
    return {"metric_name": metric.get("name", ""), "metric_selector": metric.get("selector"),
            "current_value": current.get("value") or ZERO, "current_average_value": current.get("average_value")}


Convert = Callable[[Data], Data]
_SOURCES: dict[str, tuple[Convert, Convert]] = {
    "object": (_object_in, _object_out), "pods": (_pods_in, _pods_out), "resource": (_resource_in, _resource_out),
    "container_resource": (_resource_in, _resource_out), "external": (_external_in, _external_out),
}
_STATUSES: dict[str, tuple[Convert, Convert]] = {
    "object": (_object_status_in, _object_status_out), "pods": (_pods_status_in, _pods_status_out),
    "resource": (_resource_status_in, _resource_status_out),
    "container_resource": (_resource_status_in, _resource_status_out),
    "external": (_external_status_in, _external_status_out),
}


def _each_source(metric: Data, table: dict[str, tuple[Convert, Convert]], inward: bool) -> Data:
    """A metric (spec or status) with each source it sets converted one way."""
    out = {"type": metric.get("type", "")}
    for key, (to_v2, to_v1) in table.items():
        if metric.get(key) is not None:
            out[key] = (to_v2 if inward else to_v1)(metric[key])
    return out


def _read(annotations: Data, key: str, schema: type[Schema], many: bool) -> Any:
    """The annotation ``key`` as Python-named data of ``schema`` (a list of them when ``many``),
    its values type-checked as a body's are (strings, int32 ranges, quantities, selectors), as
    Go's decoder checks them: a wrong one is a 400 naming the annotation, never stored. Unknown
    keys are dropped, as Go's decoder drops them."""
    try:
        value = orjson.loads(annotations.pop(key))
    except orjson.JSONDecodeError as err:
        raise _bad(key, str(err)) from None
    if many and not isinstance(value, list) or not many and not isinstance(value, dict):
        raise _bad(key, f"expected a JSON {'array' if many else 'object'}")
    if many and not all(isinstance(item, dict) for item in value):
        raise _bad(key, "expected a JSON array of objects")
    shape = shape_of(schema)

    def loaded(item: Data, where: str) -> Data:
        result = load(shape, item)
        if result.errors:
            raise _bad(key, f"{where}{result.errors[0]}")
        return result.data
    return [loaded(item, f"[{i}].") for i, item in enumerate(value)] if many else loaded(value, "")


def _bad(key: str, why: str) -> DecodeError:
    base = errors.bad_request(f'HorizontalPodAutoscaler in version "v1" cannot be handled as a HorizontalPodAutoscaler: '
                              f"annotation {key}: {why}")
    return DecodeError(base.code, base.reason, base.message, base.details, why=f"annotation {key}: {why}")


def _write(items: Any, schema: type[Schema]) -> str:
    shape = shape_of(schema)
    if isinstance(items, list):
        return orjson.dumps([python_to_wire(shape, item) for item in items]).decode()
    return orjson.dumps(python_to_wire(shape, items)).decode()


def to_internal(hpa: Data) -> Data:
    meta = hpa.setdefault("metadata", {})
    annotations = dict(meta.get("annotations") or {})
    spec = hpa.setdefault("spec", {})
    status = hpa.setdefault("status", {})
    percent = spec.pop("target_cpu_utilization_percentage", None)
    metrics = [v2_defaults.cpu_utilization(percent)] if percent is not None else []
    if METRICS in annotations:
        others = [_each_source(m, _SOURCES, True) for m in _read(annotations, METRICS, v1.MetricSpecSchema, True)]
        metrics = others + metrics
    spec["metrics"] = metrics or [v2_defaults.cpu_utilization(v2_defaults.DEFAULT_CPU_UTILIZATION)]
    if BEHAVIOR in annotations:
        spec["behavior"] = _read(annotations, BEHAVIOR, v2.HorizontalPodAutoscalerBehaviorSchema, False)
        v2_defaults.default_behavior(spec)  # as Kubernetes defaults it reading the stored v2 object back
    current = status.pop("current_cpu_utilization_percentage", None)
    if current is not None:
        status["current_metrics"] = [{"type": "Resource", "resource": {"name": "cpu", "current": {"average_utilization": current}}}]
    if CURRENT_METRICS in annotations:
        status["current_metrics"] = [_each_source(m, _STATUSES, True)
                                     for m in _read(annotations, CURRENT_METRICS, v1.MetricStatusSchema, True)]
    if CONDITIONS in annotations:
        status["conditions"] = _read(annotations, CONDITIONS, v1.ConditionSchema, True)
    meta["annotations"] = annotations or None
    return hpa


def _is_cpu_utilization(metric: Data) -> bool:
    resource = metric.get("resource") or {}
    return (metric.get("type") == "Resource" and resource.get("name") == "cpu"
            and (resource.get("target") or {}).get("average_utilization") is not None)


def from_internal(hpa: Data) -> Data:
    meta = hpa.setdefault("metadata", {})
    annotations = {k: v for k, v in (meta.get("annotations") or {}).items() if k not in ROUND_TRIP}
    spec = hpa.setdefault("spec", {})
    status = hpa.setdefault("status", {})
    metrics = spec.pop("metrics", None) or []
    for metric in metrics:  # the first CPU Resource metric is v1's own
        resource = metric.get("resource") or {}
        if metric.get("type") == "Resource" and resource.get("name") == "cpu":
            spec["target_cpu_utilization_percentage"] = (resource.get("target") or {}).get("average_utilization")
            break
    others = [_each_source(m, _SOURCES, False) for m in metrics if not _is_cpu_utilization(m)]
    if others:
        annotations[METRICS] = _write(others, v1.MetricSpecSchema)
    behavior = spec.pop("behavior", None)
    if behavior is not None:
        annotations[BEHAVIOR] = _write(behavior, v2.HorizontalPodAutoscalerBehaviorSchema)
    current = status.pop("current_metrics", None) or []
    for metric in current:
        resource = metric.get("resource") or {}
        if metric.get("type") == "Resource" and resource.get("name") == "cpu":
            utilization = (resource.get("current") or {}).get("average_utilization")
            if utilization is not None:
                status["current_cpu_utilization_percentage"] = utilization
    if current:
        annotations[CURRENT_METRICS] = _write([_each_source(m, _STATUSES, False) for m in current], v1.MetricStatusSchema)
    conditions = status.pop("conditions", None)
    if conditions:
        annotations[CONDITIONS] = _write(conditions, v1.ConditionSchema)
    meta["annotations"] = annotations or None
    return hpa
