"""Table columns of the metrics, as metrics-server's table convertor shows them (``kubectl get
nodemetrics``/``podmetrics``): a pod's usage is the sum of its containers'."""

from __future__ import annotations

from fractions import Fraction
from typing import Any

from kplane.api import NAME, Column, quantity
from kplane.plugins.metrics.usage import formatted


def _pod_total(obj: dict[str, Any], resource: str) -> str:
    total = sum((quantity.parse(c.get("usage", {}).get(resource, 0)).value for c in obj.get("containers") or ()), Fraction(0))
    return formatted(resource, total)


def _node(resource: str) -> Any:
    return lambda obj: quantity.display((obj.get("usage") or {}).get(resource, 0))


WINDOW = Column("Window", "string", lambda o: o.get("window", ""), description="Interval")
NODE_METRICS_COLUMNS = (
    NAME,
    Column("Cpu", "string", _node("cpu"), description="CPU usage"),
    Column("Memory", "string", _node("memory"), description="Memory usage"),
    WINDOW,
)
POD_METRICS_COLUMNS = (
    NAME,
    Column("Cpu", "string", lambda o: _pod_total(o, "cpu"), description="CPU usage"),
    Column("Memory", "string", lambda o: _pod_total(o, "memory"), description="Memory usage"),
    WINDOW,
)
