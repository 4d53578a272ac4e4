"""The metrics.k8s.io API group: NodeMetrics and PodMetrics at v1beta1, what ``kubectl top`` and
the horizontal pod autoscaler read, made on request from the simulated containers' declared usage
(``usage.py`` has the convention) and never stored (``rest.py`` says why this is no aggregated
APIService).

Each function below is one of kplane's hooks (``core/hookspecs.py``), called once at start-up
in this order."""

from __future__ import annotations

from kplane.api import Registry, Scheme, Strategy, hookimpl
from kplane.plugins.metrics import printers, rest, types
from kplane.plugins.metrics.v1beta1 import schemas

GROUP = rest.GROUP


@hookimpl
def kplane_register_types(scheme: Scheme, plugin_name: str) -> None:
    scheme.add_kind(group=GROUP, kind="NodeMetrics", plural="nodes", internal=types.NodeMetrics,
                    versions={"v1beta1": schemas.NodeMetricsSchema}, storage_version="v1beta1", namespaced=False,
                    plugin=plugin_name)
    scheme.add_kind(group=GROUP, kind="PodMetrics", plural="pods", internal=types.PodMetrics,
                    versions={"v1beta1": schemas.PodMetricsSchema}, storage_version="v1beta1", plugin=plugin_name)
    scheme.set_version_priority(GROUP, ["v1beta1"])


class _Columns(Strategy):
    """What the Tables of a metrics resource show; the resource itself is served by ``rest``."""

    def __init__(self, columns: tuple) -> None:
        self.columns = columns


@hookimpl
def kplane_register_strategies(registry: Registry) -> None:
    registry.add_rest(GROUP, "nodes", rest.NodeMetricsREST(registry))
    registry.add_rest(GROUP, "pods", rest.PodMetricsREST(registry))
    registry.add_strategy(GROUP, "nodes", _Columns(printers.NODE_METRICS_COLUMNS))
    registry.add_strategy(GROUP, "pods", _Columns(printers.POD_METRICS_COLUMNS))
