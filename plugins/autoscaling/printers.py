"""Table columns of HorizontalPodAutoscalers, as kube-apiserver's printers show them
(``printHorizontalPodAutoscaler``, ``formatHPAMetrics``): at most two metrics, then "+ N more..."."""

from __future__ import annotations

from typing import Any

from kplane.api import AGE, NAME, Column, dig, quantity

SHOWN_METRICS = 2
UNKNOWN = "<unknown>"



def _q(value: Any) -> str:
    return quantity.display(value) if value is not None else "0"


def _value_target(spec: dict[str, Any], status: dict[str, Any] | None, with_average: bool) -> str:
    """External and Object metrics: an average value marked (avg), else the value."""
    target = spec.get("target") or {}
    current = (status or {}).get("current") or {}
    if with_average and target.get("averageValue") is not None:
        shown = _q(current["averageValue"]) if current.get("averageValue") is not None else UNKNOWN
        return f"{shown}/{_q(target['averageValue'])} (avg)"
    shown = _q(current.get("value")) if status is not None else UNKNOWN
    return f"{shown}/{_q(target.get('value'))}"


def _resource_target(spec: dict[str, Any], status: dict[str, Any] | None) -> str:
    target = spec.get("target") or {}
    current = (status or {}).get("current") or {}
    if target.get("averageValue") is not None:
        shown = _q(current.get("averageValue")) if status is not None else UNKNOWN
        return f"{spec.get('name', '')}: {shown}/{_q(target['averageValue'])}"
    shown = f"{current['averageUtilization']}%" if current.get("averageUtilization") is not None else UNKNOWN
    wanted = f"{target['averageUtilization']}%" if target.get("averageUtilization") is not None else "<auto>"
    return f"{spec.get('name', '')}: {shown}/{wanted}"


def format_metrics(specs: list[dict[str, Any]], statuses: list[dict[str, Any]]) -> str:
    if not specs:
        return "<none>"
    shown = []
    for index, spec in enumerate(specs):
        status = statuses[index] if index < len(statuses) else {}
        kind = spec.get("type")
        if kind == "External":
            shown.append(_value_target(spec.get("external") or {}, status.get("external"), True))
        elif kind == "Pods":
            current = (status.get("pods") or {}).get("current") or {}
            now = _q(current.get("averageValue")) if status.get("pods") is not None else UNKNOWN
            shown.append(f"{now}/{_q(dig(spec, 'pods.target.averageValue'))}")
        elif kind == "Object":
            shown.append(_value_target(spec.get("object") or {}, status.get("object"), True))
        elif kind == "Resource":
            shown.append(_resource_target(spec.get("resource") or {}, status.get("resource")))
        elif kind == "ContainerResource":
            shown.append(_resource_target(spec.get("containerResource") or {}, status.get("containerResource")))
        else:
            shown.append("<unknown type>")
    text = ", ".join(shown[:SHOWN_METRICS])
    return f"{text} + {len(shown) - SHOWN_METRICS} more..." if len(shown) > SHOWN_METRICS else text


def _reference(obj: dict[str, Any]) -> str:
    return f"{dig(obj, 'spec.scaleTargetRef.kind', '')}/{dig(obj, 'spec.scaleTargetRef.name', '')}"


def _min_pods(obj: dict[str, Any]) -> str:
    value = dig(obj, "spec.minReplicas")
    return "<unset>" if value is None else str(value)


HPA_COLUMNS = (
    NAME,
    Column("Reference", "string", _reference, description=(
        "scaleTargetRef points to the target resource to scale, and is used to the pods for which metrics "
        "should be collected, as well as to actually change the replica count.")),
    Column("Targets", "string", lambda o: format_metrics(dig(o, "spec.metrics", []) or [], dig(o, "status.currentMetrics", []) or []),
           description="metrics contains the specifications for which to use to calculate the desired replica count."),
    Column("MinPods", "string", _min_pods, description=(
        "minReplicas is the lower limit for the number of replicas to which the autoscaler can scale down.")),
    Column("MaxPods", "integer", lambda o: dig(o, "spec.maxReplicas", 0), description=(
        "maxReplicas is the upper limit for the number of replicas to which the autoscaler can scale up.")),
    Column("Replicas", "integer", lambda o: dig(o, "status.currentReplicas", 0), description=(
        "currentReplicas is current number of replicas of pods managed by this autoscaler, as last seen by the autoscaler.")),
    AGE,
)
